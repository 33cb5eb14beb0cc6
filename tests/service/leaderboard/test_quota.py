"""The quota rule (a pure function of the clock): daily UTC windows, totals, Retry-After."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from dialeval.errors import DialevalError
from dialeval.service.leaderboard.quota import after_accepting, decide

T = datetime(2026, 5, 10, 22, 30, tzinfo=UTC)


def test_fresh_team_may_submit():
    q = decide(T, [], daily_limit=5, total_limit=50)
    assert (q.allowed, q.remaining_today, q.remaining_total, q.retry_after, q.reason) == (True, 5, 50, None, "")


def test_daily_limit_counts_only_today_utc_and_renews_at_midnight():
    yesterday = [T - timedelta(days=1)] * 5
    today = [T.replace(hour=h) for h in (0, 1, 2)]
    q = decide(T, yesterday + today, daily_limit=5, total_limit=50)
    assert (q.allowed, q.remaining_today, q.remaining_total) == (True, 2, 42)
    spent = decide(T, yesterday + today + [T, T], daily_limit=5, total_limit=50)
    assert not spent.allowed and spent.remaining_today == 0
    assert spent.retry_after == 90 * 60  # 22:30 -> 00:00 UTC
    assert "daily quota of 5" in spent.reason
    tomorrow = decide(T + timedelta(minutes=90), yesterday + today + [T, T], daily_limit=5, total_limit=50)
    assert tomorrow.allowed and tomorrow.remaining_today == 5


def test_day_is_utc_whatever_the_zone_of_the_times():
    tokyo = timezone(timedelta(hours=9))
    # 2026-05-11 07:00 in Tokyo is 2026-05-10 22:00 UTC: the same UTC day as T.
    q = decide(T, [datetime(2026, 5, 11, 7, 0, tzinfo=tokyo)], daily_limit=1, total_limit=50)
    assert not q.allowed


def test_total_limit_has_no_retry_after():
    past = [T - timedelta(days=d) for d in range(1, 4)]
    q = decide(T, past, daily_limit=5, total_limit=3)
    assert (q.allowed, q.remaining_total, q.retry_after) == (False, 0, None)
    assert "total quota of 3" in q.reason


def test_after_accepting_counts_the_new_submission():
    q = after_accepting(T, [T], daily_limit=5, total_limit=50)
    assert (q.remaining_today, q.remaining_total) == (3, 48)


@pytest.mark.parametrize("bad", [dict(daily_limit=-1, total_limit=5), dict(daily_limit=1.5, total_limit=5),
                                 dict(daily_limit=True, total_limit=5)])
def test_bad_limits_are_refused(bad):
    with pytest.raises(DialevalError, match="must be an integer >= 0"):
        decide(T, [], **bad)


def test_naive_times_are_refused():
    with pytest.raises(DialevalError, match="aware datetime"):
        decide(T.replace(tzinfo=None), [], daily_limit=5, total_limit=5)
    with pytest.raises(DialevalError, match="aware datetime"):
        decide(T, [T.replace(tzinfo=None)], daily_limit=5, total_limit=5)
