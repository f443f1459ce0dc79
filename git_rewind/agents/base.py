"""What every agent provides, declared once: `Agent`, and `Rewinder` for its conversation.

Each module in agents/ defines one subclass and one instance of it (`AGENT`); `agents.get(name)`
returns it. The defaults are the common case (a Claude-style hooks file, no reply on stdout, no
slash commands, a JSON `mcpServers` entry); an agent overrides what it does differently, so every
capability is a declared attribute or method and nothing is probed.

The hook imports an agent module on every call: this module imports nothing at load time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..base.note import ConversationRecord, Note
    from .conversation import Adopted, Applied, Place, Plan, Transcript
    from .event import Event
    from .settingsfile import Change

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
    place.write(transcript.path, lines_kept(transcript, cut))
    return Applied(plan.session, resume, transcript.path,
                   f"conversation cut {plan.where} ({len(transcript.raw) - cut} {unit}; all kept in git)")


def lines_kept(transcript: Transcript, cut: int) -> bytes:
    """What cutting TRANSCRIPT in place to its first CUT lines leaves (cut_in_place); IndexError for a CUT past
    its lines."""
    if not 0 < cut <= len(transcript.ends):
        raise IndexError(f"no line {cut} in {transcript.path}")
    return transcript.data[:transcript.ends[cut - 1]]


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
    the message the agent would resume from now, for redo (None when the agent's redo needs none);
    cut_leaves(transcript, cut): for an agent whose rewind cuts its file in place, what that cut leaves of the
    file (plan.cut in the agent's unit), so that an undo can see the conversation already cut where it goes
    (None: the agent does not cut its file).
    PLACE (the plan's transcript.place in apply_rewind) is the agent's `Agent.transcripts()`, handed in by
    undo.py: every transcript file is read and written through it, never directly.
    """

    __slots__ = ("plan_rewind", "apply_rewind", "apply_redo", "current_leaf", "cut_leaves")

    def __init__(self, plan_rewind: Callable[[Note, bool, Place], Plan],
                 apply_rewind: Callable[[Plan], Applied],
                 apply_redo: Callable[[ConversationRecord, bytes | None, Place], Applied],
                 current_leaf: Callable[[Transcript], str | None] = _no_leaf,
                 cut_leaves: Callable[[Transcript, int], bytes] | None = None) -> None:
        self.plan_rewind = plan_rewind
        self.apply_rewind = apply_rewind
        self.apply_redo = apply_redo
        self.current_leaf = current_leaf
        self.cut_leaves = cut_leaves


# One class per concern, over what every agent declares (Identity); Agent is their composition.


def below(scope: str, root: str | None, home: str, parts: tuple[str, ...]) -> str:
    """PARTS below HOME (user scope) or the project ROOT."""
    import os

    base = home if scope == "user" else root
    assert base is not None and parts
    return os.path.join(base, *parts)


class Identity:
    """An agent's declared facts: every capability is an attribute or a method, nothing is probed."""

    name: str = ""
    scopes: tuple[str, ...] = ("user", "project")
    # What `git rewind install` writes: event → matcher (None: every occurrence).
    hooks: dict[str, str | None] = {}
    wrapped = True  # hook entries sit under "hooks" (False: events at the file's top level)
    # Top-level keys the agent adds itself when it rewrites its settings file (Qwen Code's "$version"): not the
    # user's, so a file left with only those after uninstall was ours and goes.
    agent_keys: tuple[str, ...] = ()
    # The session-start context goes with the session's first prompt instead (Gemini CLI in -p mode glues
    # it in front of the prompt, and drops such a message on resume).
    context_on_prompt = False
    # The agent reads context from its prompt hook's output (`hookSpecificOutput.additionalContext` of the
    # prompt event): what the hook tells a session about rewinds made from outside it (rewinds.py).
    prompt_context = False
    # Where its files are, below the home folder (user scope) or the project: settings_file and mcp_file
    # (an agent whose files are elsewhere overrides those).
    settings_path: tuple[str, ...] = ()
    mcp_path: tuple[str, ...] | None = None  # None: no MCP configuration known
    mcp_type: str | None = "stdio"  # the MCP entry's "type" (None: the agent's own `mcp add` writes none)
    transcript_noun = "transcript"  # what its session files are called in messages ("Codex rollout")
    transcript_suffix = ".jsonl"  # how their names end
    # The programs `git rewind watch -- PROGRAM` knows as this agent (by the executable's name): an agent
    # with no hooks (Aider) is watched, and `watch_context` tells what each checkpoint's note adds.
    programs: tuple[str, ...] = ()

    def hook_reply(self, event_name: str | None) -> dict[str, Any] | None:
        """What the hook prints on stdout whatever happened (None: nothing is expected); read by the hook
        (payloads) and by the shared entries install writes (hooksetup)."""
        return None

