"""Turn-level gold and scoring (dialeval.score, the one scorer): closed forms from MEASURES.md, DBDC3 runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialeval import DialevalError
from dialeval.corpus import Corpus, Dialogue, Turn, merge_blocks
from dialeval.distributions import gold_distributions, gold_document
from dialeval.io import read_corpus
from dialeval.io.dbdc import breakdown_scale
from dialeval.scoring import score, worst
from dialeval.tasks import DEFAULT_MEASURES as MEASURES_BY_KIND

THIRD = 1 / 3


def corpus():
    # d1: turn 1 gold (1/3, 1/3, 1/3) ; turn 3 gold (1, 0, 0). d2: turn 1 gold (1, 0, 0).
    return Corpus([
        Dialogue("d1", [Turn("user", ["a"]), Turn("system", ["b"], {"breakdown": ["O", "T", "X"]}),
                        Turn("user", ["c"]), Turn("system", ["d"], {"breakdown": ["O", "O", "O"]})]),
        Dialogue("d2", [Turn("user", ["a"]), Turn("system", ["b"], {"breakdown": ["O", "O", None]})]),
    ], {"breakdown": breakdown_scale()}, "dbdc")


def run(p11, p13, p21):
    return [{"id": "d1", "turns": [{"turn": 1, "breakdown": dict(zip("OTX", p11, strict=True))},
                                   {"turn": 3, "breakdown": dict(zip("OTX", p13, strict=True))}]},
            {"id": "d2", "turns": [{"turn": 1, "breakdown": dict(zip("OTX", p21, strict=True))}]}]


def test_gold_distributions():
    g = gold_distributions(corpus())["breakdown"]
    assert g.item_keys() == [("d1", 1), ("d1", 3), ("d2", 1)]
    np.testing.assert_allclose(g.probs, [[THIRD] * 3, [1, 0, 0], [1, 0, 0]])
    assert g.n_labels.tolist() == [3, 3, 2]


def test_measures_table_values_and_macro_average():
    # MEASURES.md rows: p=(1,0,0) vs q=(1/3,1/3,1/3): NMD .5, JSD .4591, RSNOD .4907;
    # p=(0,1,0) vs q=(1,0,0): NMD .5, JSD 1, RSNOD .7071. MSE = sum (p-q)^2 / 3: 6/27 and 2/3.
    s = score(run((1, 0, 0), (0, 1, 0), (1, 0, 0)), corpus())
    items = s.items["breakdown"]
    np.testing.assert_allclose(items["nmd"], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(items["jsd"], [0.4591, 1.0, 0.0], atol=5e-5)
    np.testing.assert_allclose(items["rsnod"], [0.4907, 0.7071, 0.0], atol=5e-5)
    np.testing.assert_allclose(items["mse"], [6 / 27, 2 / 3, 0.0])
    summ = s.summary()
    # macro: d1 = mean of its two turns, d2 = 0; then the mean of the two dialogues
    assert summ["scales"]["breakdown"]["nmd"] == pytest.approx((0.5 + 0.0) / 2)
    assert summ["scales"]["breakdown"]["mse"] == pytest.approx(((6 / 27 + 2 / 3) / 2 + 0) / 2)
    micro = score(run((1, 0, 0), (0, 1, 0), (1, 0, 0)), corpus(), average="turn").summary()
    assert micro["scales"]["breakdown"]["nmd"] == pytest.approx(1 / 3)
    assert list(summ["scales"]["breakdown"]) == list(MEASURES_BY_KIND["ordinal"])


def test_missing_and_strict():
    r = run((1, 0, 0), (1, 0, 0), (1, 0, 0))[:1]
    r[0]["turns"] = r[0]["turns"][1:]  # only d1 turn 3, a perfect prediction
    s = score(r, corpus())
    assert s.summary()["dialogues"] == {"scored": 1, "missing": 1, "extra": 0}
    assert s.summary()["items"]["breakdown"] == {"scored": 1, "missing": 1}  # d1 turn 1 (d2 is out of scope)
    assert s.summary()["scales"]["breakdown"]["nmd"] == 0.0
    st = score(r, corpus(), strict=True).summary()
    # d1: (0 + 1) / 2, d2: 1 -> 0.75; MSE worst is 2/L
    assert st["scales"]["breakdown"]["nmd"] == pytest.approx(0.75)
    assert st["scales"]["breakdown"]["mse"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert worst("mse", 3) == pytest.approx(2 / 3) and worst("rsnod", 3) == 1.0


def test_extra_items_and_errors():
    r = run((1, 0, 0), (1, 0, 0), (1, 0, 0))
    r[0]["turns"].append({"turn": 0, "breakdown": {"O": 1}})
    r.append({"id": "zz", "turns": []})
    s = score(r, corpus())
    assert s.extra_items == ["d1:0:breakdown"] and s.extra_ids == ["zz"]
    bad = [
        ([{"id": "d1", "turns": [{"turn": 1, "breakdown": {"B": 1}}]}], "unknown bin name 'B'; allowed are O, T, X"),
        ([{"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": -1, "T": 2}}]}], "allowed are finite numbers >= 0"),
        ([{"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 0}}]}], "all-zero distribution"),
        ([{"id": "d1", "turns": [{"turn": 1, "nugget": {"O": 1}}]}], "scale 'nugget' is not in the gold"),
        ([{"id": "d1", "turns": [{"turn": "1", "breakdown": {"O": 1}}]}], "'turn' '1' is not allowed"),
        ([{"id": "d1"}, {"id": "d1"}], "dialogue id met twice"),
        ([{"id": "zz"}], "0 of 1 run ids are in the gold; run ids: zz; gold ids: d1"),
        ([{"id": "d1"}], "the run predicts no item the gold has"),
    ]
    for r, msg in bad:
        with pytest.raises(DialevalError, match=msg):
            score(r, corpus())
    with pytest.raises(DialevalError, match="average 'x' is not allowed"):
        score(run((1, 0, 0), (1, 0, 0), (1, 0, 0)), corpus(), average="x")


def test_dbdc3_labels_format(tmp_path):
    for did, turns in (("d1", [(1, (1, 0, 0)), (3, (0, 1, 0))]), ("d2", [(1, (1, 0, 0))])):
        doc = {"dialogue-id": did, "turns": [{"turn-index": t, "labels": [
            {"breakdown": "O", **{f"prob-{k}": v for k, v in zip("OTX", p, strict=True)}}]} for t, p in turns]}
        (tmp_path / f"{did}.labels.json").write_text(json.dumps(doc))
    a = score(tmp_path, corpus()).summary()["scales"]
    b = score(run((1, 0, 0), (0, 1, 0), (1, 0, 0)), corpus()).summary()["scales"]
    assert a == b


def test_gold_file_is_a_perfect_run_on_real_data(shared_data):
    c = read_corpus(shared_data("dbdc3", "en", "eval"))
    g = gold_distributions(c)
    doc = gold_document(c, g)
    assert doc["scales"]["breakdown"]["levels"] == ["O", "T", "X"] and len(doc["dialogues"]) == 200
    summ = score(doc, g).summary()
    assert all(v == pytest.approx(0, abs=1e-12) for v in summ["scales"]["breakdown"].values())
    assert summ["items"]["breakdown"] == {"scored": 2000, "missing": 0}


def test_uniform_run_closed_form(shared_data):
    # A uniform prediction u against gold q: MSE = sum (q_i - 1/3)^2 / 3 per turn; check the micro mean directly.
    c = read_corpus(shared_data("dbdc3", "en", "dev", "IRIS_100"))
    g = gold_distributions(c)["breakdown"]
    r = [{"id": d, "turns": [{"turn": t, "breakdown": {"O": 1, "T": 1, "X": 1}}]} for d, t in g.item_keys()]
    merged: dict = {}
    for e in r:
        merged.setdefault(e["id"], {"id": e["id"], "turns": []})["turns"] += e["turns"]
    s = score(list(merged.values()), c, average="turn").summary()
    want = float((((g.probs - THIRD) ** 2).sum(axis=1) / 3).mean())
    assert s["scales"]["breakdown"]["mse"] == pytest.approx(want, rel=1e-12)


def test_blocks():
    c = Corpus([Dialogue("d", [Turn("user", ["a"]), Turn("user", ["b"]),
                               Turn("system", ["c"], {"breakdown": ["O"]}), Turn("system", ["d"])])],
               {"breakdown": breakdown_scale()})
    m = merge_blocks(c)
    assert [(t.sender, t.utterances, t.meta["merged"]) for t in m.dialogues[0].turns] == [
        ("user", ["a", "b"], [0, 1]), ("system", ["c", "d"], [2, 3])]
    assert gold_distributions(m)["breakdown"].item_keys() == [("d", 1)]
    c.dialogues[0].turns[3].labels = {"breakdown": ["X"]}
    with pytest.raises(DialevalError, match="more than one of them has labels"):
        merge_blocks(c)
    assert merge_blocks(c, on_conflict="last").dialogues[0].turns[1].labels == {"breakdown": ["X"]}


@pytest.mark.parametrize("label,message", [
    ({"prob-O": float("nan")}, "turns[0].labels[0].prob-O: value nan is not allowed"),
    ({"prob-O": -1}, "turns[0].labels[0].prob-O: value -1 is not allowed"),
    ({"prob-Z": 0.1}, "turns[0].labels[0]: unknown bin 'prob-Z'; allowed are prob-O, prob-T, prob-X"),
    ({"breakdown": "Y"}, "turns[0].labels[0].breakdown: hard label 'Y' is not allowed"),
    ({"turn-index": None}, "turns[0].turn-index: 'turn-index' None is not allowed"),
    ({"dialogue-id": None}, "dialogue-id: 'dialogue-id' must be a non-empty string, received None"),
    ({"dialogue-id": ["d1"]}, "dialogue-id: 'dialogue-id' must be a non-empty string, received ['d1']"),
])
def test_dbdc3_labels_errors_name_the_file_and_its_own_fields(tmp_path, label, message):
    """An error in a folder of *.labels.json names the file and the field as the file spells it."""
    lab = {"breakdown": "O", "prob-O": 1, "prob-T": 0, "prob-X": 0}
    turn = {"turn-index": label.pop("turn-index", 1), "labels": [lab]}
    doc = {"dialogue-id": label.pop("dialogue-id", "d1"), "turns": [turn]}
    lab.update(label)
    f = tmp_path / "d1.labels.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(DialevalError) as e:
        score(tmp_path, corpus())
    where = f"{f}: " if "dialogue-id" in message[:12] else f"{f}: dialogue d1: "
    assert str(e.value).startswith(where + message), str(e.value)
