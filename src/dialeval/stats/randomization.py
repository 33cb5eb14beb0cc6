"""Randomisation tests: the randomised Tukey HSD over many runs, and the paired test of two runs.

Both test "no difference between runs" by permuting scores within each dialogue (a sign flip of the
difference for two runs). The Tukey HSD compares every pair against the distribution of the largest
difference of run means, which controls the familywise error rate over all pairs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError
from dialeval.stats._common import (
    Seed,
    as_matrix,
    as_vector,
    check_B,
    check_policy,
    seed_label,
    stream_key,
    tie_tolerance,
)
from dialeval.threads import check_threads, default_threads

TUKEY_TEST = "randomised Tukey HSD"
EXACT_MAX_N = 20
"""``paired_randomization_test`` enumerates all ``2**n`` sign flips up to this n (method='auto')."""
_EXACT_LIMIT = 40  # method='exact' is allowed up to here (two halves of 2**20 sums, sorted)
PAIRED_METHODS = ("auto", "exact", "monte-carlo")
_CHUNK_WORK = 50_000_000  # kernel cells (iterations x n x m) per chunk: ~0.05-0.1 s, a progress step
_BAR_WORK = 500_000_000   # auto progress bars from about a second of work


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class TukeyHSD:
    """Result of :func:`randomized_tukey_hsd`.

    Attributes
    ----------
    means : ndarray (m,)
        Observed run means.
    pvalues : ndarray (m, m)
        Familywise-adjusted p-values, symmetric, 1 on the diagonal.
    null : ndarray (B,)
        The permutation distribution of ``max - min`` of the run means, sorted ascending.
    n, B, seed :
        Dialogues (rows), iterations, and the seed (``"generator"`` when a Generator was given).
    """

    means: np.ndarray
    pvalues: np.ndarray
    null: np.ndarray
    n: int
    B: int
    seed: int | str
    test: str = TUKEY_TEST

    @property
    def m(self) -> int:
        return int(self.means.size)

    def to_dict(self) -> dict:
        return {"test": self.test, "n": self.n, "m": self.m, "B": self.B, "seed": self.seed,
                "means": self.means.tolist(), "pvalues": self.pvalues.tolist()}


def _kernel():
    from dialeval.stats._kernels import hsd_chunk  # imported late: numba loads only when a test runs
    return hsd_chunk


def _null(X: np.ndarray, B: int, key: int, kernel: Callable, advance: Callable[[int], object] | None,
          threads: int | None) -> np.ndarray:
    """Run ``kernel(X, key, b0, out[b0:b1])`` over B iterations: chunks of iterations, each split into
    contiguous blocks on ``threads`` threads; ``advance`` after each chunk (iterations x matrices)."""
    from dialeval.stats._kernels import MAX_RUNS
    n, m = X.shape[:2]
    K = X.shape[2] if X.ndim == 3 else 1
    if m > MAX_RUNS:
        raise DialevalError(f"X has {m} runs (columns); the randomised test handles at most {MAX_RUNS}")
    Xc = np.ascontiguousarray(X, dtype=np.float64)
    workers = default_threads() if threads is None else check_threads(threads)
    out = np.empty((B, K) if X.ndim == 3 else B)
    step = max(1, min(B, _CHUNK_WORK // max(n * m * K, 1)))
    k = np.uint64(key)

    def block(lo: int, hi: int) -> None:
        kernel(Xc, k, lo, out[lo:hi])

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for start in range(0, B, step):
            stop = min(B, start + step)
            edges = np.linspace(start, stop, min(workers, stop - start) + 1).astype(int)
            for f in [pool.submit(block, int(lo), int(hi)) for lo, hi in itertools.pairwise(edges)]:
                f.result()
            if advance is not None:
                advance(K * (stop - start))
    return out


def permutation_null(X: np.ndarray, B: int, key: int, advance: Callable[[int], object] | None = None,
                     threads: int | None = None) -> np.ndarray:
    """``max - min`` of the run means under ``B`` within-row permutations of ``X`` (unsorted, in b order).

    Iteration ``b`` uses the random stream of ``(key, b)`` (see :mod:`dialeval.stats._kernels`), so the
    result does not depend on ``threads``. The work is done in chunks of iterations, each split into
    contiguous blocks run on ``threads`` threads, calling ``advance(k)`` after each chunk.
    """
    return _null(X, B, key, _kernel(), advance, threads)


def permutation_null_multi(Xs: np.ndarray, B: int, key: int, advance: Callable[[int], object] | None = None,
                           threads: int | None = None) -> np.ndarray:
    """:func:`permutation_null` of K matrices of one shape at once (``Xs``: n x m x K), a B x K array.

    Column q equals ``permutation_null(Xs[:, :, q], B, key)`` exactly: every matrix gets iteration b's
    permutations of ``key``, drawn once for all of them (:func:`dialeval.stats._kernels.hsd_chunk_multi`).
    ``advance(k)`` counts k iterations of every matrix (``K * iterations``).
    """
    from dialeval.stats._kernels import hsd_chunk_multi
    return _null(Xs, B, key, hsd_chunk_multi, advance, threads)


def pvalues_from_null(means: np.ndarray, null_sorted: np.ndarray, tol: float) -> np.ndarray:
    """``p[i, j] = #{b : null_b >= |means_i - means_j| - tol} / B``; 1 on the diagonal."""
    diff = np.abs(means[:, None] - means[None, :])
    B = null_sorted.size
    count = B - np.searchsorted(null_sorted, diff - tol, side="left")
    p = count / B
    np.fill_diagonal(p, 1.0)
    return p


