"""The evaluation tasks dialeval knows, each declared once: level, scales, measures and averaging.

A :class:`Task` names the scales it is about (the corpus model's :class:`~dialeval.corpus.Scale` names), the
level its items live at (``dialogue``, ``turn`` or ``block``: an STC-3 utterance block), the measures its
items are scored with (names from the measure registry), and how item scores become one figure
(``average``: per dialogue then over dialogues, or over items; ``sender_weights``: ND's
``alpha * customer + (1 - alpha) * helpdesk`` per dialogue, with ``alpha`` the scorer's parameter).

Open-domain turn tasks also declare ``good_to_bad``: their levels from best to worst. Two such tasks with
the same number of levels are *compatible*: a model of one predicts the other by mapping the levels in
that order (DBDC's O, T, X = WOCHAT's VALID, ACCEPTABLE, INVALID = ConTurE's 2, 1, 0), and its *turn score*
is the expected value of ``len - 1 .. 0`` under the predicted distribution (ConTurE's 0/1/2 scale).

Examples
--------
>>> from dialeval.tasks import TASKS, task_of_scale
>>> TASKS["stc3-nd"].sender_weights
('customer', 'helpdesk')
>>> task_of_scale("breakdown").name, task_of_scale("validity").good_to_bad
('dbdc-breakdown', ('VALID', 'ACCEPTABLE', 'INVALID'))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from dialeval.errors import DialevalError, describe

if TYPE_CHECKING:
    from dialeval.corpus import Scale

__all__ = ["AVERAGES", "DEFAULT_MEASURES", "KEYS", "TASKS", "Task", "context_of", "get", "subtask_measures",
           "task_of_scale", "tasks_for", "transfer_map", "turn_score_values", "weights_senders"]

Level = Literal["dialogue", "turn", "block"]
Context = Literal["dialogue", "past"]
Average = Literal["dialogue", "turn"]
AVERAGES: tuple[str, ...] = ("dialogue", "turn")
"""How item scores become one figure: the mean of per-dialogue means (macro), or the mean over items (micro)."""

DEFAULT_MEASURES: dict[str, tuple[str, ...]] = {"nominal": ("jsd", "mse"), "ordinal": ("jsd", "mse", "nmd", "rsnod")}
"""Measures of a scale that no declared task claims (a DSTC9 rating, say), by the scale's kind."""


@dataclass(frozen=True)
class Task:
    """One evaluation task (see the module docstring)."""

    name: str
    title: str
    level: Level
    scales: tuple[str, ...]
    measures: tuple[str, ...]
    average: Average = "dialogue"
    sender_weights: tuple[str, ...] | None = None
    """Senders whose per-dialogue means are weighted ``alpha``, ``1 - alpha`` (ND); None: no weighting."""
    subtask: str | None = None
    """The STC-3 subtask name (``quality``, ``nugget``) the CLI and the run files use, if any."""
    good_to_bad: tuple[str, ...] | None = None
    """Levels from best to worst, for transfer between compatible open-domain turn tasks."""
    formats: tuple[str, ...] = ()
    """Corpus formats (:mod:`dialeval.io.formats` names) whose scales this task scores."""
    context: Context = "dialogue"
    """What a model may read to predict an item: the whole ``dialogue`` (STC-3's annotators judged finished
    dialogues), or only the turns up to the item (``past``: a breakdown is judged as the dialogue unfolds)."""

    @property
    def key(self) -> str:
        """The short name users type and runs carry: the STC-3 subtask (``quality``, ``nugget``), else the name."""
        return self.subtask or self.name

    def summary_path(self, measure: str, scale: str) -> tuple[str, ...]:
        """Where the mean of ``measure`` on ``scale`` sits in a scores summary.

        An STC-3 subtask keeps the official shape: ``(subtask, measure, scale)``, or ``(subtask, measure)``
        when the senders' scales are combined into one figure (ND); other tasks: ``("scales", scale, measure)``.
        """
        if self.subtask is not None:
            return (self.subtask, measure) if self.sender_weights else (self.subtask, measure, scale)
        return ("scales", scale, measure)

    def column(self, measure: str, scale: str) -> str:
        """The per-dialogue column of ``measure`` on ``scale``: ``quality.nmd.A``, ``nugget.jsd``,
        ``breakdown/jsd``."""
        if self.subtask is not None:
            return ".".join(self.summary_path(measure, scale))
        return f"{scale}/{measure}"

    def columns(self) -> list[str]:
        """Every column of the task, measure by measure (one per scale, or one when senders are combined)."""
        return list(dict.fromkeys(self.column(m, s) for m in self.measures for s in self.scales))

    def column_label(self, column: str) -> tuple[str, str]:
        """``(measure, label)`` of one of the task's columns: ``("nmd", "NMD A")``, ``("jsd", "JSD")``.

        The scale is named only when the task has several columns per measure.

        Raises
        ------
        DialevalError
            When ``column`` is not one of :meth:`columns`.
        """
        per_measure = len(self.columns()) > len(self.measures)
        for m in self.measures:
            for s in self.scales:
                if self.column(m, s) == column:
                    return m, m.upper() + (f" {s}" if per_measure else "")
        raise DialevalError(f"column {describe(column)} is not a column of task {self.name!r}; its columns are "
                            + ", ".join(self.columns()))

    def turn_values(self) -> tuple[float, ...]:
        """The turn score of each level (``good_to_bad`` order): ``len - 1`` for the best, 0 for the worst."""
        if self.good_to_bad is None:
            raise DialevalError(f"task {self.name!r} declares no order of its levels from good to bad")
        n = len(self.good_to_bad)
        return tuple(float(n - 1 - i) for i in range(n))


