"""``correlate --scores``: repeated or ill-typed scores refused; counts, labels, options and p-values that say
what they are (golden values from scipy on vectors joined by hand in the test)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from dialeval import DialevalError
from dialeval.cli.main import run as cli
from dialeval.metaeval import correlate_with_humans, load_scores, read_scores

# 4 systems x 3 dialogues; chatbot2-001's likeable is N/A
LIKEABLE = {"chatbot1": [3, 1, 2], "chatbot2": [2, "N/A", 3], "chatbot3": [3, 3, 2], "chatbot4": [1, 2, 1]}
AUTO = {"chatbot1": [0.9, 0.1, 0.4], "chatbot2": [0.5, 0.7, 0.8], "chatbot3": [1.0, 0.8, 0.9],
        "chatbot4": [0.2, 0.3, 0.0]}


def _dstc9(tmp_path):
    folder = tmp_path / "dstc9"
    folder.mkdir()
    for j, (system, values) in enumerate(LIKEABLE.items()):
        recs = [{"context": f"User: hi {k}\nSystem: hello {k}\n", "likeable": v, "consistent": (j + k) % 2}
                for k, v in enumerate(values)]
        (folder / f"{system}.json").write_text(json.dumps(recs), encoding="utf-8")
    return folder


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return p


def _err(capsys):
    return capsys.readouterr().err.strip().splitlines()


# --- 1: duplicates and turn numbers ---------------------------------------------------------------------------

@pytest.mark.parametrize("records,message", [
    ([{"id": "0", "turns": [{"turn": 1, "score": 2}, {"turn": 3, "score": 2}]},
      {"id": "0", "turns": [{"turn": 1, "score": 0}]}],
     "s.json: dialogue 0: [1]: 'turns' given twice (first at [0])"),
    ([{"id": "0", "turns": [{"turn": 1, "score": 2}, {"turn": 1, "score": 0}]}],
     "s.json: dialogue 0: [0].turns[1]: score of turn 1 given twice (first at [0].turns[0])"),
    ([{"id": "0", "score": 1}, {"id": "0", "score": 2}],
     "s.json: dialogue 0: [1]: dialogue score given twice (first at [0])"),
    ([{"id": "0", "score": 1, "turns": []}], "s.json: dialogue 0: [0]: both 'score' and 'turns'; give one"),
    ([{"id": "0", "turns": [{"turn": -1, "score": 2}]}],
     "s.json: dialogue 0: [0].turns[0].turn: turn -1 is not allowed; allowed are integers >= 0"),
    ([{"id": "0", "turns": [{"turn": 1.5, "score": 2}]}],
     "s.json: dialogue 0: [0].turns[0].turn: turn 1.5 is not allowed; allowed are integers >= 0"),
    ([{"id": "0", "turns": [{"turn": "1", "score": 2}]}],
     "s.json: dialogue 0: [0].turns[0].turn: turn '1' is not allowed; allowed are integers >= 0"),
    ([{"id": "0", "turns": [{"turn": True, "score": 2}]}],
     "s.json: dialogue 0: [0].turns[0].turn: turn True is not allowed; allowed are integers >= 0"),
    ([{"id": True, "score": 1}], "s.json: id: item 0: id True must be a string"),   # was read as the id 'True'
    ([{"id": ["d1"], "score": 1}], "s.json: id: item 0: id ['d1'] must be a string"),
])
def test_json_repeats_and_bad_turns_are_refused(tmp_path, records, message):
    p = _write(tmp_path, "s.json", records)
    with pytest.raises(DialevalError) as e:
        load_scores(p)
    assert str(e.value) == f"{tmp_path}/{message}"


@pytest.mark.parametrize("text,message", [
    ("id,turn,score\n0,1,2\n0,3,2\n0,1,0\n", "dialogue 0: line 4: score of turn 1 given twice (first at line 2)"),
    ("id,turn,score\n0,-1,2\n", "dialogue 0: line 2: turn '-1' is not allowed; allowed are integers >= 0"),
    ("id,turn,score\n0,x,2\n", "dialogue 0: line 2: turn 'x' is not allowed; allowed are integers >= 0"),
    ("id,score\n0,1\n0,2\n", "dialogue 0: line 3: dialogue score given twice (first at line 2)"),
])
def test_csv_repeats_and_bad_turns_are_refused(tmp_path, text, message):
    p = _write(tmp_path, "s.csv", text)
    with pytest.raises(DialevalError) as e:
        load_scores(p)
    assert str(e.value) == f"{p}: {message}"


def test_distinct_turns_still_aggregate(tmp_path):
    p = _write(tmp_path, "s.csv", "id,turn,score\n0,1,2\n0,3,0\n1,0,5\n")
    assert load_scores(p) == {"0": 1.0, "1": 5.0}
    q = _write(tmp_path, "s.json", [{"id": "0", "turns": [{"turn": 1, "score": 2}, {"turn": 3, "score": 0}]},
                                    {"id": "1", "turns": [4, 6]}])  # bare scores: numbered by position
    assert load_scores(q) == {"0": 1.0, "1": 5.0}


def test_duplicate_turns_are_one_line_and_exit_2(tmp_path, capsys):
    corpus = _dstc9(tmp_path)
    p = _write(tmp_path, "dup.json", [{"id": "chatbot1-000", "turns": [{"turn": 1, "score": 2}]},
                                      {"id": "chatbot1-000", "turns": [{"turn": 1, "score": 0}]}])
    assert cli(["correlate", str(corpus), "--scores", str(p), "-B", "20"]) == 2
    assert _err(capsys) == [f"error: {p}: dialogue chatbot1-000: [1]: 'turns' given twice (first at [0])"]


# --- 2: a score is a number -------------------------------------------------------------------------------------

@pytest.mark.parametrize("record,where,shown", [
    ({"id": "a", "score": "0.5"}, "[0].score", "'0.5'"),
    ({"id": "a", "score": True}, "[0].score", "True"),
    ({"id": "a", "turns": [{"turn": 0, "score": "1"}]}, "[0].turns[0].score", "'1'"),
])
def test_json_scores_must_be_numbers(tmp_path, record, where, shown):
    p = _write(tmp_path, "s.json", [record])
    with pytest.raises(DialevalError) as e:
        load_scores(p)
    assert str(e.value).startswith(f"{p}: dialogue a: {where}: score {shown} is not allowed; allowed are finite "
                                   "numbers")


# --- 3, 7: counts at each level, and the label --------------------------------------------------------------------

def test_counts_at_dialogue_and_system_level(tmp_path, capsys):
    corpus = _dstc9(tmp_path)
    lines = ["id,score"] + [f"{s}-{k:03d},{v}" for s, vs in AUTO.items() for k, v in enumerate(vs)]
    scores = _write(tmp_path, "s.csv", "\n".join([*lines, "ghost-1,0.5", "ghost-2,0.1"]) + "\n")
    args = ["correlate", str(corpus), "--scores", str(scores), "--dimension", "likeable", "--method", "pearson",
            "-B", "50"]
    assert cli([*args, "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    rows = {r["level"]: r for r in res["rows"]}
    # by hand: the 11 rated dialogues; at system level each system's mean over its rated dialogues
    pairs = [(AUTO[s][k], v) for s, vs in LIKEABLE.items() for k, v in enumerate(vs) if v != "N/A"]
    x, y = zip(*pairs, strict=True)
    assert rows["dialogue"]["statistic"] == pytest.approx(sps.pearsonr(x, y).statistic)
    assert (rows["dialogue"]["n"], rows["dialogue"]["n_dropped"], rows["dialogue"]["n_dialogues"]) == (11, 1, 11)
    sx = [np.mean([AUTO[s][k] for k, v in enumerate(vs) if v != "N/A"]) for s, vs in LIKEABLE.items()]
    sy = [np.mean([v for v in vs if v != "N/A"]) for vs in LIKEABLE.values()]
    assert rows["system"]["statistic"] == pytest.approx(sps.pearsonr(sx, sy).statistic)
    assert (rows["system"]["n"], rows["system"]["n_dropped"], rows["system"]["n_dialogues"]) == (4, 1, 11)
    s = res["settings"]
    assert (s["dialogues_with_auto_score"], s["scores_not_in_corpus"]) == (12, 2)
    assert "systems at system level" in s["counts"]["n"] and "no rating" in s["counts"]["n_dropped"]
    assert s["auto"] == "scores of s.csv (dialogue scores)"
    assert cli(args) == 0
    cap = capsys.readouterr()
    text = " ".join(cap.out.split())
    assert "n: dialogues (dia) or systems (sys) correlated" in text
    assert "drop: dialogues with an automatic score but no rating of the dimension, left out" in text
    assert "12 of the corpus's dialogues have an automatic score (2 scored id(s) not in the corpus left out)" in text
    assert "2 dialogue id(s) not in the corpus, left out: ghost-1, ghost-2" in cap.err


def test_label_says_what_was_aggregated(tmp_path):
    turns = _write(tmp_path, "t.csv", "id,turn,score\na,0,1\na,1,3\n")
    assert read_scores(turns, aggregate="median").what() == "median over turns"
    direct = _write(tmp_path, "d.json", [{"id": "a", "score": 1}])
    assert read_scores(direct).what() == "dialogue scores"
    mixed = _write(tmp_path, "m.json", [{"id": "a", "score": 1}, {"id": "b", "turns": [{"turn": 0, "score": 2}]}])
    assert read_scores(mixed).what() == "dialogue scores, and the mean over turns for 1 of the 2 dialogues"


# --- 4, 5: options checked once, repeats counted once ------------------------------------------------------------

@pytest.mark.parametrize("option,message", [
    (["-B", "0"], "-B 0 is not allowed; allowed are integers 1 to 10,000,000"),
    (["--ci-level", "1"], "--ci-level 1.0 is not allowed; allowed are numbers in (0, 1), e.g. 0.95"),
    (["--seed", "-1"], "--seed -1 is not allowed; allowed are integers >= 0"),
])
def test_global_options_are_checked_once_by_name(tmp_path, capsys, option, message):
    corpus = _dstc9(tmp_path)
    assert cli(["correlate", str(corpus), "--against", "likeable", *option]) == 2
    (line,) = _err(capsys)
    assert line.startswith(f"error: {message}") and "dimension" not in line


def test_library_checks_settings_before_any_dimension():
    with pytest.raises(DialevalError, match=r"^B = 0 is not allowed; allowed are integers 1 to 10,000,000 "):
        correlate_with_humans({"a": 1.0}, {"x": {"a": 1.0}}, levels=("dialogue",), B=0)


def test_repeated_options_give_each_row_once(tmp_path, capsys):
    corpus = _dstc9(tmp_path)
    assert cli(["correlate", str(corpus), "--against", "likeable", "--dimension", "consistent", "--dimension",
                "consistent", "--method", "pearson", "--method", "spearman", "--method", "pearson", "--level",
                "system", "--level", "system", "--level", "dialogue", "-B", "20", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["level"], r["method"]) for r in rows] == [("system", "pearson"), ("system", "spearman"),
                                                         ("dialogue", "pearson"), ("dialogue", "spearman")]


# --- 6, 8: undefined resamples, clipped intervals, p-values below 1e-16 ----------------------------------------

def test_tiny_samples_clip_and_count_undefined_resamples():
    auto = {"a": 1.0, "b": 2.0, "c": 3.0}
    human = {"q": {"a": 1.0, "b": 3.0, "c": 2.9}}
    t = correlate_with_humans(auto, human, levels=("dialogue",), methods=("pearson",), B=400, seed=0)
    r = t.value("q")
    assert r.statistic == pytest.approx(sps.pearsonr([1, 2, 3], [1, 3, 2.9]).statistic)
    assert -1.0 <= r.ci_low <= r.ci_high <= 1.0
    # a resample of 3 pairs is constant when it draws one pair 3 times: probability 3/27 = 1/9
    assert 0 < r.undefined_resamples < 400
    assert abs(r.undefined_resamples / 400 - 1 / 9) < 4 * np.sqrt(1 / 9 * 8 / 9 / 400)
    assert "undefined_resamples" in t.settings["counts"]


def test_pvalue_below_the_floor_is_flagged(capsys, tmp_path):
    x = np.linspace(0.0, 1.0, 60)
    auto = {str(i): float(v) for i, v in enumerate(x)}
    human = {"q": {str(i): float(v + 1e-3 * np.sin(7 * v)) for i, v in enumerate(x)}}
    assert sps.pearsonr(x, [human["q"][str(i)] for i in range(60)]).pvalue < 1e-16  # the case to test
    t = correlate_with_humans(auto, human, levels=("dialogue",), B=50, seed=0)
    assert all(r.pvalue_below == 1e-16 for r in t.rows) and "1e-16" in t.settings["pvalue"]
    t2 = correlate_with_humans(auto, {"q": {str(i): float(np.cos(9 * v)) for i, v in enumerate(x)}},
                               levels=("dialogue",), methods=("pearson",), B=50, seed=0)
    assert t2.rows[0].pvalue_below is None
