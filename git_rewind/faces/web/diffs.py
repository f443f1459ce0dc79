"""Diffs, trees and files for the page: computed by git, parsed by unidiff, coloured by Pygments.

`git diff --raw` names the files (status, modes, object ids, renames found by git's -M);
`git diff` gives the patch, which `unidiff` parses into hunks and numbered lines; each side of a
hunk is coloured as one text, so a string spanning lines stays a string. Files over 1 MiB are
never diffed (`core.bigFileThreshold` makes git treat them as binary; their size says which).
Both sides are trees in the object store (a checkpoint's, or `snapshot.current_tree` for the
working tree), so nothing here reads the working tree itself: no symlink is followed, and
ignored files (an `.env`) are never shown.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import RewindError
from ...base.repo import Repo

MAX_BYTES = 1 << 20
MAX_LINES = 5000
SYMLINK = "120000"
GITLINK = "160000"


class PathError(RewindError):
    """A path the API refuses (400)."""


def check_path(path: str) -> str:
    """PATH as a '/'-separated path inside the work tree; refuses absolute paths, `..`, `.git/`."""
    if not path or "\0" in path:
        raise PathError("no path given")
    if path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"not a path inside the work tree: {path}")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise PathError(f"not a path inside the work tree: {path}")
    if parts[0].lower() == ".git":
        raise PathError(f"git's own files are not shown: {path}")
    return "/".join(parts)


def _git(repo: Repo, args: list[str], data: bytes | None = None) -> bytes:
    return repo.git(["-c", "core.quotepath=off", "-c", f"core.bigFileThreshold={MAX_BYTES}", *args],
                    **({"input": data} if data is not None else {}))


def sizes(repo: Repo, oids: list[str]) -> dict[str, int]:
    """The size of each blob in OIDS (one `git cat-file --batch-check`)."""
    wanted = sorted({oid for oid in oids if oid and set(oid) != {"0"}})
    if not wanted:
        return {}
    out = repo.git(["cat-file", "--batch-check=%(objectname) %(objectsize)"], input="".join(
        f"{oid}\n" for oid in wanted).encode())
    found = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            found[parts[0]] = int(parts[1])
    return found


def lexer_class(name: str) -> Any:
    """The lexer class Pygments' get_lexer_for_filename picks for the file NAME among the lexers Pygments ships
    (its LEXERS table, and its rating: the lexer's priority, half a point more for a pattern without `*`, then
    the class name), None when none fits; without what that call costs the first time (the page's server pays
    it while the first tab loads): compiling each of its ~930 filename patterns, and reading every installed
    package's entry points for plugin lexers (git-rewind's own environment has none). A pattern `*.ext` is a
    test of the name's end; the few others go through fnmatch, as Pygments matches them."""
    from fnmatch import fnmatchcase

    from pygments.lexers import LEXERS, find_lexer_class

    def fits(pattern: str) -> bool:
        tail = pattern[1:]
        if pattern[:1] == "*" and not any(c in tail for c in "*?["):
            return name.endswith(tail)
        return fnmatchcase(name, pattern)

    found = [(find_lexer_class(lexer), pattern) for _module, lexer, _aliases, patterns, _types in LEXERS.values()
             for pattern in patterns if fits(pattern)]
    if not found:
        return None
    best = max(found, key=lambda m: (m[0].priority + (0.5 if "*" not in m[1] else 0), m[0].__name__))
    return best[0]


class Colour:
    """Pygments, with a lexer per file name (plain text when none fits)."""

    def __init__(self) -> None:
        import threading

        from pygments.formatters import HtmlFormatter

        self.formatter = HtmlFormatter(nowrap=True)
        self._lexers: dict[str, Any] = {}
        self._lock = threading.Lock()  # handlers run in a thread pool; one formatter and lexer cache

    def lexer(self, path: str) -> Any:
        from pygments.lexers.special import TextLexer

        name = path.rsplit("/", 1)[-1]
        if name not in self._lexers:
            found = lexer_class(name)
            self._lexers[name] = (found or TextLexer)(stripnl=False, ensurenl=False)
        return self._lexers[name]

    def lines(self, path: str, lines: list[str]) -> list[str]:
        """LINES (without their newlines) as HTML, one string each, coloured as one text."""
        if not lines:
            return []
        from pygments import highlight

        with self._lock:
            html: str = highlight("\n".join(lines) + "\n", self.lexer(path), self.formatter)
        out = html.split("\n")
        if len(out) < len(lines):
            from html import escape

            return [escape(line) for line in lines]
        return out[:len(lines)]


def _raw(repo: Repo, old: str, new: str, paths: list[str]) -> list[dict[str, Any]]:
    """The changed files between OLD and NEW as `git diff --raw -M -z` lists them."""
    out = _git(repo, ["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", old, new, "--",
                      *[f":(literal){p}" for p in paths]])
    fields = out.split(b"\0")
    files = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].decode().lstrip(":").split()
        if len(meta) < 5:
            break
        status = meta[4][0]
        if status in "RC":
            old_path, path = fields[i + 1].decode("utf-8", "replace"), fields[i + 2].decode("utf-8", "replace")
            i += 3
        else:
            old_path, path = None, fields[i + 1].decode("utf-8", "replace")
            i += 2
        files.append({"path": path, "old_path": old_path, "status": "M" if status == "C" else status,
                      "old_mode": meta[0], "new_mode": meta[1], "old_oid": meta[2], "new_oid": meta[3]})
    return files


