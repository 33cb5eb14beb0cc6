"""Round trips through WOCHAT XML: the original ids kept in <source_id> come back in every other format, a CR
inside a text survives XML's line-end normalisation, DBDC's metadata fields travel as WOCHAT kept tags (and what
cannot travel is listed as dropped), and the "labels WOCHAT cannot hold" error names the CLI options and the
Python arguments. Inputs are hand-made; the expected values are written out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli.main import run
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.errors import DialevalError
from dialeval.io.convert import to_stc3
from dialeval.io.dbdc import read_dbdc
from dialeval.io.dbdc_writer import write_dbdc
from dialeval.io.stc3 import read_stc3
from dialeval.io.wochat import read_wochat
from dialeval.io.wochat_writer import write_wochat


def _log(did: str, system: str = "hello", **top) -> dict:
    return {"dialogue-id": did, **top, "turns": [
        {"turn-index": 0, "speaker": "U", "utterance": "hi", "annotations": []},
        {"turn-index": 1, "speaker": "S", "utterance": system, "annotations": [
            {"annotator-id": "a1", "breakdown": "O"}, {"annotator-id": "a2", "breakdown": "X"}]}]}


def _dbdc_folder(path: Path, *logs: dict) -> Path:
    path.mkdir()
    for rec in logs:
        (path / f"{rec['dialogue-id']}.log.json").write_text(json.dumps(rec))
    return path


def _wochat(path: Path, *dialogues: tuple[str, str | None]) -> Path:
    """WOCHAT XML with (id, source_id) dialogues of one user turn."""
    body = "".join(f'<dialogue id="{did}"><user_name/>' + (f"<source_id>{src}</source_id>" if src else "")
                   + '<turn id="1"><speaker>USER</speaker><utterance>hi</utterance></turn></dialogue>'
                   for did, src in dialogues)
    path.write_text(f"<dialogues>{body}</dialogues>")
    return path


# ------------------------------------------------------------------------------------ 1. ids from <source_id>

def test_dbdc_to_wochat_to_dbdc_gives_the_original_ids(tmp_path):
    src = _dbdc_folder(tmp_path / "in", _log("tt_001"), _log("tt_002"), _log("IRIS00007"))
    report = write_wochat(read_dbdc(src), tmp_path / "w.xml")
    assert report.renamed_ids == {"tt_001": "tt_00001", "tt_002": "tt_00002"}
    report = write_dbdc(read_wochat(tmp_path / "w.xml"), tmp_path / "back")
    assert report.restored_ids == {"tt_00001": "tt_001", "tt_00002": "tt_002"}
    assert "2 dialogue id(s) written as the original id kept in the WOCHAT <source_id>: tt_00001 -> tt_001, " \
           "tt_00002 -> tt_002" in report.lines()
    assert sorted(p.name for p in (tmp_path / "back").iterdir()) == [
        "IRIS00007.log.json", "tt_001.log.json", "tt_002.log.json"]
    back = read_dbdc(tmp_path / "back")
    assert back.ids() == ["IRIS00007", "tt_001", "tt_002"]
    assert [t.labels for t in back.dialogues[1].turns] == [{}, {"breakdown": ["O", "X"]}]
    assert back.dialogues[1].turns[1].annotators == ["a1", "a2"]


def test_stc3_to_wochat_to_stc3_gives_the_original_ids(tmp_path):
    recs = [{"id": i, "turns": [{"sender": "customer", "utterances": ["a"]},
                                {"sender": "helpdesk", "utterances": ["b"]}]} for i in ("3718", "x-9")]
    report = write_wochat(read_stc3(recs), tmp_path / "w.xml", sender_map={"customer": "user", "helpdesk": "system"})
    assert report.renamed_ids == {"3718": "dialogue03718", "x-9": "x-00009"}
    report = to_stc3(read_wochat(tmp_path / "w.xml"), tmp_path / "s.json",
                     sender_map={"user": "customer", "system": "helpdesk"})
    assert report.restored_ids == {"dialogue03718": "3718", "x-00009": "x-9"}
    assert json.loads((tmp_path / "s.json").read_text()) == recs
    recs[0]["turns"][1]["utterances"] = ["b", "c"]  # WOCHAT has one utterance a turn: joined, and said so
    report = write_wochat(read_stc3(recs), tmp_path / "j.xml", sender_map={"customer": "user", "helpdesk": "system"})
    assert report.notes == ["1 turn(s) of several utterances written as one utterance, joined by line breaks"]


def test_ids_that_collide_once_restored_are_refused_and_nothing_is_written(tmp_path):
    for case, dialogues in {"same source": [("a00001", "d1"), ("b00001", "d1")],
                            "source is another's id": [("a00001", "b00001"), ("b00001", None)]}.items():
        corpus = read_wochat(_wochat(tmp_path / f"{case}.xml", *dialogues))
        clash = dialogues[1][1] or dialogues[1][0]
        want = (f"dialogue b00001: source_id: dialogue id '{clash}' would be written twice: the WOCHAT "
                "dialogues 'a00001' and 'b00001' both have it")
        with pytest.raises(DialevalError, match=want):
            write_dbdc(corpus, tmp_path / f"{case} dbdc")
        with pytest.raises(DialevalError, match=want):
            to_stc3(corpus, tmp_path / f"{case}.json", sender_map={"user": "customer"})
        assert not (tmp_path / f"{case} dbdc").exists() and not (tmp_path / f"{case}.json").exists()


def test_only_a_wochat_corpus_has_its_source_id_restored(tmp_path):
    """Another format's own ``source_id`` field (kept in meta by its reader) is its data, not a WOCHAT rename;
    writing WOCHAT again keeps the WOCHAT id and its <source_id>."""
    src = _dbdc_folder(tmp_path / "in", _log("d_00001", **{"source_id": "elsewhere"}))
    report = write_dbdc(read_dbdc(src), tmp_path / "back")
    assert report.restored_ids == {} and read_dbdc(tmp_path / "back").ids() == ["d_00001"]
    wochat = read_wochat(_wochat(tmp_path / "w.xml", ("a00001", "orig")))
    write_wochat(wochat, tmp_path / "again.xml")
    (d,) = read_wochat(tmp_path / "again.xml")
    assert (d.id, d.meta["source_id"]) == ("a00001", "orig")


# ------------------------------------------------------------------------------------------ 2. CR in texts

def test_carriage_returns_survive_wochat(tmp_path):
    texts = ["crlf\r\nx", "lone\ry", "both\r\n\rz"]
    logs = [_log(f"d_0000{i}", system=t) for i, t in enumerate(texts)]
    write_wochat(read_dbdc(_dbdc_folder(tmp_path / "in", *logs)), tmp_path / "w.xml")
    raw = (tmp_path / "w.xml").read_bytes()
    assert b"\r" not in raw and raw.count(b"&#13;") == 4
    write_dbdc(read_wochat(tmp_path / "w.xml"), tmp_path / "back")
    assert [d.turns[1].utterances for d in read_dbdc(tmp_path / "back")] == [[t] for t in texts]


def test_line_breaks_at_an_utterances_ends_survive_wochat(tmp_path):
    """Written with xml:space="preserve" (data, not layout); a pretty-printed file's layout is still dropped."""
    texts = ["\n  hi there\n", "a\r\n", "line1\nline2", " x "]
    d = Dialogue("IRIS00001", [Turn("user" if i % 2 == 0 else "system", [t]) for i, t in enumerate(texts)])
    write_wochat(Corpus([d], {}, "stc3", "mem"), tmp_path / "w.xml")
    assert [t.text for t in read_wochat(tmp_path / "w.xml").dialogues[0].turns] == texts
    (tmp_path / "p.xml").write_text('<dialogue id="IRIS00002"><system_name/><user_name/><turn id="1">\n'
                                    "  <speaker>USER</speaker>\n  <utterance>\n    hi\n  </utterance>\n"
                                    "</turn></dialogue>")
    assert read_wochat(tmp_path / "p.xml").dialogues[0].turns[0].text == "hi"


