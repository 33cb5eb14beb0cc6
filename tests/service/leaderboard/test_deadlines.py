"""Deadlines, found by a probe of the service's clocks: the admin API dropped a deadline without a word; a deadline
near year 1 or 9999 was a traceback; after the deadline, the quota still said "wait until midnight" and
``/api/me`` "open"; an offset was printed as given but shown in UTC everywhere else."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, tzinfo

import pytest
from service_support import GOLD, dumps

from dialeval.cli.main import run as cli
from dialeval.errors import DialevalError
from dialeval.service import teams
from dialeval.service.leaderboard import tasks
from dialeval.service.leaderboard.deadline import check_deadline, parse_deadline
from dialeval.service.leaderboard.quota import decide

T = datetime(2026, 3, 7, 21, 0, tzinfo=UTC)
FIVE = [T.replace(hour=h) for h in (1, 2, 3, 4, 5)]


def test_a_spent_daily_quota_gives_no_retry_after_when_the_deadline_comes_first():
    q = decide(T, FIVE, daily_limit=5, total_limit=50, deadline=T.replace(hour=23))
    assert not q.allowed and q.retry_after is None and q.remaining_total == 45
    assert "deadline (2026-03-07T23:00:00Z) comes before it renews" in q.reason
    # the deadline exactly at midnight: waiting does not help either; one second later it does
    midnight = T.replace(day=8, hour=0)
    assert decide(T, FIVE, daily_limit=5, total_limit=50, deadline=midnight).retry_after is None
    assert decide(T, FIVE, daily_limit=5, total_limit=50, deadline=midnight + timedelta(seconds=1)).retry_after \
        == 3 * 3600


@pytest.mark.parametrize("late", [timedelta(0), timedelta(microseconds=1), timedelta(days=3)])
def test_from_the_deadline_on_nothing_remains(late):
    deadline = T.replace(hour=22)
    q = decide(deadline + late, [], daily_limit=5, total_limit=50, deadline=deadline)
    assert (q.allowed, q.remaining_today, q.remaining_total, q.retry_after) == (False, 0, 0, None)
    assert q.reason == "the deadline (2026-03-07T22:00:00Z) has passed"
    before = decide(deadline - timedelta(microseconds=1), [], daily_limit=5, total_limit=50, deadline=deadline)
    assert before.allowed and before.remaining_today == 5


def test_the_429_after_a_spent_day_has_no_retry_after_past_the_deadline_and_me_says_so(service):
    tasks.create_task(service.db, "late", "quality", dumps(GOLD), "gold.json", service.clock(), daily_limit=1,
                      deadline=service.clock() + timedelta(hours=2))
    token = service.team()
    assert service.submit(token, task="late").status_code == 201
    r = service.submit(token, task="late")
    assert r.status_code == 429 and "retry-after" not in r.headers and "comes before it renews" in r.text
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()["quota"]["late"]
    assert me["state"] == "open" and me["deadline"] == "2026-03-01T14:00:00+00:00"
    service.clock.t += timedelta(hours=3)
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()["quota"]
    assert me["late"]["state"] == "past its deadline" and me["late"]["remaining_total"] == 0
    assert me["t1"]["state"] == "open" and me["t1"]["deadline"] is None


def test_the_admin_api_takes_a_deadline_and_a_rank_by_column(service):
    admin = teams.create_admin_token(service.db, service.clock())
    auth = {"Authorization": f"Bearer {admin}"}
    files = {"gold": ("g.json", dumps(GOLD), "application/json")}
    r = service.client.post("/api/admin/tasks", headers=auth, files=files,
                            data={"name": "t9", "subtask": "quality", "deadline": "2030-01-01T12:00+09:00",
                                  "rank_by": "quality.rsnod.S"})
    assert r.status_code == 201, r.text
    assert r.json()["deadline"] == "2030-01-01T03:00:00+00:00" and r.json()["rank_by"] == "quality.rsnod.S"
    for bad, says in (("2030-01-01T12:00", "has no time zone"), ("2030-02-30Z", "names no calendar date"),
                      ("9999-12-31T23:00-05:00", "is out of range")):
        r = service.client.post("/api/admin/tasks", headers=auth, files=files,
                                data={"name": "t10", "subtask": "quality", "deadline": bad})
        assert r.status_code == 422 and r.json()["detail"].startswith(f"deadline {bad!r} ") and says in r.text


@pytest.mark.parametrize(("text", "says"), [
    ("9999-12-31T23:59:59-05:00", "is out of range; allowed are times from 1970-01-01 to before 9999-12-30"),
    ("0001-01-01T00:00+01:00", "is out of range"),
    ("2030-02-30Z", "names no calendar date (there is no day 30 of month 2 in 2030)"),
    ("2030-01-01T12:00+09:00:30.5", "has a time zone offset with seconds"),
])
def test_deadlines_the_database_cannot_hold_are_one_line_errors(text, says, sqlite_url, tmp_path, capsys):
    with pytest.raises(DialevalError, match=says.replace("(", r"\(").replace(")", r"\)")):
        parse_deadline(text)
    gold = tmp_path / "gold.json"
    gold.write_bytes(dumps(GOLD))
    assert cli(["admin", "create-task", "t", "--subtask", "quality", "--gold", str(gold), "--deadline", text,
                "--database-url", sqlite_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --deadline {text!r} ") and says in err and err.count("\n") == 1


def test_lower_case_t_and_z_are_read_and_the_deadline_is_printed_in_utc(sqlite_url, tmp_path, capsys):
    gold = tmp_path / "gold.json"
    gold.write_bytes(dumps(GOLD))
    assert parse_deadline("2030-01-01t10:30z") == datetime(2030, 1, 1, 10, 30, tzinfo=UTC)
    assert cli(["admin", "create-task", "t", "--subtask", "quality", "--gold", str(gold), "--deadline",
                "2030-01-01T12:00+09:00", "--database-url", sqlite_url]) == 0
    printed = json.loads(capsys.readouterr().out)["deadline"]
    assert cli(["admin", "list-tasks", "--database-url", sqlite_url]) == 0
    assert printed == json.loads(capsys.readouterr().out)[0]["deadline"] == "2030-01-01T03:00:00+00:00"


def test_check_deadline_refuses_naive_times():
    with pytest.raises(DialevalError, match="must be a date and time with a time zone"):
        check_deadline(datetime(2030, 1, 1))


class _NoOffset(tzinfo):
    """A time zone that gives no offset: Python counts its datetimes as naive."""

    def utcoffset(self, dt):
        return None


def test_a_time_zone_without_an_offset_is_naive_to_the_deadline_and_the_quota():
    t = datetime(2030, 1, 1, tzinfo=_NoOffset())
    with pytest.raises(DialevalError, match="must be a date and time with a time zone"):
        check_deadline(t)
    with pytest.raises(DialevalError, match="now must be an aware datetime"):
        decide(t, [], daily_limit=5, total_limit=50)
