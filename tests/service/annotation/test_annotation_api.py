"""The annotation JSON API and pages: the whole round, own labels only, refusals, escaping, CSRF."""

from __future__ import annotations

import re

import pytest
from annotation_support import chats_corpus

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.wochat import VALIDITY, validity_scale
from dialeval.service import invitations, teams


def _next(pj, code, project="p1"):
    r = pj.call("POST", f"/api/annotation/{project}/next", code)
    assert r.status_code == 200, r.text
    return r.json()


def _label(pj, code, aid, turn, scale, value, project="p1"):
    return pj.call("POST", f"/api/annotation/{project}/assignments/{aid}/labels", code,
                   {"turn": turn, "scale": scale, "value": value})


def test_a_round_label_by_label_then_submit(pj):
    codes = pj.project("p1", chats_corpus(2), overlap=2, n_codes=2, guidelines="# Rules\nBe **fair**")
    info = pj.call("GET", "/api/annotation/p1", codes[0]).json()
    assert info["annotator"] == "A001" and "<strong>fair</strong>" in info["guidelines_html"]
    assert [c["scale"] for c in info["scheme"]["controls"]][:2] == ["validity", "positive"]
    assert "ismachine" not in [c["scale"] for c in info["scheme"]["controls"]]   # speakers are shown
    assert info["scheme"]["controls"][0]["levels"][0] == {"value": "VALID", "key": "1"}
    v = _next(pj, codes[0])
    assert [u["turn"] for u in v["units"]] == [1, 3]                             # system turns only
    assert v["missing"] == [{"turn": 1, "scale": "validity"}, {"turn": 3, "scale": "validity"}]
    aid = v["assignment"]
    assert pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", codes[0]).status_code == 409
    r = _label(pj, codes[0], aid, 1, "validity", "VALID")
    assert r.status_code == 200 and r.json()["saved"]["value"] == "VALID"
    assert _label(pj, codes[0], aid, 1, "validity", "INVALID").status_code == 200   # replaced, one row
    assert _label(pj, codes[0], aid, 1, "positive", "yes").status_code == 200
    assert _label(pj, codes[0], aid, 3, "validity", "ACCEPTABLE").status_code == 200
    again = _next(pj, codes[0])                                                   # the open item comes back
    assert again["assignment"] == aid
    assert sorted((x["turn"], x["scale"], x["value"]) for x in again["labels"]) == [
        (1, "positive", "yes"), (1, "validity", "INVALID"), (3, "validity", "ACCEPTABLE")]
    r = pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", codes[0])
    assert r.status_code == 200 and r.json()["progress"]["finished"] == 1
    assert _label(pj, codes[0], aid, 1, "validity", "VALID").status_code == 409   # final once submitted


def test_refused_labels_name_what_is_allowed(pj):
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    aid = _next(pj, codes[0])["assignment"]
    r = _label(pj, codes[0], aid, 0, "validity", "VALID")                       # a user turn
    assert r.status_code == 422 and "allowed are 1, 3" in r.text
    r = _label(pj, codes[0], aid, 1, "validity", "GOOD")
    assert r.status_code == 422 and "allowed are VALID, ACCEPTABLE, INVALID" in r.text
    r = _label(pj, codes[0], aid, 1, "ismachine", "yes")                         # only with hidden speakers
    assert r.status_code == 422


def test_an_annotator_sees_only_their_own_labels_and_project(pj):
    a, b = pj.project("p1", chats_corpus(1), overlap=2, n_codes=2)
    other = pj.project("p2", chats_corpus(1, prefix="TT"), overlap=1, n_codes=1)[0]
    va, vb = _next(pj, a), _next(pj, b)
    assert va["item"]["dialogue_id"] == vb["item"]["dialogue_id"]               # the same item, k = 2
    assert _label(pj, a, va["assignment"], 1, "validity", "VALID").status_code == 200
    assert _next(pj, b)["labels"] == []                                          # b never sees a's label
    for method, path, body in (("GET", f"/api/annotation/p1/assignments/{va['assignment']}", None),
                               ("POST", f"/api/annotation/p1/assignments/{va['assignment']}/labels",
                                {"turn": 1, "scale": "validity", "value": "INVALID"}),
                               ("POST", f"/api/annotation/p1/assignments/{va['assignment']}/submit", None)):
        assert pj.call(method, path, b, body).status_code == 404
    assert pj.call("POST", "/api/annotation/p1/next", other).status_code == 401   # another project's code
    assert pj.call("POST", "/api/annotation/p2/next", a).status_code == 401
    vo = _next(pj, other, "p2")
    assert pj.call("GET", f"/api/annotation/p1/assignments/{vo['assignment']}", a).status_code == 404


