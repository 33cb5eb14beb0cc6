"""``correlate``: the default levels leave out a system level with too few systems (saying why), and ``--scores``
turn scores are checked against the corpus's dialogues before they are averaged (expected values by hand or
scipy on vectors built in the test)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from dialeval import DialevalError, DialevalWarning
from dialeval.cli.main import run as cli
from dialeval.io import read_corpus
from dialeval.metaeval import correlate_with_humans, read_scores

# --- defect 1: default levels with fewer than 3 systems ---------------------------------------------------------

LIKEABLE = {"chatbot1": [3, 1, 2], "chatbot2": [2, 3, 1]}
AUTO = {"chatbot1": [0.9, 0.1, 0.4], "chatbot2": [0.5, 0.7, 0.2]}


def _two_systems(tmp_path):
    folder = tmp_path / "dstc9"
    folder.mkdir()
    for system, values in LIKEABLE.items():
        recs = [{"context": f"User: hi {k}\nSystem: hello {k}\n", "likeable": v} for k, v in enumerate(values)]
        (folder / f"{system}.json").write_text(json.dumps(recs), encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\n" + "".join(f"{s}-{k:03d},{v}\n" for s, vs in AUTO.items()
                                             for k, v in enumerate(vs)), encoding="utf-8")
    return folder, scores


def test_default_levels_leave_out_a_system_level_of_two_systems(tmp_path, capsys):
    corpus, scores = _two_systems(tmp_path)
    assert cli(["correlate", str(corpus), "--scores", str(scores), "--dimension", "likeable", "--method", "pearson",
                "-B", "50", "--format", "json"]) == 0  # was: error, system level, 2 usable pair(s)
    cap = capsys.readouterr()
    rows = json.loads(cap.out)["rows"]
    assert [(r["level"], r["dimension"]) for r in rows] == [("dialogue", "likeable")]
    x = [v for vs in AUTO.values() for v in vs]
    y = [v for vs in LIKEABLE.values() for v in vs]
    assert rows[0]["statistic"] == pytest.approx(sps.pearsonr(x, y).statistic) and rows[0]["n"] == 6
    assert cap.err.strip().splitlines() == [
        "warning: system level left out: 2 system(s) have an automatic score (chatbot1, chatbot2); a correlation "
        "needs at least 3; the dialogue level is reported"]


def test_asked_for_system_level_is_an_error_naming_the_dialogue_level(tmp_path, capsys):
    corpus, scores = _two_systems(tmp_path)
    assert cli(["correlate", str(corpus), "--scores", str(scores), "--level", "system", "-B", "50"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --level system: 2 system(s) have an automatic score (chatbot1, chatbot2); a correlation needs at "
        "least 3; --level dialogue can be correlated"]


def test_library_default_and_asked_for_levels():
    systems = {"a": "s1", "b": "s1", "c": "s2", "d": "s2"}
    auto = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 5.0}
    human = {"q": {"a": 1.0, "b": 3.0, "c": 2.0, "d": 4.0}}
    with pytest.warns(DialevalWarning, match=r"^system level left out: 2 system\(s\) have an automatic score "
                                             r"\(s1, s2\); a correlation needs at least 3"):
        t = correlate_with_humans(auto, human, systems=systems, methods=("pearson",), B=50)
    assert [r.level for r in t.rows] == ["dialogue"]
    assert t.rows[0].statistic == pytest.approx(sps.pearsonr([1, 2, 3, 5], [1, 3, 2, 4]).statistic)
    with pytest.raises(DialevalError, match=r"^system level: 2 system\(s\) .* can be correlated "
                                            r"\(levels=\('dialogue',\)\)"):
        correlate_with_humans(auto, human, systems=systems, levels=("dialogue", "system"), B=50)


def test_default_levels_name_the_dimension_rated_in_too_few_systems():
    systems = {i: f"s{i[1]}" for i in ("a1", "b1", "a2", "b2", "a3", "b3")}
    auto = {"a1": 1.0, "b1": 2.0, "a2": 3.0, "b2": 2.5, "a3": 0.5, "b3": 4.0}
    human = {"q": {i: float(k) for k, i in enumerate(auto)},
             "r": {"a1": 1.0, "b1": 2.0, "a2": 3.0, "b2": 1.0}}  # s3 not rated on r: 2 systems
    with pytest.warns(DialevalWarning, match=r"^system level left out: 3 system\(s\) have an automatic score, 2 "
                                             r"of them a rating of 'r'"):
        t = correlate_with_humans(auto, human, systems=systems, methods=("pearson",), B=50)
    assert {r.level for r in t.rows} == {"dialogue"}
    with warnings.catch_warnings():  # three systems on every dimension: the system level, no warning
        warnings.simplefilter("error", DialevalWarning)
        t = correlate_with_humans(auto, {"q": human["q"]}, systems=systems, methods=("pearson",), B=50)
    means = {s: np.mean([auto[i] for i in auto if systems[i] == s]) for s in ("s1", "s2", "s3")}
    hmeans = {s: np.mean([human["q"][i] for i in auto if systems[i] == s]) for s in ("s1", "s2", "s3")}
    row = t.value("q", "pearson", "system")
    assert row.n == 3 and row.statistic == pytest.approx(
        sps.pearsonr([means[s] for s in sorted(means)], [hmeans[s] for s in sorted(means)]).statistic)


# --- defect 2: turn scores checked against the corpus -----------------------------------------------------------

def _conture(shared_data):
    """The corpus and, from the raw JSON, each dialogue's turn count: a raw turn is a user and a system turn."""
    path = shared_data("conture", "data.json")
    raw = json.loads(path.read_text())
    return path, read_corpus(path), {str(r["dialog_id"]): 2 * len(r["turns"]) for r in raw}


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return p


