"""Cline: hook payloads → Events, its hook scripts (one executable file per event), no conversation rewind.

Facts (docs/agents/cline.md says how each was established; VERIFIED = read in, and run with, the `cline`
CLI 3.0.65 from npm, whose hooks are those of its @cline/core 0.0.86; DOCS = Cline's documentation and
the VS Code extension's source only):

- A hook is an executable file named exactly after its event, no extension, in the user's
  `~/Documents/Cline/Hooks/` or the project's `.clinerules/hooks/` (DOCS; VERIFIED that the CLI reads both,
  besides `~/.cline/hooks/` and `.cline/hooks/`: @cline/shared `resolveHooksConfigSearchPaths`). The CLI runs a
  file by its `#!` line (`#!/bin/sh` → `sh FILE`), the extension executes it (so it must be executable).
- Events: TaskStart, TaskResume, TaskCancel, TaskComplete, PreToolUse, PostToolUse, UserPromptSubmit,
  PreCompact (DOCS). The CLI maps the files onto its runtime hooks and sends its own names in `hookName`
  (agent_start, agent_resume, agent_abort, agent_end, agent_error, tool_call, tool_result, prompt_submit,
  session_shutdown); it never runs PreCompact, sends no prompt_submit, headless or in its TUI, and runs
  TaskStart at each prompt (VERIFIED).
- Payload: clineVersion, hookName, timestamp, taskId, workspaceRoots, userId and one object per event:
  preToolUse {toolName, parameters}, postToolUse {toolName, parameters, result, success, executionTimeMs},
  userPromptSubmit {prompt, attachments}, taskStart/taskResume/taskCancel/taskComplete {taskMetadata}
  (DOCS; VERIFIED in the CLI, which stringifies each parameter and adds tool_call/tool_result {id, name,
  input} with the raw input, sessionContext {rootSessionId}, agent_id). The session is the CLI's
  rootSessionId (what `cline --id` resumes), else taskId.
- Tools: the extension's write_to_file {path, content}, replace_in_file {path, diff}, execute_command
  {command} (DOCS); the CLI's editor {path, old_text, new_text, insert_line}, apply_patch {input},
  run_commands {commands: [...]} (VERIFIED).
- Output: one JSON object `{"cancel": false, "contextModification": "…", "errorMessage": "…"}` on stdout.
  The extension blocks the action when a hook exits non-zero or prints invalid JSON, and times a hook out
  after 30 s (DOCS); the CLI runs PreToolUse/PostToolUse blocking (120 s) and the others detached, their
  output ignored (VERIFIED). Ours always prints `{"cancel":false}`.
- The VS Code extension runs hooks only with its hooks setting on (DOCS); the CLI needs none (VERIFIED).

Conversations: the extension keeps each task as JSON documents in VS Code's storage
(api_conversation_history.json, ui_messages.json, a taskHistory index: earlier notes, not checked), the CLI
as ~/.cline/data/sessions/<id>/<id>.messages.json beside SQLite databases (VERIFIED): no JSONL transcript, nothing
git-rewind can cut or fork safely from outside, so `undo --conversation/--full` refuses in one line (as
for Cursor); Cline's own checkpoint restore does that side.
"""

from __future__ import annotations

import os

from . import event as ev
from .base import Agent
from .event import Event, changed_chars, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .settingsfile import Change

NAME = "cline"

# The hook files install writes, one per documented event (matchers do not exist: every tool runs PreToolUse).
EVENTS = ("TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "PreToolUse", "PostToolUse",
          "UserPromptSubmit", "PreCompact")
HOOKS: dict[str, str | None] = dict.fromkeys(EVENTS)

# The CLI's hookName → the file (and documented) name, which the note records as the trigger.
_FILE_NAMES = {"agent_start": "TaskStart", "agent_resume": "TaskResume", "agent_abort": "TaskCancel",
               "agent_end": "TaskComplete", "agent_error": "TaskError", "tool_call": "PreToolUse",
               "tool_result": "PostToolUse", "prompt_submit": "UserPromptSubmit",
               "session_shutdown": "SessionShutdown"}
