"""One browser test: headless Debian Chromium (driven by Playwright) loads the leaderboard, uploads a run
through the form and sees the new row."""

from __future__ import annotations

from service_support import ARGS, CHROMIUM, RUN, LiveServer, Service, dumps, need


def test_upload_through_the_form_shows_the_new_row(sqlite_url, tmp_path):
    need(str(CHROMIUM), CHROMIUM.exists())
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("the playwright package", False)
    s = Service(sqlite_url)
    try:
        token = s.team("<script>alert(1)</script>")
        run_file = tmp_path / "my-run.json"
        run_file.write_bytes(dumps(RUN))
        with LiveServer(s.app) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                page = browser.new_page()
                dialogs: list[str] = []
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(f"{server.url}/")
                page.click("text=t1")
                assert page.locator("#leaderboard tbody tr").count() == 1
                assert "No run on the leaderboard yet" in page.inner_text("#leaderboard")
                page.fill("input[name=token]", token)
                page.set_input_files("input[name=file]", str(run_file))
                page.click("#submit-form button[type=submit]")
                page.wait_for_selector("#result")
                assert "Run 1" in page.inner_text("#result")
                rows = page.locator("#leaderboard tbody tr")
                assert rows.count() == 1
                text = rows.first.inner_text()
                assert "<script>alert(1)</script>" in text  # shown as text, never run
                assert dialogs == []
                page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
                # A bad run: the scorer's message is shown on the page.
                run_file.write_bytes(b'[{"id": "d0000", "quality": {"A": {"9": 1}}}]')
                page.fill("input[name=token]", token)
                page.set_input_files("input[name=file]", str(run_file))
                page.click("#submit-form button[type=submit]")
                page.wait_for_selector("#error-message")
                assert "my-run.json: dialogue d0000: quality" in page.inner_text("#error-message")
            finally:
                browser.close()
    finally:
        s.close()
