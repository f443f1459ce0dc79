"""gitcmd: fast-import questions asked in batches get the answers one round trip each would; a long-lived
`git update-ref --stdin` runs one checked transaction after another."""

from __future__ import annotations

import hashlib
import os

import pytest
from helpers.workdir import Workdir


def test_ls_many_and_get_marks_answer_in_order_past_the_pipe_size(repo: Workdir, git_environ: dict[str, str]) -> None:
    from git_rewind.base.gitcmd import FastImport

    w = repo
    long_dir = "d" * 200
    for i in range(30):
        w.write(f"{long_dir}/f{i}.txt", f"{i}\n")
    w.commit_all("files")
    head = w.git("rev-parse", "HEAD").strip()
    # 3,000 questions with 200-byte paths: about 800 KiB of answers, far more than a pipe holds.
    questions = [(head, os.fsencode(f"{long_dir}/f{i % 40}.txt")) for i in range(3000)]
    with FastImport(str(w.path)) as fi:
        many = fi.ls_many(questions)
        one_by_one = [fi.ls(head, os.fsencode(f"{long_dir}/f{i}.txt")) for i in range(40)]
        fi.abort()
    assert many == one_by_one * 75
    assert one_by_one[30:] == [None] * 10
    assert one_by_one[3] == (0o100644, w.git("rev-parse", f"HEAD:{long_dir}/f3.txt").strip())

    with FastImport(str(w.path)) as fi:
        for mark in range(1, 901):
            fi.write(b"blob\nmark :%d\n" % mark)
            fi.data(b"%d\n" % mark)
        oids = fi.get_marks(list(range(1, 901)))
        assert oids[:3] == [fi.get_mark(1), fi.get_mark(2), fi.get_mark(3)]
        fi.abort()
    assert len(set(oids)) == 900 and oids[41] == hashlib.sha1(b"blob 3\0" + b"42\n").hexdigest()


def test_a_stream_past_the_unpack_limit_keeps_a_pack_of_whole_objects(repo: Workdir,
                                                                      git_environ: dict[str, str]) -> None:
    """fast-import runs with --depth=0: 150 near-identical blobs (each one a delta of the one before, were deltas
    made) stay a pack of whole objects, each readable by git as written."""
    from git_rewind.base.gitcmd import FastImport

    w = repo
    body = b"".join(b"line %d of a file that changes a little from one blob to the next\n" % i for i in range(200))
    with FastImport(str(w.path)) as fi:
        for mark in range(1, 151):
            fi.write(b"blob\nmark :%d\n" % mark)
            fi.data(body + b"%d\n" % mark)
        oids = fi.get_marks(list(range(1, 151)))
    packs = [p for p in os.listdir(w.path / ".git/objects/pack") if p.endswith(".idx")]
    assert len(packs) == 1, "150 objects: over the unpack limit, kept as a pack"
    listing = w.git("verify-pack", "-v", str(w.path / ".git/objects/pack" / packs[0]))
    assert "non delta: 150 objects" in listing and "chain length" not in listing
    assert w.git("cat-file", "blob", oids[76]).encode() == body + b"77\n"


def test_a_long_lived_update_ref_runs_transaction_after_transaction_and_refuses_a_stale_one(
        repo: Workdir, git_environ: dict[str, str]) -> None:
    """RefUpdates: one `git update-ref --stdin` for many transactions, each checked against the old values: a
    stale one moves no ref and raises, and the next one starts a new process and works."""
    from git_rewind.base.gitcmd import GitError, RefUpdates

    w = repo
    w.write("f", "1\n")
    w.commit_all("one")
    one = w.git("rev-parse", "HEAD").strip()
    w.write("f", "2\n")
    w.commit_all("two")
    two = w.git("rev-parse", "HEAD").strip()
    updates = RefUpdates(str(w.path))
    zero = "0" * 40
    updates.transaction(f"update refs/rewind/s {one} {zero}\nupdate refs/notes/rewind {one} {zero}\n".encode())
    first = updates._proc
    updates.transaction(f"update refs/rewind/s {two} {one}\nupdate refs/notes/rewind {two} {one}\n".encode())
    assert updates._proc is first, "the same process served both"
    with pytest.raises(GitError):  # refs/rewind/s is at TWO now: all or nothing, so neither moves
        updates.transaction(f"update refs/rewind/s {one} {two}\nupdate refs/notes/rewind {one} {one}\n".encode())
    assert w.git("rev-parse", "refs/rewind/s", "refs/notes/rewind").split() == [two, two]
    assert not list((w.path / ".git").rglob("*.lock"))
    updates.transaction(f"update refs/rewind/s {one} {two}\nupdate refs/notes/rewind {one} {two}\n".encode())
    assert w.git("rev-parse", "refs/rewind/s", "refs/notes/rewind").split() == [one, one]
    # Killed between two transactions (by anyone): the next one starts another and moves both refs.
    assert updates._proc is not None
    updates._proc.kill()
    updates._proc.wait()
    updates.transaction(f"update refs/rewind/s {two} {one}\nupdate refs/notes/rewind {two} {one}\n".encode())
    assert w.git("rev-parse", "refs/rewind/s", "refs/notes/rewind").split() == [two, two]
    updates.close()
