"""``dialeval compare``: score runs against gold and compare them (Tukey HSD, ES_E, groups, rank agreement)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import typer

from dialeval.cli._common import choice_enum, err, named_as_options, outputs_apart, warn
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, load
from dialeval.errors import DialevalError
from dialeval.io.atomic import check_output_folder, make_folder
from dialeval.io.detect import check_not_swapped
from dialeval.io.discpower import check_run_names, write_matrices
from dialeval.measures.ordinal import VARIANTS
from dialeval.report import (
    MISSING_POLICIES,
    REPORT_FORMATS,
    compare_scored,
    plot_means,
    report_text,
    run_files,
    score_runs,
    write_report,
)
from dialeval.report.labels import match_columns
from dialeval.report.plots import DEFAULT_COLUMNS, PLOT_FORMATS, check_columns, figure_caption
from dialeval.scoring.engine import check_options
from dialeval.stats.comparison import check_settings

Format = choice_enum("Format", tuple(REPORT_FORMATS))
Missing = choice_enum("Missing", MISSING_POLICIES)
Variant = choice_enum("Variant", VARIANTS)


def _value(choice: object) -> str:
    return str(getattr(choice, "value", choice))


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_cmd(
        runs: list[Path] = typer.Argument(..., help="Run files (JSON submissions) or folders of them (*.json)."),
        gold: Path = typer.Option(..., "--gold", help="Annotated corpus of any format dialeval reads "
                          "(STC-3/DialEval, DBDC, WOCHAT, ConTurE, DSTC9)."),
        formats: list[Format] = typer.Option(["md"], "--format", "-f",  # type: ignore[valid-type]
                                             help="Report format; repeat for several (needs --out)."),
        out_dir: Path | None = typer.Option(None, "--out", help="Write the report files (and plots) here; "
                                            "without it the report goes to stdout."),
        plot: bool = typer.Option(False, "--plot", help="Also write means.png and means.svg to --out: run means "
                                  "with intervals, one panel per measure (caption in the report)."),
        measures: list[str] | None = typer.Option(None, "--measures", help="Compare (and plot) only these "
                                                  "measures: nmd, nmd.A, 'NMD (A)', jsd...; repeat or "
                                                  "comma-separate. Default: every measure and key."),
        columns: int = typer.Option(DEFAULT_COLUMNS, "--columns", help="--plot: panels per row (1-12)."),
        iterations: int = typer.Option(5000, "-B", "--iterations", help="Tukey HSD iterations and bootstrap "
                                       "resamples (10000 for publication)."),
        seed: int = typer.Option(0, "--seed", help="Random seed: same seed, same report."),
        alpha: float = typer.Option(0.05, "--alpha", help="Significance level for the groups and pairs."),
        level: float = typer.Option(0.95, "--level", "--ci-level", help="Confidence level of the "
                                   "intervals (--ci-level as in correlate)."),
        missing: Missing = typer.Option("error", "--missing",  # type: ignore[valid-type]
                                        help="A run lacking gold dialogues: error, score them as each "
                                        "measure's worst value (`dialeval measures`: 1, or more for RSNOD "
                                        "on 5 levels or more), or compare on the dialogues common to all runs."),
        matrix_out: Path | None = typer.Option(None, "--matrix-out", help="Also write Discpower files here: "
                                               "runs.txt, topics.txt, one <column>.matrix per score column."),
        nugget_alpha: float = typer.Option(0.5, "--nugget-alpha", help="ND weight of customer turns (helpdesk: "
                                           "1-alpha), in [0, 1]."),
        rsnod_variant: Variant = typer.Option("paper", "--rsnod-variant",  # type: ignore[valid-type]
                                              help="'paper' (default) or the 2018 script's all-bins RSNOD."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP + " (of --gold)"),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Compare RUNS scored against GOLD under every measure and key.

        Per measure: run means with bootstrap intervals and ranks, every pair with |diff|, randomised Tukey
        HSD p-value and effect size ES_E, the groups of runs not significantly different at --alpha; and
        Kendall's tau between the measures' rankings (interval: bootstrap over dialogues).
        """
        fmts = [_value(f) for f in formats]
        if out_dir is None and len(fmts) > 1:
            raise DialevalError(f"{len(fmts)} formats ({', '.join(fmts)}) need --out DIR; stdout takes one")
        if plot and out_dir is None:
            raise DialevalError("--plot writes means.png and means.svg and needs --out DIR")
        check_columns(columns)
        if columns != DEFAULT_COLUMNS and not plot:
            raise DialevalError(f"--columns {columns} sets the panels per row of --plot; add --plot or leave it out")
        files = run_files(runs, exclude=gold)
        for folder, what in ((out_dir, "the report"), (matrix_out, "the Discpower files")):
            if folder is not None:  # before the work: a wrong --out costs nothing
                check_output_folder(folder, what)
        for option, folder, owns in (("--out", out_dir, _REPORT_FILES.__contains__),
                                     ("--matrix-out", matrix_out, _is_discpower_file)):  # may be one folder
            outputs_apart([*files, gold], {option: folder}, folders={option: owns})
        for f in files:
            check_not_swapped(f, gold, usage="dialeval compare RUN... --gold GOLD")
        if matrix_out is not None:
            check_run_names([f.stem for f in files])
        # after the paths, still before the work: a too-small B's warnings come once the command is known to run
        with named_as_options({"B =": "-B", "seed": "--seed", "alpha": "--alpha", "confidence level": "--level"}):
            B, key, alpha, level = check_settings(iterations, seed, alpha, level)
        with named_as_options({"alpha": "--nugget-alpha"}):
            check_options(nugget_alpha, None, _value(rsnod_variant))
        read_as_given = from_ is None and _value(names) == "error"
        matrix = score_runs(files, str(gold) if read_as_given else load(gold, from_, names), missing=_value(missing),
                            nugget_alpha=nugget_alpha, rsnod_variant=_value(rsnod_variant))
        if not read_as_given:  # the report names the gold file as when it is read by its path
            matrix = replace(matrix, settings={**matrix.settings, "gold": str(gold)})
        for note in matrix.notes:
            warn(note)
        selected = match_columns(matrix.columns, measures)  # before anything is written
        if matrix_out is not None:
            written = write_matrices(matrix_out, matrix.runs, matrix.ids, matrix.matrices())
            err.print(f"wrote {len(written)} Discpower files to {matrix_out}", markup=False)
        comparison = compare_scored(matrix.select(selected), B=B, seed=key, alpha=alpha, level=level)
        if out_dir is None:
            sys.stdout.write(report_text(comparison, fmts[0]))
            return
        if plot:  # the caption goes into the reports, not into the image
            figure = {"files": [f"means.{x}" for x in PLOT_FORMATS], "caption": figure_caption(comparison)}
            comparison = replace(comparison, settings={**comparison.settings, "figure": figure})
        paths = _write_whole(out_dir, lambda folder: [
            *(p for f in dict.fromkeys(fmts) for p in write_report(comparison, f, folder)),
            *(plot_means(comparison, folder, columns=columns) if plot else [])])
        err.print("wrote " + ", ".join(str(p) for p in paths), markup=False)
        stale = _earlier_report_files(out_dir, paths)
        for p in stale:
            p.unlink()
        if stale:
            err.print(f"removed {len(stale)} file(s) of an earlier report in {out_dir} (not written this time, so "
                      "they would describe another comparison): "
                      + ", ".join(p.name for p in stale), markup=False)


