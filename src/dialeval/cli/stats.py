"""``dialeval stats``: statistics on Discpower-style files (run list + topic-by-run matrix)."""

from __future__ import annotations

from pathlib import Path

import typer

from dialeval.cli._common import err, named_as_options, out
from dialeval.io.discpower import read_matrix, read_runlist, result_lines
from dialeval.stats import randomized_tukey_hsd

stats_app = typer.Typer(help="Significance tests on topic-by-run matrices (Discpower's files).",
                        no_args_is_help=True)


@stats_app.command("tukey")
def tukey_cmd(
    matrix: Path = typer.Argument(..., help="Matrix file: one line per topic (dialogue), scores separated by "
                                  "whitespace, columns in run-list order."),
    runs: Path = typer.Option(..., "--runs", help="Run-list file: one run name per line."),
    iterations: int = typer.Option(5000, "-B", "--iterations", help="Iterations (10000 for publication)."),
    seed: int = typer.Option(0, "--seed", help="Random seed: same seed, same p-values."),
) -> None:
    """Randomised Tukey HSD over all pairs of runs; prints Discpower's lines `runA runB |diff| p` (p = 0 means
    p < 1/B)."""
    from dialeval import __version__

    names = read_runlist(runs)
    X = read_matrix(matrix, len(names))
    with named_as_options({"B =": "-B", "seed": "--seed"}):
        r = randomized_tukey_hsd(X, B=iterations, seed=seed)
    err.print(f"{r.test}: {r.m} runs, {r.n} topics, B = {r.B}, seed = {r.seed} (a p-value of 0 means p < 1/B = "
              f"{1 / r.B:g}); dialeval {__version__}", markup=False)
    for line in result_lines(names, r.means, r.pvalues):
        out.print(line, markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(stats_app, name="stats")
