"""The DBDC writer: what it writes reads back with read_dbdc into the same turns, labels and annotator ids."""

from __future__ import annotations

import json

import pytest

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.errors import DialevalError
from dialeval.io.dbdc import BREAKDOWN, breakdown_scale, read_dbdc
from dialeval.io.dbdc_writer import write_dbdc
from dialeval.io.wochat import VALIDITY, validity_scale


def _corpus() -> Corpus:
    d1 = Dialogue("a_00001", [Turn("user", ["hi"]), Turn("system", ["hello <there>"], {BREAKDOWN: ["O", "X", "T"]},
                                                         ["A001", "A002", "A003"]), Turn("user", ["bye"])])
    d2 = Dialogue("a/00002", [Turn("system", ["first"], {BREAKDOWN: ["T"]}, ["w1"])])
    return Corpus([d1, d2], {BREAKDOWN: breakdown_scale()}, "dbdc")


def test_round_trip(tmp_path):
    report = write_dbdc(_corpus(), tmp_path / "out")
    assert report.dialogues == 2 and report.turns == 4 and report.labels == 4
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a_00001.log.json", "a_00002.log.json"]
    back = read_dbdc(tmp_path / "out")
    got = [(d.id, [(t.sender, t.utterances, t.labels, t.annotators) for t in d.turns]) for d in back]
    want = [(d.id, [(t.sender, t.utterances, t.labels, t.annotators) for t in d.turns]) for d in _corpus()]
    assert got == want
    rec = json.loads((tmp_path / "out" / "a_00001.log.json").read_text())
    assert rec["turns"][1]["annotations"][1] == {"annotator-id": "A002", "breakdown": "X"}


def test_refusals(tmp_path):
    c = _corpus()
    c.dialogues[0].turns[0].sender = "customer"
    with pytest.raises(DialevalError, match="DBDC speakers are user"):
        write_dbdc(c, tmp_path / "x")
    write_dbdc(c, tmp_path / "y", sender_map={"customer": "user"})
    other = Corpus([Dialogue("d", [Turn("system", ["x"], {VALIDITY: ["VALID"]}, ["a"])])], {VALIDITY: validity_scale()})
    with pytest.raises(DialevalError, match="labels on validity"):
        write_dbdc(other, tmp_path / "z")
    assert write_dbdc(other, tmp_path / "w", drop_labels=True).dropped == ["labels of scale(s) validity"]
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(DialevalError, match="not empty"):
        write_dbdc(_corpus(), tmp_path / "full")
