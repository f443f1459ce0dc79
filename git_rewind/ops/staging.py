"""What the person's index stages that a restore contradicts: read, never written.

A restore writes files and never the index. When the index stages something for a path the restore
changes (the deletion of a file it brings back, the addition of a file it removes, other content than
it leaves), the next commit records the index's version, and nothing would say so. The preview and the
result name those paths and the one command that unstages exactly them; the person runs it.

"Stages" is git's own answer: `diff-index --cached` of HEAD (the empty tree before the first commit)
against the index, run with `--no-optional-locks`. A path contradicts when the index holds for it
neither HEAD's version nor what the working tree holds after the restore.
"""

from __future__ import annotations

import os

from ..base.repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .restore import Change

SHOWN = 10  # paths listed in the lines; the others are counted (the command covers them all)
GITLINK = 0o160000  # a submodule's entry: what its own repository holds is not ours to judge
_GLOB = frozenset("*?[\\")  # what git reads as a pattern in a pathspec


class Staged:
    """One path the index stages: HEAD's entry and the index's, each (mode, oid) or None where absent."""

    __slots__ = ("path", "head", "index")

    def __init__(self, path: str, head: tuple[int, str] | None, index: tuple[int, str] | None) -> None:
        self.path = path
        self.head = head
        self.index = index

    @property
    def change(self) -> str:
        """What the index stages for it: a deletion, an addition or a change."""
        return "deletion" if self.index is None else "addition" if self.head is None else "change"


class Contradiction:
    """The staged paths a restore contradicts (STAGED) and the command that unstages exactly them."""

    __slots__ = ("staged", "command")

    def __init__(self, staged: list[Staged], command: str) -> None:
        self.staged = staged
        self.command = command

    def to_json(self) -> dict[str, Any]:
        return {"paths": [{"path": s.path, "staged": s.change} for s in self.staged], "command": self.command}


class Asked:
    """`staged`'s question, put to git now and answered later (a restore writes neither the index nor HEAD,
    so git reads them beside its work, on the other core): `close` it when the answer is not wanted.

    In a long-lived process (the daemon, checkpoints.LONG_LIVED) git's answer is kept for the HEAD and the
    index file it was given (index_identity): the next rewind whose HEAD and index are the same ones starts no git."""

    def __init__(self, repo: Repo) -> None:
        from ..base.gitcmd import Background
        from ..store import checkpoints

        head = repo.head()[0]
        self.born = head is not None
        self.identity = index_identity(repo, head) if checkpoints.LONG_LIVED else None  # before git reads the index
        self.known = _ANSWERS.get(self.identity) if self.identity is not None else None
        self.question = Background(_question(repo, head), cwd=repo.root) if self.known is None else None

    def answer(self) -> bytes:
        """git's answer (GitError when it failed), kept for the same HEAD and index when this process lives on."""
        if self.known is not None:
            return self.known
        assert self.question is not None
        out = self.question.result()
        if self.identity is not None:
            _ANSWERS.clear()  # one HEAD and index at a time: the one the next rewind most likely finds
            _ANSWERS[self.identity] = out
        return out

    def close(self) -> None:
        if self.question is not None:
            self.question.close()


# (HEAD, the index file's path and stat identity) -> `diff-index --cached`'s output, in a long-lived process.
_ANSWERS: dict[tuple[str | None, str, int, int, int, int, int], bytes] = {}
RACY_SECONDS = 2.0  # an index written more recently may be written again within its timestamp's granularity


