"""DBDC, ConTurE and DSTC9 readers: counts on the real corpora (read in place), located errors on small
hand-made files, and format detection that says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval import DialevalError
from dialeval.io import FORMATS, read_corpus
from dialeval.io.detect import TESTS, detect
from dialeval.io.dstc9 import DIMENSIONS


def test_every_format_has_a_detection_test():
    assert set(TESTS) == set(FORMATS)


# ------------------------------------------------------------------------------------------------- real data

@pytest.mark.parametrize("folder,dialogues,turns,annotated", [
    ("dev/CIC_115", 115, 2409, 1150), ("dev/IRIS_100", 100, 2000, 1000), ("dev/TKTK_100", 100, 2000, 1000),
    ("dev/YI_100", 100, 2100, 1000), ("eval/CIC_50", 50, 1048, 500), ("eval/IRIS_50", 50, 1000, 500),
    ("eval/TKTK_50", 50, 1000, 500), ("eval/YI_50", 50, 1050, 500)])
def test_dbdc3_counts(shared_data, folder, dialogues, turns, annotated):
    c = read_corpus(shared_data("dbdc3", "en", *folder.split("/")))
    assert c.format == "dbdc" and len(c) == dialogues
    assert sum(len(d.turns) for d in c) == turns
    labelled = [t for d in c for t in d.turns if t.labels]
    assert len(labelled) == annotated
    assert all(len(t.labels["breakdown"]) == 30 and t.sender == "system" for t in labelled)


def test_dbdc3_whole_tree_and_meta(shared_data):
    c = read_corpus(shared_data("dbdc3", "en"))
    assert len(c) == 615 and sum(len(d.turns) for d in c) == 12607
    d = next(d for d in c if d.id == "iris_00014")
    assert d.meta["system"] == "IRIS" and d.meta["set"] == "IRIS_100" and d.meta["speaker-id"] == "336347236475"
    assert d.turns[1].labels["breakdown"][:2] == ["X", "O"] and d.turns[1].annotators[:2] == ["43374108", "34557302"]
    assert {d.meta["system"] for d in c} == {"CIC", "IRIS", "TickTock", "YI"}


def test_conture_counts(shared_data):
    c = read_corpus(shared_data("conture", "data.json"))
    assert c.format == "conture" and len(c) == 119
    sys_turns = [t for d in c for t in d.turns if t.sender == "system"]
    assert len(sys_turns) == 1066  # README: 1,066 turns
    share = {lv: sum(t.labels["overall impression"] == [lv] for t in sys_turns) / 1066 for lv in "012"}
    assert {k: round(100 * v, 1) for k, v in share.items()} == {"0": 30.8, "1": 22.2, "2": 47.0}
    # README prints 30.7 / 22.2 / 47.1: 328/1066 = 30.77%, 501/1066 = 46.998% (its rounding differs, counts agree)
    assert sum(d.labels["consistent"].count(None) for d in c) == 1
    assert sum(d.labels["error recovery"].count(None) for d in c) == 10
    assert sorted({len(d.labels["likeable"]) for d in c}) == [2, 3]
    assert c.dialogues[0].turns[0].utterances == ["Who would you vote for?"]


def test_dstc9_counts(shared_data):
    c = read_corpus(shared_data("dstc9"))
    assert c.format == "dstc9" and len(c) == 2200
    systems = {}
    for d in c:
        systems[d.meta["system"]] = systems.get(d.meta["system"], 0) + 1
    assert systems == {f"chatbot{i}": 200 for i in range(1, 12)}
    assert sum(len(d.labels["human (overall)"]) for d in c) == 6473
    assert sum(d.labels["error recovery"].count(None) for d in c) == 182
    assert set(c.scales) == set(DIMENSIONS)
    one = read_corpus(shared_data("dstc9", "chatbot3.json"))
    assert len(one) == 200 and one.dialogues[0].id == "chatbot3-000"
    assert [t.sender for t in one.dialogues[0].turns[:2]] == ["user", "system"]


@pytest.mark.parametrize("parts,fmt", [(("stc3", "train_data_en.json"), "stc3"), (("dbdc3", "en"), "dbdc"),
                                       (("dbdc3", "en", "eval", "TKTK_50", "tt_001.log.json"), "dbdc"),
                                       (("conture", "data.json"), "conture"), (("conture",), "conture"),
                                       (("dstc9",), "dstc9"),
                                       (("dstc9", "chatbot11.json"), "dstc9")])
def test_detect_real_data(shared_data, parts, fmt):
    assert detect(shared_data(*parts)) == fmt


def test_detect_says_why(shared_data):
    p = shared_data("stc3", "submission_example.json")
    with pytest.raises(DialevalError) as e:
        detect(p)
    assert str(e.value) == (f"{p}: cannot tell the format (not stc3: the first record has no 'id' and 'turns' with a "
                            "'sender'; not wochat: does not start with '<' (not XML); not dbdc: not a JSON object; "
                            "not conture: the first record has no 'dialog_id' and 'turns'; not dstc9: the first "
                            "record has no 'context'); give the format (--from on the command line, format= in "
                            "Python), one of stc3, wochat, dbdc, conture, dstc9")
    root = shared_data()
    with pytest.raises(DialevalError, match="it could be any of dbdc, dstc9"):
        detect(root)


# ---------------------------------------------------------------------------------------------- bad input

def _dbdc(tmp_path: Path, turns: list, did: str = "x_00001") -> Path:
    p = tmp_path / f"{did}.log.json"
    p.write_text(json.dumps({"dialogue-id": did, "turns": turns}))
    return p


@pytest.mark.parametrize("turns,message", [
    ([{"turn-index": 1, "speaker": "U", "utterance": "hi"}],
     "dialogue x_00001: turns[0].turn-index: turn-index 1 where 0 was expected"),
    ([{"turn-index": 0, "speaker": "B", "utterance": "hi"}],
     "dialogue x_00001: turns[0].speaker: speaker 'B' is not allowed; allowed are U, S"),
    ([{"turn-index": 0, "speaker": "S", "utterance": "hi", "annotations": [{"annotator-id": "a", "breakdown": "Y"}]}],
     "dialogue x_00001: turns[0].annotations[0].breakdown: breakdown label 'Y' is not allowed; allowed are O, T, X"),
    ([{"turn-index": 0, "speaker": "S", "utterance": "hi", "annotations": [
        {"annotator-id": "a", "breakdown": "O"}, {"annotator-id": "a", "breakdown": "X"}]}],
     "dialogue x_00001: turns[0].annotations[1].annotator-id: annotator 'a' labels this turn twice"),
])
def test_dbdc_errors(tmp_path, turns, message):
    p = _dbdc(tmp_path, turns)
    with pytest.raises(DialevalError) as e:
        read_corpus(p, format="dbdc")
    assert str(e.value).startswith(f"{p}: {message}")


def test_dbdc_duplicate_ids_in_a_folder(tmp_path):
    t = [{"turn-index": 0, "speaker": "U", "utterance": "hi"}]
    _dbdc(tmp_path, t)
    (tmp_path / "sub").mkdir()
    _dbdc(tmp_path / "sub", t)
    with pytest.raises(DialevalError, match="dialogue id met twice"):
        read_corpus(tmp_path)


def test_conture_and_dstc9_errors(tmp_path):
    p = tmp_path / "data.json"
    p.write_text(json.dumps([{"dialog_id": 1, "turns": [{"user": "U", "chatbot": "C", "overall impression": 3}]}]))
    with pytest.raises(DialevalError) as e:
        read_corpus(p, format="conture")
    assert str(e.value) == (f"{p}: dialogue 1: turns[0].overall impression: overall impression 3 is not allowed; "
                            "allowed are 0, 1, 2")
    q = tmp_path / "chatbot1.json"
    q.write_text(json.dumps([{"context": "User: a\nSystem: b\n", "likeable": 4}]))
    with pytest.raises(DialevalError) as e:
        read_corpus(q)
    assert str(e.value) == (f"{q}: dialogue chatbot1-000: [0].likeable: rating 4 is not allowed on 'likeable'; "
                            "allowed are 1, 2, 3 or 'N/A'")
    q.write_text(json.dumps([{"context": "Bot: a\n"}]))
    with pytest.raises(DialevalError, match="line 1 of the context starts with neither 'User:' nor 'System:'"):
        read_corpus(q)


def test_conture_as_published_a_folder_holding_data_json(tmp_path):
    folder = tmp_path / "conture"
    folder.mkdir()
    (folder / "DATALICENSE").write_text("CC BY 4.0")
    data = folder / "data.json"
    data.write_text(json.dumps([{"dialog_id": 3, "turns": [{"user": "U: a", "chatbot": "C: b",
                                                              "overall impression": 1}]}]))
    assert detect(folder) == "conture"
    c = read_corpus(folder)
    assert c.source == str(data) and c.ids() == ["3"]
    (folder / "more.json").write_text("[]")   # two JSON files: the folder no longer stands for one
    with pytest.raises(DialevalError) as e:
        detect(folder)
    assert "not conture: is a folder; ConTurE is one JSON file, or a folder holding no other *.json file" \
        in str(e.value)
    with pytest.raises(DialevalError) as e:
        read_corpus(folder, format="conture")
    assert str(e.value) == (f"{folder}: is a folder, and ConTurE is one JSON file: give data.json, or a folder "
                            "holding it and no other *.json file")
    (folder / "more.json").unlink()
    data.write_text(json.dumps({"dialog_id": 3}))
    with pytest.raises(DialevalError) as e:
        detect(folder)
    assert "not conture: the folder's one JSON file data.json: not a JSON array" in str(e.value)


def test_unknown_format_and_option(tmp_path, shared_data):
    with pytest.raises(DialevalError, match="format 'xml' is not allowed; allowed are stc3, wochat, dbdc"):
        read_corpus(tmp_path, format="xml")
    with pytest.raises(DialevalError, match="option\\(s\\) names do not apply to the dbdc reader"):
        read_corpus(shared_data("dbdc3", "en", "eval", "TKTK_50"), names="keep")


def test_detection_of_deeply_nested_json_is_an_error_not_a_crash(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DialevalError, match="cannot tell the format"):
        detect(p)


def test_dstc9_same_file_name_in_two_folders_is_refused_not_merged(tmp_path):
    """chatbot1.json in a/ and b/ give the same ids (file stem + number): one file's ratings must not vanish."""
    r = [{"context": "User: a\nSystem: b\n", "likeable": 3}]
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "chatbot1.json").write_text(json.dumps(r))
    with pytest.raises(DialevalError) as e:
        read_corpus(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'b' / 'chatbot1.json'}: dialogue chatbot1-000: dialogue id met "
                                   f"twice (also in {tmp_path / 'a' / 'chatbot1.json'})")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e309, 2.5, True, "3", [3]])
