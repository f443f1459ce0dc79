"""The shareable copy: this machine's checkpoints, redacted, as one notes ref that `push` sends.

Local checkpoints (`refs/rewind/*`, `refs/notes/rewind`) never leave the machine. `push` builds from
them new commits whose trees leave out secret-looking files and whose messages and notes are redacted
(redact.py), and one notes commit per push, the "machine commit": its tree maps each copy to its redacted
note (plus `transcripts/<session>.jsonl` when conversations are shared) and its parents keep the copies
reachable. So `git notes --ref=rewind-share/<name> list` and `git log` read it as they read any notes ref,
and a remote gains one ref per machine, not one per checkpoint.

The copy is append-only and cached per checkpoint (`.git/rewind/share/<name>.copies`): a checkpoint is
copied once; only a note that changed since (a tag) is redacted again, and each field of a redacted note
keeps the time of its last change (`shared.times`), which is what merging two copies goes by (sync.py).
The slow part (scanning blobs and text) runs without the store lock; the objects and the one ref move are
written under it, so hooks are never kept waiting by a push.
"""

from __future__ import annotations

import os

from ..base import layout
from ..base.errors import RewindError
from ..base.note import Note
from ..base.repo import REMOTE_PREFIX, SCRATCH_SHARE, SHARE_PREFIX
from ..store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.gitcmd import FastImport
    from ..base.repo import Repo
    from .redact import Finding

TRANSCRIPTS = "transcripts/"  # non-note entries of a machine commit's tree: <session>.jsonl
_PENDING = SCRATCH_SHARE  # fast-import's name for the copies while it writes them (never a ref)
# Note fields that are structure, not text anyone typed: never passed through the scanner.
_STRUCTURE = frozenset({"v", "seq", "session", "agent", "trigger", "tool", "head", "branch", "worktree", "created",
                        "prompt_id", "tool_use_id", "message_uuid", "to_commit", "mode", "origins_since"})
_SCANNED = ("100644", "100755", "120000")  # files and symlinks (whose blob is the path they point to)


def purged_marker(repo: Repo) -> str:
    """Present after a purge: the next push must replace the remote copy (`push --prune`)."""
    return os.path.join(repo.share_dir, layout.PURGED)


def default_name(repo: Repo) -> str:
    """This machine's name when `sync_name` is not set: a slug of git's user.name (else the login) and the
    short host name, e.g. `ada-lovelace-laptop`."""
    import getpass
    import re
    import socket

    user = repo.git(["config", "user.name"], check=False).decode(errors="replace").strip()
    if not user:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "someone"
    host = socket.gethostname().split(".")[0]
    slug = re.sub(r"[^a-z0-9]+", "-", f"{user}-{host}".lower()).strip("-")[:64].strip("-")
    return slug or "machine"


def user_name(repo: Repo) -> str:
    """Who made the checkpoints, as the copies say: git's user.name, else the login."""
    import getpass

    name = repo.git(["config", "user.name"], check=False).decode(errors="replace").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "someone"


class Copied:
    """One checkpoint's copy, as the cache keeps it."""

    __slots__ = ("seq", "session", "local", "local_note", "copy", "copy_note")

    def __init__(self, seq: int, session: str, local: str, local_note: str, copy: str, copy_note: str) -> None:
        self.seq = seq
        self.session = session
        self.local = local  # the local checkpoint commit
        self.local_note = local_note  # its note blob when copied (another one now: the note changed since)
        self.copy = copy  # the copy commit
        self.copy_note = copy_note  # the redacted note's blob

    def line(self) -> str:
        return f"{self.seq} {self.session} {self.local} {self.local_note} {self.copy} {self.copy_note}\n"


def _cache_file(repo: Repo, name: str) -> str:
    return os.path.join(repo.share_dir, name + ".copies")