def index_identity(repo: Repo, head: str | None) -> tuple[str | None, str, int, int, int, int, int] | None:
    """What `diff-index --cached HEAD` reads, told apart without reading it: HEAD's commit and the index
    file (git writes a new one and renames it into place, so a changed index is another inode or other
    times). None (ask git) when the index may still be written again within one timestamp (as git's own
    racy check), or cannot be looked at."""
    import time

    from ..store.conversion import user_index

    path = user_index(repo)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time() - max(st.st_mtime, st.st_ctime) < RACY_SECONDS:
        return None
    return (head, path, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _question(repo: Repo, head: str | None) -> list[str]:
    from ..store.snapshot import empty_tree

    return ["--no-optional-locks", "diff-index", "--cached", "-z", "--no-renames", head or empty_tree(repo)]


def staged(repo: Repo, asked: Asked | None = None) -> tuple[dict[str, Staged], set[str], bool]:
    """What the index stages against HEAD: (path → Staged, the unmerged paths, whether HEAD has a commit).
    The index is only read. ASKED: the question put to git earlier (its answer read here)."""
    from ..base.gitcmd import GitError
    from ..base.gitobjects import raw_diff

    head = None if asked is not None else repo.head()[0]
    born = asked.born if asked is not None else head is not None
    try:
        out = asked.answer() if asked is not None else repo.git(_question(repo, head))
    except GitError:  # an index git cannot read: git says so itself at the next commit; the rewind goes on
        return {}, set(), born
    found: dict[str, Staged] = {}
    unmerged: set[str] = set()
    for entry in raw_diff(out):
        if entry.status == "U":
            unmerged.add(entry.path)
            continue
        found[entry.path] = Staged(entry.path, (entry.old_mode, entry.old_oid) if entry.old_mode else None,
                                   (entry.new_mode, entry.new_oid) if entry.new_mode else None)
    return found, unmerged, born


def in_plan(repo: Repo, changes: list[Change], cwd: str) -> Contradiction | None:
    """Before a restore: the staged paths whose index entry is not what CHANGES (restore.Plan's writes and
    removals) leave in the working tree (None: nothing staged is contradicted)."""
    every, unmerged, born = staged(repo)
    found = []
    for change in changes:
        item = every.get(change.path)
        after = None if change.mode is None or change.oid is None else (change.mode, change.oid)
        if item is not None and item.index != after:
            found.append(item)
    return _contradiction(repo, found, every, unmerged, born, cwd)


def on_disk(repo: Repo, paths: list[str], cwd: str, asked: Asked | None = None) -> Contradiction | None:
    """After a restore: of PATHS (what it wrote or removed), the staged ones whose index entry is not what the
    working tree holds, as `git add` would store the file (conversion.hash_as_added: the user's filters and
    attributes, in an index of our own). Never `git diff`: even with --no-optional-locks it refreshes the
    person's index and writes it back when stat data changed, as a restore's writes make it. ASKED: git
    asked already (Asked)."""
    every, unmerged, born = staged(repo, asked)
    candidates = [every[path] for path in sorted(set(paths)) if path in every]
    found = [item for item in candidates if item.index is None and _on_disk(repo, item.path)]
    indexed = [item for item in candidates if item.index is not None and item.index[0] != GITLINK]
    if indexed:
        found += _differing(repo, indexed)
    found.sort(key=lambda item: item.path)
    return _contradiction(repo, found, every, unmerged, born, cwd)


def _differing(repo: Repo, indexed: list[Staged]) -> list[Staged]:
    """Of INDEXED (each with an index entry), those whose file is gone or holds other than the entry."""
    from ..base import layout
    from ..base.gitcmd import GitError
    from ..store.conversion import hash_as_added

    present = [item.path for item in indexed if _on_disk(repo, item.path)]
    scratch = os.path.join(repo.rewind_dir, f"{layout.SCRATCH_INDEX}{os.getpid()}-staged")
    try:
        now = hash_as_added(repo, present, scratch=scratch) if present else {}
    except GitError:  # as in staged(): the rewind is done; git will speak for the index itself
        return []
    return [item for item in indexed if now.get(item.path) != item.index]


def _on_disk(repo: Repo, path: str) -> bool:
    full = os.path.join(repo.root, path)
    return os.path.islink(full) or os.path.isfile(full)


def _contradiction(repo: Repo, found: list[Staged], every: dict[str, Staged], unmerged: set[str], born: bool,
                   cwd: str) -> Contradiction | None:
    if not found:
        return None
    specs = shortest([item.path for item in found], set(every) | unmerged)
    return Contradiction(found, unstage_command([_relative(repo, spec, cwd) for spec in specs], born))


def shortest(paths: list[str], staged: set[str]) -> list[str]:
    """Pathspecs that match exactly PATHS among every STAGED path: the topmost directory standing for two
    or more of them where nothing else below it is staged, else the path itself."""
    wanted = set(paths)
    blocked: set[str] = set()  # a staged path not wanted, and every directory above it
    for other in staged - wanted:
        parts = other.split("/")
        blocked.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    under: dict[str, int] = {}
    for path in wanted:
        parts = path.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            under[folder] = under.get(folder, 0) + 1
    specs: list[str] = []
    for path in sorted(wanted):
        parts = path.split("/")
        folders = ("/".join(parts[:i]) for i in range(1, len(parts)))
        spec = next((f for f in folders if f not in blocked and under[f] > 1), path)
        if spec not in specs:
            specs.append(spec)
    return specs


def _relative(repo: Repo, path: str, cwd: str) -> str:
    """PATH (from the top of the work tree) as typed in CWD."""
    return os.path.relpath(os.path.join(os.path.realpath(repo.root), path), os.path.realpath(cwd))


def unstage_command(specs: list[str], born: bool) -> str:
    """The shell command that sets the index entries SPECS match back to HEAD's (before the first commit:
    takes them out of the index); literal pathspecs when a name would read as a pattern."""
    import shlex

    literal = any(_GLOB & set(spec) or spec.startswith(":") for spec in specs)
    words = ["git"] + (["--literal-pathspecs"] if literal else []) + \
        (["restore", "--staged"] if born else ["reset", "-q"])
    if any(spec.startswith("-") for spec in specs) or not born:
        words.append("--")
    return " ".join(words + [shlex.quote(spec) for spec in specs])


def staged_lines(contradiction: Contradiction, what: str, done: bool) -> list[tuple[str, bool]]:
    """The paths the index stages otherwise than WHAT (undo, revert, redo) leaves them, and the command that
    unstages them, as (line, for stderr) pairs. DONE: after it (the result), else before (the preview)."""
    items = contradiction.staged
    many = f"{len(items)} paths" if len(items) != 1 else "a path"
    verb = "changed" if done else "changes"
    lines = [(f"the index {'still ' if done else ''}stages something else for {many} this {what} {verb} "
              "(the next commit would record the index's version):", False)]
    lines += [(f"  staged {item.change:<8}  {item.path}", False) for item in items[:SHOWN]]
    if len(items) > SHOWN:
        lines.append((f"  … and {len(items) - SHOWN} more", False))
    when = "" if done else f"after the {what}, "
    lines.append((f"{when}to unstage {'it' if len(items) == 1 else 'them'} (the files stay as they are): "
                  f"{contradiction.command}", False))
    return lines
