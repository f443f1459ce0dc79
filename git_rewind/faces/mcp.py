"""`git rewind mcp`: the checkpoint tools over the Model Context Protocol, on stdio.

A thin face over the library, like cli.py: every tool calls the same functions as the
commands (store.save, undo.undo, gc.delete, config.set_value…), so a rewind through MCP
takes the same safety checkpoint as `git rewind undo`. Each result is a short text for
the model plus the same facts as structured content; a failure is an MCP tool error with
one sentence and nothing half-applied (the library checks before it changes anything).

The SDK is imported when the server starts; the store and the rest only when a tool needs them,
so `initialize` is answered as soon as the SDK is up.
"""

import os
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.config import Settings
    from ..base.note import Note
    from ..base.repo import Repo
    from ..ops import search
    from ..ops.request import Request
    from ..store.checkpoints import Checkpoint

SERVER_NAME = "git-rewind"
INSTRUCTIONS = (
    "git-rewind keeps checkpoints of this repository's working tree (and where the conversation stood) in git. "
    "Create one before risky changes (checkpoint_create), store a summary before the context is cleared "
    "(store_checkpoint), list and diff them, and rewind the code, the conversation or both "
    "(checkpoint_rewind_*, checkpoint_revert). Every rewind first checkpoints the current state, so it can be "
    "undone. A rewind takes two calls: first with preview=true, which says what would change and gives a token, "
    "then the same call with preview=false and that token; it is refused, changing nothing, without the token or "
    "when the files (or the conversation) changed since the preview: preview again then."
)
AUTOMATION_KEYS = ("tier", "auto_checkpoint_on_clear", "auto_resume_on_start", "verify_before_clear",
                   "anti_spam_seconds", "min_change_chars")


