"""Issue 16 item 9: the paired t-test's effect size, its variance and interval, and anova2's margin of error.

Data: the textbook table of SIGNIFICANCE.md (Sakai, *Laboratory Experiments in Information Retrieval*, 20
topics x 3 systems). The book's own printed ES / MOE figures are not in the specs or seeds, so the expected
values are computed here from the closed forms with exact rational arithmetic (independent of the code under
test); the spec's published figures (means, V_E, t, p) are checked alongside.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats as sps

from dialeval.stats import anova2, paired_t_test

A_TEXT = ".70 .30 .20 .60 .40 .40 .00 .70 .10 .30 .50 .40 .00 .60 .50 .30 .10 .50 .20 .10"
B_TEXT = ".50 .10 .00 .20 .40 .30 .00 .50 .30 .30 .40 .40 .10 .40 .20 .10 .10 .60 .30 .20"
C_TEXT = ".00 .00 .20 .10 .30 .30 .10 .20 .40 .40 .40 .30 .30 .20 .20 .20 .10 .50 .40 .30"


def _exact(col: str) -> list[Fraction]:
    return [Fraction(x) for x in col.split()]


def test_paired_t_effect_size_variance_interval():
    a, b = _exact(A_TEXT), _exact(B_TEXT)
    d = [x - y for x, y in zip(a, b, strict=True)]
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    r = paired_t_test([float(x) for x in a], [float(x) for x in b])
    assert r.statistic == pytest.approx(2.116, abs=5e-4) and r.pvalue == pytest.approx(0.048, abs=5e-4)
    assert r.variance == pytest.approx(float(var), rel=1e-12)
    assert r.effect_size == pytest.approx(float(mean) / math.sqrt(float(var)), rel=1e-12)
    assert r.effect_size == pytest.approx(r.statistic / math.sqrt(n), rel=1e-12)  # ES = t / sqrt(n)
    half = sps.t.ppf(0.975, n - 1) * math.sqrt(float(var) / n)
    assert r.margin == pytest.approx(half, rel=1e-12)
    assert (r.ci.low, r.ci.high) == pytest.approx((float(mean) - half, float(mean) + half), rel=1e-12)


def test_anova2_margin_of_error_of_run_means():
    cols = [_exact(A_TEXT), _exact(B_TEXT), _exact(C_TEXT)]
    n, m = 20, 3
    grand = sum(sum(c) for c in cols) / (n * m)
    rm = [sum(c) / n for c in cols]
    dm = [sum(c[i] for c in cols) / m for i in range(n)]
    s_e = sum((cols[j][i] - dm[i] - rm[j] + grand) ** 2 for i in range(n) for j in range(m))
    v_e = s_e / ((m - 1) * (n - 1))
    X = [[float(cols[j][i]) for j in range(m)] for i in range(n)]
    r = anova2(X)
    assert math.isclose(r.V_E, float(v_e), rel_tol=1e-12) and math.isclose(r.V_E, 0.0219, abs_tol=5e-5)
    moe = sps.t.ppf(0.975, (m - 1) * (n - 1)) * math.sqrt(float(v_e) / n)
    assert r.moe == pytest.approx(moe, rel=1e-12) and r.level == 0.95
    r90 = anova2(X, level=0.90)
    assert r90.moe == pytest.approx(sps.t.ppf(0.95, 38) * math.sqrt(float(v_e) / n), rel=1e-12)
    assert r90.moe < r.moe
    assert "moe" in r.to_dict()
