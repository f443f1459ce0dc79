"""The checkpoint model as values: object ids, the JSON note, where the conversation stood, the
record an undo leaves for redo.

A note is stored as one JSON object in refs/notes/rewind (see DESIGN.md). Reading turns it into
a `Note` once, with every default in one place; writing turns it back. Keys this version does
not know are kept in `extra` and written back unchanged, so older and newer notes round-trip.
Pure values: no git, no files (the hook imports this on every checkpoint).
"""

from __future__ import annotations

from . import minijson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Mode = Literal["code", "conversation", "full"]
    Json = Any  # a JSON value as the json module gives it: dict, list, str, int, float, bool or None

NOTE_VERSION = 1
MODES = ("code", "conversation", "full")
_MODE_OF: dict[str, Mode] = {"code": "code", "conversation": "conversation", "full": "full"}


def mode_of(text: str) -> Mode:
    """TEXT as an undo mode; a ValueError names the three."""
    mode = _MODE_OF.get(text)
    if mode is not None:
        return mode
    raise ValueError(f"unknown mode {text} (one of {', '.join(MODES)})")


class Oid(str):
    """A git object id in hex (SHA-1 or SHA-256): a str, named for what it holds."""

    __slots__ = ()


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _oid(value: object) -> Oid | None:
    return Oid(value) if isinstance(value, str) and value else None


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


SAFETY_TRIGGERS = ("pre-rewind", "pre-redo")  # the triggers of the checkpoints every undo and redo takes first

# The tags git-rewind gives by itself (the hooks' policy: every prompt, a risky one, before /clear and compaction;
# the MCP summary tool): any other tag was given on purpose, and gc keeps what carries one (Note.tagged).
AUTOMATIC_TAGS = frozenset({"prompt", "risky", "clear", "compact", "summary"})

AGENT = "agent"
OUTSIDE = "outside"
ORIGINS = (AGENT, OUTSIDE)


def _origins(value: object) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    return {str(path): origin for path, origin in value.items() if origin in ORIGINS}


def _rest(data: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    if data.keys() <= known:  # the common case, checked in C: a reader of 10k notes pays per note
        return {}
    return {key: value for key, value in data.items() if key not in known}


class Position:
    """Where in an agent's conversation a checkpoint was taken (the note's `conversation`).

    `extra` holds what only one agent records (OpenCode: `server`, `directory`, `time_ms`).
    """

    __slots__ = ("transcript", "prompt_id", "tool_use_id", "message_uuid", "offset", "extra")
    KEYS = ("transcript", "prompt_id", "tool_use_id", "message_uuid", "offset")
    KNOWN = frozenset(KEYS)

    def __init__(self, transcript: str | None = None, prompt_id: str | None = None,
                 tool_use_id: str | None = None, message_uuid: str | None = None, offset: int | None = None,
                 extra: dict[str, Json] | None = None) -> None:
        self.transcript = transcript  # the agent's session file, as its hook named it
        self.prompt_id = prompt_id
        self.tool_use_id = tool_use_id
        self.message_uuid = message_uuid  # the message a rewind resolved it to, recorded afterwards
        self.offset = offset  # the transcript's size when the hook ran
        self.extra = extra or {}

    @classmethod
    def from_json(cls, data: object) -> Position | None:
        if not isinstance(data, dict):
            return None
        return cls(_str(data.get("transcript")), _str(data.get("prompt_id")), _str(data.get("tool_use_id")),
                   _str(data.get("message_uuid")), _int(data.get("offset")), _rest(data, cls.KNOWN))

    def to_json(self) -> dict[str, Json]:
        return {"transcript": self.transcript, "prompt_id": self.prompt_id, "tool_use_id": self.tool_use_id,
                "message_uuid": self.message_uuid, "offset": self.offset, **self.extra}

    def state(self) -> list[Json]:
        """Its fields as plain values, in __slots__ order (notecache.py keeps parsed notes so; `restore`)."""
        return [self.transcript, self.prompt_id, self.tool_use_id, self.message_uuid, self.offset, self.extra]

    @classmethod
    def restore(cls, state: list[Json]) -> Position:
        """The Position `state` gave: no parse, no check (notecache.py trusts only its own files)."""
        item = object.__new__(cls)
        item.transcript, item.prompt_id, item.tool_use_id, item.message_uuid, item.offset, item.extra = state
        return item

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable


class ConversationRecord:
    """What a conversation rewind changed, kept in the safety checkpoint's note so redo can undo it."""

    __slots__ = ("agent", "session", "transcript", "backup", "backup_blob", "leaf_before", "leaf", "cut", "fork",
                 "extra")
    KEYS = ("agent", "session", "transcript", "backup", "backup_blob", "leaf_before", "leaf", "cut", "fork")
    KNOWN = frozenset(KEYS)

    def __init__(self, agent: str, session: str | None, transcript: str | None, backup: str | None = None,
                 backup_blob: Oid | None = None, leaf_before: str | None = None, leaf: str | None = None,
                 cut: int | None = None, fork: bool = False, extra: dict[str, Json] | None = None) -> None:
        self.agent = agent
        self.session = session  # the agent's own session id
        self.transcript = transcript
        self.backup = backup  # the transcript's file name in the backup commit (the checkpoint's 2nd parent)
        self.backup_blob = backup_blob
        self.leaf_before = leaf_before  # the message the agent would have resumed from before the rewind
        self.leaf = leaf  # the last message kept
        self.cut = cut  # lines kept, for agents whose file is cut
        self.fork = fork
        self.extra = extra or {}

    @classmethod
    def from_json(cls, data: object) -> ConversationRecord | None:
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str):
            return None
        return cls(data["agent"], _str(data.get("session")), _str(data.get("transcript")), _str(data.get("backup")),
                   _oid(data.get("backup_blob")), _str(data.get("leaf_before")), _str(data.get("leaf")),
                   _int(data.get("cut")), bool(data.get("fork")), _rest(data, cls.KNOWN))

    def to_json(self) -> dict[str, Json]:
        return {"agent": self.agent, "session": self.session, "transcript": self.transcript, "backup": self.backup,
                "backup_blob": self.backup_blob, "leaf_before": self.leaf_before, "leaf": self.leaf,
                "cut": self.cut, "fork": self.fork, **self.extra}

    def state(self) -> list[Json]:
        """Its fields as plain values, in __slots__ order (`Position.state`)."""
        return [self.agent, self.session, self.transcript, self.backup, self.backup_blob, self.leaf_before, self.leaf,
                self.cut, self.fork, self.extra]

    @classmethod
    def restore(cls, state: list[Json]) -> ConversationRecord:
        item = object.__new__(cls)
        (item.agent, item.session, item.transcript, item.backup, backup_blob, item.leaf_before, item.leaf, item.cut,
         item.fork, item.extra) = state
        item.backup_blob = Oid(backup_blob) if backup_blob is not None else None
        return item

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConversationRecord) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


