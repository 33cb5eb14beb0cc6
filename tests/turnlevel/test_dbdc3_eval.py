"""DBDC3's eval.py figures from `dialeval evaluate` (issue 16 item 8).

The reference below is written independently of `dialeval.breakdown`: plain loops over turns that follow the
rules of DBDC3's evaluation script as its README/paper state them (gold label by majority with ties to O then
T, and a threshold; lenient T+X label; precision/recall/F as 0 without a true positive; JSD/MSE averaged over
turns on the bins (O,T,X), (O,T+X), (O+T,X)).
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from dialeval.breakdown import dbdc3_scores
from dialeval.cli.main import run as cli


def _label(p, t):
    o, tt, x = p
    if o >= tt and o >= x and o >= t:
        return "O"
    if tt >= o and tt >= x and tt >= t:
        return "T"
    if x >= tt and x >= o and x >= t:
        return "X"
    return "O"


def _lenient(p, t):
    o, tx = p[0], p[1] + p[2]
    if o >= tx and o >= t:
        return False
    return tx >= o and tx >= t


def _jsd(p, q):
    def kl(a, b):
        return sum(ai * math.log2(ai / bi) for ai, bi in zip(a, b, strict=True) if ai > 0)
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    return (kl(p, m) + kl(q, m)) / 2


def _mse(p, q):
    return sum((a - b) ** 2 for a, b in zip(p, q, strict=True)) / len(p)


def reference(gold, pred, labels, t):
    n = len(gold)
    correct = 0
    tp_x = pred_x = gold_x = tp_l = pred_l = gold_l = 0
    sums = {k: 0.0 for k in ("jsd3", "jsd_o", "jsd_x", "mse3", "mse_o", "mse_x")}
    for g, p, lab in zip(gold, pred, labels, strict=True):
        gl = _label(g, t)
        pl = lab if lab is not None else _label(p, 0.0)
        correct += pl == gl
        tp_x += pl == "X" and gl == "X"
        pred_x += pl == "X"
        gold_x += gl == "X"
        bd = _lenient(g, t)
        tp_l += pl in "TX" and bd
        pred_l += pl in "TX"
        gold_l += bd
        g2a, p2a = [g[0], g[1] + g[2]], [p[0], p[1] + p[2]]
        g2b, p2b = [g[0] + g[1], g[2]], [p[0] + p[1], p[2]]
        sums["jsd3"] += _jsd(g, p)
        sums["jsd_o"] += _jsd(g2a, p2a)
        sums["jsd_x"] += _jsd(g2b, p2b)
        sums["mse3"] += _mse(g, p)
        sums["mse_o"] += _mse(g2a, p2a)
        sums["mse_x"] += _mse(g2b, p2b)

    def prf(tp, pr, go):
        prec = tp / pr if tp and pr else 0.0
        rec = tp / go if tp and go else 0.0
        return prec, rec, (2 * prec * rec / (prec + rec) if prec and rec else 0.0)

    return {"accuracy": correct / n, "X": prf(tp_x, pred_x, gold_x), "T+X": prf(tp_l, pred_l, gold_l),
            "jsd": [sums[k] / n for k in ("jsd3", "jsd_o", "jsd_x")],
            "mse": [sums[k] / n for k in ("mse3", "mse_o", "mse_x")]}


def _random_case(seed):
    rng = random.Random(seed)
    gold, pred, labels = [], [], []
    for _ in range(rng.randint(1, 40)):
        counts = [rng.randint(0, 5) for _ in range(3)]
        counts[rng.randrange(3)] += 1
        gold.append([c / sum(counts) for c in counts])
        w = [rng.choice([0, 1, 2, 3]) for _ in range(3)]
        w[rng.randrange(3)] += 1
        pred.append([c / sum(w) for c in w])
        labels.append(rng.choice([None, None, "O", "T", "X"]))
    return gold, pred, labels


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("t", [0.0, 0.5])
def test_against_the_reference(seed, t):
    gold, pred, labels = _random_case(seed)
    hard = np.array([-1 if x is None else "OTX".index(x) for x in labels])
    got = dbdc3_scores(np.array(gold), np.array(pred), hard, threshold=t)
    ref = reference(gold, pred, labels, t)
    assert got["accuracy"] == pytest.approx(ref["accuracy"], abs=1e-15)
    for key in ("X", "T+X"):
        assert (got[key]["precision"], got[key]["recall"], got[key]["f_measure"]) == pytest.approx(ref[key],
                                                                                                   abs=1e-15)
    assert list(got["jsd"].values()) == pytest.approx(ref["jsd"], abs=1e-12)
    assert list(got["mse"].values()) == pytest.approx(ref["mse"], abs=1e-15)


def test_hand_made_cases():
    # ties: O wins an O/T/X tie, T wins a T/X tie; the threshold sends a weak majority to O
    g = np.array([[1 / 3, 1 / 3, 1 / 3], [0, .5, .5], [.2, .3, .5], [.5, .25, .25]])
    p = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, .5, .5]])
    s = dbdc3_scores(g, p)
    assert s["labels"] == {"O": 2, "T": 1, "X": 1}
    assert s["accuracy"] == 0.75 and s["correct"] == 3  # the last: predicted T (T/X tie), gold O
    assert s["X"] == {"precision": 1.0, "recall": 1.0, "f_measure": 1.0, "true_positives": 1, "predicted": 1,
                      "gold": 1}
    # lenient gold: breakdown where T+X >= O strictly beyond a tie: rows 0 (2/3), 1, 2; row 3 (0.5 = 0.5) is not
    assert s["T+X"]["gold"] == 3 and s["T+X"]["predicted"] == 3 and s["T+X"]["true_positives"] == 2
    assert dbdc3_scores(g, p, threshold=0.5)["labels"] == {"O": 2, "T": 1, "X": 1}  # .5 reaches a 0.5 threshold
    assert dbdc3_scores(g, p, threshold=0.6)["labels"] == {"O": 4, "T": 0, "X": 0}  # nothing reaches 0.6: O
    # no true positive: precision, recall and F are 0 (DBDC3's convention), never undefined
    z = dbdc3_scores(np.array([[0, 0, 1.0]]), np.array([[1.0, 0, 0]]))
    assert z["X"]["precision"] == 0.0 and z["X"]["recall"] == 0.0 and z["X"]["f_measure"] == 0.0
    assert z["jsd"]["O,T,X"] == pytest.approx(1.0) and z["mse"]["O,T+X"] == pytest.approx(1.0)


def test_cli_table_and_json(tmp_path, capsys):
    log = {"dialogue-id": "d1", "speaker-id": "", "group-id": "", "turns": [
        {"speaker": "U", "turn-index": 0, "utterance": "hi", "annotations": []},
        {"speaker": "S", "turn-index": 1, "utterance": "a", "annotations": [{"breakdown": b} for b in "OOX"]},
        {"speaker": "U", "turn-index": 2, "utterance": "b", "annotations": []},
        {"speaker": "S", "turn-index": 3, "utterance": "c", "annotations": [{"breakdown": b} for b in "XXT"]}]}
    (tmp_path / "d1.log.json").write_text(json.dumps(log), encoding="utf-8")
    labels = {"dialogue-id": "d1", "turns": [
        {"turn-index": 1, "labels": [{"breakdown": "X", "prob-O": .5, "prob-T": .1, "prob-X": .4}]},
        {"turn-index": 3, "labels": [{"breakdown": "X", "prob-O": .1, "prob-T": .1, "prob-X": .8}]}]}
    (tmp_path / "d1.labels.json").write_text(json.dumps(labels), encoding="utf-8")
    gold = str(tmp_path / "d1.log.json")
    assert cli(["evaluate", str(tmp_path / "d1.labels.json"), gold, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)["dbdc3"]
    assert d["turns"] == 2 and d["accuracy"] == 0.5  # the run's hard label X is used, not argmax O
    assert d["predicted_labels"] == {"from_run": 2, "from_distribution": 0}
    ref = reference([[2 / 3, 0, 1 / 3], [0, 1 / 3, 2 / 3]], [[.5, .1, .4], [.1, .1, .8]], ["X", "X"], 0.0)
    assert d["X"]["precision"] == pytest.approx(ref["X"][0]) and d["jsd"]["O,T+X"] == pytest.approx(ref["jsd"][1])
    assert cli(["evaluate", str(tmp_path / "d1.labels.json"), gold, "--format", "table"]) == 0
    text = capsys.readouterr().out
    assert "DBDC3 evaluation" in text and "F-measure (T+X)" in text
    assert "Jensen-Shannon divergence (bits) on O+T,X" in text
    assert max(map(len, text.splitlines())) <= 80


def test_dbdc3_scores_checks_its_distributions_and_scores_with_the_registry():
    """Its MSE was its own, on rows as given: [[2, 1, 1]] against [[1, 1, 2]] gave 1.0733 (the registry's, on
    the distributions: 0.0233); NaN, negative and all-zero rows were scored."""
    from dialeval import measures
    from dialeval.breakdown import dbdc3_scores
    from dialeval.errors import DialevalError

    s = dbdc3_scores(np.array([[2.0, 1, 1]]), np.array([[1.0, 1, 2]]))
    assert s["mse"]["O,T,X"] == pytest.approx(measures.mse([1, 1, 2], [2, 1, 1]), abs=1e-15)
    assert s["mse"]["O,T,X"] == pytest.approx(((0.5 - 0.25) ** 2 + 0 + (0.25 - 0.5) ** 2) / 3, abs=1e-15)
    for bad, words in (([[np.nan, 1, 1]], "NaN"), ([[-1, 1, 1]], "negative"), ([[0, 0, 0]], "all zero")):
        with pytest.raises(DialevalError, match=words):
            dbdc3_scores(np.array(bad, dtype=float), np.array([[1.0, 1, 1]]))
    with pytest.raises(DialevalError, match=r"need two n x 3 arrays \(O, T, X\); received \(1, 2\)"):
        dbdc3_scores(np.array([[1.0, 1]]), np.array([[1.0, 1]]))
