"""``dialeval evaluate``: score a run against the gold of any corpus, one path for every task."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from dialeval.breakdown import check_threshold
from dialeval.cli._breakdown import dbdc3_block, dbdc3_table
from dialeval.cli._common import (
    choice_enum,
    measure_legend,
    named_as_options,
    out,
    outputs_apart,
    tables,
    warn,
    warn_coverage,
    wrap,
)
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, fmt_num, load, print_json
from dialeval.cli._corpus_io import value as _value
from dialeval.errors import DialevalError, first_few
from dialeval.io.detect import check_not_swapped, rereadable
from dialeval.io.stream import is_streamed, locate, read_records
from dialeval.measures.ordinal import VARIANTS
from dialeval.scoring import AVERAGES, PreparedGold, Scores, load_gold, score_aligned
from dialeval.scoring.engine import check_options
from dialeval.scoring.layouts import AlignedRun
from dialeval.tasks import TASKS, weights_senders

Variant = choice_enum("Variant", VARIANTS)
Average = choice_enum("Average", AVERAGES)


class OutFormat(StrEnum):
    json = "json"
    table = "table"


class Display(StrEnum):
    raw = "raw"
    neglog2 = "neglog2"


REPORT_KEYS = ("dialogues", "settings", "items", "dbdc3")
"""Keys of a scores summary that are not means (see :meth:`dialeval.scoring.Scores.summary`)."""


def summary_rows(summary: dict) -> list[tuple[str, str, str, float]]:
    """``(group, measure, scale or key, mean)`` of each mean of a summary, in its order.

    ``group`` is the STC-3 subtask (``quality``, ``nugget``) or ``scales`` for the other tasks, whose means
    are nested scale first (:meth:`dialeval.tasks.Task.summary_path`).
    """
    rows = []
    for group, node in summary.items():
        if group in REPORT_KEYS or not isinstance(node, dict):
            continue
        for a, v in node.items():
            inner = v.items() if isinstance(v, dict) else [("", v)]
            for b, val in inner:
                rows.append((group, b, a, val) if group == "scales" else (group, a, b, val))
    return rows


def summary_table(summary: dict, title: str, display: str = "raw") -> Table:
    """A rich table of an evaluate summary (any task); short measure labels, the legend under it."""
    def tf(v: float) -> str:  # a mean of 0 has no finite -log2: 'n/a (mean 0)', never 'inf'
        if display == "neglog2":
            return fmt_num(-math.log2(v), 6) if v > 0 else ("n/a (mean 0)" if v == 0 else "n/a")
        return fmt_num(v, 6)

    note = " (-log2 of the mean: higher is better)" if display == "neglog2" else " (lower is better)"
    table = Table(title=title + note, title_justify="left")
    items = summary.get("items", {})
    scored = summary.get("settings", {}).get("tasks", {})
    task_of = {s: name for name, t in scored.items() for s in t["scales"]}  # the task's name in the first column
    task_of |= {TASKS[name].subtask: name for name in scored if name in TASKS and TASKS[name].subtask}
    rows = []
    for group, m, scale, val in summary_rows(summary):
        n = items.get(scale, {}) if group == "scales" else {}
        task = task_of.get(scale if group == "scales" else group, group)
        rows.append([task, m.upper(), scale, tf(val), str(n.get("scored", "")), str(n.get("missing", ""))])
    # STC-3's summary keeps the official shape, with no item counts: its dialogues are counted under the table
    counted = any(r[4] or r[5] for r in rows)
    for col in ("task", "measure", "scale", "mean", "items scored", "missing")[:None if counted else 4]:
        table.add_column(col, justify="right" if col in ("mean", "items scored", "missing") else "left")
    for r in rows:
        table.add_row(*(r if counted else r[:4]))
    return table


def register(app: typer.Typer) -> None:
    @app.command("evaluate")
    def evaluate_cmd(
        submission: Path = typer.Argument(..., help="Run: STC-3 records {id, quality?, nugget?}, dialeval's per-item "
                                       "layout, a folder of DBDC3 *.labels.json, or `dialeval predict --out` shards."),
        gold: Path = typer.Argument(..., help="Annotated corpus of any format dialeval reads "
                                 "(STC-3/DialEval, DBDC, WOCHAT, ConTurE, DSTC9)."),
        alpha: float = typer.Option(0.5, "--alpha", "--nugget-alpha", help="ND weight of customer turns "
                                     "(helpdesk: 1-alpha), in [0, 1] (--nugget-alpha as in compare)."),
        strict: bool = typer.Option(False, "--strict", help="A missing dialogue scores the worst value of "
                                    "each measure (1.0; RSNOD on 5 levels: sqrt(13/12))."),
        rsnod_variant: Variant = typer.Option("paper", help="'paper' (default) or the first 2018 "
                                              "script's all-bins averaging for RSNOD."),  # type: ignore[valid-type]
        per_dialogue: Path | None = typer.Option(None, "--per-dialogue", help="Write one CSV row per dialogue "
                                                 "(one column per measure and key)."),
        format: OutFormat = typer.Option(OutFormat.json, "--format", help="json (stdout) or table."),
        display: Display = typer.Option(Display.raw, help="Table only: raw means or -log2(mean)."),
        average: Average | None = typer.Option(None, help="How item scores become one figure: mean of "  # type: ignore[valid-type]
                                               "dialogue means, or over turns (DBDC3's script); default: "
                                               "each task's own."),
        blocks: bool = typer.Option(False, "--blocks", help="Turn-level corpora: score utterance blocks."),
        dbdc_threshold: float = typer.Option(0.0, "--dbdc-threshold", help="DBDC gold: a gold label needs at "
                                             "least this share of annotators (DBDC3 eval.py's -t), in [0, 1]."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP + " (of GOLD)"),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Score SUBMISSION against GOLD: every task of the gold the run predicts.

        STC-3/DialEval: DQ (NMD, RSNOD per A/S/E) and ND (JSD, RNSS). DBDC, WOCHAT, ConTurE, DSTC9: each
        scale's task (JSD, MSE, NMD, RSNOD; see `dialeval measures` and `dialeval.tasks`), plus DBDC3's
        official figures for the O/T/X breakdown scale.
        """
        outputs_apart([submission, gold], {"--per-dialogue": per_dialogue})
        with named_as_options({"alpha": "--alpha", "threshold": "--dbdc-threshold"}):  # before any file is read
            check_options(alpha, None, getattr(rsnod_variant, "value", rsnod_variant))
            check_threshold(dbdc_threshold)
        if display != Display.raw and format != OutFormat.table:
            raise DialevalError(f"--display {display.value} applies to --format table only (the JSON holds the raw "
                                "means)")
        if is_streamed(gold):  # STC-3 gold as JSON Lines or gzip
            origins: list[tuple[str, int]] = []
            records = read_records([gold], origins)
            try:
                g = load_gold(records, blocks=blocks)
            except DialevalError as e:
                raise locate(e, records, origins, str(gold)) from None
        else:
            check_not_swapped(submission, gold)
            pipe = gold.exists() and not rereadable(gold)  # detected by load(), which refuses it: not guessed
            fast = from_ is None and _value(names) == "error" and not pipe
            gold_source = str(gold) if fast else load(gold, from_, names)
            g = load_gold(gold_source, blocks=blocks)
        run = _read_run(g, submission)
        s = score_aligned(run, g, alpha=alpha, strict=strict, average=getattr(average, "value", average),
                          rsnod_variant=getattr(rsnod_variant, "value", rsnod_variant))
        _report(s, submission, gold, per_dialogue=per_dialogue, format=format, display=display,
                dbdc3=dbdc3_block(run, g, dbdc_threshold))


