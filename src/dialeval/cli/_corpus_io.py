"""CLI pieces shared by the corpus commands: reading a corpus with its options, JSON output, notices."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from dialeval.cli._common import choice_enum, warn
from dialeval.corpus import Corpus
from dialeval.io import read_corpus
from dialeval.io.formats import names as format_names
from dialeval.io.jsonarray import json_text
from dialeval.io.wochat import NAME_POLICIES

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


SENDERS_EXAMPLE = "user=customer,system=helpdesk"
"""An example of ``--senders`` (a corpus's speakers to STC-3's senders)."""
MAP_EXAMPLE = "O=VALID,T=ACCEPTABLE,X=INVALID"
"""An example of ``--map`` (a scale's labels to WOCHAT's)."""


def parse_pairs(text: str | None, what: str, example: str = "A=B,C=D") -> dict[str, str] | None:
    """``a=b,c=d`` as a dict (None for None); ``example`` is shown in the error for a part that is not
    ``FROM=TO``. An empty text, an empty side and a name given twice are refused.

    >>> parse_pairs("O=VALID, T=ACCEPTABLE", "--map")
    {'O': 'VALID', 'T': 'ACCEPTABLE'}
    """
    if text is None:
        return None
    if not text.strip():
        raise typer.BadParameter(f"{what}: empty; give FROM=TO pairs, e.g. {example}")
    out: dict[str, str] = {}
    for part in text.split(","):
        k, eq, v = (x.strip() for x in part.partition("="))
        if not eq or not k or not v:
            raise typer.BadParameter(f"{what}: {part.strip()!r} is not FROM=TO (e.g. {example})")
        if k in out:
            raise typer.BadParameter(f"{what}: {k!r} is given twice ({k}={out[k]}, {k}={v}); give each name once")
        out[k] = v
    return out