class RewindRecord:
    """The note's `rewind` on a safety checkpoint: which undo (or redo) it was taken before, and how."""

    __slots__ = ("to", "to_commit", "only", "mode", "conversation", "extra")
    KEYS = ("to", "to_commit", "only", "mode", "conversation")
    KNOWN = frozenset(KEYS)

    def __init__(self, to: int | None, to_commit: Oid | None, only: list[str], mode: Mode,
                 conversation: ConversationRecord | None = None, extra: dict[str, Json] | None = None) -> None:
        self.to = to  # the seq restored
        self.to_commit = to_commit
        self.only = only  # the paths it was limited to (empty: all)
        self.mode = mode
        self.conversation = conversation
        self.extra = extra or {}

    @classmethod
    def from_json(cls, data: object) -> RewindRecord | None:
        if not isinstance(data, dict):
            return None
        mode = data.get("mode")
        return cls(_int(data.get("to")), _oid(data.get("to_commit")), _strings(data.get("only")),
                   mode if mode in MODES else "code", ConversationRecord.from_json(data.get("conversation")),
                   _rest(data, cls.KNOWN))

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {"to": self.to, "to_commit": self.to_commit, "only": list(self.only),
                                "mode": self.mode}
        if self.conversation is not None:
            out["conversation"] = self.conversation.to_json()
        out.update(self.extra)
        return out

    def state(self) -> list[Json]:
        """Its fields as plain values, in __slots__ order (`Position.state`)."""
        conversation = self.conversation.state() if self.conversation is not None else None
        return [self.to, self.to_commit, self.only, self.mode, conversation, self.extra]

    @classmethod
    def restore(cls, state: list[Json]) -> RewindRecord:
        item = object.__new__(cls)
        item.to, to_commit, item.only, item.mode, conversation, item.extra = state
        item.to_commit = Oid(to_commit) if to_commit is not None else None
        item.conversation = ConversationRecord.restore(conversation) if conversation is not None else None
        return item

    @property
    def code(self) -> bool:
        """The undo changed the working tree."""
        return self.mode in ("code", "full")

    @property
    def target(self) -> str:
        """How messages name the checkpoint it restored: `#42`, or a fetched one's `origin/ada-laptop/42`
        (`source`, recorded where the checkpoint came from another machine)."""
        source = self.extra.get("source")
        return f"{source}/{self.to}" if isinstance(source, str) else f"#{self.to}"