def test_team_tokens_and_other_codes_are_not_annotator_codes(pj):
    pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    _team, token = teams.register_team(pj.db, "team-x", "", pj.clock())
    chat = invitations.create_invitations(pj.db, "collection", "p1", 1, pj.clock())[0]
    team_inv = invitations.create_invitations(pj.db, "team", "", 1, pj.clock())[0]
    for code in (token, chat, team_inv, "dai_" + "x" * 43, None):
        r = pj.call("POST", "/api/annotation/p1/next", code)
        assert r.status_code == 401, (code, r.text)


def test_excluded_annotators_are_refused_and_their_items_return(pj):
    from dialeval.service.annotation import projects
    a, b = pj.project("p1", chats_corpus(1), overlap=1, n_codes=2)
    v = _next(pj, a)
    for t in (1, 3):
        _label(pj, a, v["assignment"], t, "validity", "VALID")
    pj.call("POST", f"/api/annotation/p1/assignments/{v['assignment']}/submit", a)
    assert _next(pj, b)["done"] is True
    projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())
    assert pj.call("POST", "/api/annotation/p1/next", a).status_code == 403
    assert _next(pj, b)["done"] is False
    from dialeval.service.errors import Conflict, Invalid  # excluded twice: said, not "excluded" again

    with pytest.raises(Conflict, match="A001 is excluded from 'p1' already"):
        projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())
    for seed in (-1, 2**31, 99999999999, True):  # past PostgreSQL's integer column: a 500 there
        with pytest.raises(Invalid, match=r"seed .* is not allowed; allowed are integers 0..2147483647"):
            projects.create_project(pj.db, "s1", chats_corpus(1), "wochat", 1, pj.clock(), seed=seed)


def test_script_utterances_and_guidelines_render_as_text(pj):
    evil = "<script>alert(1)</script>"
    corpus = Corpus([Dialogue("IRIS00001", [Turn("user", [evil]), Turn("system", [evil + "<img src=x>"])])],
                    {VALIDITY: validity_scale()}, "wochat")
    codes = pj.project("p1", corpus, overlap=1, n_codes=1, guidelines=f"# {evil}\n[x](javascript:alert(1))")
    page = pj.client.get("/annotate/p1")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = pj.client.post("/annotate/p1/join", data={"code": codes[0], "csrf": token})
    assert r.status_code == 200
    assert "<script>alert" not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    scripts = re.findall(r"<script[^>]*>", r.text)
    assert scripts == ['<script src="/static/api.js">', '<script src="/static/annotate.js">']  # ours only
    assert "style=" not in r.text and " onclick" not in r.text
    assert '<a href="javascript' not in r.text
    v = _next(pj, codes[0])
    assert v["item"]["turns"][1]["text"] == evil + "<img src=x>"           # JSON as is; the page uses textContent


def test_the_join_form_needs_its_csrf_token(pj):
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    r = pj.client.post("/annotate/p1/join", data={"code": codes[0], "csrf": "forged"})
    assert r.status_code == 403 and "did not come from this site" in r.text
    r = pj.client.post("/annotate/p1/status", data={"token": "x", "csrf": "forged"})
    assert r.status_code == 403
    # the API authenticates by the Authorization header only: a cookie-carrying cross-site form gets 401
    r = pj.client.post("/api/annotation/p1/next")
    assert r.status_code == 401


