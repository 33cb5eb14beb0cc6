"""Shared CLI helpers: one-line errors, warnings, rich consoles, choices from the registries."""

from __future__ import annotations

import textwrap
from enum import Enum

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def warn(message: str) -> None:
    err.print(f"warning: {message}", markup=False)


def warn_coverage(file: object, extra: list[str], missing: list[str], *, strict: bool, worst: str) -> None:
    """Warn about dialogues of a run that are not in the gold, and (unless strict) gold dialogues it lacks."""
    if extra:
        more = f" (+{len(extra) - 5} more)" if len(extra) > 5 else ""
        warn(f"{file}: {len(extra)} dialogue(s) not in the gold, counted as extra: " + ", ".join(extra[:5]) + more)
    if missing and not strict:
        warn(f"{file}: {len(missing)} gold dialogue(s) missing from the run were not scored (use --strict to score "
             f"them as {worst})")


def choice_enum(name: str, values: list[str] | tuple[str, ...]) -> type[Enum]:
    """An Enum for typer choices, generated from a registry list (never a second list by hand)."""
    return Enum(name, {v.replace("-", "_").upper() or "NONE": v for v in values}, type=str)  # type: ignore[return-value]


WIDTH = 80
"""Tables and the lines under them are laid out to fit a terminal of this many columns."""


def wrap(text: str, width: int = WIDTH) -> str:
    """``text`` wrapped to ``width`` columns (continuation lines indented by two spaces)."""
    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)) or text


def measure_legend(names: object) -> str:
    """The long name of each measure once, under a table that shows short labels (``JSD``): one line each.

    Examples
    --------
    >>> print(measure_legend(["jsd", "nmd", "jsd"]))
    JSD: Jensen-Shannon divergence (bits)
    NMD: normalised match distance
    """
    from dialeval.measures import get as get_measure

    return "\n".join(wrap(f"{m.upper()}: {get_measure(m).title}") for m in dict.fromkeys(names))
