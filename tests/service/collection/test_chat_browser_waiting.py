"""Browser tests of the chat page while a reply is awaited (headless Debian Chromium through Playwright, under
the service's CSP): the message box stays open and keeps what is typed, the participant's turn shows in the
chat at once (and comes back to the box if it was not stored), an input method's Enter sends nothing, and the
status line agrees with a failed reply."""

from __future__ import annotations

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture reports it
    expect = None
from collection_support import echo_chat as _echo_chat
from collection_support import expected_noise as _expected_noise
from collection_support import said as _said

TURNS = "**/api/collections/c1/sessions/*/turns"


def _chat(sqlite_url, browser, prepare=None):
    """Ann joined to a chat of collection c1 (the builtin echo engine, called Iris), Send ready:
    ``(ch, page, problems)``. ``prepare(ch, code)`` runs before the page opens."""
    return _echo_chat(sqlite_url, browser, prepare, ready="#send:enabled", engine_name="Iris")


def _hold_next_turn(page) -> list:
    """The next turn the page sends is held on its way (the engine "thinks") until the test lets it go
    (``held[0].continue_()``) or answers it; later ones pass. The list of held requests."""
    held: list = []

    def hold(route):
        if route.request.method == "POST" and not held:
            held.append(route)
        else:
            route.continue_()

    page.route(TURNS, hold)
    return held


def test_text_typed_while_the_reply_is_awaited_stays_in_the_box(sqlite_url, browser):
    """Three messages typed fast, each ended by Enter, the first reply slow: the box stays enabled and focused,
    the text typed meanwhile stays in it (Enter does not send it, a note says to wait for the reply, the Send
    button is off), and it is sent with Enter once the reply is there. Nothing is lost, nothing sent twice."""
    with _chat(sqlite_url, browser) as (ch, page, problems):
        held = _hold_next_turn(page)
        box = page.locator("#utterance")
        expect(box).to_be_focused()                      # ready to type after joining
        page.keyboard.type("first message\n", delay=20)
        expect(page.locator("#turns li")).to_have_count(1)
        page.keyboard.type("second message\n", delay=20)
        page.keyboard.type(" third\n", delay=20)
        assert len(held) == 1
        expect(box).to_have_value("second message third")  # kept; the Enters sent nothing, added no line
        expect(box).to_be_enabled()
        expect(box).to_be_focused()
        expect(page.locator("#send")).to_be_disabled()
        expect(page.locator("#send-note")).to_be_visible()
        expect(page.locator("#send-note")).to_contain_text("wait for the reply to send")
        expect(page.locator("#chat-status")).to_contain_text("Waiting for the reply")
        held[0].continue_()                              # the reply comes
        expect(page.locator("#turns li")).to_have_count(2)
        expect(page.locator("#send")).to_be_enabled()
        expect(page.locator("#send-note")).to_be_hidden()
        expect(box).to_have_value("second message third")
        expect(box).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#turns li")).to_have_count(4)
        expect(box).to_have_value("")
        assert page.locator("#turns li .utterance").nth(2).inner_text() == "second message third"
        assert _said(ch) == ["first message", "second message third"]
        assert problems == []


def test_the_participants_turn_shows_at_once_and_is_never_lost(sqlite_url, browser):
    """A sent message is in the chat at once, marked as being sent, and the box is cleared; the server's answer
    confirms it. A message the server did not store stays: its text comes back to the box, before what was
    typed meanwhile, and the page says it was not sent."""
    with _chat(sqlite_url, browser) as (ch, page, problems):
        held = _hold_next_turn(page)
        box = page.locator("#utterance")
        box.fill("hello Iris")
        box.press("Enter")
        mine = page.locator("#turns li.mine")
        expect(mine).to_have_count(1)
        expect(mine.locator(".utterance")).to_have_text("hello Iris")
        expect(mine.locator(".who")).to_have_text("Ann (you)")
        expect(page.locator("#turns li.pending")).to_contain_text("Sending")
        # marked unconfirmed by its outline, not by fading (its text keeps its contrast)
        assert page.locator("#turns li.pending").evaluate("e => getComputedStyle(e).borderTopStyle") == "dashed"
        assert page.locator("#turns li.pending").evaluate("e => getComputedStyle(e).opacity") == "1"
        expect(box).to_have_value("")
        held[0].continue_()
        expect(page.locator("#turns li")).to_have_count(2)
        expect(page.locator("#turns li.pending")).to_have_count(0)
        assert page.locator("#turns li .utterance").all_inner_texts() == ["hello Iris", "You said: hello Iris"]
        assert page.locator("#turns .state").count() == 0

        page.unroute(TURNS)
        held = _hold_next_turn(page)
        box.fill("this one fails")
        box.press("Enter")
        expect(page.locator("#turns li.pending")).to_have_count(1)
        page.keyboard.type("and a draft")                # typed while it is on its way
        held[0].fulfill(status=500, json={"detail": "the server failed"})
        expect(page.locator("#chat-error")).to_contain_text("the server failed")
        expect(page.locator("#turns li")).to_have_count(2)   # not stored: not in the chat as if it were
        expect(box).to_have_value("this one fails\nand a draft")
        expect(page.locator("#send")).to_be_enabled()
        assert _said(ch) == ["hello Iris"]
        assert _expected_noise(problems) == []


