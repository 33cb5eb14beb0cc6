"""The leaderboard's JSON API and pages: submissions, quotas, the public half, closing, restarts, escaping."""

from __future__ import annotations

import copy
import hashlib
import math
from datetime import timedelta

import pytest
from service_support import GOLD, RUN, Service, dumps, upload_by_page

import dialeval
from dialeval.service.leaderboard.tables import Submission, SubmissionFile

COLUMNS = ["quality.nmd.A", "quality.nmd.S", "quality.nmd.E", "quality.rsnod.A", "quality.rsnod.S",
           "quality.rsnod.E"]


def flat(summary: dict) -> dict:
    """Reference means from dialeval.evaluate, keyed like the service's columns."""
    return {f"quality.{m}.{k}": v for m, d in summary["quality"].items() for k, v in d.items()}


def reference(ids: set[str], run=RUN) -> dict:
    """Scores of ``run`` on the dialogues ``ids``, by scoring the restricted files (not PreparedGold.subset)."""
    return flat(dialeval.evaluate([r for r in run if r["id"] in ids], [g for g in GOLD if g["id"] in ids]))


def public_ids(s: Service) -> set[str]:
    return set(s.task.public_ids)


def rounded(scores: dict) -> dict:
    return {k: round(v, 4) for k, v in scores.items()}


