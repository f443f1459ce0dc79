"""Qwen Code: hook payloads → Events, its hooks in settings.json, and its conversation rewind.

Facts (shared/agents/copilot-qwen.md part B, re-read in 0.15.10's bundle): hooks sit under "hooks" in
~/.qwen/settings.json ($QWEN_HOME) or <project>/.qwen/settings.json, Claude-style, with timeouts in
milliseconds; payloads carry session_id, transcript_path, cwd and hook_event_name, tool events tool_name,
tool_input and a tool_use_id of Qwen's own (not the transcript's call id). In -p mode SessionStart and
SessionEnd never fire, and UserPromptSubmit fires for the prompt and again, with prompt "", before every
request that carries tool results back: only a prompt opens a turn. Stop's stop_hook_active is always
true. A hook that exits 2 blocks the tool (ours always exits 0). Qwen stamps "$version" into every
settings file it loads (agent_keys), and reads a prompt hook's additionalContext but not SessionStart's.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, LeafRewind, Rewinder, agent_home, dashed, first_session, rehome_cwd
from .event import Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import Note
    from .conversation import Place, Plan, Transcript

NAME = "qwen"
TIMEOUT_MS = 30_000  # Qwen reads a command hook's timeout in milliseconds
SETTINGS_VERSION = 4  # the "$version" Qwen 0.15 stamps into a settings file it loads (and then leaves alone)

# PostToolUseFailure: a shell command that failed (timed out, was cancelled) may still have written files.
_KINDS = {**ev.CLAUDE_STYLE_KINDS, "PostToolUseFailure": ev.POST_TOOL}
TOOL_KINDS = {"write_file": ev.WRITE, "edit": ev.EDIT, "run_shell_command": ev.SHELL}

# Qwen's matchers are unanchored regular expressions: anchored, "edit" names that tool and no other.
HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "^(write_file|edit)$",
    "PostToolUse": "^run_shell_command$",
    "PostToolUseFailure": "^run_shell_command$",
    "Stop": None,
    "SessionEnd": None,
    "PreCompact": None,
}


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Qwen Code hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "prompt_id", TOOL_KINDS)
    if event.kind == ev.PROMPT and not event.prompt:
        event.kind = ev.OTHER  # tool results going back to the model: the same turn goes on
    tool_input = payload.get("tool_input")
    if event.tool and isinstance(tool_input, dict):
        ev.read_file_tool(event, tool_input, "write_file", "edit")
    return event


def resume_command(session: str) -> str:
    return f"qwen --resume {session}"


def settings_file(scope: str, root: str | None, home: str) -> str:
    """$QWEN_HOME/settings.json, else ~/.qwen/settings.json (user), or <project>/.qwen/settings.json."""
    if scope == "user":
        return os.path.join(agent_home("QWEN_HOME", ".qwen", home), "settings.json")
    assert root is not None
    return os.path.join(root, ".qwen", "settings.json")


# conversation rewind -------------------------------------------------------------------------
#
# A Qwen session file is a tree, as Claude Code's: each record names its parent (parentUuid), and
# `qwen --resume` rebuilds the conversation from the LAST record of the file up its parents
# (sessionService.reconstructHistory in 0.15.10). Qwen's own rewind (/rewind, double Esc) appends a
# `system` record of subtype `rewind` whose parent is the last record kept: what came after stays in
# the file as a dead branch. We append the same record, so nothing is deleted and a later one can
# point back at the old leaf (redo). Hooks name no record: a checkpoint is found by its prompt or its
# tool call, near the file's size when the hook ran (conversation.offset).

def _parts(line: dict[str, Any]) -> list[Any]:
    parts = (line.get("message") or {}).get("parts") if isinstance(line.get("message"), dict) else None
    return parts if isinstance(parts, list) else []


def _is_prompt(line: dict[str, Any]) -> bool:
    """A prompt someone typed (Qwen records tool results as `tool_result`, cron and agent news with a subtype)."""
    return line.get("type") == "user" and not line.get("subtype") and any(
        isinstance(p, dict) and isinstance(p.get("text"), str) for p in _parts(line))


def _prompt_text(line: dict[str, Any]) -> str:
    """The prompt as typed: the first text part (a prompt hook's additionalContext is a further part)."""
    return next((p["text"] for p in _parts(line) if isinstance(p, dict) and isinstance(p.get("text"), str)), "")


def _calls(line: dict[str, Any], tool: str | None, paths: list[str]) -> list[str]:
    """The ids of LINE's calls of TOOL (on one of PATHS, when given), if it is a model turn."""
    if line.get("type") != "assistant":
        return []
    found = []
    for part in _parts(line):
        call = part.get("functionCall") if isinstance(part, dict) else None
        if not isinstance(call, dict) or call.get("name") != tool:
            continue
        args: dict[str, Any] = call["args"] if isinstance(call.get("args"), dict) else {}
        named = str(args.get("file_path") or "")
        if not paths or any(named == p or named.endswith("/" + p) for p in paths):
            found.append(str(call.get("id") or ""))
    return found


def _answers(line: dict[str, Any], ids: list[str]) -> bool:
    """LINE is the tool result of one of the calls IDS."""
    return line.get("type") == "tool_result" and any(
        isinstance(p, dict) and isinstance(p.get("functionResponse"), dict) and p["functionResponse"].get("id") in ids
        for p in _parts(line))


def _uuid(line: dict[str, Any]) -> str | None:
    value = line.get("uuid")
    return value if isinstance(value, str) and value else None


def _parent(line: dict[str, Any]) -> str | None:
    value = line.get("parentUuid")
    return value if isinstance(value, str) and value else None


def _locate(transcript: Transcript, note: Note) -> tuple[int | None, str | None, str, str | None]:
    """(index of the record the checkpoint stands at, None: before any; uuid of the last record kept; where in
    words; the prompt to send again)."""
    from ..base.errors import RewindError

    conv = note.position
    offset = conv.offset
    at = transcript.lines_within(offset) if isinstance(offset, int) else None
    resolved = conv.message_uuid
    trigger, seq, lines = note.trigger, note.seq, transcript.lines

    def by_uuid(uuid: str) -> int:
        index = transcript.index_where(lambda line: line.get("uuid") == uuid)
        if index is None:
            raise RewindError(f"record {uuid} of #{seq} is not in {transcript.path}")
        return index

    def nearest(found: list[int]) -> int | None:
        if not found:
            return None
        return found[-1] if at is None else min(found, key=lambda i: (abs(i - at), -i))

    if trigger == "UserPromptSubmit":
        if resolved:
            index: int | None = by_uuid(resolved)
        else:
            prompt = (note.prompt or "").strip()
            found = [i for i, line in enumerate(lines)
                     if line is not None and _is_prompt(line) and _prompt_text(line).strip() == prompt]
            # The prompt's record is written just after its hook ran: the first one from there.
            after = [i for i in found if at is not None and i >= at]
            index = after[0] if after else nearest(found)
        if index is None:
            raise RewindError(f"the prompt of #{seq} is not in {transcript.path}")
        line = transcript.at(index)
        return index, _parent(line), "just before the prompt", _prompt_text(line)
    if trigger == "PreToolUse":
        index = by_uuid(resolved) if resolved else nearest(
            [i for i, line in enumerate(lines) if line is not None and _calls(line, note.tool, list(note.files_named))])
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} call of #{seq} is not in {transcript.path}")
        return index, _parent(transcript.at(index)), f"just before the {note.tool} call", None
    if trigger in ("PostToolUse", "PostToolUseFailure"):
        if resolved:
            index = by_uuid(resolved)
        else:
            call = nearest([i for i, line in enumerate(lines) if line is not None and _calls(line, note.tool, [])])
            ids = _calls(transcript.at(call), note.tool, []) if call is not None else []
            index = transcript.index_where(lambda line: _answers(line, ids), call) if call is not None else None
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} result of #{seq} is not in {transcript.path}")
        return index, _uuid(transcript.at(index)), f"just after the {note.tool} result", None
    return _locate_end_of(transcript, note, resolved, at)


