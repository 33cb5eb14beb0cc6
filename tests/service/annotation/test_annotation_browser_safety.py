"""The annotate page in a browser (headless Chromium through Playwright, under the strict CSP) when requests are
slow, fail or race another tab: no label is thrown away or submitted unseen; and its keyboard, focus and
accessibility (radio groups, keys wherever the focus is, the control in focus on screen, one live region,
right-to-left turns, button borders).

Slow and failing requests are made with Playwright's route interception: a request is held (answered when the
test says so) or aborted (the page's fetch fails as on a lost connection)."""

from __future__ import annotations

from contextlib import contextmanager

from annotation_support import Projects, chats_corpus
from annotation_support import join_page as _join

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture reports it
    expect = None
from service_support import LiveServer, with_csp

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.wochat import VALIDITY, validity_scale
from dialeval.service import invitations
from dialeval.service.annotation import projects

CHOSEN = '.control button.chosen[aria-label="{}"]'   # a level shown as chosen (class kept by every version)


@contextmanager
def _served(sqlite_url, name: str, corpus: Corpus, n_codes: int = 1, **kw):
    """A wochat project ``name`` of ``corpus`` (1 annotator per item) served live: (pj, server, codes)."""
    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, name, corpus, "wochat", 1, pj.clock(), **kw)
        codes = invitations.create_invitations(pj.db, "annotation", name, n_codes, pj.clock())
        with LiveServer(pj.app) as server:
            yield pj, server, codes
    finally:
        pj.close()


def _assignment(pj, project: str, code: str) -> dict:
    r = pj.call("POST", f"/api/annotation/{project}/next", code)
    assert r.status_code == 200, r.text
    return r.json()


def _labels(pj, project: str, code: str, aid: int) -> tuple[str, dict]:
    """The assignment's state and its labels as the server has them."""
    r = pj.call("GET", f"/api/annotation/{project}/assignments/{aid}", code)
    assert r.status_code == 200, r.text
    return r.json()["state"], {(lab["turn"], lab["scale"]): lab["value"] for lab in r.json()["labels"]}


def _network_only(problems: list[str]) -> list[str]:
    """The page's problems but the console's report of a request the test aborted or the server refused."""
    return [x for x in problems if "Failed to load resource" not in x]


def test_labels_given_while_submitting_are_refused_and_nothing_is_lost(sqlite_url, browser):
    """Enter, then a level key and a click while the submit is on its way: both are refused ("submitting…"),
    the page keeps showing what is submitted, and the next item opens without an error; the server has the
    labels the page showed at Enter."""
    with _served(sqlite_url, "s1", chats_corpus(2)) as (pj, server, [code]):
        p, problems = _join(browser, server, "s1", code, turns=4)
        aid = _assignment(pj, "s1", code)["assignment"]
        for k in ["1", "j", "1"]:                         # VALID on turns 1 and 3; turn 3 stays in focus
            p.keyboard.press(k)
        expect(p.locator("#saved")).to_have_text("saved")
        held = []
        first = p.inner_text("#item-title")
        p.route("**/submit", lambda route: held.append(route))
        p.keyboard.press("Enter")
        p.keyboard.press("3")                             # INVALID on turn 3: refused
        p.locator('.control button[aria-label="turn 1 validity: ACCEPTABLE"]').click()   # refused too
        expect(p.locator(CHOSEN.format("turn 3 validity: VALID"))).to_have_count(1)
        expect(p.locator(CHOSEN.format("turn 1 validity: VALID"))).to_have_count(1)
        expect(p.locator("#saved")).to_contain_text("submitting…")
        assert len(held) == 1
        held[0].continue_()
        expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
        expect(p.locator("#item-title")).not_to_have_text(first)
        expect(p.locator(".control button.chosen")).to_have_count(0)
        p.keyboard.press("1")                             # the next item takes labels again
        expect(p.locator("#saved")).to_have_text("saved")
        expect(p.locator("#error")).to_be_hidden()
        assert _labels(pj, "s1", code, aid) == ("finished", {(1, "validity"): "VALID", (3, "validity"): "VALID"})
        assert problems == []


