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
from collection_support import echo_chat as _echo_chat
from collection_support import expected_noise as _expected_noise
from collection_support import join_chat as _join
from collection_support import said as _said
from service_support import LiveServer, watch
from service_support import with_csp as _with_csp

import dialeval
from dialeval.service.collection.export import export_chats


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
    """:func:`_echo_chat`'s ``(page, problems)``. ``fail_with``: the engine fails with this cause (``monkeypatch``
    needed)."""
    from dialeval.service.collection import chats
    from dialeval.service.collection.engines import EngineError

    def failing(ch, code):
        c, _inv = chats.participant(ch.db, "c1", code)

        def fails(self, dialogue):
            raise EngineError(fail_with)

        monkeypatch.setattr(type(chats.engine_of(c)), "reply", fails)

    with _echo_chat(sqlite_url, browser, failing if fail_with is not None else None) as (_ch, page, problems):
        yield page, problems


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


def _positions(page) -> list[int]:
    return [int(p) for p in page.eval_on_selector_all("#turns li", "els => els.map(e => e.dataset.position)")]


def test_a_turn_whose_answer_was_lost_is_not_sent_twice(sqlite_url, browser):
    """The server stores a turn but its answer never reaches the page: the page reads the chat again, shows the
    turn and the reply, says the message was saved (never "nothing was saved"), and the box is empty; the turn
    is stored once."""
    with _echo_chat(sqlite_url, browser) as (ch, page, problems):
        dropped = []

        def drop_answer(route):
            if route.request.method == "POST" and not dropped:
                dropped.append(route.request.post_data_json)
                route.fetch()                      # the server stores the turn...
                route.abort("connectionreset")     # ...and its answer is lost
            else:
                route.continue_()

        page.route("**/api/collections/c1/sessions/*/turns", drop_answer)
        page.fill("#utterance", "my first message")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("your message was saved")
        expect(page.locator("#chat-error")).to_contain_text("the chat was reloaded")
        assert "nothing was saved" not in page.inner_text("#chat-error")
        assert dropped == [{"utterance": "my first message", "position": 1}]
        expect(page.locator("#turns li")).to_have_count(2)
        assert _positions(page) == [1, 2] and page.input_value("#utterance") == ""
        page.wait_for_selector("#utterance:enabled")
        page.fill("#utterance", "second")
        page.press("#utterance", "Enter")
        expect(page.locator("#turns li")).to_have_count(4)
        assert _positions(page) == [1, 2, 3, 4]
        assert _expected_noise(problems) == []
        assert _said(ch) == ["my first message", "second"]


def test_a_turn_that_may_not_have_arrived_reads_the_chat_before_it_is_sent_again(sqlite_url, browser):
    """The connection breaks before the turn reaches the server, and the chat cannot be read again at once:
    the page says the message may have been saved, keeps the text, and Enter reads the chat first; the next
    Enter sends it, once."""
    with _echo_chat(sqlite_url, browser) as (ch, page, problems):
        broken = {"turns": 1, "reads": 1}

        def offline(route):
            kind = "turns" if route.request.method == "POST" else "reads"
            if broken[kind]:
                broken[kind] -= 1
                route.abort("internetdisconnected")
            else:
                route.continue_()

        page.route("**/api/collections/c1/sessions/*/turns", offline)
        page.route("**/api/collections/c1/sessions/*?after=*", offline)
        page.fill("#utterance", "hello")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("your message may have been saved")
        expect(page.locator("#chat-error")).to_contain_text("could not be reloaded yet")
        assert page.input_value("#utterance") == "hello"
        page.wait_for_selector("#utterance:enabled")
        page.press("#utterance", "Enter")           # reads the chat: nothing was stored
        expect(page.locator("#chat-error")).to_contain_text("The chat was reloaded")
        expect(page.locator("#chat-error")).to_contain_text("send it again only if it is not in the chat")
        assert page.locator("#turns li").count() == 0 and page.input_value("#utterance") == "hello"
        assert _said(ch) == []
        page.wait_for_selector("#utterance:enabled")
        page.press("#utterance", "Enter")
        expect(page.locator("#turns li")).to_have_count(2)
        expect(page.locator("#chat-error")).to_be_hidden()
        assert _expected_noise(problems) == []
        assert _said(ch) == ["hello"]


