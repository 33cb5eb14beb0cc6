"""One scorer for every task: item scores, per-dialogue means, the task's averaging.

For each task of the gold (:mod:`dialeval.tasks`) that the run predicts, and each of its measures:

1. every predicted item (a dialogue, a turn, an utterance block) is scored against its gold distribution;
2. the items of a dialogue are averaged per scale (a dialogue-level scale has one item per dialogue);
3. a task with ``sender_weights`` (STC-3 ND) combines its senders' scales per dialogue:
   ``alpha * mean(first sender) + (1 - alpha) * mean(second)``, or the one sender's mean when the dialogue
   has turns of one sender only; any other task keeps one column per scale;
4. the summary averages each column over dialogues, or over items for ``average="turn"``
   (:meth:`dialeval.scoring.scores.Scores.means`).

Missing items: a gold item of a dialogue the run covers that the run does not predict is skipped and counted;
with ``strict=True`` every gold item the run does not predict scores the worst value of each measure (its
declared range's upper end: 1, or 2/L for MSE), and a dialogue the run misses entirely is a row of worst
values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.coverage import check_common
from dialeval.errors import DialevalError, describe, refused
from dialeval.measures import get as get_measure
from dialeval.measures.ordinal import VARIANTS
from dialeval.scoring.gold import PreparedGold
from dialeval.scoring.layouts import AlignedRun
from dialeval.scoring.scores import Scores
from dialeval.tasks import AVERAGES, Task


def worst(measure: str, L: int, variant: str = "paper") -> float:
    """The largest value of a measure on L bins (its declared range's upper end; for the order-aware measures
    the supremum :func:`~dialeval.measures.ordinal.od_bound`, above 1 from 5 bins on, which ``variant`` sets).

    Examples
    --------
    >>> worst("nmd", 5), worst("mse", 4), worst("rsnod", 3), round(worst("rsnod", 5), 4)
    (1.0, 0.5, 1.0, 1.0408)
    """
    return get_measure(measure).upper(L, variant)


def check_options(alpha: float, average: str | None, rsnod_variant: str) -> None:
    """The scorer's options, checked at the boundary."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 <= float(alpha) <= 1.0:
        raise refused("alpha", alpha, "numbers in [0, 1]")
    if average is not None and average not in AVERAGES:
        raise DialevalError(f"average {describe(average)} is not allowed; allowed are " + ", ".join(AVERAGES))
    if not isinstance(rsnod_variant, str) or rsnod_variant not in VARIANTS:
        raise DialevalError(f"rsnod variant {describe(rsnod_variant)} is not allowed; allowed are "
                            + ", ".join(VARIANTS))


def average_of(task: Task, average: str | None) -> str:
    """The averaging of a task's columns: ``average`` when given, else the task's own.

    A task that combines senders per dialogue (ND) has no mean over items; asking for one is an error.
    """
    if average is None:
        return task.average
    if average == "turn" and task.sender_weights:
        raise DialevalError(f"average 'turn' is not allowed for task {task.name!r}: it weights its senders per "
                            "dialogue; allowed is dialogue")
    return average


