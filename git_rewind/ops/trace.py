"""`git rewind trace`: who wrote which lines, as Agent Trace records (the open format of agent-trace.dev, 0.1.0).

A commit's record comes from its authorship note (store/authorship.py: the lines the commit added or changed
and who wrote each). The work tree's record comes from its checkpoints, through the one blame engine
(ops/blame.py), for the lines that differ from HEAD: what the next commit would add. Both go through one
shape, an `Authorship`, and one writer of records (`_record`), so a commit and the work tree read alike.

In a record, a conversation is an agent session (contributor `ai`, with the model when it is known), the
person's lines (`human`) or lines nobody can vouch for (`unknown`); no `url`, since a session has no address
to look it up at. git-rewind's own data (each range's agent, session, checkpoint seq and commit, tool) is in
`metadata["git-rewind"]`, in the authorship note's shape; prompts are never in a record. Each range carries
`content_hash`, "sha256:" and the hex SHA-256 of its lines as git stores them, line endings (LF or CRLF) left
out and each line followed by one LF: code moved elsewhere, or turned from LF to CRLF, keeps its hash.

Records are built only from what git and our notes hold: nothing is written, the user's index included.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Sequence

from ..base.errors import NO_CHECKPOINTS, RewindError
from ..base.gitcmd import GitError
from ..store.authorship import AGENT, PERSON, UNKNOWN, Author, Authorship, Range, read, spans

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Json
    from ..base.repo import Repo

SPEC_VERSION = "0.1.0"  # Agent Trace's version, as its text and examples write it
TOOL_NAME = "git-rewind"
METADATA_KEY = "git-rewind"
# The namespace of the records' name-based (version 5) ids: the same record always gets the same id.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:git-rewind:agent-trace-record")
_CHUNK = 1000  # paths per `git ls-tree` (a note may name more files than a command line holds)
CONTRIBUTOR = {AGENT: "ai", PERSON: "human", UNKNOWN: "unknown"}
MODEL_ID_MAX = 250  # the schema's limit on model_id
_BINARY_PROBE = 8000  # bytes git looks at for a NUL to call a file binary (as blame does)
_REGULAR = ("100644", "100755")
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # a path the person names is a path, not a glob


class Traced:
    """One answer of `trace`: a commit's record (COMMIT set), the work tree's (COMMIT None), or, with RECORD
    None, a commit that has none and WHY (one line for stderr)."""

    __slots__ = ("commit", "record", "why")

    def __init__(self, commit: str | None, record: dict[str, Json] | None, why: str | None = None) -> None:
        self.commit = commit
        self.record = record
        self.why = why


def trace(repo: Repo, revs: Sequence[str], paths: Sequence[str], uncommitted: bool, now: float) -> Iterator[Traced]:
    """The records of the commits REVS name (as `git show` and `git log` take them: a range is walked, a
    commit alone is not), then the work tree's when UNCOMMITTED or no REVS; only files at or under PATHS
    (work-tree-relative, '/'-separated; none: every file). Every REV is resolved before anything is yielded,
    so a bad one fails the command before any output."""
    commits = resolve(repo, revs) if revs else []
    if uncommitted or not revs:
        _require_checkpoints(repo)
    for commit, stamp in commits:
        yield commit_record(repo, commit, stamp, paths)
    if uncommitted or not revs:
        yield Traced(None, worktree_record(repo, paths, now))


def resolve(repo: Repo, revs: Sequence[str]) -> list[tuple[str, int]]:
    """(commit, committer time) of each commit REVS name, in git's order: `git rev-list --no-walk=unsorted`, so
    `A..B` (and `^A B`, `A...B`) walks as `git log` does and a single commit is itself, as `git show` takes it.
    A merge commit is one commit like any other (its record is its own note's)."""
    try:
        out = repo.git(["rev-list", "--no-walk=unsorted", "--format=%ct", "--end-of-options", *revs, "--"])
    except GitError as exc:
        raise RewindError(_bad_revision(exc, revs)) from None
    found: list[tuple[str, int]] = []
    rows = out.decode().splitlines()
    for header, stamp in zip(rows[::2], rows[1::2], strict=True):
        found.append((header.split()[1], int(stamp)))
    return found


def _bad_revision(exc: GitError, revs: Sequence[str]) -> str:
    """git's complaint about REVS as one line naming the revision."""
    import re

    found = re.search(r"bad revision '(.*)'|ambiguous argument '(.*)'", exc.stderr)
    if found:
        return f"unknown revision: {found.group(1) or found.group(2)}"
    last = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else str(exc)
    return f"cannot read revisions {' '.join(revs)}: {last.removeprefix('fatal: ')}"


def commit_record(repo: Repo, commit: str, stamp: int, paths: Sequence[str]) -> Traced:
    """COMMIT's record from its authorship note; a Traced without a record when it has no note we can read."""
    short = commit[:12]
    try:
        note = read(repo, commit)
    except ValueError as exc:
        return Traced(commit, None, f"{short}: its authorship note is not one git-rewind reads ({exc}): no record")
    if note is None:
        return Traced(commit, None, f"{short} has no authorship note (committed without git-rewind's commit hook, "
                                    "or before it was installed): no record")
    files = {path: spans for path, spans in note.files.items() if _under(path, paths)}
    if paths and not files:
        return Traced(commit, None)  # nothing of PATHS in it: no record, and nothing to say
    lines = _committed_lines(repo, commit, sorted(files))
    timestamp = _utc(stamp)
    return Traced(commit, _record(Authorship(files), lines, timestamp, {"commit": commit}, revision=commit))


def worktree_record(repo: Repo, paths: Sequence[str], now: float) -> dict[str, Json]:
    """The work tree's record: for each text file that differs from HEAD, its lines HEAD lacks and who wrote
    them, from blame over the checkpoints. No `vcs`: no commit holds these lines yet (metadata names HEAD)."""
    head = repo.head()[0]
    authorship, lines = worktree_authorship(repo, head, paths, now)
    return _record(authorship, lines, _utc(int(now)), {"work_tree": True, "head": head}, revision=None)


def worktree_authorship(repo: Repo, head: str | None, paths: Sequence[str],
                        now: float) -> tuple[Authorship, dict[str, list[bytes]]]:
    """Who wrote each line the work tree's files have and HEAD's lack (an Authorship, the shape a commit's note
    has), and those files' lines as git would store them (for the hashes). Blame says who: the agent's lines
    (its session, checkpoint and tool), the person's (changed outside any agent turn), and unknown (older than
    the file's first checkpoint, or from checkpoints that recorded no origins)."""
    from . import blame
    from .commitnote import author_of_line

    files: dict[str, list[Range]] = {}
    texts: dict[str, list[bytes]] = {}
    for path, added in _added_lines(repo, head, paths).items():
        if not added:
            continue
        try:
            by_line = {line.line: author_of_line(line) for line in blame.blame(repo, path, now).lines}
        except RewindError:  # no origins recorded for it, or it changed as it was read: nobody can vouch for it
            by_line = {}
        unknown = Author(UNKNOWN)
        files[path] = spans([(number, by_line.get(number, unknown)) for number in sorted(added)])
        size = max(added)
        texts[path] = [added.get(number, b"") for number in range(1, size + 1)]
    return Authorship(files), texts


def _record(authorship: Authorship, lines: dict[str, list[bytes]], timestamp: str, where: dict[str, Json],
            revision: str | None) -> dict[str, Json]:
    """The Agent Trace record of AUTHORSHIP, with LINES (each file's lines, line endings left out) for the hashes;
    its id is a version 5 UUID of everything else in it, so the same record always has the same id."""
    authors: list[Author] = []
    index: dict[Author, int] = {}
    files: list[Json] = []
    ours: dict[str, Json] = {}
    for path in sorted(authorship.files):
        conversations: dict[tuple[str | None, ...], dict[str, Json]] = {}
        rows: list[Json] = []
        text = lines.get(path)
        for span in authorship.files[path]:
            author = _shareable(span.author)
            if author not in index:
                index[author] = len(authors)
                authors.append(author)
            rows.append([span.first, span.last, index[author]])
            key = _conversation_key(author)
            if key not in conversations:
                conversations[key] = {"contributor": _contributor(author), "ranges": []}
            found: dict[str, Json] = {"start_line": span.first, "end_line": span.last}
            if text is not None and span.last <= len(text):
                found["content_hash"] = content_hash(text[span.first - 1:span.last])
            conversations[key]["ranges"].append(found)
        files.append({"path": path, "conversations": list(conversations.values())})
        ours[path] = rows
    metadata = {**where, "authors": [a.to_json() for a in authors], "files": ours}
    record: dict[str, Json] = {"version": SPEC_VERSION, "id": "", "timestamp": timestamp}
    if revision is not None:
        record["vcs"] = {"type": "git", "revision": revision}
    record["tool"] = {"name": TOOL_NAME, "version": _version()}
    record["files"] = files
    record["metadata"] = {METADATA_KEY: metadata}
    body = json.dumps({k: v for k, v in record.items() if k != "id"}, sort_keys=True, separators=(",", ":"))
    record["id"] = str(uuid.uuid5(NAMESPACE, body))
    return record


def _conversation_key(author: Author) -> tuple[str | None, ...]:
    """One conversation per agent session (and model), one for the person, one for unknown lines."""
    if author.origin == AGENT:
        return (AGENT, author.agent, author.session, author.model)
    return (author.origin,)


def _contributor(author: Author) -> dict[str, Json]:
    found: dict[str, Json] = {"type": CONTRIBUTOR.get(author.origin, "unknown")}
    if author.origin == AGENT and author.model and len(author.model) <= MODEL_ID_MAX:
        found["model_id"] = author.model  # as the agent reported it
    return found


def _shareable(author: Author) -> Author:
    """AUTHOR without its prompt: a record is made to leave the machine, and a prompt may hold anything."""
    return Author(author.origin, author.agent, author.session, author.seq, author.checkpoint, None, author.tool,
                  author.model)


def content_hash(lines: Sequence[bytes]) -> str:
    """The hash of a range: its lines (without their line endings), each followed by one LF, SHA-256."""
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line)
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def split_lines(content: bytes) -> list[bytes]:
    """CONTENT's lines as git counts them, each without its LF or CRLF."""
    rows = content.split(b"\n")
    if rows and rows[-1] == b"":
        rows.pop()
    return [row[:-1] if row.endswith(b"\r") else row for row in rows]


