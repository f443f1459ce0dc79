"""How `git add` turns a file into a blob where that depends on more than the file, and the one rule
git-rewind follows there: decide as `git add` with the user's own index would.

git converts content by attributes and settings (eol, `text=auto`, clean filters,
`working-tree-encoding`, `core.autocrlf`), and some of its decisions read the index it adds to:
- under `text=auto` or `core.autocrlf` (the "auto" eol actions) a file keeps its CRLF when the blob
  the index holds for the path already has CRLF (convert.c's "has CRLF in index" rule);
- under `core.fileMode=false` a file's exec bit, and under `core.symlinks=false` a link checked out
  as a file, come from the index entry (read-cache.c's `ce_mode_from_stat`).
git-rewind's private index (and the daemon's base tree) may hold other entries than the user's: a
file deleted and brought back, one that arrived by `git pull`, one the daemon hashed. Wherever such
a decision may differ, the file is added again with the user's entry as the reference
(`add_with_reference`): the whole-tree scan's private index, the daemon's changed paths and `--path`
share this one rule, whose oracle is `git add -A` on a copy of the user's index.
"""

from __future__ import annotations

import os

from ..base import gitcmd, layout
from ..base.config import xdg_config_home
from ..base.fsutil import folders_above, read_bytes, read_regular, write_atomic
from ..base.note import Oid
from ..base.repo import Repo

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000


# settings ----------------------------------------------------------------------------


class Settings:
    """The config values that change what `git add` stores, with git's defaults."""

    __slots__ = ("autocrlf", "filemode", "symlinks", "attributes_file", "attr_tree", "filters")

    def __init__(self) -> None:
        self.autocrlf = "false"  # "true", "input" or "false"
        self.filemode = True
        self.symlinks = True
        self.attributes_file: str | None = None
        self.attr_tree = False  # attr.tree / GIT_ATTR_SOURCE: attributes read from a tree, not the work tree
        self.filters = False  # a clean filter is configured (filter.<driver>.clean or .process)

    @property
    def mode_from_index(self) -> bool:
        """git takes a file's mode from its index entry (core.fileMode=false or core.symlinks=false)."""
        return not self.filemode or not self.symlinks


# Lines git writes by default, which change nothing: they need no git process to read.
_DEFAULTS = (b"filemode = true", b"filemode=true", b"symlinks = true", b"symlinks=true", b"autocrlf = false",
             b"autocrlf=false")
_WORDS = (b"autocrlf", b"attributesfile", b"filemode", b"symlinks", b"include", b"[attr", b"[filter")


def global_attributes() -> str:
    """The user's attributes file when core.attributesFile does not name another (it is asked of git then)."""
    return os.path.join(xdg_config_home(), "git", "attributes")


def config_files(repo: Repo) -> list[str]:
    """Every config file git reads for REPO (the system one unless GIT_CONFIG_NOSYSTEM)."""
    home = os.path.expanduser("~")
    files = [os.path.join(repo.commondir, "config"), os.path.join(repo.gitdir, "config.worktree"),
             os.path.join(home, ".gitconfig"), os.path.join(os.path.dirname(global_attributes()), "config")]
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append("/etc/gitconfig")
    return files


def config_mentions(repo: Repo, words: tuple[bytes, ...], defaults: tuple[bytes, ...] = ()) -> bool:
    """Whether any config file git reads (or the environment) may set one of WORDS (includes count); a
    line that is one of DEFAULTS (`filemode = true`, which `git init` writes) does not."""
    if any(k.startswith("GIT_CONFIG") and k != "GIT_CONFIG_NOSYSTEM" for k in os.environ):
        return True
    files = config_files(repo)
    # The answer reads nothing but these files' bytes (an include is a mention: what it includes is not read),
    # so it holds while each file's stat data does: a hook's several questions read them once, not each time.
    memo = (words, defaults, *_stamped(files))
    found = _MENTIONS.get(memo)
    if found is None:
        found = _mentions(files, words, defaults)
        if len(_MENTIONS) >= 16:
            _MENTIONS.clear()
        _MENTIONS[memo] = found
    return found


