"""dialeval summarize on a hand-made folder of predictions; every expected number worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.summarize import summarize


def _q(s: dict[str, float]) -> dict:
    """A quality prediction whose A and E are all on 0 and whose S is ``s`` (missing levels 0)."""
    zero = {"2": 0.0, "1": 0.0, "0": 1.0, "-1": 0.0, "-2": 0.0}
    return {"A": zero, "S": {lv: s.get(lv, 0.0) for lv in ("2", "1", "0", "-1", "-2")}, "E": zero}


C = ("CNUG0", "CNUG", "CNUG*", "CNaN")
H = ("HNUG", "HNUG*", "HNaN")
RECORDS = [
    # E[S] = -0.3 - 2*0.5 = -1.3; P(S <= -1) = 0.8
    {"id": "x1", "meta": {"system": "a", "day": "2026-01-01"}, "quality": _q({"0": 0.2, "-1": 0.3, "-2": 0.5}),
     "nugget": [dict(zip(C, (0.5, 0.5, 0, 0), strict=True)), dict(zip(H, (1, 0, 0), strict=True))]},
    # E[S] = 2*0.5 + 0.5 = 1.5; P(S <= -1) = 0
    {"id": "x2", "meta": {"system": "a", "day": "2026-01-02"}, "quality": _q({"2": 0.5, "1": 0.5}),
     "nugget": [dict(zip(C, (0, 0, 0, 1), strict=True))]},
    # E[S] = 0; P(S <= -1) = 0.5, not above the threshold 0.5
    {"id": "y2", "meta": {"system": "b"}, "quality": _q({"1": 0.5, "-1": 0.5})},
    # the same E[S] = 0 as y2: ties are listed by id
    {"id": "y1", "meta": {"system": "b", "day": "2026-01-01"}, "quality": _q({"0": 1.0})},
]


@pytest.fixture
def pred(tmp_path: Path) -> Path:
    folder = tmp_path / "pred"
    folder.mkdir()
    (folder / "one.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:2]))
    (folder / "two.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS[2:]))
    return folder


def test_by_system(pred):
    s = summarize(pred, by="system", worst=3)
    assert s["dialogues"] == 4 and [g["group"] for g in s["groups"]] == ["a", "b"]
    a, b = s["groups"]
    assert a["dialogues"] == 2 and b["dialogues"] == 2
    # a: mean S = ((0,0,.2,.3,.5) + (.5,.5,0,0,0)) / 2 over 2, 1, 0, -1, -2
    assert a["quality"]["S"]["mean"] == {"2": 0.25, "1": 0.25, "0": 0.1, "-1": 0.15, "-2": 0.25}
    assert a["quality"]["S"]["expected"] == pytest.approx((-1.3 + 1.5) / 2)
    assert a["quality"]["A"]["expected"] == 0 and a["quality"]["E"]["mean"]["0"] == 1
    assert a["low_satisfaction"] == 0.5 and b["low_satisfaction"] == 0.0
    assert b["quality"]["S"]["mean"] == {"2": 0.0, "1": 0.25, "0": 0.5, "-1": 0.25, "-2": 0.0}
    # nuggets of a: customer turns (.5,.5,0,0) and (0,0,0,1); one helpdesk turn (1,0,0); b has none
    assert a["nugget"]["customer"] == {"CNUG0": 0.25, "CNUG": 0.25, "CNUG*": 0.0, "CNaN": 0.5}
    assert a["nugget"]["helpdesk"] == {"HNUG": 1.0, "HNUG*": 0.0, "HNaN": 0.0}
    assert "nugget" not in b
    assert [(w["id"], w["group"], w["expected_S"], w["file"]) for w in s["worst"]] == [
        ("x1", "a", -1.3, "one.jsonl"), ("y1", "b", 0.0, "two.jsonl"), ("y2", "b", 0.0, "two.jsonl")]
    assert s["series"] == {
        "a": [{"day": "2026-01-01", "dialogues": 1, "expected_S": -1.3, "low_satisfaction": 1.0},
              {"day": "2026-01-02", "dialogues": 1, "expected_S": 1.5, "low_satisfaction": 0.0}],
        "b": [{"day": "2026-01-01", "dialogues": 1, "expected_S": 0.0, "low_satisfaction": 0.0}]}
    from dialeval import __version__  # the report says what it read and which version made it
    assert s["settings"] == {"predictions": str(pred), "model": None, "dialeval_version": __version__}


def test_by_day_field_and_threshold(pred):
    s = summarize(pred, by="day", threshold=0.4, worst=0)
    assert [(g["group"], g["dialogues"]) for g in s["groups"]] == [("(none)", 1), ("2026-01-01", 2), ("2026-01-02", 1)]
    assert s["groups"][0]["low_satisfaction"] == 1.0  # y2: 0.5 > 0.4
    day1 = s["groups"][1]  # x1 and y1: E[S] -1.3 and 0
    assert day1["quality"]["S"]["expected"] == pytest.approx(-0.65) and day1["low_satisfaction"] == 0.5
    assert s["worst"] == []
    with pytest.raises(DialevalError) as e:   # a field no dialogue has (a typo?): named, with those they have
        summarize(pred, by="chanel")
    assert str(e.value) == (f"{pred}: --by 'chanel': no dialogue has this metadata field; allowed are system, day "
                            "or a field the dialogues have: day, system")


def test_values_follow_the_readers_rule(tmp_path):
    """A negative or non-numeric value is an error naming the dialogue and field; values are normalised."""
    folder = tmp_path / "pred"
    folder.mkdir()
    for value, why in ((-3, "value -3.0 is not allowed"), ("x", "value 'x' is not a number")):
        bad = {**RECORDS[2], "quality": {**RECORDS[2]["quality"], "E": {**RECORDS[2]["quality"]["E"], "-1": value}}}
        (folder / "one.jsonl").write_text(json.dumps(bad) + "\n")
        with pytest.raises(DialevalError) as e:
            summarize(folder)
        assert str(e.value).startswith(f"{folder / 'one.jsonl'}: line 1: dialogue y2: quality.E.-1: {why}")
    quality = RECORDS[2]["quality"]
    scaled = {**RECORDS[2], "quality": {k: {lv: 10 * p for lv, p in d.items()} for k, d in quality.items()}}
    (folder / "one.jsonl").write_text(json.dumps(scaled) + "\n")
    assert summarize(folder)["groups"][0]["quality"]["S"]["mean"]["1"] == 0.5


def test_cli_table_json_and_plot(pred, tmp_path, capsys):
    assert run(["summarize", str(pred), "--worst", "2", "--plot", str(tmp_path / "p.png")]) == 0
    text = capsys.readouterr().out
    assert "x1" in text and "y1" in text and "y2" not in text and "50.0%" in text
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run(["summarize", str(pred), "--by", "day", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["by"] == "day"
    assert run(["summarize", str(pred), "--threshold", "1.5"]) == 2
    assert "--threshold 1.5 is not allowed" in capsys.readouterr().err
    assert run(["summarize", str(tmp_path / "nothing")]) == 2


def test_a_run_file_is_named_as_such(tmp_path, capsys):
    """A JSON array (the run dialeval predict writes for a file) is not JSON Lines: the error says what it is."""
    for indent in (2, None):   # one record a line, or the whole array on one line
        (tmp_path / "run.json").write_text(json.dumps(RECORDS, indent=indent))
        assert run(["summarize", str(tmp_path / "run.json")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "a JSON array (a run file?); summarize reads JSON Lines" in err


def test_a_folder_of_dialogues_is_not_taken_for_predictions(tmp_path, capsys):
    """The input logs of dialeval predict (dialogues with turns) used to give an empty '(none)' table and exit 0."""
    logs = tmp_path / "logs"
    logs.mkdir()
    dialogue = {"id": "d1", "system": "bot-a", "turns": [{"sender": "customer", "utterances": ["hi"]}]}
    (logs / "day.jsonl").write_text(json.dumps(dialogue) + "\n")
    assert run(["summarize", str(logs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dialogue d1" in err and "a dialogue (its turns), not a prediction" in err
