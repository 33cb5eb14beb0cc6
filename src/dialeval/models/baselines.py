"""The baselines a model must beat: ``uniform``, ``prior`` (training mean) and ``position`` (ND by turn position).

- ``uniform`` puts ``1/L`` on every bin of every distribution; it learns nothing.
- ``prior`` predicts the training mean of each scale's distributions: for STC-3, one A, S and E distribution
  for every dialogue, one customer and one helpdesk nugget distribution for every turn of that sender.
- ``position`` predicts dialogue-level scales (quality) like ``prior``, and a turn-level scale's distribution
  of a turn as the training mean of the scale's turns with the same key ``(min(position, max_position),
  is_last)``; a key seen on fewer than ``min_turns`` training turns falls back to the scale's mean.

Every prediction is strictly positive (rows clipped at ``1e-6`` and renormalised by
:func:`~dialeval.models.base.normalise_rows`), so a bin never seen in training keeps a small probability.

Examples
--------
>>> import dialeval
>>> from dialeval.models.baselines import Prior
>>> corpus = dialeval.read_corpus([
...     {"id": "a", "turns": [{"sender": "customer", "utterances": ["hi"]}],
...      "annotations": [{"quality": {"A": 2, "S": 0, "E": 0}, "nugget": ["CNUG0"]},
...                      {"quality": {"A": 0, "S": 0, "E": 0}, "nugget": ["CNaN"]}]}])
>>> Prior("quality").fit(corpus).predict(corpus).quality["A"].round(3).tolist()
[[0.5, 0.0, 0.5, 0.0, 0.0]]
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dialeval.models.base import Estimator, array_key, check_param, expect_array, normalise_rows, register
from dialeval.models.data import TurnTable
from dialeval.models.turndata import ScaleArrays


def _tile(row: np.ndarray, n: int) -> np.ndarray:
    return normalise_rows(np.tile(np.asarray(row, dtype=np.float64), (n, 1)))


def _mean(a: np.ndarray, width: int) -> np.ndarray:
    """Column means of ``a`` (uniform when ``a`` has no rows)."""
    return a.mean(axis=0) if len(a) else np.full(width, 1.0 / width)


@register
class Uniform(Estimator):
    """``1/L`` on every bin: the floor any model must clear.

    Examples
    --------
    >>> import dialeval
    >>> c = dialeval.read_corpus([{"id": "a", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...                            "annotations": [{"quality": {"A": 2, "S": 0, "E": 0}, "nugget": ["CNUG0"]}]}])
    >>> Uniform().fit(c).predict(c).customer.tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """

    kind = "uniform"
    description = "1/L on every bin (learns nothing)"

    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        pass

    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {n: np.full((len(r), len(self.learnt[n].levels)), 1.0 / len(self.learnt[n].levels))
                for n, r in rows.items()}

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        return {}, {}

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        pass


class _Means:
    """Shared by ``prior`` and ``position``: the training mean of a scale (array ``<array_key>``)."""

    means: dict[str, np.ndarray]

    def _fit_means(self, y: ScaleArrays) -> None:
        self.means = {n: _mean(v.probs, v.probs.shape[1]) for n, v in y.items()}

    def _predict_means(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {n: _tile(self.means[n], len(r)) for n, r in rows.items()}

    def _mean_arrays(self) -> dict[str, np.ndarray]:
        return {array_key(self.learnt[n]): m for n, m in self.means.items()}

    def _set_means(self, arrays: dict[str, np.ndarray], names: list[str]) -> None:
        self.means = {n: np.asarray(expect_array(arrays, array_key(self.learnt[n]), (len(self.learnt[n].levels),),
                                                 f"the levels of scale {n!r} in model.json", kind="f",
                                                 distributions=True), dtype=np.float64) for n in names}


@register
class Prior(_Means, Estimator):
    """The training mean of every scale's distributions, predicted for every item.

    STC-3 quality: the mean A, S and E distributions over the training dialogues. Nuggets: the mean over the
    training customer turns, and over the helpdesk turns. A turn-level scale: the mean over its labelled turns.
    """

    kind = "prior"
    description = "training mean of each distribution (A, S, E; customer and helpdesk turns)"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.means = {}

    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        self._fit_means(y)

    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._predict_means(rows)

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        return {}, self._mean_arrays()

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        self._set_means(arrays, list(self.learnt))


@register
class Position(_Means, Estimator):
    """Turn-level distributions (nuggets) by turn position; dialogue-level scales (quality) as :class:`Prior`.

    A turn's key is ``(min(position, max_position), is_last)``; its prediction on a scale is the mean
    distribution of the scale's training turns with that key (for STC-3's nuggets: the turns of the scale's
    sender), or the scale's mean when fewer than ``min_turns`` training turns had the key.

    Parameters
    ----------
    max_position : int in 0..10**6, default 6
        Positions (0-based) above it share one key.
    min_turns : int in 1..10**9, default 5
        Training turns a key needs to be used; rarer keys fall back to the sender's mean.

    Examples
    --------
    >>> import dialeval
    >>> t = lambda s, i: {"sender": s, "utterances": [f"turn of dialogue {i}"]}
    >>> c = dialeval.read_corpus([{"id": str(i), "turns": [t("customer", i), t("helpdesk", i)], "annotations": [
    ...     {"quality": {"A": 0, "S": 0, "E": 0}, "nugget": ["CNUG0", "HNaN"]}]} for i in range(3)])
    >>> Position(min_turns=2).fit(c).predict(c).helpdesk[0].round(3).tolist()
    [0.0, 0.0, 1.0]
    """

    kind = "position"
    description = "nugget mean per sender, turn position and last-turn flag; quality = prior"
    defaults: ClassVar[dict] = {"max_position": 6, "min_turns": 5}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.params["max_position"] = check_param(self.kind, "max_position", self.params["max_position"],
                                                  type_=int, lo=0, hi=10**6)
        self.params["min_turns"] = check_param(self.kind, "min_turns", self.params["min_turns"], type_=int, lo=1,
                                               hi=10**9)
        self.tables: dict[str, dict[str, np.ndarray]] = {}
        self.means = {}

    def _keys(self, table: TurnTable, want: np.ndarray) -> np.ndarray:
        """``k × 2`` int keys (clipped position, is_last) of the turns selected by ``want``."""
        pos = np.minimum(table.position[want], self.params["max_position"])
        return np.stack([pos, table.is_last[want].astype(np.int64)], axis=1).astype(np.int64)

    @staticmethod
    def _key_means(keys: np.ndarray, probs: np.ndarray, width: int) -> dict[str, np.ndarray]:
        """The mean distribution of each key (rows of ``keys`` and ``probs`` aligned), counts and overall mean."""
        uniq, inverse, counts = (np.unique(keys, axis=0, return_inverse=True, return_counts=True)
                                 if len(keys) else (np.zeros((0, 2), np.int64), np.zeros(0, np.int64),
                                                    np.zeros(0, np.int64)))
        inverse = np.asarray(inverse).reshape(-1)
        sums = np.zeros((len(uniq), width))
        np.add.at(sums, inverse, probs)
        means = sums / np.maximum(counts, 1)[:, None]
        return {"keys": uniq, "means": means, "counts": counts.astype(np.int64), "mean": _mean(probs, width)}

    def _lookup(self, t: dict[str, np.ndarray], keys: np.ndarray) -> np.ndarray:
        """Each key's mean (the overall mean for keys seen on fewer than ``min_turns`` training turns)."""
        lookup = {(int(p), int(last)): r for r, (p, last) in enumerate(t["keys"].tolist())
                  if t["counts"][r] >= self.params["min_turns"]}
        out = np.tile(t["mean"], (len(keys), 1))
        for i, (p, last) in enumerate(keys.tolist()):
            r = lookup.get((p, last))
            if r is not None:
                out[i] = t["means"][r]
        return normalise_rows(out) if len(out) else out.reshape(0, len(t["mean"]))

    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        self._fit_means({n: v for n, v in y.items() if self.learnt[n].level == "dialogue"})
        self.tables = {}
        for name, v in y.items():
            if self.learnt[name].level == "dialogue":
                continue
            rows, probs = v.rows, v.probs
            order = np.argsort(rows)  # _keys lists the turns in flat order
            self.tables[name] = self._key_means(self._keys(table, self._selected(table, rows)), probs[order],
                                                probs.shape[1])

    @staticmethod
    def _selected(table: TurnTable, rows: np.ndarray) -> np.ndarray:
        want = np.zeros(len(table.texts), dtype=bool)
        want[rows] = True
        return want

    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = self._predict_means({n: r for n, r in rows.items() if n in self.means})
        for name, t in self.tables.items():  # rows_for gives flat order, as _keys does
            out[name] = self._lookup(t, self._keys(table, self._selected(table, rows[name])))
        return out

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = self._mean_arrays()
        for name, t in self.tables.items():
            arrays |= {f"{array_key(self.learnt[name])}_{field}": a for field, a in t.items()}
        return {}, arrays

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        self._set_means(arrays, [n for n, s in self.learnt.items() if s.level == "dialogue"])
        self.tables = {}
        for name, s in self.learnt.items():
            if s.level != "dialogue":
                width, why = len(s.levels), f"the levels of scale {name!r} in model.json"
                keys = expect_array(arrays, f"{array_key(s)}_keys", (None, 2), "(position, is last) keys", kind="i")
                k = len(keys)
                self.tables[name] = {
                    "keys": keys,
                    "means": expect_array(arrays, f"{array_key(s)}_means", (k, width), f"{k} keys and {why}",
                                          kind="f", distributions=True),
                    "counts": expect_array(arrays, f"{array_key(s)}_counts", (k,), f"{k} keys", kind="i"),
                    "mean": expect_array(arrays, f"{array_key(s)}_mean", (width,), why, kind="f",
                                         distributions=True)}
