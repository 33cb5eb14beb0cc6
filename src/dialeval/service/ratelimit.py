"""The rate limit on registration per client address: one pure function of the clock, its state in the database.

At most :data:`REGISTRATIONS` registration requests per client address in any :data:`WINDOW` (every request
counts, refused or not, so guessing invitation codes or names is bounded too). The attempts are rows of
``registration_attempts``, so the limit holds across the service's worker processes; :func:`decide` is the
rule, :func:`record_attempt` applies it in one locked transaction.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, text

from dialeval.errors import quote
from dialeval.service.db import Database, RegistrationAttempt
from dialeval.service.errors import QuotaSpent

REGISTRATIONS = 10
WINDOW = timedelta(hours=1)
MAX_CLIENT = 64


@dataclass(frozen=True)
class Limit:
    """Whether one more request is allowed now; else how long to wait (seconds) and why."""

    allowed: bool
    retry_after: int | None
    reason: str


def decide(now: datetime, earlier: Sequence[datetime], *, limit: int = REGISTRATIONS,
           window: timedelta = WINDOW) -> Limit:
    """Decide whether a client may make one more request at ``now``, given the times of its earlier ones.

    Examples
    --------
    >>> from datetime import UTC, datetime, timedelta
    >>> t = datetime(2026, 1, 1, 12, tzinfo=UTC)
    >>> decide(t, [t - timedelta(minutes=m) for m in range(3)], limit=3).retry_after
    3480
    >>> decide(t, [t - timedelta(minutes=61)], limit=1).allowed
    True
    >>> decide(t, [t + timedelta(seconds=1)], limit=1).allowed  # stored by a request that came later
    False
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, received {limit!r}")
    # attempts stamped after ``now`` count too: a request that read the clock, then waited for the write lock,
    # sees those stored meanwhile by requests that read it later (30 at once let 21 through the limit of 10)
    recent = sorted(t for t in earlier if now - window < t)
    if len(recent) < limit:
        return Limit(True, None, "")
    wait = max(1, math.ceil((recent[-limit] + window - now).total_seconds()))
    return Limit(False, wait, f"too many registrations from this address ({limit} per "
                              f"{int(window.total_seconds() // 60)} minutes); try again in {wait} s")


def record_attempt(db: Database, client: str | None, now: datetime) -> None:
    """Count one registration request of ``client`` at ``now``; :class:`QuotaSpent` (429) past the limit.

    One write transaction: on PostgreSQL an advisory lock per address serialises the count and the insert
    (SQLite holds its one write lock already); attempts older than the window are deleted on the way.
    """
    client = quote(client or "unknown", MAX_CLIENT)[:MAX_CLIENT]  # printable, whatever a proxy passed on
    with db.write() as s:
        if not db.is_sqlite:
            key = int.from_bytes(hashlib.sha256(client.encode()).digest()[:8], "big", signed=True)
            s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
        s.execute(delete(RegistrationAttempt).where(RegistrationAttempt.client == client,
                                                    RegistrationAttempt.created_at <= now - WINDOW))
        times = list(s.scalars(select(RegistrationAttempt.created_at).where(RegistrationAttempt.client == client)))
        verdict = decide(now, times)
        if not verdict.allowed:
            raise QuotaSpent(verdict.reason, headers={"Retry-After": str(verdict.retry_after)})
        s.add(RegistrationAttempt(client=client, created_at=now))


def attempts(db: Database, client: str) -> int:
    """How many attempts of ``client`` are stored (for tests and organisers)."""
    with db.read() as s:
        return int(s.scalar(select(func.count()).where(RegistrationAttempt.client == client)) or 0)
