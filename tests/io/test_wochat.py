"""WOCHAT XML: each rule of FORMATS.md §2 with small hand-written files (valid and invalid, exact messages),
safe parsing (billion laughs, external entities, size bound), the writer, and the DBDC3 round trip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dialeval import DialevalError
from dialeval.io import read_corpus
from dialeval.io.wochat import read_wochat
from dialeval.io.wochat_writer import write_wochat

HM = "<system_name>IRIS</system_name><user_name>Ann</user_name><timestamp>2017-01-01 10:00</timestamp>"
T1 = '<turn id="1"><speaker>USER</speaker><utterance>hello SYSTEM_NAME</utterance></turn>'


def turn2(annotators: str = "", utterance: str = "hi USER_NAME", speaker: str = "SYSTEM", extra: str = "") -> str:
    return f'<turn id="2"><speaker>{speaker}</speaker><utterance>{utterance}</utterance>{extra}{annotators}</turn>'


def write(tmp_path: Path, body: str, did: str = "IRIS00001", names: str = HM, name: str = "d.xml") -> Path:
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<dialogue id="{did}">{names}{body}</dialogue>\n')
    return p


def error_of(path: Path, **kw) -> str:
    with pytest.raises(DialevalError) as e:
        read_wochat(path, **kw)
    return str(e.value)


# ------------------------------------------------------------------------------------------------- valid files

def test_valid_human_machine_dialogue(tmp_path):
    anns = ('<annotator id="a1"><VALID/><POSITIVE/></annotator>'
            '<annotator id="a2"><ACCEPTABLE/></annotator><annotator id="a3"><INVALID/><OFFENSIVE/></annotator>')
    c = read_wochat(write(tmp_path, T1 + turn2(anns)))
    d = c.dialogues[0]
    assert c.format == "wochat" and d.id == "IRIS00001"
    assert d.meta["names"] == {"SYSTEM": "IRIS", "USER": "Ann"} and d.meta["timestamp"] == "2017-01-01 10:00"
    assert [t.sender for t in d.turns] == ["user", "system"]
    assert d.turns[1].labels == {"validity": ["VALID", "ACCEPTABLE", "INVALID"], "positive": ["yes", "no", "no"],
                                 "offensive": ["no", "no", "yes"]}
    assert d.turns[1].annotators == ["a1", "a2", "a3"]
    assert set(c.scales) == {"validity", "positive", "offensive"}
    assert c.scales["validity"].kind == "ordinal" and c.scales["validity"].levels == ("VALID", "ACCEPTABLE", "INVALID")
    assert c.meta["notices"] == []


def test_human_human_multiparty(tmp_path):
    names = "<user1_name>Bo</user1_name><user2_name>Cy</user2_name><user3_name>Di</user3_name>"
    body = "".join(f'<turn id="{i}"><speaker>USER{i}</speaker><utterance>hi</utterance></turn>' for i in (1, 2, 3))
    c = read_wochat(write(tmp_path, body, did="human00042", names=names))
    assert [t.sender for t in c.dialogues[0].turns] == ["user1", "user2", "user3"]


@pytest.mark.parametrize("did", ["IRIS00000", "human99999", "ticktock_00003", "iris_00014", "Bot.v2-00001"])
def test_id_pattern_accepts(tmp_path, did):
    assert read_wochat(write(tmp_path, T1, did=did)).ids() == [did]


def test_guidelines_spelling_is_accepted_and_located(tmp_path):
    p = tmp_path / "g.xml"
    p.write_text(f'<dialogue id="IRIS00001">{HM}{T1}\n<turn id="2"><speaker>SYSTEM</speaker><utterance>x</utterance>\n'
                 '<annotator id="a1">\n</VALID> </POSITIVE>\n</annotator>\n'
                 '<annotator id="a2"><INVALID></INVALID></annotator></turn></dialogue>')
    c = read_wochat(p)
    assert c.dialogues[0].turns[1].labels["validity"] == ["VALID", "INVALID"]
    assert c.dialogues[0].turns[1].labels["positive"] == ["yes", "no"]
    assert c.meta["notices"] == [f"{p}:4: read </VALID> as <VALID/> (the guidelines' spelling)",
                                 f"{p}:4: read </POSITIVE> as <POSITIVE/> (the guidelines' spelling)"]


def test_optional_tags_in_turns_and_annotators_are_kept(tmp_path):
    extra = "<timestamp>10:00:01</timestamp><context><topic>food</topic></context>"
    anns = '<annotator id="a1"><VALID/><confidence>high</confidence></annotator>'
    t = read_wochat(write(tmp_path, T1 + turn2(anns, extra=extra))).dialogues[0].turns[1]
    assert t.meta["tags"][0] == {"tag": "timestamp", "attrib": {}, "text": "10:00:01"}
    assert t.meta["tags"][1]["tag"] == "context" and "<topic>food</topic>" in t.meta["tags"][1]["xml"]
    assert t.meta["annotator_tags"] == [[{"tag": "confidence", "attrib": {}, "text": "high"}]]


def test_folder_and_wrapper_root(tmp_path):
    (tmp_path / "a").mkdir()
    write(tmp_path / "a", T1, did="IRIS00001", name="1.xml")
    write(tmp_path / "a", T1, did="IRIS00002", name="2.xml")
    assert read_corpus(tmp_path / "a").ids() == ["IRIS00001", "IRIS00002"]
    p = tmp_path / "many.xml"
    p.write_text(f'<dialogues><dialogue id="IRIS00003">{HM}{T1}</dialogue><dialogue id="IRIS00004">{HM}{T1}'
                 '</dialogue></dialogues>')
    assert read_corpus(p).ids() == ["IRIS00003", "IRIS00004"]


def test_name_policies(tmp_path):
    p = write(tmp_path, T1 + turn2(utterance="thanks ann, I am iris"))
    assert error_of(p) == (f"{p}: dialogue IRIS00001: turn 2.utterance: the utterance contains the SYSTEM name 'iris' "
                           "declared in <system_name>; WOCHAT utterances must read SYSTEM_NAME instead "
                           "(names='replace', --wochat-names replace on the command line, replaces it)")
    c = read_wochat(p, names="replace")
    assert c.dialogues[0].turns[1].utterances == ["thanks USER_NAME, I am SYSTEM_NAME"]
    assert len(c.meta["notices"]) == 2
    assert read_wochat(p, names="keep").dialogues[0].turns[1].utterances == ["thanks ann, I am iris"]
    # whole words only: "Annie" and "irises" are not the names
    assert read_wochat(write(tmp_path, T1 + turn2(utterance="Annie likes irises"), name="w.xml"))


# ------------------------------------------------------------------------------------------------ invalid files

INVALID = [
    ("bad id", dict(did="IRIS0001"), "dialogue IRIS0001: id: dialogue id 'IRIS0001' does not follow the WOCHAT "
     "pattern: a chatbot name (or 'human') followed by a 5-digit number 00000-99999, e.g. 'IRIS00042'"),
    ("6 digits", dict(did="IRIS000001"), "dialogue IRIS000001: id: dialogue id 'IRIS000001' does not follow"),
    ("no name", dict(did="00001"), "dialogue 00001: id: dialogue id '00001' does not follow"),
    ("undeclared speaker", dict(body=T1 + turn2(speaker="USER2")),
     "dialogue IRIS00001: turn 2.speaker: speaker 'USER2' is not declared; declared roles are SYSTEM, USER"),
    ("no names at all", dict(names="", body=T1),
     "dialogue IRIS00001: turn 1.speaker: speaker 'USER' is not declared; declared roles are (none: add "
     "<system_name>/<user_name> or <user1_name>, <user2_name>...)"),
    ("no validity tag", dict(body=T1 + turn2('<annotator id="a1"><POSITIVE/></annotator>')),
     "dialogue IRIS00001: turn 2: annotator 'a1' gives none of <VALID/>, <ACCEPTABLE/>, <INVALID/>; exactly one is "
     "required"),
    ("two validity tags", dict(body=T1 + turn2('<annotator id="a1"><VALID/><INVALID/></annotator>')),
     "dialogue IRIS00001: turn 2: annotator 'a1' gives <VALID/> and <INVALID/>; exactly one of <VALID/>, "
     "<ACCEPTABLE/>, <INVALID/> is allowed"),
    ("annotator twice", dict(body=T1 + turn2('<annotator id="a1"><VALID/></annotator>'
                                             '<annotator id="a1"><VALID/></annotator>')),
     "dialogue IRIS00001: turn 2: annotator 'a1' appears twice in this turn"),
    ("annotator without id", dict(body=T1 + turn2('<annotator><VALID/></annotator>')),
     "dialogue IRIS00001: turn 2: an <annotator> has no id attribute"),
    ("tag with text", dict(body=T1 + turn2('<annotator id="a1"><VALID>yes</VALID></annotator>')),
     "dialogue IRIS00001: turn 2: annotator 'a1': <VALID> must be an empty tag, <VALID/>"),
    ("optional twice", dict(body=T1 + turn2('<annotator id="a1"><VALID/><POSITIVE/><POSITIVE/></annotator>')),
     "dialogue IRIS00001: turn 2: annotator 'a1' gives <POSITIVE/> twice"),
    ("no speaker", dict(body='<turn id="1"><utterance>x</utterance></turn>'),
     "dialogue IRIS00001: turn 1: the turn has no <speaker>"),
    ("no utterance", dict(body='<turn id="1"><speaker>USER</speaker></turn>'),
     "dialogue IRIS00001: turn 1: the turn has no <utterance>"),
    ("turn id not a number", dict(body='<turn id="one"><speaker>USER</speaker><utterance>x</utterance></turn>'),
     "dialogue IRIS00001: turn: turn id 'one' is not allowed; a turn needs id=\"N\", N = 0, 1, 2, ..."),
    ("turn ids not increasing", dict(body=turn2() + T1),
     "dialogue IRIS00001: turn 1: turn id 1 comes after turn id 2; turn ids must increase"),
    ("name declared twice", dict(names=HM + "<user_name>Bob</user_name>", body=T1),
     "dialogue IRIS00001: user_name: <user_name> is declared twice"),
    ("no turn", dict(body=""), "dialogue IRIS00001: the dialogue has no <turn>"),
    ("turn id of a superscript digit", dict(body='<turn id="²"><speaker>USER</speaker><utterance>x</utterance></turn>'),
     "dialogue IRIS00001: turn: turn id '²' is not allowed; a turn needs id=\"N\", N = 0, 1, 2, ..."),
    ("turn id of Arabic-Indic digits", dict(body='<turn id="٢"><speaker>USER</speaker><utterance>x</utterance>'
                                                 '</turn>'),
     "dialogue IRIS00001: turn: turn id '٢' is not allowed; a turn needs id=\"N\", N = 0, 1, 2, ..."),
    ("turn id of 5000 digits", dict(body=f'<turn id="{"9" * 5000}"><speaker>USER</speaker><utterance>x</utterance>'
                                         '</turn>'),
     "dialogue IRIS00001: turn: turn id '99999"),
    ("dialogue id of full-width digits", dict(did="IRIS００００１"),
     "dialogue IRIS００００１: id: dialogue id 'IRIS００００１' does not follow the WOCHAT pattern"),
    ("an extra tag nested 2000 deep", dict(body=T1 + "<meta>" + "<a>" * 2000 + "</a>" * 2000 + "</meta>"),
     "dialogue IRIS00001: meta: <meta> is nested too deeply to keep"),
]


@pytest.mark.parametrize("case,kw,message", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_files_give_exact_messages(tmp_path, case, kw, message):
    body = kw.pop("body", T1)
    p = write(tmp_path, body, **kw)
    got = error_of(p)
    assert got.startswith(f"{p}: {message}"), got
    if case not in ("6 digits", "no name", "turn id of 5000 digits", "dialogue id of full-width digits"):
        assert got == f"{p}: {message}"


def test_not_well_formed(tmp_path):
    p = tmp_path / "bad.xml"
    p.write_text('<dialogue id="IRIS00001">\n<turn id="1">\n</dialogue>')
    # one position, counted from 1 (expat's own ": line 3, column 2" counts columns from 0 and is left out)
    assert error_of(p) == f"{p}: not well-formed XML at line 3, column 3: mismatched tag"


def test_missing_dialogue_element(tmp_path):
    p = tmp_path / "x.xml"
    p.write_text("<root><other/></root>")
    assert error_of(p) == f"{p}: no <dialogue> element (the root is <root>)"


# ---------------------------------------------------------------------------------------------- unsafe XML

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<dialogue id="IRIS00001"><system_name>&lol9;</system_name><user_name>u</user_name>
<turn id="1"><speaker>USER</speaker><utterance>hi</utterance></turn></dialogue>
"""


