"""One rule on run values (dialeval.io.values): every score computed on an accepted run is finite.

A distribution whose bins are each finite but whose sum overflows (1e308 each) is refused with its
dialogue and key, on the fast and the slow path, by `dialeval evaluate` (exit 2, one line), by the models'
run writer and by the measures' boundary; integers too large for a float or for Python's parser are
refused too (never a traceback).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import dialeval
from dialeval import DialevalError
from dialeval.cli.main import run as cli
from dialeval.io.runs import write_run
from dialeval.measures import get as get_measure

sys.path.insert(0, str(Path(__file__).parents[1] / "service"))
from service_support import make_gold, make_run

GOLD = make_gold(6, seed=0)
RUN = make_run(GOLD, seed=1)


def overflowing(where: str, dialogue: int = 2, slow: bool = False) -> list[dict]:
    run = copy.deepcopy(RUN)
    rec = run[dialogue]
    dist = rec["quality"]["S"] if where == "quality" else rec["nugget"][1]
    for k in dist:
        dist[k] = 1e308
    if slow:  # a missing bin sends the batch through the per-dialogue path
        first = run[0]["quality"]["A"]
        first.pop(next(iter(first)))
    return run


@pytest.mark.parametrize("slow", [False, True])
@pytest.mark.parametrize("where,field", [("quality", "quality.S"), ("nugget", "nugget[1]")])
def test_a_sum_that_overflows_is_refused_with_dialogue_and_key(where, field, slow):
    with pytest.raises(DialevalError) as e:
        dialeval.evaluate(overflowing(where, slow=slow), GOLD)
    assert e.value.dialogue == GOLD[2]["id"] and e.value.field == field
    assert "sum" in e.value.message and "largest" in e.value.message


def test_every_score_of_an_accepted_run_is_finite():
    run = copy.deepcopy(RUN)
    for k in run[1]["quality"]["A"]:
        run[1]["quality"]["A"][k] = 1e307  # the sum (5e307) is finite: accepted, normalised
    s = dialeval.score(run, GOLD)
    assert np.isfinite(s.matrix).all()
    uniform = [{**r, "quality": {**r["quality"], "A": dict.fromkeys(r["quality"]["A"], 1.0)}} if i == 1 else r
               for i, r in enumerate(run)]
    np.testing.assert_allclose(s.matrix[1], dialeval.score(uniform, GOLD).matrix[1], rtol=1e-12)


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_an_integer_too_large_for_a_float_is_refused(value):
    run = copy.deepcopy(RUN)
    run[3]["quality"]["E"]["0"] = value
    with pytest.raises(DialevalError) as e:
        dialeval.evaluate(run, GOLD)
    assert e.value.dialogue == GOLD[3]["id"] and e.value.field == "quality.E.0"
    assert len(str(e.value)) < 300  # the 400 digits are cut


def test_evaluate_cli_refuses_overflow_and_huge_integers_in_one_line(tmp_path, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD))
    ovf = tmp_path / "ovf.json"
    ovf.write_text(json.dumps(overflowing("quality")))
    text = json.dumps(RUN).replace('"id": "d0001"', '"id": "d0001", "x": ' + "7" * 5000, 1)
    huge = tmp_path / "huge.json"
    huge.write_text(text)
    for path, expected in ((ovf, "dialogue d0002: quality.S: the values sum to inf"),
                           (huge, "a number has more than 4300 digits")):
        assert cli(["evaluate", str(path), str(gold)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and expected in err and "Traceback" not in err


def test_the_models_run_writer_refuses_what_evaluate_refuses(tmp_path):
    for bad, field in ((overflowing("quality"), "quality.S"), (overflowing("nugget"), "nugget[1]")):
        with pytest.raises(DialevalError) as e:
            write_run(bad, str(tmp_path / "run.json"))
        assert e.value.dialogue == GOLD[2]["id"] and e.value.field == field
    nan = copy.deepcopy(RUN)
    nan[0]["quality"]["A"]["1"] = float("nan")
    with pytest.raises(DialevalError, match="finite numbers >= 0"):
        write_run(nan, str(tmp_path / "run.json"))
    assert not (tmp_path / "run.json").exists()
    write_run(RUN, str(tmp_path / "run.json"))
    assert json.loads((tmp_path / "run.json").read_text()) == RUN


@pytest.mark.parametrize("name", ["nmd", "rsnod", "jsd"])
def test_the_measures_refuse_an_overflowing_row(name):
    with pytest.raises(DialevalError, match="row 1: the values sum to inf"):
        get_measure(name)(np.array([[1.0, 1.0, 0.0], [1e308, 1e308, 1e308]]), np.ones((2, 3)))


def test_no_dialogue_none_in_messages():
    run = copy.deepcopy(RUN)
    del run[0]["id"]
    del run[0]["quality"]
    with pytest.raises(DialevalError) as e:
        dialeval.evaluate(run, GOLD)
    assert "None" not in str(e.value)


def test_long_and_unprintable_ids_are_quoted_cut_and_escaped():
    run = copy.deepcopy(RUN)
    run[1]["id"] = run[0]["id"]
    run[0]["id"] = "\ud800" + "x" * 10_000
    run[1]["id"] = run[0]["id"]
    with pytest.raises(DialevalError) as e:
        dialeval.evaluate(run, GOLD)
    text = str(e.value)
    assert len(text) < 300 and "\\ud800" in text and "10001 characters" in text
    text.encode("utf-8")  # printable, encodable: no lone surrogate left