def read_cache(repo: Repo, name: str) -> dict[str, Copied]:
    """Local checkpoint commit → its copy, for every checkpoint copied into NAME's copy."""
    try:
        with open(_cache_file(repo, name), encoding="utf-8") as fh:
            lines = [line.split() for line in fh]
    except FileNotFoundError:
        return {}
    return {p[2]: Copied(int(p[0]), p[1], p[2], p[3], p[4], p[5]) for p in lines if len(p) == 6 and p[0].isdigit()}


class Report:
    """What bringing the copy up to date did, for push to print."""

    __slots__ = ("name", "old", "new", "copied", "renoted", "left_out", "redactions", "transcripts")

    def __init__(self, name: str, old: str | None) -> None:
        self.name = name
        self.old = old  # the machine commit before (None: no copy yet)
        self.new = old  # and after
        self.copied = 0  # checkpoints copied now
        self.renoted = 0  # copies whose note was redacted again (it changed since)
        self.left_out: dict[str, str] = {}  # path → why, over the checkpoints copied now
        self.redactions: dict[str, int] = {}  # kind → how many markers
        self.transcripts: list[str] = []  # sessions whose transcript went in

    def count(self, findings: list[Finding]) -> None:
        for finding in findings:
            self.redactions[finding.kind] = self.redactions.get(finding.kind, 0) + 1


class _Plan:
    """One new copy, worked out before anything is written."""

    __slots__ = ("item", "parent", "tree", "left_out", "message", "note", "mark")

    def __init__(self, item: Checkpoint, tree: str, left_out: set[str], message: bytes) -> None:
        self.item = item
        self.parent: Copied | _Plan | None = None
        self.tree = tree
        self.left_out = left_out
        self.message = message
        self.note: dict[str, Any] = {}
        self.mark = ""  # fast-import's name for the copy while it is written


def build(repo: Repo, items: list[Checkpoint], name: str, user: str, *, conversation: bool = False,
          allow_secrets: bool = False) -> Report:
    """Bring NAME's copy up to date with ITEMS (local checkpoints): copy the new ones, redact again the
    notes that changed since, put in the sessions' transcripts when CONVERSATION. Nothing new: nothing
    written. One push at a time per repository (its own lock, not the store's)."""
    from ..base.lock import Lock

    os.makedirs(repo.share_dir, exist_ok=True)
    with Lock(os.path.join(repo.share_dir, layout.PUSH_LOCK), repo.lock_timeout):
        ref = SHARE_PREFIX + name
        old = repo.read_ref(ref)
        report = Report(name, old)
        cache = read_cache(repo, name) if old is not None else {}
        ordered = sorted(items, key=lambda c: c.seq)
        new = [c for c in ordered if c.commit not in cache]
        renote = [c for c in ordered if c.commit in cache and cache[c.commit].local_note != c.note_blob]
        transcripts = _transcripts(repo, name, ordered, old, report) if conversation else {}
        if not new and not renote and not transcripts:
            return report
        plans = _plan_new(repo, new, cache, allow_secrets, report)
        for plan in plans:
            path = TRANSCRIPTS + plan.item.session + ".jsonl"
            plan.note, found = shared_note(plan.item.note, plan.left_out, name, user,
                                           path if conversation and _has_transcript(plan.item) else None)
            report.count(found)
        _count_lines(plans)
        renoted = [(c, _renoted(repo, c, cache[c.commit], name, user, report)) for c in renote]

        with repo.store_lock():  # gc and packing see every object written here referenced once we let go
            machine = _write(repo, ref, old, plans, renoted, transcripts, cache)
            repo.move_refs({ref: machine}, {ref: old})
            from ..base.fsutil import write_atomic

            lines = "".join(c.line() for c in sorted(cache.values(), key=lambda c: c.seq))
            write_atomic(_cache_file(repo, name), lines, makedirs=True)
        report.new = machine
        report.copied = len(plans)
        report.renoted = len(renote)
        report.transcripts = sorted(transcripts)
        return report


