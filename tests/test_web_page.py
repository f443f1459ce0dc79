"""The page of `git rewind web`, used as a person would: the real server on a real repository whose
checkpoints were taken by `git rewind snap` and by the hook fed an agent's payloads, looked at in
Debian's Chromium (Playwright). Each story ends on what the person would check: text on the page, or the
files on disk after an action."""

from __future__ import annotations

import http.client
import http.server
import json
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers.browser import CHROMIUM, serve
from helpers.checkpoints import listing
from helpers.workdir import Workdir
from playwright.sync_api import Browser, Page, expect, sync_playwright
from pygments.formatters import HtmlFormatter

from git_rewind import agents

ROOT = Path(__file__).resolve().parent.parent
PAGE_DIR = ROOT / "git_rewind" / "resources" / "web"
APP_PY = "print('hello')\n"
AGENT_PY = "print('hello, agent')\nprint('a greeting for everyone')\n"

pytestmark = pytest.mark.needs("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser tab; a script error on the page fails the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    yield tab
    context.close()
    assert errors == []


def hook(w: Workdir, event: str, **fields: Any) -> None:
    payload = {"session_id": "s-1", "transcript_path": None, "cwd": str(w.path), "hook_event_name": event, **fields}
    run = w.rewind("hook", "--agent", "claude-code", input=json.dumps(payload))
    assert run.returncode == 0 and "hook skipped" not in run.stderr, run


@pytest.fixture
def story(agent_project: Workdir) -> Workdir:
    """#1 a snap by hand; #2 Claude Code's prompt; #3 its turn end after it rewrote src/app.py (the agent's);
    #4 a snap after the person edited notes.txt (outside)."""
    w = agent_project
    w.ok("snap", "-m", "starting point")
    hook(w, "UserPromptSubmit", prompt="add a greeting")
    w.write("src/app.py", AGENT_PY)
    hook(w, "Stop", stop_hook_active=False)
    w.write("notes.txt", "my own notes\n")
    w.ok("snap", "-m", "my notes")
    assert [c["seq"] for c in listing(w)] == [4, 3, 2, 1]
    return w


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready]")


def row(page: Page, seq: int) -> Any:
    return page.locator(f'.row[data-seq="{seq}"]')


