"""Inter-annotator agreement: Krippendorff's alpha, nominal or ordinal by the scale.

Alpha needs only, for each item (unit), how many annotators gave each level: the coincidence matrix is

    o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)

over the units with ``m_u >= 2`` labels (others are not pairable), ``n_c = sum_k o_ck``, ``n = sum_c n_c``, and

    alpha = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

with ``d2_ck = [c != k]`` (nominal) or ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (ordinal).
Range [-1, 1] (the lower end depends on the data): 1 is perfect agreement, 0 what chance gives, below 0
systematic disagreement; higher is better. Undefined (NaN) when fewer than 2 pairable labels or one level only.

Reference: K. Krippendorff, Computing Krippendorff's alpha-reliability (2011); Content Analysis, 2004.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from dialeval.corpus import Corpus
from dialeval.distributions import label_counts
from dialeval.errors import DialevalError, describe
from dialeval.stats._common import real_array

KINDS = ("nominal", "ordinal")


@dataclass(frozen=True)
class Agreement:
    """Krippendorff's alpha of one scale, with what it was computed from."""

    scale: str
    kind: str
    alpha: float
    units: int          # items with at least 2 labels (pairable)
    pairable: int       # labels in those items
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _distance(kind: str, n_c: np.ndarray) -> np.ndarray:
    L = len(n_c)
    if kind == "nominal":
        return 1.0 - np.eye(L)
    cum = np.concatenate([[0.0], np.cumsum(n_c)])
    c, k = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    lo, hi = np.minimum(c, k), np.maximum(c, k)
    s = cum[hi + 1] - cum[lo]
    return (s - (n_c[c] + n_c[k]) / 2.0) ** 2


def coincidences(counts: object) -> np.ndarray:
    """The L × L coincidence matrix of a units × levels count table (units with < 2 labels ignored)."""
    n = real_array(counts, "counts", "a units x levels table of label counts")
    if n.ndim != 2 or n.shape[1] < 2 or (n < 0).any() or not np.isfinite(n).all():
        raise DialevalError(f"counts must be a units x levels table of counts >= 0 with at least 2 levels, "
                            f"received shape {n.shape}")
    m = n.sum(axis=1)
    keep = m >= 2
    n, m = n[keep], m[keep]
    w = n / (m - 1.0)[:, None]
    return w.T @ n - np.diag(w.sum(axis=0))


def krippendorff_alpha(counts: object, kind: str = "nominal") -> float:
    """Krippendorff's alpha from a units × levels table of label counts (see the module docstring).

    Parameters
    ----------
    counts : array_like, shape (units, L)
        ``counts[u, c]`` = how many annotators gave level c to unit u (levels in scale order).
    kind : {'nominal', 'ordinal'}

    Returns
    -------
    float
        Alpha in [-1, 1]; NaN when it is undefined (fewer than 2 pairable labels, or a single level used).

    Examples
    --------
    Three units, two coders: (a, a), (a, b), (b, b) give alpha = 1 - 5 * 2 / 18 = 4/9.

    >>> round(krippendorff_alpha([[2, 0], [1, 1], [0, 2]]), 4)
    0.4444
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise DialevalError(f"kind {describe(kind)} is not allowed; allowed are " + ", ".join(KINDS))
    o = coincidences(counts)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n < 2:
        return float("nan")
    d2 = _distance(kind, n_c)
    expected = (np.outer(n_c, n_c) * d2).sum()
    if expected <= 0:
        return float("nan")
    return float(1.0 - (n - 1.0) * (o * d2).sum() / expected)


def scale_agreement(corpus: Corpus, scale: str) -> Agreement:
    """Krippendorff's alpha of one scale of a corpus, ordinal or nominal as the scale declares."""
    dist = label_counts(corpus, scale)
    counts = dist.counts
    m = counts.sum(axis=1)
    pair = m >= 2
    alpha = krippendorff_alpha(counts, dist.scale.kind) if len(counts) else float("nan")
    note = ""
    if not pair.any():
        note = "no item has 2 or more labels (e.g. one consolidated label per item): alpha is undefined"
    elif np.isnan(alpha):
        note = "only one level is used: alpha is undefined"
    return Agreement(dist.scale.name, dist.scale.kind, alpha, int(pair.sum()), int(m[pair].sum()), note)
