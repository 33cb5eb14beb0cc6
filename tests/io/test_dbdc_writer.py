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


def test_a_lone_surrogate_in_a_text_or_id_is_written_as_an_escape_and_reads_back(tmp_path):
    """JSON's "\\ud800" escape reads as a lone surrogate, which UTF-8 cannot carry: written back as that escape."""
    corpus = Corpus([Dialogue("d\udc00", [Turn("system", ["hi \ud800"], {BREAKDOWN: ["O"]}, ["w1"])])],
                    {BREAKDOWN: breakdown_scale()}, "dbdc")
    write_dbdc(corpus, tmp_path / "out")
    (f,) = (tmp_path / "out").iterdir()
    assert f.name == "d_.log.json" and "\\ud800" in f.read_text(encoding="ascii")
    (back,) = read_dbdc(tmp_path / "out")
    assert back.id == "d\udc00" and back.turns[0].utterances == ["hi \ud800"]


def _labels_run(*ids: str) -> list[dict]:
    dist = {"O": 0.5, "T": 0.25, "X": 0.25}
    return [{"id": i, "turns": [{"turn": 1, BREAKDOWN: dist}]} for i in ids]


def test_dbdc_labels_file_names_are_safe_and_never_overwrite(tmp_path):
    from dialeval.io.turnruns import write_dbdc_labels

    written = write_dbdc_labels(_labels_run("a/1", "..", "x\x00y", "q\ud800"), str(tmp_path / "run"))
    assert sorted(p.rsplit("/", 1)[-1] for p in written) == [
        "_.labels.json", "a_1.labels.json", "q_.labels.json", "x_y.labels.json"]
    assert json.loads((tmp_path / "run" / "q_.labels.json").read_text(encoding="ascii"))["dialogue-id"] == "q\ud800"
    with pytest.raises(DialevalError, match="two dialogue ids give the same file name"):
        write_dbdc_labels(_labels_run("b/1", "b_1"), str(tmp_path / "clash"))
    assert list((tmp_path / "clash").iterdir()) == []  # nothing written
