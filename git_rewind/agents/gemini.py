"""Gemini CLI: hook payloads → Events, its hooks in settings.json, and its conversation rewind.

Facts (shared/agents/other-agents.md §2, re-checked live with 0.61.0): hooks sit under "hooks"
in .gemini/settings.json or ~/.gemini/settings.json with timeouts in milliseconds; payloads
carry session_id, transcript_path, cwd and hook_event_name; BeforeAgent has the prompt,
BeforeTool/AfterTool tool_name and tool_input. On exit 0 Gemini reads stdout as JSON (a plain
line, or stderr when stdout is empty, becomes a message to the user), so the hook always prints
one JSON object for Gemini (hook_reply), and the resume context goes with the first prompt
(context_on_prompt). PreCompress fires with trigger "auto" before every
model call whether or not anything is compressed: only a manual /compress is checkpointed.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent, Rewinder, home_folders, moved, rewrite_lines
from .event import Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Applied, Place, Plan, Transcript

NAME = "gemini"
TIMEOUT_MS = 30_000

_KINDS = {
    "SessionStart": ev.SESSION_START,
    "BeforeAgent": ev.PROMPT,
    "BeforeTool": ev.PRE_TOOL,
    "AfterTool": ev.POST_TOOL,
    "AfterAgent": ev.STOP,
    "SessionEnd": ev.SESSION_END,  # reason "clear": the conversation is about to be wiped
    "PreCompress": ev.PRE_COMPACT,
}
TOOL_KINDS = {"write_file": ev.WRITE, "replace": ev.EDIT, "run_shell_command": ev.SHELL}

HOOKS: dict[str, str | None] = {
    "SessionStart": None,
    "BeforeAgent": None,
    "BeforeTool": "write_file|replace",
    "AfterTool": "run_shell_command",
    "AfterAgent": None,
    "SessionEnd": None,
    "PreCompress": None,
}


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Gemini CLI hook payload describes."""
    event = ev.from_payload(NAME, _KINDS, payload, "prompt_id", TOOL_KINDS)
    if event.prompt:
        event.prompt = _without_context(event.prompt) or event.prompt
    if event.kind == ev.PRE_COMPACT and event.source != "manual":
        event.kind = ev.OTHER  # "auto" fires before every model call, compression or not
    tool_input = payload.get("tool_input")
    if event.tool and isinstance(tool_input, dict):
        ev.read_file_tool(event, tool_input, "write_file", "replace")
    return event


def _without_context(prompt: str) -> str:
    """PROMPT without the `<hook_context>…</hook_context>` Gemini puts before it in -p mode (SessionStart context)."""
    while prompt.startswith("<hook_context>") and "</hook_context>" in prompt:
        prompt = prompt.split("</hook_context>", 1)[1].lstrip()
    return prompt


def resume_command(session: str) -> str:
    return f"gemini --resume {session}"


# conversation rewind -------------------------------------------------------------------------
#
# A Gemini session file is a log: message records (a later one with the same id replaces the
# earlier in place), `{"$set": {"messages": [...]}}` rebuilding the whole list (written on
# resume), and `{"$rewindTo": id}` dropping that message and all after it (what /rewind
# writes). A rewind appends a `$rewindTo` after the file's full content is in git. Hooks name
# no message: a checkpoint is found in the replayed list by its prompt or its tool call, near
# the file's size when the hook ran (conversation.offset).


class _Replay:
    """The messages Gemini would load from a session file, in order, and where each first appeared."""

    __slots__ = ("messages", "first_line", "meta")

    def __init__(self, transcript: Transcript) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.first_line: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        for index, line in enumerate(transcript.lines):
            if line is None:
                continue
            if isinstance(line.get("$rewindTo"), str):
                ids = list(self.messages)
                target = line["$rewindTo"]
                keep = ids[:ids.index(target)] if target in self.messages else []
                self.messages = {i: self.messages[i] for i in keep}
            elif isinstance(line.get("id"), str):
                self._add(line, index)
            elif isinstance(line.get("$set"), dict):
                listed = line["$set"].get("messages")
                if isinstance(listed, list):
                    self.messages = {}
                    for message in listed:
                        if isinstance(message, dict) and isinstance(message.get("id"), str):
                            self._add(message, index)
                self.meta.update({k: v for k, v in line["$set"].items() if k != "messages"})
            elif isinstance(line.get("sessionId"), str) and isinstance(line.get("projectHash"), str):
                self.meta.update({k: v for k, v in line.items() if k != "messages"})
                for message in line.get("messages") or []:
                    if isinstance(message, dict) and isinstance(message.get("id"), str):
                        self._add(message, index)

    def _add(self, message: dict[str, Any], index: int) -> None:
        self.messages[message["id"]] = message  # an existing id keeps its place, as in a JS Map
        self.first_line.setdefault(message["id"], index)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""


