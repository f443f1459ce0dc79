"""`git rewind trace`: Agent Trace records of commits (from authorship notes) and of the work tree (from checkpoints).

Commit records are read from notes the tests write themselves with `git notes --ref refs/notes/rewind-authorship
add`, in the format store/authorship.py defines; the work tree's from checkpoints the real hook took for a
Claude Code-shaped session, with the person's edits between its turns. Every record printed is checked against
the Agent Trace schema (tests/samples/agent-trace/trace-record.json) with jsonschema, its formats checked too,
and every content hash is recomputed here from the lines git holds.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.session import Agent
from helpers.workdir import Run, Workdir

from git_rewind.store.authorship import NOTES_REF, Author, Authorship, Range

SCHEMA_FILE = Path(__file__).parent / "samples" / "agent-trace" / "trace-record.json"
FAST = {"GIT_REWIND_ANTI_SPAM_SECONDS": "0"}
CLAUDE = Author("agent", "claude-code", "sess-1", 4, None, "add logging", "Edit", "anthropic/claude-opus-4-5-20251101")
CODEX = Author("agent", "codex", "sess-2", 9, None, "write a test", "apply_patch", None)
PERSON = Author("person")
CLAUDE_LATER = Author("agent", "claude-code", "sess-1", 4, None, "and log more", "Edit",
                      "anthropic/claude-opus-4-5-20251101")  # CLAUDE's step, another prompt (a note may say so)


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def records(run: Run, validator: jsonschema.protocols.Validator) -> list[dict[str, Any]]:
    """The JSON Lines of a successful `trace`, each one valid against the schema."""
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" or run.stdout.endswith("\n")
    found = [json.loads(row) for row in run.stdout.splitlines()]
    for record in found:
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(record)]
        assert errors == [], errors
    return found


def annotate(w: Workdir, rev: str, authorship: Authorship) -> None:
    """REV's authorship note, written as the commit hook writes it."""
    note = w.path / ".git" / "authorship-note.json"
    note.write_text(authorship.dumps())
    w.git("notes", "--ref", NOTES_REF, "add", "-f", "-F", str(note), rev)
    note.unlink()


def expected_hash(lines: list[bytes]) -> str:
    """The spec's content_hash as git-rewind documents it, computed here on its own."""
    return "sha256:" + hashlib.sha256(b"".join(line.rstrip(b"\r") + b"\n" for line in lines)).hexdigest()


def lines_at(w: Workdir, rev: str, path: str) -> list[bytes]:
    import subprocess

    blob = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=w.path, env=w.env, capture_output=True, check=True)
    return blob.stdout.split(b"\n")[:-1] if blob.stdout.endswith(b"\n") else blob.stdout.split(b"\n")


def spans(record: dict[str, Any], path: str) -> list[tuple[str, str | None, int, int]]:
    """(contributor type, model, first, last) of each range of PATH, in line order."""
    (entry,) = [f for f in record["files"] if f["path"] == path]
    return sorted(((c["contributor"]["type"], c["contributor"].get("model_id"), r["start_line"], r["end_line"])
                   for c in entry["conversations"] for r in c["ranges"]), key=lambda row: row[2])


def check_hashes(record: dict[str, Any], lines_of: Any) -> int:
    """Every range's content_hash equals the hash of the lines LINES_OF(path) has there; how many were checked."""
    checked = 0
    for entry in record["files"]:
        lines = lines_of(entry["path"])
        for conversation in entry["conversations"]:
            for span in conversation["ranges"]:
                assert span["content_hash"] == expected_hash(lines[span["start_line"] - 1:span["end_line"]])
                checked += 1
    return checked


# Commits: records from authorship notes ----------------------------------------------------------------


@pytest.fixture
def two_commits(project: Workdir) -> tuple[Workdir, str, str]:
    """Two commits after `init`, each with its note: agents' and the person's lines mixed in one file, and CRLF."""
    w = project
    w.write("src/app.py", "import logging\nprint('hello')\nlog = logging.getLogger()\n# reviewed\nlog.info('x')\n")
    w.write("src/win.txt", b"one\r\ntwo\r\n")
    w.commit_all("logging")
    first = w.git("rev-parse", "HEAD").strip()
    annotate(w, first, Authorship({"src/app.py": [Range(1, 1, CLAUDE), Range(3, 3, CLAUDE), Range(4, 4, PERSON),
                                                  Range(5, 5, CLAUDE_LATER)],
                                   "src/win.txt": [Range(1, 2, PERSON)]}))
    w.write("tests/test_app.py", "def test_app():\n    assert True\n")
    w.commit_all("a test")
    second = w.git("rev-parse", "HEAD").strip()
    annotate(w, second, Authorship({"tests/test_app.py": [Range(1, 2, CODEX)]}))
    return w, first, second