def test_billion_laughs_is_refused(tmp_path):
    p = tmp_path / "lol.xml"
    p.write_text(BILLION_LAUGHS)
    msg = error_of(p)
    assert msg.startswith(f"{p}: refused unsafe XML (EntitiesForbidden")
    assert "billion laughs" in msg


def test_external_entity_is_refused_without_network(tmp_path):
    p = tmp_path / "xxe.xml"
    p.write_text('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "http://example.invalid/x">]>'
                 '<dialogue id="IRIS00001"><user_name>&x;</user_name></dialogue>')
    assert error_of(p).startswith(f"{p}: refused unsafe XML (EntitiesForbidden")


def test_size_is_bounded(tmp_path):
    p = write(tmp_path, T1)
    size = p.stat().st_size
    assert error_of(p, max_bytes=100) == (f"{p}: file of {size:,} bytes is larger than the limit of 100 bytes "
                                          "(pass max_bytes= to read it anyway)")


# ------------------------------------------------------------------------------------------------- writing

def test_writer_emits_well_formed_tags_and_reads_back(tmp_path):
    anns = '<annotator id="a1"></VALID></POSITIVE></annotator><annotator id="a2"></INVALID></annotator>'
    src = read_wochat(write(tmp_path, T1 + turn2(anns, extra="<timestamp>t</timestamp>")))
    out = tmp_path / "out.xml"
    report = write_wochat(src, out)
    text = out.read_text()
    assert "<VALID/>" in text and "<POSITIVE/>" in text and "</VALID>" not in text and " />" not in text
    assert "labels:" not in text   # VALID -> VALID, ... is no mapping: not reported (an end-to-end probe)
    back = read_wochat(out)
    assert back.meta["notices"] == []
    for a, b in zip(src.dialogues[0].turns, back.dialogues[0].turns, strict=True):
        assert (a.sender, a.utterances, a.labels, a.annotators) == (b.sender, b.utterances, b.labels, b.annotators)
        assert a.meta.get("tags") == b.meta.get("tags")
    assert back.dialogues[0].meta["names"] == {"SYSTEM": "IRIS", "USER": "Ann"}
    assert report.labels == 2 and report.renamed_ids == {}


