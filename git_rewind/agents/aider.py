"""Aider: no hooks; `git rewind watch -- aider …` checkpoints it, and its chat history file is its conversation.

Facts (shared/agents/kilo-aider.md part B, aider-chat 0.86.2, run here against a mock model): Aider
has no event hooks and no session ids. It appends every exchange to `.aider.chat.history.md` in the
work tree (`--chat-history-file`): `# aider chat started at <time>` opens each run, `> ` lines are
its own output (`> Commit <sha> <message>` for each commit it makes), `#### ` lines are what the
user typed (one per line of a prompt), plain text is the model's. It commits each edit itself
(HEAD moves): its own edits with the trailer `Co-authored-by: aider (<model>) <aider@aider.chat>`,
a user's pending edits first as a "dirty commit" whose committer is `<name> (aider)`.
`aider --restore-chat-history` rebuilds the conversation from that file, so cutting the file at a
`#### ` boundary rewinds the conversation.

`watch_context` answers `git rewind watch` (watch.py) before each checkpoint: the prompts typed
since its last call, Aider's commits since then, and where the history file stood. The rewind
cuts the file (only that file name, only in the current work tree, through a `conversation.Place`
whose folder is the work tree) after undo.py has kept its whole content in git.
"""

from __future__ import annotations

import os

from .base import Agent, Rewinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Applied, Place, Plan, Transcript
    from .event import Event

NAME = "aider"
HISTORY = ".aider.chat.history.md"  # the only chat history file name git-rewind reads or writes
HEADER = b"# aider chat started at "
USER = b"#### "
RESUME = "aider --restore-chat-history"
TRAILER = "Co-authored-by: aider ("  # Aider's own edits (0.86's default attribution)
COMMITTER_MARK = " (aider)"  # a dirty commit: the user's pending edits, committed by Aider
MESSAGE_MARK = "aider: "  # --attribute-commit-message-author/committer
READ_LIMIT = 1 << 20  # bytes of history one watch_context call reads at most
MAX_HISTORY = 64 << 20  # a history file larger than this is not rewound (read whole, line by line)
MAX_COMMITS = 200  # commits one watch_context call looks at
NO_HOOKS = (f"{NAME} has no hooks: run it as `git rewind watch -- aider …` (each checkpoint then names the "
            "prompt and Aider's commits); nothing was installed")
NO_FORK = ("Aider keeps one chat history per work tree (no sessions): --fork is not available; the cut part "
           "is kept in git, and git rewind redo puts it back")
NO_HANDOVER = ("Aider's chat history lives in the work tree, not in a session store: handing it over is not "
               "available")


# the chat history file ----------------------------------------------------------------------


def prompts(text: bytes) -> list[str]:
    """The user prompts in TEXT (whole lines of a chat history): consecutive `#### ` lines are one prompt
    (Aider writes each line of a prompt so, ending in two spaces: markdown's line break)."""
    found: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(USER) or line == USER.rstrip():
            part = line[len(USER):].rstrip(b"\r").decode("utf-8", "replace")
            part = part[:-2] if part.endswith("  ") else part.rstrip()
            if current is None:
                current = []
                found.append("")
            current.append(part)
            found[-1] = "\n".join(current)
        else:
            current = None
    return [p for p in found if p.strip()]


def commit_lines(text: bytes) -> list[str]:
    """The abbreviated ids of the `> Commit <sha> <message>` lines of TEXT (Aider's own account)."""
    import re

    return [m.group(1).decode() for m in re.finditer(rb"^> Commit ([0-9a-f]{7,64}) ", text, re.MULTILINE)]


def made_by_aider(committer: str, author: str, message: str) -> bool:
    """A commit whose committer, author or message carries Aider's attribution."""
    return (TRAILER in message or committer.endswith(COMMITTER_MARK) or author.endswith(COMMITTER_MARK)
            or message.startswith(MESSAGE_MARK))


def boundary(data: bytes, offset: int) -> int:
    """Where a conversation that stood at byte OFFSET of the history DATA ends: the start of the first user
    prompt or run header at or after OFFSET (with the blank lines just before it), or the end of DATA."""
    at = offset if offset <= 0 or data[offset - 1:offset] == b"\n" else data.find(b"\n", offset) + 1 or len(data)
    while at < len(data):
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end + 1
        if data.startswith(USER, at) or data.startswith(HEADER, at):
            cut = at
            while cut > offset and data[cut - 1:cut] == b"\n" and (cut == 1 or data[cut - 2:cut - 1] == b"\n"):
                cut -= 1  # the blank line Aider writes before a prompt belongs to it
            return cut
        at = end
    return len(data)


def _problem(transcript: Transcript) -> str | None:
    """Why TRANSCRIPT is not an Aider chat history (None: it is)."""
    if os.path.basename(transcript.path) != HISTORY:
        return f"not named {HISTORY}"
    data = transcript.data
    if b"\0" in data:
        return "it holds NUL bytes (binary)"
    if data.strip() and not data.lstrip().startswith(HEADER):
        return f"it does not start with \"{HEADER.decode().strip()}\""
    return None


