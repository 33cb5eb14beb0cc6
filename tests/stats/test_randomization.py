"""Randomised Tukey HSD and the paired randomisation test against slow references and enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dialeval import DialevalError
from dialeval.stats import paired_randomization_test, randomized_tukey_hsd
from dialeval.stats import randomization as rz

M64 = (1 << 64) - 1
GAMMA, C1, C2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * C1) & M64
    z = ((z ^ (z >> 27)) * C2) & M64
    return z ^ (z >> 31)


class _Stream:
    """The random streams of iteration b documented in dialeval.stats._kernels, in plain Python."""

    def __init__(self, key: int, b: int) -> None:
        self.state = _mix(key ^ _mix(((b + 1) * GAMMA) & M64))
        self.rstate = _mix(self.state ^ GAMMA)

    def output(self) -> int:
        self.state = (self.state + GAMMA) & M64
        return _mix(self.state)

    def row_draws(self, m: int) -> list[int]:
        """j for k = 1..m-1 of one row."""
        out = []
        for k0 in range(1, m, 4):
            z = self.output()
            for q in range(4):
                k = k0 + q
                if k >= m:
                    break
                s = k + 1
                prod = ((z >> (16 * q)) & 0xFFFF) * s
                while (prod & 0xFFFF) < (65536 - s) % s:
                    self.rstate = (self.rstate + GAMMA) & M64
                    prod = (_mix(self.rstate) & 0xFFFF) * s
                out.append(prod >> 16)
        return out


def _reference_null(X: np.ndarray, B: int, key: int) -> np.ndarray:
    """Slow loop with the kernel's seed semantics: iteration b permutes every row from the streams of (key, b)."""
    n, m = X.shape
    out = []
    for b in range(B):
        st = _Stream(key, b)
        sums = [0.0] * m
        for i in range(n):
            row = [0.0] * m
            row[0] = X[i, 0]
            for k, j in enumerate(st.row_draws(m), start=1):
                row[k] = row[j]
                row[j] = X[i, k]
            for k in range(m):
                sums[k] += row[k]
        out.append((max(sums) - min(sums)) / n)
    return np.array(out)


def _numpy_reference_pvalues(X: np.ndarray, B: int, seed: int) -> np.ndarray:
    """An independent slow loop (numpy's own generator): permute every row, recompute means, max - min."""
    rng = np.random.default_rng(seed)
    means = X.mean(axis=0)
    hsd = np.empty(B)
    for b in range(B):
        P = np.array([rng.permutation(row) for row in X])
        mm = P.mean(axis=0)
        hsd[b] = mm.max() - mm.min()
    diff = np.abs(means[:, None] - means[None, :])
    return (hsd[None, None, :] >= diff[:, :, None] - 1e-12).mean(axis=2)


def _mc_close(p1, p2, B1, B2, sds=4.5):
    p = np.clip((np.asarray(p1) + np.asarray(p2)) / 2, 1e-3, 1 - 1e-3)
    se = np.sqrt(p * (1 - p) * (1 / B1 + 1 / B2))
    return np.all(np.abs(np.asarray(p1) - np.asarray(p2)) <= sds * se + 2.0 / min(B1, B2))


def test_kernel_follows_documented_stream():
    X = np.random.default_rng(3).random((7, 5))
    key = 12345678901234567890
    assert np.array_equal(rz.permutation_null(X, 60, key), _reference_null(X, 60, key))


def test_kernel_stream_with_many_runs():
    # draws up to s = 1000 take the rare rejection branch (probability < s / 2**16) many times
    X = np.random.default_rng(4).random((2, 1000))
    st = _Stream(99, 0)
    first = st.rstate
    st.row_draws(1000)
    assert st.rstate != first  # the secondary stream was used in iteration 0
    assert np.array_equal(rz.permutation_null(X, 10, 99), _reference_null(X, 10, 99))


def test_pvalues_agree_with_independent_reference(runs_matrix):
    X = runs_matrix[:25]
    r = randomized_tukey_hsd(X, B=20000, seed=5)
    ref = _numpy_reference_pvalues(X, 2000, seed=5)
    assert _mc_close(r.pvalues, ref, 20000, 2000)


def test_structure_and_monotonicity(runs_matrix):
    r = randomized_tukey_hsd(runs_matrix, B=2000, seed=0)
    p = r.pvalues
    assert p.shape == (5, 5) and np.array_equal(p, p.T) and np.all(np.diag(p) == 1)
    assert np.all((p >= 0) & (p <= 1))
    d = np.abs(r.means[:, None] - r.means[None, :])
    iu = np.triu_indices(5, 1)
    order = np.argsort(d[iu])
    assert np.all(np.diff(p[iu][order]) <= 0)  # a larger difference never has a larger p
    assert np.allclose(r.means, runs_matrix.mean(axis=0))
    assert np.all(np.diff(r.null) >= 0) and r.null.size == 2000
    assert (r.B, r.seed, r.n) == (2000, 0, 60)


def test_deterministic_at_any_thread_count(runs_matrix, monkeypatch):
    a = randomized_tukey_hsd(runs_matrix, B=3000, seed=11, threads=2)
    b = randomized_tukey_hsd(runs_matrix, B=3000, seed=11, threads=1)
    assert np.array_equal(randomized_tukey_hsd(runs_matrix, B=3000, seed=11, threads=7).null, a.null)
    monkeypatch.setattr(rz, "_CHUNK_WORK", 1000)  # many small chunks
    c = randomized_tukey_hsd(runs_matrix, B=3000, seed=11)
    assert np.array_equal(a.pvalues, b.pvalues) and np.array_equal(a.null, b.null)
    assert np.array_equal(a.null, c.null)
    assert not np.array_equal(a.null, randomized_tukey_hsd(runs_matrix, B=3000, seed=12).null)