def test_submit_waits_for_every_save_under_way(sqlite_url, browser):
    """The last label's save is slow: Enter waits for it (and refuses a label given meanwhile), then submits."""
    with _served(sqlite_url, "s2", chats_corpus(2)) as (pj, server, [code]):
        p, problems = _join(browser, server, "s2", code, turns=4)
        aid = _assignment(pj, "s2", code)["assignment"]
        held = []
        for k in ["1", "j"]:
            p.keyboard.press(k)
        expect(p.locator("#saved")).to_have_text("saved")
        p.route("**/labels", lambda route: held.append(route))
        p.keyboard.press("2")                             # ACCEPTABLE on turn 3: its save is held
        p.keyboard.press("Enter")
        p.keyboard.press("3")                             # refused: the item is being submitted
        p.wait_for_timeout(300)
        expect(p.locator(CHOSEN.format("turn 3 validity: ACCEPTABLE"))).to_have_count(1)
        expect(p.locator("#saved")).to_contain_text("submitting…")
        assert len(held) == 1 and _labels(pj, "s2", code, aid)[0] == "active"
        held[0].continue_()
        expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
        assert _labels(pj, "s2", code, aid) == ("finished", {(1, "validity"): "VALID",
                                                              (3, "validity"): "ACCEPTABLE"})
        assert problems == []


def test_a_failed_save_never_undoes_a_later_label_and_its_error_stays_until_saved_again(sqlite_url, browser):
    """A save that fails after the same label was changed again leaves the later label (which is saved); a
    failed save's error names its turn and stays while other labels are saved, until that label is saved."""
    with _served(sqlite_url, "s3", chats_corpus(1)) as (pj, server, [code]):
        p, problems = _join(browser, server, "s3", code, turns=4)
        aid = _assignment(pj, "s3", code)["assignment"]
        plan, held = [], []

        def labels(route):
            what = plan.pop(0) if plan else "go"
            if what == "hold":
                held.append(route)
            elif what == "abort":
                route.abort()
            else:
                route.continue_()

        p.route("**/labels", labels)
        plan.append("hold")
        p.keyboard.press("1")                 # turn 1 VALID: its save is held (then fails)
        p.keyboard.press("3")                 # turn 1 INVALID (a turn with tags stays in focus): saved
        held[0].abort()
        expect(p.locator("#saved")).to_have_text("saved")
        expect(p.locator(CHOSEN.format("turn 1 validity: INVALID"))).to_have_count(1)
        expect(p.locator("#error")).to_be_hidden()            # turn 1 was saved again since
        assert _labels(pj, "s3", code, aid)[1] == {(1, "validity"): "INVALID"}
        # a failed save with no later change: undone, and said until that label is saved again
        plan.append("abort")
        p.keyboard.press("2")
        expect(p.locator("#error")).to_contain_text("turn 1 validity: not saved")
        expect(p.locator("#error")).to_contain_text("give its label again")
        expect(p.locator(CHOSEN.format("turn 1 validity: INVALID"))).to_have_count(1)
        for k in ["j", "1"]:                  # another turn saved: the error about turn 1 stays
            p.keyboard.press(k)
        expect(p.locator(CHOSEN.format("turn 3 validity: VALID"))).to_have_count(1)
        p.wait_for_function("() => document.querySelector('#saved').textContent !== 'saving…'")
        assert _labels(pj, "s3", code, aid)[1] == {(1, "validity"): "INVALID", (3, "validity"): "VALID"}
        expect(p.locator("#error")).to_contain_text("turn 1 validity: not saved")
        p.keyboard.press("Enter")             # not submitted while a label is not saved
        expect(p.locator("#saved")).to_contain_text("not submitted")
        assert _labels(pj, "s3", code, aid)[0] == "active"
        for k in ["k", "2"]:                  # turn 1 saved again: the error goes
            p.keyboard.press(k)
        expect(p.locator("#error")).to_be_hidden()
        expect(p.locator("#saved")).to_have_text("saved")
        assert _labels(pj, "s3", code, aid)[1] == {(1, "validity"): "ACCEPTABLE", (3, "validity"): "VALID"}
        assert _network_only(problems) == []