def _count_lines(plans: list[_Plan]) -> None:
    """Each new copy whose hook recorded the transcript's size (`offset`, in bytes of the local, unredacted
    file) also gets `conversation.lines`: how many whole lines the file held then. Redaction keeps lines but
    not their lengths, so a handover finds the same place in the pushed file by lines (handoff.py)."""
    from .. import agents

    read: dict[str, bytes | None] = {}
    for plan in plans:
        position = plan.item.note.conversation
        agent = plan.item.note.agent
        conversation = plan.note.get("conversation")
        if position is None or position.offset is None or not position.transcript or not isinstance(
                conversation, dict) or agent not in agents.NAMES:
            continue
        if position.transcript not in read:
            try:
                read[position.transcript] = agents.get(agent).transcripts().load(position.transcript).data
            except RewindError:
                read[position.transcript] = None  # gone, or not the agent's: the offset is all there is
        data = read[position.transcript]
        if data is not None:
            conversation["lines"] = data.count(b"\n", 0, position.offset)


def _has_transcript(item: Checkpoint) -> bool:
    return bool(item.note.agent and item.note.conversation and item.note.conversation.transcript)


def _plan_new(repo: Repo, new: list[Checkpoint], cache: dict[str, Copied], allow_secrets: bool,
              report: Report) -> list[_Plan]:
    """The copies to make for NEW (oldest first): each on its session's previous copy, its tree without the
    files that look like secrets (worked out from what changed since that previous one)."""
    if not new:
        return []
    from ..base import gitobjects
    from . import redact

    commits = gitobjects.read_commits(repo, [c.commit for c in new])
    tip: dict[str, Copied | _Plan] = {}
    for entry in sorted(cache.values(), key=lambda c: c.seq):
        tip[entry.session] = entry
    sessions = {c.session for c in new}
    # What each session's newest copy left out, and whether an older scanner made it.
    earlier, stale = _left_out_of(repo, [e for s, e in tip.items() if s in sessions and isinstance(e, Copied)])
    plans: list[_Plan] = []
    bases: dict[str, str | None] = {}  # local commit → the local commit its changes are counted from
    for item in new:
        before = tip.get(item.session)
        bases[item.commit] = before.item.commit if isinstance(before, _Plan) else before.local if before else None
        if isinstance(before, Copied) and before.copy in stale:
            bases[item.commit] = None  # copied by an older scanner: every file of this one is looked at again
        text, found = redact.redact_text(commits[item.commit].message.decode("utf-8", "surrogateescape"))
        report.count(found)
        plan = _Plan(item, commits[item.commit].tree, set(), text.encode("utf-8", "surrogateescape"))
        plan.parent = before
        tip[item.session] = plan
        plans.append(plan)
    if allow_secrets:
        return plans
    changes = _changes(repo, bases)
    asked = [(path, blob) for changed in changes.values() for path, blob, mode in changed
             if blob is not None and mode in _SCANNED]
    flagged = redact.secret_paths(repo, sorted(set(asked)))
    # A name holding a secret: the entry goes whatever it is (a file, a link, a submodule), whatever it holds.
    named = redact.secret_names(path for changed in changes.values() for path, blob, _mode in changed
                                if blob is not None)
    flagged.update((path, f"its name holds a {kind}") for path, kind in named.items())
    for plan in plans:
        parent = plan.parent
        left = set(parent.left_out) if isinstance(parent, _Plan) else set(earlier.get(parent.copy, ())) \
            if isinstance(parent, Copied) else set()
        for path, blob, _mode in changes[plan.item.commit]:
            left.discard(path)
            if blob is not None and path in flagged:
                left.add(path)
                report.left_out.setdefault(redact.shown_path(path), flagged[path])
        plan.left_out = left
    return plans