def score_aligned(run: AlignedRun, gold: PreparedGold, *, alpha: float = 0.5, strict: bool = False,
                  average: str | None = None, rsnod_variant: str = "paper") -> Scores:
    """Score a run already aligned with prepared gold (:meth:`PreparedGold.read_run`); see the module doc."""
    check_options(alpha, average, rsnod_variant)
    n_gold = len(gold.ids)
    check_common(run.extra_dialogues, gold.ids, len(run.dialogues), run.file)
    covered = np.zeros(n_gold, dtype=bool)
    covered[run.dialogues] = True
    dlg_rows = np.arange(n_gold) if strict else run.dialogues
    pos = np.full(n_gold, -1, dtype=np.int64)
    pos[dlg_rows] = np.arange(len(dlg_rows))
    n = len(dlg_rows)
    cols = _Columns()
    items: dict[str, dict[str, np.ndarray]] = {}
    counts: dict[str, dict[str, int]] = {}
    scored_tasks: dict[str, dict] = {}
    for task in gold.tasks:
        if not any(s in run.rows for s in task.scales):
            continue  # the run does not predict this task
        how = average_of(task, average)
        scored_tasks[task.name] = {"scales": list(task.scales), "measures": list(task.measures), "average": how}
        per_scale = {}
        for s in task.scales:  # a task's scales the run leaves out are all missing
            g = gold.items[s]
            rows = run.rows.get(s, np.zeros(0, dtype=np.int64))
            have = np.zeros(len(g), dtype=bool)
            have[rows] = True
            missing = np.flatnonzero(~have & (covered[g.dialogue] | strict))
            scored = np.concatenate([rows, missing]) if strict else rows
            dlg = pos[g.dialogue[scored]]
            counts[s] = {"scored": len(rows), "missing": len(missing)}
            items[s] = {}
            sums = {}
            for m in task.measures:
                meas = get_measure(m)
                v = meas.compute(run.probs[s], g.probs[rows], variant=rsnod_variant if meas.has_variant else "paper") \
                    if len(rows) else np.zeros(0)
                if strict:
                    v = np.concatenate([v, np.full(len(missing), worst(m, len(g.scale), rsnod_variant))])
                items[s][m] = v
                sums[m] = np.bincount(dlg, v, minlength=n)
            per_scale[s] = (np.bincount(dlg, minlength=n), sums)
        weighted = _sender_scales(task, gold)
        for m in task.measures:
            if weighted is not None:
                (n1, s1), (n2, s2) = (per_scale[s] for s in weighted)
                m1 = np.divide(s1[m], n1, out=np.zeros(n), where=n1 > 0)
                m2 = np.divide(s2[m], n2, out=np.zeros(n), where=n2 > 0)
                w1 = np.where(n2 == 0, 1.0, np.where(n1 == 0, 0.0, alpha))
                col = w1 * m1 + (1.0 - w1) * m2
                col[(n1 == 0) & (n2 == 0)] = np.nan
                wst = max(worst(m, len(gold.items[s].scale), rsnod_variant) for s in task.scales)
                cols.add(task, m, task.scales[0], how, col, wst)
                continue
            for s in task.scales:
                k, sums = per_scale[s]
                with np.errstate(invalid="ignore", divide="ignore"):
                    col = np.where(k > 0, sums[m] / np.maximum(k, 1), np.nan)
                cols.add(task, m, s, how, col, worst(m, len(gold.items[s].scale), rsnod_variant))
    if not cols.names:
        raise DialevalError("the run predicts no item the gold has; check its ids, turn positions and scale names",
                            file=run.file)
    matrix = np.column_stack(cols.values)
    missing_ids = [gold.ids[i] for i in np.flatnonzero(~covered)]
    if strict:
        matrix[~covered] = np.asarray(cols.worst)  # a dialogue the run misses: the worst value everywhere
    from dialeval import __version__

    weighted = any(t.sender_weights for t in gold.tasks if t.name in scored_tasks)
    settings = {**({"alpha": float(alpha)} if weighted else {}),  # ND's sender weight: only where it applies
                "strict": bool(strict), "rsnod_variant": rsnod_variant,
                "tasks": scored_tasks,
                "dialeval_version": __version__}
    return Scores([gold.ids[i] for i in dlg_rows], cols.names, matrix, missing_ids, list(run.extra_dialogues),
                  settings, cols.paths, cols.averages, cols.sources, items, counts, list(run.extra_items))


def _sender_scales(task: Task, gold: PreparedGold) -> tuple[str, str] | None:
    """The task's scales of its ``sender_weights`` senders, in that order (weights ``alpha``, ``1 - alpha``);
    None when the task weights no senders (or the gold has only one of them: nothing to weight)."""
    if not task.sender_weights:
        return None
    by_sender = {gold.items[s].scale.sender: s for s in task.scales}
    if len(task.sender_weights) != 2 or not all(w in by_sender for w in task.sender_weights):
        return None
    first, second = (by_sender[w] for w in task.sender_weights)
    return first, second


@dataclass
class _Columns:
    """The columns of a Scores as they are built: name, summary path, averaging, values, worst value."""

    names: list[str] = field(default_factory=list)
    paths: list[tuple[str, ...]] = field(default_factory=list)
    averages: list[str] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    worst: list[float] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)

    def add(self, task: Task, measure: str, scale: str, average: str, values: np.ndarray, worst: float) -> None:
        self.names.append(task.column(measure, scale))
        self.paths.append(task.summary_path(measure, scale))
        self.averages.append(average)
        self.values.append(values)
        self.worst.append(worst)
        self.sources.append((scale, measure))
