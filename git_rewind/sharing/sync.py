"""Sharing checkpoints through any git remote: `push`, `fetch`, `gc --remote`, the automatic push.

Everything goes through git's own transport with explicit refspecs (so every protocol and credential
helper works, and nothing but our own refs ever moves): push sends `refs/notes/rewind-share/<sync_name>`,
this machine's redacted copy (share.py), to the same name; fetch brings every machine's copy into
`refs/notes/rewind-remote/<remote>/`, checked before it is let in. There is no default remote: a
command names one, or `sync_remote` does.

Each machine writes only its own ref, so pushes of different machines never meet. Two clones pushing
under one name (one person's two checkouts) do: a rejected push fetches the other copy, merges it
(each note field by the time it last changed), and tries again, a bounded number of times.
"""

from __future__ import annotations

import os
import re

from ..base import layout
from ..base.errors import RewindError
from ..base.repo import INCOMING_PREFIX, REMOTE_PREFIX, SHARE_PREFIX
from . import share

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.config import Settings
    from ..base.repo import Repo
    from ..store.checkpoints import Checkpoint

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
INCOMING = INCOMING_PREFIX  # a fetch's refs while they are checked (never left behind)
RETRIES = 5
STATUS_FILE = "sync.json"  # under Repo.share_dir: the last push's outcome, for `status`


class Remote:
    """A remote as given (a configured remote's name, or a URL or path) and the LABEL fetched copies are
    kept under (the name, or a slug of the URL: one ref-name component)."""

    __slots__ = ("given", "label")

    def __init__(self, given: str, label: str) -> None:
        self.given = given
        self.label = label


def resolve(repo: Repo, given: str | None, settings: Settings) -> Remote:
    """The remote to talk to: GIVEN, else `sync_remote`; never an implicit `origin`."""
    name = given or settings.get("sync_remote")
    if not name:
        raise RewindError("no remote: name one (`git rewind push REMOTE`, a remote's name or a URL) or set "
                          "sync_remote; git-rewind never pushes to a remote it was not told of")
    remotes = repo.git(["remote"]).decode().split()
    if name in remotes:
        return Remote(name, re.sub(r"[^A-Za-z0-9._-]", "-", name))
    if _url_like(name):
        return Remote(name, url_label(name))
    known = ", ".join(remotes) or "none"
    raise RewindError(f"no such remote: {name!r} (remotes here: {known}; or give a URL)")


def _url_like(text: str) -> bool:
    """TEXT is a URL or a path git can push to (scp-like `host:path` included), not a remote's name."""
    if any(ch in text for ch in "\n\r\0") or text.startswith("-"):
        return False
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        return True
    if re.match(r"^[^/:\s]+@[^/:\s]+:", text) or re.match(r"^[A-Za-z0-9.-]+:[^/]", text):
        return True
    return text.startswith(("/", "./", "../", "~/")) or os.path.isdir(text)


def url_label(url: str) -> str:
    """A URL as one ref-name component: no scheme, no user or password, `/` and `:` become `-`."""
    text = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", url)
    text = re.sub(r"^[^@/]*@", "", text)
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    text = re.sub(r"\.+", ".", text)
    return (text[:80].rstrip(".-") or "remote").removesuffix(".lock")


def _settings(repo: Repo) -> Settings:
    from ..base import config

    return config.for_repo(repo)


def machine_name(repo: Repo, settings: Settings) -> str:
    """This machine's name on remotes: `sync_name`, else a slug of user and host."""
    return settings.get("sync_name") or share.default_name(repo)


# push --------------------------------------------------------------------------------------------


class Pushed:
    """What a push did."""

    __slots__ = ("remote", "name", "report", "sent", "merged", "attempts", "authorship")

    def __init__(self, remote: Remote, name: str, report: share.Report) -> None:
        self.remote = remote
        self.name = name
        self.report = report
        self.sent = False  # the remote's ref moved
        self.merged = 0  # another clone's copies merged in (same sync_name)
        self.attempts = 0
        self.authorship = 0  # commits' authorship notes the remote had not (commitnotes.py)