def _prompt_text(message: dict[str, Any]) -> str:
    """What the user typed: the text parts but the <hook_context> ones hooks added (before or after it)."""
    content = message.get("content")
    parts = [content] if isinstance(content, str) else [
        str(p.get("text") or "") for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    return "".join(_without_context(part.strip()) for part in parts).strip()


def _is_said(message: dict[str, Any]) -> bool:
    """A message that is conversation: a prompt (not the CLI's session context) or a model turn."""
    if message.get("type") == "gemini":
        return True
    said = _text(message).strip()
    return message.get("type") == "user" and bool(said) and not said.startswith("<session_context>")


def _calls(message: dict[str, Any], tool: str | None, paths: list[str]) -> bool:
    """MESSAGE calls TOOL on one of PATHS: in its toolCalls, or (messages rebuilt on resume) its functionCall parts."""
    content = message.get("content")
    parts = [p.get("functionCall") for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    for call in [*(message.get("toolCalls") or []), *parts]:
        if not isinstance(call, dict) or call.get("name") != tool:
            continue
        named = str((call.get("args") or {}).get("file_path") or "")
        if not paths or any(named == p or named.endswith("/" + p) for p in paths):
            return True
    return False


def _locate(transcript: Transcript, replay: _Replay, note: Note) -> tuple[str | None, str, str | None]:
    """(id of the first message dropped, None: nothing after the checkpoint; where in words; prompt to resend)."""
    from ..base.errors import RewindError

    conv = note.position
    offset = conv.offset
    at = transcript.lines_within(offset) if isinstance(offset, int) else len(transcript.lines)
    alive = list(replay.messages)
    resolved = conv.message_uuid
    trigger = note.trigger
    seq = note.seq

    def nearest(found: list[str]) -> str:
        return min(found, key=lambda i: (abs(replay.first_line[i] - at), -replay.first_line[i]))

    if trigger == "BeforeAgent":
        prompt = str(note.prompt or "")
        found = [i for i in alive if replay.messages[i].get("type") == "user"
                 and _prompt_text(replay.messages[i]) == prompt.strip()]
        if resolved in replay.messages:
            found = [resolved]
        if not found:
            raise RewindError(f"the prompt of #{seq} is not in {transcript.path}")
        after = [i for i in found if replay.first_line[i] >= at]
        return (min(after, key=replay.first_line.__getitem__) if after else nearest(found)), \
            "just before the prompt", prompt
    if trigger == "BeforeTool":
        found = [i for i in alive if replay.messages[i].get("type") == "gemini"
                 and _calls(replay.messages[i], note.tool, list(note.files_named))]
        if resolved in replay.messages:
            found = [resolved]
        if not found:
            raise RewindError(f"the {note.tool or 'tool'} call of #{seq} is not in {transcript.path}")
        return nearest(found), f"just before the {note.tool} call", None
    if not isinstance(offset, int) and resolved not in replay.messages:
        raise RewindError(f"#{seq} does not record where its conversation stood")
    if resolved in replay.messages:
        return resolved, "where it was", None
    later = [i for i in alive if replay.first_line[i] >= at]
    return (later[0] if later else None), "where it was", None


def plan_rewind(note: Note, fork: bool, place: Place) -> Plan:
    """Where the conversation of a checkpoint stands, checked against the session file now."""
    from ..base.errors import RewindError
    from .conversation import Plan

    conv = note.position
    transcript = replay = located = None
    failure: RewindError | None = None
    place.resolve(conv.transcript)  # a path that is no Gemini session file's is refused before anything
    for path in _session_files(place, conv.transcript, str(note.session or "")):
        try:
            transcript = place.load(path)
            replay = _Replay(transcript)
            if not (replay.meta.get("sessionId") or note.session):
                raise RewindError(f"{transcript.path} is not a Gemini session file (no sessionId)")
            located = _locate(transcript, replay, note)
            break
        except RewindError as exc:
            failure = failure or exc  # the recorded file's reason is the one worth telling
    if located is None or transcript is None or replay is None:
        raise failure or RewindError(f"#{note.seq} records no Gemini session file")
    session = str(replay.meta.get("sessionId") or note.session or "")
    target, where, prompt = located
    ids = list(replay.messages)
    kept = ids[:ids.index(target)] if target else ids
    plan = Plan(NAME, session, transcript)
    plan.target_uuid = target
    plan.leaf = kept[-1] if kept else None
    plan.prompt = prompt
    plan.fork = fork
    plan.where = where
    plan.empty = not any(_is_said(replay.messages[i]) for i in kept)
    return plan


def _session_files(place: Place, recorded: str | None, session: str) -> list[str | None]:
    """Where the session's messages may be: RECORDED first, then the other `session-*-<id8>.jsonl` files
    beside it that hold SESSION, largest first.

    A file's name carries the minute its process started. A resumed run that starts in a later
    minute is given (and its hooks report) a new file name, while the messages may stay in the
    first file (seen live): Gemini finds a session by its id, and so do we.
    """
    from ..base.errors import RewindError

    found: list[tuple[int, str]] = []
    if recorded and session:
        import glob

        pattern = os.path.join(glob.escape(os.path.dirname(recorded)), f"session-*-{session[:8]}.jsonl")
        for path in glob.glob(pattern):
            if path == recorded:
                continue
            try:
                other = place.load(path)
            except RewindError:
                continue
            if other.at(0).get("sessionId") == session:
                found.append((len(other.data), path))
    return [recorded, *(path for _size, path in sorted(found, reverse=True))]


def current_leaf(transcript: Transcript) -> str | None:
    """The last message Gemini would resume with now."""
    ids = list(_Replay(transcript).messages)
    return ids[-1] if ids else None


def _write_session(place: Place, like: str, replay: _Replay, keep: list[str]) -> tuple[str, str]:
    """A new session file beside LIKE holding the messages KEEP under a new id. (id, path)"""
    import json
    import time
    import uuid as uuidlib

    new = str(uuidlib.uuid4())
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    head = {"sessionId": new, "projectHash": replay.meta.get("projectHash") or "", "startTime": now,
            "lastUpdated": now, "kind": "main"}
    if replay.meta.get("directories"):
        head["directories"] = replay.meta["directories"]
    body = {"$set": {"messages": [replay.messages[i] for i in keep]}}
    data = (json.dumps(head, ensure_ascii=False, separators=(",", ":")) + "\n"
            + json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    name = f"session-{time.strftime('%Y-%m-%dT%H-%M', time.gmtime())}-{new[:8]}.jsonl"  # as Gemini names them
    path = os.path.join(os.path.dirname(like), name)
    place.write(path, data, like=like)
    return new, path


def apply_rewind(plan: Plan) -> Applied:
    """Append `{"$rewindTo": id}` (or write the kept messages as a new session with --fork)."""
    from .conversation import Applied

    transcript = plan.transcript
    place = transcript.place
    assert place is not None, "plan_rewind reads the session file through its place"
    if plan.empty and plan.fork:
        return Applied(None, "gemini", None, f"nothing of the conversation precedes the cut ({plan.where}): "
                                             "start a new session")
    if plan.fork:
        replay = _Replay(transcript)
        ids = list(replay.messages)
        keep = ids[:ids.index(plan.target_uuid)] if plan.target_uuid in replay.messages else ids
        new, path = _write_session(place, transcript.path, replay, keep)
        return Applied(new, resume_command(new), path,
                       f"new session {new} with the conversation cut {plan.where}; {plan.session} is unchanged")
    if plan.target_uuid is None:
        return Applied(plan.session, resume_command(plan.session), transcript.path,
                       "nothing was said after this checkpoint: the conversation is unchanged")
    place.append(transcript, {"$rewindTo": plan.target_uuid})
    if plan.empty:  # Gemini lists and resumes only sessions with something said in them
        return Applied(plan.session, "gemini", transcript.path,
                       f"conversation cut {plan.where}: nothing of it is kept, so Gemini will not resume "
                       f"session {plan.session}; start a new session (git rewind redo brings it back)")
    return Applied(plan.session, resume_command(plan.session), transcript.path,
                   f"conversation cut {plan.where} (later messages kept in the file and in git)")


def apply_redo(info: ConversationRecord, backup: bytes | None, place: Place) -> Applied:
    """Put the session file back as it was before the rewind; messages written since become a new session."""
    from ..base.errors import RewindError
    from .conversation import Applied

    session = str(info.session or "")
    if info.fork:
        return Applied(session, resume_command(session), info.transcript,
                       "the rewind forked a new session; the original was never changed")
    if backup is None:
        raise RewindError("the transcript backup of that rewind is missing from the repository")
    path = str(info.transcript or "")
    detail = "conversation back as it was before the rewind"
    current = place.load_if_present(path)
    if current is not None and current.data != backup:
        # Messages written since the rewind (a resumed session): keep that conversation as a session of its own.
        since = current.lines[len(backup.splitlines()):] if current.data.startswith(backup) else current.lines
        said = any(line is not None and ("id" in line or "messages" in (line.get("$set") or {})) for line in since)
        if said:
            branch, _ = _write_session(place, path, _Replay(current), list(_Replay(current).messages))
            detail += f"; what was said after the rewind is kept as session {branch} ({resume_command(branch)})"
    place.write(path, backup)
    return Applied(session, resume_command(session), path, detail)


# a conversation handed over from another machine ----------------------------------------------
#
# Gemini CLI keeps a project's chats in <Gemini home>/.gemini/tmp/<slug>/chats/, the slug mapped from the
# project's root in .gemini/projects.json, or, for a root the registry lacks, found by the `.project_root`
# marker file in <tmp>/<slug>/ that names it (read in 0.61's bundle: ProjectRegistry.getShortId). A
# handed-over session goes to the root's slug; for a root Gemini has never seen, a slug is claimed as Gemini
# would (its folder's name, slugified, `-N` on a collision) with its marker, which Gemini then registers.

PROJECT_MARKER = ".project_root"


def _slugify(text: str) -> str:
    import re

    return re.sub(r"^-|-$", "", re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", text.lower()))) or "project"


def _marker_owner(place: Place, folder: str) -> str | None:
    """The project root a slug folder's marker names (None: no marker; "": one that cannot be read)."""
    data = place.read_small(os.path.join(folder, PROJECT_MARKER))
    if data is None:
        return None
    try:
        return data.decode().strip()
    except UnicodeDecodeError:
        return ""


def project_slug(place: Place, root: str) -> str:
    """ROOT's slug folder below Gemini's tmp folder (PLACE's first), as Gemini finds or would claim it. (Gemini also
    checks the markers under ~/.gemini/history, outside its transcripts' folder: not read here.)"""
    from ..base.errors import RewindError
    from .settingsfile import load_json

    tmp = place.folders[0]
    try:
        projects = load_json(os.path.join(os.path.dirname(tmp), "projects.json")).get("projects")
    except RewindError:
        projects = None  # Gemini resets a registry it cannot read
    projects = projects if isinstance(projects, dict) else {}
    slug = projects.get(root)
    if isinstance(slug, str) and slug == os.path.basename(slug) and slug not in ("", ".", "..") \
            and _marker_owner(place, os.path.join(tmp, slug)) in (None, root):
        return slug
    try:
        names = sorted(os.listdir(tmp))
    except OSError:
        names = []
    for name in names:
        if _marker_owner(place, os.path.join(tmp, name)) == root:
            return name
    taken = {value for value in projects.values() if isinstance(value, str)}
    base = _slugify(os.path.basename(root) or "project")
    for counter in range(10_000):
        candidate = base if counter == 0 else f"{base}-{counter}"
        if candidate not in taken and _marker_owner(place, os.path.join(tmp, candidate)) in (None, root):
            return candidate
    raise RewindError(f"no free Gemini project folder for {root} under {tmp}")


def _project_hash(root: str) -> str:
    """sha256 of the project root, what Gemini records as a session's projectHash."""
    import hashlib

    return hashlib.sha256(root.encode()).hexdigest()


class Gemini(Agent):
    """Gemini CLI: hooks under "hooks" in settings.json (ms timeouts), JSON on stdout, rewind by $rewindTo."""

    name, hooks = NAME, HOOKS
    settings_path = (".gemini", "settings.json")
    mcp_path = settings_path  # under "mcpServers" beside the hooks, as `gemini mcp add` writes it
    # In -p mode Gemini glues a SessionStart context in front of the prompt, and on the next resume drops every
    # user message that starts with <hook_context>: the prompt would be lost. BeforeAgent's context is appended.
    context_on_prompt = True
    prompt_context = True  # BeforeAgent additionalContext: an extra user part (other-agents.md §2.1)
    mcp_type = None  # what `gemini mcp add` writes: no type
    transcript_noun = "Gemini session file"
    parse = staticmethod(parse)
    resume_command = staticmethod(resume_command)

    def handler(self, command: str) -> dict[str, Any]:
        """Gemini's hook handler: a name, and the timeout in milliseconds."""
        return {"type": "command", "name": "git-rewind", "command": command, "timeout": TIMEOUT_MS}

    def hook_reply(self, event_name: str | None) -> dict[str, Any]:
        """What the hook prints when it has nothing else to say: Gemini reads stdout as JSON."""
        return {}

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """<Gemini home>/.gemini/tmp (its per-project chats): the home is $GEMINI_CLI_HOME when set
        (read in Gemini CLI 0.61's bundle: `homedir()`), else ~."""
        return home_folders(home, environ, "GEMINI_CLI_HOME", (".gemini", "tmp"), (".gemini", "tmp"))

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """Every line a metadata record (sessionId), a message (id), or a `$set` / `$rewindTo` record."""
        from .conversation import jsonl_problem

        return jsonl_problem(transcript, ("sessionId", "id", "$set", "$rewindTo"))

    def conversation(self) -> Rewinder:
        return Rewinder(plan_rewind, apply_rewind, apply_redo, current_leaf)

    def handover_refusal(self) -> None:
        return None

    def session_of(self, transcript: Transcript) -> str | None:
        return next((str(line["sessionId"]) for line in transcript.lines if line is not None
                     and isinstance(line.get("sessionId"), str) and "projectHash" in line), None)

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """<tmp>/<ROOT's slug>/chats/session-<start, to the minute>-<first 8 of SESSION>.jsonl, as Gemini names a
        session's file; the files there of that name's pattern holding SESSION are this session's already."""
        import glob
        import re

        from ..base.errors import RewindError

        slug = project_slug(place, os.path.abspath(root))
        chats = os.path.join(place.folders[0], slug, "chats")
        start = str(next((line.get("startTime") for line in transcript.lines
                          if line is not None and "projectHash" in line), "") or "")
        found = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})", start)
        if found:
            minute = f"{found.group(1)}T{found.group(2)}-{found.group(3)}"
        else:
            import time

            minute = time.strftime("%Y-%m-%dT%H-%M", time.gmtime())
        path = os.path.join(chats, f"session-{minute}-{session[:8]}.jsonl")
        existing = [path]
        for other in sorted(glob.glob(os.path.join(glob.escape(chats), f"session-*-{glob.escape(session[:8])}.jsonl"))):
            try:
                if other != path and self.session_of(place.load(other)) == session:
                    existing.append(other)
            except RewindError:
                continue  # not a Gemini session file: not this session's
        return path, existing

    def prepare_folder(self, path: str, root: str, place: Place) -> None:
        """The project's marker in its slug folder, when there is none: how Gemini finds a root it has not
        registered (created only if absent, never replaced)."""
        from ..base.errors import RewindError

        slug_folder = os.path.dirname(os.path.dirname(path))
        place.mark(os.path.join(slug_folder, PROJECT_MARKER), os.path.abspath(root).encode())
        if _marker_owner(place, slug_folder) != os.path.abspath(root):
            raise RewindError(f"{slug_folder} belongs to another project now; nothing was written")

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """Each metadata record's projectHash made ROOT's (Gemini's sha256 of the root), and its `directories`
        below the sender's root (the one whose hash the record holds) moved below ROOT; with NEW_SESSION, its
        sessionId."""
        old = self.session_of(transcript)
        here = os.path.abspath(root)
        digest = _project_hash(here)

        def change(line: dict[str, Any]) -> dict[str, Any] | None:
            if not (isinstance(line.get("sessionId"), str) and "projectHash" in line):
                return None
            line = {**line, "projectHash": digest}
            listed = line.get("directories")
            if isinstance(listed, list):
                sender = next((d for d in listed if isinstance(d, str)
                               and _project_hash(d) == transcript_hash), None)
                line["directories"] = [moved(d, sender, here) for d in listed]
            if new_session and line["sessionId"] == old:
                line["sessionId"] = new_session
            return line

        transcript_hash = next((str(line["projectHash"]) for line in transcript.lines
                                if line is not None and "projectHash" in line), "")

        return rewrite_lines(transcript, change)


AGENT = Gemini()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Gemini CLI's variables (it sets CLAUDE_PROJECT_DIR too, as an alias), else its own event and tool names
    (agents.detect)."""
    from .base import OWN_VARIABLE, PAYLOAD_SHAPE

    if environ.get("GEMINI_PROJECT_DIR") or environ.get("GEMINI_SESSION_ID"):
        return OWN_VARIABLE + 2
    if payload.get("hook_event_name") in ("BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress") \
            or payload.get("tool_name") in ("write_file", "replace", "run_shell_command"):
        return PAYLOAD_SHAPE + 2
    return None
