"""What models read and write: a flat table of turns, and predictions on it.

A model sees a corpus as a :class:`TurnTable`: one row per turn (utterance block) in dialogue order, with
the turn's text, sender and position. Its targets (:class:`~dialeval.models.turndata.Targets`) and
predictions (``{scale: (rows, probs)}``) are rows of that table (:mod:`dialeval.models.turndata`);
:class:`Predicted` is the predictions' view for callers: STC-3's subtasks as per quality key an ``n × 5``
array (levels ``2 .. -2``), and one row per customer turn (``CNUG0, CNUG, CNUG*, CNaN``) and per helpdesk
turn (``HNUG, HNUG*, HNaN``), in flat turn order (a submission file with :meth:`Predicted.to_records`), and
any other scale in :attr:`Predicted.turns`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.corpus import Corpus
from dialeval.distributions import labelled_items
from dialeval.errors import DialevalError, describe
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS, SENDERS
from dialeval.io.values import first_row_off_one
from dialeval.tasks import subtask_measures, tasks_for

SUBTASKS: tuple[str, ...] = tuple(subtask_measures())
"""The STC-3 subtasks a model learns, from the task declarations (:mod:`dialeval.tasks`): quality, nugget."""
SUBTASK_CHOICES: tuple[str, ...] = ("both", *SUBTASKS)
CUSTOMER, HELPDESK = SENDERS


def check_subtasks(subtask: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"both" | "quality" | "nugget"`` (or a tuple of subtasks) as a tuple of subtasks, in report order."""
    if isinstance(subtask, str):
        if subtask not in SUBTASK_CHOICES:
            raise DialevalError(f"subtask {describe(subtask)} is not allowed; allowed are "
                                + ", ".join(SUBTASK_CHOICES))
        return SUBTASKS if subtask == "both" else (subtask,)
    out = tuple(subtask)
    if not out or any(s not in SUBTASKS for s in out):
        raise DialevalError(f"subtasks {describe(subtask)} are not allowed; allowed are " + ", ".join(SUBTASKS))
    return tuple(s for s in SUBTASKS if s in out)


def check_corpus(corpus: object) -> Corpus:
    """The corpus, if it is a :class:`Corpus` with dialogues, each with a turn; a :class:`DialevalError` otherwise."""
    if not isinstance(corpus, Corpus):
        raise DialevalError(f"expected a dialeval Corpus (dialeval.read_corpus(...)), received "
                            f"{type(corpus).__name__}")
    if not len(corpus):
        raise DialevalError("the corpus has no dialogues", file=corpus.source)
    return corpus


def has_subtasks(corpus: Corpus) -> bool:
    """Whether the corpus's scales belong to tasks that declare an STC-3 subtask (``quality``, ``nugget``;
    :mod:`dialeval.tasks`): models of it learn those subtasks, and their runs take the STC-3 layout.

    Examples
    --------
    >>> import dialeval
    >>> has_subtasks(dialeval.read_corpus([{"id": "a", "turns": [{"sender": "customer", "utterances": ["hi"]}]}]))
    True
    """
    return any(t.subtask is not None for t in tasks_for(corpus.scales))


def check_senders(corpus: object, senders: tuple[str, ...]) -> Corpus:
    """The corpus, if it is a :class:`Corpus` whose every turn's sender is one of ``senders``; a
    :class:`DialevalError` naming the first other one (file, dialogue, turn) otherwise."""
    corpus = check_corpus(corpus)
    for d in corpus.dialogues:
        for t, turn in enumerate(d.turns):
            if turn.sender not in senders:
                raise DialevalError(f"sender {describe(turn.sender)} is not allowed; allowed are "
                                    f"{', '.join(senders)} (a model of STC-3's subtasks predicts every turn of "
                                    "these senders)", file=corpus.source, dialogue=d.id, field=f"turns[{t}].sender")
    return corpus


