"""Shared fixtures. Real corpora live in ../shared/data; tests that need them fail (not skip) under CI.

Tests are laid out like ``src/dialeval`` (``tests/measures``, ``tests/io``, ``tests/stats``, ...); each
folder may add a ``conftest.py`` of its own. Use the ``shared_data`` fixture for any file of
``../shared/data``: ``shared_data("stc3", "train_data_cn.json")``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


def _find_data() -> Path:
    """``$DIALEVAL_DATA``, else the first ``shared/data`` beside the checkout or beside one of its parents."""
    if os.environ.get("DIALEVAL_DATA"):
        return Path(os.environ["DIALEVAL_DATA"])
    here = Path(__file__).resolve()
    for parent in here.parents[1:]:
        candidate = parent.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return here.parents[1].parent / "shared" / "data"


DATA = _find_data()


def _shared_data(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        msg = f"shared data not found: {path}"
        if os.environ.get("CI"):
            pytest.fail(msg + " (CI is set: tests needing ../shared/data must not skip)")
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """A function giving a path under ../shared/data; it skips locally and fails under CI when missing."""
    return _shared_data


@pytest.fixture(scope="session")
def stc3_train_cn() -> Path:
    return _shared_data("stc3", "train_data_cn.json")


@pytest.fixture(scope="session")
def stc3_train_en() -> Path:
    return _shared_data("stc3", "train_data_en.json")


@pytest.fixture(autouse=True)
def _no_progress_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bars draw on a terminal only; keep test output clean either way."""
    monkeypatch.setenv("DIALEVAL_PROGRESS", "0")


TINY_GOLD = [
    {"id": "d1",
     "turns": [{"sender": "customer", "utterances": ["My order is late."]},
               {"sender": "helpdesk", "utterances": ["Sorry, we will check."]}],
     "annotations": [{"quality": {"A": 1, "S": 0, "E": -1}, "nugget": ["CNUG0", "HNUG"]},
                     {"quality": {"A": 2, "S": 0, "E": 1}, "nugget": ["CNUG0", "HNaN"]}]},
    {"id": "d2",
     "turns": [{"sender": "customer", "utterances": ["The app crashes.", ""]},
               {"sender": "helpdesk", "utterances": ["Please update it."]},
               {"sender": "customer", "utterances": ["Fixed, thanks!"]}],
     "annotations": [{"quality": {"A": 2, "S": 1, "E": 1}, "nugget": ["CNUG0", "HNUG*", "CNUG*"]},
                     {"quality": {"A": 2, "S": 2, "E": 2}, "nugget": ["CNUG0", "HNUG*", "CNaN"]}]},
    {"id": "d3",
     "turns": [{"sender": "customer", "utterances": ["Hello?"]}],
     "annotations": [{"quality": {"A": -2, "S": -1, "E": -2}, "nugget": ["CNaN"]},
                     {"quality": {"A": -2, "S": -2, "E": -2}, "nugget": ["CNaN"]}]},
]
"""Three dialogues, two annotators each: small enough to compute every score by hand."""


@pytest.fixture
def tiny_gold() -> list[dict]:
    import copy
    return copy.deepcopy(TINY_GOLD)


@pytest.fixture
def tiny_gold_path(tmp_path: Path, tiny_gold: list[dict]) -> Path:
    import json
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(tiny_gold), encoding="utf-8")
    return path
