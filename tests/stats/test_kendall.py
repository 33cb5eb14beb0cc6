"""Kendall's tau-b test without scipy.stats (dialeval.stats.kendall): equal to scipy's kendalltau (its
defaults), exact null counts against brute force, and `dialeval compare`'s statistics import no scipy.stats."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from dialeval.stats.kendall import EXACT_MAX_N, inversions_at_most, kendall_b


@pytest.mark.parametrize("n", range(1, 8))
def test_inversion_counts_by_brute_force(n):
    inv = [sum(p[i] > p[j] for i in range(n) for j in range(i + 1, n)) for p in itertools.permutations(range(n))]
    for c in range(n * (n - 1) // 2 + 1):
        assert inversions_at_most(n, c) == sum(k <= c for k in inv)
    assert inversions_at_most(n, n * (n - 1) // 2) == math.factorial(n)


def _cases(seed: int):
    rng = np.random.default_rng(seed)
    for i in range(600):
        n = int(rng.integers(2, 70))
        kind = i % 5
        if kind == 0:                                     # continuous, correlated
            x = rng.random(n)
            y = x + rng.normal(0, rng.uniform(0.01, 1), n)
        elif kind == 1:                                   # many ties on both sides
            x = rng.integers(0, 4, n).astype(float)
            y = x + rng.integers(-2, 3, n)
        elif kind == 2:                                   # one swap from perfect: the exact branch at any n
            x = np.arange(n, dtype=float)
            y = x.copy()
            j = int(rng.integers(0, n - 1))
            y[j], y[j + 1] = y[j + 1], y[j]
            y = -y if rng.random() < 0.5 else y
        elif kind == 3:                                   # independent
            x, y = rng.random(n), rng.random(n)
        else:                                             # ties on one side only
            x, y = rng.random(n), rng.integers(0, 3, n).astype(float)
        yield x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_scipy_kendalltau(seed):
    for x, y in _cases(seed):
        ref, got = sps.kendalltau(x, y), kendall_b(x, y)
        if np.isnan(ref.statistic):
            assert np.isnan(got.tau) and np.isnan(got.pvalue)
            continue
        if abs(ref.statistic) > 1 - 1e-12:                # perfect (dis)agreement: exactly +-1 (scipy: 1 - ulps)
            assert got.tau == round(ref.statistic)
            continue
        assert got.tau == ref.statistic                   # the same integer counts, the same float operations
        assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-300)


def test_exact_and_asymptotic_branches_and_bounds():
    x = np.arange(EXACT_MAX_N + 1.0)
    assert kendall_b(x, x).pvalue == pytest.approx(2 / math.factorial(EXACT_MAX_N + 1))    # exact: perfect order
    assert kendall_b([1, 2, 3, 4], [4, 3, 2, 1]).tau == -1.0
    assert kendall_b([1, 2, 3, 4], [1, 3, 2, 4]).pvalue == pytest.approx(2 * 4 / 24)      # c = 1: 4 of 24 perms
    assert kendall_b([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]).pvalue <= 1.0
    assert np.isnan(kendall_b([1, 1, 1], [1, 2, 3]).tau)
    with pytest.raises(ValueError, match="same length"):
        kendall_b([1, 2], [1, 2, 3])


def test_compare_statistics_do_not_import_scipy_stats():
    code = ("import sys, numpy as np; from dialeval.stats import compare_measures; "
            "X = np.random.default_rng(0).random((30, 6)); "
            "compare_measures({'quality.nmd.A': X, 'nugget.jsd': X ** 2}, list('abcdef'), B=200); "
            "from dialeval.stats import paired_t_test; paired_t_test(X[:, 0], X[:, 1]); "
            "print('scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_perfect_agreement_is_exactly_one():
    """scipy's two divisions give 0.9999999999999998 for 8 items in the same order; tau-b is 1 by definition."""
    for n in range(2, 40):
        x = np.arange(n, dtype=float)
        assert kendall_b(x, x).tau == 1.0 and kendall_b(x, -x).tau == -1.0
    ties = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 6.0])
    assert kendall_b(ties, ties).tau == 1.0