def test_two_windows_of_one_chat_never_skip_a_turn(sqlite_url, browser):
    """The same chat open in two windows: a turn sent from the window that missed the other's turns is refused
    (nothing stored), and that window then shows the turns it missed, in order; an answer that skips turns (a
    client sending no position) makes the page read the missing ones first."""
    ch = Chats(sqlite_url)
    try:
        [code] = ch.collection("c1", "builtin:echo", n_codes=1)
        _with_csp(ch.app)
        with LiveServer(ch.app) as server:
            ctx = browser.new_context()
            t1, t2 = ctx.new_page(), ctx.new_page()
            problems1, problems2 = watch(t1), watch(t2)
            _join(t1, server.url, code, "Ann")
            t1.wait_for_selector("#utterance:enabled")
            t1.fill("#utterance", "hello one")
            t1.press("#utterance", "Enter")
            expect(t1.locator("#turns li")).to_have_count(2)
            _join(t2, server.url, code, "Ann")                 # resumes the same chat
            expect(t2.locator("#turns li")).to_have_count(2)
            t2.wait_for_selector("#utterance:enabled")
            t2.fill("#utterance", "hello from two")
            t2.press("#utterance", "Enter")
            expect(t2.locator("#turns li")).to_have_count(4)
            t1.fill("#utterance", "stale one")                  # t1 still shows turns 1-2
            t1.press("#utterance", "Enter")
            expect(t1.locator("#chat-error")).to_contain_text("Your message was not sent")
            expect(t1.locator("#turns li")).to_have_count(4)
            assert _positions(t1) == [1, 2, 3, 4] and t1.input_value("#utterance") == "stale one"
            assert _said(ch) == ["hello one", "hello from two"]
            t1.wait_for_selector("#utterance:enabled")
            t1.press("#utterance", "Enter")                     # sent again, now in its place
            expect(t1.locator("#turns li")).to_have_count(6)
            assert _positions(t1) == [1, 2, 3, 4, 5, 6]
            # t2 (at 4) misses turns 5-6; its request goes without a position: the answer holds turns 7-8 only
            t2.route("**/api/collections/c1/sessions/*/turns",
                     lambda route: route.continue_(post_data={"utterance": route.request.post_data_json["utterance"]}))
            t2.fill("#utterance", "old client")
            t2.press("#utterance", "Enter")
            expect(t2.locator("#turns li")).to_have_count(8)
            assert _positions(t2) == [1, 2, 3, 4, 5, 6, 7, 8]
            assert t2.locator("#turns li .utterance").nth(4).inner_text() == "stale one"
            assert _expected_noise(problems1) == [] and problems2 == []
        assert _said(ch) == ["hello one", "hello from two", "stale one", "old client"]
    finally:
        ch.close()