def _committed_lines(repo: Repo, commit: str, paths: list[str]) -> dict[str, list[bytes]]:
    """The lines of each of PATHS as COMMIT holds it (a path it lacks, or not a file, is left out)."""
    from ..base.gitcmd import cat_file

    out = b"".join(repo.git(["ls-tree", "-z", "--end-of-options", commit, "--", *paths[at:at + _CHUNK]],
                            env=_LITERAL) for at in range(0, len(paths), _CHUNK))
    blobs: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        info, raw = entry.split(b"\t", 1)
        mode, kind, oid = info.decode().split()
        if kind == "blob" and mode in _REGULAR:
            blobs[os.fsdecode(raw)] = oid
    names = sorted(blobs)
    found: dict[str, list[bytes]] = {}
    for name, obj in zip(names, cat_file([blobs[n] for n in names], repo.root), strict=True):
        if obj is not None:
            found[name] = split_lines(obj[1])
    return found


def _added_lines(repo: Repo, head: str | None, paths: Sequence[str]) -> dict[str, dict[int, bytes]]:
    """For each text file of the work tree that differs from HEAD (untracked ones too, less the ignored), the
    lines HEAD lacks: line number -> its bytes as git would store them (line ending left out). git's
    plumbing compares (`diff-index`, which reads the user's index for stat data and never writes it), in one
    patch for every path, read by the parser the commits' notes use (commitnote.parse_patch)."""
    from ..store.snapshot import empty_tree
    from .commitnote import parse_patch

    base = head or empty_tree(repo)
    spec = ["--", *paths] if paths else ["--"]
    patch = repo.git(["-c", "core.quotePath=false", "diff-index", "-p", "-U0", "--no-renames", "--no-color",
                      "--no-ext-diff", "--no-textconv", base, *spec], env=_LITERAL)
    found = {path: added.text for path, added in parse_patch(patch, text=True).items() if _under(path, paths)}
    untracked = repo.git(["ls-files", "-z", "--others", "--exclude-standard", *spec], env=_LITERAL)
    for name in untracked.split(b"\0"):
        if name:
            path = os.fsdecode(name)
            content = _regular_text(os.path.join(repo.root, path))
            if content is not None:
                found[path] = dict(enumerate(split_lines(content), 1))
    return found


def _regular_text(full: str) -> bytes | None:
    """A regular file's bytes (None: a link, something else, gone, or binary as git would call it)."""
    import stat

    try:
        info = os.lstat(full)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(full, "rb") as fh:
            content = fh.read()
    except OSError:
        return None
    return None if b"\0" in content[:_BINARY_PROBE] else content


def _under(path: str, paths: Sequence[str]) -> bool:
    """PATH is one of PATHS or below one of them (no PATHS: every path)."""
    if not paths:
        return True
    return any(p in ("", path) or path.startswith(p.rstrip("/") + "/") for p in paths)


def _require_checkpoints(repo: Repo) -> None:
    from ..store import checkpoints

    if not checkpoints.of_worktree(checkpoints.load_all(repo), repo.worktree):
        raise RewindError("no checkpoints yet in this work tree: nothing to trace its lines against",
                          remedy=NO_CHECKPOINTS)


def _utc(stamp: int) -> str:
    import time

    from ..base.clock import STAMP

    return time.strftime(STAMP, time.gmtime(stamp))


def _version() -> str:
    from .. import __version__

    return __version__
