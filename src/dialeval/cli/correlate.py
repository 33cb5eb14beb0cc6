"""``dialeval correlate``: automatic (or turn-level) scores against human dialogue-level ratings."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from dialeval.cli._common import choice_enum, err, named_as_options, out, outputs_apart, tables, warn, wrap
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, fmt_num, load, print_json
from dialeval.cli._corpus_io import value as v
from dialeval.errors import DialevalError, first_few
from dialeval.io.atomic import output_format
from dialeval.io.formats import corpus_title
from dialeval.metaeval import (
    AGGREGATES,
    CORRELATION_PLOT_FORMATS,
    DEFAULT_LEVELS,
    DEFAULT_METHODS,
    LEVELS,
    correlate_with_humans,
    dimension_means,
    plot_correlations,
    read_scores,
    system_level_shortfall,
    turn_scale_scores,
)
from dialeval.report.tables import p_text
from dialeval.stats import METHODS

Aggregate = choice_enum("Aggregate", list(AGGREGATES))
Method = choice_enum("Method", METHODS)
Level = choice_enum("Level", LEVELS)


class View(StrEnum):
    table = "table"
    json = "json"


def _check_options(B: int, seed: int, ci_level: float) -> None:
    """-B, --seed and --ci-level, checked once before any work by the statistics' own checks; the message names
    the option."""
    from dialeval.stats._common import as_generator, check_B, check_level

    with named_as_options({"B =": "-B", "confidence level": "--ci-level", "seed": "--seed"}):
        check_B(B)
        check_level(ci_level)
        as_generator(seed)


def _check_delimiter(delimiter: str | None, scores: Path | None) -> None:
    """--delimiter, checked before any work by the CSV reader's own rule (the reader's error, naming the --scores
    file when there is one), whether or not a CSV --scores uses it; a warning when there is no --scores."""
    from dialeval.io.text import sniff_delimiter

    if delimiter is None:
        return
    sniff_delimiter("", None if scores is None else str(scores), delimiter)
    if scores is None:
        warn(f"--delimiter {delimiter!r} is ignored: it applies to a CSV --scores file, and none is given")


def _check_ids(auto: dict[str, float], corpus, scores: Path) -> int:
    """An error when no id of ``--scores`` is a dialogue of the corpus; a warning naming those that are not.

    Returns how many are not (they are left out)."""
    known = set(corpus.ids())
    unknown = [i for i in auto if i not in known]
    examples = first_few(unknown)
    if unknown and len(unknown) == len(auto):
        raise DialevalError(f"none of the {len(auto)} dialogue id(s) of the scores is in the corpus (the scores': "
                            f"{examples}; the corpus's: {', '.join(corpus.ids()[:5])}, ...)", file=str(scores))
    if unknown:
        warn(f"{scores}: {len(unknown)} dialogue id(s) not in the corpus, left out: {examples}")
    return len(unknown)


def register(app: typer.Typer) -> None:
    @app.command("correlate")
    def correlate_cmd(
        path: Path = typer.Argument(..., help="A corpus with dialogue-level human ratings (ConTurE, DSTC9...)."),
        scores: Path | None = typer.Option(None, help="Automatic scores: CSV id[,turn],score or JSON "
                                           "[{id, score}] / [{id, turns: [{turn, score}]}]."),
        turn_scale: str | None = typer.Option(None, help="Use this turn-level scale of the corpus as the "
                                              "automatic side (e.g. 'overall impression' in ConTurE)."),
        against: str | None = typer.Option(None, help="Use this dialogue-level dimension as the automatic side "
                                           "(e.g. 'human (overall)'), correlated with every other one."),
        aggregate: Aggregate = typer.Option("mean", help="Turn scores -> one per dialogue."),  # type: ignore[valid-type]
        delimiter: str | None = typer.Option(None, "--delimiter", help="CSV scores: the field delimiter (one "
                                             "character, or 'tab'); default: sniffed from the header."),
        dimension: list[str] | None = typer.Option(None, "--dimension", help="Only these dimensions (repeatable)."),
        level: list[Level] | None = typer.Option(None, "--level", help="dialogue and/or system (default: both "  # type: ignore[valid-type]
                                                 "when dialogues name their system, system left out with a "
                                                 "warning when fewer than 3 systems are scored)."),
        method: list[Method] | None = typer.Option(None, "--method", help="Repeatable; default pearson and "  # type: ignore[valid-type]
                                                   "spearman."),
        B: int = typer.Option(2000, "-B", "--iterations", help="Bootstrap resamples for the "
                                   "intervals."),
        seed: int = typer.Option(0, help="Seed of the bootstrap."),
        ci_level: float = typer.Option(0.95, help="Interval level."),
        format: View = typer.Option(View.table, "--format", help="table or json (stdout)."),
        plot: Path | None = typer.Option(None, help="Also draw the coefficients with intervals (.png/.svg/.pdf)."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Correlate per-dialogue scores with each human dimension (mean over raters, N/A dropped).

        The automatic side is --scores, --turn-scale or --against; with none of them, the corpus's only
        turn-level scale with numeric levels is used (ConTurE's overall impression).
        """
        _check_options(B, seed, ci_level)
        _check_delimiter(delimiter, scores)
        outputs_apart([path, scores], {"--plot": plot})
        if plot is not None:
            output_format(plot, CORRELATION_PLOT_FORMATS)
        corpus = load(path, from_, names)
        if not corpus.scales_at("dialogue"):
            raise DialevalError("the corpus has no dialogue-level human ratings to correlate with (its scales: "
                                + (", ".join(f"{s.name}, {s.level} level" for s in corpus.scales.values())
                                   or "none") + "); correlate takes ConTurE, DSTC9 or another rated corpus",
                                file=str(path))
        given = [x for x in (scores, turn_scale, against) if x is not None]
        if len(given) > 1:
            raise typer.BadParameter("give one of --scores, --turn-scale, --against")
        agg = v(aggregate)
        not_in_corpus = without_turns = 0
        if scores is not None:
            loaded = read_scores(scores, aggregate=agg, delimiter=delimiter, corpus=corpus)  # turns checked
            without_turns = len(loaded.without_turns)
            not_in_corpus = _check_ids(loaded.scores, corpus, scores)
            loaded = loaded.restricted(corpus.ids())  # the unknown ids are left out (warned above)
            auto, label = loaded.scores, f"scores of {scores.name} ({loaded.what()})"
        elif against is not None:
            auto, label = dimension_means(corpus, [against])[against], f"{against} (mean over raters)"
        else:
            if turn_scale is None:
                cands = [s.name for s in corpus.scales_at("turn") if s.values is not None]
                if len(cands) != 1:
                    raise DialevalError("give the automatic side: --scores FILE, --turn-scale NAME or --against "
                                        "DIMENSION (the corpus has " + (f"turn scales {', '.join(cands)}" if cands
                                                                        else "no numeric turn scale") + ")")
                turn_scale = cands[0]
            auto, label = turn_scale_scores(corpus, turn_scale, aggregate=agg), f"{turn_scale} ({agg} over turns)"
        dims = (list(dict.fromkeys(dimension)) if dimension  # a repeated option counts once, in its first place
                else [s.name for s in corpus.scales_at("dialogue") if s.name != against])
        human = dimension_means(corpus, dims)
        systems = {d.id: str(d.meta["system"]) for d in corpus if "system" in d.meta}
        # not given: the library's default levels (dialogue, and system where it can be correlated)
        levels = tuple(dict.fromkeys(v(x) for x in level)) if level else DEFAULT_LEVELS
        methods = tuple(dict.fromkeys(v(x) for x in method)) if method else DEFAULT_METHODS
        if levels is not DEFAULT_LEVELS and "system" in levels:
            if not systems:
                raise DialevalError("--level system needs dialogues that name their system (DSTC9 does; this "
                                    "corpus does not)", file=str(path))
            short = system_level_shortfall(auto, human, systems)
            if short:
                raise DialevalError(f"--level system: {short}; --level dialogue can be correlated")
        table = correlate_with_humans(auto, human, systems=systems or None, levels=levels, methods=methods, B=B,
                                      seed=seed, ci_level=ci_level, label=label)
        if scores is not None:
            table.settings["scores_not_in_corpus"] = not_in_corpus
            table.settings["scores_without_turns"] = without_turns
        if plot is not None:
            plot_correlations(table, plot, title=corpus_title(corpus))
            err.print(f"wrote {plot}", markup=False)
        if format == View.json:
            print_json(table.to_dict())
            return
        s = table.settings
        left_out = ", ".join(([f"{not_in_corpus} scored id(s) not in the corpus"] if not_in_corpus else [])
                             + ([f"{without_turns} scored id(s) with no turn score"] if without_turns else []))
        t = Table(title=wrap(f"{label} vs human ratings of {corpus_title(corpus)}"), title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0))  # 80 columns: one space between columns
        for col in ("level", "dimension", "method", "coef", "p", f"{int(ci_level * 100)}% CI", "n", "drop"):
            t.add_column(col, justify="left" if col in ("level", "dimension", "method") else "right",
                         overflow="fold", max_width=24 if col == "dimension" else None)
        for r in table.rows:
            t.add_row(r.level[:3], r.dimension, r.method[:8], fmt_num(r.statistic, 3), p_text(r.pvalue),
                      f"[{fmt_num(r.ci_low, 3)}, {fmt_num(r.ci_high, 3)}]", str(r.n), str(r.n_dropped))
        tables.print(t)
        undefined = list(dict.fromkeys((r.level[:3], r.dimension, r.undefined_resamples) for r in table.rows
                                       if r.undefined_resamples))
        notes = ["level: dia(logue) or sys(tem); n: dialogues (dia) or systems (sys) correlated; drop: dialogues "
                 "with an automatic score but no rating of the dimension, left out"
                 + (" (sys: or naming no system)" if any(r.level == "system" for r in table.rows) else ""),
                 f"intervals: {s['ci_method']} within [-1, 1], B = {s['B']}, seed {s['seed']}"
                 + ("; resamples where the coefficient is undefined (a side constant), left out of the interval: "
                    + ", ".join(f"{u} of {s['B']} ({lv}, {dim})" for lv, dim, u in undefined) if undefined else ""),
                 "p-values two-sided (scipy)",
                 f"{s['dialogues_with_auto_score']} of the corpus's dialogues have an automatic score"
                 + (f" ({left_out} left out)" if left_out else "")
                 + (f", {s['systems']} systems" if s["systems"] else ""),
                 f"dialeval {s['dialeval_version']}"]
        out.print(wrap("; ".join(notes)), markup=False)
