"""Task-level scores computed by hand on the tiny gold (tests/conftest.py), and the scorer's options."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

import dialeval
import dialeval.io.jsonarray as jsonarray
import dialeval.io.runs as runs
import dialeval.io.stc3_gold as stc3_gold
from dialeval import DialevalError

LEVELS = ["2", "1", "0", "-1", "-2"]


def one_hot(level: str, levels=LEVELS) -> dict:
    return {b: (1.0 if b == level else 0.0) for b in levels}


def perfect_run(gold: list[dict]) -> list[dict]:
    """Predictions equal to the annotators' distributions: every measure is 0."""
    run = []
    for d in gold:
        n = len(d["annotations"])
        q = {k: {lv: sum(str(a["quality"][k]) == lv for a in d["annotations"]) / n for lv in LEVELS} for k in "ASE"}
        nug = [{lab: sum(a["nugget"][t] == lab for a in d["annotations"]) / n for lab in {a["nugget"][t]
                for a in d["annotations"]}} for t in range(len(d["turns"]))]
        run.append({"id": d["id"], "quality": q, "nugget": nug})
    return run


def test_perfect_run_scores_zero(tiny_gold):
    r = dialeval.evaluate(perfect_run(tiny_gold), tiny_gold)
    assert all(v == 0.0 for m in r["quality"].values() for v in m.values())  # exactly: rows kept as given
    assert all(v == 0.0 for v in r["nugget"].values())
    assert r["dialogues"] == {"scored": 3, "missing": 0, "extra": 0}


def test_nmd_by_hand(tiny_gold):
    run = perfect_run(tiny_gold)
    run[0]["quality"]["A"] = one_hot("-2")
    # d1's A gold is (0.5, 0.5, 0, 0, 0) over 2..-2: cumulative (.5, 1, 1, 1, 1) vs (0, 0, 0, 0, 1): NMD = 3.5 / 4.
    r = dialeval.evaluate(run, tiny_gold)
    assert r["quality"]["nmd"]["A"] == pytest.approx(0.875 / 3)
    assert r["quality"]["nmd"]["S"] == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("alpha", [0.5, 0.2, 1.0, 0.0])
def test_nugget_alpha_by_hand(tiny_gold, alpha):
    run = perfect_run(tiny_gold)
    # d2: turn 2 (customer) gold CNUG* .5 / CNaN .5, predicted CNUG0: disjoint, JSD 1, RNSS sqrt(1.5 / 2).
    # turn 1 (helpdesk) gold HNUG* 1, predicted HNUG: JSD 1, RNSS 1. Turn 0 is perfect.
    run[1]["nugget"][2] = {"CNUG0": 1.0}
    run[1]["nugget"][1] = {"HNUG": 1.0}
    r = dialeval.evaluate(run, tiny_gold, alpha=alpha)
    jsd_d2 = alpha * (0 + 1) / 2 + (1 - alpha) * 1
    rnss_d2 = alpha * (0 + math.sqrt(0.75)) / 2 + (1 - alpha) * 1
    assert r["nugget"]["jsd"] == pytest.approx(jsd_d2 / 3)
    assert r["nugget"]["rnss"] == pytest.approx(rnss_d2 / 3)
    assert r["settings"]["alpha"] == alpha


def test_dialogue_of_one_sender_takes_that_senders_mean(tiny_gold):
    run = perfect_run(tiny_gold)
    run[2]["nugget"] = [{"CNUG0": 1.0}]  # d3 has one customer turn, gold CNaN: JSD 1
    for alpha in (0.0, 0.5, 1.0):
        assert dialeval.evaluate(run, tiny_gold, alpha=alpha)["nugget"]["jsd"] == pytest.approx(1 / 3)


def test_strict_counts_missing_as_worst(tiny_gold):
    run = perfect_run(tiny_gold)[:1]
    lax = dialeval.evaluate(run, tiny_gold)
    strict = dialeval.evaluate(run, tiny_gold, strict=True)
    assert lax["quality"]["nmd"]["A"] == pytest.approx(0, abs=1e-15)
    assert lax["dialogues"] == {"scored": 1, "missing": 2, "extra": 0}
    assert strict["quality"]["nmd"]["A"] == pytest.approx(2 / 3)
    assert strict["nugget"]["rnss"] == pytest.approx(2 / 3)
    assert strict["dialogues"] == {"scored": 1, "missing": 2, "extra": 0}