def chosen(repo: Repo, session: str | None, every: bool) -> list[Checkpoint]:
    """The local checkpoints a push shares: SESSION's, every session's (EVERY), or by default those of the
    sessions that have a checkpoint in this work tree."""
    from ..store import checkpoints

    items = checkpoints.load_all(repo)
    if every:
        return items
    if session:
        name = checkpoints.session_named(items, session)
        return [c for c in items if c.session == name]
    here = {c.session for c in checkpoints.of_worktree(items, repo.worktree)}
    return [c for c in items if c.session in here]


def push(repo: Repo, given: str | None, session: str | None = None, every: bool = False,
         conversation: bool | None = None, allow_secrets: bool = False, prune: bool = False) -> Pushed:
    """Bring this machine's copy up to date and send it to the remote."""
    settings = _settings(repo)
    remote = resolve(repo, given, settings)
    name = machine_name(repo, settings)
    if os.path.exists(share.purged_marker(repo)) and not prune:
        raise RewindError(f"checkpoints were purged since this machine's copy was built: "
                          f"`git rewind push --prune {remote.given}` replaces the copy there (a plain push would "
                          f"merge the old one back)")
    items = chosen(repo, session, every)
    if not items:
        raise RewindError("no checkpoints to push" + (f" in session {session}" if session else " from this work tree"))
    if conversation is None:
        conversation = bool(settings.get("sync_conversation"))
    report = share.build(repo, items, name, share.user_name(repo), conversation=conversation,
                         allow_secrets=allow_secrets)
    result = Pushed(remote, name, report)
    try:
        _send(repo, result, prune)
        result.authorship = _push_authorship(repo, remote)
    except RewindError as exc:
        _record(repo, remote, None, str(exc))
        raise
    if prune:
        try:
            os.unlink(share.purged_marker(repo))
        except FileNotFoundError:
            pass
    _record(repo, remote, result.report.new, None)
    return result


def _send(repo: Repo, result: Pushed, force: bool) -> None:
    """Push the copy; on a rejection because the remote's copy moved (another clone under the same name),
    merge it in and try again, at most RETRIES times."""
    import random
    import time

    ref = SHARE_PREFIX + result.name
    reason = ""
    for attempt in range(1, RETRIES + 1):
        result.attempts = attempt
        tip = repo.read_ref(ref)
        assert tip is not None
        if not force and _pushed_before(repo, result.remote) == tip:
            return  # this very copy is on the remote already: no network at all
        status, reason = _push_once(repo, result.remote, tip, ref, force)
        if status == "ok":
            result.sent = True
            _remember_pushed(repo, result.remote, tip)
            return
        if status == "up to date":
            _remember_pushed(repo, result.remote, tip)
            return
        if status != "moved":
            raise RewindError(f"push to {result.remote.given} failed: {reason}")
        result.merged += _merge_remote(repo, result.remote, result.name)
        time.sleep(random.uniform(0.05, 0.3) * attempt)
    raise RewindError(f"push to {result.remote.given} failed {RETRIES} times, the last: {reason} (another clone "
                      f"pushing as {result.name}, or the remote cannot write the ref); try again")