def auto_progress(progress: bool | None, work: float) -> bool | None:
    """An explicit choice wins; otherwise bars only for work of about a second or more (then: on a tty)."""
    if progress is not None:
        return progress
    return None if work >= _BAR_WORK else False


def tukey_from_matrix(X: np.ndarray, B: int, seed: Seed, advance: Callable[[int], object] | None = None,
                      threads: int | None = None) -> TukeyHSD:
    """:func:`randomized_tukey_hsd` on an already checked matrix, reporting progress through ``advance``."""
    key = stream_key(seed)
    return tukey_from_null(X, permutation_null(X, B, key, advance, threads), seed)


def tukey_from_null(X: np.ndarray, null: np.ndarray, seed: Seed) -> TukeyHSD:
    """The :class:`TukeyHSD` of ``X`` from its permutation null (unsorted, B values)."""
    B = int(null.size)
    null = np.sort(null)
    means = X.mean(axis=0)
    p = pvalues_from_null(means, null, tie_tolerance(X))
    return TukeyHSD(_readonly(means), _readonly(p), _readonly(null), int(X.shape[0]), B, seed_label(seed))


def randomized_tukey_hsd(X: object, B: int = 5000, seed: Seed = 0, *, progress: bool | None = None,
                         threads: int | None = None) -> TukeyHSD:
    """Randomised Tukey HSD test of every pair of runs (Sakai's "Discpower" procedure).

    For ``b = 1..B`` the m scores of every dialogue (row) are permuted independently, the run means
    recomputed and ``hsd_b = max_j mean_j - min_j mean_j`` recorded. For each pair of runs,

        p(i, j) = #{b : hsd_b >= |mean_i - mean_j|} / B

    (differences within ``tie_tolerance(X)`` count as equal: ``TIE_RTOL`` of the spread within topics, so a
    constant added to a topic changes nothing). The p-values control the familywise error rate over all pairs;
    with m = 2 the test is the two-sided paired randomisation test.

    Parameters
    ----------
    X : array_like, shape (n, m)
        Per-dialogue scores: n >= 2 dialogues (rows) x 2 <= m <= 65536 runs (columns), finite.
    B : int >= 1, default 5000
        Iterations (10,000 for publication). The smallest non-zero p-value is 1/B; p = 0 means < 1/B.
    seed : int in [0, 2**64) or numpy.random.Generator
        Iteration b draws only from the stream of (seed, b): the same seed gives the same p-values at any
        thread count (a Generator contributes one 64-bit draw as the seed).
    progress : bool or None
        A progress bar on stderr; None shows one on a terminal when the work takes about a second or more.
    threads : int >= 1 or None
        Threads to run the iterations on (None: ``$DIALEVAL_THREADS``, else every CPU this process may use).
        The result is the same for any number.

    Returns
    -------
    TukeyHSD
        ``.means`` (m,), ``.pvalues`` (m, m) symmetric with 1 on the diagonal, ``.null`` (sorted hsd values),
        ``.n``, ``.B``, ``.seed``. Range of p: [0, 1]; small p = the pair's difference is unlikely under
        exchangeable runs.

    Notes
    -----
    Compiled with numba (a serial kernel without the GIL, run on contiguous blocks of iterations on several
    threads), in chunks of iterations: memory is O(B + n m), never an n x m x B array. The random stream
    is documented in :mod:`dialeval.stats._kernels`.

    Examples
    --------
    >>> import numpy as np
    >>> from dialeval.stats import randomized_tukey_hsd
    >>> X = np.array([[.7, .5, .0], [.3, .1, .0], [.2, .0, .2], [.6, .2, .1], [.4, .4, .3]])
    >>> r = randomized_tukey_hsd(X, B=2000, seed=1)
    >>> r.means.round(2).tolist(), r.pvalues.shape, bool(r.pvalues[0, 2] < r.pvalues[0, 1])
    ([0.44, 0.24, 0.12], (3, 3), True)
    """
    arr = as_matrix(X)
    B = check_B(B)
    n, m = arr.shape
    with _progress.bar(f"{TUKEY_TEST} ({m} runs, B={B})", B,
                       progress=auto_progress(progress, float(B) * n * m)) as bar:
        return tukey_from_matrix(arr, B, seed, bar.advance, threads)