class Tools:
    """The tools, bound to one repository and session; the repository is opened on first use."""

    def __init__(self, repo_path: str | None, session: str | None) -> None:
        self.repo_path = repo_path or os.environ.get("GIT_REWIND_REPO") or os.getcwd()
        self.session = session or os.environ.get("GIT_REWIND_SESSION") or None
        self._repo: Repo | None = None

    # plumbing ----------------------------------------------------------------------------------

    def repo(self) -> "Repo":
        if self._repo is None:
            from ..base.repo import Repo

            self._repo = Repo.discover(self.repo_path)
        return self._repo

    def settings(self) -> "Settings":
        from ..base import config

        return config.for_repo(self.repo())

    def session_for(self, client: str | None) -> str:
        """GIT_REWIND_SESSION, else mcp-<client name> (made safe for a ref name)."""
        if self.session:
            return self.session
        import re

        name = re.sub(r"[^A-Za-z0-9._-]+", "-", client or "client").strip("-.") or "client"
        return f"mcp-{name}"

    def caller(self) -> str | None:
        """The agent session calling a tool, which need not hear of the rewind it asked for: GIT_REWIND_SESSION,
        else the one session in the middle of a turn in this work tree (a tool is called from within a turn);
        None when several are (each of them is told)."""
        if self.session:
            return self.session
        import time

        from ..base import turns

        busy = turns.running(self.repo(), time.time())
        return busy[0].session if len(busy) == 1 else None

    def _lookup(self, ident: str | int) -> "Checkpoint":
        from ..store import checkpoints

        return checkpoints.lookup(self.repo(), str(ident))

    def _target(self, ident: str | int, preview: bool, token: str | None) -> "Checkpoint":
        """The checkpoint a rewind names; one gone since the preview that gave TOKEN is said so (token.gone)."""
        from ..base.errors import RewindError

        try:
            return self._lookup(ident)
        except RewindError as exc:
            if preview or not token:
                raise
            from ..ops import token as tokens

            raise tokens.gone(self.repo(), token, exc) from None

    # creating ----------------------------------------------------------------------------------

    def create(self, client: str | None, description: str, summary: str | None = None,
               files: list[str] | None = None, tags: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        from ..store import store

        repo = self.repo()
        settings = self.settings()
        structured = None
        if summary:
            from ..base.summary import structured as parse_summary

            structured = parse_summary(summary)
        paths = [p for p in (repo.relpath(f, repo.root) for f in files or []) if p]
        result = store.save(repo, store.Request(
            session=self.session_for(client), message=description.strip() or "checkpoint", agent="mcp",
            trigger="mcp", tool="checkpoint_create", paths=paths, tags=list(tags or []), summary=structured,
            allow_empty=True, max_file_size=settings["max_file_size"], auto_pack=settings["auto_pack"],
            max_store_size=settings["max_store_size"]))
        assert result.note is not None  # allow_empty: always a new checkpoint
        text = f"checkpoint #{result.seq} {result.commit[:7]}: {result.note.message}"
        return text, _checkpoint_json(result.commit, result.note)

    def store_summary(self, client: str | None, content: str) -> tuple[str, dict[str, Any]]:
        from ..base.summary import headline, structured

        if not content.strip():
            raise _error("the summary is empty")
        first = headline(structured(content), 60) or "summary"
        return self.create(client, f"summary: {first}", summary=content, tags=["summary"])

    # reading -----------------------------------------------------------------------------------

    def list_checkpoints(self, limit: int = 20, query: "search.Query | None" = None,
                         remote: str | None = None) -> tuple[str, dict[str, Any]]:
        from ..ops import search
        from ..store import checkpoints
        from . import output

        repo = self.repo()
        if remote:
            from ..sharing import sync

            items = sync.fetched_from(repo, remote)
        else:
            items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
        query = query if query is not None else search.Query()
        selected, hidden = search.select_counted(repo, items, query)
        items, _more = checkpoints.newest_first(selected, limit=limit)
        text = "\n".join(output.line(c) for c in items) or "no checkpoints" + (
            f" matching {query.describe()}" if query else "")
        if hidden:
            text += f"\n({hidden} safety checkpoint{'s' if hidden != 1 else ''} hidden; safety=true shows them)"
        return text, {"checkpoints": [_checkpoint_json(c.commit, c.note, c.ident) for c in items],
                      "safety_hidden": hidden}

    def show(self, ident: str | int) -> tuple[str, dict[str, Any]]:
        from ..store import checkpoints
        from . import output

        item = self._lookup(ident)
        _parent, stat = checkpoints.since_previous(self.repo(), item)
        text = "\n".join(output.details(item) + ["", stat.rstrip() or "no change since the previous checkpoint"])
        return text, {**_checkpoint_json(item.commit, item.note, item.ident), "diffstat": stat}

    def latest(self) -> tuple[str, dict[str, Any]]:
        from ..base.errors import NO_CHECKPOINTS
        from ..store import checkpoints

        repo = self.repo()
        items = checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree)
        if not items:
            raise _error("no checkpoints yet in this repository", NO_CHECKPOINTS)
        return self.show(items[-1].seq)

    def diff(self, ident: str | int, fmt: str = "unified") -> tuple[str, dict[str, Any]]:
        from ..store import snapshot

        if fmt not in ("unified", "summary"):
            raise _error(f"format must be unified or summary, not {fmt}")
        item = self._lookup(ident)
        repo = self.repo()
        current = snapshot.current_tree(repo, self.settings()["max_file_size"])
        status = repo.git(["diff", "--name-status", "--no-renames", item.commit, current]).decode("utf-8", "replace")
        files = [{"status": line.split("\t", 1)[0], "path": line.split("\t", 1)[1]}
                 for line in status.splitlines() if "\t" in line]
        if fmt == "summary":
            text = repo.git(["diff", "--stat", item.commit, current]).decode("utf-8", "replace").rstrip()
        else:
            text = repo.git(["diff", item.commit, current]).decode("utf-8", "replace").rstrip()
        return (text or f"the working tree matches #{item.seq}"), {
            "checkpoint": item.seq, "format": fmt, "files": files, "diff": text}

    def stats(self) -> tuple[str, dict[str, Any]]:
        from ..store import checkpoints

        data = checkpoints.stats(self.repo())
        lines = [f"{data['checkpoints']} checkpoints in {len(data['sessions'])} sessions, "
                 f"{data['storage_bytes'] / 1024:.0f} KiB of objects of their own"]
        for name in ("oldest", "newest"):
            if data[name]:
                lines.append(f"{name}: #{data[name]['seq']} {data[name]['created']} {data[name]['message']}")
        return "\n".join(lines), data

    def blame(self, path: str) -> tuple[str, dict[str, Any]]:
        import time

        from ..ops import blame
        from . import output

        repo = self.repo()
        result = blame.blame(repo, repo.relpath(path, repo.root), time.time())
        lines = output.blame(result.lines) + ([f"warning: {result.warning}"] if result.warning else [])
        return "\n".join(lines) or f"{result.path} is empty", {
            "path": result.path, "lines": [line.to_json() for line in result.lines], "warning": result.warning}

    # changing ----------------------------------------------------------------------------------

    def rewind(self, ident: str | int | None, mode: str, preview: bool = False,
               selective_files: list[str] | None = None, agent_only: bool = False,
               merge: bool = False, token: str | None = None) -> tuple[str, dict[str, Any]]:
        """An undo (IDENT None or empty: what a bare `git rewind undo` restores, undo.bare_target). The agent
        calling is inside its own turn: no question about a running turn is asked (it asked for this itself).
        Two phases (token.py): a PREVIEW gives a token, and the restore runs only when given it as TOKEN."""
        import time

        from ..ops import undo
        from ..ops.request import Request

        only = list(selective_files or [])  # git pathspecs, from the work tree's root
        repo = self.repo()
        why = None
        if ident is None or str(ident).strip() == "":
            from ..store import checkpoints

            bare = undo.bare_target(repo, checkpoints.load_all(repo), repo.worktree, time.time())
            target, why = bare.target, bare.why
        else:
            target = self._target(ident, preview, token)
        asked = Request.undo(repo, target, mode, only=only, agent_only=agent_only, merge=merge, by=self.caller(),
                             why=why, two_phase=True)
        return self._answer(asked, preview, token)

    def revert(self, ident: str | int, ident2: str | int | None = None, preview: bool = False, merge: bool = False,
               selective_files: list[str] | None = None, token: str | None = None) -> tuple[str, dict[str, Any]]:
        from ..ops.request import Request

        end = self._target(ident2, preview, token) if ident2 is not None and str(ident2) != "" else None
        asked = Request.revert(self.repo(), self._target(ident, preview, token), end, merge=merge,
                               only=list(selective_files or []), by=self.caller(), two_phase=True)
        return self._answer(asked, preview, token)

    @staticmethod
    def _answer(asked: "Request", preview: bool, token: str | None) -> tuple[str, dict[str, Any]]:
        # No "a turn is running: continue?" here (cli.ask_if_agents_at_work): an agent calls this tool from
        # within its own turn, so a turn is always running, and the agent asking is the one that will
        # read the files next. Its confirmation is the token instead: it restores what it previewed, or nothing.
        with asked:
            report = asked.preview() if preview else asked.run(allow_busy=True, token=token)
        data = report.to_json()
        if preview:  # in the text too: some clients give the model the structured content, others the text
            data["text"] += (f"\ntoken: {data['token']}\nto apply this preview: the same call with preview=false "
                             "and this token (refused, changing nothing, if the files or the conversation change "
                             "before)")
        return data["text"], data

    def delete(self, ident: str | int) -> tuple[str, dict[str, Any]]:
        from ..ops import gc

        item = gc.delete(self.repo(), str(ident))
        return f"deleted #{item.seq} ({item.message}); git gc can now prune it", {"deleted": item.seq}

    def configure(self, changes: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from ..base import config

        repo = self.repo()
        path = config.project_file(repo.root)
        for key, value in changes.items():
            if value is None:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            config.set_value(path, key, text)
        settings = config.load(repo.root)
        data = {key: {"value": settings[key].value, "source": settings[key].source}
                for key in AUTOMATION_KEYS if key in settings}
        text = "\n".join(f"{key} = {config.format_value(v['value'])}  ({v['source']})" for key, v in data.items())
        return text, {"settings": data, "file": path if any(v is not None for v in changes.values()) else None}


def _checkpoint_json(commit: str, note: "Note", ident: str | None = None) -> dict[str, Any]:
    """A checkpoint as the tools answer; IDENT: the id to use it by (a fetched one's `<remote>/<machine>/<seq>`;
    default its seq)."""
    data = note.to_json()
    keys = ("seq", "session", "agent", "trigger", "tool", "paths", "message", "summary", "tags", "created")
    return {"id": ident or str(note.seq), "commit": commit, **{key: data[key] for key in keys}}


# The MCP server's words for what the engine says would work instead (errors.py): a tool to call.
HINTS = {"code-only": "call checkpoint_rewind_code to rewind the files alone",
         "unknown-id": "checkpoint_list gives the ids there are",
         "no-checkpoints": "call checkpoint_create to take one (the agents' hooks take them as they work, once "
                           "installed: git rewind install --agent NAME)",
         "preview": "call the same tool with the same arguments and preview=true for a new token, then again with "
                    "preview=false and that token",
         "merge": "call again with merge=true to write the clean parts and conflict markers to resolve (after a "
                  "safety checkpoint), or with selective_files naming the other files to take back those alone"}


def _error(message: str, remedy: str | None = None) -> Exception:
    from ..base.errors import RewindError

    return RewindError(message, remedy=remedy)


def _client_name(ctx: Any) -> str | None:
    try:
        return str(ctx.session.client_params.client_info.name)
    except AttributeError:
        return None


def build(tools: Tools) -> Any:
    """The MCPServer with every tool registered, each argument described in its input schema."""
    from collections.abc import Callable
    from typing import Annotated

    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, TextContent
    from pydantic import Field

    from ..base.errors import RewindError

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    def result(call: Callable[[], tuple[str, dict[str, Any]]]) -> CallToolResult:
        try:
            text, data = call()
        except RewindError as exc:  # one sentence, and the library changed nothing
            return CallToolResult(content=[TextContent(type="text", text=exc.worded(HINTS))], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    Ident = Annotated[str, Field(description="A checkpoint: its sequence number (42), '@' for the newest, "
                                             "'@~N' for the Nth before it, a (short) commit id, or a fetched "
                                             "one's <remote>/<machine>/<seq>.")]
    Target = Annotated[str | None, Field(
        description="The checkpoint to go back to, as for checkpoint_show; omitted: the start of the newest "
                    "agent turn in this work tree (its prompt checkpoint), as a bare `git rewind undo`; right "
                    "after such an undo, one turn further back.")]
    Preview = Annotated[bool, Field(description="True: only say what would change, and give the token the "
                                                "restore needs. False: restore; needs that token.")]
    Token = Annotated[str | None, Field(
        description="With preview=false: the token the preview of this same call gave. The restore is refused, "
                    "changing nothing, without it, with another call's, or when the files (or the conversation) "
                    "changed since that preview.")]
    TWO_PHASE = ("Two calls: first preview=true (what would change, and a token), then the same arguments with "
                 "preview=false and token; refused, changing nothing, without the token or if anything it "
                 "covers changed since the preview (then preview again).")
    Pathspecs = Annotated[list[str] | None, Field(
        description="Restore only what these git pathspecs match, relative to the repository's root: paths, "
                    "directories (with everything below), globs such as '*.py', magic such as ':(exclude)x'. "
                    "One that matches nothing is an error.")]

    def checkpoint_create(
        description: Annotated[str, Field(description="One line saying what this moment is.")],
        ctx: Context,
        summary: Annotated[str | None, Field(description="Notes: what was done, the current state, "
                                                         "next steps, files.")] = None,
        files: Annotated[list[str] | None, Field(description="Files about to change (recorded in the note; "
                                                             "the whole tree is checkpointed).")] = None,
        tags: Annotated[list[str] | None, Field(description="Labels to find it by.")] = None,
    ) -> CallToolResult:
        """Checkpoint the working tree now: tracked and untracked files, never ignored ones."""
        return result(lambda: tools.create(_client_name(ctx), description, summary, files, tags))

    def store_checkpoint(
        content: Annotated[str, Field(description="The summary: sections 'Done:', 'State:', 'Next:' and "
                                                  "'Files:', or a JSON object.")],
        ctx: Context,
    ) -> CallToolResult:
        """Store a summary checkpoint (the working tree plus a structured summary); a later session is offered it."""
        return result(lambda: tools.store_summary(_client_name(ctx), content))

    def checkpoint_list(
        limit: Annotated[int, Field(description="How many, newest first (0: all).", ge=0)] = 20,
        session: Annotated[str | None, Field(description="Only this session.")] = None,
        tags: Annotated[list[str] | None, Field(description="Only checkpoints with all of these tags.")] = None,
        grep: Annotated[str | None, Field(
            description="Only checkpoints with this text in their message, prompt or summary (any case).")] = None,
        path: Annotated[list[str] | None, Field(
            description="Only checkpoints that changed what these git pathspecs match (from the repository's root).")
        ] = None,
        agent: Annotated[str | None, Field(description="Only checkpoints this agent took (`manual`: by hand).")] = None,
        since: Annotated[str | None, Field(
            description="Only checkpoints at or after this date, in git's syntax (\"2 hours ago\", ISO 8601).")] = None,
        until: Annotated[str | None, Field(description="Only checkpoints at or before this date.")] = None,
        remote: Annotated[str | None, Field(
            description="Instead, the checkpoints teammates pushed, as `git rewind fetch REMOTE` brought them; "
                        "their ids are <remote>/<machine>/<seq>.")] = None,
        safety: Annotated[bool, Field(
            description="Also the safety checkpoints every rewind takes first (left out otherwise).")] = False,
    ) -> CallToolResult:
        """List checkpoints, newest first; every filter given narrows the list. Safety checkpoints (taken before
        each rewind) are left out unless safety is true."""
        from ..ops import search

        query = search.Query([grep] if grep else (), path or (), tags or (), agent, session, since, until,
                             safety=safety)
        return result(lambda: tools.list_checkpoints(limit, query, remote))

    def checkpoint_show(checkpoint_id: Ident) -> CallToolResult:
        """One checkpoint's metadata and what changed since the previous checkpoint of its work tree."""
        return result(lambda: tools.show(checkpoint_id))

    def get_latest_checkpoint() -> CallToolResult:
        """The newest checkpoint, with its summary if it has one."""
        return result(tools.latest)

    def checkpoint_diff(
        checkpoint_id: Ident,
        format: Annotated[str, Field(description="'unified' (the whole diff) or 'summary' (a diffstat).",  # noqa: A002
                                     pattern="^(unified|summary)$")] = "unified",
    ) -> CallToolResult:
        """Diff a checkpoint against the working tree as it is now."""
        return result(lambda: tools.diff(checkpoint_id, format))

    def checkpoint_blame(
        path: Annotated[str, Field(description="A file of the working tree, relative to the repository's root.")],
    ) -> CallToolResult:
        """Who put each line of a file there: an agent (its turn's prompt, tool and checkpoint), outside (the
        person, an editor, a formatter), or base (older than the file's first checkpoint); git's own blame over
        the checkpoints."""
        return result(lambda: tools.blame(path))

    def checkpoint_rewind_code(
        checkpoint_id: Target = None,
        preview: Preview = False,
        selective_files: Pathspecs = None,
        agent_only: Annotated[bool, Field(description="Take back only what agents changed since the checkpoint; "
                                                      "keep every change made from outside (by the person, an "
                                                      "editor, git), merged line by line.")] = False,
        merge: Annotated[bool, Field(description="With agent_only: on a conflict write the clean parts and "
                                                 "conflict markers instead of nothing.")] = False,
        token: Token = None,
    ) -> CallToolResult:
        """Restore the working tree to a checkpoint (by default the start of the newest agent turn), after a safety
        checkpoint of the current state; the answer names it (#N, kind, age, session, message) and lists the
        files changed since from outside an agent turn, which agent_only keeps. Every file
        written or removed is read back, and a restore that did not fully happen is an error naming the paths.
        With agent_only, only the agents' changes since it are taken back; a line changed again later is a
        conflict (an error listing files and lines; nothing written) unless merge."""
        return result(lambda: tools.rewind(checkpoint_id, "code", preview, selective_files, agent_only, merge,
                                           token))

    def checkpoint_revert(
        checkpoint_id: Ident,
        checkpoint_id2: Annotated[str | None, Field(description="A later checkpoint: take back every agent's "
                                                                "changes between the two.")] = None,
        preview: Preview = False,
        merge: Annotated[bool, Field(description="On a conflict write the clean parts and conflict markers "
                                                 "instead of nothing.")] = False,
        selective_files: Pathspecs = None,
        token: Token = None,
    ) -> CallToolResult:
        """Take back only the agents' changes of the turn a checkpoint begins (a prompt checkpoint: up to the
        session's next prompt), like git revert, keeping later turns, other sessions and outside edits."""
        return result(lambda: tools.revert(checkpoint_id, checkpoint_id2, preview, merge, selective_files, token))

    def checkpoint_rewind_conversation(
        checkpoint_id: Target = None,
        preview: Annotated[bool, Field(description="True: only say where the conversation would be cut, and give "
                                                   "the token the rewind needs. False: rewind; needs that "
                                                   "token.")] = False,
        token: Token = None,
    ) -> CallToolResult:
        """Rewind the agent's conversation to where it stood at a checkpoint (by default the start of the newest
        agent turn; the files stay); the
        transcript is backed up in git first, and the result gives the command to resume."""
        return result(lambda: tools.rewind(checkpoint_id, "conversation", preview, token=token))

    def checkpoint_rewind_full(
        checkpoint_id: Target = None,
        preview: Preview = False,
        token: Token = None,
    ) -> CallToolResult:
        """Rewind the working tree and the conversation to a checkpoint (by default the start of the newest agent
        turn), after a safety checkpoint."""
        return result(lambda: tools.rewind(checkpoint_id, "full", preview, token=token))

    def checkpoint_delete(checkpoint_id: Ident) -> CallToolResult:
        """Delete one checkpoint (its session's chain is rewritten without it)."""
        return result(lambda: tools.delete(checkpoint_id))

    def checkpoint_stats() -> CallToolResult:
        """Counts, sessions, storage used, the oldest and the newest checkpoint."""
        return result(tools.stats)

    def checkpoint_config(
        tier: Annotated[str | None, Field(description="minimal, balanced or aggressive.")] = None,
        auto_checkpoint_on_clear: Annotated[bool | None, Field(description="Checkpoint before /clear and "
                                                                           "compaction.")] = None,
        auto_resume_on_start: Annotated[bool | None, Field(description="Tell a new session where the last "
                                                                       "checkpoint left off.")] = None,
        verify_before_clear: Annotated[bool | None, Field(description="State files and lines changed in the "
                                                                      "/clear checkpoint.")] = None,
        anti_spam_seconds: Annotated[int | None, Field(description="Minimum seconds between edit checkpoints.",
                                                       ge=0)] = None,
        min_change_chars: Annotated[int | None, Field(description="Smaller edits are not checkpointed.",
                                                      ge=0)] = None,
    ) -> CallToolResult:
        """Read the automation settings; values given are written to the project's .git-rewind.toml."""
        changes = {"tier": tier, "auto_checkpoint_on_clear": auto_checkpoint_on_clear,
                   "auto_resume_on_start": auto_resume_on_start, "verify_before_clear": verify_before_clear,
                   "anti_spam_seconds": anti_spam_seconds, "min_change_chars": min_change_chars}
        return result(lambda: tools.configure(changes))

    restoring = (checkpoint_rewind_code, checkpoint_revert, checkpoint_rewind_conversation, checkpoint_rewind_full)
    for fn in (checkpoint_create, store_checkpoint, checkpoint_list, checkpoint_show, get_latest_checkpoint,
               checkpoint_diff, checkpoint_blame, checkpoint_rewind_code, checkpoint_revert,
               checkpoint_rewind_conversation, checkpoint_rewind_full, checkpoint_delete, checkpoint_stats,
               checkpoint_config):
        words = " ".join((fn.__doc__ or "").split()) + (" " + TWO_PHASE if fn in restoring else "")
        server.add_tool(fn, name=fn.__name__, description=words)
    return server


def serve(repo_path: str | None) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build(Tools(repo_path, None)).run("stdio")
