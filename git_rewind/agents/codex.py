"""OpenAI's Codex CLI: hook payloads → Events, its hooks and their trust, its conversation rewind.

Facts (shared/agents/other-agents.md §3, checked live against codex-cli 0.169.0): hooks.json is
Claude-Code-shaped (`{"hooks": {Event: [{"matcher", "hooks": [handler]}]}}`), beside each config
layer: ~/.codex (or $CODEX_HOME) and <project>/.codex. Payloads carry session_id, turn_id,
transcript_path (a rollout JSONL, may be null) and tool_use_id; shell tools arrive as `Bash`,
edits as `apply_patch` with the raw patch in tool_input.command.

Codex runs a hook that is not managed only when it is trusted: the user's config.toml holds
`[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`. Install
writes those entries for our handlers (and uninstall removes them), so the hooks run without
--dangerously-bypass-hook-trust.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, Rewinder, agent_home, home_folders, moved, rewrite_lines
from .event import Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Applied, Place, Plan, Transcript
    from .settingsfile import Change

NAME = "codex"

_KINDS = ev.CLAUDE_STYLE_KINDS
TOOL_KINDS = {"apply_patch": ev.EDIT, "Bash": ev.SHELL}

HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "apply_patch",
    "PostToolUse": "Bash",
    "Stop": None,
    "SessionEnd": None,
    "PreCompact": None,
}
DEFAULT_TIMEOUT = 600  # seconds; what Codex assumes (and hashes) when a handler names none
SESSION_END_TIMEOUT = 3  # seconds; Codex clamps SessionEnd handlers to it, and hashes the clamped value


def codex_home(home: str | None = None) -> str:
    """$CODEX_HOME, else ~/.codex: where Codex keeps its user config, hooks and sessions."""
    return agent_home("CODEX_HOME", ".codex", home)


def settings_file(scope: str, root: str | None, home: str) -> str:
    """$CODEX_HOME/hooks.json (user) or <project>/.codex/hooks.json."""
    if scope == "user":
        return os.path.join(codex_home(home), "hooks.json")
    assert root is not None
    return os.path.join(root, ".codex", "hooks.json")


def config_file(home: str | None = None) -> str:
    """The user's config.toml, the only layer Codex reads hook trust from."""
    return os.path.join(codex_home(home), "config.toml")


# hook payloads -------------------------------------------------------------------------------


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Codex hook payload describes; a turn's id stands for its prompt."""
    event = ev.from_payload(NAME, _KINDS, payload, "turn_id", TOOL_KINDS)
    if event.tool == "apply_patch":
        tool_input = payload.get("tool_input")
        patch = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
        if isinstance(patch, str):
            ev.read_patch(event, patch)
    return event


def resume_command(session: str) -> str:
    return f"codex resume {session}"


# install: hooks.json through the common installer, trust in the user's config.toml ----------


