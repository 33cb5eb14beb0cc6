"""The whole path in a browser (headless Chromium through Playwright) under the strict CSP: a participant
chats 5 turns with the builtin engine and ends; three annotators each label the chat with the keyboard; the
export read by read_corpus has 3 annotators on every system turn with exactly the labels given, and
`dialeval gold` builds its distributions."""

from __future__ import annotations

import json
from contextlib import contextmanager

from annotation_support import Projects
from annotation_support import join_page as _join

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture reports it
    expect = None
from service_support import LiveServer, watch, with_csp

import dialeval
from dialeval.cli.main import run as cli
from dialeval.io.wochat import VALIDITY_TAGS
from dialeval.service import invitations
from dialeval.service.annotation import projects
from dialeval.service.collection import chats
from dialeval.service.collection.export import collection_corpus


def test_chat_then_three_annotators_label_with_the_keyboard_then_gold(sqlite_url, tmp_path, browser):
    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        chats.create_collection(pj.db, "c1", "builtin:retrieval", pj.clock(), engine_name="Iris")
        [chat_code] = invitations.create_invitations(pj.db, "collection", "c1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            # 1. a participant chats 5 turns and ends
            page = browser.new_context().new_page()
            problems = watch(page)
            page.goto(f"{server.url}/collections/c1")
            page.fill("input[name=code]", chat_code)
            page.fill("input[name=nickname]", "Ann")
            page.click("#join-form button[type=submit]")
            said = ["hello Iris", "my order has not arrived", "<script>alert(1)</script>", "how do I pay?",
                    "thank you"]
            for i, text in enumerate(said):
                page.wait_for_selector("#utterance:enabled")
                page.fill("#utterance", text)
                page.press("#utterance", "Enter")
                expect(page.locator("#turns li")).to_have_count(2 * (i + 1))
            page.wait_for_selector("#end:enabled")
            page.click("#end")
            page.wait_for_selector("#again:visible")
            assert problems == []
            # 2. the organiser makes a project of the collection's chats
            projects.create_project(pj.db, "a1", collection_corpus(pj.db, "c1"), "wochat", 3, pj.clock(),
                                    guidelines="# How to judge\n- **VALID**: a fine answer <b>really</b>",
                                    source="collection c1")
            codes = invitations.create_invitations(pj.db, "annotation", "a1", 3, pj.clock())
            # 3. three annotators label every system turn with the keyboard
            given = {}
            for i, code in enumerate(codes):
                p = browser.new_context().new_page()
                problems = watch(p)
                p.goto(f"{server.url}/annotate/a1")
                p.fill("input[name=code]", code)
                p.click("#join-form button[type=submit]")
                expect(p.locator("#dialogue li")).to_have_count(10)
                assert p.locator("#dialogue li .text").nth(4).inner_text() == "<script>alert(1)</script>"
                assert p.locator("#dialogue script").count() == 0
                assert "<b>really</b>" in p.inner_text("#guidelines")        # escaped, shown as text
                expect(p.locator("#keys")).to_contain_text("VALID / ACCEPTABLE / INVALID")
                expect(p.locator(".control button kbd").first).to_have_text("1")
                p.locator("body").click()
                if i == 0:  # Enter with labels missing says so, and takes the keyboard to the first one
                    p.keyboard.press("Enter")
                    expect(p.locator("#saved")).to_contain_text("5 labels still missing")
                mine = {}
                for j, turn in enumerate(range(1, 10, 2)):
                    if j == i:
                        p.keyboard.press("p")                              # POSITIVE on this turn
                        mine[(turn, "positive")] = "yes"
                    key = str((i + j) % 3 + 1)
                    p.keyboard.press(key)
                    mine[(turn, "validity")] = VALIDITY_TAGS[int(key) - 1]
                    expect(p.locator("#progress-text")).to_contain_text(f"this item: {j + 1} of 5 labels")
                    p.keyboard.press("j")  # a turn with tags stays in focus after its level: j goes on
                p.wait_for_selector("#submit:enabled")
                p.screenshot(path=str(tmp_path / f"annotator{i}-labelled.png"), full_page=True)
                p.keyboard.press("Enter")
                expect(p.locator("#done")).to_be_visible()
                expect(p.locator("#submit")).to_be_hidden()
                expect(p.locator(".keys")).to_be_hidden()
                expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
                p.screenshot(path=str(tmp_path / f"annotator{i}.png"), full_page=True)
                assert problems == []
                given[f"A{i + 1:03d}"] = mine
        # 4. the export: 3 annotators on every system turn, exactly the labels given; gold builds
        out = tmp_path / "export"
        assert cli(["admin", "export-annotations", "a1", "--to", "wochat", "--out", str(out),
                    "--database-url", sqlite_url]) == 0
        [d] = dialeval.read_corpus(out).dialogues
        got = {}
        for pos, t in enumerate(d.turns):
            if t.sender != "system":
                assert not t.labels
                continue
            assert t.annotators == ["A001", "A002", "A003"]
            for scale, labs in t.labels.items():
                for aid, lab in zip(t.annotators, labs, strict=True):
                    if lab != "no":
                        got.setdefault(aid, {})[(pos, scale)] = lab
        assert got == given
        gold = tmp_path / "gold.json"
        assert cli(["gold", str(out), "--out", str(gold)]) == 0
        assert json.loads(gold.read_text())
    finally:
        pj.close()


@contextmanager
def _stc3_dialogue(sqlite_url, browser, project: str):
    """One STC-3 dialogue (a customer turn, a helpdesk turn) of project ``project`` open in the browser: its
    page and the list of the page's console problems."""
    from dialeval.corpus import Corpus, Dialogue, Turn
    from dialeval.io.stc3 import stc3_scales

    corpus = Corpus([Dialogue("d0", [Turn("customer", ["my order"]), Turn("helpdesk", ["sorry"])])],
                    stc3_scales(), "stc3")
    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        [code] = pj.project(project, corpus, scheme="stc3", overlap=1, n_codes=1)
        with LiveServer(pj.app) as server:
            yield _join(browser, server, project, code, turns=2)
    finally:
        pj.close()


@contextmanager
def _two_chats(sqlite_url, browser, project: str):
    """A wochat project ``project`` of two chats (overlap 1), its one annotator joined in the browser on the first
    chat (4 turns): ``(pj, server, page, problems)``."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, project, chats_corpus(2), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", project, 1, pj.clock())
        with LiveServer(pj.app) as server:
            yield (pj, server, *_join(browser, server, project, code, turns=4))
    finally:
        pj.close()


def test_mouse_then_enter_submits_and_tab_then_space_chooses(sqlite_url, browser):
    """Enter submits after labels were clicked with the mouse (the clicked button keeps the focus); Space
    presses a label button reached with Tab; Enter with labels missing says so and makes the first the label in
    focus."""
    with _two_chats(sqlite_url, browser, "m1") as (_pj, server, p, problems):
        # 1. the keyboard: Tab to a label button, Space chooses it
        p.locator("body").click()
        for _ in range(40):
            p.keyboard.press("Tab")
            if p.evaluate("document.activeElement.getAttribute('aria-label')") == "turn 1 validity: VALID":
                break
        p.keyboard.press("Space")
        expect(p.locator(".control button:focus")).to_have_attribute("aria-checked", "true")
        expect(p.locator("#item-title")).to_contain_text("Item")
        p.locator("#item-title").click()  # a click elsewhere: the keyboard's Enter submits again
        p.keyboard.press("Enter")  # one turn is still missing: said, and its keys act there
        expect(p.locator("#saved")).to_contain_text("1 label still missing")
        # 2. the mouse: the last label clicked, Enter submits the item
        p.locator('.control.missing button[aria-label="turn 3 validity: INVALID"]').click()
        expect(p.locator("#progress-text")).to_contain_text("this item: 2 of 2 labels")
        p.keyboard.press("Enter")
        expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
        # 3. a reload opens the annotate page again (Post/Redirect/Get: no form sent again, no dialog)
        p.reload()
        assert p.url == f"{server.url}/annotate/m1/join"
        expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
        # 4. Leave: this browser forgets the code; the page's address is the join form again
        p.click("form.leave button")
        expect(p.locator("#join-form")).to_be_visible()
        p.goto(f"{server.url}/annotate/m1/join")
        expect(p.locator("#join-form")).to_be_visible()
        assert problems == []


def test_numbered_levels_are_typed_as_written(sqlite_url, browser):
    """STC-3's A/S/E levels 2 1 0 -1 -2 are chosen by typing the level (a negative one as "-" then its digit),
    so no key names another level; its nugget types (not numbers) by position, 1 2 3 4. A "-" where no level
is negative does nothing."""
    with _stc3_dialogue(sqlite_url, browser, "k1") as (p, problems):
        expect(p.locator("#keys")).to_contain_text("2 1 0 -1 -2")
        p.locator("body").click()
        for k in ["2", "1", "-", "1", "0", "-", "2"]:  # the turns' nugget types, then A, S, E below them
            p.keyboard.press(k)
        expect(p.locator("#progress-text")).to_contain_text("this item: 5 of 5 labels")
        for name in ["dialogue A: task accomplishment: -1", "dialogue S: customer satisfaction: 0",
                     "dialogue E: dialogue effectiveness: -2", "turn 0 nugget type (customer): CNUG",
                     "turn 1 nugget type (helpdesk): HNUG"]:
            expect(p.locator(f'.control button[aria-label="{name}"]')).to_have_attribute("aria-checked", "true")
        assert problems == []


def test_hidden_speakers_page_looks_the_same_on_every_turn(sqlite_url, browser):
    """With --hide-speakers the rendered page (elements, classes, attributes, controls) is the same on every
    turn of both speakers, apart from the text, the "Speaker N" label, the turn's number and the keyboard's
    focus: where the controls are does not say which speaker is the machine."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "h1", chats_corpus(1, turns=5), "wochat", 1, pj.clock(), hide_speakers=True)
        [code] = invitations.create_invitations(pj.db, "annotation", "h1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "h1", code, turns=5)
            shapes = p.evaluate("""() => [...document.querySelectorAll('#dialogue li')].map((li) => {
                const c = li.cloneNode(true);
                for (const e of [c, ...c.querySelectorAll('*')]) {
                    e.removeAttribute('data-turn');
                    const name = e.getAttribute('aria-label');  // "turn 3 validity": the turn's number
                    if (name) e.setAttribute('aria-label', name.replace(/^turn \\d+ /, 'turn N '));
                    e.classList.remove('focus', 'current');  // where the keyboard is, which moves
                    if (!e.classList.length) e.removeAttribute('class');
                }
                c.querySelector('.speaker').textContent = '';
                c.querySelector('.text').textContent = '';
                c.querySelector('.turn-no').textContent = '';
                return c.outerHTML;
            })""")
            assert len(shapes) == 5 and len(set(shapes)) == 1, shapes
            assert 'class="labelled' in shapes[0] and 'data-scale="ismachine"' in shapes[0]
            # The page numbers the turns as the API does (from 0) and the speakers as the API draws them.
            assert p.locator("#dialogue li .turn-no").all_inner_texts() == [f"turn {i}" for i in range(5)]
            view = pj.call("POST", "/api/annotation/h1/next", code).json()
            assert p.locator("#dialogue li .speaker").all_inner_texts() == [t["speaker"] for t in view["item"]["turns"]]
            assert problems == []
    finally:
        pj.close()


def _focused(p) -> dict:
    """Where the browser's focus is: the label control (turn, scale) and the button's accessible name."""
    return p.evaluate("""() => {
        const a = document.activeElement, box = a && a.closest && a.closest('.control');
        return {turn: box ? box.dataset.turn : null, scale: box ? box.dataset.scale : null,
                name: a ? a.getAttribute('aria-label') : null, id: a ? a.id : null,
                current: !!(box && box.classList.contains('current'))};
    }""")


def _labels(pj, project: str, code: str, aid: int) -> dict:
    r = pj.call("GET", f"/api/annotation/{project}/assignments/{aid}", code)
    assert r.status_code == 200, r.text
    return {(lab["turn"], lab["scale"]): lab["value"] for lab in r.json()["labels"]}


def test_enter_on_a_tabbed_label_button_submits_and_never_changes_a_label(sqlite_url, browser):
    """Tab reaches a label button; then the keys that move the label in focus move the browser's focus with it
    (one place, one mark), and Enter submits the item: it never presses the focused label button again."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "e1", chats_corpus(2), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "e1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "e1", code, turns=4)
            aid = pj.call("POST", "/api/annotation/e1/next", code).json()["assignment"]
            p.locator("body").click()
            for _ in range(40):
                p.keyboard.press("Tab")
                if _focused(p)["name"] == "turn 1 validity: VALID":
                    break
            p.keyboard.press("2")                      # ACCEPTABLE on turn 1, the button's turn
            expect(p.locator('.control button[aria-label="turn 1 validity: ACCEPTABLE"]')).to_have_attribute(
                "aria-checked", "true")
            p.keyboard.press("j")                      # on to turn 3: the browser's focus goes along
            got = _focused(p)
            assert (got["turn"], got["scale"], got["current"]) == ("3", "validity", True), got
            assert p.locator(".control.current").count() == 1 and p.locator("li.focus").count() == 1
            p.keyboard.press("3")                      # INVALID on turn 3
            expect(p.locator("#progress-text")).to_contain_text("this item: 2 of 2 labels")
            p.keyboard.press("Enter")                  # submits: the focused button is not pressed again
            expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
            assert _labels(pj, "e1", code, aid) == {(1, "validity"): "ACCEPTABLE", (3, "validity"): "INVALID"}
            # the next item: Enter on a label button with labels missing says so, and changes nothing
            expect(p.locator("#item-title")).not_to_contain_text("Item 0")
            p.keyboard.press("1")                      # VALID on its turn 1; the focus stays on that turn
            got = _focused(p)
            assert got["turn"] == "1" and got["name"] == "turn 1 validity: VALID", got
            expect(p.locator("#saved")).to_have_text("saved")   # the label's answer first: under load it came
            for _ in range(3):                                   # after the Enters and wrote over their message
                p.keyboard.press("Enter")
            expect(p.locator("#saved")).to_contain_text("1 label still missing")
            aid2 = pj.call("POST", "/api/annotation/e1/next", code).json()["assignment"]
            assert _labels(pj, "e1", code, aid2) == {(1, "validity"): "VALID"}
            assert problems == []
    finally:
        pj.close()


def test_a_pending_minus_is_shown_and_any_other_key_cancels_it(sqlite_url, browser):
    """STC-3: "-" waits for a digit, and the label in focus shows it waiting; an arrow key (or any key but a
    digit) cancels it, so the next digit is the positive level it names."""
    with _stc3_dialogue(sqlite_url, browser, "k2") as (p, problems):
        p.keyboard.press("2")
        p.keyboard.press("1")                      # the two nugget types; A is in focus
        p.keyboard.press("-")
        expect(p.locator('.control.current[data-scale="A"] .pending-minus')).to_be_visible()
        p.keyboard.press("ArrowDown")              # cancels the "-": S is in focus
        expect(p.locator(".pending-minus")).to_have_count(0)
        p.keyboard.press("1")
        button = '.control button[aria-label="dialogue {}"]'
        expect(p.locator(button.format("S: customer satisfaction: 1"))).to_have_attribute("aria-checked", "true")
        expect(p.locator(button.format("S: customer satisfaction: -1"))).to_have_attribute("aria-checked", "false")
        p.keyboard.press("-")                      # E: "-", then Escape cancels it, then 2 is 2
        expect(p.locator(".pending-minus")).to_have_count(1)
        p.keyboard.press("Escape")
        expect(p.locator(".pending-minus")).to_have_count(0)
        p.keyboard.press("2")
        expect(p.locator(button.format("E: dialogue effectiveness: 2"))).to_have_attribute("aria-checked", "true")
        expect(p.locator(button.format("A: task accomplishment: -2"))).to_have_attribute("aria-checked", "false")
        expect(p.locator("#keys")).to_contain_text("any other key cancels")
        assert problems == []


def test_an_item_taken_by_another_annotator_says_so_in_view_and_offers_the_next(sqlite_url, browser):
    """The item's time ran out and another annotator took it: the next label's refusal is shown where the
    annotator looks (in the window, the "Next item" button focused), keys no longer repeat it, and Enter goes
    on to the next item."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "x1", chats_corpus(1, turns=16), "wochat", 1, pj.clock(), timeout="10m")
        a, b = invitations.create_invitations(pj.db, "annotation", "x1", 2, pj.clock())
        with LiveServer(pj.app) as server:
            p = browser.new_context(viewport={"width": 900, "height": 450}).new_page()
            problems = watch(p)
            p.goto(f"{server.url}/annotate/x1")
            p.fill("input[name=code]", a)
            p.click("#join-form button[type=submit]")
            expect(p.locator("#dialogue li")).to_have_count(16)
            for _ in range(7):
                p.keyboard.press("j")                  # the last turn, far below the top of the page
            expect(p.locator('li.focus[data-turn="15"]')).to_have_count(1)
            pj.tick(10 * 60 + 1)
            assert pj.call("POST", "/api/annotation/x1/next", b).json()["item"]["position"] == 0  # b takes it
            p.keyboard.press("1")
            expect(p.locator("#error")).to_contain_text("went to other annotators")
            expect(p.locator("#error")).to_be_in_viewport()
            expect(p.locator("#next-item")).to_be_focused()
            expect(p.locator("#next-item")).to_be_in_viewport()
            p.keyboard.press("1")                      # no label, no new error
            chosen = '.control button[aria-pressed="true"], .control button[aria-checked="true"]'
            expect(p.locator(chosen)).to_have_count(0)
            p.locator("body").click()
            p.keyboard.press("Enter")                  # the next item: none is left for this annotator
            expect(p.locator("#done")).to_be_visible()
            expect(p.locator("#error")).to_be_hidden()
            expect(p.locator("#next-item")).to_be_hidden()
            assert [x for x in problems if "409 (Conflict)" not in x] == []   # the refused label's answer only
    finally:
        pj.close()


def test_tags_typed_after_a_level_are_that_turns(sqlite_url, browser):
    """A level on a turn with tags keeps that turn in focus, so the tags typed next are its own (the key list
    says so); j goes on to the next turn."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "t1", chats_corpus(1, turns=4), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "t1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "t1", code, turns=4)
            expect(p.locator("#keys")).to_contain_text("tags typed next")
            for k in ["1", "p", "o", "j", "2", "n"]:
                p.keyboard.press(k)
            expect(p.locator('.control button[aria-label="turn 3 NEGATIVE"]')).to_have_attribute("aria-pressed", "true")
            expect(p.locator("#saved")).to_have_text("saved")     # said once every save is answered
            expect(p.locator("#progress-text")).to_contain_text("this item: 2 of 2 labels")
            aid = pj.call("POST", "/api/annotation/t1/next", code).json()["assignment"]
            assert _labels(pj, "t1", code, aid) == {
                (1, "validity"): "VALID", (1, "positive"): "yes", (1, "offensive"): "yes",
                (3, "validity"): "ACCEPTABLE", (3, "negative"): "yes"}
            assert problems == []
    finally:
        pj.close()


def test_controls_and_buttons_are_named_with_their_turn(sqlite_url, browser):
    """A screen reader hears which turn a control group and each button belong to ("turn 3 validity")."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "n1", chats_corpus(1, turns=4), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "n1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "n1", code, turns=4)
            expect(p.get_by_role("radiogroup", name="turn 3 validity", exact=True)).to_have_count(1)
            expect(p.get_by_role("group", name="turn 1 POSITIVE", exact=True)).to_have_count(1)
            expect(p.get_by_role("radio", name="turn 3 validity: INVALID", exact=True)).to_have_count(1)
            expect(p.get_by_role("button", name="turn 1 POSITIVE", exact=True)).to_have_count(1)
            assert problems == []
    finally:
        pj.close()


def test_after_joining_the_keyboard_is_in_the_item_and_progress_counts_items(sqlite_url, browser):
    """After the join the browser's focus is on the first missing label; the progress reads "item k of n" (n:
    the project's items, the most an annotator can get)."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "f1", chats_corpus(3), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "f1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "f1", code, turns=4)
            got = _focused(p)
            assert (got["turn"], got["scale"], got["current"]) == ("1", "validity", True), got
            expect(p.locator("#progress-text")).to_contain_text("item 1 of 3")
            for k in ["1", "j", "1", "Enter"]:
                p.keyboard.press(k)
            expect(p.locator("#progress-text")).to_contain_text("item 2 of 3")
            got = _focused(p)
            assert (got["turn"], got["scale"]) == ("1", "validity"), got   # the next item's first label
            assert problems == []
    finally:
        pj.close()


def test_stc3_nugget_types_are_explained(sqlite_url, browser):
    """The nugget codes (CNUG0, CNUG*, HNaN...) are explained on the page: a legend and each button's tooltip."""
    with _stc3_dialogue(sqlite_url, browser, "k3") as (p, problems):
        expect(p.locator("#legend-box")).to_be_visible()
        legend = p.inner_text("#legend")
        for code_ in ["CNUG0", "CNUG", "CNUG*", "CNaN", "HNUG", "HNUG*", "HNaN"]:
            assert code_ in legend
        assert "trigger" in legend and "confirms the problem is solved" in legend
        title = p.get_attribute('.control button[aria-label="turn 1 nugget type (helpdesk): HNUG*"]', "title")
        assert "goal nugget" in title
        assert problems == []


def test_turn_numbers_contrast_and_label_button_size(sqlite_url, browser):
    """The "turn N" text has a contrast of at least 4.5:1 on its turn's background (labelled and context turns);
    label buttons are at least 24 px tall."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "c2", chats_corpus(1), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "c2", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "c2", code, turns=4)
            ratios = p.evaluate("""() => {
                const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
                const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255;
                    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
                return [...document.querySelectorAll('#dialogue li')].map((li) => {
                    const fg = lum(rgb(getComputedStyle(li.querySelector('.turn-no')).color));
                    const bg = lum(rgb(getComputedStyle(li).backgroundColor));
                    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
                });
            }""")
            assert len(ratios) == 4 and min(ratios) >= 4.5, ratios
            heights = p.evaluate("() => [...document.querySelectorAll('.control button')]"
                                 ".map((b) => b.getBoundingClientRect().height)")
            assert heights and min(heights) >= 24, heights
            assert problems == []
    finally:
        pj.close()


def test_the_annotate_page_works_under_a_path_prefix(sqlite_url, browser):
    """Served under a proxy's path prefix (/dq, the ASGI root_path; any other path is a 404 here): the join
    form, the page's style and scripts and every API call stay under the prefix, and a label is saved."""
    from annotation_support import chats_corpus
    from service_support import UnderPrefix

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "m1", chats_corpus(1), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "m1", 1, pj.clock())
        with LiveServer(UnderPrefix(pj.app)) as server:
            base = server.url + "/dq"
            p = browser.new_context().new_page()
            problems = watch(p)
            asked = []
            p.on("request", lambda r: asked.append(r.url))
            p.goto(f"{base}/annotate/m1")
            p.fill("input[name=code]", code)
            p.click("#join-form button[type=submit]")
            expect(p.locator("#dialogue li")).to_have_count(4)
            p.locator('.control button[aria-label="turn 1 validity: VALID"]').click()
            expect(p.locator("#saved")).to_have_text("saved")
            assert any(u.endswith("/labels") for u in asked)
            assert all(u.startswith(base + "/") for u in asked), asked
            assert problems == []
    finally:
        pj.close()


def test_an_excluded_annotators_page_stops_and_says_so_once(sqlite_url, browser):
    """The organisers exclude an annotator while their page is open: the next key's save is refused (403) and
    the page stops at once, saying the code no longer works, instead of asking for that label again and then
    counting it as missing on Enter; every button is disabled."""
    with _two_chats(sqlite_url, browser, "x1") as (pj, _server, p, problems):
        p.locator("#item-title").click()
        p.keyboard.press("1")
        expect(p.locator("#saved")).to_have_text("saved")
        projects.exclude_annotator(pj.db, "x1", "A001", pj.clock())
        p.keyboard.press("2")
        expect(p.locator("#error")).to_contain_text("Your code no longer works in this project")
        p.keyboard.press("Enter")
        p.wait_for_timeout(300)
        said = p.inner_text("#error")
        assert "give its label again" not in said and "still missing" not in p.inner_text("#saved"), said
        assert said.count("no longer works") == 1
        expect(p.locator("#submit")).to_be_disabled()
        assert p.locator("#annotate .control button:enabled").count() == 0
        assert [x for x in problems if "Failed to load resource" not in x] == []