def test_threads_argument_and_environment(runs_matrix, monkeypatch):
    monkeypatch.delenv("DIALEVAL_THREADS", raising=False)
    assert rz.default_threads() >= 1
    monkeypatch.setenv("DIALEVAL_THREADS", "3")
    assert rz.default_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("DIALEVAL_THREADS", bad)
        with pytest.raises(DialevalError, match=r"threads = .* is not allowed"):
            randomized_tukey_hsd(runs_matrix, B=10, seed=0)
    monkeypatch.delenv("DIALEVAL_THREADS")
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(DialevalError, match=r"threads = .* is not allowed"):
            randomized_tukey_hsd(runs_matrix, B=10, seed=0, threads=bad)
    # more threads than iterations: every block is non-empty, the result unchanged
    assert np.array_equal(randomized_tukey_hsd(runs_matrix, B=3, seed=0, threads=8).null,
                          randomized_tukey_hsd(runs_matrix, B=3, seed=0, threads=1).null)


def test_generator_seed(runs_matrix):
    r1 = randomized_tukey_hsd(runs_matrix, B=500, seed=np.random.default_rng(1))
    r2 = randomized_tukey_hsd(runs_matrix, B=500, seed=np.random.default_rng(1))
    assert r1.seed == "generator" and np.array_equal(r1.null, r2.null)


def test_identical_runs_have_p_one():
    X = np.tile(np.linspace(0, 1, 10)[:, None], (1, 3))
    assert np.all(randomized_tukey_hsd(X, B=200, seed=0).pvalues == 1)


@pytest.mark.parametrize("kwargs, match", [
    ({"B": 0}, "B = 0 is not allowed"),
    ({"B": 1.5}, "B = 1.5 is not allowed"),
    ({"seed": -1}, "seed -1 is not allowed"),
    ({"seed": "x"}, "seed 'x' is not allowed"),
])
def test_tukey_validation(runs_matrix, kwargs, match):
    with pytest.raises(DialevalError, match=match):
        randomized_tukey_hsd(runs_matrix, **kwargs)


def _brute_force_p(d: np.ndarray) -> float:
    t = abs(d.sum())
    flips = [abs(np.dot(s, d)) >= t - 1e-12 for s in itertools.product((1, -1), repeat=d.size)]
    return sum(flips) / 2**d.size


@pytest.mark.parametrize("n", [2, 5, 9, 12])
def test_exact_paired_equals_enumeration(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, n) / 4  # coarse values: ties and zero differences
    y = rng.integers(0, 5, n) / 4
    r = paired_randomization_test(x, y)
    assert (r.method, r.B, r.seed) == ("exact", 2**n, None)
    assert r.pvalue == _brute_force_p(x - y)
    assert r.mean_diff == pytest.approx((x - y).mean())


def test_exact_paired_textbook(textbook):
    r = paired_randomization_test(textbook[:, 0], textbook[:, 1])
    assert r.method == "exact" and r.n == 20
    # the randomised test agrees with the t-test's 0.048 to about its resolution on the textbook data
    assert 0.03 < r.pvalue < 0.07


def test_tukey_with_two_runs_is_the_paired_test(textbook):
    X = textbook[:, :2]
    exact = paired_randomization_test(X[:, 0], X[:, 1]).pvalue
    tukey = randomized_tukey_hsd(X, B=40000, seed=3).pvalues[0, 1]
    se = np.sqrt(exact * (1 - exact) / 40000)
    assert abs(tukey - exact) <= 4.5 * se


def test_monte_carlo_paired(runs_matrix):
    x, y = runs_matrix[:, 0], runs_matrix[:, 1]
    r = paired_randomization_test(x, y, B=20000, seed=1)
    assert r.method == "monte-carlo" and r.B == 20000 and r.seed == 1
    d = x - y
    rng = np.random.default_rng(0)
    signs = rng.choice([-1.0, 1.0], size=(20000, d.size))
    ref = float((np.abs(signs @ d) >= abs(d.sum()) - 1e-12).mean())
    assert _mc_close(r.pvalue, ref, 20000, 20000)
    assert paired_randomization_test(x, y, B=500, seed=4) == paired_randomization_test(x, y, B=500, seed=4)


def test_exact_on_request_and_limits(runs_matrix):
    x, y = runs_matrix[:24, 0], runs_matrix[:24, 1]
    assert paired_randomization_test(x, y, method="exact").B == 2**24
    with pytest.raises(DialevalError, match="allows n <= 40"):
        paired_randomization_test(runs_matrix[:, 0], runs_matrix[:, 1], method="exact")
    with pytest.raises(DialevalError, match="method 'fast' is not allowed"):
        paired_randomization_test(x, y, method="fast")
    with pytest.raises(DialevalError, match="x has 24 values and y 3"):
        paired_randomization_test(x, [1, 2, 3])


def test_zero_difference_has_p_one():
    assert paired_randomization_test([1, 2, 3], [1, 2, 3]).pvalue == 1.0


def test_concurrent_callers_get_the_same_answer(runs_matrix):
    from concurrent.futures import ThreadPoolExecutor

    expected = randomized_tukey_hsd(runs_matrix, B=800, seed=21).pvalues
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: randomized_tukey_hsd(runs_matrix, B=800, seed=21).pvalues, range(8)))
    assert all(np.array_equal(r, expected) for r in results)