# what `git rewind watch` adds to its checkpoints of aider --------------------------------------


def history_path(root: str, argv: list[str] | None) -> str:
    """The chat history file Aider writes: `--chat-history-file` of ARGV (the watched command; relative to the
    directory it runs in, as Aider reads it), else HISTORY at the work tree's top, ROOT (Aider's default)."""
    name = None
    args = list(argv or [])
    for i, arg in enumerate(args):
        if arg == "--chat-history-file" and i + 1 < len(args):
            name = args[i + 1]
        elif arg.startswith("--chat-history-file="):
            name = arg.split("=", 1)[1]
    if name is None:
        return os.path.join(root, HISTORY)
    return os.path.abspath(os.path.expanduser(name))


def _read_from(path: str, offset: int) -> tuple[bytes, int]:
    """The whole lines of PATH after OFFSET (the end of the last part read), at most READ_LIMIT bytes of them (a
    larger growth: its last part, from a line start); (text, the offset it ends at). Never blocks on a FIFO
    (fsutil.read_regular refuses it)."""
    from ..base.fsutil import read_regular

    size = os.stat(path).st_size
    if size < offset:  # cut or replaced since: read it afresh
        offset = 0
    start = max(offset, size - READ_LIMIT)
    data = read_regular(path, size - start, nofollow=True, offset=start)
    if start > offset:  # the first line was cut by the bound: it is not a line
        first = data.find(b"\n") + 1
        data, start = data[first:], start + first
    whole = data.rfind(b"\n") + 1  # the line Aider is writing now is read next time
    return data[:whole], start + whole


def _commits_since(root: str, old: str, new: str, told: list[str]) -> list[str]:
    """Aider's commits in OLD..NEW (by their attribution, or named in the history's Commit lines, TOLD)."""
    import subprocess

    fmt = "%H%x00%cn%x00%an%x00%B%x1e"
    out = subprocess.run(["git", "log", f"-n{MAX_COMMITS}", f"--format={fmt}", f"{old}..{new}"], cwd=root,
                         capture_output=True, timeout=10, stdin=subprocess.DEVNULL, check=True).stdout
    found = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        fields = record.strip("\n").split("\0")
        if len(fields) < 4:
            continue
        oid, committer, author, message = fields[0], fields[1], fields[2], "\0".join(fields[3:])
        if made_by_aider(committer, author, message) or any(oid.startswith(short) for short in told):
            found.append(oid)
    return list(reversed(found))  # oldest first


def watch_context(root: str, memo: dict[str, Any]) -> dict[str, Any]:
    """The prompts typed and the commits Aider made since the last call, and where its history stands (see
    Agent.watch_context). MEMO keeps "aider.offset", "aider.head", "aider.prompt" between calls; MEMO["argv"],
    when watch gives it, is the watched command (for --chat-history-file)."""
    from ..base.note import Position

    context: dict[str, Any] = {}
    try:
        path = memo.get("aider.path")
        if not isinstance(path, str):
            argv = memo.get("argv")
            path = memo["aider.path"] = history_path(root, argv if isinstance(argv, list) else None)
        offset = memo.get("aider.offset")
        text = b""
        try:
            if isinstance(offset, int):
                text, offset = _read_from(path, offset)
            else:  # the first call: what was said before the watch began is not this run's
                offset = os.stat(path).st_size
        except OSError:
            offset = 0  # missing (Aider has not written yet) or unreadable: nothing to tell
        memo["aider.offset"] = offset
        said = prompts(text)
        if said:
            memo["aider.prompt"] = "\n\n".join(said)
        if isinstance(memo.get("aider.prompt"), str):
            context["prompt"] = memo["aider.prompt"]
        if os.path.basename(path) == HISTORY:  # only the file a rewind may cut is recorded
            context["conversation"] = Position(transcript=path, offset=offset)
        commits = _head_moves(root, memo, commit_lines(text))
        if commits:
            context["commits"] = commits
    except Exception:  # never fail the watch: what cannot be read is left out
        pass
    return context


def _head_moves(root: str, memo: dict[str, Any], told: list[str]) -> list[str]:
    """Aider's commits since the HEAD MEMO recorded (and record the new one)."""
    from ..base.repo import Repo

    head, _branch = Repo.find(root).head()
    old = memo.get("aider.head")
    memo["aider.head"] = head
    if not head or not isinstance(old, str) or old == head:
        return []
    try:
        return _commits_since(root, old, head, told)
    except Exception:  # HEAD rewritten (a rebase, a reset back): nothing made on top to tell
        return []


