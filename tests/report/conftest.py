"""Fixtures of the report tests: a small gold cut from the STC-3 training data and runs made from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.io.jsonarray import load_records
from dialeval.report.simulate import noisy_runs

NOISES = {"alpha_run": 0.15, "beta_run": 0.16, "gamma_run": 0.3, "delta_run": 0.45}


def write_json(path: Path, records: list) -> Path:
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def noises() -> dict[str, float]:
    """The runs of ``stc3_folder``: name -> noise (more noise, worse scores)."""
    return dict(NOISES)


@pytest.fixture
def json_writer():
    """``json_writer(path, records)`` writes a JSON array and returns the path."""
    return write_json


@pytest.fixture
def stc3_folder(tmp_path, shared_data) -> Path:
    """``gold.json`` (the first 60 dialogues of train_data_cn.json) and ``runs/<name>.json`` of NOISES."""
    src = shared_data("stc3", "train_data_cn.json")
    d = tmp_path
    gold = write_json(d / "gold.json", load_records(str(src))[:60])
    (d / "runs").mkdir()
    for name, records in noisy_runs(str(gold), NOISES, seed=3).items():
        write_json(d / "runs" / f"{name}.json", records)
    return d
