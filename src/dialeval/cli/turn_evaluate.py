"""``dialeval evaluate`` for corpora other than STC-3 (DBDC, WOCHAT, ConTurE, DSTC9): per-scale distribution scores.

``cli/evaluate.py`` dispatches here when the gold is not an STC-3 dataset; the scoring is
:func:`dialeval.turnscoring.score_turns`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.table import Table

from dialeval.breakdown import LEVELS, dbdc3_scores
from dialeval.cli._common import measure_legend, out, warn, warn_coverage, wrap
from dialeval.cli._corpus_io import fmt_num, print_json, tables
from dialeval.errors import DialevalError
from dialeval.io.dbdc import BREAKDOWN
from dialeval.io.detect import detect
from dialeval.io.turnruns import TurnRun, read_turn_run
from dialeval.turnscoring import AVERAGES, prepare_gold, score_aligned

__all__ = ["AVERAGES", "evaluate_other_corpus", "is_other_corpus"]


def is_other_corpus(gold: Path) -> bool:
    """True when ``gold``'s format has no STC-3 subtask in the task registry
    (:func:`dialeval.tasks.scored_by_subtasks`): it is scored per scale. Undetectable paths stay with STC-3."""
    from dialeval.tasks import scored_by_subtasks

    try:
        return not scored_by_subtasks(detect(gold))
    except DialevalError:
        return False


def summary_table(summary: dict, title: str) -> Table:
    """Means per scale and measure, short measure labels (the legend: :func:`measure_legend`)."""
    t = Table(title=title + " (lower is better)", title_justify="left")
    for col in ("scale", "measure", "mean", "scored", "missing"):
        t.add_column(col, justify="left" if col in ("scale", "measure") else "right")
    for scale, ms in summary["scales"].items():
        n = summary["items"].get(scale, {})
        for m, val in ms.items():
            t.add_row(scale, m.upper(), fmt_num(val, 6), str(n.get("scored", "")), str(n.get("missing", "")))
    return t


DBDC3_ROWS = (("accuracy", "Accuracy"), ("X", "Precision / recall / F-measure (X)"),
              ("T+X", "Precision / recall / F-measure (T+X)"))


def dbdc3_block(run: TurnRun, gold: dict, threshold: float) -> dict | None:
    """DBDC3's figures (:func:`dialeval.breakdown.dbdc3_scores`) when the gold has the O/T/X breakdown scale."""
    g = gold.get(BREAKDOWN)
    if g is None or tuple(g.scale.levels) != LEVELS or BREAKDOWN not in run.rows:
        return None
    given = run.labels.get(BREAKDOWN) or [None] * len(run.rows[BREAKDOWN])
    hard = np.array([-1 if x is None else LEVELS.index(x) for x in given], dtype=np.int64)
    out = dbdc3_scores(g.probs[run.rows[BREAKDOWN]], run.probs[BREAKDOWN], hard, threshold=threshold)
    out["predicted_labels"] = {"from_run": int((hard >= 0).sum()), "from_distribution": int((hard < 0).sum())}
    return out


def dbdc3_table(d: dict) -> Table:
    """DBDC3's eval.py figures as a table of at most 80 columns."""
    t = Table(title=f"DBDC3 evaluation ({d['turns']} system turns; gold label threshold {d['threshold']:g})",
              title_justify="left")
    for col in ("figure", "value", "count"):
        t.add_column(col, justify="left" if col == "figure" else "right")
    t.add_row("gold labels O / T / X", "", " / ".join(str(d["labels"][k]) for k in LEVELS))
    t.add_row("accuracy", fmt_num(d["accuracy"], 6), f"{d['correct']}/{d['turns']}")
    for key in ("X", "T+X"):
        r = d[key]
        t.add_row(f"precision ({key})", fmt_num(r["precision"], 6), f"{r['true_positives']}/{r['predicted']}")
        t.add_row(f"recall ({key})", fmt_num(r["recall"], 6), f"{r['true_positives']}/{r['gold']}")
        t.add_row(f"F-measure ({key})", fmt_num(r["f_measure"], 6), "")
    for m, title in (("jsd", "JS divergence"), ("mse", "mean squared error")):
        for bins, v in d[m].items():
            t.add_row(f"{title} ({bins})", fmt_num(v, 6), "")
    return t


def evaluate_other_corpus(submission: Path, gold: Path, *, strict: bool, rsnod_variant: str, average: str,
                          blocks: bool, per_dialogue: Path | None, format: str, threshold: float = 0.0) -> None:
    g = prepare_gold(str(gold), blocks=blocks)
    run = read_turn_run(str(submission), g)
    s = score_aligned(run, g, average=average, strict=strict, rsnod_variant=rsnod_variant)
    dbdc3 = dbdc3_block(run, g, threshold)
    warn_coverage(submission, s.extra_dialogues, s.missing_dialogues, strict=strict, worst="the worst value")
    if s.extra_items:
        warn(f"{submission}: {len(s.extra_items)} predicted item(s) have no gold labels (e.g. user turns), not "
             "scored: " + ", ".join(s.extra_items[:5]))
    if per_dialogue is not None:
        s.to_csv(per_dialogue)
    summary = s.summary()
    if dbdc3 is not None:
        summary["dbdc3"] = dbdc3
    if format == "json":
        print_json(summary)
        return
    tables.print(summary_table(summary, f"{submission.name} vs {gold.name}"))
    out.print(measure_legend(m for ms in summary["scales"].values() for m in ms), markup=False)
    if dbdc3 is not None:
        tables.print(dbdc3_table(dbdc3))
    d, st = summary["dialogues"], summary["settings"]
    out.print(wrap(f"dialogues: {d['scored']} scored, {d['missing']} missing, {d['extra']} extra; average over "
                   f"{st['average']}s; strict {st['strict']}; rsnod variant {st['rsnod_variant']}; "
                   f"dialeval {st['dialeval_version']}"), markup=False)
