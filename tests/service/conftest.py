"""Fixtures of the service's tests: databases (SQLite file, PostgreSQL schema) and a service on them.

PostgreSQL tests skip when no server is reachable, and FAIL when ``CI`` is set.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from service_support import ARGS, CHROMIUM, Service, drop_schema, fresh_schema_url, need, pg_base


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


@pytest.fixture
def browser():
    """Headless Debian Chromium driven by Playwright (missing: skip, or fail when CI is set)."""
    need(str(CHROMIUM), CHROMIUM.exists())
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        need("the playwright package", False)
    with sync_playwright() as pw:
        expect.set_options(timeout=15_000)
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