def test_enter_that_ends_an_input_methods_composition_does_not_send(sqlite_url, browser):
    """Japanese or Chinese typed with an input method: the Enter that confirms the composition (isComposing,
    or keyCode 229 as some browsers give it) sends nothing; the next plain Enter sends."""
    with _chat(sqlite_url, browser) as (ch, page, problems):
        box = page.locator("#utterance")
        box.fill("にほんご")
        for init in ({"key": "Enter", "isComposing": True, "keyCode": 13},
                     {"key": "Enter", "isComposing": False, "keyCode": 229}):
            page.evaluate("""init => document.getElementById("utterance").dispatchEvent(
                new KeyboardEvent("keydown", Object.assign({bubbles: true, cancelable: true}, init)))""", init)
        page.wait_for_timeout(500)
        expect(page.locator("#turns li")).to_have_count(0)
        expect(box).to_have_value("にほんご")
        assert _said(ch) == []
        box.press("Enter")
        expect(page.locator("#turns li")).to_have_count(2)
        assert _said(ch) == ["にほんご"]
        assert problems == []


def test_the_status_says_retry_after_the_engine_timed_out(sqlite_url, browser, monkeypatch):
    """The engine did not answer in time: the status line no longer says the reply is awaited, it says to use
    Retry, as the alert does; the message stays in the chat; Retry brings the reply and the participant's turn."""
    from dialeval.service.collection import chats
    from dialeval.service.collection.engines import EngineError

    down = {"on": True}

    def slow_engine(ch, code):
        c, _inv = chats.participant(ch.db, "c1", code)
        engine = type(chats.engine_of(c))
        reply = engine.reply

        def times_out(self, dialogue):
            if down["on"]:
                raise EngineError("the chat engine did not answer within 3 s")
            return reply(self, dialogue)

        monkeypatch.setattr(engine, "reply", times_out)

    with _chat(sqlite_url, browser, slow_engine) as (_ch, page, problems):
        box = page.locator("#utterance")
        box.fill("hello")
        box.press("Enter")
        expect(page.locator("#chat-error")).to_contain_text("took too long")
        expect(page.locator("#retry")).to_be_focused()
        status = page.locator("#chat-status")
        expect(status).to_contain_text("Retry")
        assert "Waiting for the reply" not in status.inner_text()
        assert page.locator("#turns li .utterance").all_inner_texts() == ["hello"]
        assert page.locator("#turns li.pending").count() == 0
        expect(box).to_be_enabled()                      # typing ahead is possible; sending waits for the reply
        expect(page.locator("#send")).to_be_disabled()
        expect(page.locator("#send-note")).to_contain_text("Retry")
        down["on"] = False
        page.click("#retry")
        expect(page.locator("#turns li")).to_have_count(2)
        expect(status).to_contain_text("Your turn")
        expect(page.locator("#chat-error")).to_be_hidden()
        expect(box).to_be_focused()
        assert problems == []


def test_a_turn_in_chinese_says_its_language_and_an_english_one_keeps_the_pages(sqlite_url, browser):
    """The participant's turn and the reply are marked ``lang="zh"`` when in Han characters (a screen reader
    reads them as Chinese, not as English, the page's language); an English turn has no ``lang`` of its own."""
    with _chat(sqlite_url, browser) as (_ch, page, problems):
        box = page.locator("#utterance")
        box.fill("你好")
        box.press("Enter")
        expect(page.locator("#turns li")).to_have_count(2)
        box.fill("hello")
        box.press("Enter")
        expect(page.locator("#turns li")).to_have_count(4)
        langs = page.evaluate("() => [...document.querySelectorAll('#turns li .utterance')].map((t) => t.lang)")
        assert langs == ["zh", "zh", "", ""], langs
        assert problems == []
