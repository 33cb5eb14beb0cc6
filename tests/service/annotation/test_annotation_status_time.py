"""The organiser's status as of the current time: an assignment past its time limit is ``overdue``, not
``active`` (nothing changes in the database), and the time per item counts a pause longer than the time limit
as the time limit. Expected times are worked out by hand from the clock's ticks (time limit 30 min = 1800 s)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from annotation_support import Projects, chats_corpus
from sqlalchemy import select

from dialeval.cli.main import run as cli
from dialeval.service import teams
from dialeval.service.annotation import projects
from dialeval.service.annotation.status import annotation_status, status_table, working_seconds
from dialeval.service.annotation.tables import Assignment

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)  # the fake clock's start
LIMIT = 1800.0
DAY = 86400


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _label(pj, who, aid: int, turn: int, value: str = "VALID") -> None:
    projects.save_label(pj.db, who, aid, turn, "validity", value, pj.clock())


def test_working_seconds_caps_each_pause_at_the_time_limit():
    assert working_seconds([_at(0)], LIMIT) == (0.0, 0)
    assert working_seconds([_at(0), _at(40), _at(100)], LIMIT) == (100.0, 0)
    # 40 s, then a day away (1800 counted), then 5 s: 40 + 1800 + 5
    assert working_seconds([_at(DAY + 45), _at(0), _at(40), _at(DAY + 40)], LIMIT) == (1845.0, 1)
    # a pause of exactly the limit counts in full and is not a longer one; two long pauses: 1800 + 1800 + 1
    assert working_seconds([_at(0), _at(1800)], LIMIT) == (1800.0, 0)
    assert working_seconds([_at(0), _at(5000), _at(9000), _at(9001)], LIMIT) == (3601.0, 2)
    with pytest.raises(ValueError, match="at least one action"):
        working_seconds([], LIMIT)
    with pytest.raises(ValueError, match="allowed are positive seconds"):
        working_seconds([_at(0)], 0)
    with pytest.raises(TypeError, match="number of seconds"):
        working_seconds([_at(0)], "30m")
    with pytest.raises(TypeError, match="aware datetimes"):
        working_seconds([_at(0), datetime(2026, 3, 1, 13)], LIMIT)


def test_an_absence_past_the_time_limit_is_overdue_and_not_counted_as_work(pj):
    a_code, b_code = pj.project("p1", chats_corpus(3), overlap=1, n_codes=2, timeout="30m")
    a = projects.annotator(pj.db, "p1", a_code, pj.clock())
    asg = projects.next_assignment(pj.db, a, pj.clock())               # taken at T0
    pj.tick(40)
    _label(pj, a, asg.id, 1)
    _label(pj, a, asg.id, 3)                                            # saved at T0+40: expires at T0+1840
    for seconds, active, overdue in ((1839, 1, 0), (1840, 0, 1), (DAY + 40, 0, 1)):
        st = annotation_status(pj.db, "p1", _at(seconds))
        assert (st["assignments"]["active"], st["assignments"]["overdue"]) == (active, overdue), seconds
        assert [(x["active"], x["overdue"]) for x in st["annotators"]] == [(active, overdue)]  # B not joined
    with pj.db.read() as s:                                             # a read expires nothing
        assert s.scalar(select(Assignment.state).where(Assignment.id == asg.id)) == "active"
    # away a day; nobody asked for an item, so the item is still theirs: a label renews it, then submit
    pj.tick(DAY)
    _label(pj, a, asg.id, 3, "INVALID")                                 # turn 3 now saved at T0+86440
    pj.tick(5)
    projects.submit(pj.db, a, asg.id, pj.clock())                       # T0+86445
    # B takes an item 10 s later, labels it in 20 s and submits 10 s after that: 30 s; then takes another
    b = projects.annotator(pj.db, "p1", b_code, pj.clock())
    pj.tick(10)
    other = projects.next_assignment(pj.db, b, pj.clock())
    pj.tick(20)
    _label(pj, b, other.id, 1)
    _label(pj, b, other.id, 3)
    pj.tick(10)
    projects.submit(pj.db, b, other.id, pj.clock())
    projects.next_assignment(pj.db, b, pj.clock())                      # active, 1800 s left
    st = annotation_status(pj.db, "p1", pj.clock())
    # A: T0 -> 40 (40 s), 40 -> 86440 (a day: 1800 s counted), 86440 -> 86445 (5 s) = 1845 s, not 86445 s
    assert st["seconds_per_item"] == {"median": 937.5, "mean": 937.5, "pauses_capped_at_s": LIMIT,
                                      "items_with_a_capped_pause": 1}
    assert st["time_limit_s"] == LIMIT
    assert st["assignments"] == {"active": 1, "overdue": 0, "finished": 2, "expired": 0, "excluded": 0}
    assert [(x["annotator"], x["finished"], x["active"], x["overdue"], x["median_seconds_per_item"],
             x["items_with_a_capped_pause"]) for x in st["annotators"]] == [("A001", 1, 0, 0, 1845.0, 1),
                                                                             ("A002", 1, 1, 0, 30.0, 0)]
    lines = status_table(st)
    assert ("assignments: 1 active, 0 overdue (past the time limit of 1800 s, given back at the next request "
            "for an item), 2 finished, 0 expired") in lines
    assert ("seconds per item: median 937.5, mean 937.5 (a pause counts 1800 s at most; 1 item(s) had a longer "
            "one)") in lines
    assert lines[-3].split() == ["annotator", "finished", "active", "overdue", "s/item", "agree", "label"]
    assert lines[-2].split()[:6] == ["A001", "1", "0", "0", "1845.0", "-"]  # k = 1: nobody to agree with
    with pytest.raises(TypeError, match="now must be an aware datetime"):
        annotation_status(pj.db, "p1", None)
    with pytest.raises(TypeError, match="now must be an aware datetime"):
        annotation_status(pj.db, "p1", datetime(2026, 3, 1, 12))


def test_the_status_api_reads_the_services_clock(pj):
    [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1, timeout="30m")
    admin = teams.create_admin_token(pj.db, pj.clock())
    assert pj.call("POST", "/api/annotation/p1/next", code).status_code == 200      # expires at T0+1800
    pj.tick(1799)
    st = pj.call("GET", "/api/admin/annotation/p1/status", admin).json()
    assert (st["assignments"]["active"], st["assignments"]["overdue"]) == (1, 0)
    pj.tick(1)
    st = pj.call("GET", "/api/admin/annotation/p1/status", admin).json()
    assert (st["assignments"]["active"], st["assignments"]["overdue"]) == (0, 1)
    assert [(x["active"], x["overdue"]) for x in st["annotators"]] == [(0, 1)]
    page = pj.client.get("/annotate/p1/status")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = pj.client.post("/annotate/p1/status", data={"token": admin, "csrf": token})
    assert r.status_code == 200 and "Assignments: 0 active, 1 overdue (past the time limit of\n1800 s" in r.text
    assert "<th>overdue</th>" in r.text and "<td>0</td><td>1</td>" in r.text


def test_the_cli_status_reads_the_current_time(sqlite_url, capsys):
    pj = Projects(sqlite_url)  # its clock is at T0, long past (more than 30 min) by the real clock
    try:
        [code] = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1, timeout="30m")
        assert pj.call("POST", "/api/annotation/p1/next", code).status_code == 200
    finally:
        pj.close()
    assert cli(["admin", "annotation-status", "p1", "--format", "json", "--database-url", sqlite_url]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["assignments"]["active"], st["assignments"]["overdue"]) == (0, 1)
    assert cli(["admin", "annotation-status", "p1", "--database-url", sqlite_url]) == 0
    assert "assignments: 0 active, 1 overdue" in capsys.readouterr().out
