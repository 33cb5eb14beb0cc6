"""Browser tests of the chat page (headless Debian Chromium through Playwright) under the strict CSP the
service sends: a participant joins with a code, chats 5 turns with the builtin engine and ends; two people
are paired and chat over the WebSocket."""

from __future__ import annotations

import contextlib

try:
    from playwright.sync_api import expect
except ImportError:  # the fixture reports it
    expect = None
from collection_support import Chats
from service_support import LiveServer, watch
from service_support import with_csp as _with_csp

import dialeval
from dialeval.service.collection.export import export_chats


def _join(page, url: str, code: str, nickname: str) -> None:
    page.goto(f"{url}/collections/c1")
    page.fill("input[name=code]", code)
    page.fill("input[name=nickname]", nickname)
    page.click("#join-form button[type=submit]")
    page.wait_for_selector("#chat")


def test_a_participant_chats_five_turns_and_ends(sqlite_url, tmp_path, browser):
    ch = Chats(sqlite_url)
    try:
        [code] = ch.collection("c1", "builtin:retrieval", n_codes=1, engine_name="Iris")
        _with_csp(ch.app)
        with LiveServer(ch.app) as server:
            page = browser.new_page()
            problems = watch(page)
            _join(page, server.url, code, "Ann")
            said = ["hello Iris", "my order has not arrived yet", "<script>alert(1)</script>",
                    "how do I reset my password?", "thank you"]
            for i, text in enumerate(said):
                page.wait_for_selector("#utterance:enabled")
                page.fill("#utterance", text)
                page.press("#utterance", "Enter")
                expect(page.locator("#turns li")).to_have_count(2 * (i + 1))
            items = page.locator("#turns li .utterance")
            assert items.nth(4).inner_text() == "<script>alert(1)</script>"  # text, not markup
            assert page.locator("#turns script").count() == 0
            assert items.nth(3).inner_text().startswith("I am sorry to hear that.")
            page.wait_for_selector("#end:enabled")
            page.click("#end")
            page.wait_for_selector("#again:visible")
            assert "The chat has ended (you ended it)" in page.inner_text("#chat-status")
            assert page.locator("#utterance").is_disabled()
            page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
            assert problems == []
        export_chats(ch.db, "c1", tmp_path / "out")
        [d] = dialeval.read_corpus(tmp_path / "out").dialogues
        assert d.id == "Iris00000" and [t.sender for t in d.turns] == ["user", "system"] * 5
        assert [t.text for t in d.turns[::2]] == ["hello SYSTEM_NAME", *said[1:]]
    finally:
        ch.close()


def test_two_people_are_paired_and_chat(sqlite_url, browser):
    ch = Chats(sqlite_url)
    try:
        a, b = ch.collection("c1", None, n_codes=2, human_human=True)
        _with_csp(ch.app)
        with LiveServer(ch.app) as server:
            p1, p2 = browser.new_context().new_page(), browser.new_context().new_page()
            problems1, problems2 = watch(p1), watch(p2)
            _join(p1, server.url, a, "Ann")
            expect(p1.locator("#chat-status")).to_contain_text("Waiting for another person")
            _join(p2, server.url, b, "Bea")
            p1.wait_for_selector("#utterance:enabled")
            assert p2.locator("#utterance").is_disabled()
            p1.fill("#utterance", "hi <b>Bea</b>")
            p1.press("#utterance", "Enter")
            expect(p2.locator("#turns li")).to_have_count(1)
            assert p2.inner_text("#turns li .utterance") == "hi <b>Bea</b>"
            p2.wait_for_selector("#utterance:enabled")
            p2.fill("#utterance", "hello Ann")
            p2.press("#utterance", "Enter")
            expect(p1.locator("#turns li")).to_have_count(2)
            p1.click("#end")
            for p in (p1, p2):
                expect(p.locator("#chat-status")).to_contain_text("has ended")
            assert problems1 == [] and problems2 == []
    finally:
        ch.close()