def _locate_end_of(transcript: Transcript, note: Note, resolved: str | None,
                   at: int | None) -> tuple[int | None, str | None, str, None]:
    """A checkpoint between turns (turn end, session start or end, compaction): what had been said by then."""
    from ..base.errors import RewindError

    lines = transcript.lines
    if resolved:
        index = transcript.index_where(lambda line: line.get("uuid") == resolved)
        if index is None:
            raise RewindError(f"record {resolved} of #{note.seq} is not in {transcript.path}")
        return index, resolved, "where it was", None
    if at is None:
        raise RewindError(f"#{note.seq} does not record where its conversation stood")
    last = next((i for i in range(min(at, len(lines)) - 1, -1, -1) if _uuid(transcript.at(i))), None)
    if last is None:
        return None, None, "at the start of the session", None
    if note.trigger != "Stop":
        return last, _uuid(transcript.at(last)), "where it was", None
    # The turn's last words may be written after its hook ran: follow its records on to the next prompt.
    for i in range(last + 1, len(lines)):
        line = lines[i]
        if line is None or line.get("subtype") == "rewind":
            continue
        if _is_prompt(line):
            break
        if _parent(line) == _uuid(transcript.at(last)):
            last = i
    return last, _uuid(transcript.at(last)), "at the end of the turn", None