def _changes(repo: Repo, bases: dict[str, str | None]) -> dict[str, list[tuple[str, str | None, str]]]:
    """For each commit of BASES: (path, new blob or None when deleted, new mode) of every file that differs
    from its base, or of every file when it has none (or the base is gone: gc dropped it). One
    `git diff-tree --stdin` for those with a base, one `git ls-tree` per one without."""
    from ..base import gitcmd

    present = _existing(repo, sorted({b for b in bases.values() if b}))
    found: dict[str, list[tuple[str, str | None, str]]] = {}
    pairs = [(c, b) for c, b in bases.items() if b and b in present]
    if pairs:
        out = gitcmd.run(["diff-tree", "-r", "--no-renames", "-z", "--stdin"], cwd=repo.root,
                         input="".join(f"{c} {b}\n" for c, b in pairs).encode())
        found.update(_parse_diff(out))
    for commit, base in bases.items():
        if not base or base not in present:
            out = gitcmd.run(["ls-tree", "-r", "-z", "--full-tree", commit], cwd=repo.root)
            listed = (entry.partition(b"\t") for entry in out.split(b"\0") if entry)
            found[commit] = [(os.fsdecode(path), info.split()[2].decode(), info.split()[0].decode())
                             for info, _, path in listed]
        found.setdefault(commit, [])
    return found


def _parse_diff(out: bytes) -> dict[str, list[tuple[str, str | None, str]]]:
    """`diff-tree -r -z --stdin` output per commit: (path, its new blob or None when deleted, its new mode)."""
    from ..base.gitobjects import raw_diff_by_commit

    return {commit: [(e.path, None if e.status == "D" else e.new_oid, f"{e.new_mode:06o}") for e in entries]
            for commit, entries in raw_diff_by_commit(out).items()}


def _existing(repo: Repo, oids: list[str]) -> set[str]:
    from ..base.gitcmd import cat_file

    if not oids:
        return set()
    return {oid for oid, obj in zip(oids, cat_file(oids, repo.root), strict=True) if obj is not None}


def _left_out_of(repo: Repo, entries: list[Copied]) -> tuple[dict[str, list[str]], set[str]]:
    """Copy commit → the paths its tree left out, from the redacted notes of ENTRIES; where a note names one
    only redacted (its name held a secret), from the trees: what the local checkpoint holds and its copy
    does not. And the copies an older scanner made (`shared.scanner`), which a newer one may not trust."""
    from ..base.gitcmd import cat_file
    from . import redact

    found: dict[str, list[str]] = {}
    stale: set[str] = set()
    hidden: dict[str, str] = {}  # copy commit → its local checkpoint, for those naming a redacted path
    for entry, obj in zip(entries, cat_file([e.copy_note for e in entries], repo.root), strict=True):
        shared = _json(obj[1]).get("shared") if obj is not None else None
        found[entry.copy] = [str(p) for p in shared.get("left_out") or []] if isinstance(shared, dict) else []
        if not isinstance(shared, dict) or shared.get("scanner") != redact.SCANNER_VERSION:
            stale.add(entry.copy)
        if any(redact.is_redacted(p) for p in found[entry.copy]):
            hidden[entry.copy] = entry.local
    present = _existing(repo, sorted(set(hidden.values())))
    pairs = [(copy, local) for copy, local in hidden.items() if local in present]
    if pairs:
        from ..base import gitcmd

        out = gitcmd.run(["diff-tree", "-r", "--no-renames", "-z", "--stdin"], cwd=repo.root,
                         input="".join(f"{local} {copy}\n" for copy, local in pairs).encode())
        diffs = _parse_diff(out)
        for copy, local in pairs:
            found[copy] = [path for path, blob, _mode in diffs.get(local, []) if blob is not None]
    return found, stale


