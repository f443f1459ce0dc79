"""The one exception the command line turns into a one-line error and an exit code."""


class RewindError(Exception):
    """A failure the user can act on; `exit_code` 1 for bad ids and input, 2 for no repository."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class NotARepository(RewindError):
    """Raised outside a git work tree (or in a bare repository)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)