def diff(repo: Repo, old: str, new: str, paths: list[str], context: int, colour: Colour) -> list[dict[str, Any]]:
    """The contract's FILE list for OLD → NEW (commits or trees), limited to PATHS when given."""
    from unidiff.patch import PatchSet

    files = _raw(repo, old, new, paths)
    if not files:
        return []
    size = sizes(repo, [f["old_oid"] for f in files] + [f["new_oid"] for f in files])
    patch = _git(repo, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", f"-U{context}",
                        "--src-prefix=a/", "--dst-prefix=b/", old, new, "--",
                        *[f":(literal){p}" for p in paths]]).decode("utf-8", "replace")
    parsed = {}
    for each in PatchSet(patch):
        name = each.target_file if each.target_file != "/dev/null" else each.source_file
        parsed[name[2:] if name[:2] in ("a/", "b/") else name] = each
    out = []
    for f in files:
        large = max(size.get(f["old_oid"], 0), size.get(f["new_oid"], 0)) > MAX_BYTES
        patched = parsed.get(f["path"])
        binary = bool(patched is not None and patched.is_binary_file and not large)
        if f["old_mode"] == GITLINK or f["new_mode"] == GITLINK:
            binary = True
        entry: dict[str, Any] = {"path": f["path"], "old_path": f["old_path"], "status": f["status"],
                                 "binary": binary, "too_large": large, "additions": 0, "deletions": 0, "hunks": []}
        if patched is not None and not binary and not large:
            entry["additions"], entry["deletions"] = patched.added, patched.removed
            if patched.added + patched.removed > MAX_LINES:
                entry["too_large"] = True
            else:
                entry["hunks"] = [_hunk(hunk, f["path"], f["old_path"] or f["path"], colour) for hunk in patched]
        out.append(entry)
    return out


def _hunk(hunk: Any, path: str, old_path: str, colour: Colour) -> dict[str, Any]:
    lines = [line for line in hunk if line.line_type in ("+", "-", " ")]
    texts = [line.value.rstrip("\n").rstrip("\r") for line in lines]
    old_side = [i for i, line in enumerate(lines) if line.line_type != "+"]
    new_side = [i for i, line in enumerate(lines) if line.line_type != "-"]
    html: list[str] = [""] * len(lines)
    for i, text in zip(old_side, colour.lines(old_path, [texts[i] for i in old_side]), strict=True):
        html[i] = text
    for i, text in zip(new_side, colour.lines(path, [texts[i] for i in new_side]), strict=True):
        html[i] = text
    header = f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
    if hunk.section_header:
        header += f" {hunk.section_header}"
    return {"header": header, "lines": [{"kind": line.line_type, "old": line.source_line_no,
                                          "new": line.target_line_no, "html": html[i]}
                                         for i, line in enumerate(lines)]}


def tree(repo: Repo, treeish: str) -> list[dict[str, Any]]:
    """Every file of TREEISH: path, mode and size (`git ls-tree -r -l`)."""
    out = _git(repo, ["ls-tree", "-r", "-l", "-z", "--full-tree", treeish])
    files = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, _kind, _oid, size = meta.decode().split()
        files.append({"path": path.decode("utf-8", "replace"), "mode": mode,
                      "size": int(size) if size.isdigit() else 0})
    return files


def file(repo: Repo, treeish: str, path: str, colour: Colour) -> dict[str, Any]:
    """PATH in TREEISH, coloured line by line; binary or over 1 MiB: no lines. A symbolic link is refused
    (never followed); a path that is not a file there is a 404."""
    listing = repo.git(["ls-tree", "-z", "--full-tree", treeish, "--", f":(literal){path}"])
    entry = listing.split(b"\0")[0]
    meta, _, name = entry.partition(b"\t")
    if not meta or name.decode("utf-8", "replace") != path:
        raise LookupError(f"no file {path} there")
    mode, kind, oid = meta.decode().split()
    if mode == SYMLINK:
        raise PathError(f"{path} is a symbolic link: not followed")
    if kind != "blob":
        raise LookupError(f"{path} is not a file there")
    size = sizes(repo, [oid]).get(oid, 0)
    result: dict[str, Any] = {"path": path, "size": size, "binary": False, "too_large": size > MAX_BYTES, "lines": []}
    if result["too_large"]:
        return result
    data = repo.git(["cat-file", "blob", oid])
    if b"\0" in data[:8000]:  # git's own test for a binary file (buffer_is_binary)
        result["binary"] = True
        return result
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    result["lines"] = colour.lines(path, [line.rstrip("\r") for line in lines])
    return result