def test_a_commit_record_says_who_wrote_each_line_its_note_names(two_commits: tuple[Workdir, str, str],
                                                                 validator: jsonschema.protocols.Validator) -> None:
    w, first, _second = two_commits
    (record,) = records(w.rewind("trace", first), validator)
    assert record["version"] == "0.1.0"
    assert record["vcs"] == {"type": "git", "revision": first}
    assert record["tool"]["name"] == "git-rewind"
    committed = int(w.git("show", "-s", "--format=%ct", first))
    assert record["timestamp"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(committed))
    assert [f["path"] for f in record["files"]] == ["src/app.py", "src/win.txt"]
    model = "anthropic/claude-opus-4-5-20251101"
    assert spans(record, "src/app.py") == [("ai", model, 1, 1), ("ai", model, 3, 3), ("human", None, 4, 4),
                                           ("ai", model, 5, 5)]
    # one conversation per agent session, one for the person: the session's three ranges together
    app = record["files"][0]["conversations"]
    assert [(c["contributor"]["type"], len(c["ranges"])) for c in app] == [("ai", 3), ("human", 1)]
    assert all("url" not in c for c in app)  # a session has no address to look it up at
    ours = record["metadata"]["git-rewind"]
    assert ours["commit"] == first
    assert ours["files"]["src/app.py"] == [[1, 1, 0], [3, 3, 0], [4, 4, 1], [5, 5, 0]]
    assert ours["authors"][0] == {"origin": "agent", "agent": "claude-code", "session": "sess-1", "seq": 4,
                                  "tool": "Edit", "model": model}  # the prompt stays out of every record
    assert ours["authors"][1] == {"origin": "person"}
    assert "add logging" not in json.dumps(record) and "log more" not in json.dumps(record)
    assert len(ours["authors"]) == 2  # an author is named once, whatever its prompt was


def test_content_hashes_are_of_the_lines_in_the_commit(two_commits: tuple[Workdir, str, str],
                                                       validator: jsonschema.protocols.Validator) -> None:
    """Recomputed from `git show REV:PATH`: CRLF lines hash as their LF twins, so moved code keeps its hash."""
    w, first, second = two_commits
    w.write("src/app.py", "changed in the work tree\n")  # the record reads the commit, never the work tree
    checked = 0
    for record in records(w.rewind("trace", first, second), validator):
        checked += check_hashes(record, lambda path, rev=record["vcs"]["revision"]: lines_at(w, rev, path))
    assert checked == 6
    (record,) = records(w.rewind("trace", first, "--", "src/win.txt"), validator)
    (span,) = record["files"][0]["conversations"][0]["ranges"]
    assert span["content_hash"] == expected_hash([b"one", b"two"])


def test_a_range_walks_as_git_log_does_and_a_rerun_prints_the_same_bytes(
        two_commits: tuple[Workdir, str, str], validator: jsonschema.protocols.Validator) -> None:
    w, first, second = two_commits
    before = (w.user_state(), w.git("for-each-ref"), sorted(p.name for p in (w.path / ".git").iterdir()))
    run = w.rewind("trace", "main~2..main")
    found = records(run, validator)
    assert [r["vcs"]["revision"] for r in found] == [second, first]  # newest first, as git log
    assert w.rewind("trace", "main~2..main").stdout == run.stdout  # same ids, same timestamps (the commits')
    for record in found:
        assert uuid.UUID(record["id"]).version == 5
    assert len({r["id"] for r in found}) == 2
    assert records(w.rewind("trace", "HEAD~1", "HEAD"), validator) == found[::-1]  # commits alone, as given
    assert w.ok("trace", "main..main") == ""  # an empty range: nothing, as git log prints nothing
    assert (w.user_state(), w.git("for-each-ref"), sorted(p.name for p in (w.path / ".git").iterdir())) == before


def test_a_commit_without_a_note_gets_no_record_and_one_line_on_stderr(
        two_commits: tuple[Workdir, str, str], validator: jsonschema.protocols.Validator) -> None:
    w, first, second = two_commits
    base = w.git("rev-parse", "HEAD~2").strip()
    run = w.rewind("trace", base, first)
    found = records(run, validator)
    assert [r["vcs"]["revision"] for r in found] == [first]
    assert run.stderr == f"warning: {base[:12]} has no authorship note (committed without git-rewind's commit hook, " \
                         "or before it was installed): no record\n"


def test_paths_after_dashes_limit_the_files_and_the_commits(two_commits: tuple[Workdir, str, str],
                                                            validator: jsonschema.protocols.Validator) -> None:
    w, first, second = two_commits
    found = records(w.rewind("trace", "main~2..main", "--", "app.py", cwd=w.path / "src"), validator)
    assert [(r["vcs"]["revision"], [f["path"] for f in r["files"]]) for r in found] == [(first, ["src/app.py"])]
    found = records(w.rewind("trace", "main~2..main", "--", "tests"), validator)
    assert [(r["vcs"]["revision"], [f["path"] for f in r["files"]]) for r in found] == [(second,
                                                                                         ["tests/test_app.py"])]


