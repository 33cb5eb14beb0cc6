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

from dataclasses import dataclass
from typing import Literal

from dialeval.errors import DialevalError, describe

Level = Literal["dialogue", "turn", "block"]
Average = Literal["dialogue", "turn"]


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
         ("jsd", "mse", "nmd", "rsnod"), good_to_bad=("O", "T", "X"), formats=("dbdc", "wochat")),
    Task("wochat-validity", "WOCHAT turn validity", "turn", ("validity",), ("jsd", "mse", "nmd", "rsnod"),
         good_to_bad=("VALID", "ACCEPTABLE", "INVALID"), formats=("wochat",)),
    Task("conture-impression", "ConTurE overall impression of a chatbot turn (0, 1, 2)", "turn",
         ("overall impression",), ("jsd", "mse", "nmd", "rsnod"), good_to_bad=("2", "1", "0"),
         formats=("conture",)),
)

TASKS: dict[str, Task] = {t.name: t for t in _DECLARED}
"""Every task, by name."""


def get(name: str) -> Task:
    """The task ``name``; a :class:`DialevalError` listing the tasks when it is unknown."""
    if name not in TASKS:
        raise DialevalError(f"task {describe(name)} is not known; allowed are " + ", ".join(TASKS))
    return TASKS[name]


def subtask_measures() -> dict[str, tuple[str, ...]]:
    """``{subtask: measures}`` of the STC-3 tasks, in declaration order (``quality``, ``nugget``)."""
    return {t.subtask: t.measures for t in TASKS.values() if t.subtask is not None}


def scored_by_subtasks(fmt: str) -> bool:
    """True when a task declared for corpus format ``fmt`` is an STC-3 subtask (scored by
    :mod:`dialeval.scoring`); other corpora are scored per scale by :mod:`dialeval.turnscoring`.

    Examples
    --------
    >>> scored_by_subtasks("stc3"), scored_by_subtasks("dbdc"), scored_by_subtasks("dstc9")
    (True, False, False)
    """
    return any(t.subtask is not None for t in TASKS.values() if fmt in t.formats)


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
