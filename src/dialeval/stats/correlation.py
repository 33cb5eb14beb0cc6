"""Correlation of automatic scores with human judgements, and agreement of two rankings.

Pearson, Spearman and Kendall (tau-b, ties handled) with scipy's p-values and a percentile-bootstrap
interval over the pairs. Missing values (``None`` or NaN, e.g. a rater's ``N/A``) are dropped pairwise and the
number of pairs used is reported.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from dialeval.errors import DialevalError, describe
from dialeval.stats._common import (
    Interval,
    Seed,
    as_generator,
    as_matrix,
    as_vector,
    bca_interval,
    check_B,
    check_level,
    percentile_interval,
    seed_label,
    snap_ties,
    tie_tolerance,
    unit_scaled,
)
from dialeval.stats.bootstrap import bootstrap_column_means

MIN_PAIRS = 3
"""The fewest pairs (without a missing value) :func:`correlate` correlates."""

METHODS = ("pearson", "spearman", "kendall")
Method = Literal["pearson", "spearman", "kendall"]
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value, bootstrap interval and the pairs it used."""

    method: str
    statistic: float
    pvalue: float
    ci: Interval
    n: int          # pairs used
    n_dropped: int  # pairs dropped because a value was missing
    B: int
    seed: int | str
    undefined_resamples: int = 0  # bootstrap resamples where the coefficient is undefined, left out of ``ci``

    def to_dict(self) -> dict:
        return asdict(self)


def _clipped(ci: Interval) -> Interval:
    """``ci`` with its bounds clipped to a coefficient's range [-1, 1] (rounding can put them just outside)."""
    if not (np.isfinite(ci.low) and np.isfinite(ci.high)):
        return ci
    return Interval(min(max(ci.low, -1.0), 1.0), min(max(ci.high, -1.0), 1.0), ci.level, ci.method)


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    am = a - a.mean(axis=1, keepdims=True)
    bm = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((am * am).sum(axis=1)) * np.sqrt((bm * bm).sum(axis=1))  # a product of the sums overflowed
    num = (am * bm).sum(axis=1)
    return np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)


