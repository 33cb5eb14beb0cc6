"""Two-way ANOVA, ES_E and the paired t-test against the textbook values of SIGNIFICANCE.md and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from dialeval import DialevalError
from dialeval.stats import anova2, effect_sizes, paired_t_test


def test_textbook_anova(textbook):
    r = anova2(textbook)
    assert np.allclose(r.run_means, [.345, .270, .245])
    assert math.isclose(r.S_E, 0.8317, abs_tol=5e-5) and math.isclose(r.V_E, 0.0219, abs_tol=5e-5)
    assert (r.df_runs, r.df_dialogues, r.df_E) == (2, 19, 38)
    assert pytest.approx(r.S_total) == r.S_runs + r.S_dialogues + r.S_E
    assert math.isclose(r.F, r.V_runs / r.V_E)
    assert r.pvalue == pytest.approx(sps.f.sf(r.F, 2, 38))


def test_textbook_effect_size(textbook):
    es = effect_sizes(textbook)
    assert es[0, 1] == pytest.approx(0.5070, abs=5e-4)
    assert np.allclose(es, -es.T)
    assert np.all(np.diag(es) == 0)


def test_textbook_paired_t(textbook):
    r = paired_t_test(textbook[:, 0], textbook[:, 1])
    assert r.statistic == pytest.approx(2.116, abs=5e-4)
    assert r.pvalue == pytest.approx(0.048, abs=5e-4)
    assert r.df == 19
    ref = sps.ttest_rel(textbook[:, 0], textbook[:, 1])
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    ci = ref.confidence_interval(0.95)
    assert (r.ci.low, r.ci.high) == pytest.approx((ci.low, ci.high))


def test_zero_residual_policy():
    X = np.add.outer([0.1, 0.5, 0.3], [0.0, 0.2])  # dialogue effect + run effect, no residual
    assert math.isnan(anova2(X).F)
    assert math.isnan(effect_sizes(X)[0, 1])
    with pytest.raises(DialevalError, match="V_E is 0"):
        effect_sizes(X, on_zero_error="raise")
    with pytest.raises(DialevalError, match="on_zero_error 'x' is not allowed"):
        anova2(X, on_zero_error="x")


def test_constant_difference_policy():
    assert math.isnan(paired_t_test([1, 2, 3], [0, 1, 2]).statistic)
    with pytest.raises(DialevalError, match=r"all 3 differences equal 1\.0"):
        paired_t_test([1, 2, 3], [0, 1, 2], on_constant="raise")


@pytest.mark.parametrize("bad, match", [
    ([[1, 2, 3]], "too small"),
    ([1, 2, 3], "2-D"),
    ([[1, np.nan], [2, 3]], "row 0, column 1 is nan"),
    ("abc", "2-D array"),
])
def test_matrix_validation(bad, match):
    with pytest.raises(DialevalError, match=match):
        anova2(bad)


def test_t_validation():
    with pytest.raises(DialevalError, match="x has 3 values and y 2"):
        paired_t_test([1, 2, 3], [1, 2])


def test_differences_equal_up_to_rounding_are_constant():
    """.7 - .6, .3 - .2 and .2 - .1 differ in their last bits only: t is undefined (NaN, or the error), as anova2
    says of the same data, not 8.8e15."""
    r = paired_t_test([.7, .3, .2], [.6, .2, .1])
    assert math.isnan(r.statistic) and math.isnan(r.pvalue) and r.ci.low == r.ci.high == r.mean_diff
    with pytest.raises(DialevalError, match="all 3 differences equal"):
        paired_t_test([.7, .3, .2], [.6, .2, .1], on_constant="raise")
    assert math.isnan(anova2([[.7, .6], [.3, .2], [.2, .1]]).pvalue)