_MENTIONS: dict[tuple[object, ...], bool] = {}


def _mentions(files: list[str], words: tuple[bytes, ...], defaults: tuple[bytes, ...]) -> bool:
    for path in files:
        try:
            with open(path, "rb") as fh:
                text = fh.read().lower()
        except OSError:
            continue
        if not any(word in text for word in words + (b"include",)):
            continue
        for line in text.splitlines():
            line = line.split(b"#", 1)[0].split(b";", 1)[0].strip()
            if line not in defaults and any(word in line for word in words + (b"include",)):
                return True
    return False


_MEMO: dict[tuple[str, ...], Settings] = {}


def settings(repo: Repo) -> Settings:
    """REPO's settings that change what `git add` stores (git is asked only when a config file mentions one;
    remembered in this process while no config file changes). The key names each file, not only its stat:
    the daemon runs hooks under each caller's HOME and XDG_CONFIG_HOME, so under other config files."""
    memo = (repo.commondir, repo.gitdir, *_stamped(config_files(repo)),
            *sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(("GIT_CONFIG", "GIT_ATTR_SOURCE"))))
    if memo not in _MEMO:
        _MEMO.clear()
        _MEMO[memo] = _read_settings(repo)
    return _MEMO[memo]


def _read_settings(repo: Repo) -> Settings:
    found = Settings()
    found.attr_tree = bool(os.environ.get("GIT_ATTR_SOURCE"))
    if not config_mentions(repo, _WORDS, _DEFAULTS):
        return found
    out = gitcmd.run(["config", "--get-regexp",
                      r"^(core\.(autocrlf|attributesfile|filemode|symlinks)|attr\.tree|filter\..*\.(clean|process))$"],
                     cwd=repo.root, check=False)
    for line in os.fsdecode(out).splitlines():
        key, _, value = line.partition(" ")
        value = value.strip()
        if key == "core.autocrlf":
            found.autocrlf = "input" if value.lower() == "input" else "true" if _true(value, line) else "false"
        elif key == "core.filemode":
            found.filemode = _true(value, line)
        elif key == "core.symlinks":
            found.symlinks = _true(value, line)
        elif key == "core.attributesfile":
            found.attributes_file = os.path.expanduser(value) if value else None
        elif key == "attr.tree":
            found.attr_tree = bool(value)
        elif key.startswith("filter.") and value:
            found.filters = True
    return found


def _true(value: str, line: str) -> bool:
    """git's boolean: a key with no value is true, an empty one false."""
    if " " not in line:
        return True
    return value.lower() in ("true", "yes", "on", "1") or (value.isdigit() and int(value) != 0)


def converts(repo: Repo, paths: list[str], found: Settings | None = None) -> bool:
    """Whether git may change the bytes of PATHS between the store and the disk (eol conversion, clean
    and smudge filters, working-tree-encoding): then only git's own commands hash or write them.

    Cheap, for the hook's path: attribute files that exist (the repository's `info/attributes`, the
    user's global one, a `.gitattributes` in the root or in a directory above any of PATHS, or one
    of PATHS itself), and the settings (`core.autocrlf`, `core.attributesFile`, `attr.tree`).
    """
    if any(p == ".gitattributes" or p.endswith("/.gitattributes") for p in paths):
        return True
    found = found or settings(repo)
    if found.autocrlf != "false" or found.attr_tree:
        return True
    candidates = {os.path.join(repo.commondir, "info", "attributes"),
                  found.attributes_file or global_attributes()}
    candidates.update(os.path.join(repo.root, folder, ".gitattributes") for folder in folders_above(paths))
    return any(os.path.isfile(c) for c in candidates)