def test_carriage_returns_in_names_and_attributes_survive_wochat(tmp_path):
    from dialeval.io.wochat import validity_scale

    names = {"SYSTEM": "Bo\r\nb", "USER": "A\rn"}
    turns = [Turn("user", ["hi\r\nthere\r"]), Turn("system", ["ok"], {"validity": ["VALID"]}, ["a\r1"])]
    corpus = Corpus([Dialogue("IRIS00001", turns, meta={"names": names})], {"validity": validity_scale()}, "wochat")
    write_wochat(corpus, tmp_path / "w.xml")
    assert b"\r" not in (tmp_path / "w.xml").read_bytes()
    (d,) = read_wochat(tmp_path / "w.xml")
    assert d.meta["names"] == names and d.turns[1].annotators == ["a\r1"]
    assert d.turns[0].utterances == ["hi\r\nthere\r"]


# --------------------------------------------------------------------------------- 3. DBDC metadata fields

def test_dbdc_metadata_fields_travel_through_wochat_tags(tmp_path):
    rec = _log("tt_001", **{"group-id": "g7", "speaker-id": "1083"})
    rec["turns"][1]["time"] = "2017-05-01 10:00"
    rec["turns"][1]["annotation-id"] = "tt_001_01"
    rec["turns"][1]["annotations"][0] |= {"comment": "odd <reply> & off topic", "ungrammatical-sentence": "1"}
    report = write_wochat(read_dbdc(_dbdc_folder(tmp_path / "in", rec)), tmp_path / "w.xml")
    assert report.dropped == []
    text = (tmp_path / "w.xml").read_text()
    for tag in ("<speaker-id>1083</speaker-id>", "<group-id>g7</group-id>", "<time>2017-05-01 10:00</time>",
                "<comment>odd &lt;reply&gt; &amp; off topic</comment>", "<ungrammatical-sentence>1<"):
        assert tag in text
    report = write_dbdc(read_wochat(tmp_path / "w.xml"), tmp_path / "back")
    assert report.dropped == []
    assert json.loads((tmp_path / "back" / "tt_001.log.json").read_text()) == rec
    # and DBDC -> DBDC keeps them too
    write_dbdc(read_dbdc(tmp_path / "back"), tmp_path / "again")
    assert json.loads((tmp_path / "again" / "tt_001.log.json").read_text()) == rec