def test_a_merge_commit_is_traced_from_its_own_note(project: Workdir,
                                                    validator: jsonschema.protocols.Validator) -> None:
    w = project
    w.git("checkout", "-q", "-b", "side")
    w.write("side.txt", "from the side\n")
    w.commit_all("side")
    w.git("checkout", "-q", "main")
    w.write("main.txt", "on main\n")
    w.commit_all("main")
    w.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    w.write("side.txt", "from the side\nfixed in the merge\n")
    w.git("add", "side.txt")
    w.git("commit", "-q", "--amend", "--no-edit")
    merge = w.git("rev-parse", "HEAD").strip()
    annotate(w, merge, Authorship({"side.txt": [Range(2, 2, CLAUDE)]}))
    run = w.rewind("trace", "main~1..main")
    found = records(run, validator)
    assert [r["vcs"]["revision"] for r in found] == [merge]  # the merge, and side's commit said on stderr
    assert spans(found[0], "side.txt") == [("ai", "anthropic/claude-opus-4-5-20251101", 2, 2)]
    assert run.stderr.count("has no authorship note") == 1
    check_hashes(found[0], lambda path: lines_at(w, merge, path))


# The work tree: records from checkpoints, through blame ---------------------------------------------------


def test_the_work_tree_record_comes_from_the_checkpoints(agent_project: Workdir,
                                                         validator: jsonschema.protocols.Validator) -> None:
    """A session's turn, the person's edit, a second turn: the lines HEAD lacks, each with who wrote it."""
    w = agent_project
    w.write("src/app.py", "import sys\nprint('hello')\n")
    w.commit_all("two lines")
    w.write("draft.txt", "written before any checkpoint\n")
    agent = Agent(w, env=FAST)
    agent.prompt("add logging")
    agent.edit("src/app.py", "print('hello')", "log('start')\nprint('hello')")
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello')\n")
    agent.stop()
    w.write("src/app.py", "import sys\nlog('start')\nprint('hello')\n# reviewed\n")  # the person
    agent.prompt("now write a test", prompt_id="prompt-2")
    agent.write("tests/test_app.py", "def test_app():\n    assert True\n")
    w.write("tests/test_app.py", "def test_app():\n    assert True\n")
    agent.stop()
    before = w.user_state()

    run = w.rewind("trace")
    (record,) = records(run, validator)
    assert "vcs" not in record  # no commit holds these lines yet
    ours = record["metadata"]["git-rewind"]
    assert ours["work_tree"] is True and ours["head"] == w.git("rev-parse", "HEAD").strip()
    assert [f["path"] for f in record["files"]] == ["draft.txt", "src/app.py", "tests/test_app.py"]
    assert spans(record, "src/app.py") == [("ai", None, 2, 2), ("human", None, 4, 4)]  # line 1 and 3: HEAD's
    assert spans(record, "tests/test_app.py") == [("ai", None, 1, 2)]
    assert spans(record, "draft.txt") == [("human", None, 1, 1)]  # written outside any turn, before it

    # the same lines, and the same authors, as `git rewind blame` gives: one engine
    blamed = json.loads(w.ok("blame", "--json", "src/app.py"))
    origin = {"agent": "ai", "outside": "human"}
    for kind, _model, first, last in spans(record, "src/app.py"):
        assert {origin.get(blamed[n - 1]["origin"], "unknown") for n in range(first, last + 1)} == {kind}
    rows = {tuple(row[:2]): ours["authors"][row[2]] for row in ours["files"]["src/app.py"]}
    agent_line = blamed[1]
    assert rows[(2, 2)] == {"origin": "agent", "agent": "claude-code", "session": "sess-1",
                            "seq": agent_line["seq"], "checkpoint": checkpoint_of(w, agent_line["seq"]),
                            "tool": "Edit"}
    assert rows[(4, 4)] == {"origin": "person"}

    check_hashes(record, lambda path: (w.path / path).read_bytes().split(b"\n"))
    assert w.user_state() == before  # the index's bytes, HEAD, branches, status: untouched


def checkpoint_of(w: Workdir, seq: int) -> str:
    for row in w.git("notes", "--ref=rewind", "list").splitlines():
        commit = row.split()[1]
        if json.loads(w.git("notes", "--ref=rewind", "show", commit))["seq"] == seq:
            return commit
    raise AssertionError(f"no checkpoint #{seq}")


