"""Kernels of the ordinal measures (bins ordered). Rows are normalised distributions.

``DW_i = sum_j |i-j| (p(j)-q(j))^2``; OD averages ``DW_i`` over the bins where the *second* argument is
non-empty (``variant="paper"``) or over all bins (``variant="2018"``, the first STC-3 script).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np

from dialeval.errors import DialevalError

VARIANTS = ("paper", "2018")


def nmd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Normalised match distance, ``sum_i |cp(i) - cq(i)| / (L-1)``."""
    L = p.shape[1]
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (L - 1)


@cache
def _weights(L: int) -> np.ndarray:
    i = np.arange(L)
    return np.abs(i[:, None] - i[None, :]).astype(float)


def _dw(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    d = p - q
    return (d * d) @ _weights(p.shape[1])


def _od_from_dw(dw: np.ndarray, ref: np.ndarray, variant: str) -> np.ndarray:
    if variant == "2018":
        return dw.mean(axis=1)
    mask = ref > 0
    return (dw * mask).sum(axis=1) / mask.sum(axis=1)


def od(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Order-aware divergence OD(p||q): mean of DW_i over q's non-empty bins (or all bins, 2018)."""
    return _od_from_dw(_dw(p, q), q, variant)


def nod(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Normalised OD, ``OD(p||q) / (L-1)``."""
    return od(p, q, variant) / (p.shape[1] - 1)


def sod(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Symmetric OD, ``(OD(p||q) + OD(q||p)) / 2``. DW is symmetric in p, q, so it is computed once."""
    dw = _dw(p, q)
    return (_od_from_dw(dw, q, variant) + _od_from_dw(dw, p, variant)) / 2.0


def snod(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Symmetric normalised OD, ``SOD / (L-1)``."""
    return sod(p, q, variant) / (p.shape[1] - 1)


def rnod(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Root normalised OD, ``sqrt(NOD)``."""
    return np.sqrt(nod(p, q, variant))


def rsnod(p: np.ndarray, q: np.ndarray, variant: str = "paper") -> np.ndarray:
    """Root symmetric normalised OD, ``sqrt(SNOD)``."""
    return np.sqrt(snod(p, q, variant))


EXHAUSTIVE_MAX_L = 16
"""Up to this many bins :func:`od_bound` searches every support; above, it gives the loose bound 2."""


def od_bound(L: int, variant: str = "paper") -> float:
    """The supremum of NOD (and SNOD) on ``L`` bins: ``c_L`` in ``NOD(p || q) <= c_L``, ``OD <= c_L (L - 1)``.

    Not 1 in general. With ``variant="paper"`` OD averages ``DW_i`` over the bins where ``q`` is non-empty, and
    a bin that ``q`` fills with a sliver of mass counts as much as its main bin: ``q = (e, e, 0, 0, 1 - 2e)``,
    ``p = (0, 0, 0, 1, 0)`` gives ``NOD -> 13/12`` as ``e -> 0`` (a real 19-annotator gold ``(1, 1, 0, 17, 0) /
    19`` against ``(0, 0, 0, 0, 1)`` scores 1.0018). In that limit ``p`` and ``q`` are one-hot at bins ``k`` and
    ``m`` and ``q``'s support ``B`` keeps its slivers, so ``c_L (L - 1) = max over B, m in B, k != m of w(m) +
    w(k)``, ``w(j) = mean over i in B of |i - j|`` (NOD is convex in ``p - q``: its maximum over the
    distributions is at such a limit of vertices); SOD averages two ODs, each at most this, and reaches it
    too. Found by searching every support for ``L <= 16`` (values: 1 for ``L <= 4``, 13/12 for 5, 17/15 for
    6, 7/6 for 7); above, 2 (``DW_i <= (L - 1) sum_j (p(j) - q(j))^2 <= 2 (L - 1)``), an upper bound that is
    not tight. ``variant="2018"`` (OD over all bins) is at most 1: ``mean_i |i - j| <= (L - 1) / 2``.

    Examples
    --------
    >>> [round(od_bound(L), 4) for L in (2, 3, 4, 5, 6)]
    [1.0, 1.0, 1.0, 1.0833, 1.1333]
    >>> od_bound(5, "2018")
    1.0
    """
    if isinstance(L, bool) or not isinstance(L, int | np.integer) or L < 2:
        raise DialevalError(f"od_bound: L = {L!r} is not allowed; allowed are integers >= 2 (the number of bins)")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise DialevalError(f"od_bound: variant {variant!r} is not allowed; allowed are "
                            + ", ".join(repr(v) for v in VARIANTS))
    return 1.0 if variant == "2018" else _paper_bound(int(L))


@cache
def _paper_bound(L: int) -> float:
    """:func:`od_bound` of the paper's variant, for an integer ``L >= 2`` (checked by the caller)."""
    if L > EXHAUSTIVE_MAX_L:
        return 2.0
    members = (np.arange(1, 2**L)[:, None] >> np.arange(L)) & 1     # every non-empty support B, one per row
    dist = members @ np.abs(np.arange(L)[:, None] - np.arange(L))     # dist[B, j] = sum_{i in B} |i - j|
    order = np.argsort(dist, axis=1, kind="stable")
    first = np.take_along_axis(dist, order[:, -1:], 1)
    second = np.take_along_axis(dist, order[:, -2:-1], 1)
    best_k = np.where(np.arange(L) == order[:, -1:], second, first)   # the largest dist(k), k != m
    num = np.where(members == 1, dist + best_k, -1).max(axis=1)       # per support: max over m in B
    size = members.sum(axis=1)
    value = num / size
    top = np.flatnonzero(value >= value.max() - 1e-9)                  # exact among the float maxima
    best = max(Fraction(int(num[t]), int(size[t])) for t in top)
    return float(best / (L - 1))