def _is_prediction_output(submission: Path) -> bool:
    """A folder of ``dialeval predict --out`` shards, a JSON Lines or gzip'ed run, or a glob of them."""
    return is_streamed(submission) or (submission.is_dir() and (
        (submission / "manifest.json").is_file() or any(submission.glob("*.jsonl"))))


def _read_run(g: PreparedGold, submission: Path) -> AlignedRun:
    """The run aligned with the gold; a run of prediction output is read by :func:`_run_records`, and the
    reader's errors on its records are located (file and line)."""
    if not _is_prediction_output(submission):
        return g.read_run(str(submission))
    origins: list[tuple[str, int]] = []
    records = _run_records(submission, origins)
    try:
        return g.read_run(records)
    except DialevalError as e:
        raise locate(e, records, origins, str(submission)) from None


def _run_records(submission: Path, origins: list[tuple[str, int]] | None = None) -> list[dict]:
    """The run's records, read shard by shard (a predict folder in its manifest's order); ``meta`` dropped.
    ``origins``: the file and line of each record are appended to it (:func:`~dialeval.io.stream.read_records`)."""
    from dialeval.summarize import shard_files

    files = shard_files(submission) if submission.is_dir() else [submission]
    records = read_records(files, origins)
    return [{k: v for k, v in r.items() if k != "meta"} if isinstance(r, dict) else r for r in records]


def _report(s: Scores, submission: Path, gold: Path, *, per_dialogue: Path | None, format: OutFormat,
            display: Display, dbdc3: dict | None) -> None:
    st = s.settings
    warn_coverage(submission, s.extra_ids, s.missing_ids, strict=st["strict"], worst="the worst value",
                  items_missing={scale: c["missing"] for scale, c in s.item_counts.items()})
    if s.extra_items:
        warn(f"{submission}: {len(s.extra_items)} predicted item(s) have no gold labels (an unrated turn or "
             "dialogue), not scored: " + first_few(s.extra_items))
    if per_dialogue is not None:
        s.to_csv(per_dialogue)
    summary = s.summary()
    if dbdc3 is not None:
        summary["dbdc3"] = dbdc3
    if format == OutFormat.json:  # the report names what it scored, as the table's title does
        print_json({**summary, "settings": {"run": str(submission), "gold": str(gold), **summary["settings"]}})
        return
    show_summary(summary, f"{submission.name} vs {gold.name}", display.value)


def show_summary(summary: dict, title: str, display: str = "raw") -> None:
    """A summary as `evaluate --format table` shows it: the table, its measures' long names, DBDC3's figures
    when the summary has them, and a line of what was scored and how (settings, version)."""
    st = summary["settings"]
    tables.print(summary_table(summary, title, display))
    out.print(measure_legend(dict.fromkeys(m for _, m, _, _ in summary_rows(summary))), markup=False)
    if summary.get("dbdc3") is not None:
        tables.print(dbdc3_table(summary["dbdc3"]))
    d = summary["dialogues"]
    averaged = ", ".join(f"{t} per {v['average']}" for t, v in st["tasks"].items())
    weighted = weights_senders(st["tasks"])
    worst = " (scored as the worst value)" if st["strict"] and d["missing"] else ""
    out.print(wrap(f"dialogues: {d['scored']} scored, {d['missing']} missing{worst}, {d['extra']} extra; "
                   + (f"alpha {st['alpha']}, " if weighted else "") + f"strict {st['strict']}, rsnod variant "
                   f"{st['rsnod_variant']}; averaged: {averaged}; dialeval {st['dialeval_version']}"), markup=False)