def test_a_subtask_absent_from_the_run_is_absent_from_the_output(tiny_gold):
    run = perfect_run(tiny_gold)
    q_only = [{"id": d["id"], "quality": d["quality"]} for d in run]
    n_only = [{"id": d["id"], "nugget": d["nugget"]} for d in run]
    assert set(dialeval.evaluate(q_only, tiny_gold)) == {"quality", "dialogues", "settings"}
    assert set(dialeval.evaluate(n_only, tiny_gold)) == {"nugget", "dialogues", "settings"}


def test_settings_describe_the_run(tiny_gold):
    s = dialeval.evaluate(perfect_run(tiny_gold), tiny_gold, rsnod_variant="2018")["settings"]
    tasks = {"stc3-dq": {"scales": ["A", "S", "E"], "measures": ["nmd", "rsnod"], "average": "dialogue"},
             "stc3-nd": {"scales": ["nugget_customer", "nugget_helpdesk"], "measures": ["jsd", "rnss"],
                         "average": "dialogue"}}
    assert s == {"alpha": 0.5, "strict": False, "rsnod_variant": "2018", "tasks": tasks,
                 "dialeval_version": dialeval.__version__}


def test_unusual_but_valid_runs(tiny_gold):
    base = dialeval.evaluate(perfect_run(tiny_gold), tiny_gold)
    run = perfect_run(tiny_gold)
    for d in run:  # missing bins count as 0; keys in any order; integer values
        d["quality"] = {k: {b: v for b, v in reversed(dist.items()) if v} for k, dist in reversed(d["quality"].items())}
    run[0]["quality"]["A"] = {"1": 1, "2": 1}
    assert dialeval.evaluate(run, tiny_gold) == base
    int_ids = [dict(d, id=str(d["id"])) for d in perfect_run(tiny_gold)]
    gold_int = [dict(d, id=i) for i, d in enumerate(tiny_gold)]
    for i, d in enumerate(int_ids):
        d["id"] = i
    assert dialeval.evaluate(int_ids, gold_int)["quality"] == base["quality"]


def test_batches_and_streaming_give_the_same_result(tiny_gold, tmp_path, monkeypatch):
    gold = [dict(d, id=f"{d['id']}-{k}") for k in range(20) for d in tiny_gold]
    run = perfect_run(gold)
    run[5]["quality"]["E"] = one_hot("0")
    run[17]["nugget"][0] = {"CNaN": 2.0, "CNUG": 1.0}
    want = dialeval.evaluate(run, gold)
    gp, rp = tmp_path / "g.json", tmp_path / "r.json"
    gp.write_text(json.dumps(gold), encoding="utf-8")
    rp.write_text(json.dumps(run, indent=1), encoding="utf-8")
    monkeypatch.setattr(stc3_gold, "BATCH", 7)
    monkeypatch.setattr(runs, "BATCH", 4)
    monkeypatch.setattr(jsonarray, "STREAM_THRESHOLD", 0)
    monkeypatch.setattr(jsonarray, "CHUNK", 97)
    assert dialeval.evaluate(str(rp), str(gp)) == want
    run[40]["id"] = run[3]["id"]  # a duplicate in another batch
    rp.write_text(json.dumps(run), encoding="utf-8")
    with pytest.raises(DialevalError, match=f"dialogue {run[3]['id']}: id: duplicate dialogue id"):
        dialeval.evaluate(str(rp), str(gp))


def test_per_dialogue_csv(tiny_gold, tmp_path):
    run = perfect_run(tiny_gold)[:2]
    run[0]["quality"]["A"] = one_hot("-2")
    s = dialeval.score(run, tiny_gold, strict=True)
    s.to_csv(tmp_path / "pd.csv")
    rows = list(csv.reader((tmp_path / "pd.csv").open(encoding="utf-8")))
    quality = [f"quality.{m}.{k}" for m in ("nmd", "rsnod") for k in "ASE"]
    assert rows[0] == ["id", *quality, "nugget.jsd", "nugget.rnss"]
    assert [r[0] for r in rows[1:]] == ["d1", "d2", "d3"]
    assert float(rows[1][1]) == pytest.approx(0.875)
    # d3 is missing: strict scores it the worst value, 1 but for RSNOD on 5 levels: sqrt(13/12), the supremum of
    # gold (e, e, 0, 1 - 2e, 0) against (e, e, 0, 0, 1 - 2e) (reference.RSNOD_WORST_5 works it by hand)
    rsnod_worst = (13 / 12) ** 0.5
    assert [float(x) for x in rows[3][1:]] == pytest.approx([1.0] * 3 + [rsnod_worst] * 3 + [1.0] * 2, rel=1e-15)


