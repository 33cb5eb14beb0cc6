"""The README shows what the code does: its measure table is the registry's, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from dialeval.cli.main import app, run
from dialeval.measures.registry import markdown_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_measure_table_is_the_registry():
    assert markdown_table() in README.read_text(encoding="utf-8"), "paste `dialeval measures --format md`"


def test_every_dialeval_command_in_the_readme_exists():
    import typer.main

    commands = set(typer.main.get_command(app).commands)
    used = set(re.findall(r"^\s*dialeval ([a-z][a-z-]*)", README.read_text(encoding="utf-8"), flags=re.M))
    assert used and used <= commands, sorted(used - commands)


def test_measures_command(capsys):
    assert run(["measures", "--format", "md"]) == 0
    assert capsys.readouterr().out == markdown_table()
    assert run(["measures"]) == 0 and "rsnod" in capsys.readouterr().out
