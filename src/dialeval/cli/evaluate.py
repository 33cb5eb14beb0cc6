"""``dialeval evaluate``: score a run against gold."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from dialeval.cli._common import choice_enum, measure_legend, out, warn_coverage, wrap
from dialeval.cli._corpus_io import fmt_num, print_json
from dialeval.cli.turn_evaluate import AVERAGES, evaluate_other_corpus, is_other_corpus
from dialeval.errors import DialevalError
from dialeval.io.detect import detect, probe
from dialeval.io.stream import is_streamed, read_records
from dialeval.measures.ordinal import VARIANTS
from dialeval.scoring import score

Variant = choice_enum("Variant", VARIANTS)
Average = choice_enum("Average", AVERAGES)


class OutFormat(StrEnum):
    json = "json"
    table = "table"


class Display(StrEnum):
    raw = "raw"
    neglog2 = "neglog2"


def summary_table(summary: dict, title: str, display: str = "raw") -> Table:
    """A rich table of an evaluate summary; headers come from the measure registry."""
    def tf(v: float) -> str:  # a mean of 0 has no finite -log2: 'n/a (mean 0)', never 'inf'
        if display == "neglog2":
            return fmt_num(-math.log2(v), 6) if v > 0 else ("n/a (mean 0)" if v == 0 else "n/a")
        return fmt_num(v, 6)

    note = " (-log2 of the mean: higher is better)" if display == "neglog2" else " (lower is better)"
    # short measure labels; the long names once, in the legend under the table (measure_legend)
    table = Table(title=title + note, title_justify="left")
    table.add_column("subtask")
    table.add_column("measure")
    table.add_column("key")
    table.add_column("mean", justify="right")
    for subtask in ("quality", "nugget"):
        for m, v in summary.get(subtask, {}).items():
            name = m.upper()
            items = v.items() if isinstance(v, dict) else [("", v)]
            for key, val in items:
                table.add_row(subtask, name, key, tf(val))
    return table


def _format_of(path: Path) -> str | None:
    try:
        return detect(path)
    except DialevalError:
        return None


def check_not_swapped(submission: Path, gold: Path) -> None:
    """Refuse ``evaluate GOLD RUN``: the first file holds annotated dialogues and the second no corpus at all.

    A gold-as-run check (``evaluate gold.json gold.json``) is not a swap: both files are corpora.
    """
    if not submission.exists() or not gold.exists():
        return
    first = _format_of(submission)
    if first is None or _format_of(gold) is not None:
        return
    if first in ("stc3", "dbdc") and not submission.is_dir() and '"annotations"' not in probe(submission).head:
        return  # dialogues without labels (a test set, a DBDC3 labels file): not a gold
    raise DialevalError(f"the arguments look swapped: {submission} holds annotated dialogues (a {first} gold) and "
                        f"{gold} does not; the order is `dialeval evaluate RUN GOLD`")


def register(app: typer.Typer) -> None:
    @app.command("evaluate")
    def evaluate_cmd(
        submission: Path = typer.Argument(..., help="Run file: JSON array of {id, quality?, nugget?}."),
        gold: Path = typer.Argument(..., help="Annotated STC-3/DialEval dataset (JSON)."),
        alpha: float = typer.Option(0.5, help="ND weight of customer turns (helpdesk: 1-alpha), in [0, 1]."),
        strict: bool = typer.Option(False, "--strict", help="A missing dialogue scores 1.0 (the worst)."),
        rsnod_variant: Variant = typer.Option("paper", help="'paper' (default) or the first 2018 "
                                              "script's all-bins averaging for RSNOD."),  # type: ignore[valid-type]
        per_dialogue: Path | None = typer.Option(None, "--per-dialogue", help="Write one CSV row per dialogue "
                                                 "(one column per measure and key)."),
        format: OutFormat = typer.Option(OutFormat.json, "--format", help="json (stdout) or table."),
        display: Display = typer.Option(Display.raw, help="Table only: raw means or -log2(mean)."),
        average: Average = typer.Option("dialogue", help="Other corpora: mean of dialogue means, or over "  # type: ignore[valid-type]
                                        "turns (DBDC3's script)."),
        blocks: bool = typer.Option(False, "--blocks", help="Other corpora: score utterance blocks."),
        dbdc_threshold: float = typer.Option(0.0, "--dbdc-threshold", help="DBDC gold: a gold label needs at "
                                             "least this share of annotators (DBDC3 eval.py's -t), in [0, 1]."),
    ) -> None:
        """Score DQ (NMD, RSNOD per A/S/E) and ND (JSD, RNSS) of SUBMISSION against GOLD.

        For a gold corpus of another format (DBDC, WOCHAT, ConTurE, DSTC9), score its scales' distributions:
        JSD and MSE, plus NMD and RSNOD for ordinal scales (see `dialeval.turnscoring`).
        """
        variant = getattr(rsnod_variant, "value", rsnod_variant)
        if is_streamed(gold):  # STC-3 gold as JSON Lines or gzip
            gold_source = read_records([gold])
        else:
            check_not_swapped(submission, gold)
            gold_source = None
        run_source = _run_records(submission) if _is_prediction_output(submission) else None
        if gold_source is None and run_source is None and is_other_corpus(gold):
            return evaluate_other_corpus(submission, gold, strict=strict, rsnod_variant=variant,
                                         average=getattr(average, "value", average), blocks=blocks,
                                         per_dialogue=per_dialogue, format=format.value, threshold=dbdc_threshold)
        s = score(run_source if run_source is not None else str(submission),
                  gold_source if gold_source is not None else str(gold), alpha=alpha, strict=strict,
                  rsnod_variant=variant)
        _report(s, submission, gold, strict=strict, per_dialogue=per_dialogue, format=format, display=display,
                alpha=alpha)


def _is_prediction_output(submission: Path) -> bool:
    """A folder of ``dialeval predict --out`` shards, a JSON Lines or gzip'ed run, or a glob of them."""
    return is_streamed(submission) or (submission.is_dir() and (
        (submission / "manifest.json").is_file() or any(submission.glob("*.jsonl"))))


def _run_records(submission: Path) -> list[dict]:
    """The run's records, read shard by shard (a predict folder in its manifest's order); ``meta`` dropped."""
    from dialeval.summarize import shard_files

    files = shard_files(submission) if submission.is_dir() else [submission]
    records = read_records(files)
    return [{k: v for k, v in r.items() if k != "meta"} if isinstance(r, dict) else r for r in records]


def _report(s, submission: Path, gold: Path, *, strict: bool, per_dialogue: Path | None, format: OutFormat,
            display: Display, alpha: float) -> None:
    warn_coverage(submission, s.extra_ids, s.missing_ids, strict=strict, worst="1.0")
    if per_dialogue is not None:
        s.to_csv(per_dialogue)
    summary = s.summary()
    if format == OutFormat.json:
        print_json(summary)
    else:
        out.print(summary_table(summary, f"{submission.name} vs {gold.name}", display.value))
        out.print(measure_legend(m for st in ("quality", "nugget") for m in summary.get(st, {})), markup=False)
        d = summary["dialogues"]
        out.print(wrap(f"dialogues: {d['scored']} scored, {d['missing']} missing, {d['extra']} extra; "
                       f"alpha {alpha}, strict {strict}, rsnod variant {summary['settings']['rsnod_variant']}"),
                  markup=False)