def test_what_cannot_travel_is_listed_as_dropped(tmp_path):
    rec = _log("d_00001", **{"speaker-id": ["not", "a", "string"], "topic": "music"})
    rec["turns"][0]["mood"] = "calm"
    report = write_wochat(read_dbdc(_dbdc_folder(tmp_path / "in", rec)), tmp_path / "w.xml")
    assert sorted(report.dropped) == ["DBDC dialogue field 'speaker-id' (not a string or a number) (1 time(s))",
                                      "DBDC dialogue field 'topic' (1 time(s))", "DBDC turn field 'mood' (1 time(s))"]
    assert any(line.startswith("dropped (not representable): DBDC") for line in report.lines())
    xml = ('<dialogue id="IRIS00001"><system_name>IRIS</system_name><user_name/><timestamp>t</timestamp>'
           '<lang>en</lang><turn id="1"><speaker>SYSTEM</speaker><utterance>hi</utterance><mood>x</mood>'
           '<annotator id="a"><VALID/><note>y</note></annotator></turn></dialogue>')
    (tmp_path / "x.xml").write_text(xml)
    report = write_dbdc(read_wochat(tmp_path / "x.xml"), tmp_path / "d")
    assert sorted(report.dropped) == [
        "WOCHAT <lang> of a dialogue (1 time(s))", "WOCHAT <mood> of a turn (1 time(s))",
        "WOCHAT <note> of an annotator (1 time(s))", "WOCHAT <timestamp> of a dialogue (1 time(s))",
        "WOCHAT declared speaker names (<system_name>, <user_name>...) (1 time(s))"]


def test_metadata_stc3_and_dbdc_cannot_hold_is_listed_as_dropped(tmp_path):
    """DBDC -> STC-3 (no place for any DBDC field), DBDC -> DBDC (its unknown fields), WOCHAT -> STC-3 (kept tags)."""
    from dialeval.io.convert import to_stc3

    rec = _log("tt_001", **{"speaker-id": "1083", "topic": "music"})
    rec["turns"][1] |= {"time": "10:00", "annotation-id": "tt_001_01"}
    rec["turns"][1]["annotations"][0]["comment"] = "off topic"
    corpus = read_dbdc(_dbdc_folder(tmp_path / "in", rec))
    senders = {"user": "customer", "system": "helpdesk"}
    report = to_stc3(corpus, tmp_path / "s.json", sender_map=senders, drop_labels=True)
    assert report.dropped == ["labels of scale(s) breakdown", "DBDC annotation field 'comment' (1 time(s))",
                              "DBDC dialogue field 'speaker-id' (1 time(s))", "DBDC dialogue field 'topic' (1 time(s))",
                              "DBDC turn field 'annotation-id' (1 time(s))", "DBDC turn field 'time' (1 time(s))"]
    assert write_dbdc(corpus, tmp_path / "d").dropped == ["DBDC dialogue field 'topic' (1 time(s))"]
    write_wochat(corpus, tmp_path / "w.xml")
    report = to_stc3(read_wochat(tmp_path / "w.xml"), tmp_path / "s2.json", sender_map=senders, drop_labels=True)
    assert report.dropped == ["labels of scale(s) validity", "WOCHAT <annotation-id> of a turn (1 time(s))",
                              "WOCHAT <comment> of an annotator (1 time(s))",
                              "WOCHAT <speaker-id> of a dialogue (1 time(s))", "WOCHAT <time> of a turn (1 time(s))"]


