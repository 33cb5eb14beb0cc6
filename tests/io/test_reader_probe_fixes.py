"""Reader bugs a fuzzing probe found, one test (or a few) each: DBDC speakers that are not strings and labels on
user turns, WOCHAT markup in texts, the guidelines' ``</VALID>`` in CDATA and comments and in UTF-16 files,
DTD internal subsets, per-item run ids of any JSON type, and corpus folders listed by one rule (case, hidden
files, ``__MACOSX``, broken links) shared by detection and the readers."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from dialeval import DialevalError, DialevalWarning
from dialeval.cli.main import run
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.distributions import gold_distributions
from dialeval.io import read_corpus
from dialeval.io._files import files_in, listed_files, only_json_file
from dialeval.io.dbdc import breakdown_scale, read_dbdc
from dialeval.io.detect import detect, probe
from dialeval.io.turnruns import read_turn_run
from dialeval.io.wochat import fix_guideline_tags, read_wochat, xml_text

HM = "<system_name>IRIS</system_name><user_name>Ann</user_name>"


def dbdc_log(did: str = "d1", speaker: object = "U", user_annotations: list | None = None) -> dict:
    return {"dialogue-id": did, "turns": [
        {"turn-index": 0, "speaker": speaker, "utterance": "hi", "annotations": user_annotations or []},
        {"turn-index": 1, "speaker": "S", "utterance": "hello", "annotations": [
            {"annotator-id": "a", "breakdown": "O"}, {"annotator-id": "b", "breakdown": "X"}]}]}


def write_json(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def wochat(utterance: str = "hi", annotator: str = '<annotator id="a1"><VALID/></annotator>', head: str = "",
           tail: str = "") -> str:
    return (f'{head}<dialogue id="IRIS00001">{HM}<turn id="1"><speaker>USER</speaker>'
            f"<utterance>{utterance}</utterance>{annotator}{tail}</turn></dialogue>")


def error_of(fn, *args, **kw) -> str:
    with pytest.raises(DialevalError) as e:
        fn(*args, **kw)
    return str(e.value)


# ------------------------------------------------------------------------------------- 1. DBDC speaker type

@pytest.mark.parametrize("speaker,shown", [(["U"], "['U']"), ({"U": 1}, "{'U': 1}"), (1, "1"), (None, "None")])
def test_dbdc_speaker_of_any_json_type_is_a_located_error(tmp_path, speaker, shown):
    p = write_json(tmp_path / "d1.log.json", {"dialogue-id": "d1", "turns": [
        {"turn-index": 0, "speaker": speaker, "utterance": "hi", "annotations": []}]})
    assert error_of(read_dbdc, p) == (f"{p}: dialogue d1: turns[0].speaker: speaker {shown} is not allowed; "
                                      "allowed are U, S")


def test_dbdc_list_speaker_through_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "d1.log.json", {"dialogue-id": "d1", "turns": [
        {"turn-index": 0, "speaker": ["U"], "utterance": "hi", "annotations": []}]})
    assert run(["corpus", "stats", "d1.log.json"]) == 2
    assert capsys.readouterr().err == ("error: d1.log.json: dialogue d1: turns[0].speaker: speaker ['U'] is not "
                                       "allowed; allowed are U, S\n")


# ------------------------------------------------------------------------------- 2. DBDC labels on user turns

def test_dbdc_labels_on_user_turns_are_kept_and_said(tmp_path):
    p = write_json(tmp_path / "d1.log.json",
                   dbdc_log(user_annotations=[{"annotator-id": "a", "breakdown": "T"},
                                              {"annotator-id": "b", "breakdown": "X"}]))
    with pytest.warns(DialevalWarning) as w:
        c = read_dbdc(p)
    assert len(w) == 1
    assert str(w[0].message) == (
        f"{p}: dialogue d1: turns[0].annotations: 2 breakdown label(s) on a user (U) turn: kept on the turn, but "
        "DBDC annotates system (S) turns only and its breakdown scale counts them only, so the gold leaves these "
        "labels out")
    assert c.dialogues[0].turns[0].labels == {"breakdown": ["T", "X"]}   # kept, not dropped
    assert gold_distributions(c)["breakdown"].item_keys() == [("d1", 1)]


def test_dbdc_labels_on_many_user_turns_give_one_warning_with_the_count(tmp_path):
    ann = [{"annotator-id": "a", "breakdown": "O"}]
    for did in ("d1", "d2", "d3"):
        write_json(tmp_path / "set" / f"{did}.log.json", dbdc_log(did, user_annotations=ann))
    with pytest.warns(DialevalWarning) as w:
        read_dbdc(tmp_path / "set")
    assert len(w) == 1
    assert str(w[0].message).startswith(f"{tmp_path / 'set' / 'd1.log.json'}: dialogue d1: turns[0].annotations: ")
    assert str(w[0].message).endswith("; 2 more user turn(s) hold breakdown labels (2 label(s) in all), left out the "
                                      "same way")


def test_dbdc_without_labels_on_user_turns_warns_nothing(tmp_path):
    p = write_json(tmp_path / "d1.log.json", dbdc_log())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_dbdc(p)


# -------------------------------------------------------------------------------------- 3. WOCHAT texts

@pytest.mark.parametrize("body,field,inner", [
    (wochat("hello <b>big</b> world"), "turn 1.utterance", "<utterance> holds element <b>"),
    (wochat().replace("<speaker>USER</speaker>", "<speaker>US<i>ER</i></speaker>"), "turn 1.speaker",
     "<speaker> holds element <i>"),
    (wochat().replace("<user_name>Ann</user_name>", "<user_name>A<x/>nn</user_name>"), "user_name",
     "<user_name> holds element <x>"),
])
def test_wochat_markup_inside_a_text_is_refused(tmp_path, body, field, inner):
    p = tmp_path / "d.xml"
    p.write_text(body, encoding="utf-8")
    assert error_of(read_wochat, p) == (f"{p}: dialogue IRIS00001: {field}: {inner}; allowed is text only "
                                        "(write a '<' of the text as &lt;)")


def test_wochat_escaped_markup_comments_and_cdata_in_a_text_are_text(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(wochat("hello &lt;b&gt; <!-- a note --><![CDATA[<i>]]> world"), encoding="utf-8")
    assert read_wochat(p).dialogues[0].turns[0].utterances == ["hello <b> <i> world"]


# ------------------------------------------------------------------ 4. </VALID> in CDATA, comments, PIs

def test_guideline_spelling_in_cdata_is_text_and_not_a_notice(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(wochat("<![CDATA[the tag </VALID> is shown]]>"), encoding="utf-8")
    c = read_wochat(p)
    assert c.dialogues[0].turns[0].utterances == ["the tag </VALID> is shown"]
    assert c.meta["notices"] == []


def test_guideline_spelling_in_comments_and_processing_instructions_is_left_alone(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(wochat(head="<!-- see </POSITIVE> -->\n",
                        annotator='<annotator id="a1"><!-- </NEGATIVE> --><?note </OFFENSIVE>?></VALID></annotator>'),
                 encoding="utf-8")
    c = read_wochat(p)
    assert c.meta["notices"] == [f"{p}:2: read </VALID> as <VALID/> (the guidelines' spelling)"]
    assert c.dialogues[0].turns[0].labels == {"validity": ["VALID"]}


def test_guideline_spelling_is_rewritten_inside_annotators_only():
    text = ('<turn></POSITIVE><annotator id="a>b"></VALID><ACCEPTABLE></ACCEPTABLE></annotator>'
            '<annotator id="c"/></INVALID></turn>')
    fixed, fixes = fix_guideline_tags(text)
    assert fixes == [(1, "VALID")]
    assert fixed == text.replace('"a>b"></VALID>', '"a>b"><VALID/>')


def test_guideline_spelling_outside_an_annotator_is_a_parse_error(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(wochat(tail="</POSITIVE>"), encoding="utf-8")
    assert "not well-formed XML at line 1" in error_of(read_wochat, p)


# --------------------------------------------------------------------------- 5. encodings, one decoding

@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_guideline_spelling_reads_alike_in_every_encoding(tmp_path, codec):
    declared = "UTF-16" if codec.startswith("utf-16") else "UTF-8"
    p = tmp_path / "d.xml"
    p.write_bytes(wochat("héllo", '<annotator id="a1">\n</VALID></annotator>',
                         head=f'<?xml version="1.0" encoding="{declared}"?>\n').encode(codec))
    c = read_wochat(p)
    assert c.dialogues[0].turns[0].utterances == ["héllo"]
    assert c.dialogues[0].turns[0].labels == {"validity": ["VALID"]}
    assert c.meta["notices"] == [f"{p}:3: read </VALID> as <VALID/> (the guidelines' spelling)"]


@pytest.mark.parametrize("head", ['<?xml version="1.0" encoding="UTF-16"?>\n', "\n"])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_xml_without_a_byte_order_mark_is_detected_as_its_reader_reads_it(tmp_path, codec, head):
    """Detection said 'looks like UTF-16 text without a byte-order mark; save it as UTF-8' of a file the WOCHAT
    reader reads (given --from wochat); both follow one rule (io.text.utf16_without_bom), a blank first too."""
    p = tmp_path / "d.xml"
    p.write_bytes(wochat("héllo", '<annotator id="a1"><VALID/></annotator>', head=head).encode(codec))
    assert detect(p) == "wochat"
    assert read_corpus(p).dialogues[0].turns[0].utterances == ["héllo"]


def test_declared_single_byte_encoding_is_read():
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>'.encode("latin-1")
    assert xml_text(data).endswith("<a>é</a>")


@pytest.mark.parametrize("data,message", [
    (b'<?xml version="1.0"?>\n<a>\xe9</a>', "not utf-8 text (invalid continuation byte at byte 25, line 2); allowed "
     "is text in the encoding of its XML declaration (UTF-8 when it names none): save the file as UTF-8 or declare "
     "its encoding"),
    (b'<?xml version="1.0" encoding="nope"?><a/>', "the XML declaration names the encoding 'nope', which is not "
     "known as a text encoding; allowed are UTF-8, UTF-16 and the character sets XML names (ISO-8859-1, "
     "Shift_JIS...)"),
    (b'<?xml version="1.0" encoding="UTF-16"?><a/>', "the XML declaration names the encoding 'UTF-16', but the file "
     "is not UTF-16 text (it has no byte-order mark and its characters are one byte wide); allowed is the file's "
     "true encoding: correct the declaration"),
    ("<a/>".encode("utf-32"), "the file is UTF-32 text, which XML parsers do not read; allowed are UTF-8, UTF-16 "
     "and the encodings an XML declaration may name: save it as UTF-8"),
])
def test_undecodable_xml_is_one_located_error(tmp_path, data, message):
    p = tmp_path / "d.xml"
    p.write_bytes(data)
    assert error_of(read_wochat, p) == f"{p}: {message}"


# ------------------------------------------------------------------------------------------- 6. DTDs

def test_dtd_internal_subset_is_refused(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(wochat(annotator="<annotator><VALID/></annotator>",
                        head='<?xml version="1.0"?>\n<!DOCTYPE dialogue [<!ATTLIST annotator id CDATA "ghost">]>\n'),
                 encoding="utf-8")
    assert error_of(read_wochat, p) == (
        f"{p}: a DOCTYPE with declarations (<!DOCTYPE dialogue [...]>, line 2) is not allowed: its declarations "
        "could give attributes, such as annotator ids, values the file does not show; remove the [...] part (a "
        "bare <!DOCTYPE dialogue> is allowed)")


@pytest.mark.parametrize("doctype", ["<!DOCTYPE dialogue>", '<!DOCTYPE dialogue SYSTEM "http://example.invalid/w.dtd">'])
def test_bare_doctype_is_allowed(tmp_path, doctype):
    p = tmp_path / "d.xml"
    p.write_text(wochat(head=doctype), encoding="utf-8")
    assert read_wochat(p).dialogues[0].turns[0].annotators == ["a1"]


# ------------------------------------------------------------------------------------ 7. per-item run ids

def _gold():
    c = Corpus([Dialogue("d_00001", [Turn("user", ["a"]), Turn("system", ["b"], {"breakdown": ["O", "X"]})]),
                Dialogue("1", [Turn("user", ["a"]), Turn("system", ["b"], {"breakdown": ["T"]})])],
               {"breakdown": breakdown_scale()}, "dbdc")
    return gold_distributions(c)


@pytest.mark.parametrize("did,shown", [(True, "True"), (["d_00001"], "['d_00001']"), (1.5, "1.5"),
                                       (float("nan"), "nan"), ({"a": 1}, "{'a': 1}")])
def test_turn_run_id_of_another_type_is_refused_as_in_stc3_runs(did, shown):
    records = [{"id": did, "turns": [{"turn": 1, "breakdown": {"O": 1}}]}]
    assert error_of(read_turn_run, records, _gold()) == f"id: item 0: id {shown} must be a string"


def test_turn_run_ids_strings_and_integers_are_read():
    r = read_turn_run([{"id": "d_00001", "turns": [{"turn": 1, "breakdown": {"O": 1}}]},
                       {"id": 1, "turns": [{"turn": 1, "breakdown": {"T": 1}}]}], _gold())
    assert sorted(r.dialogue_ids) == ["1", "d_00001"] and not r.extra_dialogues
    assert error_of(read_turn_run, [{"id": ""}], _gold()) == "id: item 0: id is empty; allowed is a non-empty string"
    assert error_of(read_turn_run, ["x"], _gold()) == "item 0 is a JSON str; expected an object"


# ----------------------------------------------------------------------- 8. one listing of corpus folders

def test_file_names_match_ignoring_case(tmp_path):
    r = {"context": "User: hi\nSystem: hello\n", "consistent": 1}
    write_json(tmp_path / "dstc" / "chatbot1.json", [r])
    write_json(tmp_path / "dstc" / "Chatbot2.json", [dict(r, context="User: yo\nSystem: no\n")])
    c = read_corpus(tmp_path / "dstc")
    assert c.format == "dstc9" and c.ids() == ["chatbot1-000", "Chatbot2-000"]
    write_json(tmp_path / "dbdc" / "d_00001.log.json", dbdc_log("d_00001"))
    write_json(tmp_path / "dbdc" / "D_00002.LOG.JSON", dbdc_log("d_00002"))
    assert detect(tmp_path / "dbdc") == "dbdc" and sorted(read_dbdc(tmp_path / "dbdc").ids()) == ["d_00001", "d_00002"]


def test_hidden_files_and_macos_metadata_are_skipped_by_detection_and_readers(tmp_path):
    folder = tmp_path / "set"
    write_json(folder / "d_00001.log.json", dbdc_log("d_00001"))
    write_json(folder / ".backup" / "d_00001.log.json", dbdc_log("d_00001"))
    write_json(folder / ".d_00003.log.json", dbdc_log("d_00003"))
    (folder / "__MACOSX").mkdir()
    (folder / "__MACOSX" / "._x.log.json").write_bytes(b"\x00\x05Mac OS X")
    assert listed_files(folder) == [folder / "d_00001.log.json"]
    assert probe(folder).files == {"*.log.json": 1}
    assert read_corpus(folder).ids() == ["d_00001"]


def test_only_json_file_follows_the_same_rule(tmp_path):
    write_json(tmp_path / "DATA.JSON", [{"dialog_id": 0, "turns": []}])
    write_json(tmp_path / ".cache" / "old.json", [])
    write_json(tmp_path / "__MACOSX" / "._DATA.JSON", [])
    assert only_json_file(tmp_path) == tmp_path / "DATA.JSON"


def test_broken_links_are_reported_not_skipped(tmp_path):
    folder = tmp_path / "set"
    write_json(folder / "d_00001.log.json", dbdc_log("d_00001"))
    (folder / "d_00002.log.json").symlink_to(tmp_path / "gone.log.json")
    (folder / "notes.txt").symlink_to(tmp_path / "gone.txt")   # not a file of the corpus: not looked at
    message = (f"{folder / 'd_00002.log.json'}: is a symbolic link to '{tmp_path / 'gone.log.json'}', which cannot "
               "be read (no such file, or a loop of links); restore its target or remove the link")
    assert error_of(read_dbdc, folder) == message
    assert error_of(files_in, folder, ["*.log.json"], "DBDC logs") == message
    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "chatbot1.json").symlink_to(loop / "chatbot1.json")
    assert "chatbot1.json: is a symbolic link to" in error_of(read_corpus, loop)


# ------------------------------------------------ what a round-trip probe of these fixes found

def test_a_dialogue_id_that_starts_with_a_dot_is_not_written_as_a_hidden_file(tmp_path):
    """The readers leave hidden files out, so an id '.hidden' was written as .hidden.log.json, then never read back
    ('wrote 3 dialogue(s)', 1 came back)."""
    import json

    import dialeval
    from dialeval.io.convert import convert

    recs = [{"id": i, "turns": [{"sender": "customer", "utterances": ["hi"]}, {"sender": "helpdesk",
                                                                               "utterances": ["yo"]}]}
            for i in (".hidden", "ok", "._mac")]
    src = tmp_path / "s.json"
    src.write_text(json.dumps(recs), encoding="utf-8")
    for fmt in ("dbdc", "wochat"):
        out = tmp_path / fmt
        convert(dialeval.read_corpus(src), out, fmt, sender_map={"customer": "user", "helpdesk": "system"})
        back = dialeval.read_corpus(out).ids()
        assert len(back) == 3 and (fmt != "dbdc" or sorted(back) == ["._mac", ".hidden", "ok"])  # WOCHAT renames
        assert not any(p.name.startswith(".") for p in out.iterdir())


@pytest.mark.parametrize(("encoding", "text"), [
    ("unicode_escape", "C:\\\\temp\\\\new \\\\u00e9"),    # escapes were decoded: a TAB, a newline, an é
    ("utf-7", "a +ADw-b"),                              # UTF-7 made '<' of +ADw-
    ("\\0UTF-8", "x"),                                 # a NUL in the name was a ValueError traceback
    ("undefined", "x"),                                # a UnicodeError traceback
])
def test_a_declared_encoding_must_be_a_character_set(encoding, text, tmp_path):
    from dialeval.io.wochat import read_wochat

    f = tmp_path / "d.xml"
    f.write_bytes(f'<?xml version="1.0" encoding="{encoding}"?><dialogue id="IRIS00001"><system_name/>'
                  f'<user_name/><turn id="1"><speaker>USER</speaker><utterance>{text}</utterance></turn>'
                  '</dialogue>'.encode("latin-1", "backslashreplace").replace(b"\\\\0", b"\\0"))
    with pytest.raises(DialevalError, match="which is not known as a text encoding; allowed are UTF-8, UTF-16"):
        read_wochat(f)
