"""Fixtures of the collection tests: ``ch``, the service with chat collection on SQLite and on PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from collection_support import Chats


@pytest.fixture
def ch(db_url):
    """An app with a fake clock on a fresh database, once on SQLite and once on PostgreSQL."""
    c = Chats(db_url)
    yield c
    c.close()
