"""Small pieces every statistical procedure shares: seeds, input vectors, result intervals."""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from dialeval.errors import DialevalError, DialevalWarning, describe, refused

Seed = int | np.random.Generator


def as_generator(seed: Seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an explicit integer seed (or a Generator, used as is).

    There is no default: every random procedure in dialeval is reproducible by its caller.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise refused("seed", seed, "integers >= 0 (or, in Python, a numpy.random.Generator)")
    return np.random.default_rng(int(seed))


def seed_label(seed: Seed) -> int | str:
    """What a report prints for the seed it was given."""
    return "generator" if isinstance(seed, np.random.Generator) else int(seed)


def stream_key(seed: Seed) -> int:
    """The 64-bit key of a counter-based random stream: the seed itself, or one draw from a Generator.

    Procedures that run in parallel (:func:`~dialeval.stats.randomized_tukey_hsd`) derive the random
    numbers of iteration ``b`` from ``(key, b)`` alone, so the answer does not depend on the thread count.
    """
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**64, dtype=np.uint64))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**64:
        raise refused("seed", seed, "integers in [0, 2**64) (or, in Python, a numpy.random.Generator)")
    return int(seed)


TIE_RTOL = 1e-9
"""Differences of means closer than ``TIE_RTOL`` times the data's spread count as equal in randomisation tests,
so that floating-point rounding never turns a tie (e.g. the identity permutation) into a strict inequality."""


def tie_tolerance(X: np.ndarray) -> float:
    """The absolute tolerance for "at least as extreme" comparisons of means of ``X``: ``TIE_RTOL`` times its
    spread (a matrix's largest distance from its row's mean, so a constant added to a topic changes nothing; a
    vector's largest value), and never below what rounding can do (:func:`rounding_bound`).

    >>> X = np.array([[0.1, 0.3], [0.2, 0.6]])
    >>> float(f"{tie_tolerance(X):.3g}"), float(f"{tie_tolerance(X + 1e7):.3g}")  # the spread, then rounding's
    (2e-10, 4.44e-09)
    """
    if not X.size:
        return 0.0
    spread = X - X.mean(axis=1, keepdims=True) if X.ndim == 2 else X
    return max(TIE_RTOL * float(np.max(np.abs(spread))), rounding_bound(X))


def snap_ties(values: np.ndarray, tol: float | np.ndarray) -> np.ndarray:
    """``values`` (along the last axis) with each chain of values whose sorted neighbours lie within ``tol`` of
    each other set to the chain's smallest: means that are equal in exact arithmetic but not after rounding
    (0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1) then tie in ranks and in Kendall's tau. ``tol`` is one tolerance, or
    one per row of a 2-D ``values`` (shape (rows, 1)), e.g. :func:`tie_tolerance` of each measure's scores.

    >>> snap_ties(np.array([0.2 + 4e-17, 0.5, 0.2 - 3e-17]), 1e-12).tolist()
    [0.19999999999999998, 0.5, 0.19999999999999998]
    """
    if values.shape[-1] < 2:
        return values
    if (np.diff(np.sort(values, axis=-1), axis=-1) > tol).all():   # no two within tol: the usual case, as they are
        return values
    order = np.argsort(values, axis=-1, kind="stable")
    ranked = np.take_along_axis(values, order, axis=-1)
    first = np.ones((*ranked.shape[:-1], 1), dtype=bool)
    starts = np.concatenate([first, np.diff(ranked, axis=-1) > tol], axis=-1)
    at = np.maximum.accumulate(np.where(starts, np.arange(ranked.shape[-1]), 0), axis=-1)
    out = np.empty_like(values)
    np.put_along_axis(out, order, np.take_along_axis(ranked, at, axis=-1), axis=-1)
    return out


def rounding_bound(X: np.ndarray) -> float:
    """How far rounding can move a sum's mean, or a difference of two, of ``X``'s values: ``len(X) * eps *
    max|X|`` (numpy's pairwise sum of n values is off by far less than n units in the last place of the largest).
    """
    return len(X) * float(np.finfo(np.float64).eps) * float(np.max(np.abs(X))) if X.size else 0.0


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < float(level) < 1.0:
        raise refused("confidence level", level, "numbers in (0, 1), e.g. 0.95")
    return float(level)