# ------------------------------------------------------------------------------ 4. the labels error's advice

def test_unrepresentable_labels_name_both_ways_out(tmp_path, capsys):
    levels = ("0", "1", "2")
    from dialeval.corpus import Scale

    scales = {"overall impression": Scale("overall impression", levels, "ordinal", "turn"),
              "likeable": Scale("likeable", levels, "ordinal", "dialogue")}
    corpus = Corpus([Dialogue("d1", [Turn("user", ["hi"]), Turn("system", ["yo"], {"overall impression": ["2"]},
                                                                ["a"])], {"likeable": ["1"]}, ["a"])], scales,
                    "conture")
    with pytest.raises(DialevalError) as e:
        write_wochat(corpus, tmp_path / "c.xml")
    msg = str(e.value)
    assert ("the corpus has labels on overall impression, likeable; --scale and --map (in Python scale= and "
            "label_map=) keep the labels of one turn scale as VALID/ACCEPTABLE/INVALID, e.g. --scale "
            "'overall impression' --map 'LEVEL=VALID,LEVEL=ACCEPTABLE,LEVEL=INVALID' with each of its levels 0, "
            "1, 2; --drop-labels (in Python drop_labels=True) writes it without the labels WOCHAT cannot hold") in msg
    assert "pass drop_labels" not in msg
    with pytest.raises(DialevalError) as e:  # the turn scale mapped: only dropping is left to say
        write_wochat(corpus, tmp_path / "c.xml", label_map={"2": "VALID", "1": "ACCEPTABLE", "0": "INVALID"})
    assert "labels on likeable; --drop-labels (in Python drop_labels=True)" in str(e.value)
    assert "--scale" not in str(e.value)


