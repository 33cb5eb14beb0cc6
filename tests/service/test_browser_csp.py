"""Issue 17: the pages work under the strict CSP the service sends (Chromium through Playwright) and the
browser reports no CSP violation: the tasks, registration (the token page), a task's leaderboard, an upload
through the form, the API docs page, and a chat of a collection (join, one turn, end)."""

from __future__ import annotations

from service_support import ARGS, CHROMIUM, RUN, LiveServer, Service, dumps, need

from dialeval.service import invitations
from dialeval.service.app import create_app
from dialeval.service.collection import chats
from dialeval.service.config import Settings

WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
    e => window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile));
"""


def _watch(page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") and "favicon" not in m.location.get("url", "") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append("dialog: " + d.message), d.dismiss()))
    return problems


def _violations(page) -> list[str]:
    return page.evaluate("window.__csp || []")


def test_the_pages_work_under_the_csp(sqlite_url, tmp_path):
    need(str(CHROMIUM), CHROMIUM.exists())
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("the playwright package", False)
    s = Service(sqlite_url)
    chats.create_collection(s.db, "c1", "builtin:echo", s.clock())  # a collection beside the task
    [code] = invitations.create_invitations(s.db, "collection", "c1", 1, s.clock())
    app = create_app(Settings(database_url=sqlite_url, clock=s.clock, docs=True, max_upload_bytes=1 << 20), s.db)
    run_file = tmp_path / "run.json"
    run_file.write_bytes(dumps(RUN))
    try:
        with LiveServer(app) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                page = browser.new_page()
                page.add_init_script(WATCH_CSP)
                problems = _watch(page)
                seen: list[str] = []
                first = page.goto(f"{server.url}/")
                assert "script-src 'self'" in first.headers["content-security-policy"]
                # the stylesheet applies (a style from /static/style.css, not inline)
                assert page.evaluate("getComputedStyle(document.querySelector('header')).display") == "flex"
                seen += _violations(page)
                page.fill("input[name=name]", "Team CSP")
                page.click("form.stack button[type=submit]")
                page.wait_for_selector("#token")
                token = page.inner_text("#token").strip()
                assert len(token) > 20
                seen += _violations(page)
                page.goto(f"{server.url}/tasks/t1")
                page.fill("input[name=token]", token)
                page.set_input_files("input[name=file]", str(run_file))
                page.click("#submit-form button[type=submit]")
                page.wait_for_selector("#result")
                assert page.locator("#leaderboard tbody tr").first.inner_text().startswith("1")
                seen += _violations(page)
                page.click("th.num a >> nth=1")  # sort by another column: a plain link
                page.wait_for_selector("#leaderboard")
                seen += _violations(page)
                page.goto(f"{server.url}/docs")
                assert page.locator("#operations tbody tr").count() >= 10
                seen += _violations(page)
                page.goto(f"{server.url}/collections/c1")
                page.fill("input[name=code]", code)
                page.click("#join-form button[type=submit]")
                page.wait_for_selector("#utterance:enabled")  # chat.js ran and started the chat
                page.fill("#utterance", "hello")
                page.press("#utterance", "Enter")
                page.locator("#turns li").nth(1).wait_for()  # the engine's reply
                page.click("#end")
                page.wait_for_selector("#again:visible")
                seen += _violations(page)
                assert seen == [] and problems == [], (seen, problems)
            finally:
                browser.close()
    finally:
        s.close()
