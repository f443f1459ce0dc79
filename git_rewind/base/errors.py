"""The one exception the command line turns into a one-line error and an exit code."""


# What the person (or agent) can do instead, named by the engine and worded by each face: the command line
# names a flag, the MCP server a tool, the page a choice (cli.HINTS, mcp.HINTS, web.HINTS).
CODE_ONLY = "code-only"  # rewind the files alone: the conversation cannot be
MERGE = "merge"  # write the clean parts and conflict markers, or take back the other files alone ({retry})
UNKNOWN_ID = "unknown-id"  # an id that names no checkpoint: see which ids there are
NO_CHECKPOINTS = "no-checkpoints"  # nothing to name yet: take a checkpoint, or let an agent's hooks take them
PREVIEW = "preview"  # a two-phase restore without a good token (ops/token.py): preview again for a new one


class RewindError(Exception):
    """A failure the user can act on; `exit_code` 1 for bad ids and input, 2 for no repository. The message
    describes the situation; REMEDY (one of the names above) says what would work instead, for the face
    to word."""

    def __init__(self, message: str, exit_code: int = 1, remedy: str | None = None,
                 details: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.remedy = remedy
        self.details = details or {}  # what a face's words may name ({retry}: another command to run)

    def worded(self, hints: dict[str, str]) -> str:
        """The message with the face's words for the remedy, if it has any (after "; ", or on a line of its own
        under a message of several lines)."""
        hint = hints.get(self.remedy) if self.remedy else None
        if not hint:
            return str(self)
        text = hint.format_map(self.details)
        return f"{self}\nnext: {text}" if "\n" in str(self) else f"{self}; {text}"


class NotARepository(RewindError):
    """Raised outside a git work tree (or in a bare repository)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)