def test_a_stale_tab_shows_the_saved_labels_instead_of_submitting(sqlite_url, browser):
    """Two tabs on one item: tab B changes turn 1; tab A, still showing its old label, is not submitted on
    Enter: it shows the saved labels and asks to check them; Enter again submits what it now shows."""
    with _served(sqlite_url, "s4", chats_corpus(2)) as (pj, server, [code]):
        a, problems_a = _join(browser, server, "s4", code, turns=4)
        aid = _assignment(pj, "s4", code)["assignment"]
        for k in ["1", "j", "1"]:
            a.keyboard.press(k)
        expect(a.locator("#saved")).to_have_text("saved")
        b, problems_b = _join(browser, server, "s4", code, turns=4)
        expect(b.locator(CHOSEN.format("turn 1 validity: VALID"))).to_have_count(1)
        b.locator('.control button[aria-label="turn 1 validity: INVALID"]').click()
        expect(b.locator("#saved")).to_have_text("saved")
        a.keyboard.press("Enter")
        expect(a.locator("#error")).to_contain_text("press Enter again")
        expect(a.locator("#error")).to_contain_text("turn 1 validity")
        expect(a.locator(CHOSEN.format("turn 1 validity: INVALID"))).to_have_count(1)
        assert _labels(pj, "s4", code, aid)[0] == "active"
        a.keyboard.press("Enter")             # checked: submitted as now shown
        expect(a.locator("#progress-text")).to_contain_text("you finished 1 item")
        assert _labels(pj, "s4", code, aid) == ("finished", {(1, "validity"): "INVALID", (3, "validity"): "VALID"})
        assert problems_a == [] and problems_b == []


def _long_turn_corpus() -> Corpus:
    long = " ".join(f"word{i}" for i in range(1500))
    turns = [Turn("user", ["hello"]), Turn("system", [long]), Turn("user", ["and?"]), Turn("system", ["fine"])]
    return Corpus([Dialogue("L0", turns)], {VALIDITY: validity_scale()}, "wochat", "made up")


def test_the_focused_control_of_a_turn_taller_than_the_window_is_on_screen(sqlite_url, browser):
    """A turn far taller than a phone's window: whenever the keys bring it into focus, the focused button is in
    the window (not the turn's top with the button below)."""
    with _served(sqlite_url, "s5", _long_turn_corpus()) as (_pj, server, [code]):
        p, problems = _join(browser, server, "s5", code, turns=4, viewport={"width": 360, "height": 640})
        tall = p.evaluate("() => document.querySelector('#dialogue li[data-turn=\"1\"]').offsetHeight")
        assert tall > 2 * 640, tall
        focused = p.locator(".control button:focus")
        expect(focused).to_have_attribute("aria-label", "turn 1 validity: VALID")
        expect(focused).to_be_in_viewport()
        for k, turn in [("j", 3), ("k", 1), ("j", 3), ("k", 1)]:
            p.keyboard.press(k)
            expect(focused).to_have_attribute("aria-label", f"turn {turn} validity: VALID")
            expect(focused).to_be_in_viewport()
        assert problems == []


def test_shortcuts_act_wherever_the_focus_is_and_choices_are_radio_groups(sqlite_url, browser):
    """The level, j/k and Backspace keys act with the focus on Submit, on the guidelines' summary or on a tag's
    button (where Backspace clears that tag, as the key list says); Enter on the summary opens or closes it.
    Each choice is a radio group with one Tab stop; ← / → move within it and Space chooses."""
    with _served(sqlite_url, "s6", chats_corpus(1), guidelines="# How to judge\n- be fair") as (pj, server, [code]):
        p, problems = _join(browser, server, "s6", code, turns=4)
        aid = _assignment(pj, "s6", code)["assignment"]
        # radio groups: one Tab stop each
        expect(p.get_by_role("radiogroup")).to_have_count(2)
        expect(p.get_by_role("radio", name="turn 1 validity: VALID", exact=True)).to_have_attribute("tabindex", "0")
        expect(p.locator('[role="radio"][tabindex="0"]')).to_have_count(2)
        # the focus on Submit: a level key labels the turn in focus
        p.focus("#submit")
        p.keyboard.press("2")
        expect(p.locator(CHOSEN.format("turn 1 validity: ACCEPTABLE"))).to_have_count(1)
        expect(p.get_by_role("radio", name="turn 1 validity: ACCEPTABLE", exact=True)).to_have_attribute(
            "aria-checked", "true")
        # on the guidelines' summary: j moves on; Enter is the summary's own (closes the guidelines)
        p.focus("#guidelines summary")
        p.keyboard.press("Enter")
        expect(p.locator("#guidelines")).not_to_have_attribute("open", "")
        assert p.evaluate("document.activeElement.tagName") == "SUMMARY"
        p.keyboard.press("j")
        expect(p.locator(".control button:focus")).to_have_attribute("aria-label", "turn 3 validity: VALID")
        # on a tag's button: its key toggles it, Backspace clears that tag (the level stays)
        p.focus('.control button[aria-label="turn 1 POSITIVE"]')
        p.keyboard.press("p")
        tag = p.locator('.control button[aria-label="turn 1 POSITIVE"]')
        expect(tag).to_have_attribute("aria-pressed", "true")
        p.keyboard.press("Backspace")
        expect(tag).to_have_attribute("aria-pressed", "false")
        expect(p.locator("#keys")).to_contain_text("on a tag's button: clear that tag")
        expect(p.locator(CHOSEN.format("turn 1 validity: ACCEPTABLE"))).to_have_count(1)
        # arrows within a group: the focus moves, Space chooses; the focused radio is the group's Tab stop
        p.focus('.control button[aria-label="turn 3 validity: VALID"]')
        p.keyboard.press("ArrowLeft")                     # wraps to the last level
        expect(p.locator(".control button:focus")).to_have_attribute("aria-label", "turn 3 validity: INVALID")
        p.keyboard.press("ArrowLeft")
        focused = p.locator(".control button:focus")
        expect(focused).to_have_attribute("aria-label", "turn 3 validity: ACCEPTABLE")
        expect(focused).to_have_attribute("aria-checked", "false")
        expect(focused).to_have_attribute("tabindex", "0")
        p.keyboard.press("Space")
        expect(focused).to_have_attribute("aria-checked", "true")
        expect(p.locator("#saved")).to_have_text("saved")
        assert _labels(pj, "s6", code, aid)[1] == {(1, "validity"): "ACCEPTABLE", (1, "positive"): "no",
                                                   (3, "validity"): "ACCEPTABLE"}
        assert problems == []