def shared_note(note: Note, left_out: set[str], name: str, user: str, transcript: str | None
                ) -> tuple[dict[str, Any], list[Finding]]:
    """NOTE as it may leave the machine: every text field through the scanner; the work tree's name, the
    transcript's local path and what redo needs of a rewind dropped; LEFT_OUT paths gone from `paths`, `named`
    and `origins`; `shared` says who made it, what was left out and by which scanner's rules."""
    data: dict[str, Any] = note.to_json()
    data["worktree"] = None
    if isinstance(data.get("conversation"), dict):
        data["conversation"] = {**data["conversation"], "transcript": None}
    if isinstance(data.get("rewind"), dict):
        data["rewind"] = {k: v for k, v in data["rewind"].items() if k != "conversation"}
    data.pop("shared", None)
    from .redact import SCANNER_VERSION, Finding

    findings: list[Finding] = []
    named = _secret_named(data)  # a path gone from the tree (deleted) may still hold a secret in its name
    findings += [Finding(kind, "note") for kind in named.values()]
    gone = set(left_out) | set(named)
    if gone:
        data["paths"] = [p for p in data.get("paths") or [] if p not in gone]
        if isinstance(data.get("origins"), dict):
            data["origins"] = {p: o for p, o in data["origins"].items() if p not in gone}
        if isinstance(data.get("named"), list):
            data["named"] = [p for p in data["named"] if p not in gone]
        if isinstance(data.get("skipped"), list):
            data["skipped"] = [s for s in data["skipped"] if not (isinstance(s, dict) and s.get("path") in gone)]
    data = _redacted(data, findings, "")
    data["shared"] = {"by": name, "user": user, "transcript": transcript,
                      "left_out": sorted({_shown(p) for p in left_out}), "redactions": len(findings), "times": {},
                      "scanner": SCANNER_VERSION}
    return data, findings


def _secret_named(data: dict[str, Any]) -> dict[str, str]:
    """The paths a note names (`paths`, `named`, `origins`, `skipped`) whose text holds a secret: path → its kind."""
    from . import redact

    paths = [p for p in data.get("paths") or [] if isinstance(p, str)]
    if isinstance(data.get("named"), list):
        paths += [p for p in data["named"] if isinstance(p, str)]
    if isinstance(data.get("origins"), dict):
        paths += [p for p in data["origins"] if isinstance(p, str)]
    if isinstance(data.get("skipped"), list):
        paths += [s["path"] for s in data["skipped"] if isinstance(s, dict) and isinstance(s.get("path"), str)]
    return redact.secret_names(paths)


def _shown(path: str) -> str:
    from . import redact

    return redact.shown_path(path)


def _redacted(value: Any, findings: list[Finding], key: str, structure: frozenset[str] = _STRUCTURE) -> Any:
    """VALUE with every string that is not STRUCTURE (keys whose values nobody typed) passed through the scanner."""
    from . import redact

    if isinstance(value, str):
        if key in structure:
            return value
        text, found = redact.redact_text(value)
        findings.extend(found)
        return text
    if isinstance(value, list):
        return [_redacted(v, findings, key, structure) for v in value]
    if isinstance(value, dict):  # keys too: `origins` is keyed by path
        return {_redacted(k, findings, "", structure) if k not in structure else k: _redacted(v, findings, k, structure)
                for k, v in value.items()}
    return value


def redacted_json(value: Any, structure: frozenset[str]) -> tuple[Any, list[Finding]]:
    """VALUE (parsed JSON) as a shared copy holds it: every string but those under STRUCTURE's keys (and
    _STRUCTURE's) passed through the scanner, as the checkpoints' notes are; and what was found."""
    findings: list[Finding] = []
    return _redacted(value, findings, "", _STRUCTURE | structure), findings


def _renoted(repo: Repo, item: Checkpoint, entry: Copied, name: str, user: str, report: Report) -> dict[str, Any]:
    """ITEM's note redacted again (it changed since it was copied): the fields that now differ get this time."""
    from ..base.clock import utc_now
    from ..base.gitcmd import cat_file

    (found_old,) = cat_file([entry.copy_note], repo.root)
    old = _json(found_old[1]) if found_old is not None else {}
    shared_old: dict[str, Any] = old["shared"] if isinstance(old.get("shared"), dict) else {}
    data, findings = shared_note(item.note, set(shared_old.get("left_out") or []), name, user,
                                 shared_old.get("transcript"))
    report.count(findings)
    data["shared"]["scanner"] = shared_old.get("scanner")  # its tree is as that scanner left it
    times = dict(shared_old.get("times") or {})
    now = utc_now()
    for key in set(data) | set(old):
        if key != "shared" and data.get(key) != old.get(key):
            times[key] = now
    data["shared"]["times"] = times
    return data