def test_the_status_alpha_is_unrounded_and_its_table_rounds_it_once_as_corpus_stats(pj):
    """The status rounded alpha to 4 places and its table to 3 again: -0.04249 showed as -0.043 where `corpus
    stats` on the export showed -0.042 (a probe of the collection and annotation chain)."""
    from dialeval.agreement import scale_agreement
    from dialeval.service.annotation.export import project_corpus
    from dialeval.service.annotation.status import status_table

    codes = pj.project("p1", chats_corpus(2), overlap=2, n_codes=2)
    given = {0: [("VALID", "INVALID"), ("ACCEPTABLE", "VALID")], 1: [("VALID", "ACCEPTABLE"), ("INVALID", "VALID")]}
    for who, c in enumerate(codes):
        for item in range(2):
            v = _next(pj, c)
            for t, value in zip((1, 3), given[who][item], strict=True):
                _label(pj, c, v["assignment"], t, "validity", value)
            pj.call("POST", f"/api/annotation/p1/assignments/{v['assignment']}/submit", c)
    admin = teams.create_admin_token(pj.db, pj.clock())
    st = pj.call("GET", "/api/admin/annotation/p1/status", admin).json()
    alpha = scale_agreement(project_corpus(pj.db, "p1"), "validity").alpha
    assert round(alpha, 4) != alpha and st["alpha"]["validity"]["alpha"] == alpha
    [line] = [x for x in status_table(st) if x.lstrip().startswith("validity")]
    assert line.split()[1] == f"{alpha:.3f}"


def test_organiser_status_api_and_page(pj):
    codes = pj.project("p1", chats_corpus(2), overlap=2, n_codes=2)
    for c in codes:
        for _ in range(2):
            v = _next(pj, c)
            for t in (1, 3):
                _label(pj, c, v["assignment"], t, "validity", "VALID" if t == 1 else "INVALID")
            pj.tick(30)
            pj.call("POST", f"/api/annotation/p1/assignments/{v['assignment']}/submit", c)
    admin = teams.create_admin_token(pj.db, pj.clock())
    assert pj.call("GET", "/api/admin/annotation/p1/status", codes[0]).status_code == 401
    st = pj.call("GET", "/api/admin/annotation/p1/status", admin).json()
    assert st["complete_items"] == 2 and st["items_by_finished"] == {"0": 0, "1": 0, "2": 2}
    assert st["alpha"]["validity"]["alpha"] == 1.0                      # every pair agrees
    assert [a["agreement_with_rest"] for a in st["annotators"]] == [1.0, 1.0]
    assert st["seconds_per_item"]["median"] == 30.0
    page = pj.client.get("/annotate/p1/status")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = pj.client.post("/annotate/p1/status", data={"token": admin, "csrf": token})
    assert r.status_code == 200 and "A002" in r.text and "1.000" in r.text
    assert "<strong>2</strong> of 2\nitems complete" in r.text and "built-in method" not in r.text
    assert "(; agreement" not in r.text
    # the page's exclude form: CSRF and the organiser token again; the annotator's items go back to the pool
    form = {"token": admin, "annotator": "A002", "csrf": token}
    assert pj.client.post("/annotate/p1/exclude", data={**form, "csrf": "forged"}).status_code == 403
    assert pj.client.post("/annotate/p1/exclude", data={**form, "token": codes[0]}).status_code == 401
    r = pj.client.post("/annotate/p1/exclude", data=form)
    assert r.status_code == 200 and "A002 excluded: 2 assignment(s) back in the pool" in r.text
    assert '<option value="A002"' not in r.text and '<option value="A001"' in r.text
    st = pj.call("GET", "/api/admin/annotation/p1/status", admin).json()
    assert st["items_by_finished"] == {"0": 0, "1": 2, "2": 0}
    assert pj.call("POST", "/api/annotation/p1/next", codes[1]).status_code == 403   # the code stops working
    r = pj.client.post("/annotate/p1/exclude", data={**form, "annotator": "<b>A9</b>"})
    assert r.status_code == 422 and "<b>A9" not in r.text and "&lt;b&gt;A9" in r.text


def test_hidden_speakers_offer_ismachine_and_hide_names_and_ids(pj):
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1, hide_speakers=True)
    info = pj.call("GET", "/api/annotation/p1", codes[0]).json()
    assert "ismachine" in [c["scale"] for c in info["scheme"]["controls"]]
    v = _next(pj, codes[0])
    assert v["item"]["dialogue_id"] is None
    speakers = [t["speaker"] for t in v["item"]["turns"]]
    assert sorted(speakers[:2]) == ["Speaker 1", "Speaker 2"] and speakers == speakers[:2] * 2
    assert _label(pj, codes[0], v["assignment"], 1, "ismachine", "yes").status_code == 200


