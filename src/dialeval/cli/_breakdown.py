"""DBDC3's official figures beside the distribution scores of the O/T/X breakdown scale (``dialeval evaluate``)."""

from __future__ import annotations

import numpy as np
from rich.table import Table

from dialeval.breakdown import LEVELS, dbdc3_scores
from dialeval.cli._corpus_io import fmt_num
from dialeval.io.dbdc import BREAKDOWN
from dialeval.measures import get as get_measure
from dialeval.scoring import PreparedGold
from dialeval.scoring.layouts import AlignedRun

DBDC3_ROWS = (("accuracy", "Accuracy"), ("X", "Precision / recall / F-measure (X)"),
              ("T+X", "Precision / recall / F-measure (T+X)"))


def dbdc3_block(run: AlignedRun, gold: PreparedGold, threshold: float) -> dict | None:
    """DBDC3's figures (:func:`dialeval.breakdown.dbdc3_scores`) when the gold has the O/T/X breakdown scale."""
    g = gold.items.get(BREAKDOWN)
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
    for m in ("jsd", "mse"):
        for bins, v in d[m].items():
            t.add_row(f"{get_measure(m).title} on {bins}", fmt_num(v, 6), "")
    return t