def _json(raw: bytes) -> dict[str, Any]:
    import json

    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def note_bytes(data: dict[str, Any]) -> bytes:
    """A redacted note as stored: readable in `git notes show`, as local notes are."""
    from ..base import minijson

    return (minijson.dumps_indented(data) + "\n").encode()


def _transcripts(repo: Repo, name: str, items: list[Checkpoint], machine: str | None,
                 report: Report) -> dict[str, bytes]:
    """Session → its transcript as the agent keeps it now (read through the agent's own gate), redacted, for
    the sessions of ITEMS whose transcript differs from what MACHINE already holds. A transcript unchanged
    since the last push is not scanned again (`<name>.transcripts` keeps each one's blob before and after)."""
    from .. import agents
    from ..base.fsutil import write_atomic
    from ..store.snapshot import blob_oid
    from . import redact

    newest: dict[str, Checkpoint] = {}
    for item in items:
        if _has_transcript(item) and item.note.agent in agents.NAMES:
            newest[item.session] = item
    if not newest:
        return {}
    held = transcript_blobs(repo, machine) if machine else {}
    memo_file = os.path.join(repo.share_dir, name + ".transcripts")
    memo = {}
    try:
        with open(memo_file, encoding="utf-8") as fh:
            memo = {p[0]: (p[1], p[2]) for p in (line.split() for line in fh) if len(p) == 3}
    except FileNotFoundError:
        pass
    changed: dict[str, bytes] = {}
    for session, item in newest.items():
        assert item.note.agent is not None and item.note.conversation is not None
        try:
            raw = agents.get(item.note.agent).transcripts().load(item.note.conversation.transcript).data
        except RewindError:
            continue  # gone or not the agent's: the copy goes without it (push says which went in)
        raw_oid = blob_oid(raw, repo.object_format)
        if session in memo and memo[session][0] == raw_oid and held.get(session) == memo[session][1]:
            continue
        text, found = redact.redact_transcript(raw)
        text_oid = blob_oid(text, repo.object_format)
        memo[session] = (raw_oid, text_oid)
        if held.get(session) != text_oid:
            changed[session] = text
            report.count(found)
    write_atomic(memo_file, "".join(f"{s} {a} {b}\n" for s, (a, b) in sorted(memo.items())), makedirs=True)
    return changed


def transcript_blobs(repo: Repo, machine: str) -> dict[str, str]:
    """Session → the blob of its transcript in machine commit MACHINE's tree (`transcripts/<session>.jsonl`)."""
    out = repo.git(["ls-tree", "-z", machine, TRANSCRIPTS], check=False)
    held = {}
    for entry in out.split(b"\0"):
        info, _, path = entry.partition(b"\t")
        name = os.fsdecode(path).removeprefix(TRANSCRIPTS)
        if info and name.endswith(".jsonl"):
            held[name[: -len(".jsonl")]] = info.split()[2].decode()
    return held