def test_prepared_gold_subset_and_corpus(tiny_gold):
    run = perfect_run(tiny_gold)
    run[0]["quality"]["A"] = one_hot("-2")
    g = dialeval.load_gold(tiny_gold)
    half = g.subset(["d1", "d3"])
    assert half.ids == ["d1", "d3"]
    r = dialeval.evaluate(run, half)
    assert r["quality"]["nmd"]["A"] == pytest.approx(0.875 / 2)
    assert r["dialogues"] == {"scored": 2, "missing": 0, "extra": 1}
    corpus = dialeval.read_corpus(tiny_gold)
    assert dialeval.evaluate(run, corpus) == dialeval.evaluate(run, g)
    with pytest.raises(DialevalError, match="'nope' is not in the gold"):
        g.subset(["nope"])


@pytest.mark.parametrize("kwargs,message", [
    ({"alpha": 1.5}, "alpha 1.5 is not allowed; allowed are numbers in"),
    ({"alpha": "x"}, "alpha 'x' is not allowed"),
    ({"rsnod_variant": "2017"}, "rsnod variant '2017' is not allowed; allowed are paper, 2018"),
])
def test_options_are_checked(tiny_gold, kwargs, message):
    with pytest.raises(DialevalError, match=message):
        dialeval.evaluate(perfect_run(tiny_gold), tiny_gold, **kwargs)


def test_a_gold_built_in_python_needs_unique_string_ids():
    """A reader refuses a repeated id; a Corpus built in Python is checked when it becomes a gold: a repeated id
    merged two dialogues (a run matching one scored perfectly), and int ids never matched a run's."""
    from dialeval import Corpus, Dialogue, Scale, Turn

    sc = {"breakdown": Scale("breakdown", ("O", "T", "X"), "ordinal", level="turn", sender="system")}

    def corpus(*ids):
        return Corpus([Dialogue(i, [Turn("system", ["yo"], labels={"breakdown": ["X", "O"]})]) for i in ids],
                      scales=sc)

    with pytest.raises(DialevalError, match="dialogue a: duplicate dialogue id"):
        dialeval.load_gold(corpus("a", "a", "b"))
    with pytest.raises(DialevalError, match="dialogue 0's id 5 is not allowed; allowed are non-empty strings"):
        dialeval.load_gold(corpus(5, 6))
    assert dialeval.load_gold(corpus("a", "b")).ids == ["a", "b"]


@pytest.mark.parametrize("strict", ["yes", None, 1])
def test_strict_is_a_bool(tiny_gold, strict):
    with pytest.raises(DialevalError, match=r"strict .* is not allowed; allowed are True and False"):
        dialeval.evaluate(perfect_run(tiny_gold), tiny_gold, strict=strict)


def test_reprs_summarise_not_dump(tmp_path):
    """repr of a Corpus, Dialogue and Scores is one short line however large they are (it printed everything)."""
    import dialeval
    from dialeval.corpus import Corpus, Dialogue, Turn

    big = Corpus([Dialogue(f"d{i}", [Turn("customer", ["x" * 1000])] * 50) for i in range(200)], {}, "stc3", "b.json")
    assert repr(big) == "Corpus(stc3 'b.json', 200 dialogues, 10000 turns)"
    assert repr(big.dialogues[0]) == "Dialogue('d0', 50 turns)"
    demo = Path(dialeval.__file__).parent / "data" / "demo"
    r = repr(dialeval.score(demo / "run.json", demo / "gold.json"))
    assert r.startswith("Scores(8 dialogues x 8 columns, 0 missing, 0 extra; means quality.nmd.A=")
    assert r.endswith(", ... (2 more))") and "\n" not in r