def test_hidden_speakers_name_tags_do_not_say_which_is_the_system(pj):
    """The exported chats' name tags (SYSTEM_NAME, USER_NAME) would give the ISMACHINE answer away."""
    corpus = chats_corpus(1)
    corpus.dialogues[0].turns[0].utterances = ["Hello SYSTEM_NAME, I am USER_NAME."]
    codes = pj.project("p1", corpus, overlap=1, n_codes=2, hide_speakers=True)
    turns = _next(pj, codes[0])["item"]["turns"]
    user, system = (turns[i]["speaker"].removeprefix("Speaker ") for i in (0, 1))
    assert turns[0]["text"] == f"Hello SPEAKER{system}_NAME, I am SPEAKER{user}_NAME."
    shown = pj.project("p2", corpus, overlap=1, n_codes=1)
    assert _next(pj, shown[0], "p2")["item"]["turns"][0]["text"] == "Hello SYSTEM_NAME, I am USER_NAME."


def test_unknown_project_and_bad_bodies(pj):
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    assert pj.call("POST", "/api/annotation/nope/next", codes[0]).status_code == 404
    assert pj.client.get("/annotate/nope").status_code == 404
    # A name no project can have (NUL: PostgreSQL refuses it in a query) is a 404 too, never a 500.
    for method, path in (("GET", "/api/annotation/a%00b"), ("POST", "/api/annotation/a%00b/next"),
                         ("GET", "/api/annotation/a%00b/assignments/1")):
        assert pj.call(method, path, codes[0]).status_code == 404, path
    assert pj.client.get("/annotate/a%00b").status_code == 404
    assert pj.client.post("/annotate/a%00b/join", data={"code": "x"}).status_code == 404
    aid = _next(pj, codes[0])["assignment"]
    for body in ({"turn": "1", "scale": "validity"}, {"turn": True, "scale": "validity", "value": "VALID"},
                 {"turn": 1, "scale": "x" * 100, "value": "VALID"}, []):
        r = pj.call("POST", f"/api/annotation/p1/assignments/{aid}/labels", codes[0], body)
        assert r.status_code == 422, (body, r.text)
    assert pj.call("GET", "/api/annotation/p1/assignments/0", codes[0]).status_code == 422
    assert pj.call("GET", f"/api/annotation/p1/assignments/{aid + 99}", codes[0]).status_code == 404


def test_a_transaction_the_database_refused_for_now_is_a_409_to_try_again(pj, monkeypatch):
    import sqlite3

    import psycopg.errors
    from sqlalchemy.exc import OperationalError

    from dialeval.service.annotation import projects
    from dialeval.service.db import busy

    codes = pj.project("p1", chats_corpus(2), overlap=1, n_codes=1)
    for orig in (psycopg.errors.DeadlockDetected("deadlock detected"),
                 psycopg.errors.SerializationFailure("could not serialize access"),
                 sqlite3.OperationalError("database is locked")):
        def refused(*_a, _orig=orig, **_k):
            raise OperationalError("SELECT ...", {}, _orig)

        monkeypatch.setattr(projects, "next_assignment", refused)
        r = pj.call("POST", "/api/annotation/p1/next", codes[0])
        assert (r.status_code, r.headers["retry-after"]) == (409, "1"), r.text
        assert r.json()["detail"] == "the database was busy with other requests; try again"
    assert not busy(OperationalError("SELECT ...", {}, psycopg.errors.UndefinedTable("no such table")))


