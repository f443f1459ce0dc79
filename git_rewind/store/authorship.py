"""Who wrote the lines a commit added: one JSON note per commit under refs/notes/rewind-authorship.

The note names the authors once and gives, per file, the ranges of the commit's version of the
file that the commit added or changed, each with the index of its author. Lines the commit did not
touch have no entry: their author is in the note of the commit that last changed them (what
`git blame` of the commit finds). Stored like the checkpoints' notes: plain JSON, readable with
`git notes --ref rewind-authorship show COMMIT`; keys this version does not know are kept.

    {"v": 1,
     "authors": [{"origin": "agent", "agent": "claude-code", "session": "…", "seq": 12,
                  "checkpoint": "<commit>", "prompt": "…", "tool": "Edit", "model": "…"},
                 {"origin": "person"}],
     "files": {"src/app.py": [[1, 3, 0], [7, 7, 1]]}}

A range is [first, last, author]: 1-based, both ends included, ascending and not overlapping.
"""

from __future__ import annotations

from ..base.repo import AUTHORSHIP_REF

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..base.note import Json
    from ..base.repo import Repo

NOTES_REF = AUTHORSHIP_REF  # refs/notes/rewind-authorship
VERSION = 1
AGENT, PERSON, UNKNOWN = "agent", "person", "unknown"
ORIGINS = (AGENT, PERSON, UNKNOWN)


class Author:
    """An agent's step (session, checkpoint, prompt, tool, model when known), the person, or unknown."""

    __slots__ = ("origin", "agent", "session", "seq", "checkpoint", "prompt", "tool", "model")
    KEYS = ("origin", "agent", "session", "seq", "checkpoint", "prompt", "tool", "model")

    def __init__(self, origin: str, agent: str | None = None, session: str | None = None, seq: int | None = None,
                 checkpoint: str | None = None, prompt: str | None = None, tool: str | None = None,
                 model: str | None = None) -> None:
        self.origin = origin
        self.agent = agent
        self.session = session
        self.seq = seq
        self.checkpoint = checkpoint
        self.prompt = prompt
        self.tool = tool
        self.model = model

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, key) for key in self.KEYS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Author) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Author({', '.join(f'{k}={v!r}' for k, v in self.to_json().items())})"

    def to_json(self) -> dict[str, Json]:
        return {key: value for key, value in zip(self.KEYS, self._key(), strict=True) if value is not None}

    @classmethod
    def from_json(cls, data: object) -> Author:
        if not isinstance(data, dict):
            return cls(UNKNOWN)
        origin = data.get("origin")

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        seq = data.get("seq")
        return cls(origin if origin in ORIGINS else UNKNOWN, text("agent"), text("session"),
                   seq if isinstance(seq, int) and not isinstance(seq, bool) else None, text("checkpoint"),
                   text("prompt"), text("tool"), text("model"))


class Range:
    """Lines FIRST..LAST (1-based, both included) of a file as the commit has it, written by AUTHOR."""

    __slots__ = ("first", "last", "author")

    def __init__(self, first: int, last: int, author: Author) -> None:
        self.first = first
        self.last = last
        self.author = author

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Range)
                and (self.first, self.last, self.author) == (other.first, other.last, other.author))

    def __repr__(self) -> str:
        return f"Range({self.first}, {self.last}, {self.author!r})"


