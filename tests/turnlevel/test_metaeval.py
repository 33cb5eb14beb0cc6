"""Correlation with human ratings: against scipy on the same vectors, ConTurE's README table, DSTC9 systems."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from dialeval import DialevalError
from dialeval.io import read_corpus
from dialeval.metaeval import (
    correlate_with_humans,
    dimension_means,
    load_scores,
    system_means,
    turn_scale_scores,
)

# ConTurE README, "Correlation with Dialog level dimensions": (Pearson, Spearman) as printed.
README = {"consistent": (0.38, 0.40), "likeable": (0.42, 0.45), "diverse": (0.23, 0.25),
          "informative": (0.30, 0.34), "coherent": (0.32, 0.37), "human (overall)": (0.45, 0.48),
          "understanding": (0.36, 0.42), "flexible": (0.33, 0.40), "topic depth": (0.34, 0.35),
          "error recovery": (0.37, 0.40), "inquisitive": (0.20, 0.27)}


def _conture(shared_data):
    return read_corpus(shared_data("conture", "data.json"))


def test_vectors_and_scipy_agree(shared_data):
    c = _conture(shared_data)
    auto = turn_scale_scores(c, "overall impression")
    human = dimension_means(c)
    # independent construction of the same vectors from the raw JSON
    raw = json.loads(shared_data("conture", "data.json").read_text())
    for rec in raw:
        did = str(rec["dialog_id"])
        assert auto[did] == pytest.approx(np.mean([t["overall impression"] for t in rec["turns"]]))
        vals = [r["likeable"] for r in rec["dialog_ratings"] if r["likeable"] != "N/A"]
        assert human["likeable"][did] == pytest.approx(np.mean(vals))
    t = correlate_with_humans(auto, human, levels=("dialogue",), B=200, seed=1)
    for dim in README:
        ids = [i for i in auto if i in human[dim]]
        x, y = [auto[i] for i in ids], [human[dim][i] for i in ids]
        for method, fn in (("pearson", sps.pearsonr), ("spearman", sps.spearmanr)):
            row = t.value(dim, method)
            ref = fn(x, y)
            assert row.statistic == pytest.approx(ref.statistic, abs=1e-12)
            assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
            assert row.n == 119 and row.ci_low <= row.statistic <= row.ci_high


def test_conture_readme_table(shared_data):
    """Our coefficients match the README's within 0.01 with its two columns swapped: the README's "Pearson"
    column holds what scipy's Spearman gives on these vectors, and its "Spearman" column Pearson's r."""
    c = _conture(shared_data)
    t = correlate_with_humans(turn_scale_scores(c, "overall impression"), dimension_means(c), levels=("dialogue",),
                              B=10, seed=0)
    for dim, (pearson_col, spearman_col) in README.items():
        assert t.value(dim, "spearman").statistic == pytest.approx(pearson_col, abs=0.0101)
        assert t.value(dim, "pearson").statistic == pytest.approx(spearman_col, abs=0.0101)


def test_dstc9_system_level(shared_data):
    c = read_corpus(shared_data("dstc9"))
    human = dimension_means(c, ["human (overall)", "likeable"])
    systems = {d.id: d.meta["system"] for d in c}
    t = correlate_with_humans(human["human (overall)"], {"likeable": human["likeable"]}, systems=systems, B=200)
    row = t.value("likeable", "pearson", "system")
    assert row.n == 11
    a = system_means(human["human (overall)"], systems)
    ids = [i for i in human["human (overall)"] if i in human["likeable"]]
    b = system_means({i: human["likeable"][i] for i in ids}, systems)
    keys = sorted(a)
    assert row.statistic == pytest.approx(sps.pearsonr([a[k] for k in keys], [b[k] for k in keys]).statistic)
    assert t.value("likeable", "pearson", "dialogue").n == len(ids) == 2200


def test_load_scores(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("id,turn,score\na,0,1\na,1,3\nb,0,2\n")
    assert load_scores(p) == {"a": 2.0, "b": 2.0}
    assert load_scores(p, aggregate="max") == {"a": 3.0, "b": 2.0}
    q = tmp_path / "s.json"
    q.write_text(json.dumps([{"id": "a", "score": 0.5}, {"id": "b", "turns": [{"turn": 0, "score": 1}]}]))
    assert load_scores(q) == {"a": 0.5, "b": 1.0}
    q.write_text(json.dumps([{"id": "a", "score": "x"}]))
    with pytest.raises(DialevalError, match=r"score 'x' is not allowed; allowed are finite numbers \(a JSON number"):
        load_scores(q)
    with pytest.raises(DialevalError, match="aggregate 'sum' is not allowed"):
        load_scores(p, aggregate="sum")


def test_too_few_pairs_names_the_level_and_dimension():
    auto = {"a": 1.0, "b": 2.0, "c": 3.0}
    human = {"fluency": {"a": 2.0, "b": 1.0}}  # c has no rating: 2 pairs
    with pytest.raises(DialevalError, match=r"^dialogue level, dimension 'fluency': 2 usable pair\(s\) after "
                                            r"dropping 1 with a missing value.*without a rating of this dimension"):
        correlate_with_humans(auto, human, levels=("dialogue",), B=50, seed=0)