@dataclass(frozen=True)
class PairedRandomization:
    """Result of :func:`paired_randomization_test`: two-sided p of the mean difference ``mean(x - y)``.

    ``method`` is ``"exact"`` (all ``B = 2**n`` sign flips enumerated; ``seed`` None) or ``"monte-carlo"``.
    """

    mean_diff: float
    pvalue: float
    n: int
    method: str
    B: int
    seed: int | str | None

    def to_dict(self) -> dict:
        return {"mean_diff": self.mean_diff, "pvalue": self.pvalue, "n": self.n, "method": self.method,
                "B": self.B, "seed": self.seed}


def sign_flip_sums(d: np.ndarray) -> np.ndarray:
    """All ``2**len(d)`` sums ``sum_i s_i d_i`` with ``s_i = +-1`` (vectorised, doubling per element)."""
    sums = np.zeros(1)
    for v in d:
        sums = np.concatenate([sums + v, sums - v])
    return sums


def exact_sign_flip_count(d: np.ndarray, threshold: float) -> int:
    """How many of the ``2**n`` sign flips give ``|sum_i s_i d_i| >= threshold`` (threshold > 0).

    Meet in the middle: the sums of the two halves of ``d`` are enumerated separately and, for each sum
    ``a`` of the first half, the sorted second-half sums ``b`` with ``a + b >= t`` or ``a + b <= -t`` are
    counted by binary search, in O(2**(n/2) log 2**(n/2)) time and memory.
    """
    half = d.size // 2
    first, second = sign_flip_sums(d[:half]), np.sort(sign_flip_sums(d[half:]))
    upper = second.size - np.searchsorted(second, threshold - first, side="left")
    lower = np.searchsorted(second, -threshold - first, side="right")
    return int(upper.sum() + lower.sum())


def paired_randomization_test(x: object, y: object, B: int | None = None, seed: Seed = 0, *,
                              method: Literal["auto", "exact", "monte-carlo"] = "auto") -> PairedRandomization:
    """Two-sided paired randomisation (sign-flip) test of ``mean(x) = mean(y)``.

    Under the null each difference ``d_i = x_i - y_i`` is as likely to have the other sign, so

        p = #{s in {-1, 1}^n : |sum_i s_i d_i| >= |sum_i d_i|} / 2^n

    counted exactly by enumeration, or estimated from B random sign vectors (the randomised Tukey HSD
    with m = 2, same seed semantics). Differences within ``TIE_RTOL * max|d|`` count as equal.

    Parameters
    ----------
    x, y : sequences of float, same length n >= 2
        Paired per-dialogue scores of two runs.
    B : int >= 1 or None
        Monte Carlo iterations; None means 10,000. Not used by the exact method.
    seed : int or numpy.random.Generator
        Monte Carlo only.
    method : {'auto', 'exact', 'monte-carlo'}, default 'auto'
        'auto' enumerates exactly when n <= 20 and samples otherwise; 'exact' allows n <= 40.

    Returns
    -------
    PairedRandomization
        ``.mean_diff``, ``.pvalue`` in [0, 1], ``.n``, ``.method``, ``.B`` (2**n when exact), ``.seed``.

    Examples
    --------
    >>> from dialeval.stats import paired_randomization_test
    >>> r = paired_randomization_test([.7, .3, .2, .6, .4], [.5, .1, .0, .2, .4])
    >>> r.method, r.B, r.pvalue   # 4 of 5 differences positive, one zero: 4 of 32 flips as extreme
    ('exact', 32, 0.125)
    """
    a, b = as_vector(x, "x"), as_vector(y, "y")
    if a.size != b.size:
        raise DialevalError(f"x has {a.size} values and y {b.size}; a paired test needs them to pair up one to one")
    n = a.size
    if n < 2:
        raise DialevalError(f"{n} pair(s); a paired randomisation test needs at least 2")
    method = check_policy("method", method, PAIRED_METHODS)  # type: ignore[assignment]
    if B is not None:   # checked whichever method runs (the exact one does not use them)
        check_B(B)
    if not isinstance(seed, np.random.Generator):   # (a Generator is not drawn from here)
        stream_key(seed)
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_N else "monte-carlo"
    d = a - b
    mean_diff = float(d.mean())
    if method == "exact":
        if n > _EXACT_LIMIT:
            raise DialevalError(f"method 'exact' enumerates 2**n sign flips and allows n <= {_EXACT_LIMIT}; "
                                f"received n = {n}; use 'monte-carlo'")
        threshold = abs(float(d.sum())) - tie_tolerance(d) * n
        count = 2**n if threshold <= 0 else exact_sign_flip_count(d, threshold)
        return PairedRandomization(mean_diff, count / 2**n, n, "exact", 2**n, None)
    B = check_B(10_000 if B is None else B)
    r = tukey_from_matrix(np.column_stack([a, b]), B, seed)
    return PairedRandomization(mean_diff, float(r.pvalues[0, 1]), n, "monte-carlo", B, r.seed)
