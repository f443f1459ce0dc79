"""Ignore rules of a checkpoint, as one excludes file git can evaluate on its own.

Restoring across a .gitignore change must respect both rule sets: a path ignored by the
target's rules or by the current ones is neither captured by the safety checkpoint nor
deleted. git reads the current rules from the work tree (with info/exclude and the user's
core.excludesFile); this module turns the target's .gitignore files into root-anchored
patterns in one file, which the scan gives git alone (`ls-files --exclude-from`), so that a
`!negation` in one set never cancels an ignore of the other. (When the daemon answers the scan, the
changed paths those rules ignore are not read and the rest of what they ignore is left out of its tree:
snapshot._scan_changed_ruled.)
"""

from __future__ import annotations

import os

from ..base import gitcmd, layout
from ..base.fsutil import read_regular, write_atomic
from ..base.note import Oid
from ..base.repo import Repo
from .snapshot import blob_oid


def _translate(directory: str, line: str) -> str | None:
    """One .gitignore line from DIRECTORY as an equivalent pattern anchored at the root."""
    line = line.rstrip("\n").rstrip("\r")
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/")
    body = line.rstrip("/")
    if not body:
        return None
    anchored = "/" in body
    body = body.lstrip("/")
    if directory:
        directory = "".join("\\" + c if c in "*?[\\" else c for c in directory)  # a name, not a pattern
        body = f"{directory}/{body}" if anchored else f"{directory}/**/{body}"
        anchored = True
    return ("!" if negate else "") + ("/" if anchored else "") + body + ("/" if dir_only else "")


def gitignore_files(repo: Repo, tree: Oid) -> list[tuple[str, str]]:
    """(path, blob id) of every .gitignore in TREE; cached per tree, since trees never change."""
    cache = os.path.join(repo.rewind_dir, layout.GITIGNORES, tree)
    try:
        with open(cache, "rb") as fh:
            fields = fh.read().split(b"\0")[:-1]
        return [(os.fsdecode(fields[i]), fields[i + 1].decode()) for i in range(0, len(fields), 2)]
    except FileNotFoundError:
        pass
    out = repo.git(["ls-tree", "-r", "-z", "--full-tree", tree])
    files = []
    for entry in out.split(b"\0"):
        meta, _, raw_name = entry.partition(b"\t")
        if raw_name == b".gitignore" or raw_name.endswith(b"/.gitignore"):
            files.append((os.fsdecode(raw_name), meta.split()[2].decode()))
    write_atomic(cache, b"".join(os.fsencode(name) + b"\0" + oid.encode() + b"\0" for name, oid in files),
                 makedirs=True)
    return files


def target_excludes(repo: Repo, tree: Oid, path: str) -> str | None:
    """Write an excludes file holding TREE's .gitignore rules when they differ from the disk's.

    Returns its path, or None when every .gitignore of TREE is on disk unchanged (then the
    current rules already are the target's, and git needs no help).
    """
    files = gitignore_files(repo, tree)
    if not files:
        return None
    differs = False
    for name, oid in files:
        try:
            if blob_oid(read_regular(os.path.join(repo.root, name)), repo.object_format) != oid:
                differs = True
        except OSError:
            differs = True
    if not differs:
        return None
    request = b"".join(oid.encode() + b"\n" for _name, oid in files)
    raw = gitcmd.run(["cat-file", "--batch"], cwd=repo.root, input=request)
    contents = []
    pos = 0
    for _ in files:
        header_end = raw.index(b"\n", pos)
        size = int(raw[pos:header_end].split()[2])
        contents.append(raw[header_end + 1 : header_end + 1 + size])
        pos = header_end + 1 + size + 1
    lines = []
    ordered = sorted(zip(files, contents, strict=True), key=lambda fc: fc[0][0].count("/"))
    for (name, _oid), content in ordered:
        directory = name[: -len(".gitignore")].rstrip("/")
        for raw_line in os.fsdecode(content).splitlines():
            pattern = _translate(directory, raw_line)
            if pattern is not None:
                lines.append(os.fsencode(pattern) + b"\n")
    with open(path, "wb") as fh:
        fh.write(b"".join(lines))
    return path
