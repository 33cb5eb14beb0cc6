"""``dialeval summarize``: what a folder of predictions says, per system, day or metadata field."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from dialeval.cli._common import err, out, outputs_apart, tables, wrap
from dialeval.cli._corpus_io import print_json
from dialeval.errors import quote
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS


class SummaryFormat(StrEnum):
    table = "table"
    json = "json"


def _tables(s: dict) -> list[Table]:
    """The summary as rich tables; ids, groups and shard names in cells escaped as error messages escape them
    (:func:`dialeval.errors.quote`: a newline in an id does not split its row, a zero-width space shows)."""
    t = Table(title=f"Predicted crowd judgements by {s['by']} ({s['dialogues']} dialogues); E[K]: expected "
              f"score (-2 .. 2); low S: share with P(S <= -1) > {s['threshold']:g}", title_justify="left")
    for col in ("group", "n", "E[A]", "E[S]", "E[E]", "low S"):
        t.add_column(col, justify="left" if col == "group" else "right")
    dist = Table(title="Mean predicted distributions", title_justify="left")
    for col in ("group", "key", *(f"P({lv})" for lv in QUALITY_LEVELS)):
        dist.add_column(col, justify="left" if col in ("group", "key") else "right")
    nug = Table(title="Mean predicted nugget types (customer: CNUG0, CNUG, CNUG*, CNaN; helpdesk: HNUG, "
                "HNUG*, HNaN)", title_justify="left")
    for col in ("group", *NUGGET_TYPES["customer"], *NUGGET_TYPES["helpdesk"]):
        nug.add_column(col, justify="left" if col == "group" else "right")
    for g in s["groups"]:
        q = g.get("quality")
        if q:
            t.add_row(quote(g["group"]), str(g["dialogues"]), *(f"{q[k]['expected']:.3f}" for k in QUALITY_KEYS),
                      f"{100 * g['low_satisfaction']:.1f}%")
            for i, k in enumerate(QUALITY_KEYS):
                dist.add_row(quote(g["group"]) if i == 0 else "", k,
                             *(f"{q[k]['mean'][lv]:.3f}" for lv in QUALITY_LEVELS),
                             end_section=i == len(QUALITY_KEYS) - 1)
        else:
            t.add_row(quote(g["group"]), str(g["dialogues"]), *["n/a"] * 4)
        n = g.get("nugget")
        if n:
            nug.add_row(quote(g["group"]), *(f"{v:.3f}" for v in n["customer"].values()),
                        *(f"{v:.3f}" for v in n["helpdesk"].values()))
    tables = [t] + [x for x in (dist, nug) if x.row_count]
    if s["worst"]:
        w = Table(title=f"The {len(s['worst'])} dialogues with the lowest expected S", title_justify="left")
        for col in ("id", "group", "E[S]", "shard"):
            w.add_column(col, justify="right" if col == "E[S]" else "left")
        for r in s["worst"]:
            w.add_row(quote(r["id"]), quote(r["group"]), f"{r['expected_S']:.3f}", quote(r["file"]))
        tables.append(w)
    return tables


def register(app: typer.Typer) -> None:
    @app.command("summarize")
    def summarize_cmd(
        pred_dir: Path = typer.Argument(..., help="A folder written by `dialeval predict --out` (or one shard)."),
        by: str = typer.Option("system", "--by", help="Group by system, day or any metadata field of the input."),
        plot: Path | None = typer.Option(None, "--plot", help="Draw each group's expected S and low-S share by "
                                         "day to this file (.png or .svg)."),
        worst: int = typer.Option(20, "--worst", help="List this many dialogues with the lowest expected S."),
        threshold: float = typer.Option(0.5, "--threshold", help="Low satisfaction: P(S <= -1) above this."),
        format: SummaryFormat = typer.Option(SummaryFormat.table, "--format", help="table or json (stdout)."),
    ) -> None:
        """Per group: dialogues, mean predicted A/S/E distributions and expected scores, the share of likely
        dissatisfied customers, nugget-type shares; the worst dialogues by expected S; a plot over time."""
        from dialeval.io.atomic import output_format
        from dialeval.summarize import SUMMARY_PLOT_FORMATS, plot_summary, summarize

        outputs_apart([pred_dir], {"--plot": plot})
        if plot is not None:
            output_format(plot, SUMMARY_PLOT_FORMATS)
        s = summarize(pred_dir, by=by, threshold=threshold, worst=worst)
        if plot is not None:
            plot_summary(s, plot)
            err.print(f"wrote {plot}", markup=False)
        if format == SummaryFormat.json:
            print_json(s)
            return
        for t in _tables(s):
            tables.print(t)
        if any(g["group"] == "(none)" for g in s["groups"]):
            out.print(wrap(f"(none): dialogues without a {by!r} field in their input metadata"), markup=False)
        out.print(source_line(s), markup=False)   # one line, not wrapped: a long path stays whole


def source_line(s: dict) -> str:
    """What a summary read and which dialeval made it, as the line under its tables says it (``evaluate``'s
    tables end with such a line too).

    Parameters
    ----------
    s : dict
        A summary of :func:`dialeval.summarize.summarize`.

    Returns
    -------
    str
        ``predictions: PATH; model: NAME (KIND); dialeval VERSION`` (no model for a file or a folder without a
        manifest); the path and the model's name escaped as error messages escape them.

    Examples
    --------
    >>> source_line({"settings": {"predictions": "out", "model": {"name": "shipped", "kind": "prior"},
    ...                           "dialeval_version": "1.0"}})
    'predictions: out; model: shipped (prior); dialeval 1.0'
    """
    st = s["settings"]
    model = st.get("model")
    named = ""
    if isinstance(model, dict) and model.get("name") is not None:
        named = f"; model: {quote(model['name'])}" + (f" ({quote(model['kind'])})" if model.get("kind") else "")
    return f"predictions: {quote(st['predictions'])}{named}; dialeval {st['dialeval_version']}"
