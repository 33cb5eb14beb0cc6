"""The scales a model learns, as targets: which items a scale labels, and its annotators' distributions.

What a model learns comes from the corpus model (:class:`~dialeval.corpus.Scale`) and the task declarations
(:mod:`dialeval.tasks`), nothing from the corpus's format or its senders' names:

- the scales of every declared task with a ``subtask`` (STC-3's ``quality``, ``nugget``) the model is asked
  for: every item of the task's level labelled (each dialogue for a dialogue-level scale, each utterance
  block of the scale's sender for a ``block`` task);
- every other scale that labels some item: a turn-level scale (DBDC's breakdown, WOCHAT's validity, ConTurE's
  overall impression...) on its labelled turns, learnt with the senders whose turns were labelled; a
  dialogue-level scale (DSTC9's ratings: likeable, coherent, human (overall)...) on its labelled dialogues,
  predicted for every dialogue.

What a model knows of each scale is a :class:`TurnScale`: the levels, the kind, the level (``dialogue`` or
``turn``) and, for a turn-level scale, the senders and the earliest position it predicts on new dialogues.
Targets are ``{scale: Targets(rows, probs, votes, panel)}`` (:class:`Targets`: how many annotators labelled each
item, and each annotator's labels too, when they come from a fixed panel) and predictions ``{scale: (rows,
probs)}``: rows of dialogues of a :class:`~dialeval.models.data.TurnTable` for a dialogue-level scale, flat
turn rows otherwise, and one distribution per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError
from dialeval.models.data import TurnTable, rounded
from dialeval.models.pools import annotator_pools, balance_pools
from dialeval.tasks import Task, context_of, tasks_for

TurnArrays = dict[str, tuple[np.ndarray, np.ndarray]]
"""Predictions ``{scale: (rows, probs)}``: dialogue rows (dialogue-level scales) or flat turn rows, one
distribution each."""


@dataclass(frozen=True)
class TurnScale:
    """A scale as a model knows it: ``levels`` (in order), ``kind``, ``level`` (``dialogue`` or ``turn``) and,
    for a turn-level scale, the labelled ``senders`` and ``first``, the earliest labelled position (DBDC
    leaves the system's opening turn unlabelled). ``subtask``: the STC-3 subtask of the scale's task, if any
    (its predictions take the STC-3 submission layout)."""

    name: str
    levels: tuple[str, ...]
    kind: str
    senders: tuple[str, ...]
    first: int = 0
    level: str = "turn"
    subtask: str | None = None

    @property
    def context(self) -> str:
        """What a model of the scale may read (:func:`dialeval.tasks.context_of`)."""
        return context_of(self.name, self.level)

    def to_json(self) -> dict:
        d = {"levels": list(self.levels), "kind": self.kind, "senders": list(self.senders), "first": self.first}
        return d if self.level == "turn" else {**d, "level": self.level}  # turn: as saved before levels

    @classmethod
    def from_json(cls, name: str, d: dict) -> TurnScale:
        """The scale as :meth:`to_json` wrote it; a ``TypeError`` naming the field for any other shape (read by
        the loader as a damaged model.json)."""
        for key in ("levels", "senders"):
            if not isinstance(d[key], list) or not all(isinstance(v, str) for v in d[key]):
                raise TypeError(f"model.json: scale {name!r}: {key} {d[key]!r} is not a list of names")
        return cls(name, tuple(d["levels"]), str(d["kind"]), tuple(d["senders"]), int(d.get("first", 0)),
                   str(d.get("level", "turn")))


def labelled_scales_of(corpus: Corpus) -> dict[str, TurnScale]:
    """The scales of ``corpus`` that label at least one item: the turn-level ones (with the senders of labelled
    turns and ``first``, see :func:`_first_predicted`), then the dialogue-level ones, each in the corpus's
    order."""
    senders: dict[str, dict[str, None]] = {}
    rated: set[str] = set()
    for d in corpus.dialogues:
        rated.update(name for name, labels in d.labels.items() if any(v is not None for v in labels))
        for t in d.turns:
            for name, labels in t.labels.items():
                s = corpus.scales.get(name)
                if s is not None and s.level == "turn" and any(v is not None for v in labels):
                    senders.setdefault(name, {})[t.sender] = None
    out = {name: TurnScale(name, corpus.scales[name].levels, corpus.scales[name].kind, tuple(sorted(who)),
                           _first_predicted(corpus, name, set(who))) for name, who in senders.items()}
    return out | {name: TurnScale(name, s.levels, s.kind, (), 0, "dialogue") for name, s in corpus.scales.items()
                  if s.level == "dialogue" and name in rated}


def _first_predicted(corpus: Corpus, name: str, senders: set[str]) -> int:
    """The first position a model of turn scale ``name`` predicts: one past the last position, before the
    earliest labelled one, at which a labelled sender spoke unlabelled (DBDC's system greeting at 0); 0 when
    none did. Positions before it are those training saw such turns at and never labelled.

    Not the earliest labelled position itself: a model trained on dialogues the system opens (first label at
    2) skipped the system's first turn, at 1, of every dialogue the user opens.
    """
    turns = [(pos, any(v is not None for v in t.labels.get(name, ()))) for d in corpus.dialogues
             for pos, t in enumerate(d.turns) if t.sender in senders]
    earliest = min(pos for pos, labelled in turns if labelled)
    return max((pos + 1 for pos, _ in turns if pos < earliest), default=0)


def subtask_scales(tasks: tuple[Task, ...], scales: dict, subtasks: tuple[str, ...]) -> dict[str, TurnScale]:
    """The scales (:class:`~dialeval.corpus.Scale` by name) of the ``tasks`` whose ``subtask`` is among
    ``subtasks``, in subtask order: each item of the task's level is one to predict (a block-level scale: every
    turn of its sender)."""
    out: dict[str, TurnScale] = {}
    for sub in subtasks:
        for t in tasks:
            if t.subtask != sub:
                continue
            for name in t.scales:
                s = scales[name]
                senders = () if t.level == "dialogue" else (s.sender,) if s.sender else ()
                out[name] = TurnScale(name, s.levels, s.kind, senders, 0, s.level, sub)
    return out


def scales_to_learn(corpus: Corpus, subtasks: tuple[str, ...]) -> dict[str, TurnScale]:
    """The scales a model of ``subtasks`` learns from ``corpus`` (see the module), in task order."""
    tasks = tasks_for(corpus.scales)
    out = subtask_scales(tasks, corpus.scales, subtasks)
    if any(t.subtask is not None for t in tasks):
        return out
    return out | labelled_scales_of(corpus)


def learnt_scales(subtasks: tuple[str, ...], turn_scales: dict[str, TurnScale]) -> dict[str, TurnScale]:
    """A saved model's scales: those of its STC-3 ``subtasks`` (declared by :func:`~dialeval.io.stc3.stc3_scales`)
    and its ``turn_scales``."""
    from dialeval.io.stc3 import stc3_scales

    scales = stc3_scales()
    return subtask_scales(tasks_for(scales), scales, subtasks) | turn_scales


@dataclass(frozen=True)
class Targets:
    """One scale's training targets: its labelled items and what their annotators said.

    ``rows``: the items, as rows of a :class:`~dialeval.models.data.TurnTable` (dialogue rows for a
    dialogue-level scale, flat turn rows otherwise), in corpus order. ``probs``: ``(len(rows), L)``, the
    annotators' distribution of each item (its gold, :func:`~dialeval.distributions.label_counts`). ``panel``:
    ``(len(rows), J)``, the level index of each of the J annotators' labels (-1: none) when the labels come from
    a fixed panel (:func:`panel_of`); None otherwise. ``votes``: ``(len(rows),)``, how many annotators labelled
    each item. Every model kind reads ``rows`` and ``probs``; a kind that can learn the
    annotators one by one (``neural``) reads ``panel`` too; :meth:`Estimator.fit
    <dialeval.models.base.Estimator.fit>` reads ``votes`` (``min_share="auto"``).
    """

    rows: np.ndarray
    probs: np.ndarray
    votes: np.ndarray
    panel: np.ndarray | None = None


ScaleArrays = dict[str, Targets]
"""The training targets of every scale a model learns, by name (:func:`scale_targets`)."""


def scale_targets(corpus: Corpus, table: TurnTable, scales: dict[str, TurnScale], *, balance: bool = False
                  ) -> ScaleArrays:
    """The training targets of each scale: every dialogue (and every turn of the sender) of a subtask's scale,
    the labelled turns (or dialogues) of another scale; the table's rows are the corpus's dialogues in order
    (ids may repeat: STC-3's translations share theirs). ``balance``: each scale's distributions with the
    mean of each annotator pool made the scale's (:func:`dialeval.models.pools.balance_pools`; ``votes`` and
    ``panel`` stay as labelled).

    Raises
    ------
    DialevalError
        When ``table`` is not the corpus's, an item of a subtask's scale is unlabelled, or no item is labelled
        on another scale.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Scale, Turn
    >>> c = Corpus([Dialogue("a", [Turn("u", ["hi"])], {"q": ["good", "bad"]}),
    ...             Dialogue("a", [Turn("u", ["yo"])]), Dialogue("b", [Turn("u", ["ok"])], {"q": [None, "good"]})],
    ...            {"q": Scale("q", ("good", "bad"), "ordinal", "dialogue", panel=True)})
    >>> t = scale_targets(c, TurnTable.from_corpus(c, senders=None), labelled_scales_of(c))["q"]
    >>> t.rows.tolist(), t.probs.tolist(), t.panel.tolist(), t.votes.tolist()
    ([0, 2], [[0.5, 0.5], [1.0, 0.0]], [[0, 1], [-1, 0]], [2, 1])
    """
    from dialeval.distributions import gold_distributions, labelled_items

    if table.n_dialogues != len(corpus.dialogues):
        raise DialevalError(f"a table of {table.n_dialogues} dialogues is not the corpus's table "
                            f"({len(corpus.dialogues)} dialogues)", file=corpus.source)
    gold = gold_distributions(corpus, list(scales))
    out: ScaleArrays = {}
    for name, s in scales.items():
        scale = corpus.scales[name]
        items = [(i, t, item) for i, t, item in labelled_items(corpus, scale)
                 if any(v is not None for v in item.labels[name])]  # gold's items (at least one label each)
        rows = np.array([i if t is None else int(table.start[i]) + t for i, t, _ in items], dtype=np.int64)
        if s.subtask is not None:
            _check_every_item(corpus, table, s, rows)
        elif not len(rows):
            raise DialevalError(f"no {'dialogue' if s.level == 'dialogue' else 'turn'} is labelled on scale "
                                f"{name!r}; training needs labelled items", file=corpus.source)
        probs = gold[name].probs.astype(np.float64)
        if balance:
            probs = balance_pools(probs, annotator_pools([x.annotators for *_, x in items]))
        out[name] = Targets(rows, probs, gold[name].n_labels.astype(np.int64),
                            panel_of(scale, [x for *_, x in items]))
    return out


def _check_every_item(corpus: Corpus, table: TurnTable, scale: TurnScale, rows: np.ndarray) -> None:
    """An error naming the dialogues with an unlabelled item of a subtask's ``scale`` (labelled: ``rows``)."""
    want = rows_for(table, scale)
    if np.array_equal(rows, want):
        return
    lacking = np.setdiff1d(want, rows)
    ids = sorted({table.ids[int(r if scale.level == "dialogue" else table.dialogue[r])] for r in lacking.tolist()})
    what = scale.subtask
    if scale.level == "dialogue":
        raise DialevalError(f"{len(ids)} dialogue(s) have no {what} annotations, e.g. {ids[:5]}; training on "
                            f"{what} needs them all", file=corpus.source)
    raise DialevalError(f"{len(ids)} dialogue(s) have {scale.senders[0]} turns without {what} annotations, e.g. "
                        f"{ids[:5]}; training on {what}s needs them all", file=corpus.source)


def panel_of(scale: Scale, items: list[Dialogue | Turn]) -> np.ndarray | None:
    """Each annotator's label of ``scale`` on ``items`` (dialogues or turns), when they come from a fixed panel.

    A panel: the scale declares one (:attr:`Scale.panel <dialeval.corpus.Scale.panel>`: the j-th label of every
    item is the same person's; STC-3 lists its 19 annotators in one order throughout), and every item carries
    the same number ``J >= 2`` of labels. When the corpus names its annotators, every item must name the same
    ones in the same order.

    Returns
    -------
    ndarray of int64, shape (len(items), J), or None
        The index of annotator j's level on item i (-1: the annotator gave none); None when the labels are not
        a panel's.

    Examples
    --------
    >>> from dialeval.corpus import Dialogue, Scale, Turn
    >>> s = Scale("q", ("good", "bad"), "ordinal", "dialogue", panel=True)
    >>> a = Dialogue("a", [Turn("u", ["hi"])], {"q": ["good", "bad"]})
    >>> b = Dialogue("b", [Turn("u", ["yo"])], {"q": [None, "good"]})
    >>> panel_of(s, [a, b]).tolist()
    [[0, 1], [-1, 0]]
    >>> b.labels["q"].append("bad")  # three labels here, two there: not a panel
    >>> panel_of(s, [a, b]) is None
    True
    >>> panel_of(Scale("q", ("good", "bad"), "ordinal", "dialogue"), [a]) is None  # no panel declared
    True
    """
    sizes = {len(x.labels[scale.name]) for x in items}
    named = {tuple(x.annotators) for x in items if x.annotators is not None}
    if not scale.panel or len(sizes) != 1 or min(sizes) < 2 or len(named) > 1:
        return None
    out = np.full((len(items), sizes.pop()), -1, dtype=np.int64)
    for r, x in enumerate(items):
        for j, label in enumerate(x.labels[scale.name]):
            if label is not None:
                out[r, j] = scale.index(label)
    return out


def rows_for(table: TurnTable, scale: TurnScale) -> np.ndarray:
    """The rows a model predicts ``scale`` on: every dialogue for a dialogue-level scale; else the flat turns
    of the senders labelled in training, from ``scale.first`` on (before it, training saw those senders' turns
    and never a label: DBDC's greeting), and any turn of theirs the table's corpus labels (``table.labelled``)."""
    if scale.level == "dialogue":
        return np.arange(table.n_dialogues)
    who = np.isin(np.asarray(table.senders, dtype=object), list(scale.senders))
    labelled = table.labelled.get(scale.name)
    return np.flatnonzero(who & ((table.position >= scale.first) if labelled is None
                                 else (table.position >= scale.first) | labelled))


def turn_records(table: TurnTable, turns: TurnArrays, scales: dict[str, TurnScale], digits: int = 6
                 ) -> list[dict]:
    """Predictions as a run in dialeval's per-item layout (:mod:`dialeval.io.turnruns`), hard label = argmax.

    ``[{"id", <dialogue scale>: {level: p}, "turns": [{"turn": t, <scale>: {level: p}, "labels": {<scale>:
    level}}]}]``, every dialogue of the table (in order), each turn once with all its scales; a dialogue-level
    scale (rows: dialogues) beside ``id``.
    """
    records: list[dict] = [{"id": i, "turns": []} for i in table.ids]
    per_turn: dict[int, dict] = {}
    for name, (rows, probs) in turns.items():
        levels = scales[name].levels
        if scales[name].level == "dialogue":
            for r, p in zip(rows.tolist(), probs, strict=True):
                records[r][name] = rounded(levels, p, digits)
            continue
        for r, p in zip(rows.tolist(), probs, strict=True):
            entry = per_turn.get(r)
            if entry is None:
                entry = per_turn[r] = {"turn": int(table.position[r]), "labels": {}}
                records[int(table.dialogue[r])]["turns"].append(entry)
            entry[name] = rounded(levels, p, digits)
            entry["labels"][name] = levels[int(np.argmax(p))]
    for rec in records:
        rec["turns"] = sorted(rec.pop("turns"), key=lambda e: e["turn"])  # last key: dialogue scales first
        for e in rec["turns"]:
            e["labels"] = e.pop("labels")  # last key: distributions first
    return records
