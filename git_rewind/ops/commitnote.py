"""Who wrote the lines a commit adds: the authorship note the git hooks write, and carry through rewrites.

At `post-commit` the lines the commit adds or changes (against its first parent, or the empty tree for
a root commit; text files only) are asked of blame's engine (ops/blame.py) with the commit's own blobs
as the files' content now: what `git rewind blame` says of the work tree just before the commit, line
for line. Blaming the committed blob rather than the work-tree file is what makes partial staging
(`git add -p`) right: a line staged and then changed again in the work tree is still found in the
checkpoints that held it, and a line only the index ever held is "since the newest checkpoint" (the
running turn's, else the person's), as blame says of such a line.

Rewrites do not blame again where a note already knows: `post-rewrite` (amend, rebase) and a
cherry-pick's `post-commit` (CHERRY_PICK_HEAD) map each old commit's ranges onto the new commit through
git's diff of the two (the later old commit first, so a squash takes each line from the commit that
last wrote it); lines no old note covers are blamed afresh for an amend or a cherry-pick (what the
person added or resolved), and unknown after a rebase. The note written is always one JSON object, so a
`notes.rewriteRef` the person configured (whose default mode concatenates notes) is overwritten.
"""

from __future__ import annotations

import os

from ..store import authorship
from ..store.authorship import AGENT, PERSON, UNKNOWN, Author, Authorship

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.repo import Repo
    from .blame import Line

REGULAR = ("100644", "100755")


class Added:
    """The lines of one file a commit (or the index, or the work tree) adds: its new blob and the line numbers
    there; TEXT, when asked for (parse_patch's `text`), each added line's bytes as git would store them, its
    line ending left out."""

    __slots__ = ("blob", "lines", "text")

    def __init__(self, blob: str) -> None:
        self.blob = blob
        self.lines: list[int] = []
        self.text: dict[int, bytes] = {}


