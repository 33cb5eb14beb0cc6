"""``dialeval corpus stats`` and ``dialeval corpus convert``: what a corpus holds, and other formats of it."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from dialeval.cli._common import NARROW, choice_enum, err, out, outputs_apart, tables, wrap
from dialeval.cli._corpus_io import (
    FROM_HELP,
    MAP_EXAMPLE,
    NAMES_HELP,
    SENDERS_EXAMPLE,
    InFormat,
    NamePolicy,
    fmt_num,
    load,
    parse_pairs,
    print_json,
)
from dialeval.cli._corpus_io import value as v
from dialeval.corpusstats import corpus_stats
from dialeval.io.convert import convert
from dialeval.io.formats import writable
from dialeval.io.wochat_writer import ID_POLICIES

OutFormat = choice_enum("OutFormat", writable())
IdPolicy = choice_enum("IdPolicy", ID_POLICIES)


class View(StrEnum):
    json = "json"
    table = "table"


def stats_tables(st: dict) -> list[Table]:
    """Rich tables of :func:`dialeval.corpusstats.corpus_stats`."""
    head = Table(title=f"{st['source']} ({st['format']})", title_justify="left", show_header=False)
    head.add_row("dialogues", str(st["dialogues"]))
    head.add_row("turns", str(st["turns"]) + "  (" + ", ".join(f"{k} {n}" for k, n in st["senders"].items()) + ")")
    head.add_row("annotated turns", str(st["annotated_turns"]))
    # 80 columns: short headers, long cells folded; what the short headers mean is in STATS_LEGEND
    sc = Table(title="label scales", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0))
    widths = {"scale": 15, "level": 15, "labels": 18} if tables.width < NARROW else {}  # a file: no cap
    for col in ("scale", "k", "level", "items", "raters", "n/a", "labels", "alpha"):
        sc.add_column(col, justify="right" if col in ("items", "n/a", "alpha") else "left",
                      max_width=widths.get(col), overflow="fold")
    for name, s in st["scales"].items():
        a = s["annotators_per_item"]
        ag = s["agreement"]
        sc.add_row(name, s["kind"][:1], s["level"] + (f" ({s['sender']})" if s["sender"] else ""), str(s["items"]),
                   f"{a['min']}-{a['median']}-{a['max']}", str(s["missing"]),
                   " ".join(f"{k}:{n}" for k, n in s["label_counts"].items()),
                   fmt_num(ag["alpha"], 3) + (" *" if ag["note"] else ""))
    return [head, sc]


STATS_LEGEND = ("k: o(rdinal) or n(ominal) scale; raters: annotators per item, min-median-max; n/a: labels "
                "given as missing (N/A); labels: label counts; alpha: Krippendorff's alpha, ordinal or nominal by "
                "the scale")


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Corpora of subjective dialogue annotations: statistics and conversion.",
                        no_args_is_help=True)
    app.add_typer(group, name="corpus")

    @group.command("stats")
    def stats_cmd(
        path: Path = typer.Argument(..., help="A corpus file or folder (STC-3, WOCHAT, DBDC, ConTurE, DSTC9)."),
        format: View = typer.Option(View.table, "--format", help="table or json (stdout)."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Dialogues, turns, annotated turns, annotators per item, label counts and agreement of each scale."""
        st = corpus_stats(load(path, from_, names))
        if format == View.json:
            print_json(st)
            return
        for t in stats_tables(st):
            tables.print(t)
        out.print(wrap(STATS_LEGEND), markup=False)
        for name, s in st["scales"].items():
            if s["agreement"]["note"]:
                out.print(wrap(f"* {name}: {s['agreement']['note']}"), markup=False)

    @group.command("convert")
    def convert_cmd(
        src: Path = typer.Argument(..., help="The corpus to convert (file or folder)."),
        dst: Path = typer.Argument(..., help="Output: a .xml/.json file, or a new folder (WOCHAT: one file "
                                   "per dialogue)."),
        to: OutFormat = typer.Option(..., "--to", help="Output format: " + ", ".join(writable()) + "."),  # type: ignore[valid-type]
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        scale: str | None = typer.Option(None, help="WOCHAT: the turn scale written as VALID, ACCEPTABLE, INVALID."),
        map_: str | None = typer.Option(None, "--map", help="WOCHAT: level map of that scale, e.g. "
                                        "'2=VALID, 1=ACCEPTABLE, 0=INVALID' (known for DBDC and WOCHAT)."),
        ids: IdPolicy = typer.Option("renumber", help="WOCHAT: rename ids off the WOCHAT pattern (the "  # type: ignore[valid-type]
                                     "original kept in <source_id>) or refuse them."),
        senders: str | None = typer.Option(None, help="Sender map, e.g. 'user=customer, system=helpdesk' (STC-3) "
                                           "or 'customer=user, helpdesk=system' (DBDC, WOCHAT)."),
        drop_labels: bool = typer.Option(False, "--drop-labels", help="Write even if labels the output format "
                                         "cannot hold must be dropped (they are listed)."),
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Convert a corpus to WOCHAT XML, STC-3 JSON or DBDC logs; the label mapping and anything dropped are
        printed."""
        outputs_apart([src], {"DST": dst})
        corpus = load(src, from_, names)
        options: dict = {"drop_labels": drop_labels,
                         "sender_map": parse_pairs(senders, "--senders", SENDERS_EXAMPLE)}
        if v(to) == "wochat":
            options.update(scale=scale, label_map=parse_pairs(map_, "--map", MAP_EXAMPLE), ids=v(ids))
        elif scale is not None or map_ is not None:
            raise typer.BadParameter("--scale and --map apply to --to wochat only")
        report = convert(corpus, dst, v(to), **options)
        for line in report.lines():
            err.print(line, markup=False)
