"""Fixtures of the service's tests: databases (SQLite file, PostgreSQL schema) and a service on them.

PostgreSQL tests skip when no server is reachable, and FAIL when ``CI`` is set.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from service_support import Service, drop_schema, fresh_schema_url, pg_base


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A database URL, once for a SQLite file and once for a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'service.sqlite'}"
        return
    base = pg_base()
    url, schema = fresh_schema_url(base)
    try:
        yield url
    finally:
        drop_schema(base, schema)


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'service.sqlite'}"


@pytest.fixture
def service(sqlite_url):
    s = Service(sqlite_url)
    yield s
    s.close()


@pytest.fixture
def service_any(db_url):
    """The same service on SQLite and on PostgreSQL."""
    s = Service(db_url)
    yield s
    s.close()
