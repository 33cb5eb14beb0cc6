"""Values of the wrong type a probe found read in silence, one test (or a few) each: ``"annotations": null`` in
STC-3 and DBDC (the dialogue or turn dropped from the gold), ``"annotations": []`` beside annotated dialogues (left
out of the gold without a word), ``null`` ratings in ConTurE and DSTC9 (read as ``"N/A"``, which none of the real
files does), rows of a scores CSV longer or shorter than its header (values dropped), and ``null`` subtasks in a
run (the next dialogue blamed). Expected values come from the tiny inputs written here, by hand."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from dialeval import DialevalError, DialevalWarning
from dialeval.distributions import gold_distributions
from dialeval.io.conture import read_conture
from dialeval.io.dbdc import read_dbdc
from dialeval.io.dstc9 import read_dstc9
from dialeval.io.runs import parse_run
from dialeval.io.stc3 import read_stc3
from dialeval.io.stc3_gold import build_gold
from dialeval.io.text import csv_rows

STC3_ALLOWED = ("allowed is a list with one annotation object per annotator ([], or no 'annotations' key, for an "
                "unlabelled dialogue)")


def write_json(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def error_of(fn, *args, **kw) -> str:
    with pytest.raises(DialevalError) as e:
        fn(*args, **kw)
    return str(e.value)


def no_warning(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kw)


# ------------------------------------------------------------------------------ 1. STC-3 "annotations": null

@pytest.mark.parametrize("where", [0, 2])
def test_stc3_null_annotations_are_refused_by_the_reader_and_the_gold_alike(tmp_path, tiny_gold, where):
    tiny_gold[where]["annotations"] = None
    p = write_json(tmp_path / "g.json", tiny_gold)
    want = (f"{p}: dialogue d{where + 1}: annotations: 'annotations' must be a list, received None; "
            + STC3_ALLOWED)
    assert error_of(read_stc3, p) == want
    assert error_of(build_gold, p) == want      # `evaluate`'s gold: the same words, no longer "no annotations"


@pytest.mark.parametrize("value,shown", [({}, "{}"), ("x", "'x'"), (0, "0"), (False, "False")])
def test_stc3_annotations_of_other_types_say_what_was_received(tmp_path, tiny_gold, value, shown):
    tiny_gold[1]["annotations"] = value
    p = write_json(tmp_path / "g.json", tiny_gold)
    assert error_of(read_stc3, p) == (f"{p}: dialogue d2: annotations: 'annotations' must be a list, received "
                                      f"{shown}; " + STC3_ALLOWED)


def test_stc3_annotations_left_out_are_an_unlabelled_file_without_a_warning(tmp_path, tiny_gold):
    for d in tiny_gold:
        del d["annotations"]
    c = no_warning(read_stc3, write_json(tmp_path / "test.json", tiny_gold))
    assert not c.is_annotated() and c.ids() == ["d1", "d2", "d3"]


def test_stc3_all_empty_annotations_are_an_unlabelled_file_without_a_warning(tmp_path, tiny_gold):
    for d in tiny_gold:
        d["annotations"] = []
    assert not no_warning(read_stc3, write_json(tmp_path / "g.json", tiny_gold)).is_annotated()


def test_stc3_empty_annotations_beside_annotated_dialogues_are_one_warning(tmp_path, tiny_gold):
    """d1 annotated (A: 1 and 2), d2..d8 with [], d9 without the key: one warning naming the 7, the first 5 shown;
    the gold of A is d1's alone: one label of each of levels 2 and 1, so [0.5, 0.5, 0, 0, 0]."""
    recs = [tiny_gold[0]] + [dict(copy.deepcopy(tiny_gold[2]), id=f"d{i}", annotations=[]) for i in range(2, 9)]
    recs.append({k: v for k, v in dict(tiny_gold[2], id="d9").items() if k != "annotations"})
    p = write_json(tmp_path / "g.json", recs)
    with pytest.warns(DialevalWarning) as w:
        c = read_stc3(p)
    assert len(w) == 1
    assert str(w[0].message) == (f"{p}: 7 dialogue(s) have an empty 'annotations' list ([]) while other dialogues "
                                 "are annotated: read as unlabelled, they are left out of the gold: d2, d3, d4, d5, "
                                 "d6 (+2 more)")
    a = gold_distributions(c)["A"]
    assert a.item_keys() == [("d1", None)]
    np.testing.assert_array_equal(a.probs, [[0.5, 0.5, 0.0, 0.0, 0.0]])


