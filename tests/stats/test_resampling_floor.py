"""Too few resamples for the level or alpha asked: a ResamplingWarning (a DialevalWarning), from one rule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dialeval import DialevalWarning
from dialeval.stats import ResamplingWarning, bootstrap_ci, compare_measures, correlate, rank_agreement
from dialeval.stats._common import check_B


def _caught(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in seen if issubclass(w.category, ResamplingWarning)]


@pytest.mark.parametrize(("B", "level", "warned"), [
    (39, 0.95, True), (40, 0.95, False),       # 2 / (1 - 0.95) = 40: one resample beyond each end on average
    (199, 0.99, True), (200, 0.99, False),
    (1, 0.5, True), (4, 0.5, False),
])
def test_interval_floor_is_two_over_one_minus_level(B, level, warned):
    said = _caught(lambda: check_B(B, level=level))
    assert bool(said) is warned
    if warned:
        assert f"B = {B}" in said[0] and f"use B >= {round(2 / (1 - level))}" in said[0]


@pytest.mark.parametrize(("B", "alpha", "warned"), [(19, 0.05, True), (20, 0.05, False), (99, 0.01, True),
                                                    (100, 0.01, False)])
def test_pvalue_floor_is_one_over_alpha(B, alpha, warned):
    said = _caught(lambda: check_B(B, alpha=alpha))
    assert bool(said) is warned
    if warned:
        assert f"1/B = {1 / B:.2g}" in said[0] and f"use B >= {round(1 / alpha)}" in said[0]


def test_category_is_dialevals_own():
    assert issubclass(ResamplingWarning, DialevalWarning) and issubclass(DialevalWarning, UserWarning)


def test_every_resampling_procedure_says_it():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=30), rng.normal(size=30)
    a = rng.random((12, 4))
    for call in (lambda: bootstrap_ci(x, B=10, seed=0),
                 lambda: correlate(x, y, "pearson", B=10, seed=0),
                 lambda: rank_agreement(a, a + 0.01, B=10, seed=0),
                 lambda: compare_measures({"m": a}, ["r1", "r2", "r3", "r4"], B=10, seed=0)):
        assert _caught(call), call
    assert not _caught(lambda: bootstrap_ci(x, B=1000, seed=0))



# ----------------------------------------------------- what an audit against independent references found

def test_a_constant_added_to_each_topic_changes_no_test():
    """The tie tolerance is the spread within topics (it was 1e-9 of the largest value: at offset 1e7 every
    difference of 0.003 was a "tie", p = 1, the t-test undefined and ANOVA's F NaN)."""
    from scipy import stats as st

    from dialeval.stats import anova2, paired_randomization_test, paired_t_test, randomized_tukey_hsd

    rng = np.random.default_rng(1)
    base = 1e7 + rng.random(20)
    x, y = base + rng.normal(0.003, 0.001, 20), base.copy()
    exact = paired_randomization_test(x, y, method="exact").pvalue
    assert exact < 1e-5 and paired_randomization_test(x, y, method="monte-carlo", B=2000, seed=0).pvalue < 1e-3
    assert paired_t_test(x, y).pvalue == pytest.approx(st.ttest_rel(x, y).pvalue, rel=1e-6)
    X = rng.random((15, 4))
    offsets = 1e7 * rng.random((15, 1))
    assert np.array_equal(randomized_tukey_hsd(X, B=500, seed=0).pvalues,
                          randomized_tukey_hsd(X + offsets, B=500, seed=0).pvalues)
    assert pytest.approx(anova2(X).F, rel=1e-6) == anova2(X + offsets).F


def test_values_whose_squares_overflow_are_refused():
    from dialeval.errors import DialevalError
    from dialeval.stats import anova2, paired_t_test

    X = np.array([[1, 0.5], [0.6, 0.2], [0.9, 0.1]])
    with pytest.raises(DialevalError, match=r"row 0, column 0 is 1e\+165; allowed are finite numbers of magnitude"):
        anova2(X * 1e165)     # an OverflowError traceback before
    with pytest.raises(DialevalError, match=r"value 0 is 1e\+160"):
        paired_t_test([1e160, 0.3, 0.2], [0.5, 0.1, 0.0])   # t = 0, p = 1 before


@pytest.mark.parametrize("k", [2.0**-530, 2.0**-1000])
def test_statistics_without_units_are_the_same_for_tiny_values(k):
    """Values whose squares underflow (1e-160: the bootstrap's Pearson interval NaN, F wrong in its 4th digit;
    1e-300: F, t and the effect sizes NaN) are computed at a larger scale. Multiplying by a power of two changes no
    bit of a statistic without units; sums of squares are in the data's squared units."""
    from dialeval.stats import anova2, correlate, effect_sizes, paired_t_test

    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    X = rng.normal(size=(20, 3)) + np.array([0, 0.5, 0])
    r, rk = correlate(x, y, seed=0), correlate(x * k, y * k, seed=0)
    assert (rk.statistic, rk.pvalue, rk.ci, rk.undefined_resamples) == (r.statistic, r.pvalue, r.ci, 0)
    a, ak = anova2(X), anova2(X * k)
    assert (ak.F, ak.pvalue, ak.F_dialogues) == (a.F, a.pvalue, a.F_dialogues)
    assert ak.moe == a.moe * k and np.array_equal(ak.run_means, a.run_means * k) and ak.grand_mean == a.grand_mean * k
    assert np.array_equal(effect_sizes(X * k), effect_sizes(X))
    t, tk = paired_t_test(X[:, 0], X[:, 1]), paired_t_test(X[:, 0] * k, X[:, 1] * k)
    assert (tk.statistic, tk.pvalue, tk.effect_size) == (t.statistic, t.pvalue, t.effect_size)
    assert (tk.mean_diff, tk.ci.low, tk.ci.high, tk.margin) == (t.mean_diff * k, t.ci.low * k, t.ci.high * k,
                                                                t.margin * k)


def test_a_huge_B_is_refused_before_any_memory_is_asked_for():
    """-B 99999999999999 asked numpy for 728 TiB and ended in a MemoryError traceback (compare, stats tukey,
    correlate)."""
    from dialeval.errors import DialevalError
    from dialeval.stats import bootstrap_ci, correlate, randomized_tukey_hsd
    from dialeval.stats._common import MAX_B, check_B

    assert check_B(MAX_B) == MAX_B
    for call in (lambda B: check_B(B), lambda B: bootstrap_ci([0.1, 0.2, 0.3], B=B),
                 lambda B: correlate([1, 2, 3, 4], [1, 3, 2, 4], B=B),
                 lambda B: randomized_tukey_hsd(np.eye(3), B=B)):
        with pytest.raises(DialevalError, match=r"B = 99999999999999 is not allowed; allowed are integers 1 to "
                                                r"10,000,000 \(1,000 to 100,000 are usual\)"):
            call(99_999_999_999_999)
