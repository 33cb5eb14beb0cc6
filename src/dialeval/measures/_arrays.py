"""Boundary checks shared by every measure: shapes, finiteness, non-negativity, normalisation.

The rule on values is :mod:`dialeval.io.values`' (finite, >= 0, a finite positive sum).
"""

from __future__ import annotations

import numpy as np

from dialeval.errors import DialevalError
from dialeval.io.values import normalise, sum_problem


def check_distributions(values: object, what: str) -> np.ndarray:
    """Return ``values`` as a float 2-D array of normalised rows, or raise a located error.

    Each row must be finite, non-negative and not all zero; it is divided by its sum.
    """
    try:
        raw = np.asarray(values)
    except ValueError:  # ragged: rows of different lengths
        raise DialevalError(f"{what}: rows of different lengths; every distribution needs the same bins") from None
    if raw.dtype.kind not in "iuf":  # text ("0.5"), bools, objects: what the run files refuse as numbers too
        raise DialevalError(f"{what}: expected numbers, received "
                            + (f"an array of {raw.dtype}" if raw.dtype.kind != "O" else type(values).__name__))
    try:
        arr = raw.astype(float)
    except OverflowError:
        raise DialevalError(f"{what}: a value is too large for a float; allowed are finite numbers >= 0") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise DialevalError(f"{what}: expected a 1-D distribution or a 2-D array of rows, "
                            f"received an array of {arr.ndim} dimensions")
    if arr.shape[1] < 2:
        raise DialevalError(f"{what}: a distribution needs at least 2 bins, received {arr.shape[1]}")
    bad = ~np.isfinite(arr)
    if bad.any():
        r = int(np.argwhere(bad)[0][0])
        raise DialevalError(f"{what}: row {r} holds a NaN or infinite value; allowed are finite numbers >= 0")
    if (arr < 0).any():
        r = int(np.argwhere(arr < 0)[0][0])
        raise DialevalError(f"{what}: row {r} holds a negative value; allowed are finite numbers >= 0")
    with np.errstate(over="ignore"):
        sums = arr.sum(axis=1)
    if (sums <= 0).any():
        r = int(np.flatnonzero(sums <= 0)[0])
        raise DialevalError(f"{what}: row {r} is all zero; a distribution needs a positive sum")
    if not np.isfinite(sums).all():
        r = int(np.flatnonzero(~np.isfinite(sums))[0])
        raise DialevalError(f"{what}: row {r}: {sum_problem(arr[r])}")
    return normalise(arr)


def check_pair(pred: object, gold: object) -> tuple[np.ndarray, np.ndarray, bool]:
    """Check and normalise a (pred, gold) pair; also say whether the input was a single distribution."""
    p = check_distributions(pred, "pred")
    q = check_distributions(gold, "gold")
    single = np.ndim(pred) == 1 and np.ndim(gold) == 1  # after the checks: np.ndim of a ragged list raises
    if p.shape != q.shape:
        raise DialevalError(f"pred has shape {p.shape if not single else p.shape[1:]} and gold "
                            f"{q.shape if not single else q.shape[1:]}; they must have the same shape "
                            "(same number of rows and of bins)")
    return p, q, single
