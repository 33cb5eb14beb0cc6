"""Small pieces every statistical procedure shares: seeds, input vectors, result intervals."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from dialeval.errors import DialevalError, describe

Seed = int | np.random.Generator


def as_generator(seed: Seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an explicit integer seed (or a Generator, used as is).

    There is no default: every random procedure in dialeval is reproducible by its caller.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DialevalError(f"seed {describe(seed)} is not allowed; allowed are an integer >= 0 or a "
                            "numpy.random.Generator")
    return np.random.default_rng(int(seed))


def seed_label(seed: Seed) -> int | str:
    """What a report prints for the seed it was given."""
    return "generator" if isinstance(seed, np.random.Generator) else int(seed)


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < float(level) < 1.0:
        raise DialevalError(f"confidence level {describe(level)} is not allowed; allowed are numbers in (0, 1), "
                            "e.g. 0.95")
    return float(level)


def check_B(B: int, *, minimum: int = 1) -> int:
    if isinstance(B, bool) or not isinstance(B, int | np.integer) or minimum > B:
        raise DialevalError(f"B = {describe(B)} is not allowed; allowed are integers >= {minimum}")
    return int(B)


def as_vector(x: object, what: str, *, allow_missing: bool = False) -> np.ndarray:
    """A float 1-D array; ``None`` (and NaN) mean "missing" where ``allow_missing``, else an error."""
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
    return arr


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
