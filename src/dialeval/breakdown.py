"""Everything DBDC3's evaluation script (``eval.py``) prints, on turns aligned by dialeval.

Dialogue breakdown detection (DBDC3) labels each system turn O (not a breakdown), T (possible breakdown) or X
(breakdown) by many annotators; the gold of a turn is the distribution ``(pO, pT, pX)`` of their labels.
With the gold label threshold ``t`` (the script's ``-t``, default 0.0), the script's rules are:

- **gold label** (strict): the first of O, T, X whose probability is >= the other two and >= ``t``; O when
  none is (so ties go to O, then T);
- **gold label** (lenient, for T+X): breakdown when ``pT + pX >= pO`` and ``pT + pX >= t`` and not already
  ``pO >= pT + pX`` with ``pO >= t`` (a tie ``pO = pT + pX`` is not a breakdown); else not a breakdown;
- **accuracy**: the share of turns whose predicted label equals the strict gold label;
- **precision / recall / F-measure (X)**: X predicted vs strict gold X; all three are 0 when no turn is a
  true positive (the script's convention, kept for parity: never undefined);
- **precision / recall / F-measure (T+X)**: T or X predicted vs the lenient gold breakdown, same convention;
- **JSD and MSE** over (O, T, X) and over the merged bins (O, T+X) and (O+T, X), each averaged over turns;
  MSE is ``sum (p - q)^2 / L`` with L the number of bins (3 or 2).

The predicted label of a turn is the run's hard label where it gives one (the ``breakdown`` of a DBDC3 labels
file, ``"labels": {"breakdown": "X"}`` in dialeval's layout), else the majority label of the predicted
distribution (the strict rule with threshold 0).
"""

from __future__ import annotations

import numpy as np

from dialeval.errors import DialevalError, refused
from dialeval.io.dbdc import BREAKDOWN_LEVELS
from dialeval.measures import get as get_measure
from dialeval.measures._arrays import check_distributions, check_pair

LEVELS = BREAKDOWN_LEVELS
MERGES = {"O,T,X": None, "O,T+X": ((0,), (1, 2)), "O+T,X": ((0, 1), (2,))}
"""The bin sets DBDC3 reports JSD and MSE on (None: the three bins as they are)."""


def majority_labels(probs: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """DBDC3's strict majority label of each row ``(pO, pT, pX)`` as 0 (O), 1 (T) or 2 (X).

    Examples
    --------
    >>> majority_labels(np.array([[.2, .4, .4], [.3, .3, .4], [.4, .3, .3]])).tolist()  # a T/X tie goes to T
    [1, 2, 0]
    >>> majority_labels(np.array([[.3, .3, .4]]), 0.5).tolist()  # no label reaches the threshold: O
    [0]
    """
    p = _checked(probs, "probs")
    threshold = check_threshold(threshold)
    o, t, x = p[:, 0], p[:, 1], p[:, 2]
    is_o = (o >= t) & (o >= x) & (o >= threshold)
    is_t = ~is_o & (t >= o) & (t >= x) & (t >= threshold)
    is_x = ~is_o & ~is_t & (x >= t) & (x >= o) & (x >= threshold)
    return np.where(is_t, 1, np.where(is_x, 2, 0))


def lenient_breakdown(probs: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """DBDC3's lenient gold label: True where T+X is the majority (see the module docstring)."""
    p = _checked(probs, "probs")
    threshold = check_threshold(threshold)
    o, tx = p[:, 0], p[:, 1] + p[:, 2]
    not_breakdown = (o >= tx) & (o >= threshold)
    return ~not_breakdown & (tx >= o) & (tx >= threshold)


def _prf(tp: int, predicted: int, actual: int) -> dict:
    precision = tp / predicted if tp > 0 and predicted > 0 else 0.0
    recall = tp / actual if tp > 0 and actual > 0 else 0.0
    f = 2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f_measure": f, "true_positives": tp,
            "predicted": predicted, "gold": actual}


def _merge(p: np.ndarray, groups: tuple | None) -> np.ndarray:
    return p if groups is None else np.column_stack([p[:, list(g)].sum(axis=1) for g in groups])


def _checked(probs: object, what: str) -> np.ndarray:
    """n x 3 distributions over O, T, X, checked as the measures check theirs (finite, non-negative, not all
    zero) and returned as given: dividing again by a sum of 1 +- 1 ulp could move a share across the threshold."""
    if np.ndim(probs) != 2 or np.shape(probs)[1] != len(LEVELS):
        raise DialevalError(f"{what}: expected n x 3 distributions (O, T, X); received shape {np.shape(probs)}")
    check_distributions(probs, what)
    return np.asarray(probs, dtype=float)


def check_threshold(threshold: object) -> float:
    """The share of annotators a gold label needs (DBDC3 eval.py's ``-t``): a number in [0, 1]."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
        raise refused("threshold", threshold, "numbers in [0, 1]")
    return float(threshold)


def dbdc3_scores(gold: np.ndarray, pred: np.ndarray, pred_labels: np.ndarray | None = None, *,
                 threshold: float = 0.0) -> dict:
    """DBDC3's figures for ``n`` aligned turns: ``gold`` and ``pred`` are n x 3 distributions over O, T, X.

    ``pred_labels`` (0/1/2 for O/T/X, -1 where the run gives none) are the run's hard labels; missing ones
    are the majority label of ``pred``.

    Examples
    --------
    >>> g = np.array([[.8, .1, .1], [.1, .2, .7]]); p = np.array([[.6, .2, .2], [.5, .1, .4]])
    >>> s = dbdc3_scores(g, p)
    >>> s["accuracy"], s["X"]["recall"], s["T+X"]["recall"], s["labels"]
    (0.5, 0.0, 0.0, {'O': 1, 'T': 0, 'X': 1})
    """
    if not np.size(gold) or not np.size(pred):
        raise DialevalError("no turn to score with DBDC3's measures")
    p, g, single = check_pair(pred, gold)   # normalised rows; NaN, negative and all-zero rows refused
    if single or g.shape[1] != len(LEVELS):
        raise DialevalError(f"DBDC3 scores need two n x 3 arrays (O, T, X); received {np.shape(gold)} and "
                            f"{np.shape(pred)}")
    check_threshold(threshold)
    gl = majority_labels(g, threshold)
    pl = majority_labels(p, 0.0)
    if pred_labels is not None:
        given = np.asarray(pred_labels)
        pl = np.where(given >= 0, given, pl)
    n = len(g)
    correct = int((pl == gl).sum())
    lenient = lenient_breakdown(g, threshold)
    pred_bd = pl >= 1
    out: dict = {
        "threshold": float(threshold),
        "turns": n,
        "labels": {lv: int((gl == i).sum()) for i, lv in enumerate(LEVELS)},
        "accuracy": correct / n,
        "correct": correct,
        "X": _prf(int(((pl == 2) & (gl == 2)).sum()), int((pl == 2).sum()), int((gl == 2).sum())),
        "T+X": _prf(int((pred_bd & lenient).sum()), int(pred_bd.sum()), int(lenient.sum())),
        "jsd": {}, "mse": {},
    }
    for name, groups in MERGES.items():
        a, b = _merge(g, groups), _merge(p, groups)
        for m in ("jsd", "mse"):
            out[m][name] = float(np.mean(get_measure(m).compute(b, a)))
    return out