def _push_once(repo: Repo, remote: Remote, tip: str, ref: str, force: bool) -> tuple[str, str]:
    """One `git push` of TIP to REF: ("ok" | "up to date" | "moved" | "failed", why). Its porcelain lines
    say what became of the ref whether git succeeded or not."""
    import subprocess

    spec = ("+" if force else "") + f"{tip}:{ref}"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"} if not os.isatty(0) else None
    proc = subprocess.run(["git", "push", "--porcelain", "--no-follow-tags", "--", remote.given, spec],
                          cwd=repo.root, capture_output=True, stdin=subprocess.DEVNULL, env=env)
    stderr = proc.stderr.decode(errors="replace")
    for line in proc.stdout.decode(errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(":" + ref):
            flag, summary = parts[0], parts[2]
            if flag == "=":
                return "up to date", summary
            if flag != "!":
                return "ok", summary
            if "non-fast-forward" in summary or "fetch first" in summary or "stale info" in summary:
                return "moved", summary
            if "failed to update ref" in summary or "cannot lock ref" in summary:
                # Another push holds the remote's ref lock, or moved the ref between the remote's look and its
                # write ("reference already exists", "but expected", "Unable to create ….lock: File exists"):
                # merged and tried again like a non-fast-forward; a lasting failure ends after RETRIES.
                return "moved", summary
            return "failed", _remote_words(stderr) or summary.strip("[]")
    return "failed", _last_line(stderr) or "git push said nothing"


def _remote_words(stderr: str) -> str:
    """What the remote said (its hooks' `remote:` lines), on one line."""
    said = [line[len("remote:"):].strip() for line in stderr.splitlines() if line.startswith("remote:")]
    said = [s.removeprefix("error: ").removeprefix("fatal: ") for s in said if s]
    return "; ".join(said)[:300]


def _last_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    useful = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    # "the remote end hung up unexpectedly" follows the line that says why, when there is one (ssh).
    said = [line for line in useful if "remote end hung up" not in line and "failed to push some refs" not in line] \
        or useful
    return said[0].removeprefix("fatal: ").removeprefix("error: ")[:300] if said else ""


def _pushed_file(repo: Repo, remote: Remote) -> str:
    return os.path.join(repo.share_dir, layout.PUSHED, remote.label)


def _pushed_before(repo: Repo, remote: Remote) -> str | None:
    try:
        with open(_pushed_file(repo, remote), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def _remember_pushed(repo: Repo, remote: Remote, tip: str) -> None:
    from ..base.fsutil import write_atomic

    write_atomic(_pushed_file(repo, remote), tip + "\n", makedirs=True)


def _merge_remote(repo: Repo, remote: Remote, name: str) -> int:
    """Fetch the remote's copy of NAME and merge it into ours (a merge commit: ours first); returns how many
    of its notes were new or merged."""
    incoming = INCOMING + remote.label + "/" + name
    try:
        if not _git_fetch(repo, remote, [f"+{SHARE_PREFIX}{name}:{incoming}"], missing_ok=True):
            return 0  # the other push held the lock to create it, and has not (or failed): just try again
        theirs = repo.read_ref(incoming)
        ours = repo.read_ref(SHARE_PREFIX + name)
        if theirs is None or ours is None:
            return 0
        _check_machine(repo, incoming, remote, name)
        if _is_ancestor(repo, theirs, ours):
            return 0
        return merge_copies(repo, SHARE_PREFIX + name, ours, theirs)
    finally:
        _delete_refs(repo, [incoming])


def _is_ancestor(repo: Repo, a: str, b: str) -> bool:
    import subprocess

    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=repo.root,
                          capture_output=True).returncode == 0


def merge_copies(repo: Repo, ref: str, ours: str, theirs: str) -> int:
    """Make REF a merge of two copies of one machine: every note of both; a note both have and that differs
    takes each field from the side that changed it last (`shared.times`; ours on a tie); transcripts ours
    where both have one. Returns how many notes came from THEIRS. REF moves only if it still is OURS."""
    from ..base.gitcmd import FastImport, cat_file

    mine, other = _notes(repo, ours), _notes(repo, theirs)
    take: dict[str, str | bytes] = {}
    both = [c for c in other if c in mine and mine[c] != other[c]]
    bodies = dict(zip([mine[c] for c in both] + [other[c] for c in both],
                      [o[1] if o else b"" for o in cat_file([mine[c] for c in both] + [other[c] for c in both],
                                                           repo.root)], strict=True))
    for commit, blob in other.items():
        if commit not in mine:
            take[commit] = blob
        elif mine[commit] != blob:
            merged = merge_notes(share._json(bodies[mine[commit]]), share._json(bodies[blob]))
            take[commit] = share.note_bytes(merged)
    their_files = share.transcript_blobs(repo, theirs)
    our_files = share.transcript_blobs(repo, ours)
    with FastImport(repo.root) as fi:
        fi.commit(ref, b"git-rewind share: merged another clone's copy of this machine\n", share._now(), mark=1,
                  parents=[ours, theirs])
        for commit, value in sorted(take.items()):
            if isinstance(value, bytes):
                fi.write(b"N inline " + commit.encode() + b"\n")
                fi.data(value)
            else:
                fi.write(b"N " + value.encode() + b" " + commit.encode() + b"\n")
        for session, blob in their_files.items():
            if session not in our_files:
                path = share.TRANSCRIPTS + session + ".jsonl"
                fi.write(b"M 100644 " + blob.encode() + b" " + path.encode() + b"\n")
        fi.write(b"\n")
        machine = fi.get_mark(1)
        fi.write(b"reset " + ref.encode() + b"\n\n")
    repo.move_refs({ref: machine}, {ref: ours})
    return len(take)


def merge_notes(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One checkpoint's two redacted notes as one: each field from the side whose `shared.times` says it
    changed it last (a field never changed counts from the note's creation); ours on a tie."""
    def times(note: dict[str, Any]) -> dict[str, str]:
        shared = note.get("shared")
        found = shared.get("times") if isinstance(shared, dict) else None
        return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}

    mine, other = times(ours), times(theirs)
    created = str(ours.get("created") or "")
    out: dict[str, Any] = {}
    for key in list(ours) + [k for k in theirs if k not in ours]:
        if key == "shared":
            continue
        if key in theirs and (key not in ours or other.get(key, created) > mine.get(key, created)):
            out[key] = theirs[key]
        else:
            out[key] = ours[key]
    shared = dict(ours.get("shared") or {}) if isinstance(ours.get("shared"), dict) else {}
    shared["times"] = {k: max(v for v in (mine.get(k), other.get(k)) if v) for k in set(mine) | set(other)}
    out["shared"] = shared
    return out


def _notes(repo: Repo, commit: str) -> dict[str, str]:
    """Annotated commit → note blob, in the notes tree of machine commit COMMIT."""
    out = repo.git(["ls-tree", "-r", "-z", commit])
    found = {}
    for entry in out.split(b"\0"):
        info, _, path = entry.partition(b"\t")
        name = path.decode(errors="replace").replace("/", "")
        if info and not path.startswith(share.TRANSCRIPTS.encode()) and _OID.fullmatch(name):
            found[name] = info.split()[2].decode()
    return found


# fetch -------------------------------------------------------------------------------------------


class Arrived:
    """What one machine's copy brought: its checkpoints, and what of it is new here (checkpoints, notes
    changed since the last fetch, transcripts new or grown)."""

    __slots__ = ("count", "new", "renoted", "transcripts")

    def __init__(self, repo: Repo, old: str | None, new: str) -> None:
        notes = _notes(repo, new)
        before = {} if old is None else notes if old == new else _notes(repo, old)
        self.count = len(notes)
        self.new = len(notes.keys() - before.keys())
        self.renoted = sum(1 for c, blob in notes.items() if c in before and before[c] != blob)
        if old == new:
            self.transcripts = 0
        else:
            theirs, ours = share.transcript_blobs(repo, new), share.transcript_blobs(repo, old) if old else {}
            self.transcripts = sum(1 for session, blob in theirs.items() if ours.get(session) != blob)

    def line(self) -> str:
        """`3 checkpoints (1 new, 2 updated notes, 1 transcript)`, or `(nothing new)`."""
        what = [f"{n} {word}{'s' * (n != 1)}" if word != "new" else f"{n} new"
                for n, word in ((self.new, "new"), (self.renoted, "updated note"), (self.transcripts, "transcript"))
                if n]
        return f"{self.count} checkpoint{'s' * (self.count != 1)} ({', '.join(what) or 'nothing new'})"


class Fetched:
    """What a fetch brought: per machine, what it has and what of it is new here."""

    __slots__ = ("remote", "machines", "authorship")

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.machines: dict[str, Arrived] = {}
        self.authorship = 0  # commits' authorship notes new here (commitnotes.py)


def _git_fetch(repo: Repo, remote: Remote, specs: list[str], missing_ok: bool = False) -> bool:
    """`git fetch` of SPECS, every object checked; False when MISSING_OK and the remote lacks the ref."""
    from ..base import gitcmd

    try:
        gitcmd.run(["-c", "transfer.fsckObjects=true", "fetch", "--no-tags", "--no-write-fetch-head",
                    "--no-recurse-submodules", "--quiet", "--", remote.given, *specs], cwd=repo.root)
    except gitcmd.GitError as exc:
        if missing_ok and "couldn't find remote ref" in exc.stderr:
            return False
        raise RewindError(f"fetch from {remote.given} failed: {_last_line(exc.stderr) or exc}") from None
    return True


def fetch(repo: Repo, given: str | None) -> Fetched:
    """Bring every machine's copy from the remote into `refs/notes/rewind-remote/<remote>/`, each checked
    first (notes that are JSON checkpoints, paths inside the repository, transcripts where copies keep
    them); one bad copy: nothing is let in."""
    settings = _settings(repo)
    remote = resolve(repo, given, settings)
    staging = INCOMING + remote.label + "/"
    _delete_refs(repo, _refs(repo, staging))  # a fetch killed earlier
    result = Fetched(remote)
    try:
        _git_fetch(repo, remote, [f"+{SHARE_PREFIX}*:{staging}*"])
        arrived = _refs(repo, staging)
        moves: dict[str, str | None] = {}
        old: dict[str, str | None] = {}
        for ref in arrived:
            name = ref[len(staging):]
            _check_machine(repo, ref, remote, name)
            oid = repo.read_ref(ref)
            assert oid is not None
            target = REMOTE_PREFIX + remote.label + "/" + name
            moves[target] = oid
            old[target] = repo.read_ref(target)
            result.machines[name] = Arrived(repo, old[target], oid)
        if moves:
            repo.git(["update-ref", "--stdin"], input="".join(
                f"update {ref} {new} {old[ref] or '0' * len(new or '')}\n" for ref, new in moves.items()).encode())
    finally:
        _delete_refs(repo, _refs(repo, staging))
    result.authorship = _fetch_authorship(repo, remote)
    return result


def _push_authorship(repo: Repo, remote: Remote) -> int:
    """The commits' authorship notes onto the remote's one ref (commitnotes.py), a fast-forward of what was
    fetched just before (moved meanwhile: fetched and laid again); how many it did not have so."""
    from ..store.authorship import NOTES_REF
    from . import commitnotes

    incoming = INCOMING + remote.label + "/authorship"
    reason = ""
    try:
        for _attempt in range(RETRIES):
            fetched = _git_fetch(repo, remote, [f"+{NOTES_REF}:{incoming}"], missing_ok=True)
            tip, count = commitnotes.copy_over(repo, repo.read_ref(incoming) if fetched else None)
            if tip is None:
                return 0
            status, reason = _push_once(repo, remote, tip, NOTES_REF, False)
            if status in ("ok", "up to date"):
                return count
            if status != "moved":
                break
    finally:
        _delete_refs(repo, _refs(repo, incoming))
    raise RewindError(f"push of the authorship notes to {remote.given} failed: {reason}")


def _fetch_authorship(repo: Repo, remote: Remote) -> int:
    """The remote's authorship notes of commits here that have none, let in (commitnotes.let_in); how many."""
    from ..store.authorship import NOTES_REF
    from . import commitnotes

    incoming = INCOMING + remote.label + "/authorship"
    try:
        if not _git_fetch(repo, remote, [f"+{NOTES_REF}:{incoming}"], missing_ok=True):
            return 0
        tip = repo.read_ref(incoming)
        return commitnotes.let_in(repo, tip, remote.given) if tip else 0
    finally:
        _delete_refs(repo, _refs(repo, incoming))


def _check_machine(repo: Repo, ref: str, remote: Remote, name: str) -> None:
    """A fetched copy is data anyone could have pushed: every note must be one of ours, about a commit, with
    paths inside a repository and its transcript only where copies keep them."""
    from ..base.config import _sync_name
    from ..base.gitcmd import cat_file
    from ..base.repo import check_session

    where = f"{remote.given}: machine {name}"
    try:
        _sync_name(name)
    except ValueError:
        raise RewindError(f"{where}: not a machine name; nothing was fetched") from None
    notes = _notes(repo, ref)
    objects = cat_file(list(notes.values()) + list(notes), repo.root)
    bodies, kinds = objects[:len(notes)], objects[len(notes):]
    for (commit, _), body, kind in zip(notes.items(), bodies, kinds, strict=True):
        what = f"{where}: the note of {commit[:12]}"
        if kind is None or kind[0] != "commit":
            raise RewindError(f"{what} is not about a commit; nothing was fetched")
        data = share._json(body[1]) if body is not None else {}
        if not data or not isinstance(data.get("seq"), int):
            raise RewindError(f"{what} is not a git-rewind note (not JSON with a seq); nothing was fetched")
        try:
            check_session(str(data.get("session") or ""))
        except RewindError:
            raise RewindError(f"{what} names no valid session; nothing was fetched") from None
        for path in _paths_of(data):
            if not _inside(path):
                raise RewindError(f"{what} names a path outside the repository: {path!r}; nothing was fetched")
        shared: dict[str, Any] = data["shared"] if isinstance(data.get("shared"), dict) else {}
        transcript = shared.get("transcript")
        if transcript is not None and transcript != f"{share.TRANSCRIPTS}{data['session']}.jsonl":
            raise RewindError(f"{what} names its transcript at {transcript!r}, not where copies keep them; "
                              f"nothing was fetched")


def _paths_of(data: dict[str, Any]) -> list[str]:
    named = data.get("named")
    listed: list[Any] = [*(data.get("paths") or []), *(named if isinstance(named, list) else [])]
    paths = [p for p in listed if isinstance(p, str)]
    if isinstance(data.get("origins"), dict):
        paths += list(data["origins"])
    shared = data.get("shared")
    if isinstance(shared, dict):
        paths += [p for p in shared.get("left_out") or [] if isinstance(p, str)]
    if any(not isinstance(p, str) for p in listed):
        paths.append("/")  # not a path at all
    return paths


def _inside(path: str) -> bool:
    """PATH is a repository-relative path: not absolute, no `..`, no `.git` component, no NUL."""
    if not path or "\0" in path or path.startswith("/") or "\\" in path or re.match(r"^[A-Za-z]:", path):
        return False
    parts = path.split("/")
    return not any(p in ("", ".", "..") or p.lower() == ".git" for p in parts)


def _refs(repo: Repo, prefix: str) -> list[str]:
    from ..base.gitobjects import refs_under

    return list(refs_under(repo, prefix))


def _delete_refs(repo: Repo, refs: list[str]) -> None:
    if refs:
        repo.git(["update-ref", "--stdin"], input="".join(f"delete {ref}\n" for ref in refs).encode(), check=False)


def label_of(repo: Repo, given: str) -> str:
    """The label what was fetched from GIVEN is kept under: GIVEN itself when copies are kept under that name
    (a remote since removed, say), else the remote's label."""
    if "/" not in given and _refs(repo, REMOTE_PREFIX + given + "/"):
        return given
    return resolve(repo, given, _settings(repo)).label


def fetched_from(repo: Repo, given: str) -> list[Checkpoint]:
    """`list --remote REMOTE`: the checkpoints fetched from it, oldest first."""
    from ..store.checkpoints import load_fetched

    return load_fetched(repo, label_of(repo, given))


def forget(repo: Repo, given: str, dry_run: bool = False) -> list[str]:
    """`gc --remote REMOTE`: drop what was fetched from REMOTE (its objects go at git's next gc); returns
    the machines dropped."""
    refs = _refs(repo, REMOTE_PREFIX + label_of(repo, given) + "/")
    if not dry_run:
        _delete_refs(repo, refs)
    return [ref[len(REMOTE_PREFIX):] for ref in refs]


def push_lines(done: Pushed) -> list[str]:
    """What `push` prints: what went, what was redacted and left out, where it went."""
    report = done.report
    lines = []
    what = []
    if report.copied:
        what.append(f"{report.copied} new checkpoint{'s' * (report.copied != 1)}")
    if report.renoted:
        what.append(f"{report.renoted} updated note{'s' * (report.renoted != 1)}")
    if report.transcripts:
        what.append(f"{len(report.transcripts)} transcript{'s' * (len(report.transcripts) != 1)}")
    ref = SHARE_PREFIX + done.name
    if done.sent:
        lines.append(f"pushed {', '.join(what) or 'the copy'} to {done.remote.given} ({ref})")
    elif what:
        lines.append(f"{', '.join(what)} copied; {done.remote.given} already had them ({ref})")
    else:
        lines.append(f"nothing new to push: {done.remote.given} has this machine's copy ({ref})")
    if done.merged:
        lines.append(f"merged {done.merged} note{'s' * (done.merged != 1)} another clone pushed as {done.name}")
    if report.redactions:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.redactions.items()))
        lines.append(f"redacted: {kinds}")
    for path, why in sorted(report.left_out.items()):
        lines.append(f"left out: {path} ({why}); --allow-secrets keeps such files")
    if done.authorship:
        lines.append(f"pushed {done.authorship} commit authorship note{'s' * (done.authorship != 1)} "
                     "(refs/notes/rewind-authorship)")
    return lines


