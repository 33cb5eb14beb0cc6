"""The whole path in a browser (headless Chromium through Playwright) under the strict CSP: a participant
chats 5 turns with the builtin engine and ends; three annotators each label the chat with the keyboard; the
export read by read_corpus has 3 annotators on every system turn with exactly the labels given, and
`dialeval gold` builds its distributions."""

from __future__ import annotations

import json

from annotation_support import Projects

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


def _join(browser, server: LiveServer, project: str, code: str, turns: int):
    """An annotator's page joined with ``code``, showing its first item of ``turns`` turns; and its problems."""
    p = browser.new_context().new_page()
    problems = watch(p)
    p.goto(f"{server.url}/annotate/{project}")
    p.fill("input[name=code]", code)
    p.click("#join-form button[type=submit]")
    expect(p.locator("#dialogue li")).to_have_count(turns)
    return p, problems


def test_mouse_then_enter_submits_and_tab_then_enter_chooses(sqlite_url, browser):
    """Enter submits after labels were clicked with the mouse (the clicked button keeps the focus), and presses
    a label button reached with Tab; Enter with labels missing says so and makes the first the label in focus."""
    from annotation_support import chats_corpus

    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        projects.create_project(pj.db, "m1", chats_corpus(2), "wochat", 1, pj.clock())
        [code] = invitations.create_invitations(pj.db, "annotation", "m1", 1, pj.clock())
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "m1", code, turns=4)
            # 1. the keyboard: Tab to a label button, Enter chooses it
            p.locator("body").click()
            for _ in range(40):
                p.keyboard.press("Tab")
                if p.evaluate("document.activeElement.getAttribute('aria-label')") == "validity: VALID":
                    break
            p.keyboard.press("Enter")
            expect(p.locator(".control button:focus")).to_have_attribute("aria-pressed", "true")
            expect(p.locator("#item-title")).to_contain_text("Item")
            p.locator("#item-title").click()  # a click elsewhere: the keyboard's Enter submits again
            p.keyboard.press("Enter")  # one turn is still missing: said, and its keys act there
            expect(p.locator("#saved")).to_contain_text("1 label still missing")
            # 2. the mouse: the last label clicked, Enter submits the item
            p.locator('.control.missing button[aria-label="validity: INVALID"]').click()
            expect(p.locator("#progress-text")).to_contain_text("this item: 2 of 2 labels")
            p.keyboard.press("Enter")
            expect(p.locator("#progress-text")).to_contain_text("you finished 1 item")
            assert problems == []
    finally:
        pj.close()


def test_numbered_levels_are_typed_as_written(sqlite_url, browser):
    """STC-3's A/S/E levels 2 1 0 -1 -2 are chosen by typing the level (a negative one as "-" then its digit),
    so no key names another level; its nugget types (not numbers) by position, 1 2 3 4. A "-" where no level
is negative does nothing."""
    from dialeval.corpus import Corpus, Dialogue, Turn
    from dialeval.io.stc3 import stc3_scales

    corpus = Corpus([Dialogue("d0", [Turn("customer", ["my order"]), Turn("helpdesk", ["sorry"])])],
                    stc3_scales(), "stc3")
    pj = Projects(sqlite_url)
    with_csp(pj.app)
    try:
        [code] = pj.project("k1", corpus, scheme="stc3", overlap=1, n_codes=1)
        with LiveServer(pj.app) as server:
            p, problems = _join(browser, server, "k1", code, turns=2)
            expect(p.locator("#keys")).to_contain_text("2 1 0 -1 -2")
            p.locator("body").click()
            for k in ["2", "1", "-", "1", "0", "-", "2"]:  # the turns' nugget types, then A, S, E below them
                p.keyboard.press(k)
            expect(p.locator("#progress-text")).to_contain_text("this item: 5 of 5 labels")
            for name in ["A: task accomplishment: -1", "S: customer satisfaction: 0", "E: dialogue effectiveness: -2",
                         "nugget type (customer): CNUG", "nugget type (helpdesk): HNUG"]:
                expect(p.locator(f'.control button[aria-label="{name}"]')).to_have_attribute("aria-pressed", "true")
            assert problems == []
    finally:
        pj.close()


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
