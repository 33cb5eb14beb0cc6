"""The DBDC writer: what it writes reads back with read_dbdc into the same turns, labels and annotator ids."""

from __future__ import annotations

import json
import re

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
    # validity beside breakdown labels: not written in place of them (alone, it would be: see below)
    other = Corpus([Dialogue("d", [Turn("system", ["x"], {VALIDITY: ["VALID"], BREAKDOWN: ["X"]}, ["a"])])],
                   {VALIDITY: validity_scale(), BREAKDOWN: breakdown_scale()})
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
    clash = "dialogue ids 'b/1' and 'b_1' both give the file name 'b_1.labels.json'"
    with pytest.raises(DialevalError, match=re.escape(clash)):
        write_dbdc_labels(_labels_run("b/1", "b_1"), str(tmp_path / "clash"))
    assert not (tmp_path / "clash").exists()  # nothing written, not even the folder


def test_a_file_name_is_refused_and_the_folder_follows_the_umask(tmp_path):
    import os
    import stat

    for name in ("x.xml", "labels.json"):
        with pytest.raises(DialevalError, match="DBDC logs are a folder"):
            write_dbdc(_corpus(), tmp_path / name)
        assert not (tmp_path / name).exists()
    write_dbdc(_corpus(), tmp_path / "out")
    with pytest.raises(DialevalError) as e:
        write_dbdc(_corpus(), tmp_path / "out")
    assert "not empty; give a new folder" in str(e.value) and ".xml" not in str(e.value)
    old = os.umask(0o022)
    try:
        write_dbdc(_corpus(), tmp_path / "shared")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o755  # not the 0700 of a private temp folder
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_dbdc_to_wochat_and_back_keeps_every_label(tmp_path):
    """WOCHAT's validity labels go back to breakdown labels (VALID, ACCEPTABLE, INVALID -> O, T, X)."""
    from dialeval.io.wochat import read_wochat
    from dialeval.io.wochat_writer import write_wochat

    original = _corpus()
    original.dialogues[0].id, original.dialogues[1].id = "IRIS00001", "IRIS00002"  # WOCHAT ids, kept as they are
    write_wochat(original, tmp_path / "w", ids="strict")
    report = write_dbdc(read_wochat(tmp_path / "w"), tmp_path / "back")
    assert report.labels == 4 and report.mapping == {"VALID": "O", "ACCEPTABLE": "T", "INVALID": "X"}
    assert any("validity" in line and "VALID -> O" in line for line in report.lines())
    back = read_dbdc(tmp_path / "back")
    got = {d.id: [(t.sender, t.labels.get(BREAKDOWN), t.annotators) for t in d.turns] for d in back}
    want = {d.id: [(t.sender, t.labels.get(BREAKDOWN), t.annotators) for t in d.turns] for d in original}
    assert got == want
