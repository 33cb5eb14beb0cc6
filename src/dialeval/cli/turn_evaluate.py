"""``dialeval evaluate`` for corpora other than STC-3 (DBDC, WOCHAT, ConTurE, DSTC9): per-scale distribution scores.

``cli/evaluate.py`` dispatches here when the gold is not an STC-3 dataset; the scoring is
:func:`dialeval.turnscoring.score_turns`.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from dialeval.cli._common import out, warn, warn_coverage
from dialeval.cli._corpus_io import fmt_num, print_json, tables
from dialeval.errors import DialevalError
from dialeval.io.detect import detect
from dialeval.measures import get as get_measure
from dialeval.turnscoring import AVERAGES, score_turns

__all__ = ["AVERAGES", "evaluate_other_corpus", "is_other_corpus"]


def is_other_corpus(gold: Path) -> bool:
    """True when ``gold`` is a corpus of another format than STC-3 (undetectable paths stay with STC-3)."""
    try:
        return detect(gold) != "stc3"
    except DialevalError:
        return False


def summary_table(summary: dict, title: str) -> Table:
    """Means per scale and measure; measure titles from the registry."""
    t = Table(title=title + " (lower is better)", title_justify="left")
    for col in ("scale", "measure", "mean", "items scored", "items missing"):
        t.add_column(col, justify="left" if col in ("scale", "measure") else "right")
    for scale, ms in summary["scales"].items():
        n = summary["items"].get(scale, {})
        for m, val in ms.items():
            t.add_row(scale, f"{m.upper()} ({get_measure(m).title})", fmt_num(val, 6), str(n.get("scored", "")),
                      str(n.get("missing", "")))
    return t


def evaluate_other_corpus(submission: Path, gold: Path, *, strict: bool, rsnod_variant: str, average: str,
                          blocks: bool, per_dialogue: Path | None, format: str) -> None:
    s = score_turns(str(submission), str(gold), average=average, strict=strict, rsnod_variant=rsnod_variant,
                    blocks=blocks)
    warn_coverage(submission, s.extra_dialogues, s.missing_dialogues, strict=strict, worst="the worst value")
    if s.extra_items:
        warn(f"{submission}: {len(s.extra_items)} predicted item(s) have no gold labels (e.g. user turns), not "
             "scored: " + ", ".join(s.extra_items[:5]))
    if per_dialogue is not None:
        s.to_csv(per_dialogue)
    summary = s.summary()
    if format == "json":
        print_json(summary)
        return
    tables.print(summary_table(summary, f"{submission.name} vs {gold.name}"))
    d, st = summary["dialogues"], summary["settings"]
    out.print(f"dialogues: {d['scored']} scored, {d['missing']} missing, {d['extra']} extra; average over "
              f"{st['average']}s; strict {st['strict']}; rsnod variant {st['rsnod_variant']}; "
              f"dialeval {st['dialeval_version']}", markup=False)