_KINDS = {"TaskStart": ev.SESSION_START, "TaskResume": ev.SESSION_START, "UserPromptSubmit": ev.PROMPT,
          "PreToolUse": ev.PRE_TOOL, "PostToolUse": ev.POST_TOOL, "TaskComplete": ev.STOP,
          "TaskCancel": ev.STOP, "TaskError": ev.STOP, "SessionShutdown": ev.SESSION_END,
          "PreCompact": ev.PRE_COMPACT}
_SOURCES = {"TaskStart": "startup", "TaskResume": "resume", "TaskCancel": "cancel", "TaskError": "error"}
# Each event's own object in the payload.
_DATA = {"TaskStart": "taskStart", "TaskResume": "taskResume", "TaskCancel": "taskCancel",
         "TaskComplete": "taskComplete", "PreToolUse": "preToolUse", "PostToolUse": "postToolUse",
         "UserPromptSubmit": "userPromptSubmit", "PreCompact": "preCompact"}
TOOL_KINDS = {"write_to_file": ev.WRITE, "new_rule": ev.WRITE, "replace_in_file": ev.EDIT,
              "apply_patch": ev.EDIT, "editor": ev.EDIT, "execute_command": ev.SHELL, "run_commands": ev.SHELL}

REPLY: dict[str, Any] = {"cancel": False}

NO_CONVERSATION_REWIND = ("Cline's task history cannot be rewound from outside Cline: use its own checkpoint "
                          "restore for the task (git rewind undo --code rewinds the files)")

# A hook file of ours: these lines, then `exec <our hook command>` (settingsfile.hook_command).
SHEBANG = "#!/bin/sh"
HEADER = "# git-rewind's hook for Cline (git rewind install --agent cline); git rewind uninstall removes it."
HOOKS_SETTING_NOTE = ("note: the Cline VS Code extension runs hooks only when they are enabled in its settings; "
                      "the cline CLI runs them as they are")


def parse(payload: dict[str, Any]) -> Event:
    """The Event a Cline hook payload (the extension's or the CLI's) describes."""
    raw = str(payload.get("hookName") or "")
    name = _FILE_NAMES.get(raw, raw)
    roots = payload.get("workspaceRoots")
    cwd = text(roots[0]) if isinstance(roots, list) and roots else None
    context = payload.get("sessionContext")
    root_session = text(context.get("rootSessionId")) if isinstance(context, dict) else None
    event = Event(NAME, name, _KINDS.get(name, ev.OTHER), root_session or text(payload.get("taskId")) or "",
                  cwd or "")
    event.source = _SOURCES.get(name)
    data = payload.get(_DATA.get(name, ""))
    data = data if isinstance(data, dict) else {}
    if event.kind == ev.PROMPT:
        event.prompt = text(data.get("prompt"))
    elif event.kind == ev.SESSION_END:
        event.source = text(payload.get("reason"))
    elif event.kind == ev.PRE_COMPACT:
        event.source = text(data.get("trigger")) or text(data.get("compactionStrategy"))
    elif event.kind in (ev.PRE_TOOL, ev.POST_TOOL):
        call = payload.get("tool_call") if event.kind == ev.PRE_TOOL else payload.get("tool_result")
        call = call if isinstance(call, dict) else {}
        event.tool = text(data.get("toolName")) or text(call.get("name"))
        event.tool_kind = TOOL_KINDS.get(event.tool or "")
        event.tool_use_id = text(call.get("id"))
        tool_input = call.get("input")  # the CLI's raw input: lists and numbers as they were
        if not isinstance(tool_input, dict):
            tool_input = data.get("parameters")
        if event.tool and isinstance(tool_input, dict):
            _read_tool_input(event, event.tool, tool_input)
    return event


def _read_tool_input(event: Event, tool: str, tool_input: dict[str, Any]) -> None:
    def string(key: str) -> str:
        value = tool_input.get(key)
        return value if isinstance(value, str) else ""

    if event.tool_kind == ev.SHELL:
        event.command = _commands(tool_input)
        return
    if tool == "apply_patch":
        ev.read_patch(event, string("input") or string("patch"))
        return
    path = text(tool_input.get("path")) or text(tool_input.get("file_path")) or text(tool_input.get("filePath"))
    if not path:
        return
    event.paths = [path]
    if event.tool_kind == ev.WRITE:
        event.change_chars = ev.written_chars(event, path, string("content"))
    elif tool == "replace_in_file":
        event.change_chars = sum(changed_chars(old, new) for old, new in _search_replace(string("diff")))
    elif tool == "editor":
        old, new = string("old_text"), string("new_text")
        insert = tool_input.get("insert_line")
        if not old and insert in (None, "", "null") and not ev.existing_text(path, event.cwd):
            event.tool_kind = ev.WRITE  # creates the file (the minimal tier checkpoints before it)
        event.change_chars = changed_chars(old, new)