_DECLARED = (
    Task("stc3-dq", "STC-3 dialogue quality (A, S, E)", "dialogue", ("A", "S", "E"), ("nmd", "rsnod"),
         subtask="quality", formats=("stc3",)),
    Task("stc3-nd", "STC-3 nugget detection", "block", ("nugget_customer", "nugget_helpdesk"), ("jsd", "rnss"),
         sender_weights=("customer", "helpdesk"), subtask="nugget", formats=("stc3",)),
    Task("dbdc-breakdown", "Dialogue breakdown (DBDC3-5): O, T, X of system turns", "turn", ("breakdown",),
         ("jsd", "mse", "nmd", "rsnod"), good_to_bad=("O", "T", "X"), formats=("dbdc", "wochat"), context="past"),
    Task("wochat-validity", "WOCHAT turn validity", "turn", ("validity",), ("jsd", "mse", "nmd", "rsnod"),
         good_to_bad=("VALID", "ACCEPTABLE", "INVALID"), formats=("wochat",), context="past"),
    Task("conture-impression", "ConTurE overall impression of a chatbot turn (0, 1, 2)", "turn",
         ("overall impression",), ("jsd", "mse", "nmd", "rsnod"), good_to_bad=("2", "1", "0"),
         formats=("conture",), context="past"),
)

TASKS: dict[str, Task] = {t.name: t for t in _DECLARED}
"""Every task, by name."""


KEYS: tuple[str, ...] = tuple(t.key for t in _DECLARED)
"""What a task is called where users choose one (the service, ``dialeval admin create-task``): :attr:`Task.key`."""


def get(name: str) -> Task:
    """The task called ``name`` or keyed ``name`` (:attr:`Task.key`: ``quality`` is ``stc3-dq``).

    Raises
    ------
    DialevalError
        Listing the task keys when ``name`` is neither.

    Examples
    --------
    >>> get("quality").name, get("dbdc-breakdown").key
    ('stc3-dq', 'dbdc-breakdown')
    """
    for t in _DECLARED:
        if name in (t.name, t.key):
            return t
    raise DialevalError(f"task {describe(name)} is not known; allowed are "
                        + ", ".join(t.key + (f" ({t.name})" if t.key != t.name else "") for t in _DECLARED))


