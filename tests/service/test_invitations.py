"""Invitations: shown once, stored hashed, checked by kind and target, single-use codes used once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from dialeval.service import invitations
from dialeval.service.db import Database, Invitation
from dialeval.service.errors import Conflict, Invalid, Unauthorized

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)


def test_codes_are_hashed_and_checked_by_kind_and_target(db_url):
    db = Database(db_url)
    try:
        codes = invitations.create_invitations(db, "annotation", "proj", 3, NOW)
        assert len(set(codes)) == 3 and all(c.startswith("dai_") for c in codes)
        with db.read() as s:
            stored = s.scalars(select(Invitation.token_hash)).all()
        assert not set(codes) & set(stored)
        assert invitations.check(db, codes[0], "annotation", "proj").target == "proj"
        with pytest.raises(Unauthorized):
            invitations.check(db, codes[0], "annotation", "other")
        with pytest.raises(Unauthorized):
            invitations.check(db, codes[0], "collection")
        with pytest.raises(Unauthorized):
            invitations.check(db, "dt_not-a-code", "annotation")
        with pytest.raises(Invalid):
            invitations.create_invitations(db, "annotation", "proj", 0, NOW)
        with pytest.raises(Invalid):
            invitations.create_invitations(db, "nope", "proj", 1, NOW)
    finally:
        db.dispose()


def test_single_use_code_registers_once_under_concurrency(db_url):
    db = Database(db_url)
    try:
        (code,) = invitations.create_invitations(db, "team", "", 1, NOW)

        def use(_):
            try:
                with db.write() as s:
                    invitations.consume(s, code, "team", NOW)
                return "ok"
            except Conflict:
                return "conflict"

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(use, range(8)))
        assert results.count("ok") == 1 and results.count("conflict") == 7
        assert invitations.counts(db, "team") == {"created": 1, "used": 1, "revoked": 0}
        with pytest.raises(Conflict):
            invitations.check(db, code, "team")
    finally:
        db.dispose()
