"""The one check of predicted distributions: what a run may hold so that every score computed on it is finite.

A predicted distribution is a row of bin values; it is valid when every value is a finite number >= 0 and
their sum is finite and > 0, so that dividing by the sum gives finite probabilities. Every reader of runs
(:mod:`dialeval.io.runs` for ``dialeval evaluate`` and the service, :mod:`dialeval.io.turnruns`), the run
writer of the models (:func:`dialeval.io.runs.write_run`) and the measures' boundary
(:mod:`dialeval.measures._arrays`) use these functions, so they accept and refuse the same values with the
same words.

Examples
--------
>>> import numpy as np
>>> value_problem(-1.0), value_problem(2)
('value -1.0 is not allowed; allowed are finite numbers >= 0', None)
>>> sum_problem(np.array([1e308, 1e308])) is not None, sum_problem(np.array([0.0, 0.0])) is not None
(True, True)
>>> first_bad_row(np.array([[1.0, 1.0], [1e308, 1e308]]))
(1, None, 'the values sum to inf, more than the largest number (1.8e308); scale them down')
"""

from __future__ import annotations

import math

import numpy as np

from dialeval.errors import describe

NOT_A_VALUE = "is not allowed; allowed are finite numbers >= 0"
ALL_ZERO = "all-zero distribution; at least one bin must be positive"


def _overflow(total: float) -> str:
    return f"the values sum to {total!r}, more than the largest number (1.8e308); scale them down"


def value_problem(v: object) -> str | None:
    """Why one bin value is not allowed (None if it is a finite number >= 0); ``bool`` is not a number."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return f"value {describe(v)} is not a number"
    try:
        f = float(v)
    except OverflowError:  # an integer too large for a float
        return f"value {describe(v)} {NOT_A_VALUE}"
    if not math.isfinite(f) or f < 0:
        return f"value {describe(v)} {NOT_A_VALUE}"
    return None


def sum_problem(values: np.ndarray | tuple | list) -> str | None:
    """Why a row of valid bin values cannot be normalised (None if its sum is finite and > 0)."""
    total = sum(float(v) for v in values)  # plain floats: overflow gives inf, no warning
    if math.isinf(total):
        return _overflow(total)
    if not total > 0:
        return ALL_ZERO
    return None


def first_bad_row(arr: np.ndarray) -> tuple[int, int | None, str] | None:
    """The first row of a 2-D array that is not a valid distribution: (row, bin or None for the row, why).

    Checks, in order: every value finite and >= 0 (the first bad bin is named), then the row's sum finite
    and > 0. None if every row is valid.
    """
    if arr.size == 0:
        return None
    bad_cell = ~np.isfinite(arr) | (arr < 0)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = arr.sum(axis=1)
    bad = bad_cell.any(axis=1) | ~(np.isfinite(sums) & (sums > 0))
    if not bad.any():
        return None
    j = int(np.flatnonzero(bad)[0])
    if bad_cell[j].any():
        col = int(np.flatnonzero(bad_cell[j])[0])
        return j, col, f"value {float(arr[j, col])!r} {NOT_A_VALUE}"
    return j, None, sum_problem(arr[j]) or ALL_ZERO


SUM_TOLERANCE = 1e-6
"""How far from 1 the sum of an already normalised distribution may be (:func:`first_row_off_one`)."""


def first_row_off_one(arr: np.ndarray, atol: float = SUM_TOLERANCE) -> int | None:
    """The first row of a 2-D array whose sum is not within ``atol`` of 1 (NaN included), or None: the rule for
    distributions that must come normalised (a model's training targets and predictions), checked after
    :func:`first_bad_row`.

    >>> first_row_off_one(np.array([[0.5, 0.5], [0.3, 0.3]])), first_row_off_one(np.array([[1.0, 1e-7]]))
    (1, None)
    """
    off = np.flatnonzero(~(np.abs(arr.sum(axis=1) - 1.0) <= atol))
    return int(off[0]) if len(off) else None


def normalise(arr: np.ndarray) -> np.ndarray:
    """Rows divided by their sums (rows checked with :func:`first_bad_row` first: the result is finite).

    A row that already sums to 1 up to the rounding of its own sum (``|sum - 1| <= L * eps`` for ``L`` bins) is
    kept exactly as given: dividing it by a sum such as 0.9999999999999999 would only move its last bits, so a
    run that repeats the gold's probabilities would score about 1e-17 instead of 0.

    >>> row = np.array([[1 / 19, 5 / 19, 13 / 19]])
    >>> bool((normalise(row) == row).all()), normalise(np.array([[1.0, 3.0]])).tolist()
    (True, [[0.25, 0.75]])
    """
    sums = arr.sum(axis=-1, keepdims=True)
    rounding = arr.shape[-1] * np.finfo(np.float64).eps
    return np.where(np.abs(sums - 1.0) <= rounding, arr, arr / sums)
