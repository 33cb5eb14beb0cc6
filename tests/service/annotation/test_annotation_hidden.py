"""Hidden speakers (``--hide-speakers``): the page must not tell the annotator which speaker is the machine.

COLLECT.md offers ISMACHINE "only when speaker identities are hidden from annotators", while the scheme labels
the system's turns (WOCHAT, DBDC, ConTurE). With controls on the system's turns only, where the controls are
would answer ISMACHINE. So with speakers hidden every turn of both speakers shows the same controls (and
each is required alike); the labels that are the scheme's data stay those of the system turns
(``Scheme.data_units``)."""

from __future__ import annotations

import json

import pytest
from annotation_support import chats_corpus

from dialeval.service.annotation import projects
from dialeval.service.annotation.export import project_corpus
from dialeval.service.annotation.schemes import DIALOGUE, SCHEMES


def _next(pj, code):
    r = pj.call("POST", "/api/annotation/p1/next", code)
    assert r.status_code == 200, r.text
    return r.json()


def _label(pj, code, aid, turn, scale, value):
    return pj.call("POST", f"/api/annotation/p1/assignments/{aid}/labels", code,
                   {"turn": turn, "scale": scale, "value": value})


@pytest.mark.parametrize("scheme", ["wochat", "dbdc", "conture"])
def test_hidden_speakers_every_turn_gets_the_same_controls(pj, scheme):
    [code] = pj.project("p1", chats_corpus(1, turns=5), scheme=scheme, overlap=1, n_codes=1, hide_speakers=True)
    v = _next(pj, code)
    units = {u["turn"]: u["controls"] for u in v["units"]}
    assert sorted(units) == [0, 1, 2, 3, 4]                        # both speakers' turns, the user's too
    assert len({tuple(cs) for cs in units.values()}) == 1          # the same controls on each
    if scheme == "wochat":
        assert units[0] == ["validity", "positive", "negative", "offensive", "swearlang", "ismachine"]
    choice = units[0][0]
    assert sorted(m["turn"] for m in v["missing"]) == [0, 1, 2, 3, 4]   # each required alike
    # Nothing else in what the page gets says which speaker is which.
    shown = json.dumps(v["item"]).lower()
    assert "system" not in shown and "user" not in shown and v["item"]["dialogue_id"] is None
    assert {t["speaker"] for t in v["item"]["turns"]} == {"Speaker 1", "Speaker 2"}
    # Labels on a user turn are saved like any other; the item is complete only with every turn labelled.
    levels = SCHEMES[scheme].scales()[choice].levels
    aid = v["assignment"]
    for turn in (1, 2, 3, 4):
        assert _label(pj, code, aid, turn, choice, levels[0]).status_code == 200
    r = pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", code)
    assert r.status_code == 409 and f"turn 0 {choice}" in r.json()["detail"], r.text
    assert _label(pj, code, aid, 0, choice, levels[-1]).status_code == 200
    assert pj.call("POST", f"/api/annotation/p1/assignments/{aid}/submit", code).status_code == 200


def test_shown_speakers_keep_controls_on_the_system_turns_only(pj):
    [code] = pj.project("p1", chats_corpus(1, turns=5), overlap=1, n_codes=1)
    v = _next(pj, code)
    assert [u["turn"] for u in v["units"]] == [1, 3]
    assert _label(pj, code, v["assignment"], 0, "validity", "VALID").status_code == 422


def test_scheme_units_shown_and_data():
    hm, hh = ["user", "system", "user", "system"], ["user1", "user2", "user1"]
    for name in ("wochat", "dbdc", "conture"):
        s = SCHEMES[name]
        shown = s.units(hm, hidden=True)
        assert [u for u, _ in shown] == [0, 1, 2, 3] and len({tuple(cs) for _, cs in shown}) == 1, name
        assert [u for u, _ in s.data_units(hm, hidden=True)] == [1, 3], name
        assert s.units(hm, hidden=False) == s.data_units(hm, hidden=False), name
        assert [u for u, _ in s.units(hm, hidden=False)] == [1, 3], name
        if name != "wochat":  # (WOCHAT labels every turn of a chat without a system turn, as human-human)
            assert s.units(["user"], hidden=True) == [], name      # nothing to label stays nothing
    wochat = SCHEMES["wochat"]
    assert [u for u, _ in wochat.units(hh, hidden=True)] == [0, 1, 2]  # human-human: every turn already
    assert "ismachine" not in [c.name for _, cs in wochat.units(hm, hidden=False) for c in cs]
    # STC-3 labels every turn already (each sender's own nugget types): unchanged.
    stc3 = SCHEMES["stc3"]
    senders = stc3.senders(chats_corpus(1).dialogues[0])
    assert stc3.units(senders, hidden=True) == stc3.data_units(senders, hidden=True)
    assert stc3.units(senders, hidden=True)[0][0] == DIALOGUE


