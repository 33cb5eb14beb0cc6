"""Annotator pools: groups of annotators who labelled the same items, and training targets freed of each
pool's habits (``--param pools=balance``, every model kind).

A crowd-sourced corpus is often labelled by separate groups of people, each on its own part of the data:
DBDC3's English dev set by two pools of 194 and 538 annotators that share no one, one on the CIC and YI
dialogues, the other on IRIS and TickTock. A pool has habits of its own: the first used ``T`` (possible
breakdown) on 46% of its labels, the second on 28%, on two chatbots each. A model trained on such labels
learns "a CIC-like or YI-like turn is a T" from whom the data happened to be labelled by, not from the turn;
new data comes with new annotators. Balancing the pools before training takes each pool's mean distribution
to the corpus's: what is left to learn is how the turns differ within a pool.

Pools are read from the annotator ids of the items (:attr:`dialeval.corpus.Turn.annotators`): two
annotators are in one pool when they labelled a common item, or are linked through a chain of such
annotators (the connected components of the graph of annotators who shared an item). Items without
annotator ids form one pool of their own. A fixed panel (STC-3's 19 people on every dialogue) is one pool,
and so is a corpus without ids: balancing then changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dialeval.errors import DialevalError, describe
from dialeval.io.values import first_bad_row, first_row_off_one, normalise

POOLS = ("keep", "balance")
"""The choices of the ``pools`` parameter every model kind takes: ``keep`` the training distributions as the
annotators gave them (the default), or ``balance`` each annotator pool's mean to the corpus's
(:func:`balance_pools`)."""


def annotator_pools(annotators: Sequence[Sequence[str | None] | None]) -> np.ndarray:
    """The pool of each item: connected components of the annotators who labelled a common item.

    Parameters
    ----------
    annotators : sequence of (sequence of str, or None)
        The annotator ids of each item (None, or no id: the item has none).

    Returns
    -------
    numpy.ndarray of int, shape (n_items,)
        Pool numbers 0, 1, ... in order of first appearance; every item without an annotator id is in one pool.

    Examples
    --------
    >>> annotator_pools([["a", "b"], ["c"], ["b", "d"], None, ["d"], ["e", "c"]]).tolist()
    [0, 1, 0, 2, 0, 1]
    """
    parent: dict[str, str] = {}

    def root(a: str) -> str:
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    ids = [[a for a in (item or ()) if a is not None] for item in annotators]
    for item in ids:
        for a in item[1:]:
            ra, rb = root(item[0]), root(a)
            if ra != rb:
                parent[rb] = ra
    numbers: dict[str | None, int] = {}
    return np.array([numbers.setdefault(root(item[0]) if item else None, len(numbers)) for item in ids],
                    dtype=np.int64)


_W_RANGE = 1e150
"""Bound of a level's weight in :func:`balance_pools`: a pool whose mean no weighting can move (every row one-hot:
one annotator an item) made the weights overflow, and its rows NaN; past the bound they are rescaled."""


def balance_pools(probs: np.ndarray, pools: np.ndarray, *, tol: float = 1e-12, max_iter: int = 1000
                  ) -> np.ndarray:
    """Training distributions with each pool's mean made the corpus's: one weight per pool and level.

    For each pool ``g``, the items' distributions are reweighted level by level and renormalised,
    ``p'_i(y) = w_g(y) p_i(y) / sum_z w_g(z) p_i(z)``, with the weights ``w_g`` that make the pool's mean
    ``mean_{i in g} p'_i`` equal the corpus's mean ``m = mean_i p_i`` (found by the fixed-point iteration
    ``w_g <- w_g * m / mean_{i in g} p'_i`` from ``w_g = 1``). When every pool reaches it, the corpus's mean is
    kept; within a pool the items keep their order on every level (a weight is the same for all of a pool's
    items). A level a pool never used stays empty in that pool (no weight can give it mass); its other levels
    then take ``m``'s shares among them. Where no weights reach the mean (an item with all its mass on levels
    the rest of its pool barely uses), the iteration stops after ``max_iter`` steps, as close as it came.

    Parameters
    ----------
    probs : numpy.ndarray, shape (n_items, n_levels)
        Each item's distribution (rows summing to 1).
    pools : numpy.ndarray of int, shape (n_items,)
        Each item's pool (:func:`annotator_pools`).
    tol : float, default 1e-12
        The largest difference between a pool's mean and ``m`` at which the iteration stops.
    max_iter : int, default 1000
        The most iterations per pool.

    Returns
    -------
    numpy.ndarray, shape (n_items, n_levels)
        The balanced distributions; ``probs`` itself is not changed. One pool: ``probs`` unchanged.

    Examples
    --------
    Two pools of two items on two levels; the corpus's mean is (0.5, 0.5):

    >>> p = np.array([[0.8, 0.2], [0.6, 0.4], [0.4, 0.6], [0.2, 0.8]])
    >>> q = balance_pools(p, np.array([0, 0, 1, 1]))
    >>> q[:2].mean(axis=0).round(12).tolist(), q[2:].mean(axis=0).round(12).tolist()
    ([0.5, 0.5], [0.5, 0.5])
    >>> bool(q[0, 0] > q[1, 0])  # the order within a pool is kept
    True
    """
    probs = np.asarray(probs, dtype=np.float64)
    pools = np.asarray(pools)
    if probs.ndim != 2 or pools.shape != (len(probs),):
        raise DialevalError(f"balance_pools: probs of shape {probs.shape} and pools of shape {pools.shape} are "
                            "not allowed; allowed are probs (n_items, n_levels) and pools (n_items,)")
    bad = first_bad_row(probs)  # the project's one rule for a row of bin values
    if bad is not None:
        raise DialevalError(f"balance_pools: row {bad[0]} of probs, {probs[bad[0]].tolist()}: {bad[2]}")
    off = first_row_off_one(probs)
    if off is not None:
        raise DialevalError(f"balance_pools: row {off} of probs, {probs[off].tolist()}, sums to "
                            f"{float(probs[off].sum())!r}; allowed are distributions summing to 1")
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol > 0:
        raise DialevalError(f"balance_pools: tol = {describe(tol)} is not allowed; allowed are numbers > 0")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise DialevalError(f"balance_pools: max_iter = {describe(max_iter)} is not allowed; allowed are integers >= 1")
    groups = np.unique(pools)
    if len(groups) < 2:
        return probs.copy()
    m = probs.mean(axis=0)
    out = np.empty_like(probs)
    for g in groups:
        here = pools == g
        P = probs[here]
        used = P.sum(axis=0) > 0
        target = np.where(used, m, 0.0)
        target /= target.sum()  # > 0: the pool's own items are in m
        w = np.ones(P.shape[1])
        for _ in range(max_iter):
            R = normalise(P * w)
            mean = R.mean(axis=0)
            if np.abs(mean - target).max() <= tol:
                break
            w = np.where(used, w * target / np.where(used, mean, 1.0), w)
            if not w.max() < _W_RANGE:   # a mean the weights cannot move (one-hot rows): rescaled, never inf/0
                w = np.maximum(w / w.max(), 1.0 / _W_RANGE)
        out[here] = R
    return out
