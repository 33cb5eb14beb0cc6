"""The quota rule of the service: one pure function of the clock (no database, no global time).

A team may make at most ``daily_limit`` scored submissions per task per UTC day and ``total_limit`` in
all (STC-3: 5 and 50). Only accepted (valid, scored, stored) submissions count; an invalid run never
does. The service calls :func:`decide` inside the locked transaction that inserts the submission, so
the check and the insert are atomic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dialeval.errors import DialevalError
from dialeval.service.config import is_aware
from dialeval.service.leaderboard.deadline import passed

DAILY_LIMIT = 5
"""Scored submissions per team, task and UTC day unless the organiser sets another (STC-3's number)."""
TOTAL_LIMIT = 50
"""Scored submissions per team and task in all unless the organiser sets another (STC-3's number)."""


@dataclass(frozen=True)
class Quota:
    """What a team may still submit to a task at a given moment.

    Attributes
    ----------
    allowed : bool
        Whether one more submission is accepted now.
    remaining_today, remaining_total : int
        Submissions left in the current UTC day and in all (before the one being decided).
    retry_after : int or None
        Seconds until the daily quota renews (next UTC midnight) when only the daily quota is spent;
        None when a submission is allowed now, or waiting does not help (the total quota is spent, or the
        task's deadline comes first).
    reason : str
        Why a submission is refused ("" when allowed).
    """

    allowed: bool
    remaining_today: int
    remaining_total: int
    retry_after: int | None
    reason: str


def _check_time(t: object, what: str) -> datetime:
    if not is_aware(t):
        raise DialevalError(f"{what} must be an aware datetime (UTC), received {t!r}")
    return t.astimezone(UTC)


def decide(now: datetime, earlier: Sequence[datetime], *, daily_limit: int, total_limit: int,
           deadline: datetime | None = None) -> Quota:
    """Decide whether a team may submit at ``now``, given the times of its earlier accepted submissions.

    Parameters
    ----------
    now : datetime
        The current time, timezone-aware (the caller's clock; never read here).
    earlier : sequence of datetime
        Times of the team's accepted submissions to this task (aware).
    daily_limit, total_limit : int >= 0
        At most ``daily_limit`` per UTC calendar day and ``total_limit`` in all.
    deadline : datetime, optional
        The task's deadline (aware): from it on nothing remains (``remaining_today`` and ``remaining_total``
        0), and a daily quota that would renew at or after it gives no ``retry_after``.

    Returns
    -------
    Quota

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 5, 23, 0, tzinfo=UTC)
    >>> q = decide(t, [t.replace(hour=h) for h in (1, 2, 3, 4, 5)], daily_limit=5, total_limit=50)
    >>> q.allowed, q.remaining_today, q.remaining_total, q.retry_after
    (False, 0, 45, 3600)
    >>> decide(t.replace(day=6, hour=0), [t], daily_limit=5, total_limit=50).remaining_today
    5
    >>> decide(t, [t.replace(hour=h) for h in (1, 2, 3, 4, 5)], daily_limit=5, total_limit=50,
    ...        deadline=t.replace(hour=23, minute=30)).retry_after is None
    True
    """
    for name, v in (("daily_limit", daily_limit), ("total_limit", total_limit)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise DialevalError(f"{name} must be an integer >= 0, received {v!r}")
    now = _check_time(now, "now")
    if deadline is not None:
        deadline = _check_time(deadline, "deadline")
        if passed(deadline, now):
            return Quota(False, 0, 0, None, f"the deadline ({deadline.isoformat().replace('+00:00', 'Z')}) has passed")
    today = now.date()
    used_today = sum(1 for t in earlier if _check_time(t, "a submission time").date() == today)
    remaining_today = max(0, daily_limit - used_today)
    remaining_total = max(0, total_limit - len(earlier))
    if remaining_total == 0:
        return Quota(False, remaining_today, 0, None,
                     f"the total quota of {total_limit} submissions to this task is spent")
    if remaining_today == 0:
        midnight = datetime(today.year, today.month, today.day, tzinfo=UTC) + timedelta(days=1)
        if deadline is not None and deadline <= midnight:
            return Quota(False, 0, remaining_total, None,
                         f"the daily quota of {daily_limit} submissions to this task is spent, and the task's "
                         f"deadline ({deadline.isoformat().replace('+00:00', 'Z')}) comes before it renews")
        wait = max(1, math.ceil((midnight - now).total_seconds()))
        return Quota(False, 0, remaining_total, wait,
                     f"the daily quota of {daily_limit} submissions to this task is spent; it renews at "
                     f"{midnight.isoformat().replace('+00:00', 'Z')} (in {wait} s)")
    return Quota(True, remaining_today, remaining_total, None, "")


def after_accepting(now: datetime, earlier: Sequence[datetime], *, daily_limit: int, total_limit: int,
                    deadline: datetime | None = None) -> Quota:
    """The quota left once a submission made at ``now`` is accepted (what the 201 answer reports)."""
    return decide(now, [*earlier, now], daily_limit=daily_limit, total_limit=total_limit, deadline=deadline)