# conversation rewind: the history file cut at a prompt boundary ----------------------------------


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """The history as it stood at the checkpoint: the file cut where the next prompt (or run) began."""
    from ..base.errors import RewindError
    from .conversation import Plan

    if fork:
        raise RewindError(NO_FORK)
    conv = note.position
    real = place.resolve(conv.transcript)
    try:
        size = os.lstat(real).st_size
    except OSError:
        size = 0
    if size > MAX_HISTORY:
        raise RewindError(f"{conv.transcript} is larger than {MAX_HISTORY >> 20} MiB; nothing was changed")
    transcript = place.load(conv.transcript)
    offset = conv.offset
    if not isinstance(offset, int) or offset < 0:
        raise RewindError(f"#{note.seq} does not record where Aider's chat history stood; nothing was changed")
    if offset > len(transcript.data):
        raise RewindError(f"{transcript.path} is shorter than when #{note.seq} was taken (cut or replaced since); "
                          "nothing was changed")
    cut = boundary(transcript.data, offset)
    plan = Plan(NAME, str(note.session or NAME), transcript)
    plan.cut = cut  # bytes kept (Aider's file is cut by bytes, not JSON lines)
    dropped = prompts(transcript.data[cut:])
    kept = prompts(transcript.data[:cut])
    later = f"{len(dropped)} later prompt{'s' if len(dropped) > 1 else ''}"
    if not dropped:
        plan.where = "where it was"
    elif kept:
        last = " ".join(kept[-1].split())
        plan.where = f"after the turn of \"{last[:60]}{'…' if len(last) > 60 else ''}\" ({later} cut)"
    else:
        plan.where = f"before the first prompt ({later} cut)"
    plan.empty = not kept
    return plan


def apply_rewind(plan: Plan) -> Applied:
    """Write the history cut at the plan's boundary (its whole content is in git already)."""
    from ..base.errors import RewindError
    from .conversation import Applied

    transcript = plan.transcript
    place = transcript.place
    assert place is not None and plan.cut is not None, "plan_rewind reads the file through its place"
    if plan.cut >= len(transcript.data):
        return Applied(None, RESUME, transcript.path, "nothing was said after this checkpoint: Aider's chat "
                                                       "history is unchanged")
    now = place.load(transcript.path)
    # Shorter is fine: a history git tracks (the person said no to Aider's .gitignore) was just restored with
    # the files, to an earlier state of the same history. Longer or different: Aider wrote meanwhile.
    if not transcript.data.startswith(now.data):
        raise RewindError(f"{transcript.path} changed while rewinding (is aider still running?)")
    place.write(transcript.path, transcript.data[:plan.cut])
    kept = "nothing of it is kept" if plan.empty else "later prompts kept in git"
    return Applied(None, RESUME, transcript.path, f"Aider's chat history cut {plan.where} ({kept}; "
                                                   f"git rewind redo puts them back)")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Put the history back as it was before the rewind (what Aider wrote since is in the redo's safety
    checkpoint)."""
    from ..base.errors import RewindError
    from .conversation import Applied

    if backup is None:
        raise RewindError("the chat history backup of that rewind is missing from the repository")
    path = str(info.transcript or "")
    current = place.load_if_present(path)
    detail = "Aider's chat history back as it was before the rewind"
    if current is not None and current.data != backup and len(current.data) > (info.cut or 0):
        detail += " (what was said after the rewind is kept in the redo's safety checkpoint)"
    place.write(path, backup)
    return Applied(None, RESUME, path, detail)


class Aider(Agent):
    """Aider: watched, not hooked; its conversation is the work tree's chat history file."""

    name = NAME
    scopes = ()
    programs = ("aider",)
    transcript_noun = "Aider chat history"
    transcript_suffix = HISTORY

    def parse(self, payload: dict[str, Any]) -> Event:
        """Aider sends no payloads: a `hook --agent aider` call is an event the policy skips."""
        from . import event as ev

        return ev.Event(NAME, "", ev.OTHER, "", os.getcwd())

    def target(self, scope: str, root: str | None, home: str | None = None) -> str:
        """No settings file at any scope: install and uninstall say how to run Aider instead."""
        from ..base.errors import RewindError

        raise RewindError(NO_HOOKS)

    def readable_files(self) -> dict[str, bytes]:
        return {}

    def resume_command(self, session: str) -> str:
        return RESUME

    def watch_context(self, root: str, memo: dict[str, Any]) -> dict[str, Any]:
        return watch_context(root, memo)

    def made_commit(self, committer: str, author: str, message: str) -> bool:
        return made_by_aider(committer, author, message)

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The current work tree: Aider's history file lives in it (none outside a repository)."""
        from ..base.errors import RewindError
        from ..base.repo import Repo

        try:
            return (Repo.find(os.getcwd()).root,)
        except (RewindError, OSError):
            return ()

    def transcript_problem(self, transcript: Transcript) -> str | None:
        return _problem(transcript)

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo)

    def handover_refusal(self) -> str:
        return NO_HANDOVER


AGENT = Aider()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Aider has no hooks (git rewind watch runs it): no payload is its (agents.detect)."""
    return None
