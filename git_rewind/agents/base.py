"""What every agent provides, declared once: `Agent`, and `Rewinder` for its conversation.

Each module in agents/ defines one subclass and one instance of it (`AGENT`); `agents.get(name)`
returns it. The defaults are the common case (a Claude-style hooks file, no reply on stdout, no
slash commands, a JSON `mcpServers` entry); an agent overrides what it does differently, so every
capability is a declared attribute or method and nothing is probed.

The hook imports an agent module on every call: this module imports nothing at load time.
"""

from __future__ import annotations

from .hooksetup import HookSetup
from .mcpentry import McpEntry
from .payloads import Payloads
from .transcripts import Transcripts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Applied, Place, Plan, Transcript

MCP_SCOPES = ("user", "project")


def _no_leaf(transcript: Transcript) -> str | None:
    return None


def rewrite_lines(transcript: Transcript, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bytes:
    """TRANSCRIPT's bytes with each line CHANGE returns a new object for re-encoded (compact, as the agents
    write them); every other line kept byte for byte."""
    import json

    out = []
    for raw, line in zip(transcript.raw, transcript.lines, strict=True):
        new = change(line) if line is not None else None
        if new is not None and new != line:
            raw = json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        out.append(raw if raw.endswith(b"\n") else raw + b"\n")
    return b"".join(out)


def cut_in_place(plan: Plan, resume: str, program: str, unit: str) -> Applied:
    """Cut the plan's transcript to its first `cut` lines in place (agents that rebuild a session from the lines
    left: Droid, Copilot CLI); a file PROGRAM wrote to since it was read is left as it is. RESUME: its command."""
    import os

    from ..base.errors import RewindError
    from .conversation import Applied

    transcript, cut = plan.transcript, plan.kept_lines
    place = transcript.place
    assert place is not None, "plan_rewind reads the session file through its place"
    if os.path.getsize(transcript.path) != len(transcript.data):
        raise RewindError(f"{transcript.path} changed while rewinding (is {program} still running?); it was not cut")
    place.write(transcript.path, transcript.data[:transcript.ends[cut - 1]])
    return Applied(plan.session, resume, transcript.path,
                   f"conversation cut {plan.where} ({len(transcript.raw) - cut} {unit}; all kept in git)")


def put_back(info: ConversationRecord, backup: bytes | None, place: Place, resume: Callable[[str], str],
             fork: Callable[[Transcript], str]) -> Applied:
    """Redo of cut_in_place: the session file as it was before the rewind (BACKUP); what was written to it since
    the rewind first goes to a session of its own (FORK writes a transcript as a new session, its id)."""
    from ..base.errors import RewindError
    from .conversation import Applied

    session = str(info.session or "")
    if info.fork:
        return Applied(session, resume(session), info.transcript,
                       "the rewind forked a new session; the original was never changed")
    if backup is None:
        raise RewindError("the transcript backup of that rewind is missing from the repository")
    path = str(info.transcript or "")
    current = place.load_if_present(path)
    detail = "conversation back as it was before the rewind"
    if current is not None and len(current.raw) > int(info.cut or 0) and current.data != backup[:len(current.data)]:
        branch = fork(current)
        detail += f"; what was said after the rewind is kept as session {branch} ({resume(branch)})"
    place.write(path, backup)
    return Applied(session, resume(session), path, detail)


def moved(path: object, old: str | None, new: str) -> object:
    """PATH with the directory OLD (the sender's project) replaced by NEW; anything else as it is."""
    if not isinstance(path, str) or not old:
        return path
    if path == old:
        return new
    if path.startswith(old.rstrip("/") + "/"):
        return new.rstrip("/") + path[len(old.rstrip("/")):]
    return path


def dashed(path: str) -> str:
    """PATH with every UTF-16 code unit that is not an ASCII letter or digit made '-': how Claude Code and Qwen Code
    name a project's folder of transcripts (JavaScript's `replace(/[^a-zA-Z0-9]/g, "-")`)."""
    units = path.encode("utf-16-le", "surrogatepass")
    return "".join(chr(u) if u < 128 and chr(u).isalnum() else "-"
                   for u in (units[i] | units[i + 1] << 8 for i in range(0, len(units), 2)))


def first_session(transcript: Transcript) -> str | None:
    """The first `sessionId` string TRANSCRIPT's lines hold (Claude Code's and Qwen Code's lines each carry one)."""
    return next((str(line["sessionId"]) for line in transcript.lines
                 if line is not None and isinstance(line.get("sessionId"), str)), None)


def rehome_cwd(transcript: Transcript, root: str, new_session: str | None) -> bytes:
    """TRANSCRIPT with every line's `cwd` moved from the sender's project (the first line's) to ROOT's real path;
    with NEW_SESSION, every `sessionId` of its session made that (Claude Code, Qwen Code)."""
    import os

    sender = next((line["cwd"] for line in transcript.lines if line is not None and isinstance(line.get("cwd"), str)),
                  None)
    old = first_session(transcript)
    real = os.path.realpath(root)

    def change(line: dict[str, Any]) -> dict[str, Any]:
        line = {**line, "cwd": moved(line["cwd"], sender, real)} if "cwd" in line else dict(line)
        if new_session and line.get("sessionId") == old:
            line["sessionId"] = new_session
        return line

    return rewrite_lines(transcript, change)


def agent_home(variable: str, folder: str, home: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """$VARIABLE (the agent's own variable for its home, made absolute), else FOLDER below HOME (default ~): where
    the agent keeps its user settings (Codex's $CODEX_HOME, Qwen Code's $QWEN_HOME)."""
    import os

    configured = (os.environ if environ is None else environ).get(variable)
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(home or os.path.expanduser("~"), folder)


def home_folders(home: str, environ: Mapping[str, str], variable: str, default: tuple[str, ...],
                 configured: tuple[str, ...]) -> tuple[str, ...]:
    """An agent's folder: DEFAULT below HOME, and first CONFIGURED below $VARIABLE when the agent's own
    variable for its home or config directory is set (both: a session may predate the variable)."""
    import os

    fallback = os.path.join(home, *default)
    value = environ.get(variable)
    if not value:
        return (fallback,)
    return (os.path.join(os.path.abspath(os.path.expanduser(value)), *configured), fallback)


# How strongly a payload and its environment are one agent's, on one scale (lower is stronger), so that an
# agent that copies another's variables is told apart: Droid, Qwen Code and Copilot CLI set Claude Code's
# CLAUDE_PROJECT_DIR, Qwen Code Gemini CLI's GEMINI_PROJECT_DIR too. Each agent module's `detect` answers
# with one of these (plus its place within the tier), or None.
OWN_VARIABLE = 10  # a variable only it (and agents asked before it) sets: Droid 10, Qwen 11, Gemini 12
OWN_PAYLOAD = 20  # a payload only it sends: Codex's turn_id 20, our OpenCode/Kilo plugin's 21, Cursor's 22
SHARED_VARIABLE = 30  # a variable of its own others may inherit: Copilot's COPILOT_CLI 30, CLAUDECODE 31
PAYLOAD_SHAPE = 40  # fields or tool names its payloads carry: Droid's 40, Qwen's 41, Gemini's 42


class LeafRewind:
    """The conversation rewind of an agent whose transcript is a tree of messages resumed from a leaf (Claude Code's
    `last-prompt` line, Qwen Code's `rewind` record): a rewind appends the line POINTER(transcript, leaf, session)
    makes, so no line is ever changed and what came after stays as a branch; redo appends one naming the leaf of
    before; --fork writes the chain up to the leaf (PARENTS: the keys that link it), then the pointer, as a new
    session beside it. PROGRAM starts a new session; RESUME(session) resumes one."""

    __slots__ = ("program", "resume", "pointer", "parents")

    def __init__(self, program: str, resume: Callable[[str], str],
                 pointer: Callable[[Transcript, str | None, str], dict[str, Any]],
                 parents: tuple[str, ...] = ("parentUuid",)) -> None:
        self.program = program
        self.resume = resume
        self.pointer = pointer
        self.parents = parents

    def apply_rewind(self, plan: Plan) -> Applied:
        """Append the pointer to the plan's leaf (or write the fork); the file's earlier lines are never changed."""
        import json
        import os
        import uuid as uuidlib

        from .conversation import Applied, uuid_chain

        transcript = plan.transcript
        place = transcript.place
        assert place is not None, "plan_rewind reads the transcript through its place"
        if not plan.fork:
            place.append(transcript, self.pointer(transcript, plan.leaf, plan.session))
            kept = ": nothing of it is kept" if plan.empty else ""
            return Applied(plan.session, self.resume(plan.session), transcript.path,
                           f"conversation cut {plan.where}{kept} (later messages kept in the file as a branch)")
        if plan.leaf is None:
            return Applied(None, self.program, None,
                           "nothing of the conversation precedes this checkpoint: start a new session")
        new = str(uuidlib.uuid4())
        lines = [{**transcript.at(i), "sessionId": new} for i in uuid_chain(transcript, plan.leaf, self.parents)]
        lines.append(self.pointer(transcript, plan.leaf, new))
        data = b"".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for line in lines)
        path = os.path.join(os.path.dirname(transcript.path), new + os.path.splitext(transcript.path)[1])
        place.write(path, data, like=transcript.path)
        return Applied(new, self.resume(new), path,
                       f"new session {new} with the conversation cut {plan.where}; {plan.session} is unchanged")

    def apply_redo(self, info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
        """Point the session back at the leaf it had before the rewind; what was said since stays a branch."""
        from ..base.errors import RewindError
        from .conversation import Applied

        if info.fork:
            return Applied(info.session, self.resume(str(info.session)), info.transcript,
                           "the rewind forked a new session; the original was never changed")
        transcript = place.load(info.transcript)
        leaf = info.leaf_before
        if leaf and transcript.index_where(lambda line: line.get("uuid") == leaf) is None:
            raise RewindError(f"message {leaf} is no longer in {transcript.path}")
        session = str(info.session or first_session(transcript) or "")
        place.append(transcript, self.pointer(transcript, leaf, session))
        return Applied(session, self.resume(session), transcript.path,
                       "conversation back where it was before the rewind (what was said since stays as a branch)")


class Rewinder:
    """An agent's conversation rewind: plan (checked before anything changes), apply, redo.

    plan_rewind(note, fork, place) → Plan; apply_rewind(plan) → Applied; apply_redo(info, backup, place)
    → Applied (INFO: what the undo recorded, BACKUP: the transcript it attached); current_leaf(transcript):
    the message the agent would resume from now, for redo (None when the agent's redo needs none).
    PLACE (the plan's transcript.place in apply_rewind) is the agent's `Agent.transcripts()`, handed in by
    undo.py: every transcript file is read and written through it, never directly.
    """

    __slots__ = ("plan_rewind", "apply_rewind", "apply_redo", "current_leaf")

    def __init__(self, plan_rewind: Callable[[Note, bool, Place], Plan],
                 apply_rewind: Callable[[Plan], Applied],
                 apply_redo: Callable[[ConversationRecord, bytes | None, Place], Applied],
                 current_leaf: Callable[[Transcript], str | None] = _no_leaf) -> None:
        self.plan_rewind = plan_rewind
        self.apply_rewind = apply_rewind
        self.apply_redo = apply_redo
        self.current_leaf = current_leaf


class Agent(Payloads, HookSetup, McpEntry, Transcripts):
    """One coding agent, one concern per base class: its payloads (payloads.py), its hooks in its settings
    (hooksetup.py), its MCP entry (mcpentry.py), its conversation (transcripts.py), over its declared facts
    (identity.py). An agent module subclasses this and overrides what it does differently."""
