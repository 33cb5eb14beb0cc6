"""Turn-level scales of any corpus as model targets: which turns a scale labels, and its annotators' distributions.

A model of turn-level scales (DBDC's breakdown, WOCHAT's validity, ConTurE's overall impression...) learns,
for each labelled turn-level scale of its training corpus, the distribution of the annotators' labels of a
turn. What it knows of each scale is a :class:`TurnScale`: the levels, the kind, and the senders whose turns
were labelled in training (the turns it predicts on new dialogues). Everything comes from the corpus model
(:class:`~dialeval.corpus.Scale`), nothing from the corpus's format.

Targets and predictions are ``{scale: (rows, probs)}``: flat turn rows of a
:class:`~dialeval.models.data.TurnTable` and one distribution per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError
from dialeval.models.data import TurnTable

TurnArrays = dict[str, tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class TurnScale:
    """A turn-level scale as a model knows it: ``levels`` (in order), ``kind``, the labelled ``senders`` and
    ``first``, the earliest labelled position (DBDC leaves the system's opening turn unlabelled)."""

    name: str
    levels: tuple[str, ...]
    kind: str
    senders: tuple[str, ...]
    first: int = 0

    def to_json(self) -> dict:
        return {"levels": list(self.levels), "kind": self.kind, "senders": list(self.senders), "first": self.first}

    @classmethod
    def from_json(cls, name: str, d: dict) -> TurnScale:
        return cls(name, tuple(d["levels"]), str(d["kind"]), tuple(d["senders"]), int(d.get("first", 0)))


def turn_scales_of(corpus: Corpus) -> dict[str, TurnScale]:
    """The turn-level scales of ``corpus`` that label at least one turn, with the senders of labelled turns."""
    senders: dict[str, dict[str, None]] = {}
    first: dict[str, int] = {}
    for d in corpus.dialogues:
        for pos, t in enumerate(d.turns):
            for name, labels in t.labels.items():
                s = corpus.scales.get(name)
                if s is not None and s.level == "turn" and any(v is not None for v in labels):
                    senders.setdefault(name, {})[t.sender] = None
                    first[name] = min(first.get(name, pos), pos)
    return {name: TurnScale(name, corpus.scales[name].levels, corpus.scales[name].kind, tuple(sorted(who)),
                            first[name]) for name, who in senders.items()}


def flat_rows(table: TurnTable, keys: list[tuple[str, int | None]]) -> np.ndarray:
    """Flat turn rows of ``(dialogue id, 0-based turn)`` keys (every key must be in the table)."""
    row_of = {i: r for r, i in enumerate(table.ids)}
    return np.array([int(table.start[row_of[i]]) + int(t) for i, t in keys], dtype=np.int64)


def turn_targets(corpus: Corpus, table: TurnTable, scales: dict[str, TurnScale]) -> TurnArrays:
    """The annotators' distribution of every labelled turn, per scale (the training targets).

    Raises
    ------
    DialevalError
        When no turn is labelled on a scale asked for.
    """
    from dialeval.distributions import gold_distributions

    gold = gold_distributions(corpus, list(scales))
    out: TurnArrays = {}
    for name in scales:
        d = gold.get(name)
        if d is None or not len(d):
            raise DialevalError(f"no turn is labelled on scale {name!r}; training needs labelled turns",
                                file=corpus.source)
        out[name] = (flat_rows(table, d.item_keys()), d.probs.astype(np.float64))
    return out


def rows_for(table: TurnTable, scale: TurnScale) -> np.ndarray:
    """The flat turns a model predicts ``scale`` on: those of the senders labelled in training, from the
    earliest position labelled in training on."""
    who = np.isin(np.asarray(table.senders, dtype=object), list(scale.senders))
    return np.flatnonzero(who & (table.position >= scale.first))


def turn_records(table: TurnTable, turns: TurnArrays, scales: dict[str, TurnScale], digits: int = 6
                 ) -> list[dict]:
    """Predictions as a run in dialeval's turn layout (:mod:`dialeval.io.turnruns`), hard label = argmax.

    ``[{"id", "turns": [{"turn": t, <scale>: {level: p}, "labels": {<scale>: level}}]}]``, every dialogue
    of the table (in order), each turn once with all its scales.
    """
    records: list[dict] = [{"id": i, "turns": []} for i in table.ids]
    per_turn: dict[int, dict] = {}
    for name, (rows, probs) in turns.items():
        levels = scales[name].levels
        for r, p in zip(rows.tolist(), probs, strict=True):
            entry = per_turn.get(r)
            if entry is None:
                entry = per_turn[r] = {"turn": int(table.position[r]), "labels": {}}
                records[int(table.dialogue[r])]["turns"].append(entry)
            entry[name] = {lv: round(float(v), digits) for lv, v in zip(levels, p.tolist(), strict=True)}
            entry["labels"][name] = levels[int(np.argmax(p))]
    for rec in records:
        rec["turns"].sort(key=lambda e: e["turn"])
        for e in rec["turns"]:
            e["labels"] = e.pop("labels")  # last key: distributions first
    return records
