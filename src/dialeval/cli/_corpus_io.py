"""CLI pieces shared by the corpus commands: reading a corpus with its options, JSON output, notices."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import typer
from rich.console import Console

from dialeval.cli._common import choice_enum, warn
from dialeval.corpus import Corpus
from dialeval.io import read_corpus
from dialeval.io.formats import names as format_names
from dialeval.io.jsonarray import json_text
from dialeval.io.wochat import NAME_POLICIES

tables = Console(highlight=False, markup=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
"""Console for wide tables: the terminal's width, or 160 columns when stdout is a file or a pipe."""

InFormat = choice_enum("InFormat", format_names())
NamePolicy = choice_enum("NamePolicy", NAME_POLICIES)

FROM_HELP = "Input format (detected when left out): " + ", ".join(format_names()) + "."
NAMES_HELP = ("WOCHAT only: a declared speaker name found in an utterance is an error, is replaced by its tag "
              "(SYSTEM_NAME...), or is kept.")


def value(x: object) -> str | None:
    """A typer enum member or string as its plain value."""
    return getattr(x, "value", x)  # type: ignore[return-value]


def load(path: Path, fmt: object = None, names: object = None) -> Corpus:
    """Read a corpus for a command and print the reader's notices as warnings."""
    options = {}
    if names is not None and value(names) != "error":
        options["names"] = value(names)
    corpus = read_corpus(path, format=value(fmt), **options)
    notices = corpus.meta.get("notices") or []
    for n in notices[:5]:
        warn(n)
    if len(notices) > 5:
        warn(f"... and {len(notices) - 5} more notice(s) of the reader (see `dialeval corpus stats --format json`)")
    return corpus


def print_json(obj: object) -> None:
    """JSON on stdout; NaN and infinities (undefined values) become null (strict: never ``NaN``)."""
    typer.echo(json_text(obj))


def fmt_num(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def parse_pairs(text: str | None, what: str) -> dict[str, str] | None:
    """``a=b,c=d`` as a dict (None for None)."""
    if text is None:
        return None
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise typer.BadParameter(f"{what}: {part!r} is not FROM=TO (e.g. O=VALID,T=ACCEPTABLE,X=INVALID)")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out