class Note:
    """A checkpoint's metadata, as its JSON note holds it."""

    __slots__ = ("v", "seq", "session", "agent", "trigger", "tool", "paths", "message", "prompt", "summary",
                 "tags", "head", "branch", "worktree", "created", "conversation", "skipped", "origins",
                 "paths_omitted", "origins_omitted", "origins_since", "named", "turn", "changes", "rewind", "extra")
    # Written always, in this order (what `git notes show` prints), then the optional ones when set.
    KEYS = ("v", "seq", "session", "agent", "trigger", "tool", "paths", "message", "prompt", "summary", "tags",
            "head", "branch", "worktree", "created", "conversation", "skipped")
    OPTIONAL = ("origins", "origins_since", "paths_omitted", "origins_omitted", "named", "turn", "changes", "rewind")
    KNOWN = frozenset(KEYS + OPTIONAL)

    def __init__(self, seq: int, session: str, created: str, *, agent: str | None = None,
                 trigger: str | None = None, tool: str | None = None, paths: list[str] | None = None,
                 message: str = "", prompt: str | None = None, summary: Json = None,
                 tags: list[str] | None = None, head: Oid | None = None, branch: str | None = None,
                 worktree: str | None = None, conversation: Position | None = None,
                 skipped: list[dict[str, Json]] | None = None, origins: dict[str, str] | None = None,
                 paths_omitted: int | None = None, origins_omitted: int | None = None,
                 origins_since: int | None = None, named: list[str] | None = None,
                 turn: dict[str, Json] | None = None,
                 changes: dict[str, Json] | None = None,
                 rewind: RewindRecord | None = None, v: int = NOTE_VERSION,
                 extra: dict[str, Json] | None = None) -> None:
        self.v = v
        self.seq = seq  # per repository, strictly increasing, never reused
        self.session = session
        self.agent = agent  # None: taken by hand (`git rewind snap`)
        self.trigger = trigger  # the hook event, or manual/mcp/pre-rewind/pre-redo
        self.tool = tool
        # The paths changed since the work tree's previous checkpoint, any session's (at most store.MAX_NOTE_PATHS):
        # what `show`'s diffstat, `list --path` and `origins` count from. (Notes written before `named` existed
        # hold there the files the hook named, or else what changed since the session's previous checkpoint.)
        self.paths = paths if paths is not None else []
        self.message = message
        self.prompt = prompt
        self.summary = summary  # structured (summary.structured) or None
        self.tags = tags if tags is not None else []
        self.head = head
        self.branch = branch
        self.worktree = worktree  # None: the main work tree; else a linked work tree's name (Repo.worktree)
        self.created = created  # UTC, clock.STAMP
        self.conversation = conversation
        self.skipped = skipped if skipped is not None else []  # files left out ({path, reason, …})
        # Where each path changed since the work tree's previous checkpoint (any session) came from:
        # "agent" (an agent turn was running) or "outside"; None: unknown (minimal tier, older notes).
        self.origins = origins
        self.paths_omitted = paths_omitted
        self.origins_omitted = origins_omitted  # origins left out past store.MAX_NOTE_PATHS
        self.origins_since = origins_since  # the checkpoint origins were computed against (None: no earlier one)
        self.named = named  # the files the hook (or `snap --path`, MCP) named, changed or not; None: none named
        self.turn = turn  # the agent turn its "agent" changes belong to: session, agent, prompt, seq, tools
        self.changes = changes  # files and lines changed, for checkpoints before /clear
        self.rewind = rewind  # set on safety checkpoints
        self.extra = extra or {}

    @classmethod
    def from_json(cls, data: object) -> Note | None:
        """The note DATA holds, or None when it is not one of ours (no integer `seq`)."""
        if not isinstance(data, dict):
            return None
        seq = _int(data.get("seq"))
        if seq is None:
            return None
        skipped = data.get("skipped")
        changes = data.get("changes")
        turn = data.get("turn")
        return cls(
            seq, _str(data.get("session")) or "", str(data.get("created") or ""),
            agent=_str(data.get("agent")), trigger=_str(data.get("trigger")), tool=_str(data.get("tool")),
            paths=_strings(data.get("paths")), message=str(data.get("message") or ""),
            prompt=_str(data.get("prompt")), summary=data.get("summary"), tags=_strings(data.get("tags")),
            head=_oid(data.get("head")), branch=_str(data.get("branch")), worktree=_str(data.get("worktree")),
            conversation=Position.from_json(data.get("conversation")),
            skipped=[s for s in skipped if isinstance(s, dict)] if isinstance(skipped, list) else [],
            origins=_origins(data.get("origins")),
            paths_omitted=_int(data.get("paths_omitted")), origins_omitted=_int(data.get("origins_omitted")),
            origins_since=_int(data.get("origins_since")),
            named=_strings(data.get("named")) if isinstance(data.get("named"), list) else None,
            turn=turn if isinstance(turn, dict) else None,
            changes=changes if isinstance(changes, dict) else None,
            rewind=RewindRecord.from_json(data.get("rewind")),
            v=_int(data.get("v")) or NOTE_VERSION,
            extra=_rest(data, cls.KNOWN),
        )

    def state(self) -> list[Json]:
        """Its fields as plain values, in __slots__ order: what notecache.py keeps of a parsed note, so that a
        reader of 10,000 notes builds them without parsing and checking each again (`restore`)."""
        conversation = self.conversation.state() if self.conversation is not None else None
        rewind = self.rewind.state() if self.rewind is not None else None
        return [self.v, self.seq, self.session, self.agent, self.trigger, self.tool, self.paths, self.message,
                self.prompt, self.summary, self.tags, self.head, self.branch, self.worktree, self.created, conversation,
                self.skipped, self.origins, self.paths_omitted, self.origins_omitted, self.origins_since, self.named,
                self.turn, self.changes, rewind, self.extra]

    @classmethod
    def restore(cls, state: list[Json]) -> Note:
        """The Note `state` gave, equal to the one `from_json` made: no parse, no check (notecache.py trusts
        only files it wrote itself, whole)."""
        note = object.__new__(cls)
        (note.v, note.seq, note.session, note.agent, note.trigger, note.tool, note.paths, note.message, note.prompt,
         note.summary, note.tags, head, note.branch, note.worktree, note.created, conversation, note.skipped,
         note.origins, note.paths_omitted, note.origins_omitted, note.origins_since, note.named, note.turn,
         note.changes, rewind, note.extra) = state
        note.head = Oid(head) if head is not None else None
        note.conversation = Position.restore(conversation) if conversation is not None else None
        note.rewind = RewindRecord.restore(rewind) if rewind is not None else None
        return note

    @property
    def files_named(self) -> list[str]:
        """The files its hook named (the tool call's file, what an agent's transcript is searched for): `named`;
        in a note written before that field, `paths` held them."""
        return self.named if self.named is not None else self.paths

    @property
    def tagged(self) -> bool:
        """It carries a tag given on purpose (`tag`, `snap --tag`, the page), not only AUTOMATIC_TAGS: gc keeps it."""
        return any(tag not in AUTOMATIC_TAGS for tag in self.tags)

    @property
    def safety(self) -> bool:
        """A safety checkpoint: the state an undo or redo found, taken before it changed anything (its
        `rewind` record; older notes may carry only the trigger)."""
        return self.rewind is not None or self.trigger in SAFETY_TRIGGERS

    @property
    def position(self) -> Position:
        """Where the conversation stood; an empty Position when the note records none."""
        return self.conversation if self.conversation is not None else Position()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Note | None:
        """Parse a note blob; None for anything that is not a JSON object with a `seq`."""
        import json

        try:
            return cls.from_json(json.loads(raw))
        except ValueError:
            return None

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {
            "v": self.v, "seq": self.seq, "session": self.session, "agent": self.agent, "trigger": self.trigger,
            "tool": self.tool, "paths": list(self.paths), "message": self.message, "prompt": self.prompt,
            "summary": self.summary, "tags": list(self.tags), "head": self.head, "branch": self.branch,
            "worktree": self.worktree, "created": self.created,
            "conversation": self.conversation.to_json() if self.conversation is not None else None,
            "skipped": list(self.skipped),
        }
        if self.origins is not None:
            out["origins"] = dict(self.origins)
        if self.paths_omitted is not None:
            out["paths_omitted"] = self.paths_omitted
        if self.origins_omitted is not None:
            out["origins_omitted"] = self.origins_omitted
        if self.origins_since is not None:
            out["origins_since"] = self.origins_since
        if self.named is not None:
            out["named"] = list(self.named)
        if self.turn is not None:
            out["turn"] = self.turn
        if self.changes is not None:
            out["changes"] = self.changes
        if self.rewind is not None:
            out["rewind"] = self.rewind.to_json()
        out.update(self.extra)
        return out

    def to_bytes(self) -> bytes:
        """The note's text as stored: one JSON object, readable in `git notes show` (json.dumps with
        ensure_ascii and indent=1, written without importing json: every checkpoint writes one)."""
        return (minijson.dumps_indented(self.to_json()) + "\n").encode()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Note) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]