def fetch_lines(done: Fetched) -> list[str]:
    """What `fetch` prints: per machine, its checkpoints and how many are new here."""
    more = [f"fetched {done.authorship} commit authorship note{'s' * (done.authorship != 1)} "
            "(refs/notes/rewind-authorship)"] if done.authorship else []
    if not done.machines:
        return [f"nothing to fetch: {done.remote.given} holds no git-rewind copies", *more]
    lines = []
    for name, arrived in sorted(done.machines.items()):
        lines.append(f"{done.remote.label}/{name}: {arrived.line()}")
    lines.append(f"ids: {done.remote.label}/<machine>/<seq>; `git rewind list --remote {done.remote.label}` "
                 "lists them")
    lines += more
    return lines


# status and the automatic push ------------------------------------------------------------------------


def _record(repo: Repo, remote: Remote, tip: str | None, error: str | None) -> None:
    """Keep the outcome of the last push (and when the last one that worked was) for `status`."""
    from ..base import minijson
    from ..base.clock import utc_now

    path = os.path.join(repo.share_dir, STATUS_FILE)
    data: dict[str, Any] = minijson.load_file(path)
    now = utc_now()
    data.update({"remote": remote.given, "attempt": now})
    if error is None:
        data.update({"ok": now, "error": None, "tip": tip})
    else:
        data["error"] = error
    os.makedirs(repo.share_dir, exist_ok=True)
    minijson.dump_file(path, data)


def last_sync(repo: Repo) -> dict[str, Any]:
    """What `status` shows of pushing: the remote, the last success, the last error (empty: never pushed)."""
    from ..base import minijson

    return minijson.load_file(os.path.join(repo.share_dir, STATUS_FILE))


def start_background_push(repo: Repo) -> None:
    """After a turn ends (sync_auto): a detached `git rewind push`, which never delays or fails the hook;
    its outcome goes to the sync status (and the log)."""
    import sys

    from ..base.gitcmd import detached

    log = os.path.join(repo.share_dir, layout.AUTO_PUSH_LOG)
    os.makedirs(repo.share_dir, exist_ok=True)
    detached([sys.executable, "-m", "git_rewind", "push", "--quiet"], repo.root, log)