def test_hidden_speakers_export_keeps_the_system_turns_labels(sqlite_url):
    from annotation_support import Projects

    pj = Projects(sqlite_url)
    try:
        [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1, hide_speakers=True)
        who = projects.annotator(pj.db, "p1", code, pj.clock())
        asg = projects.next_assignment(pj.db, who, pj.clock())
        for turn in range(4):
            projects.save_label(pj.db, who, asg.id, turn, "validity", "VALID", pj.clock())
            projects.save_label(pj.db, who, asg.id, turn, "ismachine", "yes", pj.clock())
        projects.submit(pj.db, who, asg.id, pj.clock())
        [d] = project_corpus(pj.db, "p1").dialogues
        assert [bool(t.labels) for t in d.turns] == [t.sender == "system" for t in d.turns]
    finally:
        pj.close()


def _numbering(view: dict, item) -> dict[str, str]:
    """{real sender: "Speaker N"} of an assignment view (the item's stored turns give the real senders)."""
    senders = [t["sender"] for t in item.dialogue["turns"]]
    shown = [t["speaker"] for t in view["item"]["turns"]]
    pairs = set(zip(senders, shown, strict=True))
    assert len(pairs) == len(set(senders)) == len(set(shown)), pairs  # one number per speaker, the same each turn
    return dict(pairs)


def test_hidden_speaker_numbers_do_not_follow_the_roles(pj):
    """The participant of a human-machine chat speaks first; numbered by first turn, "Speaker 2" was always the
    machine (the ISMACHINE answer). The numbers are drawn per item from the project's seed: stable for an
    item (reloads, other annotators, the JSON views), and across items the machine is Speaker 1 or 2."""
    from dialeval.service.annotation.tables import AnnotationItem, Assignment

    corpus = chats_corpus(16)
    for d in corpus.dialogues:
        d.turns[0].utterances = ["Hello SYSTEM_NAME, I am USER_NAME."]
    codes = pj.project("p1", corpus, overlap=2, n_codes=2, hide_speakers=True)
    machine_is: dict[str, set[str]] = {}
    for code in codes:
        for _ in range(len(corpus.dialogues)):
            v = _next(pj, code)
            with pj.db.read() as s:
                item = s.get(AnnotationItem, s.get(Assignment, v["assignment"]).item_id)
            again = pj.call("GET", f"/api/annotation/p1/assignments/{v['assignment']}", code).json()
            assert again["item"] == v["item"]                             # a reload shows the same numbers
            numbers = _numbering(v, item)
            machine_is.setdefault(item.dialogue_id, set()).add(numbers["system"])
            user_n, system_n = numbers["user"].split()[1], numbers["system"].split()[1]
            assert v["item"]["turns"][0]["text"] == f"Hello SPEAKER{system_n}_NAME, I am SPEAKER{user_n}_NAME."
            for turn in range(4):
                assert _label(pj, code, v["assignment"], turn, "validity", "VALID").status_code == 200
            assert pj.call("POST", f"/api/annotation/p1/assignments/{v['assignment']}/submit",
                           code).status_code == 200
    assert all(len(n) == 1 for n in machine_is.values()), machine_is  # both annotators saw the same numbering
    seen = [n.pop() for n in machine_is.values()]
    assert len(seen) == 16 and set(seen) == {"Speaker 1", "Speaker 2"}, seen  # not given away by the number
    # The export writes the real senders, with the labels on the system's turns.
    d = project_corpus(pj.db, "p1").dialogues[0]
    assert [t.sender for t in d.turns] == ["user", "system"] * 2
    assert d.turns[0].text == "Hello SYSTEM_NAME, I am USER_NAME."  # the real tags, as collected
    assert [len(t.labels.get("validity", [])) for t in d.turns] == [0, 2, 0, 2]