def _write_whole(out_dir: Path, write) -> list[Path]:
    """The report's files written by ``write(folder)`` into a new folder inside ``out_dir``, then moved into place
    together: a compare that fails or is stopped while writing (a full disk, Ctrl-C while the plot is drawn) leaves
    the earlier report whole, not a new comparison.md beside an earlier means.png. Returns the paths in ``out_dir``.
    """
    folder = make_folder(out_dir, "the report")
    staging = Path(tempfile.mkdtemp(prefix=".compare-", dir=folder))
    try:
        written = write(staging)
        moved = []
        for p in written:
            os.replace(p, folder / p.name)
            moved.append(folder / p.name)
        return moved
    finally:
        shutil.rmtree(staging, ignore_errors=True)


_REPORT_FILES = frozenset({n for f in REPORT_FORMATS.values() for n in f.file_names()}
                          | {f"means.{x}" for x in PLOT_FORMATS})
"""The files a report folder (``--out``) holds: each format's report and the plot (an earlier report's are removed)."""


def _is_discpower_file(name: str) -> bool:
    """Whether a Discpower folder (``--matrix-out``) writes or removes a file of this name."""
    return name in ("runs.txt", "topics.txt") or name.endswith(".matrix")


def _earlier_report_files(out_dir: Path, written: list[Path]) -> list[Path]:
    """Files that `compare` writes (a report's ``comparison*`` in any format, ``means.png``/``.svg``) that this run
    did not write: left beside the new report, they would describe another comparison."""
    return sorted(out_dir / n for n in _REPORT_FILES - {p.name for p in written} if (out_dir / n).is_file())
