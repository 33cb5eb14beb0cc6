"""Fixtures of the model tests: 60 real English dialogues, and the tiny hand-made corpus of tests/conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dialeval
from dialeval.corpus import Corpus


@pytest.fixture(scope="session")
def en60_records(stc3_train_en: Path) -> list[dict]:
    """The first 60 dialogues of train_data_en.json (fails, not skips, under CI when the data is missing)."""
    return json.loads(stc3_train_en.read_text(encoding="utf-8"))[:60]


@pytest.fixture(scope="session")
def en60(en60_records: list[dict]) -> Corpus:
    return dialeval.read_corpus(en60_records)


@pytest.fixture(scope="session")
def en60_path(en60_records: list[dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("en60") / "en60.json"
    path.write_text(json.dumps(en60_records, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tiny_gold: list[dict]) -> Corpus:
    return dialeval.read_corpus(tiny_gold)


def _assert_valid(model, corpus: Corpus) -> list[dict]:
    """Predict ``corpus``; check every row is a strictly positive distribution and the scorer accepts them."""
    import numpy as np

    from dialeval.models.data import TurnTable

    table = TurnTable.from_corpus(corpus)
    pred = model.predict(corpus)
    arrays = [*(pred.quality or {}).values()] + [a for a in (pred.customer, pred.helpdesk) if a is not None]
    assert arrays
    for a in arrays:
        assert np.all(np.isfinite(a)) and np.all(a > 0)
        np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-12)
    records = pred.to_records(table)
    summary = dialeval.evaluate(records, corpus)
    assert summary["dialogues"] == {"scored": len(corpus), "missing": 0, "extra": 0}
    for subtask in model.subtasks:
        assert subtask in summary
    return records


@pytest.fixture(scope="session")
def assert_valid():
    """A function ``assert_valid(model, corpus)`` (see :func:`_assert_valid`) returning the records."""
    return _assert_valid


@pytest.fixture(autouse=True, scope="session")
def _embedding_cache(tmp_path_factory: pytest.TempPathFactory):
    """Model tests cache sentence embeddings in a temporary folder, never in the user's ~/.cache."""
    import os

    before = os.environ.get("DIALEVAL_CACHE")
    os.environ["DIALEVAL_CACHE"] = str(tmp_path_factory.mktemp("embedding-cache"))
    yield
    if before is None:
        os.environ.pop("DIALEVAL_CACHE", None)
    else:
        os.environ["DIALEVAL_CACHE"] = before


@pytest.fixture(scope="module")
def _cache(tmp_path_factory: pytest.TempPathFactory):
    """Embeddings cached in a fresh folder for the requesting module's networks, computed on one thread (set
    before the module's models are trained)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIALEVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        mp.setenv("DIALEVAL_THREADS", "1")
        yield