def test_right_to_left_turns_one_live_region_and_button_borders(sqlite_url, browser):
    """A right-to-left turn aligns right (a left-to-right one left); the page has one polite live region;
    every button's border has a contrast of at least 3:1 on white."""
    turns = [Turn("user", ["שלום, מה שלומך?"]), Turn("system", ["hello there"]), Turn("user", ["مرحبا"]),
             Turn("system", ["fine"])]
    corpus = Corpus([Dialogue("R0", turns)], {VALIDITY: validity_scale()}, "wochat", "made up")
    with _served(sqlite_url, "s7", corpus) as (_pj, server, [code]):
        p, problems = _join(browser, server, "s7", code, turns=4)
        edges = p.evaluate("""() => [...document.querySelectorAll('#dialogue li .text')].map((t) => {
            const r = document.createRange(); r.selectNodeContents(t);
            const text = r.getBoundingClientRect(), box = t.parentElement.getBoundingClientRect();
            return {left: text.left - box.left, right: box.right - text.right};
        })""")
        for i in (0, 2):  # right-to-left: at the turn's right (its padding), far from its left
            assert edges[i]["right"] < 20 < edges[i]["left"], (i, edges)
        for i in (1, 3):
            assert edges[i]["left"] < 20 < edges[i]["right"], (i, edges)
        live = p.evaluate("""() => [...document.querySelectorAll('[aria-live], [role=status], [role=log]')]
            .filter((e) => e.getAttribute('aria-live') !== 'off' && e.getAttribute('role') !== 'alert')
            .map((e) => e.id)""")
        assert live == ["saved"], live
        ratios = p.evaluate("""() => {
            const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
            const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255;
                return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
            return [...document.querySelectorAll('#annotate button')].map((b) => {
                const s = getComputedStyle(b);
                const fg = lum(rgb(s.borderTopColor)), bg = 1;
                return [b.id || b.getAttribute('aria-label'), s.borderTopWidth,
                        (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)];
            });
        }""")
        assert ratios and all(r[2] >= 3 and r[1] != "0px" for r in ratios), ratios
        assert problems == []


def test_a_turn_in_chinese_japanese_or_korean_script_says_its_language(sqlite_url, browser):
    """A screen reader reads a turn in its own language where the script tells it (kana: ja, hangul: ko, Han
    alone: zh); other turns keep the page's."""
    turns = [Turn("user", ["你好，请问怎么退款？"]), Turn("system", ["お問い合わせありがとうございます"]),
             Turn("user", ["안녕하세요"]), Turn("system", ["hello there"])]
    corpus = Corpus([Dialogue("L0", turns)], {VALIDITY: validity_scale()}, "wochat", "made up")
    with _served(sqlite_url, "s8", corpus) as (_pj, server, [code]):
        p, problems = _join(browser, server, "s8", code, turns=4)
        langs = p.evaluate("() => [...document.querySelectorAll('#dialogue li .text')].map((t) => t.lang)")
        assert langs == ["zh", "ja", "ko", ""], langs
        assert p.evaluate("() => document.documentElement.lang") == "en"
        assert problems == []