def test_stc3_a_key_left_out_beside_annotated_dialogues_is_not_warned(tmp_path, tiny_gold):
    """The policy: a missing key is an unlabelled dialogue (STC-3's test inputs), not a mistake."""
    del tiny_gold[1]["annotations"]
    c = no_warning(read_stc3, write_json(tmp_path / "g.json", tiny_gold))
    assert [d.id for d in c if d.labels] == ["d1", "d3"]


# ------------------------------------------------------------------------------- 2. DBDC "annotations": null

def _dbdc(system_annotations: object, *, drop_key: bool = False) -> dict:
    turn = {"turn-index": 1, "speaker": "S", "utterance": "hello", "annotations": system_annotations}
    if drop_key:
        del turn["annotations"]
    return {"dialogue-id": "d1", "turns": [
        {"turn-index": 0, "speaker": "U", "utterance": "hi", "annotations": []}, turn,
        {"turn-index": 2, "speaker": "U", "utterance": "and?", "annotations": []},
        {"turn-index": 3, "speaker": "S", "utterance": "bye", "annotations": [
            {"annotator-id": "a", "breakdown": "O"}, {"annotator-id": "b", "breakdown": "X"}]}]}


@pytest.mark.parametrize("speaker_turn", [1, 0])
def test_dbdc_null_annotations_are_refused(tmp_path, speaker_turn):
    log = _dbdc([{"annotator-id": "a", "breakdown": "T"}])
    log["turns"][speaker_turn]["annotations"] = None
    p = write_json(tmp_path / "d1.log.json", log)
    assert error_of(read_dbdc, p) == (
        f"{p}: dialogue d1: turns[{speaker_turn}].annotations: 'annotations' must be a list, received None; allowed "
        "is a list of annotation objects ([], or no 'annotations' key, for a turn nobody labelled)")


def test_dbdc_annotations_left_out_or_empty_are_a_turn_nobody_labelled(tmp_path):
    """The gold holds the one labelled system turn (turn 3: O and X, so [0.5, 0, 0.5] over O, T, X)."""
    for name, log in (("key", _dbdc(None, drop_key=True)), ("empty", _dbdc([]))):
        c = no_warning(read_dbdc, write_json(tmp_path / name / "d1.log.json", log))
        g = gold_distributions(c)["breakdown"]
        assert g.item_keys() == [("d1", 3)]
        np.testing.assert_array_equal(g.probs, [[0.5, 0.0, 0.5]])


# ------------------------------------------------------------------------- 3. ConTurE and DSTC9 null ratings

def _conture(**rating: object) -> list:
    return [{"dialog_id": 7, "turns": [{"user": "User: hi", "chatbot": "Chatbot: hey", "overall impression": 2}],
             "dialog_ratings": [{"likeable": 3, "consistent": 1}, rating]}]


def test_conture_null_rating_is_refused(tmp_path):
    p = write_json(tmp_path / "data.json", _conture(likeable=None, consistent=0))
    assert error_of(read_conture, p) == (f"{p}: dialogue 7: dialog_ratings[1].likeable: rating None is not allowed "
                                         "on 'likeable'; allowed are 1, 2, 3 or 'N/A'")


def test_conture_na_and_a_dimension_left_out_are_missing(tmp_path):
    c = no_warning(read_conture, write_json(tmp_path / "data.json", _conture(likeable="N/A")))
    d = c.dialogues[0]
    assert d.labels["likeable"] == ["3", None] and d.labels["consistent"] == ["1", None]


def test_conture_null_dialog_ratings_is_refused(tmp_path):
    recs = _conture()
    recs[0]["dialog_ratings"] = None
    p = write_json(tmp_path / "data.json", recs)
    assert error_of(read_conture, p) == (
        f"{p}: dialogue 7: dialog_ratings: 'dialog_ratings' must be a list, received None; allowed is a list of "
        "rating objects, one per rater ([], or no 'dialog_ratings' key, for a dialog nobody rated)")
    del recs[0]["dialog_ratings"]
    assert no_warning(read_conture, write_json(tmp_path / "data.json", recs)).dialogues[0].labels == {}


