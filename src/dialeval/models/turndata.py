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
Targets and predictions are ``{scale: (rows, probs)}``: rows of dialogues of a
:class:`~dialeval.models.data.TurnTable` for a dialogue-level scale, flat turn rows otherwise, and one
distribution per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError
from dialeval.models.data import TurnTable, rounded
from dialeval.tasks import Task, context_of, tasks_for

TurnArrays = dict[str, tuple[np.ndarray, np.ndarray]]
ScaleArrays = TurnArrays
"""``{scale: (rows, probs)}``: dialogue rows (dialogue-level scales) or flat turn rows, one distribution each."""


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
        return cls(name, tuple(d["levels"]), str(d["kind"]), tuple(d["senders"]), int(d.get("first", 0)),
                   str(d.get("level", "turn")))


def labelled_scales_of(corpus: Corpus) -> dict[str, TurnScale]:
    """The scales of ``corpus`` that label at least one item: the turn-level ones (with the senders of labelled
    turns and the earliest labelled position), then the dialogue-level ones, each in the corpus's order."""
    senders: dict[str, dict[str, None]] = {}
    first: dict[str, int] = {}
    rated: set[str] = set()
    for d in corpus.dialogues:
        rated.update(name for name, labels in d.labels.items() if any(v is not None for v in labels))
        for pos, t in enumerate(d.turns):
            for name, labels in t.labels.items():
                s = corpus.scales.get(name)
                if s is not None and s.level == "turn" and any(v is not None for v in labels):
                    senders.setdefault(name, {})[t.sender] = None
                    first[name] = min(first.get(name, pos), pos)
    out = {name: TurnScale(name, corpus.scales[name].levels, corpus.scales[name].kind, tuple(sorted(who)),
                           first[name]) for name, who in senders.items()}
    return out | {name: TurnScale(name, s.levels, s.kind, (), 0, "dialogue") for name, s in corpus.scales.items()
                  if s.level == "dialogue" and name in rated}


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


def dialogue_targets(corpus: Corpus, table: TurnTable, d, what: str) -> np.ndarray:
    """The distributions ``d`` (:class:`~dialeval.distributions.Distributions`) of every dialogue of ``table``;
    an error naming the dialogues without annotations of ``what``."""
    if d is None or d.ids != table.ids:
        missing = sorted(set(table.ids) - set(d.ids if d is not None else []))
        raise DialevalError(f"{len(missing)} dialogue(s) have no {what} annotations, e.g. "
                            f"{missing[:5]}; training on {what} needs them all", file=corpus.source)
    return d.probs.astype(np.float64)


def block_targets(corpus: Corpus, table: TurnTable, d, rows: np.ndarray, sender: str, what: str) -> np.ndarray:
    """The distributions ``d`` of every turn at ``rows`` (those of ``sender``); an error naming the dialogues
    with such a turn unlabelled."""
    keys = list(zip([table.ids[i] for i in table.dialogue[rows].tolist()], table.position[rows].tolist(),
                    strict=True))
    if d is None or d.item_keys() != keys:
        have = set(d.item_keys() if d is not None else [])
        missing = sorted({i for i, t in keys if (i, t) not in have})
        raise DialevalError(f"{len(missing)} dialogue(s) have {sender} turns without {what} "
                            f"annotations, e.g. {missing[:5]}; training on {what}s needs them all",
                            file=corpus.source)
    return d.probs.astype(np.float64)


def scale_targets(corpus: Corpus, table: TurnTable, scales: dict[str, TurnScale]) -> ScaleArrays:
    """The annotators' distribution of every item of each scale (the training targets): every dialogue (and
    every turn of the sender) of a subtask's scale, the labelled turns (or dialogues) of another scale.

    Raises
    ------
    DialevalError
        When an item of a subtask's scale is unlabelled, or no turn is labelled on another scale.
    """
    from dialeval.distributions import gold_distributions

    gold = gold_distributions(corpus, list(scales))
    out: ScaleArrays = {}
    for name, s in scales.items():
        d = gold.get(name)
        if s.subtask is not None and s.level == "dialogue":
            out[name] = (np.arange(table.n_dialogues), dialogue_targets(corpus, table, d, s.subtask))
        elif s.subtask is not None:
            rows = rows_for(table, s)
            out[name] = (rows, block_targets(corpus, table, d, rows, s.senders[0], s.subtask))
        elif d is None or not len(d):
            raise DialevalError(f"no {'dialogue' if s.level == 'dialogue' else 'turn'} is labelled on scale "
                                f"{name!r}; training needs labelled items", file=corpus.source)
        elif s.level == "dialogue":
            out[name] = (dialogue_rows(table, d.ids), d.probs.astype(np.float64))
        else:
            out[name] = (flat_rows(table, d.item_keys()), d.probs.astype(np.float64))
    return out