@contextlib.contextmanager
def _joined_chat(sqlite_url, browser, monkeypatch=None, fail_with: str | None = None):
    """A participant joined to a chat of collection c1 in the browser, the message box ready: ``(page,
    problems)``. ``fail_with``: the engine fails with this cause (``monkeypatch`` needed)."""
    from dialeval.service.collection import chats
    from dialeval.service.collection.engines import EngineError

    ch = Chats(sqlite_url)
    try:
        [code] = ch.collection("c1", "builtin:echo", n_codes=1)
        if fail_with is not None:
            c, _inv = chats.participant(ch.db, "c1", code)

            def fails(self, dialogue):
                raise EngineError(fail_with)

            monkeypatch.setattr(type(chats.engine_of(c)), "reply", fails)
        _with_csp(ch.app)
        with LiveServer(ch.app) as server:
            page = browser.new_page()
            problems = watch(page)
            _join(page, server.url, code, "Ann")
            page.wait_for_selector("#utterance:enabled")
            yield page, problems
    finally:
        ch.close()


def test_the_error_box_goes_when_the_chat_is_not_active(sqlite_url, browser, monkeypatch):
    """The engine fails: the page says so and offers Retry. The participant ends the chat: the error box and
    Retry go, even if an answer still carried ``engine_error`` (the page hides it on a chat that is not active;
    here the end's answer is given one on the way to the page)."""
    import json

    with _joined_chat(sqlite_url, browser, monkeypatch, "the engine is down") as (page, problems):
        page.fill("#utterance", "hello")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("ask again with Retry")
        expect(page.locator("#retry")).to_be_visible()

        def stale_error(route):
            got = route.fetch()
            state = got.json()
            assert state["status"] == "ended"
            state["engine_error"] = "the engine is down; your message is saved, ask again with Retry"
            route.fulfill(response=got, body=json.dumps(state))

        page.route("**/api/collections/c1/sessions/*/end", stale_error)
        page.click("#end")
        page.wait_for_selector("#again:visible")
        expect(page.locator("#chat-error")).to_be_hidden()
        expect(page.locator("#retry")).to_be_hidden()
        assert "The chat has ended" in page.inner_text("#chat-status")
        assert problems == []


def test_a_long_message_is_counted_and_never_cut(sqlite_url, browser):
    """Near the 2,000-character limit the page counts the characters; a longer (pasted) message is kept whole
    in the box, and Send refuses it with a message instead of cutting it."""
    with _joined_chat(sqlite_url, browser) as (page, problems):
        page.fill("#utterance", "short")
        expect(page.locator("#count")).to_be_hidden()
        page.fill("#utterance", "x" * 1900)
        expect(page.locator("#count")).to_contain_text("1900 / 2000")
        page.fill("#utterance", "y" * 2100)           # as a paste: nothing is cut
        assert len(page.input_value("#utterance")) == 2100
        expect(page.locator("#count")).to_contain_text("100 too many")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("at most 2000 are sent")
        expect(page.locator("#turns li")).to_have_count(0)  # nothing sent
        assert len(page.input_value("#utterance")) == 2100
        page.fill("#utterance", "z" * 2000)
        page.press("#utterance", "Enter")
        expect(page.locator("#turns li.mine")).to_have_count(1)  # the limit itself is sent
        assert len(page.inner_text("#turns li.mine .utterance")) == 2000
        expect(page.locator("#count")).to_be_hidden()
        assert problems == []


def test_the_way_forward_gets_the_focus_and_engine_trouble_is_said_in_words(sqlite_url, browser, monkeypatch):
    """A failed reply focuses Retry and says what happened without the engine's technical cause (an exception's
    class such as ConnectError); the end of the chat focuses "Start a new chat"."""
    cause = "the chat engine cannot be reached (ConnectError)"
    with _joined_chat(sqlite_url, browser, monkeypatch, cause) as (page, problems):
        page.fill("#utterance", "hello")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("Your message is saved")
        expect(page.locator("#retry")).to_be_focused()
        assert "ConnectError" not in page.inner_text("#chat-error")
        assert "(" not in page.inner_text("#chat-error")
        page.click("#end")
        expect(page.locator("#again")).to_be_focused()
        assert problems == []


def test_the_chat_page_focuses_start_a_new_chat_after_the_end_by_keyboard(sqlite_url, browser):
    """Ended with the keyboard (Tab to End, Enter): the focus goes to "Start a new chat", not to the page."""
    with _joined_chat(sqlite_url, browser) as (page, problems):
        page.fill("#utterance", "hello")
        page.press("#utterance", "Enter")
        expect(page.locator("#turns li")).to_have_count(2)
        page.focus("#end")
        page.keyboard.press("Enter")
        expect(page.locator("#again")).to_be_focused()
        page.keyboard.press("Enter")                 # a new chat: the message box has the focus
        expect(page.locator("#utterance")).to_be_focused()
        assert problems == []