def test_dstc9_null_rating_is_refused(tmp_path):
    r = {"context": "User: hi\nSystem: hello\n", "human (overall)": 4}
    p = write_json(tmp_path / "chatbot1.json", [r, dict(r, **{"human (overall)": None})])
    assert error_of(read_dstc9, p) == (f"{p}: dialogue chatbot1-000: [1].human (overall): rating None is not allowed "
                                       "on 'human (overall)'; allowed are 1, 2, 3, 4, 5 or 'N/A'")
    p = write_json(tmp_path / "chatbot1.json", [r, dict(r, **{"human (overall)": "N/A"}), {"context": r["context"]}])
    assert read_dstc9(p).dialogues[0].labels["human (overall)"] == ["4", None, None]


# --------------------------------------------------------------------------------- 4. CSV rows and header

@pytest.mark.parametrize("data,message", [
    (b"id,score\n0,0.5,7\n1,0.7,8\n", "s.csv: line 2 has 3 fields; the header has 2 (id, score)"),
    (b"id,score\n0,0.5\n1\n", "s.csv: line 3 has 1 field; the header has 2 (id, score)"),
    (b"id;turn;score\n0;1;0,5\n\n\n0;3;0,5;\n", "s.csv: line 5 has 4 fields; the header has 3 (id, turn, score)"),
    (b"id,score\n0,0.5,\n", "s.csv: line 2 has 3 fields; the header has 2 (id, score)"),
])
def test_csv_rows_of_another_length_than_the_header_are_refused(data, message):
    assert error_of(csv_rows, data, "s.csv") == message


def test_csv_rows_blank_lines_and_quoted_delimiters_are_read():
    header, rows, delim = csv_rows(b'id,score,note\n\n"a,b",0.5,"x, y"\n\nc,1,\n', "s.csv")
    assert (header, delim) == (["id", "score", "note"], ",")
    assert rows == [(3, {"id": "a,b", "score": "0.5", "note": "x, y"}), (5, {"id": "c", "score": "1", "note": ""})]
    assert csv_rows(b"\nid,score\n0,1\n") == ([], [], ",")   # no header: the caller says so (no columns)


# ------------------------------------------------------------------------------ 5. a run's null subtasks

def _run(tiny_gold: list) -> list[dict]:
    """A perfect-shaped run of TINY_GOLD: every quality bin and every nugget type of the turn's sender at 1."""
    from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_LEVELS

    out = []
    for d in tiny_gold:
        out.append({"id": d["id"], "quality": {k: dict.fromkeys(QUALITY_LEVELS, 1) for k in "ASE"},
                    "nugget": [dict.fromkeys(NUGGET_TYPES[t["sender"]], 1) for t in d["turns"]]})
    return out


@pytest.mark.parametrize("key,where,allowed", [
    ("nugget", 0, "a list with one distribution per turn"),
    ("quality", 0, "an object with keys A, S, E"),
    ("quality", 2, "an object with keys A, S, E"),
])
def test_a_null_subtask_in_a_run_is_refused_where_it_is(tiny_gold, key, where, allowed):
    run = _run(tiny_gold)
    run[where][key] = None
    assert error_of(parse_run, run, build_gold(tiny_gold)) == (
        f"dialogue d{where + 1}: {key}: {key} None is not allowed; allowed is {allowed}, or no '{key}' key in any "
        "dialogue of a run without that subtask")


def test_a_null_subtask_the_run_does_not_give_is_refused_too(tiny_gold):
    """A quality-only run whose third dialogue says "nugget": null was read by the fast pass as one without it."""
    run = _run(tiny_gold)
    for r in run:
        del r["nugget"]
    arrays = parse_run(copy.deepcopy(run), build_gold(tiny_gold))
    np.testing.assert_array_equal(arrays.quality["A"], np.full((3, 5), 0.2))   # five bins at 1: uniform
    run[2]["nugget"] = None
    assert error_of(parse_run, run, build_gold(tiny_gold)).startswith("dialogue d3: nugget: nugget None is not "
                                                                       "allowed")