def test_ratings_that_are_not_levels_are_located_errors(tmp_path, value):
    q = tmp_path / "chatbot1.json"
    q.write_text(json.dumps([{"context": "User: a\nSystem: b\n", "likeable": value}]))
    with pytest.raises(DialevalError, match=r"chatbot1-000: \[0\].likeable: rating .* is not allowed on 'likeable'"):
        read_corpus(q)
    p = tmp_path / "data.json"
    p.write_text(json.dumps([{"dialog_id": 1, "turns": [{"user": "U", "chatbot": "C", "overall impression": value}]}]))
    with pytest.raises(DialevalError, match=r"dialogue 1: turns\[0\].overall impression: overall impression .* is "
                                            "not allowed; allowed are 0, 1, 2"):
        read_corpus(p, format="conture")


def test_integral_floats_are_their_level(tmp_path):
    """1.0 is level 1 (JSON does not tell 1 from 1.0), on ConTurE's turns as on DSTC9's ratings."""
    p = tmp_path / "data.json"
    p.write_text(json.dumps([{"dialog_id": 1, "turns": [{"user": "U", "chatbot": "C", "overall impression": 1.0}],
                              "dialog_ratings": [{"likeable": 3.0}]}]))
    d = read_corpus(p, format="conture").dialogues[0]
    assert d.turns[1].labels == {"overall impression": ["1"]} and d.labels["likeable"] == ["3"]


