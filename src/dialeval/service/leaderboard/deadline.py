"""A task's deadline as organisers type it (``dialeval admin create-task --deadline``, the admin API's form field):
one parser, one check, one way to show it.

A deadline is a date and time with a time zone (``2030-01-01T12:00+09:00``, ``...Z``) or a date with a zone
(``2030-01-01Z``: midnight there). It is stored and shown in UTC (``2030-01-01T03:00:00+00:00``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from dialeval.errors import DialevalError, describe
from dialeval.service.config import is_aware

DATE_WITH_ZONE = re.compile(r"(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:?\d{2})", re.IGNORECASE)
"""A date with a time zone and no time (``2030-01-01Z``, ``2030-01-01+09:00``): midnight there."""
EXAMPLE = "e.g. 2030-01-01T00:00Z, 2030-01-01T12:00+09:00 or 2030-01-01Z (midnight UTC)"
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
"""Deadlines are refused outside ``[EARLIEST, LATEST)`` (UTC): the database's dates end at year 9999."""


def parse_deadline(text: str | None, what: str = "--deadline") -> datetime | None:
    """``text`` as an aware datetime in UTC (None for None); every form a message suggests is one this accepts.

    Raises
    ------
    DialevalError
        Not an ISO date and time, no time zone, a zone offset with seconds, no such calendar date, or outside
        the years 1970-9999; the message names ``what`` and shows an example.

    Examples
    --------
    >>> parse_deadline("2030-01-01+09:00").isoformat(), parse_deadline("2030-01-01t10:30z").isoformat()
    ('2029-12-31T15:00:00+00:00', '2030-01-01T10:30:00+00:00')
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise DialevalError(f"{what} {describe(text)} is not allowed; give an ISO date and time with a time zone, "
                            f"{EXAMPLE}")
    date_zone = DATE_WITH_ZONE.fullmatch(text.strip())
    iso = f"{date_zone[1]}T00:00{date_zone[2].upper()}" if date_zone else text.strip()
    if len(iso) > 10 and iso[10:11] == "t":
        iso = iso[:10] + "T" + iso[11:]
    if iso[-1:] == "z":
        iso = iso[:-1] + "Z"
    try:
        t = datetime.fromisoformat(iso)
    except ValueError:
        t = None
    # Python reads any character between date and time, so "2030-01-01+09:00" would be 09:00 without a zone:
    # only T or a space may separate them.
    if t is None or (len(iso) > 10 and iso[4:5] == "-" and iso[10] not in "T "):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", iso[:10]) and _no_such_date(iso[:10]):
            y, m, d = iso[:10].split("-")
            raise DialevalError(f"{what} {describe(text)} names no calendar date (there is no day {int(d)} of "
                                f"month {int(m)} in {y}); {EXAMPLE}")
        raise DialevalError(f"{what} {describe(text)} is not an ISO date and time with a time zone; {EXAMPLE}")
    if t.tzinfo is None:
        shown = t.isoformat(timespec="minutes" if not (t.second or t.microsecond) else "auto")
        raise DialevalError(f"{what} {describe(text)} has no time zone; add one, e.g. {shown}Z (UTC) or "
                            f"{shown}+09:00")
    offset = t.utcoffset()
    if offset is not None and offset % timedelta(minutes=1):
        raise DialevalError(f"{what} {describe(text)} has a time zone offset with seconds; give hours and minutes, "
                            f"{EXAMPLE}")
    return check_deadline(t, what, shown=text)


def check_deadline(t: object, what: str = "deadline", *, shown: object = None) -> datetime:
    """``t`` (an aware datetime) in UTC, if it lies in the years the database stores; else a DialevalError."""
    if not is_aware(t):
        raise DialevalError(f"{what} {describe(t if shown is None else shown)} must be a date and time with a "
                            f"time zone; {EXAMPLE}")
    try:
        utc = t.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST <= utc < LATEST:
        raise DialevalError(f"{what} {describe(t if shown is None else shown)} is out of range; allowed are "
                            f"times from {EARLIEST.date()} to before {LATEST.date()} (UTC)")
    return utc


def _no_such_date(ymd: str) -> bool:
    """True for ``YYYY-MM-DD`` text whose month and day make no date (``2030-02-30``, ``2030-13-01``)."""
    try:
        datetime.strptime(ymd, "%Y-%m-%d")
    except ValueError:
        return True
    return False


TASK_STATES = ("open", "past its deadline", "closed")
"""What a team may do with a task: submit (``open``); nothing more, the deadline having passed; nothing more, the
organisers having closed it (which also scores the hidden half)."""


def passed(deadline: datetime | None, now: datetime) -> bool:
    """Whether ``deadline`` (aware, or None: no deadline) has passed at ``now``: from the deadline on, inclusive.

    Examples
    --------
    >>> t = datetime(2030, 1, 1, tzinfo=UTC)
    >>> passed(t, t), passed(t, t - timedelta(microseconds=1)), passed(None, t)
    (True, False, False)
    """
    return deadline is not None and now >= deadline


def task_state(closed_at: datetime | None, deadline: datetime | None, now: datetime) -> str:
    """A task's state at ``now``, one of :data:`TASK_STATES`: ``closed`` once closed (whatever its deadline), else
    ``past its deadline`` once :func:`passed`, else ``open``.

    Examples
    --------
    >>> t = datetime(2030, 1, 1, tzinfo=UTC)
    >>> task_state(None, t, t), task_state(t, None, t), task_state(None, None, t)
    ('past its deadline', 'closed', 'open')
    """
    return TASK_STATES[2] if closed_at is not None else TASK_STATES[1] if passed(deadline, now) else TASK_STATES[0]