def _commands(tool_input: dict[str, Any]) -> str | None:
    """The command line(s) a shell tool names: execute_command's `command`, or run_commands' `commands` (a list,
    or, in the CLI's stringified parameters, its JSON), each a string or {command, args}, joined by '; '."""
    value = tool_input.get("commands", tool_input.get("command", tool_input.get("cmd")))
    if isinstance(value, str) and value.startswith("["):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            pass
    items = value if isinstance(value, list) else [value]
    lines = []
    for item in items:
        if isinstance(item, dict):
            args = item.get("args")
            item = [item.get("command"), *args] if isinstance(args, list) else item.get("command")
        line = ev.shell_command(item)
        if line:
            lines.append(line)
    return "; ".join(lines) or None


def _search_replace(diff: str) -> list[tuple[str, str]]:
    """(search, replace) of each block of a replace_in_file diff (`------- SEARCH` / `=======` /
    `+++++++ REPLACE`, or git's conflict-marker spelling of the same)."""
    blocks: list[tuple[str, str]] = []
    old: list[str] | None = None
    new: list[str] | None = None
    for line in diff.splitlines():
        marker = line.strip()
        if marker in ("------- SEARCH", "<<<<<<< SEARCH"):
            old, new = [], None
        elif marker == "=======" and old is not None and new is None:
            new = []
        elif marker in ("+++++++ REPLACE", ">>>>>>> REPLACE") and old is not None and new is not None:
            blocks.append(("\n".join(old), "\n".join(new)))
            old, new = None, None
        elif new is not None:
            new.append(line)
        elif old is not None:
            old.append(line)
    return blocks


def hook_reply(event_name: str | None) -> dict[str, Any]:
    """What our hook prints for every event, whatever happened: Cline's "go on" (`cancel` is the one field its
    documentation requires; the extension blocks an action on a hook's invalid or missing-with-error output)."""
    return dict(REPLY)


def context_reply(event_name: str, text: str) -> dict[str, Any]:
    """TEXT given to Cline as context: `contextModification` (the extension reads it from TaskStart and
    UserPromptSubmit; the CLI runs those detached and reads nothing)."""
    return {"cancel": False, "contextModification": text}


def resume_command(session: str) -> str | None:
    """`cline --id SESSION` for a CLI session (its ids are `<ms>_<suffix>`, what the CLI prints as "Continue");
    None for the extension's tasks, reopened from Cline's task history in the editor."""
    return f"cline --id {session}" if "_" in session else None


def script(command: str) -> str:
    """A hook file of ours running COMMAND (stdin, stdout and exit status are the command's)."""
    return f"{SHEBANG}\n{HEADER}\nexec {command}\n"


def is_own_script(content: bytes | None) -> bool:
    """CONTENT is a hook file of ours, whichever git-rewind it runs (one changed since is not)."""
    from .settingsfile import is_own

    if content is None:
        return False
    try:
        lines = content.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return False
    return (len(lines) == 4 and lines[:2] == [SHEBANG, HEADER] and lines[2].startswith("exec ")
            and lines[3] == "" and is_own({"command": lines[2][5:]}))


def _read(path: str) -> bytes | None:
    """PATH's bytes; None when nothing is there; b"" (never ours, never replaced) for what cannot be read."""
    from .settingsfile import read_bytes

    try:
        return read_bytes(path)
    except NotADirectoryError:
        return None  # the hooks "folder" is a file: install says so when it writes
    except OSError:
        return b""  # a folder of that name, a file we may not read