def _write(repo: Repo, ref: str, old: str | None, plans: list[_Plan], renoted: list[tuple[Checkpoint, dict[str, Any]]],
           transcripts: dict[str, bytes], cache: dict[str, Copied]) -> str:
    """Write the copies, their notes and the machine commit through one fast-import; CACHE gains the copies.
    Returns the machine commit (no ref moves here)."""
    from ..base.gitcmd import FastImport

    with FastImport(repo.root) as fi:
        # Objects made in this stream are named by their marks: fast-import cannot read them back by id
        # until it ends.
        notes: list[tuple[str, str]] = []  # (note blob, annotated commit), each a mark or an object id
        tips: dict[str, str] = {}
        mark = 0
        for plan in plans:
            mark += 1
            fi.reset(_PENDING)
            parent = plan.parent
            fi.commit(_PENDING, plan.message, int(plan.item.time), mark=mark,
                      parents=[] if parent is None else [parent.mark if isinstance(parent, _Plan) else parent.copy])
            fi.write(b'M 040000 ' + plan.tree.encode() + b' ""\n')
            _delete(fi, plan.left_out)
            fi.write(b"\n")
            plan.mark = f":{mark}"
            copy = fi.get_mark(mark)
            mark += 1
            blob = _blob(fi, note_bytes(plan.note), mark)
            cache[plan.item.commit] = Copied(plan.item.seq, plan.item.session, plan.item.commit, plan.item.note_blob,
                                             copy, blob)
            notes.append((f":{mark}", plan.mark))
            tips[plan.item.session] = plan.mark
        for item, data in renoted:
            mark += 1
            blob = _blob(fi, note_bytes(data), mark)
            entry = cache[item.commit]
            entry.local_note, entry.copy_note = item.note_blob, blob
            notes.append((f":{mark}", entry.copy))
        if plans:
            fi.reset(_PENDING, "0" * len(plans[0].item.commit))
        mark += 1
        fi.commit(ref, _machine_message(plans, renoted, transcripts).encode(), _now(), mark=mark,
                  parents=([old] if old else []) + list(tips.values()))
        for blob_id, commit_id in notes:
            fi.write(b"N " + blob_id.encode() + b" " + commit_id.encode() + b"\n")
        for session, content in sorted(transcripts.items()):
            fi.write(b"M 100644 inline " + (TRANSCRIPTS + session + ".jsonl").encode() + b"\n")
            fi.data(content)
        fi.write(b"\n")
        machine = fi.get_mark(mark)
        fi.reset(ref)  # the ref moves after, checked against what it was
    return machine


def _delete(fi: FastImport, paths: set[str]) -> None:
    from ..base.gitcmd import quote_path

    for path in sorted(paths):
        fi.write(b"D " + quote_path(os.fsencode(path)) + b"\n")


def _blob(fi: FastImport, data: bytes, mark: int) -> str:
    fi.write(b"blob\nmark :%d\n" % mark)
    fi.data(data)
    return fi.get_mark(mark)


def _now() -> int:
    import time

    return int(time.time())


def _machine_message(plans: list[_Plan], renoted: list[tuple[Checkpoint, dict[str, Any]]],
                     transcripts: dict[str, bytes]) -> str:
    parts = []
    if plans:
        sessions = {p.item.session for p in plans}
        parts.append(f"{len(plans)} checkpoint{'s' * (len(plans) != 1)} of {len(sessions)} "
                     f"session{'s' * (len(sessions) != 1)}")
    if renoted:
        parts.append(f"{len(renoted)} note{'s' * (len(renoted) != 1)} updated")
    if transcripts:
        parts.append(f"{len(transcripts)} transcript{'s' * (len(transcripts) != 1)}")
    return "git-rewind share: " + ", ".join(parts) + "\n"


def transcript_of(repo: Repo, checkpoint: Checkpoint, machine: str | None = None) -> bytes | None:
    """The redacted transcript CHECKPOINT's session was shared with, from the machine commit it came from
    (MACHINE, or the ref its `source` names); None when none was shared."""
    from ..base import gitcmd

    if machine is None:
        if checkpoint.source is None:
            return None
        machine = repo.read_ref(REMOTE_PREFIX + checkpoint.source)
        if machine is None:
            return None
    path = TRANSCRIPTS + checkpoint.session + ".jsonl"
    try:
        return gitcmd.run(["cat-file", "blob", f"{machine}:{path}"], cwd=repo.root)
    except gitcmd.GitError:
        return None


def discard_copy(repo: Repo) -> None:
    """Drop this machine's local copy and its caches (after a purge rewrote the checkpoints it was built
    from), and mark that the next push must be `push --prune`: merging with the remote's old copy would
    bring back what the purge removed. Hold the store lock."""
    import shutil

    from ..base.fsutil import write_atomic
    from ..base.gitobjects import refs_under

    old: dict[str, str | None] = dict(refs_under(repo, SHARE_PREFIX))
    if old:
        repo.move_refs(dict.fromkeys(old), old)
    shutil.rmtree(repo.share_dir, ignore_errors=True)
    os.makedirs(repo.share_dir, exist_ok=True)
    write_atomic(purged_marker(repo), b"push --prune must replace this machine's copy on the remote\n")