def added_lines(repo: Repo, commit: str | None, parents: list[str] | None = None) -> dict[str, Added]:
    """Per text file, the lines COMMIT adds or changes against its first parent (the empty tree for a root
    commit; PARENTS: COMMIT's, when known); COMMIT None: the lines the index stages against HEAD (what the next
    commit adds)."""
    args = ["-c", "core.quotePath=false"]
    diff = ["-p", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--full-index", "--no-color"]
    if commit is None:  # the index against HEAD (the empty tree before the first commit)
        from ..store.snapshot import empty_tree

        args += ["diff", "--cached", *diff, repo.head()[0] or empty_tree(repo)]
    else:
        if parents is None:
            parents = repo.git(["rev-parse", commit + "^@"]).decode().split()
        args += ["diff-tree", "-r", *diff] + ([parents[0], commit] if parents else ["--root", commit])
    return parse_patch(repo.git(args))


class FilePatch:
    """One file of a `-U0` patch: its path (the new side's, the old one's for a deletion), new mode and blob
    (None: deleted, or not said), hunks (old start, old count, new start, new count) and, when asked for, the
    added lines' bytes by new line number, line ending left out."""

    __slots__ = ("path", "mode", "blob", "hunks", "text")

    def __init__(self, path: str, mode: str | None, blob: str | None) -> None:
        self.path, self.mode, self.blob = path, mode, blob
        self.hunks: list[tuple[int, int, int, int]] = []
        self.text: dict[int, bytes] = {}


def read_patch(out: bytes, text: bool = False) -> dict[str, FilePatch]:
    """The files of a `-U0` patch git wrote (`diff-tree`, `diff-index` or `diff`, `-p --no-renames`, with
    core.quotePath=false): the one reader of patches here. TEXT: keep the added lines' bytes."""
    found: dict[str, FilePatch] = {}
    mode = blob = old = None
    current: FilePatch | None = None
    header = False
    number = 0
    for row in out.split(b"\n"):
        if row.startswith(b"diff --git "):
            mode = blob = old = None
            current, header = None, True
        elif header and row.startswith((b"new file mode ", b"new mode ")):
            mode = row.rsplit(b" ", 1)[1].decode()
        elif header and row.startswith(b"deleted file mode "):
            mode = None
        elif header and row.startswith(b"index "):
            parts = row.split()
            blob = parts[1].split(b"..")[1].decode()
            if len(parts) > 2:
                mode = parts[2].decode()
        elif header and row.startswith(b"--- "):
            old = _patch_name(row[4:])
        elif header and row.startswith(b"+++ "):
            new = _patch_name(row[4:])
            path = new or old
            if path is not None:
                current = found[path] = FilePatch(path, mode if new else None, blob if new else None)
        elif row.startswith(b"@@ ") and current is not None:
            header = False
            _, before, after = row.split(b" ")[:3]  # -start[,count] +start[,count]
            a, _, b = before[1:].partition(b",")
            c, _, d = after[1:].partition(b",")
            current.hunks.append((int(a), int(b) if b else 1, int(c), int(d) if d else 1))
            number = int(c)
        elif text and current is not None and not header and row.startswith(b"+"):  # -U0: only - and + rows
            line = row[1:]
            current.text[number] = line[:-1] if line.endswith(b"\r") else line
            number += 1
    return found


def _patch_name(raw: bytes) -> str | None:
    """The path a `--- a/NAME` or `+++ b/NAME` row names (None: /dev/null). git quotes an unusual name whole,
    and ends one holding a space with a tab (diff.c), so that patch can read it."""
    from .blame import _unquote

    if raw.endswith(b"\t") and not raw.startswith(b'"'):
        raw = raw[:-1]
    return None if raw == b"/dev/null" else _unquote(raw)[2:]


def parse_patch(out: bytes, text: bool = False) -> dict[str, Added]:
    """The new side of a `-U0` patch (`--full-index` for the blobs' full ids): each regular text file's new
    blob and added line numbers; TEXT: the added lines' bytes too (Added.text)."""
    found: dict[str, Added] = {}
    for path, patch in read_patch(out, text).items():
        if patch.mode not in REGULAR or patch.blob is None:
            continue
        added = Added(patch.blob)
        for _a, _b, first, many in patch.hunks:
            added.lines.extend(range(first, first + many))
        added.text = patch.text
        if added.lines:
            found[path] = added
    return found


def author_of_line(line: Line) -> Author:
    """What blame said of a line, as an authorship note's author."""
    from ..base.note import AGENT as BLAME_AGENT
    from ..base.note import OUTSIDE

    if line.origin == BLAME_AGENT:
        return Author(AGENT, line.agent, line.session, line.seq, line.checkpoint, line.prompt, line.tool, line.model)
    if line.origin in (OUTSIDE, PERSON):
        return Author(PERSON)
    return Author(UNKNOWN)


def fresh(repo: Repo, files: dict[str, Added], now: float) -> dict[str, dict[int, Author]]:
    """The authors of FILES' added lines, from blame's engine over the committed blobs."""
    from .blame import blame_blobs

    if not files:
        return {}
    blamed = blame_blobs(repo, {path: added.blob for path, added in files.items()}, now)
    found: dict[str, dict[int, Author]] = {}
    for path, added in files.items():
        lines = blamed[path]
        found[path] = {n: author_of_line(lines[n - 1]) for n in added.lines if n <= len(lines)}
    return found


def carried(repo: Repo, olds: list[str], new: str, files: dict[str, Added],
            notes: dict[str, Authorship]) -> dict[str, dict[int, Author]]:
    """The authors OLDS' notes give FILES' added lines of NEW, each old line followed to NEW through git's diff
    of the two commits (the later old commit first: in a squash its lines are the newer)."""
    found: dict[str, dict[int, Author]] = {}
    for old in reversed(olds):
        note = notes.get(old)
        if note is None:
            continue
        paths = [p for p in note.files if p in files]
        if not paths:
            continue
        hunks = _hunks(repo, old, new, paths)
        for path in paths:
            wanted = set(files[path].lines)
            into = found.setdefault(path, {})
            for span in note.files[path]:
                for number in range(span.first, span.last + 1):
                    moved = _follow(hunks.get(path, []), number)
                    if moved is not None and moved in wanted and moved not in into:
                        into[moved] = span.author
    return found


def _hunks(repo: Repo, old: str, new: str, paths: list[str]) -> dict[str, list[tuple[int, int, int, int]]]:
    """Per path, the hunks (old start, old count, new start, new count) of git's diff from OLD to NEW."""
    out = repo.git(["-c", "core.quotePath=false", "diff-tree", "-r", "-p", "-U0", "--no-renames", "--no-ext-diff",
                    "--no-textconv", "--no-color", old, new, "--", *paths], env={"GIT_LITERAL_PATHSPECS": "1"})
    return {path: patch.hunks for path, patch in read_patch(out).items()}


def _follow(hunks: list[tuple[int, int, int, int]], line: int) -> int | None:
    """Where old LINE is in the new version (None: the diff changed or removed it)."""
    offset = 0
    for start, count, new_start, new_count in hunks:
        if (line < start) if count else (line <= start):
            break
        if count and line < start + count:
            return None
        # the first line after the hunk, old and new (a count of 0 names the line before the hunk)
        offset = (new_start + new_count if new_count else new_start + 1) - (start + count if count else start + 1)
    return line + offset


def combine(files: dict[str, Added], *sources: dict[str, dict[int, Author]]) -> Authorship:
    """One note for FILES' added lines: each line's author from the first of SOURCES that knows it (else unknown)."""
    result: dict[str, list[authorship.Range]] = {}
    unknown = Author(UNKNOWN)
    for path, added in files.items():
        pairs = []
        for number in added.lines:
            author = next((s[path][number] for s in sources if number in s.get(path, {})), unknown)
            pairs.append((number, author))
        result[path] = authorship.spans(pairs)
    return Authorship(result)


def _missing(files: dict[str, Added], known: dict[str, dict[int, Author]]) -> dict[str, Added]:
    """The part of FILES whose lines KNOWN does not cover."""
    left = {}
    for path, added in files.items():
        lines = [n for n in added.lines if n not in known.get(path, {})]
        if lines:
            rest = Added(added.blob)
            rest.lines = lines
            left[path] = rest
    return left


def rebasing(repo: Repo) -> bool:
    """A rebase is under way: its commits get their notes from post-rewrite when it ends."""
    return any(os.path.isdir(os.path.join(repo.gitdir, name)) for name in ("rebase-merge", "rebase-apply"))


def on_commit(repo: Repo, now: float) -> Authorship | None:
    """post-commit: the note of the commit HEAD now is (a cherry-pick's carried from the picked commit's note),
    written; None when nothing is written (a rebase under way, a merge, nothing added)."""
    from ..base.gitcmd import GitError

    if rebasing(repo):
        return None
    try:
        head, *parents = repo.git(["rev-list", "--parents", "-n1", "HEAD"]).decode().split()
    except GitError:
        return None  # no commit (a hook run by hand)
    if len(parents) > 1:
        return None  # a merge adds no line of its own: git's blame names the commits the lines came from
    files = added_lines(repo, head, parents)
    if not files:
        return None
    picked = _picked(repo)
    known: dict[str, dict[int, Author]] = {}
    if picked is not None and picked != head:
        known = carried(repo, [picked], head, files, authorship.read_many(repo, [picked]))
    note = combine(files, known, fresh(repo, _missing(files, known), now))
    authorship.write(repo, {head: note}, f"authorship of {head[:12]}")
    return note


def _picked(repo: Repo) -> str | None:
    """The commit a cherry-pick is picking (CHERRY_PICK_HEAD, read from its file: no process), or None."""
    try:
        with open(os.path.join(repo.gitdir, "CHERRY_PICK_HEAD"), encoding="ascii") as fh:
            found = fh.read().strip()
    except (OSError, ValueError):
        return None
    return found if found and all(c in "0123456789abcdef" for c in found) else None


def on_rewrite(repo: Repo, kind: str, pairs: list[tuple[str, str]], now: float) -> dict[str, Authorship]:
    """post-rewrite (KIND "amend" or "rebase", PAIRS old → new): each new commit's note from its old commits'
    notes; an amend's lines they do not cover are blamed afresh. An amend inside a rebase is left to the
    rebase's own post-rewrite, which lists every commit it made."""
    if kind == "amend" and rebasing(repo):
        return {}
    olds: dict[str, list[str]] = {}
    for old, new in pairs:
        olds.setdefault(new, []).append(old)
    notes = authorship.read_many(repo, [old for old, _ in pairs])
    written = {}
    for new, before in olds.items():
        if kind != "amend" and not any(old in notes for old in before):
            continue  # commits from before the hooks: nothing known to carry (an amend is blamed afresh)
        files = added_lines(repo, new)
        if not files:
            continue
        known = carried(repo, before, new, files, notes)
        extra = fresh(repo, _missing(files, known), now) if kind == "amend" else {}
        written[new] = combine(files, known, extra)
    authorship.write(repo, written, f"authorship carried through {kind}")
    return written


def staged_agents(repo: Repo, now: float) -> list[tuple[str, str | None]]:
    """(agent, model or None) of every agent that wrote a line the index stages, in the order first found."""
    found: list[tuple[str, str | None]] = []
    for lines in fresh(repo, added_lines(repo, None), now).values():
        for author in lines.values():
            key = (author.agent or "unknown", author.model)
            if author.origin == AGENT and key not in found:
                found.append(key)
    return found
