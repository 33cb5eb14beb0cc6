"""``dialeval correlate``: automatic (or turn-level) scores against human dialogue-level ratings."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from dialeval.cli._common import choice_enum, err, out, outputs_apart, warn, wrap
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, fmt_num, load, print_json, tables
from dialeval.cli._corpus_io import value as v
from dialeval.errors import DialevalError
from dialeval.io.atomic import output_format
from dialeval.io.formats import corpus_title
from dialeval.metaeval import (
    AGGREGATES,
    CORRELATION_PLOT_FORMATS,
    DEFAULT_METHODS,
    LEVELS,
    correlate_with_humans,
    dimension_means,
    load_scores,
    plot_correlations,
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


def _check_ids(auto: dict[str, float], corpus, scores: Path) -> None:
    """An error when no id of ``--scores`` is a dialogue of the corpus; a warning naming those that are not."""
    known = set(corpus.ids())
    unknown = [i for i in auto if i not in known]
    examples = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
    if unknown and len(unknown) == len(auto):
        raise DialevalError(f"none of the {len(auto)} dialogue id(s) of the scores is in the corpus (the scores': "
                            f"{examples}; the corpus's: {', '.join(corpus.ids()[:5])}, ...)", file=str(scores))
    if unknown:
        warn(f"{scores}: {len(unknown)} dialogue id(s) not in the corpus, left out: {examples}")


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
                                                 "when dialogues name their system)."),
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
        if scores is not None:
            auto = load_scores(scores, aggregate=agg, delimiter=delimiter)
            label = f"scores of {scores.name} ({agg} over turns)"
            _check_ids(auto, corpus, scores)
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
        dims = list(dimension) if dimension else [s.name for s in corpus.scales_at("dialogue") if s.name != against]
        human = dimension_means(corpus, dims)
        systems = {d.id: str(d.meta["system"]) for d in corpus if "system" in d.meta}
        levels = tuple(v(x) for x in level) if level else (("dialogue", "system") if systems else ("dialogue",))
        methods = tuple(v(x) for x in method) if method else DEFAULT_METHODS
        if "system" in levels and not systems:
            raise DialevalError("--level system needs dialogues that name their system (DSTC9 does; this corpus "
                                "does not)", file=str(path))
        table = correlate_with_humans(auto, human, systems=systems or None, levels=levels, methods=methods, B=B,
                                      seed=seed, ci_level=ci_level, label=label)
        if plot is not None:
            plot_correlations(table, plot, title=corpus_title(corpus))
            err.print(f"wrote {plot}", markup=False)
        if format == View.json:
            print_json(table.to_dict())
            return
        s = table.settings
        t = Table(title=wrap(f"{label} vs human ratings of {corpus_title(corpus)}"), title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0))  # 80 columns: one space between columns
        for col in ("level", "dimension", "method", "coef", "p", f"{int(ci_level * 100)}% CI", "n", "drop"):
            t.add_column(col, justify="left" if col in ("level", "dimension", "method") else "right",
                         overflow="fold", max_width=24 if col == "dimension" else None)
        for r in table.rows:
            t.add_row(r.level[:3], r.dimension, r.method[:8], fmt_num(r.statistic, 3), p_text(r.pvalue),
                      f"[{fmt_num(r.ci_low, 3)}, {fmt_num(r.ci_high, 3)}]", str(r.n), str(r.n_dropped))
        tables.print(t)
        out.print(wrap(f"level: dia(logue) or sys(tem); drop: dialogues with an automatic score but no rating; "
                       f"intervals: {s['ci_method']}, B = {s['B']}, seed {s['seed']}; p-values two-sided (scipy); "
                       f"{s['dialogues_with_auto_score']} dialogues with an automatic score"
                       + (f", {s['systems']} systems" if s["systems"] else "") + f"; dialeval {s['dialeval_version']}"),
                  markup=False)
