"""Two-phase restores: the token a rewind's preview gives and its restore must hand back (the MCP server's).

An agent's preview and its restore are two independent calls: between them the person (or another agent) may
change a file the restore would overwrite, or the agent may restore something other than what it previewed. So
the preview returns a token bound to what the rewind is (`Binding`: kind, mode, target and end commits,
pathspecs, options, work tree) and to what it saw (`State`: the work tree's files as the tree a checkpoint's scan
gives, HEAD, the transcript a conversation rewind cuts), and the restore refuses, with nothing changed, unless it
is given that token and, under the work-tree lock, sees the same state again; it says what changed (`Refused`).

The token is opaque to the agent but verifiable here: `rw1.<payload>.<mac>`, the payload (base64url JSON: the
binding's digest and words, the state) signed with HMAC-SHA256 under a key of the repository's own (32 random
bytes in the store's `token-key`, mode 0600, made on first use). Without the MAC an agent could write a token
claiming any state (the tree id of the files as they are now is one `git write-tree` away) or edit one preview's
token into another target's; with it, only a preview by git-rewind in this repository makes one. The key is
readable by whatever runs as the person, the agent's shell included: the token guards against a careless or
confused agent (a made-up, altered, reused or mismatched token), not against a process that sets out to read
the key, which could as well write the files itself.

The preview's tree stays in git's object store (its scan admitted it; no ref names it), so a refusal diffs it
against the tree now to name the paths; `git gc` prunes such objects after two weeks (`gc.pruneExpire`), and
then the refusal says the preview is too old to compare. A token is single-use in effect: the restore changes
the state it names.

The target's own state is bound by its commit: a checkpoint deleted since the preview (or dropped by `gc`) is
refused as gone (`gone`), and one whose commit was rewritten since (deleting an older checkpoint of its session
rewrites the chain after it, as `gc` and `purge` do) as another rewind, even where its tree is the same: what
an agent-only undo or a revert takes back is worked out from the chain, so the agent previews again. A transcript
that only grew since the preview (what the preview saw is still its first bytes, word for word) is accepted: the
calling session's own grows as that agent talks, its preview call included, and the cut is at the same message;
what it also drops is kept whole in git like the rest (redo brings it back). One changed otherwise (rewritten,
compacted, cut) is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os

from ..base import layout
from ..base.errors import PREVIEW, UNKNOWN_ID, RewindError
from ..base.fsutil import read_regular, write_new

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.repo import Repo

VERSION = "rw1"
KEY_BYTES = 32
MAC_BYTES = 16  # of HMAC-SHA256's 32: 128 bits, and a token short enough for a model to copy
SHOWN = 5  # paths named in a refusal; the others are counted
UNCHANGED = "nothing changed"
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "type changed"}


class Refused(RewindError):
    """A restore refused for its token: missing, not this repository's, for another rewind, or the state it
    was given for is gone; nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}; {UNCHANGED}", remedy=PREVIEW)


class Binding:
    """What a rewind is, as its preview and its restore must agree on it."""

    __slots__ = ("fields", "words")

    def __init__(self, kind: str, mode: str, target: str, end: str | None, only: list[str], merge: bool,
                 fork: bool, worktree: str | None, words: str) -> None:
        self.fields = {"kind": kind, "mode": mode, "target": target, "end": end, "only": list(only),
                       "merge": merge, "fork": fork, "worktree": worktree}
        self.words = words  # how the refusal names it: `undo (code) to #5`

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.fields, sort_keys=True).encode()).hexdigest()[:32]


class State:
    """What a preview saw: the work tree's tree and HEAD (None: a conversation-only rewind leaves the files
    alone), and the transcript it would cut, as (size, SHA-256) (None: no conversation)."""

    __slots__ = ("tree", "head", "branch", "transcript")

    def __init__(self, tree: str | None, head: str | None = None, branch: str | None = None,
                 transcript: tuple[int, str] | None = None) -> None:
        self.tree = tree
        self.head = head
        self.branch = branch
        self.transcript = transcript

    @staticmethod
    def of_transcript(data: bytes | None) -> tuple[int, str] | None:
        return None if data is None else (len(data), hashlib.sha256(data).hexdigest())


# issuing and reading ---------------------------------------------------------------------------------------


def issue(repo: Repo, binding: Binding, state: State) -> str:
    """The token for a preview of BINDING that saw STATE."""
    size, digest = state.transcript if state.transcript is not None else (None, None)
    payload = [binding.digest(), binding.words, binding.fields["target"], state.tree, state.head, state.branch,
               size, digest]
    body = f"{VERSION}.{_b64(json.dumps(payload, separators=(',', ':')).encode())}"
    return f"{body}.{_b64(_mac(repo, body))}"