def _event_key(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def trusted_hash(event_name: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The hash Codex trusts a command handler by: sha256 of its compact, key-sorted JSON identity."""
    import hashlib
    import json

    timeout = handler.get("timeout")
    timeout = timeout if isinstance(timeout, int) and timeout > 0 else DEFAULT_TIMEOUT
    if event_name == "SessionEnd":
        timeout = min(timeout, SESSION_END_TIMEOUT)
    identity: dict[str, Any] = {"event_name": _event_key(event_name), "hooks": [{
        "type": "command", "command": handler.get("command"), "timeout": timeout,
        "async": bool(handler.get("async", False))}]}
    if matcher is not None:
        identity["matcher"] = matcher
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


class _Handler:
    """One command handler of a hooks.json, where Codex sees it."""

    __slots__ = ("key", "own", "hash", "event", "rank")

    def __init__(self, key: str, own: bool, hash_: str | None, event: str, rank: int) -> None:
        self.key = key  # <hooks.json>:<event>:<group>:<handler>, Codex's name for it
        self.own = own
        self.hash = hash_
        self.event = event
        self.rank = rank  # its place among the event's handlers that are not ours


def _handlers(path: str) -> list[_Handler]:
    """Every handler of the hooks file PATH (none when it is missing)."""
    from .settingsfile import is_own, load_json

    hooks = load_json(path).get("hooks")  # the errors install gives; a missing file has none
    found: list[_Handler] = []
    if not isinstance(hooks, dict):
        return found
    where = os.path.abspath(path)
    for event_name, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        rank = 0
        for g, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            for h, handler in enumerate(group["hooks"]):
                key = f"{where}:{_event_key(event_name)}:{g}:{h}"
                if is_own(handler):
                    found.append(_Handler(key, True, trusted_hash(event_name, matcher, handler), event_name, -1))
                else:
                    found.append(_Handler(key, False, None, event_name, rank))
                    rank += 1
    return found


class _Config:
    """The user's config.toml, parsed with tomlkit so that its comments and layout stay."""

    def __init__(self, path: str) -> None:
        from ..base.errors import RewindError
        from .settingsfile import parse_toml, read_text

        self.path = path
        self.original = read_text(path)
        self.doc = parse_toml(path, self.original)
        hooks = self.doc.get("hooks")
        state = hooks.get("state") if isinstance(hooks, dict) else None
        if (hooks is not None and not isinstance(hooks, dict)) or (state is not None and not isinstance(state, dict)):
            raise RewindError(f"{path}: [hooks.state] is not a table; nothing changed")

    def state(self, create: bool) -> Any:
        import tomlkit

        hooks = self.doc.get("hooks")
        if hooks is None:
            if not create:
                return None
            hooks = tomlkit.table(is_super_table=True)
            self.doc["hooks"] = hooks
        state = hooks.get("state")
        if state is None and create:
            state = tomlkit.table(is_super_table=True)
            hooks["state"] = state
        return state

    def prune(self) -> None:
        """Drop [hooks.state] and [hooks] when nothing is left in them."""
        hooks = self.doc.get("hooks")
        if isinstance(hooks, dict):
            if isinstance(hooks.get("state"), dict) and not hooks["state"]:
                del hooks["state"]
            if not hooks:
                del self.doc["hooks"]

    def save(self, removing: bool = False) -> tuple[bool, str | None]:
        """Write the document if it changed: (changed, backup made).

        Adding: the user's file is backed up before our first change. Removing: back to the
        backup's exact bytes when nothing else changed since; a file we created and left empty goes.
        """
        import tomlkit

        from .settingsfile import BACKUP_SUFFIX, remove_created, restore_backup, same_toml, write_text

        text_now = tomlkit.dumps(self.doc)
        if text_now == (self.original or ""):
            return False, None
        if removing and os.path.exists(self.path + BACKUP_SUFFIX):
            if restore_backup(self.path, lambda backup: same_toml(backup, text_now)):
                return True, None
        elif removing and not text_now.strip():
            remove_created(self.path)  # and ~/.codex, if we made it and it is empty
            return True, None
        return True, write_text(self.path, text_now, None if removing else self.original)


def _retrust(config: _Config, before: list[_Handler], after: list[_Handler]) -> int:
    """Trust entries follow the handlers: ours re-hashed where they now stand, gone where they went;
    another's entry moves with its handler when our groups shifted it. Returns the entries of ours."""
    import tomlkit

    state = config.state(create=any(h.own for h in after))
    if state is None:
        return 0
    moved = {}
    new_keys = {(h.event, h.rank): h.key for h in after if not h.own}
    for h in before:
        if h.own:
            state.pop(h.key, None)
        elif h.key in state and new_keys.get((h.event, h.rank), h.key) != h.key:
            moved[new_keys[(h.event, h.rank)]] = state.pop(h.key)
    for key, value in moved.items():
        state[key] = value
    ours = 0
    for h in after:
        if h.own:
            entry = state.get(h.key)
            if not isinstance(entry, dict):
                entry = tomlkit.table()
                state[h.key] = entry
            entry["trusted_hash"] = h.hash  # an `enabled = false` the user set stays
            ours += 1
    config.prune()
    return ours


def install_hooks(scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
    """Our groups into hooks.json, and their trust into the user's config.toml."""
    path = AGENT.target(scope, root, home)
    config = _Config(config_file(home))  # an unreadable config: nothing is written
    before = _handlers(path)
    change = AGENT.write_hooks(path, program)
    count = _retrust(config, before, _handlers(path))
    changed, backup = config.save()
    if changed:
        change.changed = True
        if backup:
            change.notes.append(f"backed up {config.path} to {backup}")
        change.notes.append(f"trusted the {count} hooks in {config.path} ([hooks.state])")
    if scope == "project" and not _project_trusted(config, str(root)):
        change.notes.append(f"note: Codex reads {os.path.dirname(path)} only in a trusted project: trust {root} "
                            "when codex asks (or run codex exec --trust once)")
    return change


def _project_trusted(config: _Config, root: str) -> bool:
    projects = config.doc.get("projects")
    entry = projects.get(root) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def uninstall_hooks(scope: str, root: str | None, home: str | None) -> Change:
    """Remove our groups from hooks.json and exactly their trust entries from config.toml."""
    path = AGENT.target(scope, root, home)
    config = _Config(config_file(home))
    before = _handlers(path)
    change = AGENT.remove_hooks(path)
    _retrust(config, before, _handlers(path))
    changed, _ = config.save(removing=True)
    if changed:
        change.changed = True
        change.notes.append(f"removed their trust entries from {config.path}")
    return change


# conversation rewind -------------------------------------------------------------------------
#
# Codex resumes a rollout in file order, and keeps a SQLite projection of it that an edit in
# place would leave stale. So a rewind never changes either: it writes a NEW rollout holding
# the kept prefix under a new session id (session_meta's id and session_id, and the file name),
# which `codex resume <new id>` finds and resumes with exactly that history (verified live).
# The original session stays as it was, so redo has nothing to undo in it, and --fork is the
# same as the default. Where the cut falls:
# - a prompt checkpoint (UserPromptSubmit, its turn_id): just before that turn's task_started;
# - a tool checkpoint (PreToolUse, its tool_use_id = the call_id): just before the model's call
#   (mid-turn; Codex resumes such a rollout as an interrupted turn, verified live);
# - after a tool (PostToolUse): just after the call's output;
# - a turn end (Stop, its turn_id): just before the next turn, or the end of the file;
# - any other: where the rollout ended when the hook ran (its size then).


def _payload(line: dict[str, Any]) -> dict[str, Any]:
    payload = line.get("payload")
    return payload if isinstance(payload, dict) else {}


def _turn_started(line: dict[str, Any], turn_id: str | None = None) -> bool:
    payload = _payload(line)
    if line.get("type") != "event_msg" or payload.get("type") != "task_started":
        return False
    if turn_id is None:
        return True
    attribution = payload.get("turn_attribution")
    return turn_id == payload.get("turn_id") or (isinstance(attribution, dict)
                                                 and turn_id == attribution.get("turn_id"))


def _is_item(line: dict[str, Any], kinds: tuple[str, ...], call_id: str) -> bool:
    payload = _payload(line)
    return line.get("type") == "response_item" and payload.get("type") in kinds and payload.get("call_id") == call_id


_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output")


def _locate(transcript: Transcript, note: Note) -> tuple[int, str, str | None]:
    """(lines to keep, where in words, the prompt to send again)."""
    from ..base.errors import RewindError

    conv = note.position
    trigger = note.trigger
    turn_id = conv.prompt_id
    call_id = conv.tool_use_id
    seq = note.seq
    if trigger == "UserPromptSubmit" and turn_id:
        index = transcript.index_where(lambda line: _turn_started(line, turn_id))
        if index is None:
            raise RewindError(f"the prompt of #{seq} (turn {turn_id}) is not in {transcript.path}")
        return index, "just before the prompt", note.prompt
    if trigger == "PreToolUse" and call_id:
        index = transcript.index_where(lambda line: _is_item(line, _CALLS, call_id))
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} call of #{seq} is not in {transcript.path}")
        return index, f"just before the {note.tool} call", None
    if trigger == "PostToolUse" and call_id:
        index = transcript.index_where(lambda line: _is_item(line, _OUTPUTS, call_id))
        if index is None:
            raise RewindError(f"the {note.tool or 'tool'} result of #{seq} is not in {transcript.path}")
        return index + 1, f"just after the {note.tool} result", None
    if trigger == "Stop" and turn_id:
        start = transcript.index_where(lambda line: _turn_started(line, turn_id))
        if start is not None:
            following = transcript.index_where(_turn_started, start + 1)
            return (following if following is not None else len(transcript.lines)), "at the end of the turn", None
    offset = conv.offset
    if isinstance(offset, int):
        return transcript.lines_within(offset), "where it was", None
    if trigger == "SessionStart":
        return 1, "at the start of the session", None
    raise RewindError(f"#{seq} does not record where its conversation stood")


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against the rollout now."""
    from .conversation import Plan

    conv = note.position
    transcript = place.load(conv.transcript)
    first = transcript.at(0)
    cut, where, prompt = _locate(transcript, note)
    plan = Plan(NAME, str(_payload(first)["id"]), transcript)
    plan.cut = max(1, cut)
    plan.prompt = prompt
    plan.fork = True  # always a new session: the original rollout is never changed
    plan.where = where
    plan.empty = not any(line is not None and line.get("type") == "response_item"
                         for line in transcript.lines[1:plan.cut])
    return plan


def new_session_id() -> str:
    """A UUIDv7 (time-ordered, as Codex's own ids): 48 bits of Unix milliseconds, then random bits."""
    import secrets
    import time
    import uuid

    value = (int(time.time() * 1000) & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76 | secrets.randbits(12) << 64 | 0b10 << 62 | secrets.randbits(62)
    return str(uuid.UUID(int=value))


def _sessions_dir(path: str) -> str:
    """Today's folder beside the rollout's: sessions/YYYY/MM/DD, as Codex files new rollouts."""
    import time

    day = os.path.dirname(path)
    parts = day.split(os.sep)
    if len(parts) >= 4 and all(p.isdigit() for p in parts[-3:]):
        return os.path.join(os.sep.join(parts[:-3]) or os.sep, *time.strftime("%Y/%m/%d").split("/"))
    return day


def _with_id(line: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    payload = dict(_payload(line))
    for key in ("id", "session_id", "thread_id") if line.get("type") == "session_meta" else ("session_id",
                                                                                              "thread_id"):
        if payload.get(key) == old or (line.get("type") == "session_meta" and key in ("id", "session_id")):
            payload[key] = new
    return {**line, "payload": payload}


def write_prefix(transcript: Transcript, upto: int, old: str) -> tuple[str, str]:
    """A new rollout holding the first UPTO lines under a new session id: (id, path)."""
    import json
    import time

    new = new_session_id()
    out = []
    for i, raw in enumerate(transcript.raw[:upto]):
        line = transcript.lines[i]
        if line is not None and (line.get("type") == "session_meta" or old in raw.decode("utf-8", "replace")):
            changed = _with_id(line, old, new)
            if changed != line:
                raw = json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        out.append(raw if raw.endswith(b"\n") else raw + b"\n")
    place = transcript.place
    assert place is not None, "plan_rewind reads the rollout through its place"
    folder = _sessions_dir(transcript.path)
    path = os.path.join(folder, f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S')}-{new}.jsonl")
    place.resolve(path)  # today's folder is below the sessions folder too, before it is made
    os.makedirs(folder, exist_ok=True)
    place.write(path, b"".join(out), like=transcript.path)
    return new, path


def apply_rewind(plan: Plan) -> Applied:
    """Write the kept prefix as a new session; the original rollout is left exactly as it is."""
    from .conversation import Applied

    new, path = write_prefix(plan.transcript, plan.kept_lines, plan.session)
    return Applied(new, resume_command(new), path,
                   f"new session {new} with the conversation cut {plan.where}; {plan.session} is unchanged "
                   "(a Codex rewind always writes a new session, so --fork changes nothing)")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Nothing to put back: the rewind never changed the original session, which is resumed as it was."""
    from .conversation import Applied

    session = str(info.session or "")
    return Applied(session, resume_command(session), info.transcript,
                   f"the rewind wrote a new session; the original {session} was never changed: resume it")


class Codex(Agent):
    """OpenAI's Codex CLI: hooks.json plus their trust in config.toml, TOML MCP entry, rewind to a new rollout."""

    name, hooks = NAME, HOOKS
    mcp_type = None  # what `codex mcp add` writes: no type
    transcript_noun = "Codex rollout"
    prompt_context = True  # UserPromptSubmit additionalContext: a developer message (other-agents.md §3.1)
    parse = staticmethod(parse)
    settings_file = staticmethod(settings_file)
    resume_command = staticmethod(resume_command)
    install_hooks = staticmethod(install_hooks)
    uninstall_hooks = staticmethod(uninstall_hooks)

    def mcp_file(self, scope: str, root: str | None, home: str) -> str:
        """TOML: [mcp_servers.git-rewind] (as `codex mcp add`) in the user's or the project's config.toml."""
        return config_file(home) if scope == "user" else os.path.join(str(root), ".codex", "config.toml")

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """<Codex home>/sessions: ~/.codex, and $CODEX_HOME when set."""
        return home_folders(home, environ, "CODEX_HOME", (".codex", "sessions"), ("sessions",))

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """JSONL of {"timestamp", "type", "payload"} lines, the first Codex's session_meta with its id."""
        from .conversation import jsonl_problem

        first = transcript.at(0)
        if first.get("type") != "session_meta" or not _payload(first).get("id"):
            return "it does not start with Codex's session_meta line"
        return jsonl_problem(transcript, ("type",))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        found = _payload(transcript.at(0)).get("id")
        return str(found) if found else None

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<sessions>/YYYY/MM/DD/rollout-<start>-<session>.jsonl, dated by the session's own start (session_meta's
        timestamp), as Codex files it; any rollout of SESSION already under the sessions folders holds it too
        (Codex finds a session by the id in the file name)."""
        import glob
        import re

        stamp = str(_payload(transcript.at(0)).get("timestamp") or transcript.at(0).get("timestamp") or "")
        found = re.match(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})", stamp)
        if found:
            year, month, day, hour, minute, second = found.groups()
        else:
            import time

            year, month, day, hour, minute, second = time.strftime("%Y %m %d %H %M %S").split()
        name = f"rollout-{year}-{month}-{day}T{hour}-{minute}-{second}-{session}.jsonl"
        path = os.path.join(place.folders[0], year, month, day, name)
        existing = sorted({found for folder in place.folders for found in glob.glob(
            os.path.join(glob.escape(folder), "*", "*", "*", f"rollout-*-{glob.escape(session)}.jsonl"))})
        return path, [path, *(p for p in existing if p != path)]

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """session_meta's and each turn_context's `cwd` moved from the sender's project to ROOT; with NEW_SESSION,
        the session's id wherever the rollout names it (as a rewind's new rollout does)."""
        first = _payload(transcript.at(0))
        sender = first.get("cwd") if isinstance(first.get("cwd"), str) else None
        old = str(first.get("id") or "")
        real = os.path.realpath(root)

        def change(line: dict[str, Any]) -> dict[str, Any]:
            payload = line.get("payload")
            if isinstance(payload, dict) and "cwd" in payload:
                line = {**line, "payload": {**payload, "cwd": moved(payload["cwd"], sender, real)}}
            if new_session and old and isinstance(line.get("payload"), dict):
                line = _with_id(line, old, new_session)
            return line

        return rewrite_lines(transcript, change)

    def new_session_id(self) -> str:
        return new_session_id()


AGENT = Codex()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Codex sets no variable of its own in a hook's environment; its payloads carry the turn's id
    (agents.detect)."""
    from .base import OWN_PAYLOAD

    return OWN_PAYLOAD if "turn_id" in payload or payload.get("tool_name") == "apply_patch" else None
