"""compare_measures: each number equals the public function that computes it, with the recorded settings."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval import DialevalError
from dialeval.stats import (
    bootstrap_ci,
    compare_measures,
    compare_runs_matrix,
    effect_sizes,
    not_different_groups,
    randomized_tukey_hsd,
    rank_agreement,
)

RUNS = ["r1", "r2", "r3", "r4", "r5"]


def test_groups_are_maximal_consecutive_sets():
    p = np.ones((5, 5))
    for i, j in [(0, 2), (0, 3), (0, 4), (1, 3), (1, 4), (2, 4)]:
        p[i, j] = p[j, i] = 0.01
    assert not_different_groups(p, range(5), 0.05) == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert not_different_groups(np.ones((3, 3)), [2, 0, 1], 0.05) == [[2, 0, 1]]
    all_diff = np.full((3, 3), 0.001)
    assert not_different_groups(all_diff, [0, 1, 2], 0.05) == [[0], [1], [2]]


def test_every_number_matches_its_function(runs_matrix):
    X = runs_matrix
    c = compare_measures({"m1": X, "m2": X**2}, RUNS, B=1500, seed=4, alpha=0.05, level=0.9)
    mc = c.measure("m1")
    tukey = randomized_tukey_hsd(X, B=1500, seed=4)
    es = effect_sizes(X)
    assert np.array_equal(mc.tukey.pvalues, tukey.pvalues)
    idx = {r: i for i, r in enumerate(RUNS)}
    for row in mc.runs:
        j = idx[row.run]
        assert row.mean == pytest.approx(X[:, j].mean())
        ci = bootstrap_ci(X[:, j], level=0.9, B=1500, seed=4).ci
        assert (row.ci.low, row.ci.high) == pytest.approx((ci.low, ci.high))
    assert [r.rank for r in mc.runs] == [1, 2, 3, 4, 5]
    assert [r.mean for r in mc.runs] == sorted(r.mean for r in mc.runs)  # lower is better: best first
    assert len(mc.pairs) == 10
    for p in mc.pairs:
        i, j = idx[p.better], idx[p.worse]
        assert p.pvalue == tukey.pvalues[i, j] and p.significant == (p.pvalue < 0.05)
        assert p.effect_size == pytest.approx(abs(es[i, j]))
        assert p.abs_diff == pytest.approx(abs(X[:, i].mean() - X[:, j].mean()))
    tau = rank_agreement(X, X**2, level=0.9, B=1500, seed=4)
    (agr,) = c.agreement
    assert (agr.first, agr.second) == ("m1", "m2")
    assert agr.tau.statistic == pytest.approx(tau.statistic)
    assert (agr.tau.ci.low, agr.tau.ci.high) == pytest.approx((tau.ci.low, tau.ci.high))
    s = c.settings
    assert (s["B"], s["seed"], s["alpha"], s["level"]) == (1500, 4, 0.05, 0.9)
    assert s["test"] == "randomised Tukey HSD" and s["dialeval_version"]


def test_groups_and_letters(runs_matrix):
    mc = compare_runs_matrix(runs_matrix, RUNS, B=2000, seed=0)
    assert mc.groups[0][0] == "r1"
    letters = {r.run: r.groups for r in mc.runs}
    for g, members in enumerate(mc.groups):
        for r in members:
            assert "abcdefghij"[g] in letters[r]
    for p in mc.pairs:  # runs sharing a group are not significantly different
        if set(letters[p.better]) & set(letters[p.worse]):
            assert not p.significant


def test_higher_is_better_reverses_ranks(runs_matrix):
    mc = compare_runs_matrix(runs_matrix, RUNS, lower_is_better=False, B=200, seed=0)
    assert (mc.runs[0].run, mc.runs[0].rank) == ("r5", 1)


def test_mixed_directions_agree_after_flipping(runs_matrix):
    c = compare_measures({"err": runs_matrix, "acc": 1 - runs_matrix}, RUNS, lower_is_better={"err": True,
                         "acc": False}, B=200, seed=0)
    assert c.agreement[0].tau.statistic == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"runs": ["a", "a", "b", "c", "d"]}, "run name 'a' appears twice"),
    ({"runs": ["a", "b"]}, "2 run name"),
    ({"alpha": 1.5}, "alpha 1.5 is not allowed"),
    ({"level": 0}, "confidence level 0 is not allowed"),
    ({"lower_is_better": {"x": True}}, "no direction for m"),
])
def test_validation(runs_matrix, kwargs, match):
    args = {"runs": RUNS, "B": 10, **kwargs}
    with pytest.raises(DialevalError, match=match):
        compare_measures({"m": runs_matrix}, **args)


def test_shapes_must_match(runs_matrix):
    with pytest.raises(DialevalError, match="differ in shape"):
        compare_measures({"a": runs_matrix, "b": runs_matrix[:10]}, RUNS, B=10)


def test_same_seed_same_comparison(runs_matrix):
    def run():
        return compare_measures({"m1": runs_matrix, "m2": runs_matrix**2}, RUNS, B=300, seed=6).to_dict()

    assert run() == run()


@pytest.mark.parametrize("direction", ["False", None, 1, 0.0])
def test_a_direction_that_is_not_a_bool_is_refused(direction):
    """bool("False") is True: such a value would have ranked the runs the wrong way round, silently."""
    from dialeval.stats import compare_runs_matrix

    X = np.random.default_rng(0).random((10, 3))
    with pytest.raises(DialevalError, match=r"lower_is_better = .* is not allowed; allowed are True"):
        compare_runs_matrix(X, ["a", "b", "c"], lower_is_better=direction, B=100)
    with pytest.raises(DialevalError, match=r"lower_is_better\['1'\] = .* is not allowed"):
        compare_measures({1: X}, ["a", "b", "c"], lower_is_better={1: direction}, B=100)
    assert compare_measures({1: X}, ["a", "b", "c"], lower_is_better={1: np.True_}, B=100)  # keys as str(key)


def _groups_by_definition(p: np.ndarray, order: list[int], alpha: float) -> list[list[int]]:
    """The slow reference: for each start, the longest window whose every pair has p >= alpha, kept when it
    reaches further than the windows before (maximal groups)."""
    groups, last = [], -1
    for start in range(len(order)):
        end = max(e for e in range(start, len(order))
                  if all(p[order[i], order[j]] >= alpha for i in range(start, e + 1) for j in range(i + 1, e + 1)))
        if end > last:
            groups.append(order[start:end + 1])
            last = end
    return groups


def test_groups_equal_their_definition_in_quadratic_time():
    """The groups were found in O(m^3) (800 near-tied runs: 11 s); now O(m^2), the same groups."""
    import time

    from dialeval.stats import not_different_groups

    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(1, 12))
        p = rng.choice([0.01, 0.2, 1.0, np.nan], size=(m, m), p=[0.3, 0.3, 0.35, 0.05])
        p = np.where(np.eye(m, dtype=bool), 1.0, np.minimum(p, p.T))
        order = [int(i) for i in rng.permutation(m)]
        assert not_different_groups(p, order, 0.05) == _groups_by_definition(p, order, 0.05)
    t = time.perf_counter()
    assert not_different_groups(np.ones((800, 800)), list(range(800)), 0.05) == [list(range(800))]
    assert time.perf_counter() - t < 2.0  # linear: about 0.1 s (quadratic in pairs would take minutes)


def test_kendall_of_every_row_and_pair_equals_scipy_in_small_chunks(monkeypatch):
    """Tau-b of bootstrap rows as a Gram matrix of sign vectors (compare with 400 runs spent 105 of 151 s in the
    pairwise products), checked against scipy row by row, also when a row is cut into blocks of items."""
    from scipy import stats as sps

    from dialeval.stats import correlation

    rng = np.random.default_rng(3)
    samples = [np.round(rng.normal(size=(7, 23)), 1) for _ in range(3)]
    samples[1][2] = 0.5   # a constant row: undefined
    pairs = [(0, 1), (2, 0), (1, 2)]
    for cells in (correlation._CHUNK_CELLS, 200, 1):
        monkeypatch.setattr(correlation, "_CHUNK_CELLS", cells)
        got = correlation.kendall_rows_pairs(samples, pairs)
        for r in range(7):
            for k, (a, b) in enumerate(pairs):
                want = sps.kendalltau(samples[a][r], samples[b][r]).statistic
                assert (np.isnan(got[r, k]) and np.isnan(want)) or got[r, k] == pytest.approx(want, abs=1e-14)


def test_means_equal_but_for_rounding_share_a_rank_and_agree_in_tau():
    """r0 and r1 both have mean 1/5, computed as 0.20000000000000004 and 0.19999999999999998; m2 swaps them.
    Each measure ranked a different one first and the measures' tau was 1/3; it is 1 (ties, as the docstring
    says: ties share the best rank). Found by a statistics probe."""
    m1 = np.array([[.1, .3, .9], [.2, .2, .8], [.3, .1, .7]])
    m2 = m1[:, [1, 0, 2]]
    c = compare_measures({"m1": m1, "m2": m2}, ["r0", "r1", "r2"], B=200, seed=0)
    for mc in c.measures:
        assert {r.run: r.rank for r in mc.runs} == {"r0": 1, "r1": 1, "r2": 3}
    assert c.agreement[0].tau.statistic == 1.0
    assert rank_agreement(m1, m2, B=200, seed=0).statistic == 1.0


def test_effect_sizes_of_tiny_data_are_those_of_the_data_at_unit_scale():
    """ES_E has no units; at 1e-165 V_E underflowed in data units and every pair's ES_E was NaN."""
    X = np.random.default_rng(4).random((12, 3)) + np.array([0.0, 0.1, 0.3])
    unit = compare_measures({"m": X}, ["a", "b", "c"], B=100, seed=0).measures[0].pairs
    tiny = compare_measures({"m": X * 1e-165}, ["a", "b", "c"], B=100, seed=0).measures[0].pairs
    assert [p.effect_size for p in tiny] == pytest.approx([p.effect_size for p in unit], rel=1e-9)