def panel_labels(corpus: Corpus, table: TurnTable, names: list[str]) -> np.ndarray | None:
    """Each annotator's label of the dialogue-level scales ``names``, when the annotators are a fixed panel.

    A panel: each scale declares one (:attr:`Scale.panel <dialeval.corpus.Scale.panel>`: the j-th label of
    every item is the same person's; STC-3 lists its 19 annotators in one order throughout), and every dialogue
    labelled on these scales carries the same number ``J >= 2`` of labels on each. When the corpus names its
    annotators, every labelled dialogue must name the same ones in the same order.

    Returns
    -------
    ndarray of int64, shape (n_dialogues, len(names), J), or None
        The index of annotator j's level of scale k for table row i (-1: no label: an annotator who gave none,
        or a dialogue not labelled on the scale); None when the labels are not a panel's.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Scale, Turn
    >>> s = Scale("q", ("good", "bad"), "ordinal", "dialogue", panel=True)
    >>> c = Corpus([Dialogue("a", [Turn("u", ["hi"])], {"q": ["good", "bad"]}),
    ...             Dialogue("b", [Turn("u", ["yo"])], {"q": [None, "good"]})], {"q": s})
    >>> panel_labels(c, TurnTable.from_corpus(c, stc3=False), ["q"]).tolist()
    [[[0, 1]], [[-1, 0]]]
    >>> c.dialogues[1].labels["q"].append("bad")  # three labels here, two there: not a panel
    >>> panel_labels(c, TurnTable.from_corpus(c, stc3=False), ["q"]) is None
    True
    >>> c.dialogues[1].labels["q"].pop()
    'bad'
    >>> crowd = Corpus(c.dialogues, {"q": Scale("q", ("good", "bad"), "ordinal", "dialogue")})
    >>> panel_labels(crowd, TurnTable.from_corpus(crowd, stc3=False), ["q"]) is None  # no panel declared
    True
    """
    if table.n_dialogues != len(corpus.dialogues):
        raise DialevalError(f"a table of {table.n_dialogues} dialogues is not the corpus's table "
                            f"({len(corpus.dialogues)} dialogues)", file=corpus.source)
    # the table's rows are the corpus's dialogues in order (ids may repeat: STC-3's translations share theirs)
    return _panel(corpus, names, [(d.annotators, [d.labels.get(n) or [] for n in names]) for d in corpus.dialogues])


def turn_panel_labels(corpus: Corpus, table: TurnTable, name: str, rows: np.ndarray) -> np.ndarray | None:
    """As :func:`panel_labels`, for the turn-level scale ``name`` at flat turn ``rows`` (a model's targets' rows):
    ``(len(rows), J)`` level indices, or None when its labels are not a panel's.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Scale, Turn
    >>> s = Scale("n", ("yes", "no"), "nominal", "turn", panel=True)
    >>> c = Corpus([Dialogue("a", [Turn("u", ["hi"], {"n": ["no", "yes"]}), Turn("s", ["yo"], {"n": ["no", "no"]})])],
    ...            {"n": s})
    >>> turn_panel_labels(c, TurnTable.from_corpus(c, stc3=False), "n", np.array([1, 0])).tolist()
    [[1, 1], [1, 0]]
    """
    turns = [corpus.dialogues[d].turns[t] for d, t in zip(table.dialogue[rows].tolist(),
                                                           table.position[rows].tolist(), strict=True)]
    out = _panel(corpus, [name], [(t.annotators, [t.labels.get(name) or []]) for t in turns])
    return None if out is None else out[:, 0]


def _panel(corpus: Corpus, names: list[str], items: list[tuple[list[str] | None, list[list]]]) -> np.ndarray | None:
    """``(len(items), len(names), J)`` level indices of items' per-annotator label lists (``(annotator ids or
    None, one list per scale)``), or None when they are not a fixed panel's (see :func:`panel_labels`)."""
    sizes = {len(x) for _, per in items for x in per if x}
    named = {tuple(who) for who, per in items if who is not None and any(per)}
    if not all(corpus.scales[n].panel for n in names) or len(sizes) != 1 or min(sizes) < 2 or len(named) > 1:
        return None
    out = np.full((len(items), len(names), sizes.pop()), -1, dtype=np.int64)
    scales = [corpus.scales[n] for n in names]
    for r, (_, per) in enumerate(items):
        for k, labels in enumerate(per):
            for j, label in enumerate(labels):
                if label is not None:
                    out[r, k, j] = scales[k].index(label)
    return out


def dialogue_rows(table: TurnTable, ids: list[str]) -> np.ndarray:
    """The table rows of dialogues ``ids`` (every id must be in the table)."""
    row_of = {i: r for r, i in enumerate(table.ids)}
    return np.array([row_of[i] for i in ids], dtype=np.int64)


def flat_rows(table: TurnTable, keys: list[tuple[str, int | None]]) -> np.ndarray:
    """Flat turn rows of ``(dialogue id, 0-based turn)`` keys (every key must be in the table)."""
    dialogues = dialogue_rows(table, [i for i, _ in keys])
    return (table.start[dialogues] + np.array([int(t) for _, t in keys], dtype=np.int64)).astype(np.int64)


def rows_for(table: TurnTable, scale: TurnScale) -> np.ndarray:
    """The rows a model predicts ``scale`` on: every dialogue for a dialogue-level scale; else the flat turns
    of the senders labelled in training, from the earliest position labelled in training on."""
    if scale.level == "dialogue":
        return np.arange(table.n_dialogues)
    who = np.isin(np.asarray(table.senders, dtype=object), list(scale.senders))
    return np.flatnonzero(who & (table.position >= scale.first))


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
