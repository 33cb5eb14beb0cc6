"""Races and refusals found by the security probe: an excluded annotator's in-flight request, two active
assignments after an expiry, and annotator ids no annotator can have (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import re

import pytest
from annotation_support import chats_corpus, label_all
from sqlalchemy import select

from dialeval.cli.main import run as cli
from dialeval.service import teams
from dialeval.service.annotation import projects
from dialeval.service.annotation.export import project_corpus
from dialeval.service.annotation.status import annotation_status
from dialeval.service.annotation.tables import AnnotationItem, Assignment
from dialeval.service.errors import Conflict, Forbidden, Invalid, NotFound

EXCLUDED = "the organisers have closed this code's work in the project"


def _label_everything(pj, who, asg_id: int) -> None:
    a, item, labels = projects.get_assignment(pj.db, who, asg_id)
    for turn, scale, value in label_all(projects.assignment_view(who, a, item, labels)):
        projects.save_label(pj.db, who, asg_id, turn, scale, value, pj.clock())


def _counts(pj) -> list[tuple[int, int]]:
    with pj.db.read() as s:
        return [(i.live, i.finished) for i in s.scalars(select(AnnotationItem).order_by(AnnotationItem.id))]


def test_an_excluded_annotators_in_flight_submit_of_an_expired_assignment_is_refused(pj):
    """The probe's order: authenticated, all labels saved, expired, excluded, then the request's submit."""
    a_code, b_code = pj.project("p1", chats_corpus(1), overlap=1, n_codes=2, timeout="10m")
    a = projects.annotator(pj.db, "p1", a_code, pj.clock())        # the request authenticates
    asg = projects.next_assignment(pj.db, a, pj.clock())
    _label_everything(pj, a, asg.id)
    pj.tick(11 * 60)
    assert projects.expire_overdue(pj.db, a.project, pj.clock()) == 1
    assert _counts(pj) == [(0, 0)]
    done = projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())
    assert done == {"annotator": "A001", "assignments_returned": 0}   # the expired one held no slot
    with pytest.raises(Forbidden, match=EXCLUDED):
        projects.submit(pj.db, a, asg.id, pj.clock())
    with pytest.raises(Forbidden, match=EXCLUDED):
        projects.save_label(pj.db, a, asg.id, 1, "validity", "VALID", pj.clock())
    with pytest.raises(Forbidden, match=EXCLUDED):
        projects.next_assignment(pj.db, a, pj.clock())
    with pj.db.read() as s:
        assert s.scalar(select(Assignment.state).where(Assignment.id == asg.id)) == "excluded"
    assert _counts(pj) == [(0, 0)]
    st = annotation_status(pj.db, "p1", pj.clock())
    assert st["complete_items"] == 0 and st["items_by_finished"] == {"0": 1, "1": 0}
    # the item goes to another annotator, and the export has its k = 1 annotation
    b = projects.annotator(pj.db, "p1", b_code, pj.clock())
    other = projects.next_assignment(pj.db, b, pj.clock())
    assert other is not None and other.item_id == asg.item_id
    _label_everything(pj, b, other.id)
    assert projects.submit(pj.db, b, other.id, pj.clock()).state == "finished"
    assert _counts(pj) == [(1, 1)]
    assert project_corpus(pj.db, "p1").is_annotated()


def test_an_excluded_annotators_in_flight_requests_on_an_active_assignment_are_refused(pj):
    a_code, b_code = pj.project("p1", chats_corpus(2), overlap=1, n_codes=2)
    a = projects.annotator(pj.db, "p1", a_code, pj.clock())
    asg = projects.next_assignment(pj.db, a, pj.clock())
    _label_everything(pj, a, asg.id)
    assert projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())["assignments_returned"] == 1
    with pytest.raises(Forbidden, match=EXCLUDED):
        projects.save_label(pj.db, a, asg.id, 1, "validity", "INVALID", pj.clock())
    with pytest.raises(Forbidden, match=EXCLUDED):
        projects.submit(pj.db, a, asg.id, pj.clock())
    with pytest.raises(Forbidden, match=EXCLUDED):                  # no new item for them either
        projects.next_assignment(pj.db, a, pj.clock())
    assert _counts(pj) == [(0, 0), (0, 0)]
    b = projects.annotator(pj.db, "p1", b_code, pj.clock())
    assert projects.next_assignment(pj.db, b, pj.clock()) is not None


def test_an_expired_assignment_is_not_taken_back_while_another_is_active(pj):
    codes = pj.project("p1", chats_corpus(2), overlap=2, n_codes=1, timeout="10m")
    a = projects.annotator(pj.db, "p1", codes[0], pj.clock())
    first = projects.next_assignment(pj.db, a, pj.clock())
    pj.tick(10 * 60 + 1)                                           # 10 min without a label: expired
    second = projects.next_assignment(pj.db, a, pj.clock())
    assert second.id != first.id and second.item_id != first.item_id
    msg = f"assignment {first.id} expired.*you hold another item now \\(assignment {second.id}\\)"
    with pytest.raises(Conflict, match=msg):
        projects.save_label(pj.db, a, first.id, 1, "validity", "VALID", pj.clock())
    with pytest.raises(Conflict, match=msg):
        projects.submit(pj.db, a, first.id, pj.clock())
    r = pj.call("POST", f"/api/annotation/p1/assignments/{first.id}/labels", codes[0],
                {"turn": 1, "scale": "validity", "value": "VALID"})
    assert r.status_code == 409 and "you hold another item now" in r.json()["detail"]
    with pj.db.read() as s:
        states = dict(s.execute(select(Assignment.id, Assignment.state)).all())
    assert states == {first.id: "expired", second.id: "active"}
    assert sorted(_counts(pj)) == [(0, 0), (1, 0)]
    # once the other item is submitted, the expired one may be taken back (its item has a free slot)
    _label_everything(pj, a, second.id)
    projects.submit(pj.db, a, second.id, pj.clock())
    _label_everything(pj, a, first.id)
    assert projects.submit(pj.db, a, first.id, pj.clock()).state == "finished"
    assert _counts(pj) == [(1, 1), (1, 1)]


# impossible numbers (0, beyond the 32-bit column) are no annotator: 404; not ASCII digits: not an id, 422
IMPOSSIBLE = ["99999999999999999999", "A99999999999", "A2147483648", "A0", "0" * 30 + "9" * 30, "9" * 5000]
NOT_IDS = ["A²", "²", "A٣", "A１", "A", "", "A-1", "A 1"]


def test_impossible_annotator_ids_are_404_and_non_ids_422_never_500(pj):
    codes = pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    projects.annotator(pj.db, "p1", codes[0], pj.clock())          # A001
    admin = teams.create_admin_token(pj.db, pj.clock())
    p = projects.get_project(pj.db, "p1")
    for ref in IMPOSSIBLE:
        with pytest.raises(NotFound, match=r"no annotator .* in project 'p1'"):
            projects.find_annotator(pj.db, p, ref)
    for ref in NOT_IDS:
        with pytest.raises(Invalid, match=r"is not an annotator id; use e\.g\. A003"):
            projects.find_annotator(pj.db, p, ref)
    assert projects.find_annotator(pj.db, p, " a0001 ").number == 1
    for ref in [*IMPOSSIBLE[:4], "A2147483647"]:
        r = pj.call("POST", "/api/admin/annotation/p1/exclude", admin, {"annotator": ref})
        assert r.status_code == 404 and "no annotator" in r.json()["detail"], (ref, r.text)
    for ref in NOT_IDS:
        r = pj.call("POST", "/api/admin/annotation/p1/exclude", admin, {"annotator": ref})
        assert r.status_code == 422 and "is not an annotator id" in r.json()["detail"], (ref, r.text)
    page = pj.client.get("/annotate/p1/status")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    for ref, status in (("A²", 422), ("99999999999999999999", 404), ("A99999999999", 404)):
        r = pj.client.post("/annotate/p1/exclude", data={"token": admin, "annotator": ref, "csrf": token})
        assert r.status_code == status, (ref, r.text)
    st = annotation_status(pj.db, "p1", pj.clock())
    assert [(x["annotator"], x["excluded"]) for x in st["annotators"]] == [("A001", False)]


def test_the_cli_refuses_impossible_annotator_ids_in_one_line(db_url, capsys):
    from annotation_support import Projects

    pj = Projects(db_url)
    try:
        pj.project("p1", chats_corpus(1), overlap=1, n_codes=1)
    finally:
        pj.close()
    db = ["--database-url", db_url]
    assert cli(["admin", "exclude-annotator", "p1", "A²", *db]) == 2
    assert "annotator 'A²' is not an annotator id" in capsys.readouterr().err
    assert cli(["admin", "exclude-annotator", "p1", "A99999999999", *db]) == 2
    err = capsys.readouterr().err
    assert "no annotator 'A99999999999' in project 'p1'" in err and "Traceback" not in err