MAX_B = 10_000_000
"""The most resamples a procedure takes: each keeps a number per resample (10 million: 80 MB); 10**14 asked for
728 TiB and ended in a MemoryError."""


class ResamplingWarning(DialevalWarning):
    """Too few resamples (``B``) for the confidence level or significance level asked: the result is not the
    quantile or the decision it claims to be (see :func:`check_B`)."""


def check_B(B: int, *, minimum: int = 1, level: float | None = None, alpha: float | None = None) -> int:
    """``B`` checked: an integer >= ``minimum``; a :class:`ResamplingWarning` when it cannot resolve what is asked.

    Two closed-form rules, the points where a result stops meaning what it says:

    - an interval at confidence ``level`` from ``B`` resamples has on average ``B (1 - level) / 2`` resamples
      beyond each end; below 1, its ends are the most extreme resamples, not quantiles
      (``B < 2 / (1 - level)``: 40 at 0.95, 200 at 0.99);
    - a p-value counted over ``B`` random draws is a multiple of ``1 / B``, and 0 means below ``1 / B``; when
      ``1 / B > alpha`` even p = 0 does not say ``p < alpha`` (``B < 1 / alpha``: below 20 at 0.05), and
      :func:`decisive` is False.

    These are floors, not recommendations: 1,000 or more resamples are usual for 95% intervals, and p-values
    near ``alpha`` have a Monte Carlo error of about ``sqrt(alpha (1 - alpha) / B)``.
    """
    if isinstance(B, bool) or not isinstance(B, int | np.integer) or not minimum <= B <= MAX_B:
        raise refused("B =", B, f"integers {minimum} to {MAX_B:,} (1,000 to 100,000 are usual)")
    B = int(B)
    for problem in resampling_problems(B, level=level, alpha=alpha):
        warnings.warn(problem, ResamplingWarning, stacklevel=3)
    return B


def resampling_problems(B: int, *, level: float | None = None, alpha: float | None = None) -> list[str]:
    """What ``B`` resamples cannot resolve at this ``level`` and ``alpha`` (:func:`check_B`'s two rules), as
    sentences; ``[]`` when nothing. A report lists them beside its tables.

    >>> resampling_problems(1000, level=0.95, alpha=0.05)
    []
    >>> len(resampling_problems(10, level=0.95, alpha=0.05))
    2
    """
    out = []
    if level is not None and B * (1.0 - level) / 2.0 < 1.0:
        need = math.ceil(round(2.0 / (1.0 - level), 9))
        out.append(f"B = {B} resamples leave {B * (1.0 - level) / 2.0:.2g} on average beyond each end of a "
                   f"{level:g} interval, so its ends are the most extreme resamples, not quantiles; use B >= "
                   f"{need} (1,000 or more is usual)")
    if alpha is not None and not decisive(B, alpha):
        need = math.ceil(round(1.0 / alpha, 9))
        out.append(f"B = {B}: p-values are multiples of 1/B = {1.0 / B:.2g}, so p = 0 says only p < {1.0 / B:.2g}, "
                   f"not p < alpha = {alpha:g}: no pair is called significant; use B >= {need} (1,000 or more is "
                   "usual)")
    return out


def decisive(B: int, alpha: float) -> bool:
    """Whether a p-value counted over ``B`` random draws (a multiple of ``1/B``, 0 meaning below ``1/B``) can say
    "below ``alpha``": ``1/B <= alpha``. Else p = 0 only says ``p < 1/B``, and no p-value is called significant.

    >>> decisive(20, 0.05), decisive(19, 0.05)
    (True, False)
    """
    return B * alpha >= 1.0 - 1e-12


MAX_MAGNITUDE = 1e150
"""The largest |value| a statistic takes: sums of squares of larger ones overflow (1e160 gave F = NaN, t = 0)."""

