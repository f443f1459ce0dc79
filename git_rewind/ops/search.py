"""Finding checkpoints: by text, path, tag, agent, session and time.

One selection for every reader (`list`, the MCP server's `checkpoint_list`, the web page), so a filter
means the same everywhere. git decides whatever git already has rules for: dates are read by git's own
date parser (`gitcmd.dates`: "yesterday", "2 hours ago", "last friday", ISO 8601), and paths
by git's pathspecs (`git diff-tree --stdin -- PATHSPEC` over each checkpoint and the one before it: a
checkpoint matches when it changed a matching path since).
"""

from __future__ import annotations

from ..base.errors import RewindError
from ..base.repo import Repo
from ..store.checkpoints import Checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class Query:
    """What to look for. Every field narrows (all must hold); an empty field does not.

    TEXT: any of these (case-insensitive) in the message, prompt or summary, as `git log --grep` ORs its
    patterns. PATHS: git pathspecs, read from CWD. TAGS: every one of these. AGENT: the agent that took
    it (`claude-code`, `manual`...). SESSION: a session or the start of one. SINCE / UNTIL: dates in git's
    syntax, inclusive. SAFETY: the safety checkpoints every undo and redo takes first are left out unless
    this is set (they are a third of a busy history, and undo never lands on one by default either).
    """

    __slots__ = ("text", "paths", "tags", "agent", "session", "since", "until", "cwd", "safety")

    def __init__(self, text: Sequence[str] = (), paths: Sequence[str] = (), tags: Sequence[str] = (),
                 agent: str | None = None, session: str | None = None, since: str | None = None,
                 until: str | None = None, cwd: str | None = None, safety: bool = False) -> None:
        self.text = [t for t in text if t]
        self.paths = [p for p in paths if p]
        self.tags = [t for t in tags if t]
        self.agent = agent or None
        self.session = session or None
        self.since = since or None
        self.until = until or None
        self.cwd = cwd
        self.safety = safety

    def __bool__(self) -> bool:
        return bool(self.text or self.paths or self.tags or self.agent or self.session or self.since or self.until)

    def describe(self) -> str:
        """The filters as a person typed them, for "no checkpoints matching ..." (hiding safety checkpoints is
        not one: `select_counted` counts what that left out)."""
        parts = [f"--grep {t!r}" for t in self.text] + [f"--path {p}" for p in self.paths]
        parts += [f"--tag {t}" for t in self.tags]
        for name, value in (("agent", self.agent), ("session", self.session), ("since", self.since),
                            ("until", self.until)):
            if value:
                parts.append(f"--{name} {value!r}" if " " in value else f"--{name} {value}")
        return " ".join(parts)


def select(repo: Repo, items: list[Checkpoint], query: Query) -> list[Checkpoint]:
    """The checkpoints of ITEMS (kept in their order) that QUERY matches."""
    return select_counted(repo, items, query)[0]


def select_counted(repo: Repo, items: list[Checkpoint], query: Query) -> tuple[list[Checkpoint], int]:
    """`select`, and how many safety checkpoints it left out that match every other filter (for "N hidden")."""
    matched = _matching(repo, items, query)
    if query.safety:
        return matched, 0
    shown = [c for c in matched if not c.safety]
    return shown, len(matched) - len(shown)


def _matching(repo: Repo, items: list[Checkpoint], query: Query) -> list[Checkpoint]:
    """The checkpoints of ITEMS that QUERY's filters match, safety checkpoints or not."""
    if not query:
        return items
    from ..store.checkpoints import session_named

    chosen = items
    if query.session:
        session = session_named(items, query.session)
        chosen = [c for c in chosen if c.session == session]
    if query.agent:
        agent = query.agent.lower()
        chosen = [c for c in chosen if (c.note.agent or "manual").lower() == agent]
    if query.tags:
        wanted = set(query.tags)
        chosen = [c for c in chosen if wanted <= set(c.note.tags)]
    if query.since or query.until:
        from ..base.gitcmd import dates

        since, until = dates(repo.root, [query.since, query.until])
        chosen = [c for c in chosen if (since is None or c.time >= since) and (until is None or c.time <= until)]
    if query.text:
        needles = [t.casefold() for t in query.text]
        chosen = [c for c in chosen if any(n in haystack(c) for n in needles)]
    if query.paths and chosen:
        touched = _touching(repo, items, chosen, query.paths, query.cwd)
        chosen = [c for c in chosen if c.commit in touched]
    return chosen


def haystack(item: Checkpoint) -> str:
    """What text search looks in: the message, the prompt and the summary, case-folded."""
    from ..base.summary import render

    note = item.note
    summary = "\n".join(render(note.summary)) if note.summary else ""
    return "\n".join((note.message, note.prompt or "", summary)).casefold()


def _touching(repo: Repo, every: list[Checkpoint], chosen: list[Checkpoint], pathspecs: list[str],
              cwd: str | None) -> set[str]:
    """The commits of CHOSEN that changed a path PATHSPECS match since what they are compared with
    (`checkpoints.bases`: the work tree's previous checkpoint, whichever session took it, as the note's
    `paths` and `origins` count; for a work tree's first, HEAD then). One `git diff-tree --stdin` for all
    (git reads the pathspecs, from CWD); a first taken with no HEAD compares with the empty tree alone."""
    from ..base import gitcmd
    from ..store.checkpoints import bases

    before = bases(repo, every, chosen)
    where = repo.pathspec_base(cwd)
    pairs = [f"{c.commit} {before[c.commit]}" for c in chosen if _is_commit(before[c.commit], repo)]
    lone = [c.commit for c in chosen if not _is_commit(before[c.commit], repo)]
    try:
        out = gitcmd.run(["diff-tree", "-r", "--name-only", "--no-renames", "--stdin", "--", *pathspecs],
                         cwd=where, input=("\n".join(pairs) + "\n").encode()) if pairs else b""
        touched = {line for line in out.decode(errors="replace").splitlines() if line}
        for commit in lone:  # against the empty tree: every file it holds
            if gitcmd.run(["diff-tree", "-r", "--name-only", "--no-renames", before[commit], commit, "--",
                           *pathspecs], cwd=where).strip():
                touched.add(commit)
    except gitcmd.GitError as exc:
        last = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else str(exc)
        raise RewindError(f"--path: {last.removeprefix('fatal: ')}") from None
    ours = {c.commit for c in chosen}
    return {commit for commit in touched if commit in ours}


def _is_commit(base: str, repo: Repo) -> bool:
    """BASE is a commit (a checkpoint or HEAD), not the empty tree `bases` gives for a first with nothing before."""
    from ..store.snapshot import empty_tree

    return base != empty_tree(repo)