def _said(transcript: Transcript, leaf: str | None) -> list[int]:
    """The prompts, model turns and tool results on the chain that ends at LEAF."""
    from .conversation import uuid_chain

    return [i for i in (uuid_chain(transcript, leaf) if leaf else [])
            if transcript.at(i).get("type") in ("user", "assistant", "tool_result")]


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against the session file now."""
    from .conversation import Plan

    transcript = place.load(note.position.transcript)
    index, leaf, where, prompt = _locate(transcript, note)
    plan = Plan(NAME, first_session(transcript) or str(note.session or ""), transcript)
    plan.target_uuid = _uuid(transcript.at(index)) if index is not None else None
    plan.leaf = leaf
    plan.prompt = prompt
    plan.fork = fork
    plan.empty = not _said(transcript, leaf)
    plan.where = where
    return plan


def current_leaf(transcript: Transcript) -> str | None:
    """The record Qwen would resume from now: the file's last one."""
    last = next((line for line in reversed(transcript.lines) if line is not None), None)
    return _uuid(last) if last is not None else None


def _rewind_record(transcript: Transcript, leaf: str | None, session: str) -> dict[str, Any]:
    """The record Qwen's own /rewind appends: its parent is the last record kept (null: none)."""
    import time
    import uuid as uuidlib

    now = time.time()
    first = transcript.at(0)
    dropped = set(_said(transcript, current_leaf(transcript))) - set(_said(transcript, leaf))
    record: dict[str, Any] = {
        "uuid": str(uuidlib.uuid4()), "parentUuid": leaf, "sessionId": session,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z",
        "type": "system", "subtype": "rewind"}
    record.update({key: first[key] for key in ("cwd", "version") if isinstance(first.get(key), str)})
    record["systemPayload"] = {"truncatedCount": len(dropped), "by": "git-rewind"}
    return record


# Appending a rewind record rewinds; --fork writes the chain and a rewind record naming its leaf as a new session.
_REWIND = LeafRewind("qwen", resume_command, _rewind_record)


class Qwen(Agent):
    """Qwen Code: Claude-style hooks in settings.json (ms timeouts), rewind by a `rewind` record as its own."""

    name, hooks = NAME, HOOKS
    agent_keys = ("$version",)
    # Qwen adds a prompt hook's additionalContext to the prompt; SessionStart's output it drops (and in -p mode
    # SessionStart never fires): a session start context goes with the next prompt.
    context_on_prompt = True
    prompt_context = True
    mcp_path = (".qwen", "settings.json")  # under "mcpServers" beside the hooks, as `qwen mcp add` writes it
    mcp_type = None
    transcript_noun = "Qwen Code session file"
    parse = staticmethod(parse)
    settings_file = staticmethod(settings_file)
    resume_command = staticmethod(resume_command)

    def handler(self, command: str) -> dict[str, Any]:
        """Qwen's hook handler: a name, and the timeout in milliseconds."""
        return {"type": "command", "name": "git-rewind", "command": command, "timeout": TIMEOUT_MS}

    def seed(self, path: str) -> dict[str, Any]:
        """A file we create carries the "$version" Qwen would stamp into it: Qwen then leaves it as we wrote it."""
        return {"$version": SETTINGS_VERSION}

    def template(self) -> dict[str, Any]:
        return {"$version": SETTINGS_VERSION, **super().template()}

    def mcp_file(self, scope: str, root: str | None, home: str) -> str:
        return settings_file(scope, root, home)

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """<runtime dir>/projects: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen (Qwen's Storage.getRuntimeBaseDir
        in 0.15.10), each that is set (a session may predate the variable)."""
        bases = [os.path.abspath(os.path.expanduser(environ[name])) for name in ("QWEN_RUNTIME_DIR", "QWEN_HOME")
                 if environ.get(name)]
        bases.append(os.path.join(home, ".qwen"))
        return tuple(dict.fromkeys(os.path.join(base, "projects") for base in bases))

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """Every line a record with a "uuid"; the first names its session."""
        from .conversation import jsonl_problem

        if not isinstance(transcript.at(0).get("sessionId"), str):
            return "its first record names no sessionId"
        return jsonl_problem(transcript, ("uuid",))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, _REWIND.apply_rewind, _REWIND.apply_redo, current_leaf)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        return first_session(transcript)

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<runtime dir>/projects/<real path of ROOT, each character but ASCII letters and digits '-'>/chats/
        <session>.jsonl: where `qwen --resume` run in the clone's root looks (Storage.getProjectDir)."""
        path = os.path.join(place.folders[0], dashed(os.path.realpath(root)), "chats", f"{session}.jsonl")
        return path, [path]

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """Every record's `cwd` moved from the sender's project to ROOT (Qwen resumes a file only when its first
        record's cwd is the project's root); with NEW_SESSION, every `sessionId`."""
        return rehome_cwd(transcript, root, new_session)


AGENT = Qwen()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """QWEN_PROJECT_DIR (it sets Claude Code's and Gemini CLI's variables too), else Claude's event names with
    Gemini-like tool names (agents.detect)."""
    from .base import OWN_VARIABLE, PAYLOAD_SHAPE

    if environ.get("QWEN_PROJECT_DIR"):
        return OWN_VARIABLE + 1
    if payload.get("tool_name") in ("write_file", "edit", "run_shell_command") \
            and payload.get("hook_event_name") in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return PAYLOAD_SHAPE + 1
    return None