TINY = 2.0**-300
"""Below this largest |value| (about 5e-91), a statistic's squares would come near the doubles' underflow (at 1e-160
the bootstrap's Pearson r was NaN and F was wrong in its fourth digit; at 1e-300 F and t were NaN): such data are
computed at a larger scale (:func:`unit_scaled`)."""


def unit_scaled(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """``arr`` times ``2**-e`` and ``e``, so that its largest |value| is in [0.5, 1), when that value is below
    :data:`TINY`; else ``arr`` and 0. Multiplying by a power of two changes no bit but the exponent, so a statistic
    of the scaled data is the statistic of the data, times ``2**(k e)`` for one in units to the power k.

    >>> scaled, e = unit_scaled(np.array([3 * 2.0**-700, -(2.0**-700)]))
    >>> scaled.tolist(), e
    ([0.75, -0.25], -698)
    >>> unit_scaled(np.array([0.5, 2.0]))[1]
    0
    """
    top = float(np.max(np.abs(arr))) if arr.size else 0.0
    if top == 0.0 or top >= TINY:
        return arr, 0
    e = math.frexp(top)[1]
    return np.ldexp(arr, -e), e


def real_array(x: object, what: str, expected: str) -> np.ndarray:
    """``x`` as a float array, refusing what is not real numbers with one message ("{what}: expected
    {expected}, received ..."): strings, ragged lists, ``None``, booleans and complex numbers (numpy keeps the
    real part of a complex array and reads booleans as 0 and 1, silently).

    >>> real_array([[1, 2], [3, 4]], "counts", "a table of numbers").shape
    (2, 2)
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.dtype.kind not in "fiuO" or (raw.dtype.kind == "O" and raw.ndim == 0):
        raise DialevalError(f"{what}: expected {expected}, received {describe(x)}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            return raw.astype(float)
    except (TypeError, ValueError, np.exceptions.ComplexWarning):
        raise DialevalError(f"{what}: expected {expected}, received {describe(x)}") from None


def as_vector(x: object, what: str, *, allow_missing: bool = False) -> np.ndarray:
    """A float 1-D array; ``None`` (and NaN) mean "missing" where ``allow_missing``, else an error. Booleans and
    complex numbers are refused, as the measures refuse them (complex ones lost their imaginary part)."""
    if (isinstance(x, np.ndarray) and x.dtype.kind in "bc") or (
            isinstance(x, list | tuple) and any(isinstance(v, bool | complex | np.bool_) for v in x)):
        kind = x.dtype if isinstance(x, np.ndarray) else "booleans or complex numbers"
        raise DialevalError(f"{what}: expected real numbers, received {kind}")
    if isinstance(x, np.ndarray) and x.dtype.kind in "fiu":
        arr = x.astype(float, copy=False)
    else:
        try:
            arr = np.array([np.nan if v is None else v for v in x], dtype=float)  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise DialevalError(f"{what}: expected a sequence of numbers"
                                + (" (None for a missing value)" if allow_missing else "")
                                + f", received {describe(x)}") from None
    if arr.ndim != 1:
        raise DialevalError(f"{what}: expected a 1-D sequence, received an array of shape {arr.shape}")
    if not allow_missing and not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise DialevalError(f"{what}: value {i} is {arr[i]!r}; allowed are finite numbers")
    if allow_missing and np.isinf(arr).any():
        i = int(np.flatnonzero(np.isinf(arr))[0])
        raise DialevalError(f"{what}: value {i} is infinite; allowed are finite numbers or None (missing)")
    if (np.abs(arr) > MAX_MAGNITUDE).any():
        i = int(np.flatnonzero(np.abs(arr) > MAX_MAGNITUDE)[0])
        raise DialevalError(f"{what}: value {i} is {float(arr[i])!r}; allowed are numbers of magnitude up to "
                            f"{MAX_MAGNITUDE:g} (their squares must fit a double)")
    return arr


def as_matrix(X: object, what: str = "X", *, min_rows: int = 2, min_cols: int = 2) -> np.ndarray:
    """A finite float 2-D array (items x runs) with at least ``min_rows`` rows and ``min_cols`` columns."""
    arr = real_array(X, what, "a 2-D array of numbers (dialogues x runs)")
    if arr.ndim != 2:
        raise DialevalError(f"{what}: expected a 2-D array (dialogues x runs), received shape {arr.shape}")
    n, m = arr.shape
    if n < min_rows or m < min_cols:
        raise DialevalError(f"{what}: shape {arr.shape} is too small; at least {min_rows} dialogues (rows) and "
                            f"{min_cols} runs (columns) are needed")
    bad = ~(np.abs(arr) <= MAX_MAGNITUDE)   # NaN, infinite or too large
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise DialevalError(f"{what}: value at row {i}, column {j} is {float(arr[i, j])!r}; allowed are finite "
                            f"numbers of magnitude up to {MAX_MAGNITUDE:g} (their squares must fit a double)")
    return arr


def check_policy(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else a DialevalError naming the policy and its choices."""
    if not isinstance(value, str) or value not in allowed:
        raise DialevalError(f"{name} {describe(value)} is not allowed; allowed are " + ", ".join(map(repr, allowed)))
    return str(value)


@dataclass(frozen=True)
class Interval:
    """A confidence interval: ``[low, high]`` at ``level``, and how it was made."""

    low: float
    high: float
    level: float
    method: str

    def to_dict(self) -> dict:
        return asdict(self)


def percentile_interval(samples: np.ndarray, level: float, method: str) -> Interval:
    """The percentile interval of bootstrap ``samples`` (NaN samples dropped; NaN bounds if none is left)."""
    s = samples[np.isfinite(samples)]
    if s.size == 0:
        return Interval(float("nan"), float("nan"), level, method)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(s, [tail, 100.0 - tail])
    return Interval(float(lo), float(hi), level, method)


def bca_interval(samples: np.ndarray, estimate: float, jackknife: np.ndarray, level: float, method: str) -> Interval:
    """The bias-corrected and accelerated (BCa) bootstrap interval (Efron 1987).

    With ``z0 = Phi^-1(share of samples below the estimate, ties counting half)`` and the acceleration
    ``a = sum d^3 / (6 (sum d^2)^1.5)``, ``d = mean(jackknife) - jackknife``, the bounds are the
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` percentiles of the samples for ``z = Phi^-1((1 -+ level) / 2)``.
    Unlike the plain percentile interval it stays around the estimate when resampling shifts the statistic
    (as it does for Kendall's tau near 1). NaN samples are dropped; NaN bounds if none is left.
    """
    from statistics import NormalDist

    s = samples[np.isfinite(samples)]
    if s.size == 0 or not np.isfinite(estimate):
        return Interval(float("nan"), float("nan"), level, method)
    nd = NormalDist()
    tie = np.abs(s - estimate) <= 1e-12 * max(1.0, abs(estimate))  # rounding of the same value is a tie
    share = (np.count_nonzero((s < estimate) & ~tie) + 0.5 * np.count_nonzero(tie)) / s.size
    z0 = nd.inv_cdf(min(max(share, 0.5 / s.size), 1.0 - 0.5 / s.size))
    jk = jackknife[np.isfinite(jackknife)]
    d = jk.mean() - jk if jk.size else np.zeros(1)
    den = 6.0 * float((d * d).sum()) ** 1.5
    a = float((d**3).sum()) / den if den > 0 else 0.0
    pct = []
    for z in (nd.inv_cdf((1.0 - level) / 2.0), nd.inv_cdf((1.0 + level) / 2.0)):
        shrink = 1.0 - a * (z0 + z)
        pct.append(100.0 * nd.cdf(z0 + (z0 + z) / shrink) if shrink > 0 else (100.0 if z0 + z > 0 else 0.0))
    lo, hi = np.percentile(s, pct)
    return Interval(float(lo), float(hi), level, method)