class Payloads(Identity):
    """Parsing the agent's payloads into Events and answering them."""

    def parse(self, payload: dict[str, Any]) -> Event:
        """The Event a hook payload describes."""
        raise NotImplementedError

    def context_reply(self, event_name: str, text: str) -> dict[str, Any]:
        """The one JSON object a session-start or prompt hook prints to give the agent TEXT as context (Claude Code,
        Droid, Gemini CLI and Codex read `hookSpecificOutput.additionalContext`)."""
        return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}

    def resume_command(self, session: str) -> str | None:
        """The shell command that resumes SESSION (None: the agent has none to offer)."""
        return None

    def watch_context(self, root: str, memo: dict[str, Any]) -> dict[str, Any]:
        """What `git rewind watch` adds to its next checkpoint of this agent's program, working in ROOT: any of
        "prompt" (str: the prompt that led to the changes), "conversation" (a note.Position: where its
        conversation stands), "commits" (list of str: the commits the program made since the last call).
        Called just before each watch checkpoint; MEMO is kept between the calls of one watch run (offsets
        read so far). Never raises: what cannot be read is left out."""
        return {}

    def made_commit(self, committer: str, author: str, message: str) -> bool:
        """A commit with this COMMITTER and AUTHOR name and MESSAGE carries the agent's own mark (Aider's trailer):
        what an undo's note on the commits the branch keeps names as the agent's."""
        return False

TIMEOUT = 30  # seconds the agent gives our hook