def test_writer_replaces_declared_names(tmp_path):
    c = read_wochat(write(tmp_path, T1 + turn2(utterance="bye Ann")), names="keep")
    report = write_wochat(c, tmp_path / "o.xml")
    assert report.replaced_names == 1
    assert read_wochat(tmp_path / "o.xml").dialogues[0].turns[1].utterances == ["bye USER_NAME"]


def test_writer_id_policies_and_folder(tmp_path):
    c = read_corpus(write(tmp_path, T1))
    c.dialogues[0].id = "tt_001"
    with pytest.raises(DialevalError, match=re.escape("dialogue id 'tt_001' does not follow the WOCHAT pattern")):
        write_wochat(c, tmp_path / "s.xml", ids="strict")
    report = write_wochat(c, tmp_path / "folder")
    assert report.renamed_ids == {"tt_001": "tt_00001"}
    back = read_wochat(tmp_path / "folder")
    assert back.ids() == ["tt_00001"] and back.dialogues[0].meta["source_id"] == "tt_001"
    with pytest.raises(DialevalError, match="exists and is not empty"):
        write_wochat(c, tmp_path / "folder")


def test_writer_refuses_to_drop_labels_silently(shared_data, tmp_path):
    c = read_corpus(shared_data("conture", "data.json"))
    with pytest.raises(DialevalError, match="no known mapping from scale 'overall impression'"):
        write_wochat(c, tmp_path / "c.xml", scale="overall impression")
    m = {"2": "VALID", "1": "ACCEPTABLE", "0": "INVALID"}
    with pytest.raises(DialevalError, match=r"the corpus has labels on consistent, likeable"):
        write_wochat(c, tmp_path / "c.xml", label_map=m)
    report = write_wochat(c, tmp_path / "c.xml", label_map=m, drop_labels=True)
    assert report.labels == 1066 and "consistent" in report.dropped[0]
    back = read_wochat(tmp_path / "c.xml")
    assert sum(len(d.turns) for d in back) == 2132


