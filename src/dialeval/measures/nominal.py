"""Kernels of the nominal measures (bin order means nothing). Rows are normalised distributions."""

from __future__ import annotations

import numpy as np

_LN2 = float(np.log(2.0))


def nvd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Normalised variational distance, ``sum_i |p(i) - q(i)| / 2``."""
    return np.abs(p - q).sum(axis=1) / 2.0


def rnss(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Root normalised sum of squares, ``sqrt(sum_i (p(i) - q(i))^2 / 2)``."""
    d = p - q
    return np.sqrt((d * d).sum(axis=1) / 2.0)


def mse(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Mean squared error over the bins, ``sum_i (p(i) - q(i))^2 / L`` (the DBDC measure)."""
    d = p - q
    return (d * d).mean(axis=1)


def jsd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence in bits, ``(KL(p||m) + KL(q||m)) / 2`` with ``m = (p + q) / 2``."""
    s = p + q  # m = s / 2, never halved itself: half the smallest subnormal is 0, and p / m would be infinite
    out = (_kl_terms(p, s).sum(axis=1) + _kl_terms(q, s).sum(axis=1)) / (2.0 * _LN2)
    return np.clip(out, 0.0, 1.0)


def _kl_terms(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``p * ln(p / m)`` with ``m = s / 2``, as ``p * ln(2 p / s)`` elementwise; 0 where ``p`` is 0 (there ``s`` may
    be 0 too; elsewhere ``s >= p > 0`` and ``2 p / s`` lies in (0, 2])."""
    out = np.zeros_like(p)
    nz = p > 0
    np.multiply(p, np.log(np.divide(2.0 * p, s, out=np.ones_like(p), where=nz)), out=out, where=nz)
    return out
