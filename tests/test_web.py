"""`git rewind web`: the real command on real repositories, spoken to over HTTP as the page and as an attacker."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.samples import CLAUDE_SAMPLES
from helpers.session import MAIN, PROMPT_ID, Agent
from helpers.webserver import Served
from helpers.workdir import Workdir

from git_rewind import agents
from git_rewind.faces.web.static import Files
from git_rewind.store.checkpoints import Checkpoint

Serve = Callable[..., Served]
PAGE_DIR = Path(__file__).resolve().parent.parent / "git_rewind" / "resources" / "web"


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start `git rewind web` in a work tree; every server still running is stopped after the test."""
    started: list[Served] = []

    def start(w: Workdir, *args: str) -> Served:
        server = Served(w, *args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def snaps(w: Workdir) -> Workdir:
    """W with three checkpoints of src/app.py growing, and the working tree changed since."""
    for n in (1, 2, 3):
        w.write("src/app.py", "".join(f"print({i})\n" for i in range(n + 1)))
        w.ok("snap", "-m", f"step {n}")
    w.write("src/app.py", "print('now')\n")
    return w


# the command ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_it_prints_the_url_first_and_a_signal_stops_it_cleanly(project: Workdir, serve: Serve, signum: int) -> None:
    server = serve(project)
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/#launch=") and len(server.url.split("=")[1]) >= 40
    info = server.get("/api/info")
    assert info["name"] == "repo"
    # what the empty page names: every agent the registry knows
    assert info["agents"] == {"install": [n for n in agents.NAMES if n != "aider"], "watch": ["aider"]}
    stream = server.events()  # a page still listening does not keep it from stopping
    status, err = server.stop(signum)
    stream.close()
    assert status == 0
    assert "Traceback" not in err and "Error" not in err


def test_each_run_has_its_own_token_and_a_port_in_use_is_one_line(project: Workdir, serve: Serve) -> None:
    first = serve(project)
    second = serve(project)
    assert second.token != first.token
    assert second.request("GET", "/api/info", header=first.token).status == 403  # a tab of an earlier run
    taken = project.rewind("web", "--no-open", "--port", str(first.port))
    assert taken.returncode != 0 and taken.stdout == ""
    assert taken.stderr == f"error: cannot listen on 127.0.0.1:{first.port}: Address already in use\n"


# security ------------------------------------------------------------------------------------------


def test_the_page_holds_no_secret_and_sets_no_cookie(project: Workdir, serve: Serve) -> None:
    """A browser sends 127.0.0.1's cookies to every port of it: nothing secret may ride in one, nor in the page."""
    server = serve(project)
    page = server.request("GET", "/", header=None)
    assert page.status == 200 and "set-cookie" not in page.headers
    assert server.launch not in page.text and server.token not in page.text
    assert page.headers["content-security-policy"] == "default-src 'self'; style-src 'self' 'unsafe-inline'"
    assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    assert server.request("GET", "/static/app.js", header=None).status == 200  # the shipped files: public
    for path in ("/api/session", "/api/info", "/api/undo"):
        assert "set-cookie" not in server.request("GET", path).headers


def test_a_link_opens_one_tab_once_and_the_next_link_is_printed(project: Workdir, serve: Serve) -> None:
    server = serve(project)
    used = server.url.rsplit("#launch=", 1)[1]
    again = server.exchange(used)  # the first link, found later in the browser's history or the terminal
    assert again.status == 403 and "used already" in again.json()["error"] and "token" not in again.json()
    for wrong in ("", "x" * 43, server.token):
        assert server.exchange(wrong).status == 403, wrong
    foreign = server.request("POST", "/api/session", body={"launch": server.launch}, header=None,
                             origin="http://127.0.0.1:1")
    assert foreign.status == 403 and foreign.text.startswith("refused:")
    second = server.open_tab()  # the newest printed link opens another tab, with a credential of its own
    assert second != server.token and server.launch not in (used, second)
    for credential in (server.token, second):
        assert server.request("GET", "/api/info", header=credential).status == 200


def test_the_api_wants_a_tabs_credential_in_a_header_never_a_cookie(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w)
    assert server.request("GET", "/api/info").status == 200
    assert server.request("GET", "/api/info").headers["cache-control"] == "no-store"
    cookie = {"Cookie": f"rewind_token={server.token}"}
    for header, extra in ((None, None), (None, cookie), ("wrong", None), (server.launch, None), (server.url, None)):
        refused = server.request("GET", "/api/checkpoints", header=header, extra=extra)
        assert refused.status == 403, (header, extra)
        assert refused.text.startswith("refused:") and refused.text.count("\n") == 1
    before = w.state()
    undo = {"id": "1", "mode": "code"}
    assert server.request("POST", "/api/undo", body=undo, header=None, extra=cookie).status == 403
    assert server.request("POST", "/api/undo", body=undo, header=server.launch).status == 403
    assert w.state() == before
    for query in ("", "?token=wrong", f"?token={server.launch}"):
        assert server.request("GET", f"/api/events{query}", header=None).status == 403, query
    assert server.request("GET", f"/api/info?token={server.token}", header=None).status == 403  # events only


def test_a_foreign_host_is_refused(project: Workdir, serve: Serve) -> None:
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own name as Host."""
    server = serve(project)
    port = server.port
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", f"localhost.:{port}"):
        assert server.request("GET", "/api/info", host=host).status == 403, host
        assert server.request("GET", "/", host=host).status == 403, host
    assert server.request("GET", "/api/info", host=f"localhost:{server.port}").status == 200


def test_a_change_must_come_from_the_page_by_post(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w)
    before = w.state()
    undo = {"id": "1", "mode": "code"}
    assert server.request("POST", "/api/undo", body=undo, origin="http://evil.example").status == 403
    assert server.request("POST", "/api/undo", body=undo, origin=f"http://localhost:{server.port + 1}").status == 403
    assert server.request("POST", "/api/undo", body=undo, origin=None).status == 403
    assert server.request("GET", "/api/undo?id=1").status == 405
    form = server.request("POST", "/api/undo", body=b"id=1", content_type="application/x-www-form-urlencoded")
    assert form.status == 400 and "JSON" in form.json()["error"]
    assert w.state() == before
    assert len(json.loads(w.ok("list", "--json", "-n", "0", "--safety"))) == 3  # no safety checkpoint either


def test_paths_outside_the_work_tree_are_refused(project: Workdir, serve: Serve, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("the secret outside\n")
    os.symlink(secret, project.path / "outside-link")
    os.symlink(tmp_path, project.path / "outside-dir")
    project.ok("snap", "-m", "with links")
    server = serve(project)
    for ident in ("1", "worktree"):
        for path in ("../outside.txt", "src/../../outside.txt", "/etc/passwd", str(secret), ".git/config",
                     ".git/HEAD", "outside-link", "outside-dir/outside.txt", ""):
            reply = server.request("GET", f"/api/file/{ident}?path={path}")
            assert reply.status in (400, 404), (ident, path, reply.status)
            assert b"the secret outside" not in reply.body and set(reply.json()) == {"error"}
    assert server.request("GET", "/api/file/worktree?path=.env").status == 404  # ignored: never captured
    assert server.request("GET", "/api/diff?from=1&to=worktree&path=../x").status == 400
    for path in ("/static/../cli.py", "/static/..%2f..%2fcli.py", "/static/%2e%2e/web/app.py",
                 "/static/../../.git/config"):
        reply = server.request("GET", path)
        assert reply.status == 404 and b"import" not in reply.body and b"[core]" not in reply.body, path
    unknown = server.request("GET", "/api/checkpoints/99")
    assert unknown.status == 404 and "unknown checkpoint" in unknown.json()["error"]
    assert unknown.json()["error"].endswith("; pick one from the page's list")  # what to do next, in its words
    assert server.request("GET", "/api/diff?from=nope").status == 404


def test_read_only_refuses_every_post_and_changes_nothing(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w, "--read-only")
    assert server.get("/api/info")["read_only"] is True
    before, index = w.state(), w.user_state()
    for path, body in (("/api/undo", {"id": "1"}), ("/api/undo", {"id": "1", "dry_run": True}),
                       ("/api/revert", {"id": "1"}), ("/api/restore-file", {"id": "1", "path": "src/app.py"}),
                       ("/api/tags", {"id": "1", "add": ["x"]})):
        reply = server.post(path, body)
        assert reply.status == 403 and "read-only" in reply.text, path
    assert w.state() == before and w.user_state() == index
    assert json.loads(w.ok("show", "1", "--json"))["tags"] == []
    assert len(json.loads(w.ok("list", "--json", "-n", "0", "--safety"))) == 3


# reading -------------------------------------------------------------------------------------------


def test_an_empty_repository(repo: Workdir, serve: Serve) -> None:
    server = serve(repo)
    info = server.get("/api/info")
    assert info["count"] == 0 and info["head"] is None and info["branch"] == "main" and info["read_only"] is False
    assert info["repo"] == str(repo.path) and info["worktree"] is None
    assert server.get("/api/checkpoints") == {"total": 0, "offset": 0, "safety_hidden": 0, "items": [], "sessions": []}
    assert server.request("GET", "/api/checkpoints/@").status == 404


def test_the_list_is_git_rewind_list(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    w.write("src/other.py", "x = 1\n")
    w.ok("snap", "-m", "other session", "--session", "second")
    server = serve(w)
    listed = json.loads(w.ok("list", "--json", "-n", "0"))
    got = server.get("/api/checkpoints")
    assert got["total"] == len(listed) == 4
    assert [(i["seq"], i["commit"], i["session"], i["message"], i["paths"], i["created"]) for i in got["items"]] == \
        [(c["seq"], c["commit"], c["session"], c["message"], c["paths"], c["created"]) for c in listed]
    assert {s["session"]: s["count"] for s in got["sessions"]} == {"manual": 3, "second": 1}
    page = server.get("/api/checkpoints?offset=1&limit=2")
    assert [i["seq"] for i in page["items"]] == [3, 2] and page["total"] == 4
    assert server.request("GET", "/api/checkpoints?limit=lots").status == 400
    assert server.get("/api/info")["count"] == 4


def test_the_filters_are_git_rewind_lists(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    w.write("docs/guide.md", "# guide\n")
    w.ok("snap", "-m", "write the guide", "--session", "docs")
    w.ok("tag", "2", "good")
    server = serve(w)
    cases = (("q=GUIDE", ["--grep", "GUIDE"]), ("q=step+2&q=step+3", ["--grep", "step 2", "--grep", "step 3"]),
             ("path=docs", ["--path", "docs"]), ("path=src/app.py", ["--path", "src/app.py"]),
             ("tag=good", ["--tag", "good"]), ("agent=manual", ["--agent", "manual"]),
             ("session=docs", ["--session", "docs"]), ("since=1+hour+ago", ["--since", "1 hour ago"]),
             ("until=1+hour+ago", ["--until", "1 hour ago"]),
             ("tag=good&q=guide", ["--tag", "good", "--grep", "guide"]))
    for query, options in cases:
        listed = [c["seq"] for c in json.loads(w.ok("list", "--json", "-n", "0", *options))]
        got = server.get(f"/api/checkpoints?{query}")
        assert [i["seq"] for i in got["items"]] == listed and got["total"] == len(listed), query
        assert len(got["sessions"]) == 2  # the lanes: every session, whatever the filters
    assert [i["seq"] for i in server.get("/api/checkpoints?q=guide")["items"]] == [4]
    assert [i["seq"] for i in server.get("/api/checkpoints?q=step&offset=1&limit=1")["items"]] == [2]  # paged
    w.ok("snap", "-m", "step 4")  # the store moved: the kept selection is not used again
    steps = server.get("/api/checkpoints?q=step&limit=2")
    assert [i["seq"] for i in steps["items"]] == [5, 3] and steps["total"] == 4
    bad = server.request("GET", "/api/checkpoints?path=../elsewhere")
    assert bad.status == 400 and "not a path inside" in bad.json()["error"]


def test_a_checkpoints_detail_is_git_rewind_show(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w)
    shown = json.loads(w.ok("show", "3", "--json"))
    detail = server.get("/api/checkpoints/3")
    assert detail["commit"] == shown["commit"] and detail["parent"] == 2
    assert detail["note"] == {k: v for k, v in shown.items() if k not in ("commit", "parent", "stat", "id")}
    assert shown["id"] == "3"
    assert server.get("/api/checkpoints/@")["seq"] == 3 and server.get("/api/checkpoints/@~2")["seq"] == 1
    assert server.get("/api/checkpoints/@%7Bnow%7D")["seq"] == 3  # @{DATE}, as the CLI reads it
    assert server.get(f"/api/checkpoints/{shown['commit'][:8]}")["seq"] == 3
    assert server.get("/api/checkpoints/1")["parent"] is None


def _git_diff_lines(w: Workdir, old: str, new: str) -> list[str]:
    """The +, - and context lines of `git diff OLD NEW`, as git prints them."""
    out = w.git("diff", "-M", old, new)
    return [line for line in out.splitlines()
            if line[:1] in "+- " and not line.startswith(("+++ ", "--- "))]


def _api_lines(files: list[dict[str, object]]) -> list[str]:
    import html
    import re

    lines = []
    for f in files:
        for hunk in f["hunks"]:  # type: ignore[attr-defined]
            for line in hunk["lines"]:
                lines.append(line["kind"] + html.unescape(re.sub(r"<[^>]+>", "", line["html"])))
    return lines


def test_the_diff_is_git_diff(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    w.git("mv", "README.md", "README.txt")  # a rename, found by git
    w.write("README.txt", "# demo\nmore\n")
    w.ok("snap", "-m", "renamed")
    server = serve(w)
    commits = {c["seq"]: c["commit"] for c in json.loads(w.ok("list", "--json", "-n", "0", "--safety"))}
    for query, old, new in (("from=1&to=3", commits[1], commits[3]), ("from=3", commits[2], commits[3]),
                            ("from=2&to=4", commits[2], commits[4])):
        got = server.get(f"/api/diff?{query}")
        assert _api_lines(got["files"]) == _git_diff_lines(w, old, new), query
    renamed = server.get("/api/diff?from=4")
    assert [(f["status"], f["old_path"], f["path"], f["additions"]) for f in renamed["files"]] == \
        [("R", "README.md", "README.txt", 1), ("M", None, "src/app.py", 1)]
    assert renamed["from"] == {"seq": 3, "commit": commits[3]} and renamed["to"] == {"seq": 4, "commit": commits[4]}
    now = server.get("/api/diff?from=3&to=worktree")
    assert now["to"] == {"worktree": True}
    assert [(f["status"], f["path"]) for f in now["files"]] == [("R", "README.txt"), ("M", "src/app.py")]
    assert now["files"][1]["hunks"][0]["lines"][-1]["html"].startswith("<span class=\"nb\">print")  # Pygments' classes
    only = server.get("/api/diff?from=1&to=4&path=src")
    assert [f["path"] for f in only["files"]] == ["src/app.py"]


def test_binary_and_huge_files_come_without_lines(project: Workdir, serve: Serve) -> None:
    project.write("blob.bin", b"\0\1\2binary")
    project.write("huge.txt", "x" * 100 + "\n" * 0 + ("line\n" * 220_000))  # > 1 MiB of text
    project.ok("snap", "-m", "big ones")
    project.write("blob.bin", b"\0\1\3binary")
    project.write("huge.txt", "changed\n" + "line\n" * 220_000)
    project.ok("snap", "-m", "changed")
    server = serve(project)
    files = {f["path"]: f for f in server.get("/api/diff?from=2")["files"]}
    assert files["blob.bin"]["binary"] is True and files["blob.bin"]["hunks"] == []
    assert files["huge.txt"]["too_large"] is True and files["huge.txt"]["binary"] is False
    assert files["huge.txt"]["hunks"] == []
    huge = server.get("/api/file/2?path=huge.txt")
    assert huge["too_large"] is True and huge["lines"] == [] and huge["size"] > 1 << 20
    binary = server.get("/api/file/2?path=blob.bin")
    assert binary["binary"] is True and binary["lines"] == []
    tree = {f["path"]: f for f in server.get("/api/tree/2")["files"]}
    assert tree["huge.txt"]["size"] == huge["size"] and tree["bin/run.sh"]["mode"] == "100755"
    assert ".env" not in tree and "debug.log" not in tree  # ignored: never in a checkpoint
    readme = server.get("/api/file/worktree?path=README.md")
    assert readme["lines"] == ["<span class=\"gh\"># demo</span>"] and readme["binary"] is False


# changing ------------------------------------------------------------------------------------------


def test_an_undo_from_the_page_is_the_cli_undo(project: Workdir, serve: Serve, tmp_path: Path) -> None:
    w = snaps(project)
    twin = Workdir(tmp_path / "twin", w.env)
    shutil.copytree(w.path, twin.path, symlinks=True)
    server = serve(w)
    before, user = w.state(), w.user_state()
    preview = server.post("/api/undo", {"id": "1", "mode": "code", "dry_run": True})
    assert preview.status == 200
    dry = preview.json()
    assert dry["dry_run"] is True and dry["write"] == ["src/app.py"] and dry["remove"] == []
    named = dry["target_checkpoint"]["named"]  # the checkpoint it restores, named as the CLI names it
    assert named.startswith("undo to #1 (manual, ") and dry["text"].splitlines()[0] == named
    cli = w.rewind("undo", "1", "--dry-run")  # the same lines, any warnings (on stderr) last
    assert dry["text"] == (cli.stdout + cli.stderr).rstrip("\n")
    assert json.loads(w.ok("undo", "1", "--dry-run", "--json")) == dry  # and the same JSON
    assert w.state() == before and w.user_state() == user  # the dry run changed no byte
    assert len(json.loads(w.ok("list", "--json", "-n", "0", "--safety"))) == 3
    done = server.post("/api/undo", {"id": "1", "mode": "code"})
    assert done.status == 200, done.text
    result = done.json()
    twinned = json.loads(twin.ok("undo", "1", "--yes", "--json"))
    assert w.state() == twin.state()
    assert {**twinned, "text": None} == {**result, "text": None}  # the CLI's result JSON is the page's
    assert twinned["text"].replace(twin.git("rev-parse", "refs/rewind/manual").strip()[:7], "") == \
        result["text"].replace(w.git("rev-parse", "refs/rewind/manual").strip()[:7], "")
    assert (w.path / "src/app.py").read_text() == "print(0)\nprint(1)\n"
    safety = json.loads(w.ok("show", str(result["safety_checkpoint"]), "--json"))
    assert safety["trigger"] == "pre-rewind" and safety["rewind"]["to"] == 1
    assert w.git("show", f"{safety['commit']}:src/app.py") == "print('now')\n"  # nothing lost
    assert "\nrestored #1: 1 written, 0 removed (verified)" in result["text"]
    line = f"safety checkpoint #{result['safety_checkpoint']} {safety['commit'][:7]} (git rewind redo goes back)"
    assert line in result["text"]
    assert w.user_state()[0] == user[0]  # the user's index is untouched
    w.ok("redo", "--yes")
    assert (w.path / "src/app.py").read_text() == "print('now')\n"
    # The list leaves the two safety checkpoints out, as `git rewind list` does, unless asked for them.
    listed = server.get("/api/checkpoints")
    assert [i["seq"] for i in listed["items"]] == [3, 2, 1] and listed["total"] == 3 and listed["safety_hidden"] == 2
    every = server.get("/api/checkpoints?safety=1")
    assert [i["seq"] for i in every["items"]] == [5, 4, 3, 2, 1] and every["safety_hidden"] == 0


def test_restore_one_file_and_revert(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    w.write("README.md", "# changed too\n")
    server = serve(w)
    restored = server.post("/api/restore-file", {"id": "2", "path": "src/app.py"})
    assert restored.status == 200, restored.text
    assert (w.path / "src/app.py").read_text() == "print(0)\nprint(1)\nprint(2)\n"
    assert (w.path / "README.md").read_text() == "# changed too\n"  # only that file
    safety = restored.json()["safety_checkpoint"]
    assert json.loads(w.ok("show", str(safety), "--json"))["rewind"]["only"] == ["src/app.py"]
    bad = server.post("/api/restore-file", {"id": "2", "path": "../etc/passwd"})
    assert bad.status == 400 and "not a path inside" in bad.json()["error"]
    revert = server.post("/api/revert", {"id": "1", "dry_run": True})
    assert revert.status == 200
    named, said = revert.json()["text"].splitlines()
    assert named.startswith("reverting the turn of #1 (manual, ")
    assert said.startswith("nothing to take back")  # no agent changed a file: snaps by hand
    unknown = server.post("/api/undo", {"id": "77"})
    assert unknown.status == 404 and unknown.json()["error"] == "unknown checkpoint: 77; pick one from the page's list"
    assert server.post("/api/undo", {"mode": "code"}).json() == {"error": "name a checkpoint: id"}
    mode = server.post("/api/undo", {"id": "1", "mode": "everything"})
    assert mode.status == 400 and "unknown mode" in mode.json()["error"]
    talk = server.post("/api/undo", {"id": "1", "mode": "conversation", "dry_run": True})
    assert talk.status == 400 and talk.json()["error"] == \
        "#1 has no conversation to rewind (taken by hand); choose “code” beside Undo to rewind the files alone"


def test_tags_round_trip(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w)
    added = server.post("/api/tags", {"id": "2", "add": ["good", "reviewed"]})
    assert added.status == 200 and added.json() == {"ok": True, "tags": ["good", "reviewed"]}
    assert json.loads(w.ok("show", "2", "--json"))["tags"] == ["good", "reviewed"]
    assert "good reviewed" in w.ok("show", "2")
    assert server.get("/api/checkpoints/2")["tags"] == ["good", "reviewed"]  # the cache follows the note
    assert [i["seq"] for i in server.get("/api/checkpoints?tag=reviewed")["items"]] == [2]
    swapped = server.post("/api/tags", {"id": "2", "add": ["best"], "remove": ["good"]})
    assert swapped.json()["tags"] == ["reviewed", "best"]
    note = w.git("notes", "--ref", "rewind", "show", json.loads(w.ok("show", "2", "--json"))["commit"])
    for body, message in (({"id": "2", "remove": ["absent"], "add": ["new"]}, "has no tag absent"),
                          ({"id": "2", "add": ["two words"]}, "not a tag"), ({"id": "2", "add": "good"}, "list"),
                          ({"id": "2"}, "nothing to do")):
        refused = server.post("/api/tags", body)
        assert refused.status == 400 and message in refused.json()["error"], body
    assert w.git("notes", "--ref", "rewind", "show", json.loads(w.ok("show", "2", "--json"))["commit"]) == note
    assert server.post("/api/tags", {"id": "9", "add": ["x"]}).status == 404


def test_an_agent_at_work_is_reported_and_needs_force(agent_project: Workdir, serve: Serve) -> None:
    w = agent_project
    w.ok("snap", "-m", "before the agent")
    Agent(w, session=MAIN).prompt("refactor the whole app")  # a turn starts, and does not end
    w.write("src/app.py", "print('agent at work')\n")
    server = serve(w)
    dry = server.post("/api/undo", {"id": "1", "dry_run": True}).json()
    assert len(dry["agents_at_work"]) == 1 and f"claude-code session {MAIN[:8]}" in dry["agents_at_work"][0]
    before = w.state()
    refused = server.post("/api/undo", {"id": "1"})
    assert refused.status == 409 and "middle of a turn" in refused.json()["error"]
    assert w.state() == before
    forced = server.post("/api/undo", {"id": "1", "force": True})
    assert forced.status == 200 and forced.json()["safety_checkpoint"] is not None
    assert (w.path / "src/app.py").read_text() == "print('hello')\n"


EDIT_CALL = "toolu_mock_601f38abdb2f4e42b38d"  # the recorded Edit's tool_use id (as in test_undo)


@pytest.fixture
def recorded(agent_project: Workdir) -> Agent:
    """The recorded Claude Code session (test_undo's): checkpoints at its prompt and before its Edit."""
    agent = Agent(agent_project, session=MAIN, env={"GIT_REWIND_ANTI_SPAM_SECONDS": "0",
                                                    "GIT_REWIND_MIN_CHANGE_CHARS": "0"})
    Path(agent.transcript).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_SAMPLES / "transcript_main_print_mode.jsonl", agent.transcript)
    assert agent.prompt("make hello", prompt_id=PROMPT_ID)["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello')\n")
    assert agent.send("PreToolUse", tool_name="Edit", tool_use_id=EDIT_CALL, prompt_id=PROMPT_ID,
                      tool_input={"file_path": str(agent_project.path / "hello.py"), "old_string": "print('hello')",
                                  "new_string": "print('hello, world')"})["action"] == "checkpoint"
    agent_project.write("hello.py", "print('hello, world')\n")
    return agent


def test_a_full_undo_rewinds_the_conversation_as_the_cli_does(recorded: Agent, serve: Serve) -> None:
    """The page's full undo cuts the transcript where `git rewind undo 2 --full` does (test_undo), after the
    same safety checkpoint with the transcript backed up."""
    w, transcript = recorded.w, Path(recorded.transcript)
    before = transcript.read_bytes()
    server = serve(w)
    dry = server.post("/api/undo", {"id": "2", "mode": "full", "dry_run": True}).json()
    assert dry["conversation"].startswith("conversation: cut ") and str(transcript) in dry["conversation"]
    assert dry["write"] == ["hello.py"] and dry["text"].endswith(dry["conversation"])
    assert transcript.read_bytes() == before  # the dry run wrote nothing
    assert dry["agents_at_work"]  # its turn never ended: the page must confirm
    done = server.post("/api/undo", {"id": "2", "mode": "full", "force": True})
    assert done.status == 200, done.text
    assert f"resume with: claude --resume {MAIN}" in done.json()["text"]
    assert w.path.joinpath("hello.py").read_text() == "print('hello')\n"
    every = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    call = next(line for line in every if EDIT_CALL in json.dumps(line.get("message", {}).get("content", "")))
    assert every[-1]["leafUuid"] == call["parentUuid"]
    safety = json.loads(w.ok("show", str(done.json()["safety_checkpoint"]), "--json"))
    assert safety["rewind"]["mode"] == "full"
    assert w.git("cat-file", "blob", safety["rewind"]["conversation"]["backup_blob"]).encode() == before


# live ----------------------------------------------------------------------------------------------


def test_a_new_checkpoint_arrives_as_an_event(project: Workdir, serve: Serve) -> None:
    w = snaps(project)
    server = serve(w)
    stream = server.events()
    w.ok("snap", "-m", "taken while the page is open")
    event: list[str] = []
    while len(event) < 2:
        line = stream.readline().decode().rstrip("\r\n")
        if line.startswith(("event:", "data:")):
            event.append(line)
    stream.close()
    assert event == ["event: checkpoint", 'data: {"count": 4, "newest": 4}']


# imports -------------------------------------------------------------------------------------------


def test_the_hook_and_the_cli_do_not_load_the_web_libraries() -> None:
    hot = ["git_rewind.main", "git_rewind.hook.hook", "git_rewind.store.store", "git_rewind.faces.cli",
           "git_rewind.faces.undocmd"]
    code = f"import sys\nimport {', '.join(hot)}\nprint(sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for name in ("starlette", "uvicorn", "sse_starlette", "pygments", "unidiff", "anyio", "git_rewind.faces.web"):
        assert f"'{name}'" not in loaded, name


# the cache -----------------------------------------------------------------------------------------


def test_the_cache_follows_every_change_of_the_notes(project: Workdir, git_environ: dict[str, str]) -> None:
    """Read once, then only the notes that changed (from the notes ref's history): always what load_all reads."""
    from git_rewind.base.repo import Repo
    from git_rewind.faces.web.listing import Listing, item_json
    from git_rewind.store import checkpoints

    w = snaps(project)
    repo = Repo.discover(str(w.path))
    listing = Listing(repo)

    def same_as_load_all() -> None:
        view = listing.view()
        every = checkpoints.load_all(repo)
        assert [(c.commit, c.note_blob) for c in view.every] == [(c.commit, c.note_blob) for c in every]
        assert view.rows == [item_json(c) for c in reversed(every)]
        assert json.loads(view.encoded(range(len(view.rows)))) == view.rows  # the encoded rows kept are current

    same_as_load_all()
    first = listing.view()
    assert listing.view() is first  # the notes ref did not move: nothing read
    w.write("src/new.py", "new\n")
    w.ok("snap", "-m", "one more")
    same_as_load_all()
    assert listing.view().rows[1] is first.rows[0]  # an unchanged note keeps its row
    w.ok("gc", "--keep", "2", "--older-than", "0")  # notes removed
    same_as_load_all()
    assert len(listing.view().every) < 4


def test_the_index_answers_what_lookup_and_previous_answer(project: Workdir, tmp_path: Path,
                                                          git_environ: dict[str, str]) -> None:
    """The page's detail finds a numbered checkpoint and its previous one by the view's index: the same
    checkpoints `checkpoints.lookup` and `previous` find by walking every one, with another work tree's
    checkpoints between them (numbered leaves those, and every id that is not a number, to lookup)."""
    from git_rewind.base.repo import Repo
    from git_rewind.faces.web.listing import Listing
    from git_rewind.store import checkpoints

    w = snaps(project)
    linked = tmp_path / "linked"
    w.git("worktree", "add", "-q", str(linked), "-b", "feature")
    for n in (1, 2):
        (linked / "feature.txt").write_text(f"feature {n}\n")
        subprocess.run([*w.command, "snap", "-m", f"linked {n}"], cwd=linked, env=w.env, check=True,
                       capture_output=True)
    w.write("src/app.py", "print('after')\n")
    w.ok("snap", "-m", "after the linked ones")  # #6: its previous here is #3, across #4 and #5 elsewhere
    repo = Repo.discover(str(w.path))
    view = Listing(repo).view()
    every = checkpoints.load_all(repo)
    assert len(every) == 6 and len(view.items) == 4
    for item in view.items:
        found = view.numbered(str(item.seq))
        assert found is checkpoints.lookup(repo, str(item.seq), view.every, repo.worktree) is item
        assert seq_of(view.previous(item)) == seq_of(checkpoints.previous(every, item))
    assert [seq_of(view.previous(c)) for c in view.items] == [None, 1, 2, 3]
    assert view.numbered("4") is None and view.numbered("@") is None and view.numbered("#3") is None
    assert view.numbered("٣") is None  # a digit, but not a number as the CLI reads one
    elsewhere = [c for c in every if c.seq == 5][0]
    assert seq_of(view.previous(elsewhere)) == 4  # not one of this work tree's: the walk over every checkpoint


def seq_of(item: Checkpoint | None) -> int | None:
    return item.seq if item is not None else None


def test_the_pages_reads_follow_a_new_checkpoint_at_once(project: Workdir, serve: Serve) -> None:
    """info, the first page and a detail are answered from the checkpoints read while the notes ref has not moved
    (on the event loop, Listing.current); a new checkpoint moves it, and the next answers have it."""
    w = snaps(project)
    server = serve(w)
    assert server.get("/api/info")["count"] == 3
    assert [i["seq"] for i in server.get("/api/checkpoints?offset=0&limit=250")["items"]] == [3, 2, 1]
    w.write("src/app.py", "print('four')\n")
    w.ok("snap", "-m", "step 4")
    assert server.get("/api/info")["count"] == 4
    assert [i["seq"] for i in server.get("/api/checkpoints?offset=0&limit=250")["items"]] == [4, 3, 2, 1]
    detail = server.get("/api/checkpoints/4")
    assert detail["message"] == "step 4" and detail["parent"] == 3
    assert server.get("/api/checkpoints?offset=0&limit=2&safety=1")["items"][0]["seq"] == 4
    assert server.request("GET", "/api/checkpoints/9").status == 404


def test_the_servers_connections_send_each_answer_at_once() -> None:
    """Nagle's algorithm is off on every connection the server accepts (asyncio sets TCP_NODELAY only for an
    IPPROTO_TCP socket): with it on, each answer's body, sent after its headers, waited for the browser's delayed
    acknowledgement (40 ms on Linux), on every request of the page's first screen."""
    import asyncio
    import socket

    from git_rewind.faces.web import listen

    async def accepted_nodelay() -> int:
        sock = listen(0)
        seen: list[int] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            reader, writer = await asyncio.open_connection(*sock.getsockname())
            await reader.read()  # the server closed it: handle ran
            writer.close()
        return seen[0]

    assert asyncio.run(accepted_nodelay()) == 1


# the page's files ---------------------------------------------------------------------------------


def test_the_page_files_are_kept_under_their_version_and_revalidated_without_it(project: Workdir,
                                                                                serve: Serve) -> None:
    """The page names its files under /static/VERSION/: a browser keeps those for good; the plain names are
    checked with the server at every use (ETag); another version's path is not served."""
    server = serve(project)
    page = server.request("GET", "/", header=None)
    assert page.headers["cache-control"] == "no-store"
    named = re.findall(r'"/static/([^"]*)"', page.text)
    assert len(named) == len(list(PAGE_DIR.glob("*.js"))) + 2  # every module, the stylesheet and the icon
    version = Files().version
    assert all(n.startswith(f"{version}/") for n in named), named
    for name in ("boot.js", "app.js", "app.css", "favicon.svg"):
        kept = server.request("GET", f"/static/{version}/{name}", header=None)
        assert kept.status == 200 and kept.body == (PAGE_DIR / name).read_bytes()
        assert kept.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert "set-cookie" not in kept.headers and kept.headers["x-frame-options"] == "DENY"
    assert server.request("GET", f"/static/{version}/app.js").headers["content-type"].startswith("text/javascript")
    plain = server.request("GET", "/static/app.js", header=None)
    assert plain.status == 200 and plain.headers["cache-control"] == "no-cache"
    again = server.request("GET", "/static/app.js", header=None, extra={"If-None-Match": plain.headers["etag"]})
    assert again.status == 304 and again.body == b""
    for path in (f"/static/{'0' * 12}/app.js", f"/static/{version}/nothing.js", f"/static/{version}/../app.py"):
        assert server.request("GET", path, header=None).status == 404, path


def test_an_upgraded_page_has_another_version(tmp_path: Path) -> None:
    """A browser that kept an older installation's files never uses them for a newer one: one byte of one
    file changes the version every path of the page carries; the same bytes keep it."""
    copy = tmp_path / "web"
    shutil.copytree(PAGE_DIR, copy)
    before = Files(str(copy))
    assert before.version == Files(str(PAGE_DIR)).version
    (copy / "lanes.js").write_bytes((copy / "lanes.js").read_bytes() + b"\n")
    after = Files(str(copy))
    assert after.version != before.version
    assert f'"/static/{after.version}/app.js"'.encode() in after.page and before.version.encode() not in after.page
    assert after.files["lanes.js"][2] != before.files["lanes.js"][2] and after.files["app.js"] == before.files["app.js"]
