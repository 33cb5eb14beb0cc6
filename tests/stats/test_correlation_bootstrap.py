"""Bootstrap intervals, Kendall's tau and rank agreement against scipy and slow loops with the same draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from dialeval import DialevalError
from dialeval.stats import bootstrap_ci, correlate, kendall_tau, rank_agreement


def test_bootstrap_ci_matches_slow_loop():
    x = np.random.default_rng(0).random(30)
    r = bootstrap_ci(x, level=0.9, B=500, seed=3)
    idx = np.random.default_rng(3).integers(0, 30, size=(500, 30))
    means = np.array([x[i].mean() for i in idx])
    assert (r.ci.low, r.ci.high) == pytest.approx(tuple(np.percentile(means, [5, 95])))
    assert r.mean == pytest.approx(x.mean()) and (r.B, r.seed, r.n) == (500, 3, 30)


def test_bootstrap_is_deterministic():
    x = np.arange(10.0)
    assert bootstrap_ci(x, B=300, seed=1) == bootstrap_ci(x, B=300, seed=1)
    assert bootstrap_ci(x, B=300, seed=1) != bootstrap_ci(x, B=300, seed=2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kendall_tau_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 15).astype(float)
    b = a + rng.integers(-2, 3, 15)
    r = kendall_tau(a, b, B=200, seed=0)
    ref = sps.kendalltau(a, b)
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    assert r.n == 15 and r.ci.low <= r.statistic <= r.ci.high


def test_correlate_drops_missing_pairs():
    r = correlate([1, 2, None, 4, 5], [2, 1, 3, float("nan"), 6], "spearman", B=100, seed=0)
    assert (r.n, r.n_dropped) == (3, 2)
    assert r.statistic == pytest.approx(sps.spearmanr([1, 2, 5], [2, 1, 6]).statistic)


def test_rank_agreement_statistic_and_interval_match_slow_loop():
    rng = np.random.default_rng(5)
    n, m = 40, 6
    a = rng.random((n, m)) * 0.3 + np.linspace(0, 0.2, m)
    b = a + rng.normal(0, 0.05, (n, m))
    r = rank_agreement(a, b, level=0.9, B=300, seed=8)
    ref = sps.kendalltau(a.mean(axis=0), b.mean(axis=0))
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    assert (r.ci.low, r.ci.high) == pytest.approx(_slow_bca(a, b, 0.9, 300, 8))
    assert r.n == m and "BCa bootstrap over dialogues" in r.ci.method
    assert r.ci.low <= r.statistic <= r.ci.high


def _slow_bca(a, b, level, B, seed):
    """BCa interval of tau between run means, written out from Efron (1987) with scipy, resampling by loop."""
    n = a.shape[0]
    tau = sps.kendalltau(a.mean(axis=0), b.mean(axis=0)).statistic
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    boot = np.array([sps.kendalltau(a[i].mean(axis=0), b[i].mean(axis=0)).statistic for i in idx])
    keep = np.arange(n)
    jack = np.array([sps.kendalltau(a[keep != i].mean(axis=0), b[keep != i].mean(axis=0)).statistic
                     for i in range(n)])
    tie = np.isclose(boot, tau, rtol=0, atol=1e-12)
    z0 = ndtr_inv((np.sum((boot < tau) & ~tie) + 0.5 * np.sum(tie)) / B)
    d = jack.mean() - jack
    acc = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z = ndtr_inv(np.array([(1 - level) / 2, (1 + level) / 2]))
    q = sps.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
    return tuple(np.percentile(boot, 100 * q))


def ndtr_inv(p):
    return sps.norm.ppf(p)


def test_rank_agreement_validation():
    with pytest.raises(DialevalError, match=r"first has shape \(3, 2\) and second \(3, 3\)"):
        rank_agreement(np.zeros((3, 2)), np.zeros((3, 3)))
    r = rank_agreement(np.ones((5, 3)), np.random.default_rng(0).random((5, 3)), B=50)
    assert math.isnan(r.statistic)


def test_correlate_interval_and_undefined_resamples_match_slow_loop():
    """Same draws by loop: scipy's r per resample, undefined where a side is constant; interval within [-1, 1]."""
    x, y = np.array([1.8, 1.2, 3.0, 2.2]), np.array([4.9, 3.4, 3.3, 4.0])
    r = correlate(x, y, "pearson", level=0.9, B=300, seed=2)
    idx = np.random.default_rng(2).integers(0, 4, size=(300, 4))
    boot = np.array([np.nan if np.ptp(x[i]) == 0 or np.ptp(y[i]) == 0 else sps.pearsonr(x[i], y[i]).statistic
                     for i in idx])
    ok = np.isfinite(boot)
    assert r.undefined_resamples == int((~ok).sum()) > 0
    assert (r.ci.low, r.ci.high) == pytest.approx(tuple(np.percentile(np.clip(boot[ok], -1, 1), [5, 95])))
    assert r.statistic == pytest.approx(sps.pearsonr(x, y).statistic)


def test_correlate_interval_never_leaves_minus_one_to_one():
    # the resample (1.8, 4.9), (1.8, 4.9), (1.2, 3.4) has r = 1 exactly; in floating point 1 + 2**-52
    x, y = [1.8, 1.2, 3.0], [4.9, 3.4, 3.3]
    for seed in range(20):
        r = correlate(x, y, "pearson", B=50, seed=seed)
        assert -1.0 <= r.ci.low <= r.ci.high <= 1.0


def test_correlate_counts_no_undefined_resample_when_none_is():
    x = np.arange(30.0)
    r = correlate(x, x**2, "spearman", B=100, seed=0)
    assert r.undefined_resamples == 0 and r.ci.high == 1.0


@pytest.mark.parametrize("scale", [1e80, 1e149, 1e-85, 1e-88])
def test_pearson_interval_does_not_depend_on_the_scale(scale):
    """r has no units; at 1e80 the product of the sums of squares overflowed (interval (0, 0)) and at 1e-85 it
    underflowed (NaN). Found by a statistics probe."""
    rng = np.random.default_rng(1)
    x = rng.random(30)
    y = x + rng.normal(0, 0.2, 30)
    unit = correlate(x, y, "pearson", B=300, seed=0)
    scaled = correlate(x * scale, y * scale, "pearson", B=300, seed=0)
    assert scaled.undefined_resamples == 0
    assert (scaled.ci.low, scaled.ci.high) == pytest.approx((unit.ci.low, unit.ci.high), rel=1e-9)
