"""Shared fixtures. Real corpora live in ../shared/data; tests that need them fail (not skip) under CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(os.environ.get("DIALEVAL_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def shared_data(*parts: str) -> Path:
    """Path to a file under ../shared/data; skips locally, fails when CI is set and it is missing."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        msg = f"shared data not found: {path}"
        if os.environ.get("CI"):
            pytest.fail(msg + " (CI is set: tests needing ../shared/data must not skip)")
        pytest.skip(msg)
    return path


@pytest.fixture
def stc3_train_cn() -> Path:
    return shared_data("stc3", "train_data_cn.json")


@pytest.fixture
def stc3_train_en() -> Path:
    return shared_data("stc3", "train_data_en.json")
