"""Bootstrap confidence intervals for a run's mean score."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from dialeval.errors import DialevalError
from dialeval.stats._common import (
    Interval,
    Seed,
    as_generator,
    as_vector,
    check_B,
    check_level,
    percentile_interval,
    seed_label,
)

_CHUNK_CELLS = 4_000_000  # resample indices held at once: B_chunk * n


@dataclass(frozen=True)
class BootstrapCI:
    """The mean of ``x`` with a percentile-bootstrap interval; ``B`` resamples drawn with ``seed``."""

    mean: float
    ci: Interval
    n: int
    B: int
    seed: int | str

    def to_dict(self) -> dict:
        return asdict(self)


def resample_counts(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` bootstrap resamples of n items as counts: row r says how often each item was drawn.

    The draws are ``rng.integers(0, n, size=(size, n))``, one resample a row.
    """
    idx = rng.integers(0, n, size=(size, n))
    idx += np.arange(size)[:, None] * n
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(float)


def bootstrap_column_means(X: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of ``B`` resamples of the rows of the n x c array ``X`` (rows drawn with replacement).

    Every column sees the same resampled rows (a paired bootstrap). Returns a B x c array; the draws are
    made in bounded chunks.
    """
    n = X.shape[0]
    out = np.empty((B, X.shape[1]))
    step = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, B, step):
        stop = min(B, start + step)
        out[start:stop] = resample_counts(n, stop - start, rng) @ X / n
    return out


def bootstrap_means(x: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``B`` resamples (with replacement) of the 1-D array ``x``, drawn in bounded chunks."""
    return bootstrap_column_means(x[:, None], B, rng)[:, 0]


def bootstrap_ci(x: object, level: float = 0.95, B: int = 10_000, seed: Seed = 0) -> BootstrapCI:
    """Percentile bootstrap confidence interval for the mean of ``x`` (e.g. a run's per-dialogue scores).

    Draws ``B`` samples of size n with replacement from ``x``, takes each sample's mean, and reports the
    ``(1-level)/2`` and ``1-(1-level)/2`` percentiles of those means.

    Parameters
    ----------
    x : sequence of float, length n >= 2
        Per-item scores (finite).
    level : float in (0, 1), default 0.95
    B : int >= 1, default 10000
    seed : int >= 0 or numpy.random.Generator
        Same seed, same interval.

    Returns
    -------
    BootstrapCI
        ``.mean``, ``.ci`` (``Interval`` with ``low``, ``high``, ``level``, ``method``), ``.n``, ``.B``, ``.seed``.

    Examples
    --------
    >>> from dialeval.stats import bootstrap_ci
    >>> r = bootstrap_ci([0.1, 0.2, 0.3, 0.4], B=2000, seed=0)
    >>> round(r.mean, 2), r.ci.low <= r.mean <= r.ci.high
    (0.25, True)
    """
    arr = as_vector(x, "x")
    level = check_level(level)
    B = check_B(B, level=level)
    if arr.size < 2:
        raise DialevalError(f"x has {arr.size} value(s); a bootstrap interval needs at least 2")
    means = bootstrap_means(arr, B, as_generator(seed))
    return BootstrapCI(float(arr.mean()), percentile_interval(means, level, "percentile bootstrap over items"),
                       int(arr.size), B, seed_label(seed))