class Cline(Agent):
    """Cline: one executable hook file per event in its hooks folder, `{"cancel": false}` on stdout, no
    conversation rewind."""

    name, hooks = NAME, HOOKS
    wrapped = False
    parse = staticmethod(parse)
    hook_reply = staticmethod(hook_reply)
    context_reply = staticmethod(context_reply)
    resume_command = staticmethod(resume_command)
    # The CLI runs UserPromptSubmit detached and ignores its output: what it would be told is lost there.
    prompt_context = False

    def settings_file(self, scope: str, root: str | None, home: str) -> str:
        """The hooks folder: ~/Documents/Cline/Hooks (user) or <project>/.clinerules/hooks."""
        if scope == "user":
            return os.path.join(home, "Documents", "Cline", "Hooks")
        assert root is not None
        return os.path.join(root, ".clinerules", "hooks")

    def files(self, folder: str) -> list[str]:
        """Our hook files in FOLDER, one per event."""
        return [os.path.join(folder, name) for name in EVENTS]

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """One executable file per event into the hooks folder, running PROGRAM (None: the git-rewind on PATH,
        answering `{"cancel":false}` where there is none); a file of that name that is not ours (the user's own
        hook: Cline runs one per event and folder) stops the install before anything is written."""
        from ..base.errors import RewindError
        from ..base.fsutil import write_atomic
        from .settingsfile import Change

        folder = self.target(scope, root, home)
        theirs = [path for path in self.files(folder) if _read(path) is not None and not is_own_script(_read(path))]
        if theirs:
            raise RewindError(f"{theirs[0]} is not git-rewind's: Cline runs one hook file per event in a folder, so "
                              "ours would replace it; nothing was written (install at the other --scope, or move "
                              "yours)")
        changed = False
        for path in self.files(folder):
            content = script(self.command(os.path.basename(path), program)).encode()
            if _read(path) == content and os.access(path, os.X_OK):
                continue
            try:
                write_atomic(path, content, new_mode=0o777, makedirs=True)
                mode = os.stat(path).st_mode
                os.chmod(path, mode | (mode & 0o444) >> 2)  # +x wherever readable (a replaced file kept its mode)
            except OSError as exc:
                raise RewindError(f"{path}: cannot write it ({exc.strerror or exc})") from None
            changed = True
        change = Change(folder, changed=changed)
        if changed:
            change.notes.append(HOOKS_SETTING_NOTE)
        return change

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove our hook files (a file of that name changed since, or the user's own, stays); the folder goes
        when they were all it held, and .clinerules/ (Documents/Cline/) when it is empty then."""
        from .settingsfile import Change

        folder = self.target(scope, root, home)
        removed = False
        for path in self.files(folder):
            if is_own_script(_read(path)):
                os.unlink(path)
                removed = True
        gone = False
        if removed:
            try:
                os.rmdir(folder)
                gone = True
                os.rmdir(os.path.dirname(folder))
            except OSError:
                pass
        return Change(folder, changed=removed, removed=gone)

    def hooks_installed(self, path: str) -> bool:
        """The hooks folder PATH holds a hook file of ours."""
        return any(is_own_script(_read(file)) for file in self.files(path))

    def also_loaded(self, root: str | None, home: str) -> list[str]:
        """Our hook files in the folders the CLI also reads (~/.cline/hooks or $CLINE_DIR/hooks, .cline/hooks):
        the CLI runs each as well as the ones install wrote."""
        folders = [os.path.join(os.environ.get("CLINE_DIR") or os.path.join(home, ".cline"), "hooks")]
        if root is not None:
            folders.append(os.path.join(root, ".cline", "hooks"))
        return [file for folder in folders for file in self.files(folder) if is_own_script(_read(file))]

    def template(self) -> dict[str, Any]:
        """The readable hooks/cline/ files: what `install --scope project` writes (the shared command)."""
        return {name: script(self.command(name, None)) for name in EVENTS}

    def readable_files(self) -> dict[str, bytes]:
        return {name: content.encode() for name, content in self.template().items()}

    def conversation(self) -> str:
        return NO_CONVERSATION_REWIND


AGENT = Cline()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Cline's hooks: hookName, taskId and clineVersion in every payload (agents.detect)."""
    from .base import OWN_PAYLOAD

    return OWN_PAYLOAD + 3 if "hookName" in payload and "taskId" in payload and "clineVersion" in payload else None