@pytest.mark.parametrize("record,message", [
    ({"dialog_id": None}, "[0].dialog_id: dialog id None is not allowed; allowed are a number or a non-blank string"),
    ({"dialog_id": [1]}, "[0].dialog_id: dialog id [1] is not allowed"),
    ({"dialog_id": True}, "[0].dialog_id: dialog id True is not allowed"),
    ({"dialog_id": 1, "dialog_ratings": 0}, "dialogue 1: dialog_ratings: 'dialog_ratings' must be a list, received 0"),
])
def test_conture_ids_and_ratings_of_the_wrong_type(tmp_path, record, message):
    p = tmp_path / "data.json"
    p.write_text(json.dumps([{"turns": [{"user": "U", "chatbot": "C", "overall impression": 1}], **record}]))
    with pytest.raises(DialevalError) as e:
        read_corpus(p, format="conture")
    assert str(e.value).startswith(f"{p}: {message}")


@pytest.mark.parametrize("turn,message", [
    ({"turn-index": True, "speaker": "S", "utterance": "hi"}, "turns[0].turn-index: turn-index True where 0"),
    ({"turn-index": 0, "speaker": "S", "utterance": "hi", "annotations": 0},
     "turns[0].annotations: 'annotations' must be a list, received 0"),
    ({"turn-index": 0, "speaker": "S", "utterance": "hi", "annotations": [{"annotator-id": [1], "breakdown": "O"}]},
     "turns[0].annotations[0].annotator-id: annotator id [1] is not allowed; allowed are a string or a number"),
])
def test_dbdc_values_of_the_wrong_type(tmp_path, turn, message):
    p = _dbdc(tmp_path, [turn])
    with pytest.raises(DialevalError) as e:
        read_corpus(p, format="dbdc")
    assert str(e.value).startswith(f"{p}: dialogue x_00001: {message}")


