"""Smoke tests: the README's run command works and a measure matches a closed form."""

from __future__ import annotations

import math

from dialeval.cli.main import run
from dialeval.measures import jsd, nmd


def test_demo_runs(capsys):
    assert run(["demo"]) == 0
    assert "NMD" in capsys.readouterr().out


def test_closed_forms():
    # Disjoint one-hot distributions: JSD = 1 bit; NMD over 5 levels at the two ends = 1.
    assert math.isclose(jsd([1, 0], [0, 1]), 1.0)
    assert math.isclose(nmd([1, 0, 0, 0, 0], [0, 0, 0, 0, 1]), 1.0)


def test_progress_bar_keeps_its_count_on_an_80_column_terminal(monkeypatch):
    """A long label gives way; the count ("3205/80000") is never cut (it was, with a fixed-width bar)."""
    import io
    import re

    from rich.console import Console

    import dialeval.progress as progress

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    monkeypatch.setattr(progress, "Console", lambda **_: console)
    with progress.bar("randomised Tukey HSD (40 runs, B=80000)", 80000, progress=True) as b:
        b.advance(3205)
    lines = [line for line in re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buf.getvalue()).splitlines() if line.strip()]
    assert "3205/80000" in lines[-1] and len(lines[-1]) <= 80


def test_what_users_wrote_is_printed_as_written_not_as_rich_markup(capsys):
    """A team, run or scale name such as "[/x]" or "[red]" is text: the CLI's consoles read no rich markup (a
    team named "[/x] evil" stopped `dialeval leaderboard` with a MarkupError traceback)."""
    from dialeval.cli._common import out, tables
    from dialeval.cli.client import _scores_table

    rows = [{"rank": 1, "team": "[/x] evil", "scores": {"c": 0.5}, "submissions": 1, "last": "2026-11-27T10:00"},
            {"rank": 2, "team": "[red]styled[/red]", "scores": {"c": 0.6}, "submissions": 1,
             "last": "2026-11-27T10:00"}]
    for console in (out, tables):
        console.print(_scores_table("board [n/a]", [{"name": "c", "label": "C"}], rows))
    printed = capsys.readouterr().out
    assert printed.count("[/x] evil") == 2 and printed.count("[red]styled[/red]") == 2 and "board [n/a]" in printed