def test_the_work_tree_before_the_first_commit(repo: Workdir, validator: jsonschema.protocols.Validator) -> None:
    """No HEAD yet: every line is new, and the record names no HEAD."""
    w = repo
    w.write("a.txt", "one\r\ntwo\r\n")
    w.ok("snap")
    w.write("b.txt", "three\n")
    (record,) = records(w.rewind("trace"), validator)
    assert record["metadata"]["git-rewind"]["head"] is None
    assert [(f["path"], spans(record, f["path"])) for f in record["files"]] == [
        ("a.txt", [("human", None, 1, 2)]), ("b.txt", [("human", None, 1, 1)])]
    assert check_hashes(record, lambda path: (w.path / path).read_bytes().split(b"\n")) == 2


def test_the_work_tree_record_reads_one_patch_for_every_file_as_git_stores_them(
        repo: Workdir, validator: jsonschema.protocols.Validator) -> None:
    """One patch for every changed file: a name git would quote, CRLF lines, added lines that look like a patch's
    own headers, a binary file (no lines) and a deleted one (none either): each file's lines, and only them."""
    w = repo
    w.write("h\u00e9llo w\u00f6rld.txt", "a\r\n")
    w.write("plain.txt", "keep\n")
    w.write("gone.txt", "bye\n")
    w.write("data.bin", b"\0\1\2")
    w.commit_all("base")
    w.write("h\u00e9llo w\u00f6rld.txt", "a\r\n++ plus\r\n+++ b/plain.txt\r\n")
    w.write("plain.txt", "keep\n--- a/x\n@@ -1 +1 @@\n")
    (w.path / "gone.txt").unlink()
    w.write("data.bin", b"\0\1\2\3")
    w.ok("snap")
    (record,) = records(w.rewind("trace"), validator)
    assert [(f["path"], spans(record, f["path"])) for f in record["files"]] == [
        ("h\u00e9llo w\u00f6rld.txt", [("human", None, 2, 3)]), ("plain.txt", [("human", None, 2, 3)])]
    assert check_hashes(record, lambda path: (w.path / path).read_bytes().split(b"\n")) == 2


def test_commits_then_the_work_tree_with_uncommitted(two_commits: tuple[Workdir, str, str],
                                                   validator: jsonschema.protocols.Validator) -> None:
    w, first, second = two_commits
    w.ok("snap")
    w.write("src/app.py", "import logging\nprint('hello, world')\n")
    found = records(w.rewind("trace", second, "--uncommitted", "--", "src"), validator)
    assert len(found) == 1 and "vcs" not in found[0]  # the second commit touched nothing under src/
    assert spans(found[0], "src/app.py") == [("human", None, 2, 2)]
    found = records(w.rewind("trace", first, "--uncommitted"), validator)
    assert [r.get("vcs", {}).get("revision") for r in found] == [first, None]


# Errors: one line, nothing on stdout -------------------------------------------------------------------


def test_errors_are_one_line(two_commits: tuple[Workdir, str, str], tmp_path: Path) -> None:
    w, _first, _second = two_commits
    for args, message in [(("nope",), "error: unknown revision: nope\n"),
                          (("HEAD", "--", str(tmp_path)), f"error: path outside the working tree: {tmp_path}\n"),
                          ((), "error: no checkpoints yet in this work tree: nothing to trace its lines against; "
                               "take one with git rewind snap, or let an agent's hooks take them as it works "
                               "(git rewind install --agent NAME)\n")]:
        run = w.rewind("trace", *args)
        assert (run.returncode, run.stdout, run.stderr) == (1, "", message)


# The schema itself: a check that can fail -----------------------------------------------------------------


def test_the_schema_refuses_what_the_spec_refuses(validator: jsonschema.protocols.Validator) -> None:
    """The spec's minimal example passes; each field the spec does not allow, or a format it checks, fails."""
    good: dict[str, Any] = {"version": "0.1.0", "id": "550e8400-e29b-41d4-a716-446655440000",
                            "timestamp": "2026-01-25T10:00:00Z",
                            "files": [{"path": "src/app.ts", "conversations": [
                                {"contributor": {"type": "ai"}, "ranges": [{"start_line": 1, "end_line": 50}]}]}]}
    assert validator.is_valid(good)
    conversation = good["files"][0]["conversations"][0]
    for bad in ({**good, "timestamp": "yesterday"}, {**good, "id": "not-a-uuid"}, {**good, "version": "0.1"},
                {**good, "extra": 1}, {**good, "tool": {"name": "git-rewind"}},
                {**good, "files": [{"path": "a", "conversations": [{**conversation, "url": "not a uri"}]}]},
                {**good, "files": [{"path": "a", "conversations": [{**conversation, "session": "s"}]}]},
                {**good, "files": [{"path": "a", "conversations": [
                    {"contributor": {"type": "robot"}, "ranges": [{"start_line": 0, "end_line": 1}]}]}]}):
        assert not validator.is_valid(bad), bad