@dataclass(frozen=True)
class TurnTable:
    """A corpus flattened to turns, in dialogue order.

    ``texts[t]``, ``is_customer[t]``, ``dialogue[t]`` (row of its dialogue), ``position[t]`` (0-based) and
    ``n_turns[dialogue[t]]`` describe flat turn ``t``; ``start[i]:start[i + 1]`` are dialogue i's turns;
    ``labelled[scale][t]``: whether the corpus labels turn ``t`` on that turn-level scale.
    """

    ids: list[str]
    texts: list[str]
    is_customer: np.ndarray
    dialogue: np.ndarray
    position: np.ndarray
    n_turns: np.ndarray
    start: np.ndarray
    source: str | None = None
    senders: tuple[str, ...] = ()
    """Sender of each flat turn (any corpus: ``customer``/``helpdesk``, ``user``/``system``...)."""
    labelled: dict[str, np.ndarray] = field(default_factory=dict, compare=False)
    """Per turn-level scale of the corpus, a bool per flat turn: labelled by at least one annotator. A model
    predicts such a turn of a sender it knows wherever it is (:func:`~dialeval.models.turndata.rows_for`)."""

    @classmethod
    def from_corpus(cls, corpus: Corpus, *, senders: tuple[str, ...] | None = SENDERS) -> TurnTable:
        """The table of ``corpus``; every turn's sender must be one of ``senders`` (default: STC-3's customer and
        helpdesk, whose turns its subtasks label; None: any sender)."""
        corpus = check_corpus(corpus) if senders is None else check_senders(corpus, senders)
        n_turns = np.array([len(d.turns) for d in corpus.dialogues], dtype=np.int64)
        texts = [t.text for d in corpus.dialogues for t in d.turns]
        is_c = np.array([t.sender == CUSTOMER for d in corpus.dialogues for t in d.turns], dtype=bool)
        dlg = np.repeat(np.arange(len(n_turns)), n_turns)
        start = np.concatenate([[0], np.cumsum(n_turns)]).astype(np.int64)
        pos = np.arange(len(texts)) - start[dlg]
        senders = tuple(t.sender for d in corpus.dialogues for t in d.turns)
        labelled = {}
        for s in corpus.scales_at("turn"):  # the walk behind gold: turns of the senders the scale applies to
            labelled[s.name] = np.zeros(len(texts), dtype=bool)
            for i, t, item in labelled_items(corpus, s):
                labelled[s.name][start[i] + t] = any(v is not None for v in item.labels[s.name])
        return cls(corpus.ids(), texts, is_c, dlg, pos, n_turns, start, corpus.source, senders, labelled)

    @property
    def n_dialogues(self) -> int:
        return len(self.ids)

    @property
    def is_first(self) -> np.ndarray:
        return self.position == 0

    @property
    def is_last(self) -> np.ndarray:
        return self.position == self.n_turns[self.dialogue] - 1

    def turn_rows(self, rows: np.ndarray) -> np.ndarray:
        """The flat turn rows of the dialogues at ``rows`` (an index array), dialogue after dialogue."""
        rows = np.asarray(rows, dtype=np.int64)
        return np.concatenate([np.arange(self.start[r], self.start[r + 1]) for r in rows.tolist()]
                              ) if len(rows) else np.zeros(0, dtype=np.int64)

    def take(self, rows: np.ndarray) -> TurnTable:
        """The dialogues at ``rows`` (an index array), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        turns = self.turn_rows(rows)
        n_turns = self.n_turns[rows]
        start = np.concatenate([[0], np.cumsum(n_turns)]).astype(np.int64)
        dlg = np.repeat(np.arange(len(rows)), n_turns)
        return TurnTable([self.ids[r] for r in rows.tolist()], [self.texts[t] for t in turns.tolist()],
                         self.is_customer[turns], dlg, self.position[turns], n_turns, start, self.source,
                         tuple(self.senders[t] for t in turns.tolist()) if self.senders else (),
                         {name: v[turns] for name, v in self.labelled.items()})


def rounded(levels: tuple[str, ...], row: np.ndarray, digits: int = 6) -> dict[str, float]:
    """A distribution as a run file holds it: ``{level: probability rounded to digits}``, summing to 1 exactly
    in those digits.

    Each probability is rounded to ``digits`` decimals; when the rounded values do not add up to 1 (three
    thirds: 0.333333 x 3), the units of the last digit missing (or over) go to the levels whose rounding lost
    (or gained) the most, the largest remainder method, so no probability moves by more than one unit and a
    zero stays zero. A row that is not a distribution (its sum off 1 by more than a unit per level) is only
    rounded.

    Examples
    --------
    >>> rounded(("O", "T", "X"), np.array([1, 1, 1]) / 3)
    {'O': 0.333334, 'T': 0.333333, 'X': 0.333333}
    >>> rounded(("O", "T", "X"), np.array([0.5, 0.25, 0.25]))
    {'O': 0.5, 'T': 0.25, 'X': 0.25}
    """
    scale = 10 ** digits
    units = [round(float(v), digits) * scale for v in row]
    whole = [round(u) for u in units]
    short = scale - sum(whole)
    if short and abs(short) <= len(whole):
        exact = [float(v) * scale for v in row]
        if abs(sum(exact) - scale) <= len(whole):
            # the levels whose rounding lost most first (units missing), or gained most (units over)
            order = sorted(range(len(whole)), key=lambda i: whole[i] - exact[i], reverse=short < 0)
            step = 1 if short > 0 else -1
            for i in order[:abs(short)]:
                whole[i] += step
    return dict(zip(levels, (w / scale for w in whole), strict=True))


@dataclass
class Predicted:
    """Predicted (or gold) distributions on a :class:`TurnTable`; a subtask not predicted is None.

    ``quality[k]``: n × 5 over ``2, 1, 0, -1, -2``; ``customer``: one row per customer turn over
    ``CNUG0, CNUG, CNUG*, CNaN``; ``helpdesk``: one row per helpdesk turn over ``HNUG, HNUG*, HNaN``.
    """

    quality: dict[str, np.ndarray] | None = None
    customer: np.ndarray | None = None
    helpdesk: np.ndarray | None = None
    turns: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    """Turn-level scales of other corpora: ``{scale: (flat turn rows, distributions)}``."""

    @classmethod
    def of(cls, arrays: dict[str, tuple[np.ndarray, np.ndarray]], scales: dict) -> Predicted:
        """The STC-3 view of a model's ``{scale: (rows, probs)}``: the scales of the ``quality`` subtask as
        :attr:`quality`, those of ``nugget`` by the sender they label, any other scale in :attr:`turns`
        (``scales``: the model's :class:`~dialeval.models.turndata.TurnScale` of each)."""
        out = cls()
        for name, (rows, probs) in arrays.items():
            sub = scales[name].subtask
            if sub == "quality":
                out.quality = {**(out.quality or {}), name: probs}
            elif sub == "nugget":
                setattr(out, scales[name].senders[0], probs)
            else:
                out.turns = {**(out.turns or {}), name: (rows, probs)}
        return out

    @property
    def subtasks(self) -> tuple[str, ...]:
        return tuple(s for s, ok in (("quality", self.quality is not None),
                                     ("nugget", self.customer is not None)) if ok)

    def check(self, table: TurnTable) -> Predicted:
        """Raise unless every array has the table's shape and holds finite distributions; returns self."""
        shapes = {}
        if self.quality is not None:
            for k in QUALITY_KEYS:
                shapes[f"quality.{k}"] = (self.quality.get(k), (table.n_dialogues, len(QUALITY_LEVELS)))
        if self.customer is not None or self.helpdesk is not None:
            shapes["customer"] = (self.customer, (int(table.is_customer.sum()), len(NUGGET_TYPES[CUSTOMER])))
            shapes["helpdesk"] = (self.helpdesk, (int((~table.is_customer).sum()), len(NUGGET_TYPES[HELPDESK])))
        for name, (rows, a) in (self.turns or {}).items():
            shapes[name] = (a, (len(rows), np.shape(a)[1] if np.ndim(a) == 2 else -1))
        for name, (a, shape) in shapes.items():
            if a is None or np.shape(a) != shape:
                raise DialevalError(f"prediction {name} has shape {None if a is None else np.shape(a)}; "
                                    f"expected {shape}")
            if not np.all(np.isfinite(a)) or np.any(a < 0) or first_row_off_one(np.asarray(a)) is not None:
                raise DialevalError(f"prediction {name} holds rows that are not distributions")
        return self

    def select(self, subtasks: tuple[str, ...]) -> Predicted:
        return Predicted(self.quality if "quality" in subtasks else None,
                         self.customer if "nugget" in subtasks else None,
                         self.helpdesk if "nugget" in subtasks else None, self.turns)

    def to_records(self, table: TurnTable, digits: int = 6) -> list[dict]:
        """The prediction as a submission file's records (FORMATS.md §1), probabilities rounded.

        Rounding keeps every value >= 0 and each distribution's sum within ``10**-digits * L`` of 1 (the
        scorer normalises).
        """
        records: list[dict] = [{"id": i} for i in table.ids]
        if self.quality is not None:
            q = {k: np.asarray(self.quality[k]) for k in QUALITY_KEYS}
            for r, rec in enumerate(records):
                rec["quality"] = {k: rounded(QUALITY_LEVELS, q[k][r], digits) for k in QUALITY_KEYS}
        if self.customer is not None and self.helpdesk is not None:
            rows = np.where(table.is_customer, np.cumsum(table.is_customer) - 1, np.cumsum(~table.is_customer) - 1)
            for r, rec in enumerate(records):
                nug = []
                for t in range(int(table.start[r]), int(table.start[r + 1])):
                    if table.is_customer[t]:
                        nug.append(rounded(NUGGET_TYPES[CUSTOMER], self.customer[rows[t]], digits))
                    else:
                        nug.append(rounded(NUGGET_TYPES[HELPDESK], self.helpdesk[rows[t]], digits))
                rec["nugget"] = nug
        return records