# ---------------------------------------------------------------------------------- DBDC3 -> WOCHAT -> back

BREAKDOWN_TO_WOCHAT = {"O": "VALID", "T": "ACCEPTABLE", "X": "INVALID"}


@pytest.mark.parametrize("folder", ["dev/IRIS_100", "dev/TKTK_100", "eval/IRIS_50", "eval/TKTK_50"])
def test_dbdc3_round_trip_loses_nothing(shared_data, tmp_path, folder):
    src = read_corpus(shared_data("dbdc3", "en", *folder.split("/")))
    report = write_wochat(src, tmp_path / "w")
    assert report.mapping == BREAKDOWN_TO_WOCHAT and report.replaced_names == 0 and not report.dropped
    back = read_corpus(tmp_path / "w")
    assert back.format == "wochat" and back.meta["notices"] == []
    by_source = {d.meta.get("source_id", d.id): d for d in back}
    assert sorted(by_source) == sorted(src.ids())
    n_labels = 0
    for d in src:
        e = by_source[d.id]
        assert len(e.turns) == len(d.turns)
        for a, b in zip(d.turns, e.turns, strict=True):
            assert (a.sender, a.utterances) == (b.sender, b.utterances)
            assert [BREAKDOWN_TO_WOCHAT[x] for x in a.labels.get("breakdown", [])] == b.labels.get("validity", [])
            assert a.annotators == b.annotators
            n_labels += len(a.labels.get("breakdown", []))
    assert n_labels == report.labels == 30 * len(src) * 10
    # ... and back to DBDC: the original ids (from <source_id>), texts, labels, annotators and metadata fields
    from dialeval.io.dbdc_writer import write_dbdc

    report = write_dbdc(back, tmp_path / "d")
    assert report.restored_ids == {e.id: s for s, e in by_source.items() if s != e.id}  # TKTK: tt_00001 -> tt_001
    assert not report.dropped
    again = read_corpus(tmp_path / "d")
    assert again.ids() == src.ids()
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == sorted(d.meta["file"] for d in src)
    for d, e in zip(src, again, strict=True):
        assert (d.meta.get("speaker-id") or None) == (e.meta.get("speaker-id") or None)
        for a, b in zip(d.turns, e.turns, strict=True):
            assert (a.sender, a.utterances, a.labels, a.annotators) == (b.sender, b.utterances, b.labels, b.annotators)
            for key in ("time", "annotation-id", "annotation_extra"):
                assert (a.meta.get(key) or None) == (b.meta.get(key) or None)