def test_a_turn_the_dialogue_does_not_have_is_an_error(tmp_path, capsys, shared_data):
    path, corpus, n_turns = _conture(shared_data)
    p = _write(tmp_path, "s.json", [{"id": "0", "turns": [{"turn": 1, "score": 1.0}, {"turn": 999, "score": 2.0}]},
                                    {"id": "1", "turns": [{"turn": 1, "score": 1.5}]}])
    n = n_turns["0"]
    message = (f"{p}: dialogue 0: [0].turns[1]: turn 999 is not in the corpus's dialogue, which has {n} turn(s), "
               f"numbered 0 to {n - 1}: the scores are of another corpus, or number turns otherwise")
    assert cli(["correlate", str(path), "--scores", str(p), "-B", "50"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {message}"]
    with pytest.raises(DialevalError) as e:
        read_scores(p, corpus=corpus)
    assert str(e.value) == message
    q = _write(tmp_path, "s.csv", f"id,turn,score\n0,1,1\n0,{n},2\n")  # one past the last turn
    with pytest.raises(DialevalError, match=rf"^{q}: dialogue 0: line 3: turn {n} is not in the corpus's dialogue"):
        read_scores(q, corpus=corpus)


def test_user_turns_are_left_out_with_a_warning(tmp_path, capsys, shared_data):
    path, corpus, _ = _conture(shared_data)
    # turns 1 and 3 are system turns (rated by overall impression), 0 and 2 user turns
    p = _write(tmp_path, "s.json", [{"id": "0", "turns": [{"turn": 0, "score": 9.0}, {"turn": 1, "score": 2.0},
                                                          {"turn": 2, "score": 9.0}, {"turn": 3, "score": 0.0}]},
                                    {"id": "1", "turns": [{"turn": 2, "score": 7.0}]},
                                    {"id": "2", "turns": [{"turn": 1, "score": 1.5}]},
                                    {"id": "3", "turns": [{"turn": 3, "score": 0.5}]}])
    warning = (f"{p}: 3 turn score(s) of turns not sent by 'system' (the sender whose turns the corpus's turn "
               "scale(s) 'overall impression' rate), left out; the first: dialogue 0 turn 0, a user turn "
               "([0].turns[0]); 1 dialogue(s) have no other turn score, left out: 1")
    assert cli(["correlate", str(path), "--scores", str(p), "--dimension", "likeable", "--method", "pearson",
                "-B", "50", "--format", "json"]) == 0
    cap = capsys.readouterr()
    assert cap.err.strip().splitlines() == [f"warning: {warning}"]
    settings = json.loads(cap.out)["settings"]
    assert settings["dialogues_with_auto_score"] == 3 and settings["scores_without_turns"] == 1
    with pytest.warns(DialevalWarning) as w:
        s = read_scores(p, corpus=corpus)
    assert s.scores == {"0": 1.0, "2": 1.5, "3": 0.5}  # was 5.0 for 0 and 7.0 for 1: user turns averaged in
    assert s.without_turns == ("1",)
    assert [str(x.message) for x in w] == [warning]


def test_only_user_turns_is_an_error(tmp_path, capsys, shared_data):
    path, corpus, _ = _conture(shared_data)
    p = _write(tmp_path, "s.csv", "id,turn,score\n0,0,1\n0,2,2\n1,0,1\n2,4,3\n")  # turns numbered one too low
    assert cli(["correlate", str(path), "--scores", str(p), "--dimension", "likeable", "-B", "50"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {p}: none of the 4 turn score(s) of the corpus's dialogues is of a 'system' turn")
    with pytest.raises(DialevalError, match=rf"^{p}: none of the 4 turn score\(s\) of the corpus's dialogues is of "
                                            r"a 'system' turn.* the first: dialogue 0 turn 0, a user turn \(line 2\)"):
        read_scores(p, corpus=corpus)


def test_an_empty_turns_record_is_warned_and_counted(tmp_path, capsys, shared_data):
    path, _, _ = _conture(shared_data)
    p = _write(tmp_path, "s.json", [{"id": str(i), "turns": [{"turn": 1, "score": float(i % 3)},
                                                             {"turn": 3, "score": float(i % 5)}]}
                                    for i in range(10)] + [{"id": "10", "turns": []}])
    with pytest.warns(DialevalWarning, match=r"1 dialogue\(s\) with no turn score \(\"turns\": \[\]\), left out: 10$"):
        s = read_scores(p)  # without a corpus too
    assert s.without_turns == ("10",) and sorted(s.scores, key=int) == [str(i) for i in range(10)]
    assert s.scores["7"] == pytest.approx((1 + 2) / 2)
    args = ["correlate", str(path), "--scores", str(p), "--method", "pearson", "--dimension", "likeable",
            "-B", "50"]
    assert cli([*args, "--format", "json"]) == 0
    cap = capsys.readouterr()
    settings = json.loads(cap.out)["settings"]
    assert (settings["dialogues_with_auto_score"], settings["scores_without_turns"]) == (10, 1)
    assert cap.err.strip().splitlines() == [f"warning: {p}: 1 dialogue(s) with no turn score (\"turns\": []), "
                                            "left out: 10"]
    assert cli(args) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "10 of the corpus's dialogues have an automatic score (1 scored id(s) with no turn score left out)" in text


def test_valid_turn_scores_read_as_before_without_warning(tmp_path, shared_data):
    _, corpus, _ = _conture(shared_data)
    p = _write(tmp_path, "s.json", [{"id": "0", "turns": [{"turn": 1, "score": 2.0}, {"turn": 5, "score": 0.5}]},
                                    {"id": "ghost", "turns": [{"turn": 999, "score": 1.0}]}])  # not in the corpus
    with warnings.catch_warnings():
        warnings.simplefilter("error", DialevalWarning)
        s = read_scores(p, corpus=corpus)
    assert s.scores == {"0": 1.25, "ghost": 1.0} and s.without_turns == ()