def needs_git(repo: Repo, paths: list[str]) -> bool:
    """Whether only git can say which blob and mode `git add` gives PATHS: it may convert them, or it takes
    modes from the index. Otherwise the bytes and the exec bit on disk are the whole answer."""
    found = settings(repo)
    return found.mode_from_index or converts(repo, paths, found)


# adding with the user's entries as the reference ---------------------------------------


def user_index(repo: Repo) -> str:
    """The user's index file (GIT_INDEX_FILE when the environment names one, as for git itself)."""
    return os.environ.get("GIT_INDEX_FILE") or os.path.join(repo.gitdir, "index")


def reference_entries(repo: Repo, paths: list[str]) -> dict[str, tuple[int, str]]:
    """The user's index entry git's add consults for each of PATHS: (mode, blob id).

    For a path in conflict, the mode of stage 2, 1 or 3 (the first there) and the blob of stage 2
    ("ours", which the CRLF rule reads), or the empty blob when there is no stage 2: no CRLF.
    """
    if not paths:
        return {}
    out = repo.git(["ls-files", "-s", "-z", "--", *[":(literal,top)" + p for p in paths]])
    stages: dict[str, dict[int, tuple[int, str]]] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        stages.setdefault(os.fsdecode(name), {})[int(fields[2])] = (int(fields[0], 8), fields[1].decode())
    found: dict[str, tuple[int, str]] = {}
    for path, by_stage in stages.items():
        if 0 in by_stage:
            found[path] = by_stage[0]
            continue
        mode = next(by_stage[s][0] for s in (2, 1, 3) if s in by_stage)
        found[path] = (mode, by_stage[2][1] if 2 in by_stage else _empty_blob(repo))
    return found


def _empty_blob(repo: Repo) -> str:
    return ("473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813" if repo.object_format == "sha256"
            else "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")


def add_with_reference(repo: Repo, env: dict[str, str], paths: list[str]) -> None:
    """Add PATHS to the index ENV names as `git add` with the user's index would: each path's entry there is
    first set to the user's (or removed where the user's index has none), with no stat data, so git reads
    the file again and takes its decisions from the user's entry. Paths gone meanwhile are removed."""
    if not paths:
        return
    assert env.get("GIT_INDEX_FILE"), "never the user's own index"
    zero = "0" * len(_empty_blob(repo))
    entries = reference_entries(repo, paths)
    info = b"".join(
        (b"%o %s 0\t" % (entries[p][0], entries[p][1].encode()) if p in entries else b"0 " + zero.encode() + b"\t")
        + os.fsencode(p) + b"\0" for p in paths)
    repo.git(["update-index", "-z", "--index-info"], env=env, input=info)
    repo.git(["-c", "core.safecrlf=false", "update-index", "--add", "--remove", "-z", "--stdin"], env=env,
             input=b"".join(os.fsencode(p) + b"\0" for p in paths))


def hash_as_added(repo: Repo, paths: list[str], scratch: str | None = None,
                  env: dict[str, str] | None = None) -> dict[str, tuple[int, str]]:
    """(mode, blob id) of each of PATHS (regular files) as `git add` with the user's index stores it, the
    blob written (ENV: where objects go); a path gone meanwhile is missing from the answer. SCRATCH: the
    index file to use, by default one per work tree under .git/rewind/ (then hold the work-tree lock)."""
    from ..base.scratchindex import scratch_index

    with scratch_index(repo, scratch or os.path.join(repo.rewind_dir, layout.REFERENCE_INDEX)) as index:
        env = {**(env or {}), **index}
        add_with_reference(repo, env, paths)
        out = repo.git(["ls-files", "-s", "-z"], env=env)
    found = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, oid, _stage = meta.split()
            found[os.fsdecode(name)] = (int(mode, 8), oid.decode())
    return found


# where a tree may have decided otherwise ---------------------------------------------


