"""The baselines a model must beat: ``uniform``, ``prior`` (training mean) and ``position`` (ND by turn position).

- ``uniform`` puts ``1/L`` on every bin of every distribution; it learns nothing.
- ``prior`` predicts the training mean of each distribution: one A, S and E distribution for every
  dialogue, one customer and one helpdesk nugget distribution for every turn of that sender.
- ``position`` predicts quality like ``prior``, and the nugget distribution of a turn as the training mean
  of the turns with the same key ``(sender, min(position, max_position), is_last)``; a key seen on fewer
  than ``min_turns`` training turns falls back to the mean of the sender's turns.

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

from dialeval.errors import DialevalError, describe
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS
from dialeval.models.base import Estimator, normalise_rows, register
from dialeval.models.data import CUSTOMER, HELPDESK, Predicted, TurnTable
from dialeval.models.turndata import TurnArrays

N_CUSTOMER = len(NUGGET_TYPES[CUSTOMER])
N_HELPDESK = len(NUGGET_TYPES[HELPDESK])
N_LEVELS = len(QUALITY_LEVELS)


def check_param(kind: str, name: str, value: object, *, type_: type, lo: float | None = None,
                hi: float | None = None, choices: tuple[str, ...] | None = None) -> object:
    """``value`` if it is a valid hyper-parameter, else a :class:`DialevalError` saying what is allowed.

    ``type_`` is ``int``, ``float`` (an int is accepted and converted) or ``str``; ``lo``/``hi`` bound
    numbers (inclusive), ``choices`` strings.

    Examples
    --------
    >>> check_param("linear", "C", 2, type_=float, lo=1e-6)
    2.0
    """
    received = value
    ok = (isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
          and (type_ is float or float(value).is_integer())) if type_ in (int, float) else isinstance(value, str)
    if ok and type_ in (int, float):
        value = type_(value)
        ok = (lo is None or value >= lo) and (hi is None or value <= hi)
    if ok and choices is not None:
        ok = value in choices
    if not ok:
        if choices is not None:
            allowed = ", ".join(choices)
        else:
            what = {int: "integers", float: "numbers", str: "strings"}[type_]
            bounds = [f">= {lo:g}" if lo is not None else "", f"<= {hi:g}" if hi is not None else ""]
            allowed = " ".join([what, " and ".join(b for b in bounds if b)]).strip()
        raise DialevalError(f"{kind}: parameter {name} = {describe(received)} is not allowed; allowed are {allowed}")
    return value


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

    def _fit(self, table: TurnTable, y: Predicted) -> None:
        pass

    def _predict(self, table: TurnTable) -> Predicted:
        n_c = int(table.is_customer.sum())
        return Predicted({k: np.full((table.n_dialogues, N_LEVELS), 1.0 / N_LEVELS) for k in QUALITY_KEYS},
                         np.full((n_c, N_CUSTOMER), 1.0 / N_CUSTOMER),
                         np.full((len(table.texts) - n_c, N_HELPDESK), 1.0 / N_HELPDESK))

    def _fit_turns(self, table: TurnTable, y: TurnArrays) -> None:
        pass

    def _predict_turns(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {n: np.full((len(r), len(self.scales[n].levels)), 1.0 / len(self.scales[n].levels))
                for n, r in rows.items()}

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        return {}, {}

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        pass


class _QualityPrior:
    """Shared by ``prior`` and ``position``: the training mean of A, S and E (arrays ``quality_<key>``)."""

    quality_mean: dict[str, np.ndarray] | None = None

    def _fit_quality(self, y: Predicted) -> None:
        self.quality_mean = ({k: _mean(y.quality[k], N_LEVELS) for k in QUALITY_KEYS}
                             if y.quality is not None else None)

    def _predict_quality(self, table: TurnTable) -> dict[str, np.ndarray] | None:
        if self.quality_mean is None:
            return None
        return {k: _tile(self.quality_mean[k], table.n_dialogues) for k in QUALITY_KEYS}

    def _quality_arrays(self) -> dict[str, np.ndarray]:
        return {} if self.quality_mean is None else {f"quality_{k}": self.quality_mean[k] for k in QUALITY_KEYS}

    def _set_quality(self, arrays: dict[str, np.ndarray]) -> None:
        self.quality_mean = ({k: np.asarray(arrays[f"quality_{k}"], dtype=np.float64) for k in QUALITY_KEYS}
                             if "quality_A" in arrays else None)


@register
class Prior(_QualityPrior, Estimator):
    """The training mean of every distribution, predicted for every dialogue and turn.

    Quality: the mean A, S and E distributions over the training dialogues. Nuggets: the mean over the
    training customer turns, and over the helpdesk turns.
    """

    kind = "prior"
    description = "training mean of each distribution (A, S, E; customer and helpdesk turns)"

    customer_mean: np.ndarray | None = None
    helpdesk_mean: np.ndarray | None = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.turn_means: dict[str, np.ndarray] = {}
        """Turn-level scales: the training mean distribution of each."""

    def _fit(self, table: TurnTable, y: Predicted) -> None:
        self._fit_quality(y)
        if y.customer is not None:
            self.customer_mean = _mean(y.customer, N_CUSTOMER)
            self.helpdesk_mean = _mean(y.helpdesk, N_HELPDESK)

    def _predict(self, table: TurnTable) -> Predicted:
        out = Predicted(self._predict_quality(table))
        if self.customer_mean is not None:
            n_c = int(table.is_customer.sum())
            out.customer = _tile(self.customer_mean, n_c)
            out.helpdesk = _tile(self.helpdesk_mean, len(table.texts) - n_c)
        return out

    def _fit_turns(self, table: TurnTable, y: TurnArrays) -> None:
        self.turn_means = {n: _mean(probs, probs.shape[1]) for n, (_, probs) in y.items()}

    def _predict_turns(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {n: _tile(self.turn_means[n], len(r)) for n, r in rows.items()}

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = self._quality_arrays()
        if self.customer_mean is not None:
            arrays |= {"customer": self.customer_mean, "helpdesk": self.helpdesk_mean}
        arrays |= {f"turn/{n}": m for n, m in self.turn_means.items()}
        return {}, arrays

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        self.turn_means = {k[5:]: np.asarray(v, dtype=np.float64) for k, v in arrays.items() if k.startswith("turn/")}
        self._set_quality(arrays)
        self.customer_mean = np.asarray(arrays["customer"], dtype=np.float64) if "customer" in arrays else None
        self.helpdesk_mean = np.asarray(arrays["helpdesk"], dtype=np.float64) if "helpdesk" in arrays else None


@register
class Position(_QualityPrior, Estimator):
    """Nugget distributions by sender and turn position; quality as :class:`Prior`.

    A turn's key is ``(min(position, max_position), is_last)`` within its sender; its prediction is the
    mean distribution of the training turns of that sender and key, or the sender's mean when fewer than
    ``min_turns`` training turns had the key.

    Parameters
    ----------
    max_position : int >= 0, default 6
        Positions (0-based) above it share one key.
    min_turns : int >= 1, default 5
        Training turns a key needs to be used; rarer keys fall back to the sender's mean.

    Examples
    --------
    >>> import dialeval
    >>> t = lambda s: {"sender": s, "utterances": ["x"]}
    >>> c = dialeval.read_corpus([{"id": str(i), "turns": [t("customer"), t("helpdesk")], "annotations": [
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
                                                  type_=int, lo=0)
        self.params["min_turns"] = check_param(self.kind, "min_turns", self.params["min_turns"], type_=int, lo=1)
        self.tables: dict[str, dict[str, np.ndarray]] = {}

    def _keys(self, table: TurnTable, want: np.ndarray) -> np.ndarray:
        """``k × 2`` int keys (clipped position, is_last) of the turns selected by ``want``."""
        pos = np.minimum(table.position[want], self.params["max_position"])
        return np.stack([pos, table.is_last[want].astype(np.int64)], axis=1).astype(np.int64)

    def _fit(self, table: TurnTable, y: Predicted) -> None:
        self._fit_quality(y)
        self.tables = {}
        if y.customer is None:
            return
        for sender, probs, width in ((CUSTOMER, y.customer, N_CUSTOMER), (HELPDESK, y.helpdesk, N_HELPDESK)):
            want = table.is_customer if sender == CUSTOMER else ~table.is_customer
            self.tables[sender] = self._key_means(self._keys(table, want), probs, width)

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

    def _predict_sender(self, table: TurnTable, sender: str) -> np.ndarray:
        want = table.is_customer if sender == CUSTOMER else ~table.is_customer
        return self._lookup(self.tables[sender], self._keys(table, want))

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

    def _predict(self, table: TurnTable) -> Predicted:
        out = Predicted(self._predict_quality(table))
        if self.tables:
            out.customer = self._predict_sender(table, CUSTOMER)
            out.helpdesk = self._predict_sender(table, HELPDESK)
        return out

    def _fit_turns(self, table: TurnTable, y: TurnArrays) -> None:
        self.tables = {}
        for name, (rows, probs) in y.items():
            want = np.zeros(len(table.texts), dtype=bool)
            want[rows] = True
            order = np.argsort(rows)  # _keys lists the turns in flat order
            self.tables[f"turn/{name}"] = self._key_means(self._keys(table, want), probs[order], probs.shape[1])

    def _predict_turns(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {}
        for name, r in rows.items():
            want = np.zeros(len(table.texts), dtype=bool)
            want[r] = True  # rows_for gives flat order, as _keys does
            out[name] = self._lookup(self.tables[f"turn/{name}"], self._keys(table, want))
        return out

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = self._quality_arrays()
        for sender, t in self.tables.items():
            arrays |= {f"{sender}_{name}": a for name, a in t.items()}
        return {}, arrays

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        self._set_quality(arrays)
        self.tables = {}
        for name in self.scales:
            self.tables[f"turn/{name}"] = {k: np.asarray(arrays[f"turn/{name}_{k}"])
                                           for k in ("keys", "means", "counts", "mean")}
        for sender in (CUSTOMER, HELPDESK):
            if f"{sender}_keys" in arrays:
                self.tables[sender] = {name: np.asarray(arrays[f"{sender}_{name}"])
                                       for name in ("keys", "means", "counts", "mean")}
