"""Ids and names in other Unicode spellings: NFC/NFD run ids, Discpower topic ids, WOCHAT declared names, expat
positions. Expected texts written by hand."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from dialeval.cli.main import run
from dialeval.coverage import check_common, id_sample, normalisation_note
from dialeval.errors import DialevalError
from dialeval.io.discpower import check_topic_ids, write_matrices
from dialeval.io.wochat import name_pattern, read_wochat

NFC, NFD = "caf\u00e9", "cafe\u0301"


# ------------------------------------------------------------------ 1. ids equal only after NFC

def test_ids_differing_in_normalisation_are_named_as_such():
    with pytest.raises(DialevalError) as e:
        check_common([NFD, "Zoe\u0308"], [NFC, "Zo\u00eb", "g3"], 0, "run.json")
    msg = str(e.value)
    assert msg.startswith("run.json: 0 of 2 run ids are in the gold; ")
    assert "2 run id(s) differ from gold ids only in Unicode normalisation (NFC vs NFD" in msg
    assert "run 'cafe\\u0301' (NFD) vs gold 'caf\\xe9' (NFC)" in msg
    assert "run 'Zoe\\u0308' (NFD) vs gold 'Zo\\xeb' (NFC)" in msg
    assert "ids are matched exactly" in msg


def test_no_note_when_ids_really_differ():
    assert normalisation_note(["a", NFC], ["b", "cafe"]) == ""
    with pytest.raises(DialevalError) as e:
        check_common(["t1"], ["g1"], 0, None)
    assert "normalisation" not in str(e.value)


def test_id_lists_escape_control_characters():
    assert id_sample(["a\nb", "c\x00"]) == "a\\nb, c\\x00"


@pytest.fixture
def nfd_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A demo gold with NFC ids and its run with the same ids in NFD (the probe's make_nfd.py, 3 of 8 changed)."""
    from dialeval.cli.demo import demo_dir

    gold = json.loads((demo_dir() / "gold.json").read_text(encoding="utf-8"))
    runs = json.loads((demo_dir() / "run.json").read_text(encoding="utf-8"))
    for d, r, name in zip(gold, runs, ["café", "Zoë", "한국어"], strict=False):
        d["id"], r["id"] = unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)
    (tmp_path / "gold.json").write_text(json.dumps(gold, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")
    return tmp_path / "run.json", tmp_path / "gold.json"


def test_evaluate_warnings_name_missing_ids_and_the_normalisation(nfd_pair, capsys):
    run_file, gold = nfd_pair
    assert run(["evaluate", str(run_file), str(gold)]) == 0
    err = capsys.readouterr().err
    extra = next(line for line in err.splitlines() if "counted as extra" in line)
    missing = next(line for line in err.splitlines() if "missing from the run" in line)
    assert "3 run id(s) differ from gold ids only in Unicode normalisation" in extra
    assert "run 'cafe\\u0301' (NFD) vs gold 'caf\\xe9' (NFC)" in extra
    # the missing gold ids are named, not only counted
    assert missing.endswith(f"3 gold dialogue(s) missing from the run were not scored (use --strict to score "
                            f"them as the worst value): {NFC}, Zo\u00eb, 한국어")


# ------------------------------------------------------------------ 5. topics.txt

@pytest.mark.parametrize("bad, shown, what", [
    ("a\nb", "a\\nb", "a control character ('\\n', U+000A)"),
    ("nul\x00", "nul\\x00", "a control character ('\\x00', U+0000)"),
    ("bel\x07", "bel\\x07", "a control character ('\\x07', U+0007)"),
    ("ls\u2028x", "ls\\u2028x", "a line separator ('\\u2028', U+2028)"),
])
def test_topic_ids_that_are_not_one_line_are_refused(tmp_path, bad, shown, what):
    with pytest.raises(DialevalError) as e:
        write_matrices(tmp_path / "m", ["r1", "r2"], ["d1", bad], {"x": [[0.1, 0.2], [0.3, 0.4]]})
    assert str(e.value) == (f"dialogue {shown}: id holds {what}; topics.txt has one dialogue id a line: allowed "
                            "are ids of printable characters and spaces (no line break, tab or other control "
                            "character)")
    assert not (tmp_path / "m").exists()   # refused before anything is written


def test_topic_ids_with_spaces_and_other_scripts_are_written(tmp_path):
    check_topic_ids(["d 1", "中文", "Zoe\u0308"])
    import numpy as np

    write_matrices(tmp_path / "m", ["r1", "r2"], ["d 1", "中文"], {"x": np.array([[0.5, 0.25], [1.0, 0.0]])})
    assert (tmp_path / "m" / "topics.txt").read_text(encoding="utf-8") == "d 1\n中文\n"


# ------------------------------------------------------------------ 6. WOCHAT declared names

def _wochat(tmp_path: Path, name: str, utterance: str) -> Path:
    p = tmp_path / "d.xml"
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<dialogue id="bot00001"><system_name>{name}</system_name>'
                 f'<user_name>Ann</user_name><turn id="1"><speaker>USER</speaker><utterance>{utterance}</utterance>'
                 '</turn></dialogue>\n', encoding="utf-8")
    return p


@pytest.mark.parametrize("name, utterance, found", [
    ("Zo\u00eb", "hi Zoe\u0308!", "'Zoe\u0308' (written 'Zoe\\u0308': compared after NFC and case folding)"),
    ("Zoe\u0308", "hi Zo\u00eb!", "'Zo\u00eb'"),
    ("Straße", "hello STRASSE", "'STRASSE'"),
    ("STRASSE", "hello straße", "'straße'"),
    ("Ärzte", "hallo ärzte", "'ärzte'"),   # refused before too
])
def test_declared_name_in_another_spelling_is_refused(tmp_path, name, utterance, found):
    p = _wochat(tmp_path, name, utterance)
    with pytest.raises(DialevalError) as e:
        read_wochat(p)
    assert f"the utterance contains the SYSTEM name {found} declared in <system_name>" in str(e.value)


@pytest.mark.parametrize("name, utterance, replaced", [
    ("Zo\u00eb", "hi Zoe\u0308! and ZOË.", "hi SYSTEM_NAME! and SYSTEM_NAME."),
    ("Straße", "STRASSE or strasse or Straßen", "SYSTEM_NAME or SYSTEM_NAME or Straßen"),
])
def test_replace_replaces_every_spelling(tmp_path, name, utterance, replaced):
    c = read_wochat(_wochat(tmp_path, name, utterance), names="replace")
    assert c.dialogues[0].turns[0].utterances == [replaced]


def test_names_stay_whole_words():
    # a name followed by a combining mark is another word; a longer word is not the name
    assert name_pattern("Zoe").search("Zoe\u0308") is None
    assert name_pattern("Zo\u00eb").search("Zoeys and Zoe") is None
    assert name_pattern("IRIS").sub("X", "Iris, irises") == "X, irises"


# ------------------------------------------------------------------ 7. XML positions

def test_xml_error_states_one_position(tmp_path):
    p = tmp_path / "nul.xml"
    p.write_text('<dialogue id="bot00001">\n<system_name>a&#0;b</system_name></dialogue>', encoding="utf-8")
    with pytest.raises(DialevalError) as e:
        read_wochat(p)
    # '<system_name>' is 13 characters, 'a' the 14th: '&#0;' starts at column 15 counted from 1 (expat: 14, from 0)
    assert str(e.value) == f"{p}: not well-formed XML at line 2, column 15: reference to invalid character number"
