"""The rate limit on registration per client address: one pure function of the clock, its state in the database.

At most :data:`REGISTRATIONS` registration requests per client in any :data:`WINDOW` (every request counts,
refused or not, so guessing invitation codes or names is bounded too). A client is an IPv4 address, or the
/64 network of an IPv6 address (:func:`client_key`: one host is given a whole /64, and would otherwise
register without end). The attempts are rows of ``registration_attempts``, so the limit holds across the
service's worker processes; :func:`decide` is the rule, :func:`record_attempt` applies it in one locked
transaction.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select

from dialeval.errors import quote
from dialeval.service.db import Database, RegistrationAttempt
from dialeval.service.errors import QuotaSpent

REGISTRATIONS = 10
WINDOW = timedelta(hours=1)
MAX_CLIENT = 64
IPV6_PREFIX = 64
"""IPv6 clients are counted by network of this prefix length: the smallest network a host is usually given."""


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


def client_key(client: str | None) -> str:
    """Who a registration attempt is counted against: an IPv4 address as it is, an IPv6 address by its /64
    network (:data:`IPV6_PREFIX`), an IPv4-mapped IPv6 address as its IPv4 address; anything else (a test
    client's name, an address a proxy mangled) quoted printable and cut to :data:`MAX_CLIENT` characters.

    >>> client_key("2001:db8:1:2:aaaa::1"), client_key("2001:DB8:1:2::ffff")
    ('2001:db8:1:2::/64', '2001:db8:1:2::/64')
    >>> client_key("::ffff:192.0.2.7"), client_key("192.0.2.7"), client_key(None)
    ('192.0.2.7', '192.0.2.7', 'unknown')
    """
    try:
        address = ipaddress.ip_address((client or "").split("%", 1)[0])  # no zone index (fe80::1%eth0)
    except ValueError:
        return quote(client or "unknown", MAX_CLIENT)[:MAX_CLIENT]  # printable, whatever a proxy passed on
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.version == 4:
        return str(address)
    return str(ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False))


def record_attempt(db: Database, client: str | None, now: datetime) -> None:
    """Count one registration request of ``client`` (counted by :func:`client_key`) at ``now``;
    :class:`QuotaSpent` (429) past the limit.

    One write transaction: on PostgreSQL an advisory lock per client serialises the count and the insert
    (SQLite holds its one write lock already); attempts older than the window are deleted on the way.
    """
    client = client_key(client)
    with db.write() as s:
        db.serialise(s, f"registration attempts of {client}")
        s.execute(delete(RegistrationAttempt).where(RegistrationAttempt.client == client,
                                                    RegistrationAttempt.created_at <= now - WINDOW))
        times = list(s.scalars(select(RegistrationAttempt.created_at).where(RegistrationAttempt.client == client)))
        verdict = decide(now, times)
        if not verdict.allowed:
            raise QuotaSpent(verdict.reason, headers={"Retry-After": str(verdict.retry_after)})
        s.add(RegistrationAttempt(client=client, created_at=now))


def attempts(db: Database, client: str) -> int:
    """How many attempts of ``client`` (an address: counted by :func:`client_key`) are stored (for tests and
    organisers)."""
    client = client_key(client)
    with db.read() as s:
        return int(s.scalar(select(func.count()).where(RegistrationAttempt.client == client)) or 0)