def test_missing_labels_are_numbered_as_the_labels_api_and_the_page_number_turns(pj):
    """The 409 of a submit with labels missing names each turn as the labels API takes it (0-based ``turn``, as
    its 422 lists the allowed turns), and says so: the page numbers its turns the same way ("turn 0")."""
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    v = _next(pj, codes[0])
    aid = v["assignment"]
    assert [m["turn"] for m in v["missing"]] == [1, 3]
    r = pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", codes[0])
    assert r.status_code == 409
    assert r.json()["detail"] == ("2 label(s) missing before this item can be submitted: turn 1 validity, turn 3 "
                                  "validity (turns are numbered from 0, as on the page)")
    r = _label(pj, codes[0], aid, 0, "validity", "VALID")
    assert r.status_code == 422 and "allowed are 1, 3" in r.text          # the same numbers
    for turn in (1, 3):                                                   # ... that the labels API takes
        assert _label(pj, codes[0], aid, turn, "validity", "VALID").status_code == 200
    assert pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", codes[0]).status_code == 200
    # The page shows each turn's number from the API's "index" (static/annotate.js): "turn 0", "turn 1", ...
    js = pj.client.get("/static/annotate.js").text
    assert 'el("span", "turn-no", "turn " + t.index)' in js
    # A dialogue-level scale is named as such, with no turn number to explain.
    codes = pj.project("p2", chats_corpus(1), scheme="stc3", overlap=1, n_codes=1)
    v = _next(pj, codes[0], "p2")
    detail = pj.call("POST", f"/api/annotation/p2/assignments/{v['assignment']}/submit", codes[0]).json()["detail"]
    assert "dialogue A" in detail and "turn 0 nugget" in detail and "and 2 more" in detail, detail


def test_the_status_page_of_an_unknown_project_is_a_404(pj):
    pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    assert pj.client.get("/annotate/p1/status").status_code == 200
    for name in ("nope", "a%00b"):
        r = pj.client.get(f"/annotate/{name}/status")
        assert r.status_code == 404, (name, r.text)
        assert r.headers["content-type"].startswith("text/html") and "no annotation project named" in r.text
        assert 'name="token"' not in r.text                                # no token form for nothing
    assert pj.client.get("/annotate/nope").status_code == 404            # as the join page


