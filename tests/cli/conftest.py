"""Fixtures of the CLI tests: runs made from the shipped demo corpus (no shared data needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir
from dialeval.report.simulate import noisy_runs


@pytest.fixture
def demo_runs(tmp_path) -> Path:
    """``gold.json`` (the demo corpus, 8 dialogues) and ``runs/`` with three runs of rising noise."""
    gold = tmp_path / "gold.json"
    gold.write_text((demo_dir() / "gold.json").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "runs").mkdir()
    for name, records in noisy_runs(str(gold), {"r1": 0.1, "r2": 0.4, "r3": 0.9}, seed=0).items():
        (tmp_path / "runs" / f"{name}.json").write_text(json.dumps(records), encoding="utf-8")
    return tmp_path