class Authorship:
    """One commit's note: FILES maps a path to its ranges, in line order. EXTRA: keys kept as they came."""

    __slots__ = ("files", "extra")

    def __init__(self, files: dict[str, list[Range]], extra: dict[str, Json] | None = None) -> None:
        self.files = files
        self.extra = extra or {}

    def author_of(self, path: str, line: int) -> Author | None:
        """Who wrote LINE of PATH in this commit; None: the commit did not add or change it."""
        for span in self.files.get(path, ()):
            if span.first <= line <= span.last:
                return span.author
        return None

    def to_json(self) -> dict[str, Json]:
        authors: list[Author] = []
        index: dict[Author, int] = {}
        files: dict[str, Json] = {}
        for path in sorted(self.files):
            rows = []
            for span in self.files[path]:
                if span.author not in index:
                    index[span.author] = len(authors)
                    authors.append(span.author)
                rows.append([span.first, span.last, index[span.author]])
            files[path] = rows
        return {**self.extra, "v": VERSION, "authors": [a.to_json() for a in authors], "files": files}

    def dumps(self) -> str:
        import json  # here: the commit hook's path pays no json import it does not need

        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, data: object) -> Authorship:
        """DATA as read from a note; a malformed part is dropped, not guessed at (a ValueError if it is no object)."""
        if not isinstance(data, dict):
            raise ValueError("an authorship note is one JSON object")
        raw_authors = data.get("authors")
        authors = [Author.from_json(a) for a in raw_authors] if isinstance(raw_authors, list) else []
        files: dict[str, list[Range]] = {}
        raw_files = data.get("files")
        for path, rows in (raw_files.items() if isinstance(raw_files, dict) else ()):
            spans = []
            for row in rows if isinstance(rows, list) else ():
                if (isinstance(row, list) and len(row) == 3 and all(isinstance(n, int) for n in row)
                        and 1 <= row[0] <= row[1] and 0 <= row[2] < len(authors)):
                    spans.append(Range(row[0], row[1], authors[row[2]]))
            if spans:
                files[path] = sorted(spans, key=lambda span: span.first)
        extra = {key: value for key, value in data.items() if key not in ("v", "authors", "files")}
        return cls(files, extra)

    @classmethod
    def loads(cls, text: str | bytes) -> Authorship:
        import json

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"an authorship note is not JSON: {exc}") from None
        return cls.from_json(data)


def read(repo: Repo, commit: str) -> Authorship | None:
    """COMMIT's authorship note; None when it has none. A note that is not ours raises a one-line ValueError."""
    from ..base.gitcmd import GitError

    try:
        text = repo.git(["notes", "--ref", NOTES_REF, "show", commit])
    except GitError:
        if repo.git(["notes", "--ref", NOTES_REF, "list", commit], check=False).strip():
            raise
        return None
    return Authorship.loads(text)


def spans(authors: list[tuple[int, Author]]) -> list[Range]:
    """Ranges from (line, author) pairs in ascending line order: neighbouring lines of one author are one range."""
    found: list[Range] = []
    for line, author in authors:
        if found and found[-1].last == line - 1 and found[-1].author == author:
            found[-1].last = line
        else:
            found.append(Range(line, line, author))
    return found


def listing(repo: Repo) -> dict[str, str]:
    """Every commit with an authorship note, and its note's blob."""
    found = {}
    for row in repo.git(["notes", "--ref", NOTES_REF, "list"], check=False).decode().splitlines():
        parts = row.split()
        if len(parts) == 2:
            found[parts[1]] = parts[0]
    return found


def read_many(repo: Repo, commits: list[str], notes: dict[str, str] | None = None) -> dict[str, Authorship]:
    """The authorship notes of those of COMMITS (full ids) that have one, through one listing and one `cat-file
    --batch` (NOTES: the listing, when the caller has it); a note that is not ours is left out, not raised."""
    from ..base.gitcmd import cat_file

    listed = listing(repo) if notes is None else notes
    wanted = [c for c in commits if c in listed]
    found = {}
    for commit, blob in zip(wanted, cat_file([listed[c] for c in wanted], repo.root), strict=True):
        if blob is None:
            continue
        try:
            found[commit] = Authorship.loads(blob[1])
        except ValueError:
            continue
    return found


def write(repo: Repo, notes: dict[str, Authorship], message: str, attempts: int = 3) -> None:
    """Set the authorship note of each commit of NOTES in one notes commit on NOTES_REF, moved by compare-and-swap
    (another writer in between: read the tip again and retry)."""
    import time

    from ..base import objects
    from ..base.gitcmd import GitError

    if not notes:
        return
    for attempt in range(attempts):
        tip = repo.read_ref(NOTES_REF)
        made = tip
        with objects.writer(repo) as stream:
            for commit, note in notes.items():
                made = stream.note(NOTES_REF, made, commit, note.dumps().encode(), message.encode() + b"\n",
                                   int(time.time()))
        assert made is not None
        try:
            repo.move_refs({NOTES_REF: made}, {NOTES_REF: tip})
            return
        except GitError:
            if attempt == attempts - 1:
                raise