def kendall_rows_pairs(samples: list[np.ndarray], pairs: list[tuple[int, int]]) -> np.ndarray:
    """Tau-b, row by row, between ``samples[a]`` and ``samples[b]`` for each ``(a, b)`` in ``pairs``.

    ``samples`` are R x n arrays (e.g. bootstrap replicates of n run means). For one row:
    ``sum sgn(dx) sgn(dy) / sqrt(sum sgn(dx)^2 * sum sgn(dy)^2)`` over the item pairs i < j (NaN where a row
    is constant). Returns R x len(pairs).

    The sums of sign products of every pair of samples are one matrix product per row: the Gram matrix of the
    samples' sign vectors, whose diagonal counts each sample's untied pairs. The signs are taken over all
    ordered pairs (i, j), by broadcasting, which counts each pair twice in every sum and leaves tau as it is
    (exactly: the sums are integers, exact in floats); rows and items are taken in chunks of
    ``_CHUNK_CELLS`` signs. Cost: R n^2 S (S + 1) for S samples, in BLAS (it was R n^2 per pair of samples, in
    numpy's elementwise loops: compare with 400 runs spent 105 of its 151 s here).
    """
    R, n = samples[0].shape
    stack = np.stack(samples, axis=1)                                  # R x S x n
    S = stack.shape[1]
    a_idx = np.array([a for a, _ in pairs], dtype=np.intp)
    b_idx = np.array([b for _, b in pairs], dtype=np.intp)
    out = np.empty((R, len(pairs)))
    step = max(1, _CHUNK_CELLS // max(S * n * n, 1))                   # rows at once
    block = max(1, min(n, _CHUNK_CELLS // max(S * n, 1)))              # items i at once, within one row
    for start in range(0, R, step):
        x = stack[start:start + step]
        gram = np.zeros((len(x), S, S))
        for i in range(0, n, block):   # signs as float32: a block's sums are integers below 2**24, exact
            xi, xj = x[:, :, i:i + block, None], x[:, :, None, :]
            signs = ((xi > xj).view(np.int8) - (xi < xj).view(np.int8)).reshape(len(x), S, -1).astype(np.float32)
            gram += signs @ signs.transpose(0, 2, 1)
        counts = np.diagonal(gram, axis1=1, axis2=2)
        num = gram[:, a_idx, b_idx]
        den = np.sqrt(counts[:, a_idx] * counts[:, b_idx])
        out[start:start + step] = np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0)
    return out


def _kendall_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tau-b of each row pair of ``a`` and ``b`` (see :func:`kendall_rows_pairs`)."""
    return kendall_rows_pairs([a, b], [(0, 1)])[:, 0]


def _statistic_rows(method: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy import stats as sps  # imported here: keeps `import dialeval` and the CLI fast
    if method == "pearson":
        return _pearson_rows(a, b)
    if method == "spearman":
        return _pearson_rows(sps.rankdata(a, axis=1), sps.rankdata(b, axis=1))
    if a.shape[1] <= 400:
        return _kendall_rows(a, b)
    return np.array([sps.kendalltau(x, y).statistic for x, y in zip(a, b, strict=True)])


def _bootstrap(method: str, x: np.ndarray, y: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    n = x.size
    cells = n * (n - 1) // 2 if method == "kendall" else n
    step = max(1, _CHUNK_CELLS // max(cells, 1))
    out = np.empty(B)
    for start in range(0, B, step):
        stop = min(B, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = _statistic_rows(method, x[idx], y[idx])
    return np.clip(out, -1.0, 1.0, out=out)  # rounding: Pearson's r of a 2-point resample can be 1 + 2**-52


def correlate(auto: object, human: object, method: Method = "pearson", *, level: float = 0.95,
              B: int = 2000, seed: Seed = 0, on_constant: Literal["nan", "raise"] = "nan") -> Correlation:
    """Correlation between automatic scores and human judgements, with p-value and bootstrap interval.

    Pairs where either value is missing (``None`` or NaN) are dropped; ``n`` and ``n_dropped`` say how many
    were used and dropped. ``statistic`` is Pearson's r, Spearman's rho or Kendall's tau-b (ties handled);
    ``pvalue`` is scipy's two-sided p-value for no correlation. ``ci`` is the percentile interval of the
    statistic over ``B`` bootstrap resamples of the pairs, within [-1, 1]; resamples where the statistic is
    undefined (one side constant within the resample, likely with few pairs) are left out of it and counted in
    ``undefined_resamples``. With few pairs (n < 10 or so) the resamples hold few distinct pairs, their
    coefficients pile up at -1 and 1, and the percentile interval can leave out the estimate.

    Range [-1, 1]; 1 = same order/linear relation, 0 = none, -1 = reversed.

    Parameters
    ----------
    auto, human : sequences of float or None, same length
    method : {'pearson', 'spearman', 'kendall'}
    level : float in (0, 1), default 0.95
    B : int >= 1, default 2000
    seed : int >= 0 or numpy.random.Generator
    on_constant : {'nan', 'raise'}, default 'nan'
        A constant input leaves every coefficient undefined: return NaN (with NaN p-value and interval)
        or raise :class:`~dialeval.DialevalError`.

    Examples
    --------
    >>> from dialeval.stats import correlate
    >>> r = correlate([1, 2, 3, 4, None], [1.1, 1.9, 3.2, 3.9, 5], "pearson", seed=0)
    >>> round(r.statistic, 3), r.n, r.n_dropped
    (0.993, 4, 1)
    """
    if not isinstance(method, str) or method not in METHODS:
        raise DialevalError(f"correlation method {describe(method)} is not allowed; allowed are "
                            + ", ".join(METHODS))
    if on_constant not in ("nan", "raise"):
        raise DialevalError(f"on_constant {describe(on_constant)} is not allowed; allowed are 'nan', 'raise'")
    level = check_level(level)
    B = check_B(B, level=level)
    x = as_vector(auto, "auto", allow_missing=True)
    y = as_vector(human, "human", allow_missing=True)
    if x.size != y.size:
        raise DialevalError(f"auto has {x.size} values and human {y.size}; they must pair up one to one")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n, dropped = int(keep.sum()), int((~keep).sum())
    if n < MIN_PAIRS:
        raise DialevalError(f"{n} usable pair(s) after dropping {dropped} with a missing value; a correlation "
                            f"needs at least {MIN_PAIRS}")
    ci_method = "percentile bootstrap over pairs"
    x, y = unit_scaled(x)[0], unit_scaled(y)[0]   # no units: tiny values' squares must not underflow
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        if on_constant == "raise":
            which = "auto" if np.ptp(x) == 0 else "human"
            raise DialevalError(f"{which} is constant over the {n} pairs; the {method} correlation is undefined")
        nan = float("nan")
        return Correlation(method, nan, nan, Interval(nan, nan, level, ci_method), n, dropped, B,
                           seed_label(seed))
    from scipy import stats as sps  # imported here: keeps `import dialeval` and the CLI fast
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}[method]
        res = fn(x, y)
    samples = _bootstrap(method, x, y, B, as_generator(seed))
    return Correlation(method, float(res.statistic), float(res.pvalue),
                       _clipped(percentile_interval(samples, level, ci_method)), n, dropped, B, seed_label(seed),
                       int(np.count_nonzero(~np.isfinite(samples))))


def kendall_tau(a: object, b: object, *, level: float = 0.95, B: int = 2000, seed: Seed = 0) -> Correlation:
    """Kendall's tau-b between two scorings of the same items (e.g. run means under two measures).

    tau_b = sum_{i<j} sgn(a_i - a_j) sgn(b_i - b_j) / sqrt(n_a n_b), where n_a, n_b count the pairs not tied
    in a, in b. The rankings induced by the scores are compared, so the direction of each score does not
    matter as long as both share it. The interval is a percentile bootstrap over the items (say so in
    reports: ``ci.method``).

    Examples
    --------
    >>> from dialeval.stats import kendall_tau
    >>> round(kendall_tau([0.1, 0.2, 0.3, 0.4], [0.15, 0.1, 0.35, 0.5], seed=0).statistic, 4)
    0.6667
    """
    return correlate(a, b, "kendall", level=level, B=B, seed=seed)


RANK_AGREEMENT_CI = ("BCa bootstrap over dialogues (dialogues resampled, both measures' run means recomputed; "
                     "acceleration from the jackknife over dialogues)")


def jackknife_means(X: np.ndarray) -> np.ndarray:
    """Column means of ``X`` (n x c) with each row left out in turn: an n x c array."""
    n = X.shape[0]
    return (X.sum(axis=0)[None, :] - X) / (n - 1)


def tau_from_bootstrap(first: np.ndarray, second: np.ndarray, replicates: np.ndarray, jackknife: np.ndarray,
                       level: float, B: int, seed: int | str) -> Correlation:
    """Kendall's tau-b of two vectors of run means with the BCa interval of its bootstrap ``replicates``.

    ``replicates`` are tau-b between the two measures' run means on each resample of the dialogues,
    ``jackknife`` the same with each dialogue left out in turn (see :func:`rank_agreement`); the p-value
    is scipy's ``kendalltau`` test for the m observed means, computed by :func:`dialeval.stats.kendall.kendall_b`
    (no ``scipy.stats`` import: 0.9 s of ``dialeval compare``).
    """
    from dialeval.stats.kendall import kendall_b

    m = first.size
    nan = float("nan")
    if np.ptp(first) == 0 or np.ptp(second) == 0:
        return Correlation("kendall", nan, nan, Interval(nan, nan, level, RANK_AGREEMENT_CI), m, 0, B, seed)
    res = kendall_b(first, second)
    ci = _clipped(bca_interval(replicates, res.tau, jackknife, level, RANK_AGREEMENT_CI))
    return Correlation("kendall", res.tau, res.pvalue, ci, m, 0, B, seed,
                       int(np.count_nonzero(~np.isfinite(replicates))))


def rank_agreement(first: object, second: object, *, level: float = 0.95, B: int = 2000,
                   seed: Seed = 0) -> Correlation:
    """Kendall's tau-b between the rankings of m runs by two measures, with a bootstrap-over-dialogues interval.

    ``first`` and ``second`` are n x m per-dialogue scores (dialogues x runs, same rows and runs) under two
    measures. The statistic is tau-b between the two vectors of run means (see :func:`kendall_tau`); the
    interval resamples the n dialogues with replacement ``B`` times, recomputes both measures' run means
    on each resample and takes the BCa interval of tau-b (bias-corrected: resampling adds noise to the
    means and so pulls tau down, which a plain percentile interval would carry; accelerated: from the
    jackknife over dialogues). Resampling dialogues keeps the pairing of the two measures on the same
    dialogues, which resampling the m runs would not. ``n`` in the result is m.

    Range [-1, 1]; 1 = the measures rank the runs alike. Both measures must share a direction (e.g. both
    lower-is-better), else negate one.

    Examples
    --------
    >>> import numpy as np
    >>> from dialeval.stats import rank_agreement
    >>> rng = np.random.default_rng(0)
    >>> a = rng.random((50, 4)) + [0.0, 0.1, 0.2, 0.3]
    >>> r = rank_agreement(a, a + rng.normal(0, 0.01, a.shape), B=500, seed=0)
    >>> r.statistic, r.n, r.ci.high
    (1.0, 4, 1.0)
    """
    a, b = as_matrix(first, "first"), as_matrix(second, "second")
    if a.shape != b.shape:
        raise DialevalError(f"first has shape {a.shape} and second {b.shape}; both must be the same dialogues "
                            "x runs")
    level = check_level(level)
    B = check_B(B, level=level)
    m = a.shape[1]
    ta, tb = tie_tolerance(a), tie_tolerance(b)  # means equal but for rounding are ties (:func:`snap_ties`)
    boot = bootstrap_column_means(np.hstack([a, b]), B, as_generator(seed))
    jack = jackknife_means(np.hstack([a, b]))
    return tau_from_bootstrap(snap_ties(a.mean(axis=0), ta), snap_ties(b.mean(axis=0), tb),
                              _kendall_rows(snap_ties(boot[:, :m], ta), snap_ties(boot[:, m:], tb)),
                              _kendall_rows(snap_ties(jack[:, :m], ta), snap_ties(jack[:, m:], tb)),
                              level, B, seed_label(seed))