def test_lanes_and_rows_show_every_checkpoint_with_who_changed_what(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        expect(page.locator(".row")).to_have_count(4)
        expect(page.locator("#count")).to_have_text("4 checkpoints")
        lanes = page.locator(".lane")
        expect(lanes).to_have_count(2)
        agent_lane = page.locator('.lane[data-session="s-1"]')
        expect(agent_lane.locator(".lane-label")).to_contain_text("claude-code")
        expect(agent_lane.locator(".lane-label")).to_contain_text("add a greeting")
        expect(page.locator('.lane[data-session="manual"] .lane-label')).to_contain_text("no prompt")
        assert page.locator(".mark").count() >= 2  # marks share an element only when closer than a few pixels
        expect(row(page, 3)).to_contain_text("Stop")
        expect(row(page, 3).locator(".badge")).to_have_text("agent")
        expect(row(page, 4).locator(".badge")).to_have_text("outside")
        expect(row(page, 2)).to_contain_text("add a greeting")

        page.locator('.lane[data-session="s-1"] .mark[data-seq="2"]').click()  # a mark picks its checkpoint
        expect(page.locator("#detail-title")).to_contain_text("#2")
        expect(row(page, 2)).to_have_class(re.compile(r"\bselected\b"))
        page.keyboard.press("ArrowUp")  # and the arrows walk the list
        expect(page.locator("#detail-title")).to_contain_text("#3")


def test_a_checkpoints_diff_unified_side_by_side_and_collapsed(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()
        expect(page.locator("#detail-title")).to_contain_text("#3")
        diff = page.locator("#diff")
        expect(diff.locator("table.unified")).to_contain_text("a greeting for everyone")
        added = diff.locator("table.unified tr.add", has_text="a greeting for everyone")
        expect(added).to_have_count(1)
        expect(diff.locator("table.unified tr.del", has_text="print('hello')")).to_have_count(1)

        page.click("#diff-mode")
        split = diff.locator("table.split")
        expect(split).to_contain_text("a greeting for everyone")
        expect(split.locator("td.src.del", has_text="print('hello')")).to_have_count(1)
        page.click("#diff-mode")
        expect(diff.locator("table.unified")).to_be_visible()

        file = diff.locator('details.file[data-path="src/app.py"]')
        assert file.evaluate("el => el.open") is True
        file.locator("summary .path").click()
        assert file.evaluate("el => el.open") is False
        expect(file.locator("table.unified")).to_be_hidden()


def test_compare_with_the_working_tree_and_another_checkpoint(story: Workdir, page: Page) -> None:
    story.write("src/app.py", "print('edited since, not checkpointed')\n")
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()
        expect(page.locator("#diff")).to_contain_text("a greeting for everyone")
        page.select_option("#compare", "worktree")
        expect(page.locator("#diff")).to_contain_text("edited since, not checkpointed")
        expect(page.locator("#diff-stat")).to_contain_text("the working tree")

        row(page, 1).click(modifiers=["Shift"])  # shift-click: compare the selected #3 with #1
        expect(page.locator("#compare-seq")).to_have_value("#1")
        expect(page.locator("#diff-stat")).to_contain_text("#1")
        expect(page.locator("#diff")).to_contain_text("a greeting for everyone")


def test_the_file_tree_shows_a_file_as_it_was(story: Workdir, page: Page) -> None:
    story.write("src/app.py", "print('changed after')\n")
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()
        page.click("#tab-files")
        tree = page.locator("#tree")
        tree.locator('details.dir[data-path="src/"] > summary').click()
        tree.locator('.tree-file[data-path="src/app.py"]').click()
        view = page.locator("#file-view")
        expect(view).to_contain_text("a greeting for everyone")
        expect(view).not_to_contain_text("changed after")
        expect(view.locator(".file-head")).to_contain_text("src/app.py")
        assert view.locator("table.fileview tr").count() == 2


def test_search_narrows_the_list_to_matching_checkpoints(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        expect(page.locator(".row")).to_have_count(4)
        page.fill("#search", "my notes")
        expect(page.locator(".row")).to_have_count(1)
        expect(row(page, 4)).to_be_visible()
        expect(page.locator("#match-count")).to_have_text("1 of 4 match")
        page.fill("#search", "")
        expect(page.locator(".row")).to_have_count(4)
        page.select_option("#filter-agent", "claude-code")
        expect(page.locator(".row")).to_have_count(2)
        assert sorted(int(s) for s in page.locator(".row").evaluate_all("rs => rs.map(r => r.dataset.seq)")) == [2, 3]


def test_a_new_checkpoint_appears_without_reload(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        expect(page.locator(".row")).to_have_count(4)
        page.evaluate("window.__same_page = true")
        story.write("later.txt", "later\n")
        story.ok("snap", "-m", "taken while the page was open")
        expect(row(page, 5)).to_contain_text("taken while the page was open")
        expect(page.locator("#count")).to_have_text("5 checkpoints")
        assert page.evaluate("window.__same_page") is True  # no reload happened


def test_undo_from_the_page_previews_then_restores_after_a_safety_checkpoint(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 1).click()
        expect(page.locator("#detail-title")).to_contain_text("starting point")
        page.click("#undo")
        dialog = page.locator("dialog#confirm")
        expect(dialog).to_be_visible()
        expect(dialog.locator("#confirm-body")).to_contain_text("src/app.py")
        assert (story.path / "src/app.py").read_text() == AGENT_PY  # the preview wrote nothing
        page.click("#confirm-yes")
        expect(dialog).to_be_hidden()
        expect(page.locator("#toast")).to_contain_text("safety checkpoint")
        # The safety checkpoint is left out of the list, as `git rewind list` leaves it out, until asked for.
        expect(page.locator("#count")).to_have_text("4 checkpoints")
        expect(row(page, 5)).to_have_count(0)
        page.check("#filter-safety")
        expect(row(page, 5)).to_be_visible()
        expect(page.locator("#lanes .mark.k-safety")).to_have_count(1)  # on the lanes too
        expect(page.locator("#count")).to_have_text("5 checkpoints")
        page.uncheck("#filter-safety")
        expect(row(page, 5)).to_have_count(0)
    assert (story.path / "src/app.py").read_text() == APP_PY
    safety = listing(story)[0]
    assert safety["seq"] == 5 and safety["trigger"] == "pre-rewind"
    assert story.git("show", f"{safety['commit']}:src/app.py") == AGENT_PY  # what was there is kept


def test_the_undo_dialog_names_its_checkpoint_and_the_persons_edits_it_puts_back(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 2).click()  # the prompt: undoing to it puts notes.txt back too, which the person changed since
        page.click("#undo")
        body = page.locator("dialog#confirm #confirm-body")
        expect(body.locator("p.target")).to_contain_text("undo to #2 (prompt, ")
        expect(body.locator("p.target")).to_contain_text("claude-code session s-1): prompt: add a greeting")
        expect(body.locator("ul.outside")).to_have_text("notes.txt")
        page.click("#confirm-no")
    assert (story.path / "notes.txt").read_text() == "my own notes\n"  # cancelled: nothing written


def test_only_the_agents_changes_are_taken_back_and_the_persons_kept(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 2).click()  # the prompt: take back what the agent did after it
        page.check("#undo-agent-only")
        page.click("#undo")
        body = page.locator("dialog#confirm #confirm-body")
        expect(body).to_contain_text("src/app.py")
        expect(body).not_to_contain_text("notes.txt")
        page.click("#confirm-yes")
        expect(page.locator("#toast")).to_contain_text("safety checkpoint")
    assert (story.path / "src/app.py").read_text() == APP_PY
    assert (story.path / "notes.txt").read_text() == "my own notes\n"  # outside the agent's turn: kept


def test_revert_a_turn_and_a_refused_one_says_why(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()  # the turn end: nothing of that session after it
        page.click("#revert")
        expect(page.locator("#toast.error")).to_contain_text("no turn to revert")
        expect(page.locator("dialog#confirm")).to_be_hidden()
        row(page, 2).click()  # the prompt that began the turn
        page.click("#revert")
        expect(page.locator("dialog#confirm #confirm-body")).to_contain_text("src/app.py")
        page.click("#confirm-yes")
        expect(page.locator("#toast")).to_contain_text("safety checkpoint")
    assert (story.path / "src/app.py").read_text() == APP_PY
    assert (story.path / "notes.txt").read_text() == "my own notes\n"


def test_one_file_is_restored_from_its_view_and_nothing_else_changes(story: Workdir, page: Page) -> None:
    story.write("notes.txt", "newer notes, kept\n")
    with serve(story) as url:
        open_page(page, url)
        row(page, 1).click()
        page.click("#tab-files")
        page.locator('#tree details.dir[data-path="src/"] > summary').click()
        page.locator('#tree .tree-file[data-path="src/app.py"]').click()
        expect(page.locator("#file-view")).to_contain_text("print('hello')")
        page.click("#file-view .restore-file")
        dialog = page.locator("dialog#confirm")
        expect(dialog.locator("#confirm-body")).to_contain_text("src/app.py")
        expect(dialog.locator("#confirm-body")).not_to_contain_text("notes.txt")
        page.click("#confirm-yes")
        expect(page.locator("#toast")).to_contain_text("safety checkpoint")
    assert (story.path / "src/app.py").read_text() == APP_PY
    assert (story.path / "notes.txt").read_text() == "newer notes, kept\n"


def test_cancelling_the_preview_changes_nothing(story: Workdir, page: Page) -> None:
    before = story.state()
    with serve(story) as url:
        open_page(page, url)
        row(page, 1).click()
        page.click("#undo")
        expect(page.locator("dialog#confirm #confirm-body")).to_contain_text("src/app.py")
        page.click("#confirm-no")
        expect(page.locator("dialog#confirm")).to_be_hidden()
    assert story.state() == before
    assert [c["seq"] for c in listing(story)] == [4, 3, 2, 1]  # not even a safety checkpoint


def test_tags_are_added_and_removed_from_the_page(story: Workdir, page: Page) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()
        page.fill("#tag-input", "good")
        page.press("#tag-input", "Enter")
        expect(row(page, 3).locator(".tag")).to_have_text("good")
        assert "good" in next(c for c in listing(story) if c["seq"] == 3)["tags"]
        page.click('#detail-tags .tag-remove[data-tag="good"]')
        expect(row(page, 3).locator(".tag")).to_have_count(0)
    assert "good" not in next(c for c in listing(story) if c["seq"] == 3)["tags"]


def test_read_only_shows_no_actions(story: Workdir, page: Page) -> None:
    with serve(story, "--read-only") as url:
        open_page(page, url)
        expect(page.locator("#readonly-badge")).to_be_visible()
        row(page, 3).click()
        expect(page.locator("#diff")).to_contain_text("a greeting for everyone")
        for selector in ("#undo", "#revert", "#tag-input", ".restore-file"):
            expect(page.locator(selector).first).to_be_hidden()


def test_an_empty_repository_says_how_to_take_the_first_checkpoint(project: Workdir, page: Page) -> None:
    with serve(project) as url:
        open_page(page, url)
        empty = page.locator("#empty")
        expect(empty).to_be_visible()
        expect(empty).to_contain_text("git rewind snap")
        expect(empty).to_contain_text("git rewind install --agent claude-code")
        expect(empty).to_contain_text("git rewind watch -- aider")
        for name in agents.NAMES:  # every agent the registry knows, none left out
            expect(empty).to_contain_text(re.compile(rf"(--agent |, |\(or |-- ){re.escape(name)}\b"))
        expect(page.locator("#list-pane")).to_be_hidden()
        project.ok("snap", "-m", "the very first")  # and the page comes to life by itself
        expect(row(page, 1)).to_contain_text("the very first")
        expect(empty).to_be_hidden()


def test_the_page_has_its_own_icon(project: Workdir, page: Page) -> None:
    """The tab shows git-rewind's icon, served by the page's server (no request for a missing /favicon.ico)."""
    with serve(project) as url:
        open_page(page, url)
        icon = page.locator('link[rel="icon"]')
        expect(icon).to_have_count(1)
        loaded = page.evaluate("""href => new Promise((resolve) => {
            const img = new Image();
            img.onload = () => resolve(img.naturalWidth);
            img.onerror = () => resolve(0);
            img.src = href; })""", icon.evaluate("el => el.href"))
        assert loaded > 0


def test_a_long_history_keeps_the_page_bounded(tmp_path: Path, env: dict[str, str], page: Page) -> None:
    """1,200 checkpoints in 6 sessions (bench/many_checkpoints.py's builder: one git fast-import): a few dozen
    rows in the page whatever the count, marks merged per few pixels, and the oldest reachable by scrolling."""
    sys.path.insert(0, str(ROOT / "bench"))
    from many_checkpoints import build

    w = Workdir(Path(build(str(tmp_path / "long"), 1200, sessions=6)), env)
    shown = len(json.loads(w.ok("list", "--json", "-n", "0")))  # its few safety checkpoints left out, as `list` does
    assert 1190 < shown < 1200
    with serve(w) as url:
        open_page(page, url)
        expect(page.locator("#count")).to_have_text(f"{shown} checkpoints")
        page.wait_for_selector("body[data-complete]")  # every checkpoint is in the lanes now
        expect(page.locator(".lane")).to_have_count(6)
        assert page.locator(".row").count() < 60
        width = page.locator("#axis").evaluate("el => el.clientWidth")
        marks = page.locator(".mark[data-seq]").count()
        assert 6 * 10 < marks <= 6 * (width // 7 + 1)
        page.locator("#list").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        expect(row(page, 1)).to_be_visible()
        row(page, 1).click()
        expect(page.locator("#detail-title")).to_contain_text("#1 ")
        assert page.locator(".row").count() < 60


def test_screenshot_for_a_person_to_look_at(story: Workdir, page: Page, tmp_path: Path) -> None:
    with serve(story) as url:
        open_page(page, url)
        row(page, 3).click()
        expect(page.locator("#diff table.unified")).to_be_visible()
        shot = tmp_path / "git-rewind-web.png"
        page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another local server (a dev server the person also has open): records every request it receives."""

    seen: list[tuple[str, str, list[tuple[str, str]]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.command, self.path, list(self.headers.items())))
        body = b"<!doctype html><title>another local server</title><p>a dev server</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[tuple[int, list[tuple[str, str, list[tuple[str, str]]]]]]:
    """A second HTTP server on another port of 127.0.0.1: (its port, the requests it received)."""
    seen: list[tuple[str, str, list[tuple[str, str]]]] = []
    handler = type("Recording", (Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


def post_undo(port: int, headers: dict[str, str]) -> int:
    """POST /api/undo to #1 as a plain client would, with a Host and an Origin forged to look like the page's."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"id": "1", "mode": "code"}).encode()
    try:
        conn.request("POST", "/api/undo", body=body, headers={
            "Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json",
            **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def test_another_local_server_receives_nothing_that_can_undo(story: Workdir, page: Page, other_server: Any) -> None:
    """Browsers send 127.0.0.1's cookies to every port of it: the person opens the page, then a dev server of
    theirs on another port (by a link from the page, and typed). That server gets no cookie and no token in a
    Referer or anywhere else; whatever it did get, replayed to /api/undo by a plain client, is refused."""
    port, seen = other_server
    before = story.state()
    with serve(story) as url:
        ours = urlsplit(url).port or 0
        launch = url.split("=", 1)[1]  # the token the printed link carries
        open_page(page, url)
        assert page.url == f"http://127.0.0.1:{ours}/"  # the link's token is gone from the address bar
        credential = page.evaluate("sessionStorage.getItem('rewind.credential')")
        page.evaluate(f"location.href = 'http://127.0.0.1:{port}/from-the-page'")  # a link followed from the page
        page.wait_for_url(f"http://127.0.0.1:{port}/from-the-page")
        page.goto(f"http://127.0.0.1:{port}/typed")
        page.wait_for_timeout(300)  # its favicon request, if any
        page.go_back()
        page.go_back()  # back on the page, which still works in this tab
        page.wait_for_selector("body[data-ready]")
        expect(page.locator(".row")).to_have_count(4)
        assert {"/from-the-page", "/typed"} <= {path for _, path, _ in seen}
        assert [(path, value) for _, path, headers in seen for name, value in headers if name.lower() == "cookie"] == []
        received = [value for _, path, headers in seen for value in (path, *(v for _, v in headers))]
        pieces = {part.strip() for value in received for part in re.split(r"[;,= ]", value) if part.strip()}
        for piece in pieces:  # every word it got, as the token header or as a cookie
            assert post_undo(ours, {"X-Rewind-Token": piece}) == 403, piece
            assert post_undo(ours, {"Cookie": f"rewind_token={piece}", "X-Rewind-Token": piece}) == 403, piece
        assert post_undo(ours, {"X-Rewind-Token": launch}) == 403  # the used link, from history or the terminal
        assert credential and credential != launch  # the tab's own credential, which went nowhere else
        assert not any(secret in value for value in received for secret in (credential, launch))
    assert story.state() == before
    assert [c["seq"] for c in listing(story)] == [4, 3, 2, 1]  # not even a safety checkpoint


def test_a_used_link_opens_nothing_elsewhere_and_a_reload_keeps_the_tab(story: Workdir, page: Page,
                                                                        browser: Browser) -> None:
    with serve(story) as url:
        open_page(page, url)
        page.go_back()  # the tab's history holds the page without the link's token: its entry was replaced
        page.go_forward()
        assert page.url == url.split("#")[0]
        page.reload()  # the tab keeps its credential in sessionStorage: a reload needs no new link
        page.wait_for_selector("body[data-ready]")
        expect(page.locator(".row")).to_have_count(4)
        other = browser.new_context()
        try:
            tab = other.new_page()
            tab.goto(url)  # the same link again, in another browser: used up
            expect(tab.locator("#locked")).to_be_visible()
            expect(tab.locator("#locked-reason")).to_contain_text("used already")
            expect(tab.locator("#main")).to_be_hidden()
            assert "#" not in tab.url
            tab.goto(url.split("#")[0])  # no link at all
            expect(tab.locator("#locked-reason")).to_contain_text("git rewind web")
        finally:
            other.close()


def test_the_page_makes_no_request_elsewhere() -> None:
    """CSP `default-src 'self'`: no CDN, no external URL, no inline script in what the page ships."""
    html = (PAGE_DIR / "index.html").read_text()
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="/static/boot.js">',
                                                     '<script type="module" src="/static/app.js">']
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", html)  # no inline event handlers
    links = re.findall(r'<link\b[^>]*href="([^"]*)"', html)
    assert links == ["/static/favicon.svg", "/static/app.css", *(f"/static/{m}" for m in links_order(html))]
    for path in PAGE_DIR.iterdir():
        text = path.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, not a request
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text), path.name
        assert all(re.fullmatch(r"\./[a-z]+\.js", i) and (PAGE_DIR / i).exists() for i in imports(path.name)), path.name


def imports(module: str) -> list[str]:
    """What MODULE (a file of the page) imports, as written: `./name.js`."""
    return re.findall(r"^(?:import|export) .* from '([^']+)';$", (PAGE_DIR / module).read_text(), flags=re.M)


def test_every_module_the_page_imports_is_preloaded() -> None:
    """The browser learns a module's imports only once it has it: without a preload each level of imports is
    one more round trip before the page can start. Every module reached from the scripts index.html runs is
    preloaded (or is one of those scripts), and nothing else is; boot.js, which trades the launch token and
    asks for the first screen while the rest loads, is a classic script and imports nothing."""
    html = (PAGE_DIR / "index.html").read_text()
    scripts = re.findall(r'<script type="module"[^>]* src="/static/([a-z]+\.js)">', html)
    reached: set[str] = set()
    todo = list(scripts)
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += [i.removeprefix("./") for i in imports(module)]
    assert imports("boot.js") == []
    assert sorted(links_order(html)) == sorted(reached - set(scripts))
    assert len(links_order(html)) == len(set(links_order(html)))


def test_boot_is_the_first_script_and_runs_as_soon_as_it_arrives() -> None:
    """boot.js is a classic, parser-blocking script ahead of the stylesheet and every module: it runs the moment
    it arrives, before the page is laid out or any module compiled (as an async module it ran after both). So
    it is no module: it imports and exports nothing, and api.js takes its functions from window.rewindBoot."""
    html = (PAGE_DIR / "index.html").read_text()
    head = html[:html.index("</head>")]
    first = re.search(r"<(script|link)\b[^>]*>", head)
    assert first is not None and first[0] == '<script src="/static/boot.js">'
    assert head.index("boot.js") < head.index("app.css") < head.index("app.js")
    boot = (PAGE_DIR / "boot.js").read_text()
    assert not re.search(r"^\s*(import|export)\b", boot, flags=re.M)
    assert "window.rewindBoot = (() => {" in boot
    assert "return Object.freeze({ FIRST, headers, connect, taken });" in boot
    api = (PAGE_DIR / "api.js").read_text()
    assert "const { connect, headers, taken } = window.rewindBoot;" in api and "boot.js'" not in api


def test_the_exchange_leaves_before_the_page_is_first_painted(story: Workdir, page: Page) -> None:
    """Chrome's own timings: boot.js ran and sent the launch-token exchange before the page was first painted
    (as an async module it waited for that first layout and paint)."""
    with serve(story) as url:
        open_page(page, url)
        expect(page.locator(".row")).to_have_count(4)
        timings = page.evaluate("""() => ({
            boot: performance.getEntriesByName('rewind-boot')[0].startTime,
            paint: performance.getEntriesByName('first-paint')[0].startTime,
            exchange: performance.getEntriesByType('resource')
              .find((e) => e.name.endsWith('/api/session')).startTime })""")
        assert timings["boot"] <= timings["exchange"] < timings["paint"], timings


def test_boot_asks_for_exactly_the_first_screen_app_js_wants() -> None:
    """boot.js's early requests are used only when app.js's first requests are the same URLs: the first
    page of the list is PAGE checkpoints with no filter (the browser test below sees each asked for once)."""
    page = re.search(r"^export const PAGE = (\d+);", (PAGE_DIR / "state.js").read_text(), flags=re.M)
    boot = (PAGE_DIR / "boot.js").read_text()
    assert page is not None
    assert f"'/api/checkpoints?offset=0&limit={page[1]}'" in boot and "'/api/info'" in boot


def test_the_first_screen_is_asked_for_once_by_boot_js(story: Workdir, page: Page) -> None:
    """The launch-token exchange and the first screen's requests leave from boot.js (Chrome names the script
    that sent each) while the other modules load; app.js uses those answers rather than asking again, and
    nothing but the exchange goes out without the tab's credential."""
    sent: list[tuple[str, str, str | None, str]] = []
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")

    def record(event: dict[str, Any]) -> None:
        parts = urlsplit(event["request"]["url"])
        frames = [f["url"] for f in (event.get("initiator", {}).get("stack") or {}).get("callFrames", [])]
        sent.append((event["request"]["method"], parts.path + (f"?{parts.query}" if parts.query else ""),
                     event["request"]["headers"].get("X-Rewind-Token"), frames[-1] if frames else ""))

    cdp.on("Network.requestWillBeSent", record)
    with serve(story) as url:
        open_page(page, url)
        expect(page.locator(".row")).to_have_count(4)
        api = [entry for entry in sent if entry[1].startswith("/api/")]
        assert api[0][:3] == ("POST", "/api/session", None)
        token = api[1][2]
        assert token and all(entry[2] == token for entry in api[1:] if not entry[1].startswith("/api/events"))
        first = [entry for entry in api if entry[1] in ("/api/info", "/api/checkpoints?offset=0&limit=250")]
        assert [entry[1] for entry in first] == ["/api/info", "/api/checkpoints?offset=0&limit=250"]
        assert all(entry[3].endswith("/boot.js") for entry in [api[0], *first]), api
        assert "#" not in page.url


def links_order(html: str) -> list[str]:
    return re.findall(r'<link rel="modulepreload" href="/static/([a-z]+\.js)">', html)


def test_the_shipped_syntax_colours_are_pygments_own() -> None:
    """app.css carries Pygments' token rules (generated once): every token class the default style colours."""
    css = (PAGE_DIR / "app.css").read_text()
    rules = [line for line in HtmlFormatter(style="default").get_style_defs(".code").splitlines()
             if line.startswith(".code .") and not line.startswith(".code .hll")]
    assert len(rules) > 50
    missing = [rule for rule in rules if rule not in css]
    assert missing == []