def assert_close(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for k in want:
        assert math.isclose(got[k], want[k], rel_tol=1e-12, abs_tol=1e-15), k


def test_submission_is_scored_on_the_public_half_only(service_any):
    s = service_any
    token = s.team()
    r = s.submit(token)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["scored_on"] == {"half": "public", "dialogues": 10}
    assert (body["remaining_today"], body["remaining_total"]) == (4, 49)
    assert_close(body["scores"], rounded(reference(public_ids(s))))  # public means: 4 decimals (runs.PUBLIC_DIGITS)
    full = reference({g["id"] for g in GOLD})
    assert body["scores"]["quality.nmd.A"] != pytest.approx(full["quality.nmd.A"])
    board = s.client.get("/api/tasks/t1/leaderboard").json()
    assert [row["team"] for row in board["rows"]] == ["team-a"]
    assert_close(board["rows"][0]["scores"], body["scores"])
    assert board["final"] is False and board["by"] == "quality.nmd.A"
    assert [c["name"] for c in board["columns"]] == COLUMNS
    assert board["columns"][0]["title"] == "normalised match distance"


def test_refusals_401_404_413(service, tmp_path):
    token = service.team()
    assert service.submit("wrong-token").status_code == 401
    r = service.client.post("/api/tasks/t1/submissions", files={"file": ("run.json", dumps(RUN))})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert service.submit(token, task="nope").status_code == 404
    small = Service(f"sqlite:///{tmp_path / 'small.sqlite'}", max_upload_bytes=1000)
    try:
        tok = small.team()
        r = small.submit(tok)  # ~20 KB > 1000 bytes
        assert r.status_code == 413 and "1000 bytes" in r.json()["detail"]
        huge = b"[" + b" " * 200_000 + b"]"  # over the limit plus the multipart slack: refused before reading
        r = small.submit(tok, huge)
        assert r.status_code == 413

        def chunked():  # no Content-Length: counted as it streams and cut off past the limit
            yield (b'--b\r\nContent-Disposition: form-data; name="file"; filename="r.json"\r\n'
                   b"Content-Type: application/json\r\n\r\n")
            for _ in range(100):
                yield b" " * 10_000
            yield b"\r\n--b--\r\n"

        r = small.client.post("/api/tasks/t1/submissions", content=chunked(),
                              headers={"Authorization": f"Bearer {tok}",
                                       "Content-Type": "multipart/form-data; boundary=b"})
        assert r.status_code == 413 and "1000 bytes" in r.json()["detail"]
        assert small.client.get("/api/me", headers={"Authorization": f"Bearer {tok}"}).json()["submissions"] == []
    finally:
        small.close()


def test_invalid_run_is_a_422_with_the_scorers_message_and_does_not_count(service):
    token = service.team()
    bad = copy.deepcopy(RUN)
    bad[3]["quality"]["A"]["7"] = 0.5
    r = service.submit(token, bad, filename="mine.json")
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail.startswith(f"mine.json: dialogue {bad[3]['id']}: quality.A: unknown bin name '7'")
    assert service.submit(token, b"{not json").status_code == 422
    assert "not valid JSON" in service.submit(token, b"{not json").json()["detail"]
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["quota"]["t1"]["remaining_today"] == 5 and me["submissions"] == []
    no_quality = [{"id": r["id"], "nugget": r["nugget"]} for r in RUN]
    r = service.submit(token, no_quality)
    assert r.status_code == 422 and "this task scores quality" in r.json()["detail"]


def test_quota_429_with_retry_after_then_renewed_next_utc_day(service):
    token = service.team()
    for _ in range(5):
        assert service.submit(token).status_code == 201
    r = service.submit(token)
    assert r.status_code == 429
    assert r.headers["retry-after"] == str(12 * 3600)  # the fake clock says 12:00 UTC
    assert "daily quota of 5" in r.json()["detail"]
    service.clock.t += timedelta(hours=12)
    r = service.submit(token)
    assert r.status_code == 201 and r.json()["remaining_today"] == 4 and r.json()["remaining_total"] == 44


def test_total_quota(tmp_path):
    s = Service(f"sqlite:///{tmp_path / 'q.sqlite'}", daily_limit=5, total_limit=2)
    try:
        token = s.team()
        assert [s.submit(token).status_code for _ in range(3)] == [201, 201, 429]
        r = s.submit(token)
        assert "total quota of 2" in r.json()["detail"] and "retry-after" not in r.headers
    finally:
        s.close()


def test_off_leaderboard_runs_count_but_are_not_shown(service):
    token = service.team()
    r = service.submit(token, leaderboard="false")
    assert r.status_code == 201 and r.json()["on_leaderboard"] is False
    assert service.client.get("/api/tasks/t1/leaderboard").json()["rows"] == []
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["quota"]["t1"]["remaining_today"] == 4 and len(me["submissions"]) == 1
    # ... and cannot be picked for the final ranking, which never ranks them (the pick was dropped silently)
    sub = me["submissions"][0]["id"]
    r = service.client.post(f"/api/tasks/t1/submissions/{sub}/choose", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 409 and "not on the leaderboard" in r.json()["detail"]


def _all_text(service: Service, token: str) -> str:
    c = service.client
    h = {"Authorization": f"Bearer {token}"}
    return " ".join([c.get("/api/tasks").text, c.get("/api/tasks/t1").text, c.get("/api/tasks/t1/leaderboard").text,
                     c.get("/api/tasks/t1/leaderboard?per=run").text, c.get("/api/me", headers=h).text,
                     c.get("/tasks/t1").text, c.get("/").text])


def test_no_answer_reveals_which_dialogues_are_hidden(service):
    token = service.team()
    r = service.submit(token)
    public = public_ids(service)
    hidden = {g["id"] for g in GOLD} - public
    assert len(public) == len(hidden) == 10
    text = r.text + _all_text(service, token)
    assert not [i for i in public | hidden if i in text]  # no dialogue id at all, public or hidden
    # Errors about a dialogue read the same for a public and for a hidden one.
    pub, hid = sorted(public)[0], sorted(hidden)[0]

    def message(did: str, change) -> str:
        run = copy.deepcopy(RUN)
        change(next(x for x in run if x["id"] == did))
        r = service.submit(token, run)
        assert r.status_code == 422
        return r.json()["detail"].replace(did, "ID")

    def negative(x):
        x["quality"]["S"]["0"] = -1.0

    def zero(x):
        x["quality"]["E"] = dict.fromkeys(x["quality"]["E"], 0.0)

    for change in (negative, zero):
        assert message(pub, change) == message(hid, change)

    def missing(did: str) -> str:
        r = service.submit(token, [x for x in RUN if x["id"] != did])
        assert r.status_code == 422
        return r.json()["detail"].replace(did, "ID")

    assert missing(pub) == missing(hid)
    assert "lacks 1 of the test set's 20 dialogues" in missing(pub)
    r = service.submit(token, [*RUN, {**RUN[0], "id": "not-in-test"}])
    assert r.status_code == 422 and "not in the test set: not-in-test" in r.json()["detail"]


def test_close_gives_final_scores_on_everything_and_refuses_runs(service_any):
    s = service_any
    a, b = s.team("a"), s.team("b")
    other = __import__("service_support").make_run(GOLD, seed=7)
    first = s.submit(a).json()["id"]
    s.clock.t += timedelta(minutes=1)
    s.submit(a, other)
    s.submit(b, other)
    choose = s.client.post(f"/api/tasks/t1/submissions/{first}/choose", headers={"Authorization": f"Bearer {a}"})
    assert choose.status_code == 200
    assert s.client.post(f"/api/tasks/t1/submissions/{first}/choose",
                         headers={"Authorization": f"Bearer {b}"}).status_code == 404
    from dialeval.service.leaderboard import tasks
    tasks.close_task(s.db, "t1", s.clock())
    board = s.client.get("/api/tasks/t1/leaderboard").json()
    assert board["final"] is True
    rows = {r["team"]: r for r in board["rows"]}
    everything = {g["id"] for g in GOLD}
    assert rows["a"]["id"] == first  # a's chosen run, not its latest
    assert_close(rows["a"]["scores"], reference(everything))
    assert_close(rows["b"]["scores"], reference(everything, other))
    assert rows["a"]["submissions"] == 2
    r = s.submit(a)
    assert r.status_code == 409 and "closed" in r.json()["detail"]
    me = s.client.get("/api/me", headers={"Authorization": f"Bearer {a}"}).json()
    assert {x["scored_on"]["half"] for x in me["submissions"]} == {"all"}
    with pytest.raises(Exception, match="closed"):
        tasks.close_task(s.db, "t1", s.clock())


def test_restart_loses_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'keep.sqlite'}"
    s = Service(url)
    token = s.team()
    sub = s.submit(token).json()
    board = s.client.get("/api/tasks/t1/leaderboard").json()
    s.close()
    from fastapi.testclient import TestClient

    from dialeval.service.app import create_app
    from dialeval.service.config import Settings

    app = create_app(Settings(database_url=url, clock=s.clock))
    with TestClient(app) as c:
        assert c.get("/api/tasks/t1/leaderboard").json() == board
        me = c.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
        assert [x["id"] for x in me["submissions"]] == [sub["id"]]
        assert me["quota"]["t1"]["remaining_today"] == 4
    with app.state.db.read() as db:
        stored = db.get(SubmissionFile, sub["id"]).data
        assert stored == dumps(RUN) and db.get(Submission, sub["id"]).sha256 == hashlib.sha256(stored).hexdigest()
    app.state.db.dispose()


def test_team_names_are_escaped_everywhere(service):
    evil = "<script>alert(1)</script>"
    token = service.team(evil, affiliation="<b>x</b>")
    r = upload_by_page(service.client, "t1", {"token": token, "leaderboard": "true"},
                       {"file": ("run.json", dumps(RUN), "application/json")})
    assert r.status_code == 201
    page = service.client.get("/tasks/t1").text + r.text
    page += service.client.post("/register", data={"name": evil + "2"}).text
    assert "<script>alert(1)" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert service.client.get("/api/tasks/t1/leaderboard").json()["rows"][0]["team"] == evil


def test_leaderboard_sorting_views_and_best_run(service):
    a, b = service.team("a"), service.team("b")
    mk = __import__("service_support").make_run
    scores = {}
    for team, seeds in (("a", (1, 2)), ("b", (3,))):
        for seed in seeds:
            r = service.submit(a if team == "a" else b, mk(GOLD, seed=seed))
            scores[r.json()["id"]] = (team, r.json()["scores"])
    board = service.client.get("/api/tasks/t1/leaderboard").json()
    best_a = min((v["quality.nmd.A"], k) for k, (t, v) in scores.items() if t == "a")[1]
    assert {r["team"]: r["id"] for r in board["rows"]}["a"] == best_a
    values = [r["scores"]["quality.nmd.A"] for r in board["rows"]]
    assert values == sorted(values) and [r["rank"] for r in board["rows"]] == [1, 2]
    by_s = service.client.get("/api/tasks/t1/leaderboard?by=quality.rsnod.S&per=run").json()
    assert len(by_s["rows"]) == 3
    vs = [r["scores"]["quality.rsnod.S"] for r in by_s["rows"]]
    assert vs == sorted(vs)
    r = service.client.get("/api/tasks/t1/leaderboard?by=nugget.jsd")
    assert r.status_code == 422 and "allowed are quality.nmd.A" in r.json()["detail"]
    assert service.client.get("/api/tasks/t1/leaderboard?per=x").status_code == 422
    page = service.client.get("/tasks/t1?by=quality.rsnod.S&per=run").text
    assert "RSNOD S ▲" in page


def test_html_upload_shows_the_validation_error(service):
    token = service.team()
    bad = copy.deepcopy(RUN)
    bad[0]["quality"]["A"]["2"] = "high"
    r = upload_by_page(service.client, "t1", {"token": token}, {"file": ("bad.json", dumps(bad), "application/json")})
    assert r.status_code == 422
    assert "bad.json: dialogue" in r.text and "is not a number" in r.text and 'role="alert"' in r.text
    # beside the form it came from, whose token field takes the keyboard (the page opens there)
    assert r.text.index('id="upload-error"') > r.text.index('id="leaderboard"')
    assert r.text.index('id="upload-error"') < r.text.index('id="submit-form"') and " autofocus" in r.text
    r = upload_by_page(service.client, "t1", {"token": "nope"}, {"file": ("a.json", dumps(RUN), "application/json")})
    assert r.status_code == 401 and "not valid" in r.text


def test_the_page_upload_form_needs_its_csrf_token(service):
    """Another site cannot make a visitor's browser send runs through the page form, even with a token it knows:
    without the page's CSRF token (or with one of another browser) the form is refused and nothing counts."""
    token = service.team()
    run = {"file": ("run.json", dumps(RUN), "application/json")}
    r = service.client.post("/tasks/t1/submit", data={"token": token}, files=run)
    assert r.status_code == 403 and "did not come from this site" in r.text and 'role="alert"' in r.text
    service.client.get("/tasks/t1")
    r = service.client.post("/tasks/t1/submit", data={"token": token, "csrf": "a" * 43}, files=run)
    assert r.status_code == 403
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["submissions"] == [] and me["quota"]["t1"]["remaining_today"] == 5
    assert upload_by_page(service.client, "t1", {"token": token}, run).status_code == 201


def test_deadline(tmp_path):
    from dialeval.service.leaderboard import tasks
    s = Service(f"sqlite:///{tmp_path / 'd.sqlite'}")
    try:
        tasks.create_task(s.db, "t2", "quality", dumps(GOLD), "gold.json", s.clock(),
                          deadline=s.clock() + timedelta(hours=1))
        token = s.team()
        assert s.submit(token, task="t2").status_code == 201
        s.clock.t += timedelta(hours=1)
        r = s.submit(token, task="t2")
        assert r.status_code == 409 and "deadline" in r.json()["detail"]
    finally:
        s.close()


def test_admin_api_needs_an_organiser_token(service):
    from dialeval.service import teams
    team_token = service.team()
    admin = teams.create_admin_token(service.db, service.clock(), "lead")
    form = {"name": "t3", "subtask": "nugget", "public_fraction": "0.25"}
    files = {"gold": ("g.json", dumps(GOLD), "application/json")}
    assert service.client.post("/api/admin/tasks", data=form, files=files,
                               headers={"Authorization": f"Bearer {team_token}"}).status_code == 401
    r = service.client.post("/api/admin/tasks", data=form, files=files, headers={"Authorization": f"Bearer {admin}"})
    assert r.status_code == 201, r.text
    assert r.json()["columns"] == ["nugget.jsd", "nugget.rnss"] and r.json()["public_dialogues"] == 5
    r = service.client.post("/api/admin/tasks/t3/close", headers={"Authorization": f"Bearer {admin}"})
    assert r.status_code == 200 and r.json()["closed"] is True
    assert service.client.post("/api/admin/tasks/t3/close",
                               headers={"Authorization": f"Bearer {admin}"}).status_code == 409


def test_the_page_form_sent_again_shows_its_run_instead_of_scoring_it_again(service):
    """A reload of the result page (or a double click) sends the same form: one run, one quota unit."""
    import re

    token = service.team()
    form = re.search(r'name="form_nonce" value="([^"]+)"', service.client.get("/tasks/t1").text).group(1)
    assert len(form) == 32
    csrf = service.client.cookies.get("dialeval_csrf")
    send = {"data": {"token": token, "leaderboard": "true", "form_nonce": form, "csrf": csrf},
            "files": {"file": ("run.json", dumps(RUN), "application/json")}}
    first = service.client.post("/tasks/t1/submit", **send)
    assert first.status_code == 201 and 'id="repeated"' not in first.text
    again = service.client.post("/tasks/t1/submit", **send)
    assert again.status_code == 200 and "This form was sent before (a reload?)" in again.text
    me = service.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert len(me["submissions"]) == 1 and me["quota"]["t1"]["remaining_today"] == 4
    run_id = me["submissions"][0]["id"]
    assert f"Run {run_id} of" in again.text and "Remaining today: 4" in again.text
    other = re.search(r'name="form_nonce" value="([^"]+)"', again.text).group(1)
    assert other != form  # the page shown again carries a new form: a new upload from it is a new run
    r = service.client.post("/tasks/t1/submit", **{**send, "data": {**send["data"], "form_nonce": other}})
    assert r.status_code == 201 and f"Run {run_id + 1} of" in r.text
    assert service.submit(token).status_code == 201  # the API has no form: every upload is a run
    service.submit(token)
    service.submit(token)  # the day's quota is spent now: a reload still shows its run, not a 429
    assert service.client.post("/tasks/t1/submit", **send).status_code == 200