def test_after_a_reload_the_participants_own_turns_are_still_theirs(sqlite_url, browser):
    """Human-human: a participant who comes back (a reload, a new socket) sees their earlier turns as their
    own ("Ann (you)"), the other person's as the other person's."""
    ch = Chats(sqlite_url)
    try:
        a, b = ch.collection("c1", None, n_codes=2, human_human=True)
        _with_csp(ch.app)
        with LiveServer(ch.app) as server:
            p1, p2 = browser.new_context().new_page(), browser.new_context().new_page()
            problems1, problems2 = watch(p1), watch(p2)
            _join(p1, server.url, a, "Ann")
            _join(p2, server.url, b, "Bea")
            p1.wait_for_selector("#utterance:enabled")
            p1.fill("#utterance", "I wrote this")
            p1.press("#utterance", "Enter")
            expect(p2.locator("#turns li")).to_have_count(1)
            p2.wait_for_selector("#utterance:enabled")
            p2.fill("#utterance", "and I this")
            p2.press("#utterance", "Enter")
            expect(p1.locator("#turns li")).to_have_count(2)
            p1.reload()                                         # a reload: the chat page again, no form resent
            assert p1.url == f"{server.url}/collections/c1/join"
            expect(p1.locator("#turns li.mine")).to_have_count(1)
            assert p1.inner_text("#turns li.mine .who") == "Ann (you)"
            _join(p1, server.url, a, "Ann")                     # Ann comes back
            expect(p1.locator("#turns li")).to_have_count(2)
            expect(p1.locator("#turns li.mine")).to_have_count(1)
            assert p1.inner_text("#turns li.mine .utterance") == "I wrote this"
            assert p1.inner_text("#turns li.mine .who") == "Ann (you)"
            assert p1.inner_text("#turns li.theirs .who") == "the other person"
            assert problems1 == [] and problems2 == []
    finally:
        ch.close()


def test_the_chat_pages_work_under_a_path_prefix(sqlite_url, browser):
    """Served under a proxy's path prefix (/dq, the ASGI root_path; any other path is a 404 here): the join
    form, the chat's API calls and the human-human WebSocket all stay under the prefix."""
    from service_support import UnderPrefix

    ch = Chats(sqlite_url)
    try:
        [code] = ch.collection("c1", "builtin:echo", n_codes=1)
        a, b = ch.collection("hh", None, n_codes=2, human_human=True)
        _with_csp(ch.app)
        with LiveServer(UnderPrefix(ch.app)) as server:
            base = server.url + "/dq"
            page = browser.new_page()
            problems = watch(page)
            asked = []
            page.on("request", lambda r: asked.append(r.url))
            _join(page, base, code, "Ann")
            page.wait_for_selector("#utterance:enabled")
            page.fill("#utterance", "hello")
            page.press("#utterance", "Enter")
            expect(page.locator("#turns li")).to_have_count(2)
            assert all(u.startswith(base + "/") for u in asked), asked
            assert problems == []
            p1, p2 = browser.new_context().new_page(), browser.new_context().new_page()
            problems1, problems2 = watch(p1), watch(p2)
            for p, code_, name in ((p1, a, "Ann"), (p2, b, "Bea")):
                p.goto(f"{base}/collections/hh")
                p.fill("input[name=code]", code_)
                p.fill("input[name=nickname]", name)
                p.click("#join-form button[type=submit]")
                p.wait_for_selector("#chat")
            p1.wait_for_selector("#utterance:enabled")
            p1.fill("#utterance", "hi Bea")
            p1.press("#utterance", "Enter")
            expect(p2.locator("#turns li")).to_have_count(1)
            assert problems1 == [] and problems2 == []
    finally:
        ch.close()


def test_a_code_revoked_mid_chat_stops_the_page_and_says_so(sqlite_url, browser):
    """The organisers revoke a participant's code while the chat page is open: the next message is refused (401)
    and the page says the code no longer works and stops (box, Send and End disabled), not "Your turn"."""
    from dialeval.service import invitations

    got = {}
    with _echo_chat(sqlite_url, browser, lambda ch, code: got.update(code=code)) as (ch, page, problems):
        page.fill("#utterance", "hello")
        page.press("#utterance", "Enter")
        expect(page.locator("#turns li")).to_have_count(2)
        page.wait_for_selector("#send:enabled")
        invitations.revoke_code(ch.db, got["code"], ch.clock())
        page.fill("#utterance", "are you there?")
        page.press("#utterance", "Enter")
        expect(page.locator("#chat-error")).to_contain_text("Your code no longer works in this collection")
        expect(page.locator("#utterance")).to_be_disabled()
        expect(page.locator("#end")).to_be_disabled()
        expect(page.locator("#chat-status")).to_have_text("This chat cannot go on from this page.")
        assert _expected_noise(problems) == []