class HookSetup(Identity):
    """Installing and removing our hook entries in the agent's settings."""

    def settings_file(self, scope: str, root: str | None, home: str) -> str:
        """The file our hooks go into at SCOPE (ROOT: the project's work tree)."""
        return below(scope, root, home, self.settings_path)

    def target(self, scope: str, root: str | None, home: str | None = None) -> str:
        """settings_file, after checking SCOPE is one of ours and a project scope has a work tree."""
        import os

        from ..base.errors import RewindError

        if scope not in self.scopes:
            raise RewindError(f"{self.name} has no {scope} scope (one of {', '.join(self.scopes)})")
        if scope != "user" and root is None:
            raise RewindError(f"--scope {scope} needs a git work tree; run it inside your project")
        return str(self.settings_file(scope, root, home or os.path.expanduser("~")))

    def handler(self, command: str) -> dict[str, Any]:
        """One hook handler running COMMAND."""
        return {"type": "command", "command": command, "timeout": TIMEOUT}

    def command(self, event_name: str | None, program: list[str] | None) -> str:
        """What our entry for EVENT_NAME runs: PROGRAM (absolute) + `hook --agent …`, or, with None, the
        form for a project's shared files, which answers as the hook would (hook_reply) where git-rewind
        is not installed. EVENT_NAME None: the command as `install` shows it."""
        import json

        from .settingsfile import hook_command

        reply = self.hook_reply(event_name)
        return hook_command(self.name, program, None if reply is None else json.dumps(reply, separators=(",", ":")))

    def entries(self, program: list[str] | None) -> dict[str, list[dict[str, Any]]]:
        """Our hook groups, event by event, in the Claude-style format (PROGRAM as for `command`)."""
        result: dict[str, list[dict[str, Any]]] = {}
        for event_name, matcher in self.hooks.items():
            group: dict[str, Any] = {}
            if matcher is not None:
                group["matcher"] = matcher
            group["hooks"] = [self.handler(self.command(event_name, program))]
            result[event_name] = [group]
        return result

    def seed(self, path: str) -> dict[str, Any]:
        """What a hooks file we create at PATH starts from (Droid carries over settings.json's hooks)."""
        return {}

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """Our hooks, running PROGRAM (None: the shared form, see `command`), into the settings file; a
        second install changes nothing."""
        path = self.target(scope, root, home)
        return self.write_hooks(path, program)

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove exactly our hooks; a file we created and left empty goes too."""
        return self.remove_hooks(self.target(scope, root, home))

    def hooks_installed(self, path: str) -> bool:
        """The settings file PATH holds our hooks."""
        from .settingsfile import has_own_hooks

        return has_own_hooks(path, self.wrapped)

    def also_loaded(self, root: str | None, home: str) -> list[str]:
        """Files holding our hooks that the agent loads besides the ones install writes (ROOT: the project's work
        tree, None outside one): each runs every hook again, so `status` warns of them."""
        return []

    def write_hooks(self, path: str, program: list[str] | None) -> Change:
        """Our groups into the Claude-style hooks file PATH (after the others of each event)."""
        from .settingsfile import write_hooks

        return write_hooks(path, self.entries(program), self.wrapped, lambda: self.seed(path), self.agent_keys)

    def remove_hooks(self, path: str) -> Change:
        """Our groups out of the Claude-style hooks file PATH."""
        from .settingsfile import remove_hooks

        return remove_hooks(path, self.wrapped, self.agent_keys)

    def template(self) -> dict[str, Any]:
        """The readable hooks/<agent>/ file: what `install --scope project` writes (the shared command)."""
        hooks = self.entries(None)
        return {"hooks": hooks} if self.wrapped else dict(hooks)

    def readable_files(self) -> dict[str, bytes]:
        """Name under hooks/<agent>/ → content: the readable copies of what install writes."""
        import json
        import os

        name = os.path.basename(self.settings_file("user", None, ""))
        return {name: (json.dumps(self.template(), indent=2) + "\n").encode()}

    def slash_commands(self) -> dict[str, bytes]:
        """File name → content of the slash commands install copies beside the settings file."""
        return {}

class McpEntry(Identity):
    """Our MCP server's entry in the agent's configuration."""

    def mcp_file(self, scope: str, root: str | None, home: str) -> str | None:
        """The MCP configuration file at SCOPE (user or project); None: no MCP support known."""
        return None if self.mcp_path is None else below(scope, root, home, self.mcp_path)

    def mcp_entry(self, command: list[str]) -> dict[str, Any]:
        """Our server's entry, as the agent's own `mcp add` writes it: COMMAND plus `mcp`."""
        entry: dict[str, Any] = {"type": self.mcp_type} if self.mcp_type else {}
        entry.update({"command": command[0], "args": [*command[1:], "mcp"]})
        return entry

class Transcripts(Identity):
    """The agent's session files, read and written only through its Place."""

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The folders the agent keeps its session files in, as HOME and ENVIRON place them (the variables
        the agent itself honours). None: git-rewind never reads or writes a file of this agent's."""
        return ()

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """Why TRANSCRIPT is not one of the agent's session files (None: it is)."""
        return f"git-rewind knows no session file of {self.name}"

    def transcripts(self, home: str | None = None, environ: Mapping[str, str] | None = None) -> Place:
        """The gate every read and write of this agent's session files goes through (conversation.Place)."""
        import os

        from .conversation import Place

        folders = self.transcript_folders(home or os.path.expanduser("~"), os.environ if environ is None else environ)
        return Place(self.name, self.transcript_noun, folders, self.transcript_problem, self.transcript_suffix)

    def recognises_transcript_path(self, path: str, environ: Mapping[str, str]) -> bool:
        """PATH is where this agent keeps session files (the hook records no other; the file is not read)."""
        import os

        from ..base.fsutil import within

        folders = self.transcript_folders(os.path.expanduser("~"), environ)
        return path.endswith(self.transcript_suffix) and within(path, folders) is not None

    def conversation(self) -> Rewinder | str:
        """The agent's conversation rewind, or the sentence that says why there is none."""
        return f"conversation rewind is not available for {self.name}"

    # a conversation handed over from another machine (handoff.py) -----------------------------------

    def handover_refusal(self) -> str | None:
        """Why a conversation of this agent cannot be handed over (None: it can)."""
        return f"handing over a conversation is not available for {self.name}"

    def session_of(self, transcript: Transcript) -> str | None:
        """The session id TRANSCRIPT records for itself."""
        return None

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """Where this agent keeps SESSION (whose content is TRANSCRIPT) for the project ROOT on this machine: the
        path a new file goes to, and the files that already hold SESSION (to be kept, never replaced)."""
        raise NotImplementedError

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """TRANSCRIPT as this agent keeps it for ROOT: the fields it keys the project by rewritten from the
        sender's to ROOT; with NEW_SESSION, under that session id."""
        raise NotImplementedError

    def new_session_id(self) -> str:
        """A fresh session id in the agent's own form."""
        import uuid

        return str(uuid.uuid4())

    def prepare_folder(self, path: str, root: str, place: Place) -> None:
        """What the agent needs beside a new file PATH before it finds it (Gemini: its project marker)."""

    def adopt_transcript(self, raw: bytes, session: str, root: str, home: str | None = None,
                         environ: Mapping[str, str] | None = None, write: bool = True) -> Adopted:
        """Put RAW, the transcript of SESSION as another machine pushed it, where this agent looks for it for the
        project ROOT (never where the sender kept it), its per-project fields rewritten. A file of the same
        session already here is never replaced: one that already holds RAW is used as it is, one RAW extends
        (nothing of it lost) is extended, any other stays and RAW goes in as a new session (forked).
        Every check comes first; WRITE false: only say where it would go. Every write goes through the Place."""
        from ..base.errors import RewindError
        from ..base.repo import check_session
        from .conversation import Adopted, Transcript

        refusal = self.handover_refusal()
        if refusal is not None:
            raise RewindError(refusal)
        check_session(session)
        place = self.transcripts(home, environ)
        incoming = Transcript(f"{self.transcript_noun} of session {session}", raw)
        problem = self.transcript_problem(incoming)
        if problem:
            raise RewindError(f"the handed-over {self.transcript_noun} is not one ({problem}); nothing was written")
        recorded = self.session_of(incoming)
        if recorded != session:
            raise RewindError(f"the handed-over {self.transcript_noun} is of session {recorded}, not {session}; "
                              "nothing was written")
        data = self.rehome(incoming, root, None)
        path, existing = self.handover_files(session, root, place, incoming)
        place.resolve(path)  # whatever the agent module computed, it is below the agent's own folders
        how = "written"
        for other in existing:
            current = place.load_if_present(other)
            if current is None:
                continue
            if current.data.startswith(data):
                return Adopted(current.path, session, "kept", data, place)
            if data.startswith(current.data):  # the same conversation, gone further there: nothing here is lost
                path, how = current.path, "extended"
                break
            how = "forked"
        if how == "forked":
            session = self.new_session_id()
            data = self.rehome(incoming, root, session)
            path, _ = self.handover_files(session, root, place, Transcript(incoming.path, data))
            place.resolve(path)
        if write:
            if how == "extended":
                place.write(path, data)
            else:
                self.prepare_folder(path, root, place)
                place.create(path, data)
        return Adopted(path, session, how, data, place)


class Agent(Payloads, HookSetup, McpEntry, Transcripts):
    """One coding agent, one concern per base class: its payloads, its hooks in its settings, its MCP entry,
    its conversation, over its declared facts (Identity). An agent module subclasses this and overrides what
    it does differently. (The concerns share this module: the hook imports it on every call, and each module
    more is a file to find and load.)"""