def test_writer_refuses_a_lone_surrogate_in_one_line(tmp_path):
    """A JSON "\\ud800" escape reads as a lone surrogate, which XML cannot carry: a located error, not a crash."""
    from dialeval.corpus import Corpus, Dialogue, Turn

    bad_text = Corpus([Dialogue("IRIS00001", [Turn("user", ["hi \ud800"])])])
    with pytest.raises(DialevalError, match=r"turns\[0\].*lone surrogate, which XML 1.0 cannot carry"):
        write_wochat(bad_text, tmp_path / "a.xml")
    bad_id = Corpus([Dialogue("x\udc00", [Turn("user", ["hi"])])])
    with pytest.raises(DialevalError, match=r"holds \\udc00 \(a control character, or a lone surrogate"):
        write_wochat(bad_id, tmp_path / "b.xml")
    assert not (tmp_path / "a.xml").exists() and not (tmp_path / "b.xml").exists()


def test_writer_refuses_control_characters_in_ids_and_escapes_the_source_comment(tmp_path):
    """An id or an annotator id with a control character would make XML the reader refuses: a located error. A
    source path with "--" or a control character is written into the comment so that the XML stays well formed."""
    from dialeval.corpus import Corpus, Dialogue, Turn
    from dialeval.io.wochat import validity_scale

    labelled = Turn("system", ["hello"], labels={"validity": ["VALID"]}, annotators=["a\x01b"])
    with pytest.raises(DialevalError, match=r"dialogue IRIS00001: .*holds \\x01 \(a control character"):
        write_wochat(Corpus([Dialogue("IRIS00001", [Turn("user", ["hi"]), labelled])],
                            {"validity": validity_scale()}, "wochat"), tmp_path / "a.xml", scale="validity")
    with pytest.raises(DialevalError, match=r"holds \\x00 \(a control character"):
        write_wochat(Corpus([Dialogue("a/b\x00c", [Turn("user", ["hi"])])]), tmp_path / "b.xml")
    assert not (tmp_path / "a.xml").exists() and not (tmp_path / "b.xml").exists()
    c = Corpus([Dialogue("IRIS00001", [Turn("user", ["hi"])])], source="my--data\x02/x-")
    write_wochat(c, tmp_path / "c.xml")
    assert "my- -data\\x02/x-" in (tmp_path / "c.xml").read_text()
    assert read_wochat(tmp_path / "c.xml").ids() == ["IRIS00001"]
