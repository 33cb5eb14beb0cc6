"""The multi-measure Tukey kernel (issue 16 item 10, speed) gives each measure's null bit for bit."""

from __future__ import annotations

import numpy as np

from dialeval.stats import compare_measures, randomized_tukey_hsd
from dialeval.stats.randomization import permutation_null, permutation_null_multi


def test_multi_equals_one_call_per_measure():
    Xs = np.random.default_rng(3).random((37, 11, 4))
    multi = permutation_null_multi(Xs, 257, 99, threads=2)
    for q in range(4):
        assert np.array_equal(multi[:, q], permutation_null(np.ascontiguousarray(Xs[:, :, q]), 257, 99, threads=1))


def test_compare_measures_pvalues_unchanged():
    rng = np.random.default_rng(5)
    mats = {"a": rng.random((30, 6)), "b": rng.random((30, 6))}
    c = compare_measures(mats, [f"r{i}" for i in range(6)], B=300, seed=4)
    for name, X in mats.items():
        ref = randomized_tukey_hsd(X, B=300, seed=4)
        assert np.array_equal(c.measure(name).tukey.pvalues, ref.pvalues)
