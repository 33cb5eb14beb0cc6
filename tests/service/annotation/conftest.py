"""Fixtures of the annotation tests: ``pj``, the service with annotation projects on SQLite and PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from annotation_support import Projects


@pytest.fixture
def pj(db_url):
    """An app with a fake clock on a fresh database, once on SQLite and once on PostgreSQL."""
    p = Projects(db_url)
    yield p
    p.close()