@pytest.mark.parametrize("char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                                  "\u2066", "\u2067", "\u2068", "\u2069"])
def test_guidelines_with_bidi_controls_are_refused_as_utterances_are(pj, char):
    from dialeval.service.annotation import projects
    from dialeval.service.collection.sessions import clean_utterance
    from dialeval.service.errors import Invalid, InvalidValue, NotFound

    text = f"# Rules\nMark *offensive* turns {char}txet desrever"
    with pytest.raises(InvalidValue) as e:
        projects.create_project(pj.db, "p1", chats_corpus(1), "wochat", 1, pj.clock(), guidelines=text)
    name = f"U+{ord(char):04X}"
    assert e.value.param == "guidelines" and e.value.status == 422
    assert e.value.message.startswith(f"guidelines holds the bidi control {name} (")
    assert ") at line 2, column 24, which reorders what annotators see; remove it" in e.value.message
    with pytest.raises(Invalid) as u:                                       # the same rule, the same words
        clean_utterance(text)
    assert u.value.message.startswith(f"the utterance holds the bidi control {name} (")
    assert u.value.message.endswith(e.value.message.split(", which", 1)[1])
    with pytest.raises(NotFound):                                          # nothing was created
        projects.get_project(pj.db, "p1")
    # The marks right-to-left writing uses stay allowed, as in utterances.
    projects.create_project(pj.db, "p1", chats_corpus(1), "wochat", 1, pj.clock(),
                            guidelines="\u200f\u05e9\u05dc\u05d5\u05dd\u200e ok \u061c")


def _join_page(pj, code, project="p1"):
    page = pj.client.get(f"/annotate/{project}")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    return pj.client.post(f"/annotate/{project}/join", data={"code": code, "csrf": token})


def test_the_join_address_opened_directly_leads_to_the_join_page(pj):
    """A reload of the annotate page (the join form's answer) or a bookmark of /annotate/NAME/join is a GET: it
    is sent on to the project's join page (303), not a 405 page whose only link is the leaderboard."""
    pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    r = pj.client.get("/annotate/p1/join", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p1"
    r = pj.client.get("/annotate/p1/join")
    assert r.status_code == 200 and 'id="join-form"' in r.text


def test_guidelines_with_their_own_heading_show_it_once(pj):
    """Guidelines that start with "# Title" show the title as their summary, not "Guidelines" above it again."""
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1,
                       guidelines="# Guidelines\n\nRate the whole dialogue, then each turn.")
    r = _join_page(pj, codes[0])
    assert r.status_code == 200
    box = re.search(r'<details id="guidelines".*?</details>', r.text, re.S).group(0)
    assert box.count("Guidelines") == 1 and "<summary>Guidelines</summary>" in box, box
    assert "Rate the whole dialogue" in box
    codes = pj.project("p2", chats_corpus(1), overlap=1, n_codes=1, guidelines="# How to judge\n- be **fair**")
    box = re.search(r'<details id="guidelines".*?</details>', _join_page(pj, codes[0], "p2").text, re.S).group(0)
    assert "<summary>How to judge</summary>" in box and box.count("How to judge") == 1
    assert "<li>be <strong>fair</strong></li>" in box


def test_the_status_pages_progress_bar_is_labelled(pj):
    pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    admin = teams.create_admin_token(pj.db, pj.clock())
    page = pj.client.get("/annotate/p1/status")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = pj.client.post("/annotate/p1/status", data={"token": admin, "csrf": token})
    assert r.status_code == 200
    bar = re.search(r"<progress[^>]*>", r.text).group(0)
    bar_id = re.search(r'id="([^"]+)"', bar).group(1)
    assert re.search(rf'<label for="{bar_id}">[^<]+</label>', r.text), r.text


def test_stc3_nugget_levels_carry_their_meaning(pj):
    """The API gives each STC-3 nugget type its meaning (the page shows it as a legend and tooltips)."""
    from dialeval.io.stc3 import stc3_scales

    corpus = Corpus([Dialogue("d0", [Turn("customer", ["my order"]), Turn("helpdesk", ["sorry"])])],
                    stc3_scales(), "stc3")
    codes = pj.project("p1", corpus, scheme="stc3", overlap=1, n_codes=1)
    info = pj.call("GET", "/api/annotation/p1", codes[0]).json()
    meanings = {lv["value"]: lv.get("description") for c in info["scheme"]["controls"]
                if c["scale"].startswith("nugget") or "nugget" in c["title"] for lv in c["levels"]}
    assert set(meanings) == {"CNUG0", "CNUG", "CNUG*", "CNaN", "HNUG", "HNUG*", "HNaN"}
    assert all(meanings.values()), meanings
    assert "trigger" in meanings["CNUG0"] and "goal" in meanings["HNUG*"] and "not a nugget" in meanings["CNaN"]
    assert all("description" not in lv for c in info["scheme"]["controls"] if c["scale"] == "A"
               for lv in c["levels"])


def test_the_annotation_pages_stay_under_the_root_path(pj):
    """Behind a proxy's path prefix (the ASGI root_path) the join, annotate and status pages link, load, post
    and call the API under the prefix."""
    from fastapi.testclient import TestClient
    from service_support import links

    [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    admin = teams.create_admin_token(pj.db, pj.clock())
    with TestClient(pj.app, root_path="/dq") as c:
        join = c.get("/annotate/p1")
        token = re.search(r'name="csrf" value="([^"]+)"', join.text).group(1)
        page = c.post("/annotate/p1/join", data={"code": code, "csrf": token})
        assert page.status_code == 200 and 'data-api="/dq/api/annotation/p1"' in page.text
        form = c.get("/annotate/p1/status")
        status = c.post("/annotate/p1/status", data={"token": admin, "csrf": token})
        assert status.status_code == 200 and 'id="exclude-form"' in status.text
        for got in (join, page, form, status):
            found = links(got.text)
            assert found and all(x.startswith("/dq/") for x in found), found
        assert 'action="/dq/annotate/p1/join"' in join.text
        assert 'action="/dq/annotate/p1/status"' in status.text and 'action="/dq/annotate/p1/exclude"' in status.text


@pytest.mark.parametrize("scheme", ["wochat", "dbdc"])
def test_a_chat_the_engine_never_answered_is_left_out_not_labelled_on_the_users_turn(pj, scheme):
    """A human-machine chat with one user turn and no reply: the wochat scheme asked annotators to label the
    user's turn (the human-human fallback), while dbdc refused the whole project. Both now leave it out and
    say so. Found by an end-to-end probe."""
    from dialeval.service.annotation import projects
    from dialeval.service.annotation.schemes import SCHEMES

    lone = Dialogue("Ada00001", [Turn("user", ["hello?"])], meta={"names": {"SYSTEM": "IRIS", "USER": "Ada"}})
    corpus = chats_corpus(2)
    corpus = Corpus([*corpus.dialogues, lone], corpus.scales, corpus.format, corpus.source)
    pj.project("p1", corpus, scheme=scheme, overlap=1, n_codes=1)
    p = projects.get_project(pj.db, "p1")
    assert p.meta["left_out"] == ["Ada00001"] and p.meta["dialogues"] == 2
    assert SCHEMES[scheme].labelled_turns(["user"]) == []
    assert SCHEMES["wochat"].labelled_turns(["user1", "user2", "user1"]) == [0, 1, 2]   # people: every turn
    with pytest.raises(Exception, match="the 1 dialogue\\(s\\) have nothing to label"):
        pj.project("p2", Corpus([lone], corpus.scales, corpus.format, corpus.source), scheme=scheme)


def test_joining_is_post_redirect_get_with_the_code_in_a_cookie_of_the_projects_path(pj):
    """The join form's answer is a redirect (303) to the annotate page's own address, so a reload, Back or
    Forward opens it with a GET and never asks to send the form again. The code goes there in a session cookie:
    HttpOnly, SameSite=Lax (a link from another site opens the page again), under the project's path only, never
    in a URL; the join page sends a person whose code is kept on to their page. Leave forgets it; a code refused
    since (the annotator excluded) is forgotten too."""
    [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    [other] = pj.project("p2", chats_corpus(1), overlap=1, n_codes=1)
    page = pj.client.get("/annotate/p1")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = pj.client.post("/annotate/p1/join", data={"code": code, "csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p1/join"
    [cookie] = [c for c in r.headers.get_list("set-cookie") if c.startswith("dialeval_code=")]
    attrs = {a.strip().split("=")[0].lower() for a in cookie.split(";")}
    assert {"httponly", "samesite", "path"} <= attrs and "max-age" not in attrs and "expires" not in attrs
    assert "Path=/annotate/p1;" in cookie + ";" and "SameSite=lax" in cookie and "Secure" not in cookie
    assert code not in r.headers["location"]
    for _ in range(2):  # the page, and its reload
        r = pj.client.get("/annotate/p1/join", follow_redirects=False)
        assert r.status_code == 200 and f'data-code="{code}"' in r.text and "you are A001" in r.text
        assert r.headers["cache-control"] == "no-store"
    r = pj.client.get("/annotate/p1", follow_redirects=False)  # the invitation's link, opened again
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p1/join"
    # another project's page never gets this project's code
    r = pj.client.get("/annotate/p2/join", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p2"
    assert other not in r.text
    # Leave: the CSRF token is needed; then the code is forgotten and the address leads to the join form
    assert pj.client.post("/annotate/p1/leave", data={"csrf": "forged"}).status_code == 403
    r = pj.client.post("/annotate/p1/leave", data={"csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p1"
    assert any(c.startswith('dialeval_code=""') or "Max-Age=0" in c for c in r.headers.get_list("set-cookie"))
    r = pj.client.get("/annotate/p1/join", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/annotate/p1"
    # excluded after joining: the page says so and the code is forgotten
    from dialeval.service.annotation import projects
    pj.client.post("/annotate/p1/join", data={"code": code, "csrf": token})
    projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())
    r = pj.client.get("/annotate/p1/join", follow_redirects=False)
    assert r.status_code == 403 and 'id="join-form"' in r.text and "closed this code" in r.text
    assert pj.client.get("/annotate/p1/join", follow_redirects=False).status_code == 303


def test_the_code_cookie_is_secure_when_the_service_is_reached_over_https(pj):
    from fastapi.testclient import TestClient

    [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    with TestClient(pj.app, base_url="https://testserver") as c:
        token = re.search(r'name="csrf" value="([^"]+)"', c.get("/annotate/p1").text).group(1)
        r = c.post("/annotate/p1/join", data={"code": code, "csrf": token}, follow_redirects=False)
        [cookie] = [x for x in r.headers.get_list("set-cookie") if x.startswith("dialeval_code=")]
        assert "Secure" in cookie