def reference_key(repo: Repo) -> str:
    """What git's decisions in an add read besides the files and the tree's own .gitattributes: the user's
    index (its stat data), and the attribute and config files outside the tree. `U:` and `A:` parts, so a
    change of the index alone can be told from one of the settings."""
    found = settings(repo)
    index = _stat(user_index(repo))
    outside = [os.path.join(repo.commondir, "info", "attributes"), found.attributes_file or global_attributes()]
    settings_part = " ".join(_stat(p) for p in outside + config_files(repo))
    extra = os.environ.get("GIT_ATTR_SOURCE", "")
    return f"U:{index} A:{settings_part}:{extra}"


def _stamped(files: list[str]) -> list[str]:
    """FILES, each named with its stat data: a key for what is read from them, which holds while none changes."""
    return [f"{path}={_stat(path)}" for path in files]


def _stat(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}"


def _settings_part(key: str | None) -> str | None:
    return key.partition(" A:")[2] if key else None


EVERY = "every"  # stale(): the attributes or settings changed (or nothing was checked): each file may now differ
INDEX = "index"  # stale(): the user's index changed: every reference may have


def stale(verified_key: str | None, key: str, changed: list[str]) -> str | None:
    """What may have gone stale in a tree checked under VERIFIED_KEY (None: never) whose paths CHANGED since,
    now that the key is KEY: EVERY, INDEX, or None (nothing: the paths read since followed the rule)."""
    attributes = any(p == ".gitattributes" or p.endswith("/.gitattributes") for p in changed)
    if verified_key is None or attributes or _settings_part(verified_key) != _settings_part(key):
        return EVERY
    return INDEX if verified_key != key else None


class Differences:
    """`differences` started now and read later (`result`), beside other work on the machine's other core."""

    def __init__(self, repo: Repo, tree: str, env: dict[str, str] | None = None) -> None:
        view = {k: v for k, v in (env or {}).items() if k != "GIT_INDEX_FILE"}  # the user's index, read only
        self._pending = gitcmd.Background(["diff-index", "--cached", "-z", "--raw", "--no-renames", tree],
                                          cwd=repo.root, env=view)

    def result(self) -> dict[str, Entry]:
        return _differences(self._pending.result())

    def close(self) -> None:
        """Stop it, if its answer was not read (the caller failed meanwhile)."""
        self._pending.close()


# A path where a tree and the user's index differ: (its mode in the tree, in the user's index (0: none), its
# object in the tree, in the user's index), as `git diff-index --cached --raw` gives them.
Entry = tuple[int, int, str, str]


def differences(repo: Repo, tree: Oid, env: dict[str, str] | None = None,
                paths: set[str] | None = None) -> dict[str, Entry]:
    """Every path where TREE and the user's index differ (within PATHS), with both sides (Entry). ENV: to
    see a scan's quarantined objects; the user's index is read, never written."""
    args = ["diff-index", "--cached", "-z", "--raw", "--no-renames", tree]
    if paths is not None:
        if not paths:
            return {}
        args += ["--", *[":(literal,top)" + p for p in sorted(paths)]]
    view = {k: v for k, v in (env or {}).items() if k != "GIT_INDEX_FILE"}
    return _differences(repo.git(args, env=view or None))


def _differences(out: bytes) -> dict[str, Entry]:
    from ..base.gitobjects import raw_diff

    return {e.path: (e.old_mode, e.new_mode, e.old_oid, e.new_oid) for e in raw_diff(out)}