def tasks_for(scales: Mapping[str, Scale]) -> tuple[Task, ...]:
    """The tasks that score a gold with these scales, in the order the scales come.

    A declared task is narrowed to the scales the gold has; a scale no declared task claims gets a task of
    its own (named after it, at its level, with :data:`DEFAULT_MEASURES` of its kind, and the context of
    :func:`context_of`).

    Examples
    --------
    >>> from dialeval.io.stc3 import stc3_scales
    >>> [t.name for t in tasks_for(stc3_scales())]
    ['stc3-dq', 'stc3-nd']
    >>> from dialeval.corpus import Scale
    >>> t, = tasks_for({"likeable": Scale("likeable", ("1", "2", "3"), "ordinal", "dialogue")})
    >>> t.name, t.level, t.measures, t.columns()[:2]
    ('likeable', 'dialogue', ('jsd', 'mse', 'nmd', 'rsnod'), ['likeable/jsd', 'likeable/mse'])
    """
    if not isinstance(scales, Mapping):
        raise DialevalError(f"scales {describe(scales)} are not allowed; allowed is a mapping of scale name -> Scale")
    out: dict[str, Task] = {}
    for name, scale in scales.items():
        t = task_of_scale(name)
        if t is None:
            out[name] = Task(name, f"the {scale.kind} {scale.level}-level scale {name!r}", scale.level, (name,),
                             DEFAULT_MEASURES[scale.kind], context=context_of(name, scale.level))
        elif t.name not in out:
            present = tuple(s for s in t.scales if s in scales)
            out[t.name] = t if present == t.scales else replace(t, scales=present)
    return tuple(out.values())


def weights_senders(names: Iterable[str]) -> bool:
    """Whether a declared task among ``names`` weights its senders per dialogue (ND: the scorer's ``alpha``).

    Examples
    --------
    >>> weights_senders(["stc3-dq", "stc3-nd"]), weights_senders(["dbdc-breakdown", "likeable"])
    (True, False)
    """
    return any(TASKS[n].sender_weights for n in names if n in TASKS)


def subtask_measures() -> dict[str, tuple[str, ...]]:
    """``{subtask: measures}`` of the STC-3 tasks, in declaration order (``quality``, ``nugget``)."""
    return {t.subtask: t.measures for t in TASKS.values() if t.subtask is not None}


def context_of(scale: str, level: str) -> Context:
    """What a model of ``scale`` (a ``level``-level scale) may read: its task's declared context; for a scale
    no task claims, the turns so far for a turn-level scale (an item is never judged from what follows it)
    and the whole dialogue for a dialogue-level one.

    Examples
    --------
    >>> context_of("A", "dialogue"), context_of("breakdown", "turn"), context_of("rating", "turn")
    ('dialogue', 'past', 'past')
    """
    t = task_of_scale(scale)
    if t is not None:
        return t.context
    return "dialogue" if level == "dialogue" else "past"


def task_of_scale(scale: str) -> Task | None:
    """The task a scale belongs to, or None."""
    for t in TASKS.values():
        if scale in t.scales:
            return t
    return None


def transfer_map(source: str, target: str, target_levels: tuple[str, ...]) -> dict[str, str] | None:
    """``{source level: target level}`` when scales ``source`` and ``target`` belong to compatible tasks.

    Compatible: both declare ``good_to_bad`` with as many levels, and ``target_levels`` are those levels.
    None otherwise (including ``source == target``: nothing to map).

    Examples
    --------
    >>> transfer_map("breakdown", "overall impression", ("0", "1", "2"))
    {'O': '2', 'T': '1', 'X': '0'}
    """
    a, b = task_of_scale(source), task_of_scale(target)
    if a is None or b is None or a is b or a.good_to_bad is None or b.good_to_bad is None:
        return None
    if len(a.good_to_bad) != len(b.good_to_bad) or set(target_levels) != set(b.good_to_bad):
        return None
    return dict(zip(a.good_to_bad, b.good_to_bad, strict=True))


def turn_score_values(scale: str, levels: tuple[str, ...]) -> tuple[float, ...] | None:
    """The turn score of each of ``levels`` (in that order) for a scale of a task with ``good_to_bad``."""
    t = task_of_scale(scale)
    if t is None or t.good_to_bad is None or set(levels) != set(t.good_to_bad):
        return None
    value = dict(zip(t.good_to_bad, t.turn_values(), strict=True))
    return tuple(value[lv] for lv in levels)