def test_conture_to_wochat_cli_error_is_one_line(shared_data, tmp_path, capsys):
    src = str(shared_data("conture", "data.json"))
    assert run(["corpus", "convert", src, str(tmp_path / "c.xml"), "--to", "wochat"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "--scale 'overall impression' --map" in err and "--drop-labels (in Python drop_labels=True)" in err
    assert run(["corpus", "convert", src, str(tmp_path / "c.xml"), "--to", "wochat", "--scale", "overall impression",
                "--map", "2=VALID,1=ACCEPTABLE,0=INVALID", "--drop-labels"]) == 0
    assert len(read_wochat(tmp_path / "c.xml")) == 119


# ------------------------------------------------------------------- 5. what a property-based probe found

def test_a_dbdc_field_named_like_a_wochat_tag_stays_a_field(tmp_path):
    """A DBDC log's own ``source_id``/``timestamp`` field is not WOCHAT's: listed as dropped, never taken for the
    original id on the way back."""
    from dialeval.io.dbdc import breakdown_scale

    c = Corpus([Dialogue("abc00001", [Turn("user", ["hi"])], meta={"source_id": "zzz", "timestamp": "t"})],
               {"breakdown": breakdown_scale()}, "dbdc")
    report = write_wochat(c, tmp_path / "w.xml")
    assert report.dropped == ["DBDC dialogue field 'source_id' (1 time(s))",
                              "DBDC dialogue field 'timestamp' (1 time(s))"]
    assert "<source_id>" not in (tmp_path / "w.xml").read_text()
    write_dbdc(read_wochat(tmp_path / "w.xml"), tmp_path / "d")
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["abc00001.log.json"]


def test_ids_and_fields_keep_the_blanks_at_their_ends_through_wochat(tmp_path):
    from dialeval.io.dbdc import breakdown_scale

    for did in (" x1 ", "\n"):
        c = Corpus([Dialogue(did, [Turn("user", ["hi"], meta={"time": " "})], meta={"speaker-id": " s "})],
                   {"breakdown": breakdown_scale()}, "dbdc")
        write_wochat(c, tmp_path / "w.xml")
        [d] = read_wochat(tmp_path / "w.xml").dialogues
        assert (d.meta["source_id"], d.meta["tags"][0]["text"], d.turns[0].meta["tags"][0]["text"]) == (did, " s ", " ")
        assert d.meta["tags"][0]["attrib"] == {}    # xml:space is how the text was written, not a kept attribute


def test_a_renamed_id_never_takes_an_id_that_fits(tmp_path):
    c = Corpus([Dialogue("a1", [Turn("user", ["hi"])]), Dialogue("a00001", [Turn("user", ["x"])])], {}, "stc3")
    report = write_wochat(c, tmp_path / "w.xml")
    assert report.renamed_ids == {"a1": "a00000"}
    assert [d.id for d in read_wochat(tmp_path / "w.xml").dialogues] == ["a00000", "a00001"]


def test_an_empty_annotator_id_is_refused_not_written_unreadable(tmp_path):
    from dialeval.io.dbdc import breakdown_scale

    c = Corpus([Dialogue("x00001", [Turn("system", ["hi"], {"breakdown": ["O"]}, [""])])],
               {"breakdown": breakdown_scale()}, "dbdc")
    with pytest.raises(DialevalError, match=r"turns\[0\]\.annotators\[0\]: annotator id '' is not allowed"):
        write_wochat(c, tmp_path / "w.xml")
    assert not (tmp_path / "w.xml").exists()


def test_dbdc_writes_every_utterance_of_a_turn_and_says_it_joined_them(tmp_path):
    from dialeval.io.convert import convert
    from dialeval.io.stc3 import stc3_scales

    c = Corpus([Dialogue("s1", [Turn("customer", ["a", "", "b"]), Turn("helpdesk", ["", ""])])], stc3_scales(), "stc3")
    report = convert(c, tmp_path / "d", "dbdc", sender_map={"customer": "user", "helpdesk": "system"})
    assert "2 turn(s) of several utterances written as one utterance, joined by line breaks" in report.lines()
    log = json.loads((tmp_path / "d" / "s1.log.json").read_text())
    assert [t["utterance"] for t in log["turns"]] == ["a\n\nb", "\n"]


def test_stc3_is_written_back_as_read(tmp_path):
    """Two turns of one sender in a row (the reader takes them) with nugget labels: not merged, not refused."""
    from dialeval.io import read_corpus
    from dialeval.io.convert import convert

    recs = [{"id": "d", "turns": [{"sender": "customer", "utterances": ["a"]}, {"sender": "customer",
                                                                             "utterances": ["b"]}],
             "annotations": [{"quality": {"A": 2, "S": 1, "E": 0}, "nugget": ["CNUG0", "CNUG"]}]}]
    convert(read_corpus(recs), tmp_path / "s.json", "stc3")
    assert json.loads((tmp_path / "s.json").read_text()) == recs


def test_dbdc3_logs_come_back_the_same_through_wochat_and_dbdc(shared_data, tmp_path):
    """Every field of DBDC3's IRIS logs, empty ones included, through DBDC -> WOCHAT -> DBDC and DBDC -> DBDC."""
    src = shared_data("dbdc3", "en", "dev", "IRIS_100")
    corpus = read_dbdc(src)
    write_wochat(corpus, tmp_path / "w.xml")
    write_dbdc(read_wochat(tmp_path / "w.xml"), tmp_path / "back")
    write_dbdc(corpus, tmp_path / "again")
    for f in sorted(src.glob("*.log.json")):
        original = json.loads(f.read_text())
        assert json.loads((tmp_path / "back" / f.name).read_text()) == original, f.name
        assert json.loads((tmp_path / "again" / f.name).read_text()) == original, f.name


def test_labels_one_formats_gold_counts_and_the_others_not_are_said(tmp_path):
    """WOCHAT's validity counts every turn, DBDC's breakdown system turns only: labels of user turns are written
    as they are, and the report says whose gold counts them."""
    (tmp_path / "u.xml").write_text(
        '<dialogue id="IRIS00001"><system_name/><user_name/><turn id="1"><speaker>USER</speaker><utterance>hi'
        '</utterance><annotator id="a"><INVALID/></annotator></turn><turn id="2"><speaker>SYSTEM</speaker>'
        '<utterance>yo</utterance><annotator id="a"><VALID/></annotator></turn></dialogue>')
    report = write_dbdc(read_wochat(tmp_path / "u.xml"), tmp_path / "d")
    assert "1 label(s) of user turns written as they are; DBDC's breakdown scale counts system turns only, so its " \
           "gold leaves them out" in report.lines()
    report = write_wochat(read_dbdc(tmp_path / "d"), tmp_path / "w.xml")
    assert any(line.startswith("1 breakdown label(s) of turns other than system's written") for line in report.lines())