def read(repo: Repo, text: str | None, binding: Binding) -> State:
    """The state TEXT's preview saw, once TEXT is known to be this repository's token for BINDING; Refused
    otherwise (missing, malformed, altered or another repository's, or another rewind's). A target whose
    commit is not the preview's (the checkpoint's chain rewritten since: a checkpoint deleted, `gc`, `purge`)
    is another rewind: what it would restore may have changed too."""
    digest, words, target, tree, head, branch, size, sha = _payload(repo, text)
    if digest != binding.digest():
        if words != binding.words:
            raise Refused(f"the token is for {words}, not for {binding.words}")
        if target != binding.fields["target"]:
            raise Refused(f"the token is for {words} as the preview saw it, and that checkpoint was rewritten "
                          "since (a checkpoint of its session deleted, gc or purge)")
        raise Refused(f"the token is for {words} with other options (selective_files, agent_only, merge) or "
                      "in another work tree")
    return State(tree, head, branch, (size, sha) if size is not None else None)


def gone(repo: Repo, text: str | None, error: RewindError) -> RewindError:
    """What a restore says when the checkpoint it names cannot be found (ERROR): with a good token, that the
    checkpoint its preview named is gone since (deleted, or dropped by `gc`); else ERROR as it is."""
    try:
        words = _payload(repo, text)[1]
    except Refused:
        return error
    return RewindError(f"{words} was previewed, and that checkpoint is gone since (deleted, or dropped by gc): "
                       f"{error}; {UNCHANGED}", remedy=UNKNOWN_ID)


def _payload(repo: Repo, text: str | None) -> list[Any]:
    """TEXT's payload, once its MAC is this repository's; Refused otherwise."""
    if not text or not text.strip():
        raise Refused("no token: a restore goes in two steps, a preview that gives a token, then the restore "
                      "with it")
    body, _dot, mac = text.strip().rpartition(".")
    try:
        good = body.startswith(VERSION + ".") and hmac.compare_digest(_unb64(mac), _mac(repo, body))
        payload = json.loads(_unb64(body[len(VERSION) + 1:])) if good else None
    except (ValueError, UnicodeDecodeError):
        good, payload = False, None
    if not good or not isinstance(payload, list) or len(payload) != 8:
        raise Refused("the token is not one a preview in this repository gave (altered, made up, or from "
                      "another repository)")
    return payload


# comparing ---------------------------------------------------------------------------------------------------


def check_files(repo: Repo, seen: State, tree: str, head: tuple[str | None, str | None]) -> None:
    """Refused when TREE (the work tree now, scanned under the lock) or HEAD is not what the preview saw:
    the paths that changed (the first SHOWN and a count), and where HEAD went."""
    if seen.tree is None:  # a conversation-only rewind: the files are left alone
        return
    reasons = []
    if tree != seen.tree:
        reasons.append(_files_changed(repo, seen.tree, tree))
    if (seen.head, seen.branch) != tuple(head):
        reasons.append(f"HEAD moved since the preview, from {_where(seen.head, seen.branch)} to "
                       f"{_where(*head)}")
    if reasons:
        raise Refused("; ".join(reasons))


def check_transcript(seen: State, data: bytes | None) -> None:
    """Refused when the transcript a conversation rewind would cut (DATA, read now) is not the preview's, or
    the preview's followed by more (the agent went on talking: the cut is where the preview said)."""
    now = State.of_transcript(data)
    if now == seen.transcript:
        return
    if seen.transcript is None or data is None:
        raise Refused("the conversation's transcript is not the one the preview saw")
    size, sha = seen.transcript
    if len(data) > size and hashlib.sha256(data[:size]).hexdigest() == sha:
        return
    raise Refused("the conversation's transcript changed since the preview")


def _files_changed(repo: Repo, before: str, after: str) -> str:
    from ..base.gitcmd import GitError
    from ..base.note import Oid
    from ..store.snapshot import changed_paths

    try:
        changed = changed_paths(repo, Oid(before), Oid(after))
    except GitError:  # the preview's tree is gone: pruned by git gc (two weeks after, by default)
        return ("the work tree changed since the preview, which is too old to say how (its state is no longer "
                "in git's object store)")
    shown = ", ".join(f"{_STATUS.get(status[:1], status)} {path}" for status, path in changed[:SHOWN])
    more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
    count = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    return f"the work tree changed since the preview, {count}: {shown}{more}"


def _where(head: str | None, branch: str | None) -> str:
    commit = head[:7] if head else "no commit"
    return f"{commit} on {branch}" if branch else f"{commit} (detached)"


# the key -------------------------------------------------------------------------------------------------------


def _mac(repo: Repo, body: str) -> bytes:
    return hmac.new(key(repo), body.encode(), hashlib.sha256).digest()[:MAC_BYTES]


def key(repo: Repo) -> bytes:
    """The repository's token key, made on first use (two processes making it at once agree: the first link
    wins and the other reads it)."""
    path = os.path.join(repo.store_dir, layout.TOKEN_KEY)
    try:
        data = read_regular(path, nofollow=True)
    except FileNotFoundError:
        repo.ensure_dirs()
        try:
            write_new(path, os.urandom(KEY_BYTES))
        except FileExistsError:
            pass
        data = read_regular(path, nofollow=True)
    if len(data) != KEY_BYTES:
        raise RewindError(f"{path} is not a key git-rewind made ({len(data)} bytes); remove it and preview again")
    return data


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
