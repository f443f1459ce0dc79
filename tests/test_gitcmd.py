"""gitcmd: fast-import questions asked in batches get the answers one round trip each would."""

from __future__ import annotations

import hashlib
import os

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
