"""Fixtures of the annotation tests: ``pj``, the service with annotation projects on SQLite and PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from annotation_support import Projects
from service_support import drop_schema, fresh_schema_url, pg_base


@pytest.fixture
def pj(db_url):
    """An app with a fake clock on a fresh database, once on SQLite and once on PostgreSQL."""
    p = Projects(db_url)
    yield p
    p.close()


@pytest.fixture
def pg_projects():
    """Projects on a fresh PostgreSQL schema only (for tests of its row locks)."""
    base = pg_base()
    url, schema = fresh_schema_url(base)
    p = Projects(url)
    try:
        yield p
    finally:
        p.close()
        drop_schema(base, schema)
