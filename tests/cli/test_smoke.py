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
