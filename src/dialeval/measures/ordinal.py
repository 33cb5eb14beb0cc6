"""Kernels of the ordinal measures (bins ordered). Rows are normalised distributions.

``DW_i = sum_j |i-j| (p(j)-q(j))^2``; OD averages ``DW_i`` over the bins where the *second* argument is
non-empty (``variant="paper"``) or over all bins (``variant="2018"``, the first STC-3 script).
"""

from __future__ import annotations

from functools import cache

import numpy as np

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
