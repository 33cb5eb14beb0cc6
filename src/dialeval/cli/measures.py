"""``dialeval measures``: the registry of distribution measures, as a table, Markdown or JSON."""

from __future__ import annotations

import json
from enum import StrEnum

import typer
from rich.table import Table

from dialeval.cli._common import out
from dialeval.measures import MEASURES
from dialeval.measures.registry import describe, markdown_table


class ListFormat(StrEnum):
    table = "table"
    md = "md"
    json = "json"


def register(app: typer.Typer) -> None:
    @app.command("measures")
    def measures_cmd(format: ListFormat = typer.Option(ListFormat.table, "--format",
                                                       help="table, md (Markdown) or json.")) -> None:
        """List every measure: scale, range, symmetry, formula and reference (lower is better for all)."""
        if format == ListFormat.md:
            print(markdown_table(), end="")
            return
        if format == ListFormat.json:
            print(json.dumps([describe(m) for m in MEASURES.values()], indent=2))
            return
        table = Table(title="dialeval measures: f(pred, gold); 0 is a perfect match, lower is better",
                      title_justify="left", show_lines=True)
        for col in ("name", "scale", "range", "symmetric", "formula", "reference"):
            table.add_column(col, overflow="fold")
        for m in MEASURES.values():
            table.add_row(m.name, m.scale, f"[{m.range[0]}, {m.range[1]}]", "yes" if m.symmetric else "no",
                          m.formula, m.citation)
        out.print(table)