@pytest.mark.parametrize("annotations", [0, {}, "x", None, []])
def test_stc3_annotations_empty_mean_unlabelled_anything_else_is_an_error(tmp_path, annotations):
    """``[]`` (or the key left out) is an unlabelled dialogue; ``null`` is refused like the other wrong types."""
    p = tmp_path / "d.json"
    p.write_text(json.dumps([{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
                              "annotations": annotations}]))
    if annotations == []:
        assert read_corpus(p, format="stc3").dialogues[0].labels == {}
        return
    with pytest.raises(DialevalError, match="dialogue 1: annotations: 'annotations' must be a list"):
        read_corpus(p, format="stc3")


def test_a_device_or_a_pipe_is_read_to_the_limit_not_without_end(tmp_path):
    """A character device has no size (st_size 0): the read stops one byte past max_bytes."""
    from dialeval.io._files import read_bounded

    with pytest.raises(DialevalError, match="/dev/zero: more than the limit of 1,000 bytes"):
        read_bounded(Path("/dev/zero"), 1000)


@pytest.mark.parametrize("source", [None, 3, {"a": 1}])
def test_read_corpus_of_no_path_says_what_it_received(source):
    with pytest.raises(DialevalError, match=f"corpus: expected a path, received {type(source).__name__}"):
        read_corpus(source)