def disagreements(repo: Repo, differ: dict[str, Entry], every: bool,
                  leave: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Of the paths where a tree differs from the user's index (DIFFER, `differences`), those that `git add`
    with that index may store otherwise, to add again with its entries as the reference (not LEAVE).

    A submodule the user's index records that is not checked out keeps that record. Of the files: with
    EVERY, each (its attributes or the settings changed since it was hashed); else those whose result
    reads the reference: under an auto eol action a file with CRLF on disk, or behind a clean filter or
    working-tree-encoding (what they make of it is git's to say); under core.fileMode=false a mode that is
    not the reference's; under core.symlinks=false a file whose reference is a link. A file looked at
    before, unchanged since on disk and in both blobs, is not read again (`Checked`).
    """
    picked = {p for p, entry in differ.items() if entry[1] == MODE_GITLINK}  # listed: they differ
    files = {p: entry for p, entry in differ.items() if entry[0] in (MODE_FILE, MODE_EXEC) and p not in leave}
    found = settings(repo)
    if not files or not (found.mode_from_index or converts(repo, sorted(files), found)):
        return sorted(picked)
    if every:
        return sorted(picked | set(files))
    if found.mode_from_index:
        for path, (ours, theirs, _a, _b) in files.items():
            if not found.filemode and ours != (theirs if theirs in (MODE_FILE, MODE_EXEC) else MODE_FILE):
                picked.add(path)
            if not found.symlinks and theirs == MODE_LINK:
                picked.add(path)
    rest = {p: e for p, e in files.items() if p not in picked}
    if rest and converts(repo, sorted(rest), found):
        picked.update(_crlf_candidates(repo, rest, found))
    return sorted(picked)


def _crlf_candidates(repo: Repo, files: dict[str, Entry], found: Settings) -> list[str]:
    """Of FILES, those under an auto eol action whose result the "CRLF already in the index" rule may decide:
    a file with CRLF, or one a clean filter or working-tree-encoding turns into what git then checks.

    A file with no CR at all gets none from an encoding either; only a clean filter could add one, so
    without one configured, attributes are asked of git only for files with a CR (usually none). What
    is found is remembered (Checked): a file is read again only once it, its blob or the reference changed.
    """
    checked = Checked(repo)
    crlf: dict[str, bool] = {}
    for path, entry in files.items():
        full = os.path.join(repo.root, path)
        sig = checked.signature(full, entry[2], entry[3])
        if sig is None or checked.seen(path, sig):
            continue
        try:
            content = read_regular(full, nofollow=True)
        except OSError:
            continue  # gone or not a file now: the next scan sees it
        if found.filters or b"\r" in content:
            crlf[path] = b"\r\n" in content
        else:
            checked.note(path, sig)
    picked = []
    if crlf:
        attrs = _attributes(repo, sorted(crlf), ("text", "eol", "crlf", "filter", "working-tree-encoding"))
        for path, has_crlf in crlf.items():
            values = attrs.get(path, {})
            converted = values.get("filter", "unspecified") not in ("unspecified", "unset") \
                or values.get("working-tree-encoding", "unspecified") not in ("unspecified", "unset")
            if _auto(values, found.autocrlf) and (has_crlf or converted):
                picked.append(path)  # after a filter or an encoding, what git checks is for git to say
            else:
                entry = files[path]
                checked.note(path, checked.signature(os.path.join(repo.root, path), entry[2], entry[3]))
    checked.save(set(files))
    return sorted(picked)


class Checked:
    """The files `_crlf_candidates` found to need nothing (or that were added again since, `added`), by their
    stat data and both blobs: .git/rewind/reference-files, one NUL-separated pair per path."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.path = os.path.join(repo.rewind_dir, layout.REFERENCE_FILES)
        self.known: dict[str, str] = {}
        self.changed = False
        try:
            with open(self.path, "rb") as fh:
                fields = fh.read().split(b"\0")
        except FileNotFoundError:
            return
        for i in range(0, len(fields) - 1, 2):
            self.known[os.fsdecode(fields[i])] = fields[i + 1].decode("ascii", "replace")

    @staticmethod
    def signature(full: str, ours: str, theirs: str) -> str | None:
        try:
            st = os.lstat(full)
        except OSError:
            return None
        return f"{st.st_mtime_ns}.{st.st_ctime_ns}.{st.st_size}.{st.st_ino} {ours} {theirs}"

    def seen(self, path: str, sig: str) -> bool:
        return self.known.get(path) == sig

    def note(self, path: str, sig: str | None) -> None:
        if sig is not None and self.known.get(path) != sig:
            self.known[path] = sig
            self.changed = True

    def added(self, entries: dict[str, Entry], now: dict[str, str]) -> None:
        """Files just added again with the reference: NOW is their new blob (path → id)."""
        for path, oid in now.items():
            if path in entries:
                full = os.path.join(self.repo.root, path)
                self.note(path, self.signature(full, oid, entries[path][3]))
        self.save(None)

    def save(self, keep: set[str] | None) -> None:
        """Write what changed; KEEP: the paths still worth remembering (those that differ from the user's index)."""
        if keep is not None:
            gone = [p for p in self.known if p not in keep]
            for path in gone:
                del self.known[path]
            self.changed = self.changed or bool(gone)
        if self.changed:
            write_atomic(self.path, b"".join(os.fsencode(p) + b"\0" + s.encode() + b"\0"
                                             for p, s in sorted(self.known.items())))
            self.changed = False


def _auto(values: dict[str, str], autocrlf: str) -> bool:
    """convert.c's convert_attrs: the eol action is one of the auto ones (text=auto, or core.autocrlf with no
    text attribute), the ones that read the index."""
    action = _crlf_attr(values.get("text", "unspecified"))
    if action is None:
        action = _crlf_attr(values.get("crlf", "unspecified"))
    if action == "binary":
        return False
    eol = values.get("eol", "unspecified")
    if eol in ("lf", "crlf") and action != "auto":
        return False  # eol alone, or with text: a text action
    if action is not None:
        return action == "auto"
    return autocrlf != "false"


def _crlf_attr(value: str) -> str | None:
    if value == "set":
        return "text"
    if value == "unset":
        return "binary"
    if value == "input":
        return "text"
    if value == "auto":
        return "auto"
    return None


def _attributes(repo: Repo, paths: list[str], names: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """`git check-attr` of NAMES for PATHS: path → {name: value} (set, unset, unspecified or the value)."""
    out = repo.git(["check-attr", "-z", "--stdin", *names], input=b"".join(os.fsencode(p) + b"\0" for p in paths))
    fields = out.split(b"\0")
    found: dict[str, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        found.setdefault(os.fsdecode(fields[i]), {})[fields[i + 1].decode()] = os.fsdecode(fields[i + 2])
    return found


# what was checked ----------------------------------------------------------------------


def _verified_file(repo: Repo) -> str:
    return os.path.join(repo.rewind_dir, layout.REFERENCE)


VERIFIED_KEPT = 4  # trees remembered: a full scan the daemon is not told of (a restore's under a target's ignore
# rules, a scan while its socket is away) leaves the daemon's base checked, so its next answer stays incremental


def _verified(repo: Repo) -> list[tuple[str, str]]:
    """(tree, key) of the trees checked last, newest first."""
    return _parse_verified(_read_verified(repo))


def _read_verified(repo: Repo) -> str:
    try:
        return read_bytes(_verified_file(repo)).decode()
    except (FileNotFoundError, ValueError):
        return ""


def _parse_verified(text: str) -> list[tuple[str, str]]:
    return [(seen, key) for seen, _, key in (line.partition(" ") for line in text.splitlines()) if key]


def verified(repo: Repo, tree: str) -> str | None:
    """The key TREE was last checked under against the user's index, if it is among the last trees checked."""
    return next((key for seen, key in _verified(repo) if seen == tree), None)


def mark_verified(repo: Repo, tree: str, key: str) -> None:
    """TREE decides as the user's index does, under KEY."""
    before = _read_verified(repo)
    kept = [(tree, key)] + [(seen, k) for seen, k in _parse_verified(before) if seen != tree][:VERIFIED_KEPT - 1]
    text = "".join(f"{seen} {k}\n" for seen, k in kept)
    if text != before:  # the same tree checked again under the same key (a prompt with nothing new): no write
        write_atomic(_verified_file(repo), text)


def forget(repo: Repo) -> None:
    """No tree counts as checked any more (the private index was dropped)."""
    try:
        os.unlink(_verified_file(repo))
    except FileNotFoundError:
        pass

