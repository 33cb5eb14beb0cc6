"""Registration: the token shown once, only its hash stored. Issue 17, findings 6 and 7: look-alike team names
are refused; registration modes open / invite / approve end to end (API, page, `dialeval admin`, `dialeval
register`); the rate limit per address is kept in the database, so two app instances (worker processes) on one
database share it."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from service_support import RUN, LiveServer, Service, register_by_page
from sqlalchemy import select

from dialeval.cli.main import run as cli
from dialeval.service import ratelimit
from dialeval.service.app import create_app
from dialeval.service.config import Settings
from dialeval.service.db import Team


def in_mode(url: str, mode: str) -> Service:
    """The test service on ``url``, its app serving registration ``mode``."""
    s = Service(url)
    s.settings = Settings(database_url=url, max_upload_bytes=s.settings.max_upload_bytes, clock=s.clock,
                          registration=mode)
    s.app = create_app(s.settings, s.db)
    s.client.close()
    s.client = TestClient(s.app)
    return s


def register(s: Service, name: str, **extra):
    s.clock.t += timedelta(hours=1)  # past the rate limit of the earlier attempts
    return s.client.post("/api/teams", json={"name": name, **extra})


def test_register_token_shown_once_and_only_its_hash_stored(service):
    r = service.client.post("/api/teams", json={"name": "alpha", "affiliation": "Lab"})
    assert r.status_code == 201
    token = r.json()["token"]
    assert r.json()["team"] == "alpha" and len(token) > 40
    with service.db.read() as s:
        team = s.scalar(select(Team).where(Team.name == "alpha"))
    assert team.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str({c: getattr(team, c) for c in ("name", "affiliation", "token_hash")})
    assert service.client.post("/api/teams", json={"name": "alpha"}).status_code == 409
    assert service.client.post("/api/teams", json={"name": "  "}).status_code == 422
    assert service.client.post("/api/teams", json={"name": "x" * 101}).status_code == 422


# ---- 6. names -----------------------------------------------------------------------------------

LOOK_ALIKES = [
    ("TeamA\u200b", 422, "U+200B"),           # zero-width space
    ("Team\u200dA", 422, "U+200D"),           # zero-width joiner
    ("\u202eTeamA", 422, "U+202E"),           # right-to-left override
    ("TeamA\u2066", 422, "U+2066"),           # bidi isolate
    ("teama", 409, "is taken"),               # case
    ("ＴｅａｍＡ", 409, "is taken"),          # full width (NFKC)
    ("TeamА", 409, "looks like"),             # Cyrillic А
    ("Τеаm\u0410", 409, "looks like"),        # Greek Tau, Cyrillic е, а, А
]


def test_look_alike_names_are_refused_beside_teama(db_url):
    s = Service(db_url)
    try:
        assert register(s, "TeamA").status_code == 201
        for name, status, words in LOOK_ALIKES:
            r = register(s, name)
            assert r.status_code == status and words in r.json()["detail"], (name, r.status_code, r.text)
            s.clock.t += timedelta(hours=1)
            page = register_by_page(s.client, {"name": name})
            assert page.status_code == status, name
        assert register(s, "TeamB").status_code == 201  # a different name passes
        board = [t["name"] for t in __import__("dialeval.service.teams", fromlist=["x"]).list_teams(s.db)]
        assert board == ["TeamA", "TeamB"]
    finally:
        s.close()


def test_names_with_other_invisible_characters_are_refused(service):
    for name in ("a\u00adb", "a\ufeffb", "a\u0007b", "a\U000e0041b", "a\ue000b"):
        assert register(service, name).status_code == 422, repr(name)
    assert register(service, "Équipe 東京 №1").status_code == 201  # letters of any script are fine


def test_stacked_combining_marks_are_refused_and_real_words_pass(service):
    """"a" and fifty U+0301 draw a tall smear over the leaderboard: refused (422), the message naming the field,
    the value received with its marks escaped, and what is allowed. Names are stored NFC; the accents and
    vowel signs of real words pass, typed composed or decomposed."""
    import unicodedata

    smear = "a" + "\u0301" * 50
    for body, field in (({"name": smear}, "team name"), ({"name": "Team" + "\u0489" * 8}, "team name"),
                        ({"name": "ok", "affiliation": "Lab x" + "\u0316\u0317" * 10}, "affiliation")):
        r = register(service, **body)
        assert r.status_code == 422, (body, r.text)
        detail = r.json()["detail"]
        assert detail.startswith(field + " '") and "combining marks in a row" in detail, detail
        assert "at most 3 in a row are allowed" in detail, detail
        received = detail.split(" has ")[0]                               # escaped: no mark drawn
        assert "\\u0" in received and not any(unicodedata.category(c) == "Mn" for c in received), detail
    r = register(service, "\u0301Team")
    assert r.status_code == 422 and "starts with the combining mark U+0301" in r.json()["detail"]
    service.clock.t += timedelta(hours=1)
    page = register_by_page(service.client, {"name": smear})
    message = re.search(r'<span id="error-message">(.*?)</span>', page.text, re.DOTALL).group(1)
    assert page.status_code == 422 and "combining marks in a row" in message and "\u0301" not in message
    real = ["हिन्दी", unicodedata.normalize("NFD", "Nguyễn Văn"), "Zoë", "שַּׁבָּת", "กี่คน", "སྒྲོལ་མ", "Ça va ✓"]
    for name in real:
        r = register(service, name)
        assert r.status_code == 201, (name, r.text)
        assert r.json()["team"] == unicodedata.normalize("NFC", name)   # stored composed
    r = register(service, unicodedata.normalize("NFD", "Zoë"))
    assert r.status_code == 409 and "is taken" in r.json()["detail"]    # the same name, decomposed


# ---- 7. registration modes ----------------------------------------------------------------------

def test_open_mode_registers_and_submits(sqlite_url):
    s = in_mode(sqlite_url, "open")
    try:
        r = register(s, "open-team")
        assert r.status_code == 201 and r.json()["approved"] is True
        assert s.submit(r.json()["token"]).status_code == 201
        assert "Invitation code" not in s.client.get("/").text
        # The form needs its page's CSRF token: another site cannot register a team from a visitor's browser.
        from dialeval.service.teams import list_teams

        for form in ({"name": "cross-site"}, {"name": "cross-site", "csrf": "x" * 43}):
            r = s.client.post("/register", data=form, headers={"Origin": "https://evil.example"})
            assert r.status_code == 403 and "cross-site" not in [t["name"] for t in list_teams(s.db)]
        assert register_by_page(s.client, {"name": "by-page"}).status_code == 201
    finally:
        s.close()


def test_invite_mode_end_to_end(db_url, capsys):
    s = in_mode(db_url, "invite")
    try:
        assert register(s, "no-code").status_code == 401
        assert register(s, "bad-code", invite="dti_guess").status_code == 401
        assert cli(["admin", "invite-teams", "2", "--database-url", db_url]) == 0
        codes = capsys.readouterr().out.split()
        assert len(codes) == 2 and all(c.startswith("dti_") for c in codes)
        r = register(s, "invited", invite=codes[0])
        assert r.status_code == 201 and r.json()["approved"] is True
        assert s.submit(r.json()["token"]).status_code == 201
        assert register(s, "second-use", invite=codes[0]).status_code == 409  # single use
        assert register(s, "invited", invite=codes[1]).status_code == 409     # name taken: the code is kept
        page = s.client.get("/").text
        assert 'name="invite"' in page and "Invitation code" in page
        r = register_by_page(s.client, {"name": "by-page", "invite": codes[1]})
        assert r.status_code == 201 and "by-page" in r.text
        assert register_by_page(s.client, {"name": "again", "invite": codes[1]}).status_code == 409
    finally:
        s.close()


def test_invite_mode_with_the_command_line_client(sqlite_url, capsys):
    s = in_mode(sqlite_url, "invite")
    try:
        assert cli(["admin", "invite-teams", "1", "--database-url", sqlite_url]) == 0
        code = capsys.readouterr().out.strip()
        with LiveServer(s.app) as server:
            assert cli(["register", "cli-team", "--server", server.url]) == 2
            assert "refused (401)" in capsys.readouterr().err
            assert cli(["register", "cli-team", "--server", server.url, "--invite", code]) == 0
            assert capsys.readouterr().out.strip().startswith("dt_")
    finally:
        s.close()


def test_approve_mode_end_to_end(db_url, capsys):
    s = in_mode(db_url, "approve")
    try:
        r = register(s, "waiting")
        assert r.status_code == 201 and r.json()["approved"] is False
        token = r.json()["token"]
        refused = s.submit(token)
        assert refused.status_code == 403 and "awaits approval" in refused.json()["detail"]
        me = s.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()
        assert me["submissions"] == [] and me["quota"]["t1"]["remaining_total"] == 50
        assert me["approved"] is False  # said, so that the team knows why its runs are refused
        assert cli(["admin", "list-teams", "--database-url", db_url]) == 0
        listed = capsys.readouterr().out
        assert '"approved": false' in listed and "waiting" in listed
        assert cli(["admin", "approve-team", "WAITING", "--database-url", db_url]) == 0
        capsys.readouterr()
        assert s.submit(token).status_code == 201
        assert s.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()["approved"] is True
        assert cli(["admin", "approve-team", "nobody", "--database-url", db_url]) == 2
        page = register_by_page(s.client, {"name": "page-team"})
        assert page.status_code == 201 and "approved" in page.text
    finally:
        s.close()


def test_admin_api_invites_lists_and_approves(sqlite_url):
    from dialeval.service import teams

    s = in_mode(sqlite_url, "approve")
    try:
        admin = {"Authorization": f"Bearer {teams.create_admin_token(s.db, s.clock())}"}
        token = register(s, "api-team").json()["token"]
        assert s.client.get("/api/admin/teams").status_code == 401
        assert s.client.get("/api/admin/teams", headers=admin).json()[0]["approved"] is False
        assert s.client.post("/api/admin/teams/approve", headers=admin, data={"name": "api-team"}).status_code == 200
        assert s.submit(token).status_code == 201
        r = s.client.post("/api/admin/invitations", headers=admin, data={"count": "3"})
        assert r.status_code == 201 and len(r.json()["codes"]) == 3
        for bad in ("0", "10001", str(2**70), "x"):
            assert s.client.post("/api/admin/invitations", headers=admin, data={"count": bad}).status_code == 422
    finally:
        s.close()


def test_an_unknown_mode_is_refused(sqlite_url, capsys):
    assert cli(["serve", "--registration", "closed", "--database-url", sqlite_url]) == 2
    assert "registration mode 'closed' is not allowed; allowed are open, invite, approve" in capsys.readouterr().err
    with pytest.raises(Exception, match="registration mode"):
        create_app(Settings(database_url=sqlite_url, registration="closed"))


def test_rate_limit_per_address_is_shared_by_every_worker(db_url):
    s = Service(db_url)
    other = TestClient(create_app(s.settings, s.db))  # a second worker on the same database
    try:
        for i in range(ratelimit.REGISTRATIONS):
            client = s.client if i % 2 else other
            assert client.post("/api/teams", json={"name": f"team {i}"}).status_code == 201
        r = s.client.post("/api/teams", json={"name": "one too many"})
        assert r.status_code == 429 and int(r.headers["Retry-After"]) == 3600
        page = register_by_page(other, {"name": "by page"})
        assert page.status_code == 429 and int(page.headers["Retry-After"]) > 0
        s.clock.t += timedelta(minutes=30)
        assert s.client.post("/api/teams", json={"name": "still"}).status_code == 429
        s.clock.t += timedelta(minutes=31)
        assert s.client.post("/api/teams", json={"name": "later"}).status_code == 201
        assert ratelimit.attempts(s.db, "testclient") == 1  # older attempts pruned
    finally:
        other.close()
        s.close()


def test_the_rate_limit_rule():
    from datetime import UTC, datetime

    t = datetime(2026, 5, 1, 10, tzinfo=UTC)
    earlier = [t - timedelta(minutes=m) for m in (59, 30, 1)]
    assert not ratelimit.decide(t, earlier, limit=3).allowed
    assert ratelimit.decide(t, earlier, limit=3).retry_after == 60
    assert ratelimit.decide(t, earlier, limit=4).allowed
    assert ratelimit.decide(t + timedelta(minutes=1), earlier, limit=3).allowed
    assert RUN  # the shared run exists for the modes' submissions


def test_migration_0003_keeps_existing_teams_and_tasks(db_url):
    """Teams registered before 0003 (two of them one name after case folding) keep their tokens; tasks their split."""
    from sqlalchemy import create_engine, text

    from dialeval.service import migrate
    from dialeval.service.db import Database, Team
    from dialeval.service.leaderboard.tables import Task

    eng = create_engine(db_url)
    migrate.upgrade(eng, "0002")
    with eng.begin() as c:
        for i, name in enumerate(("TeamA", "teama", "TeamА")):
            c.execute(text("INSERT INTO teams (name, affiliation, token_hash, created_at) VALUES "
                           "(:n, '', :h, '2026-01-01 00:00:00')"), {"n": name, "h": f"{i:064d}"})
        c.execute(text("INSERT INTO tasks (name, subtask, columns, rank_by, n_dialogues, public_ids, "
                       "public_fraction, seed, daily_limit, total_limit, created_at, gold_name, gold_sha256) VALUES "
                       "('old', 'quality', '[]', 'quality.nmd.A', 2, '[\"d1\"]', 0.5, 0, 5, 50, "
                       "'2026-01-01 00:00:00', 'g.json', :h)"), {"h": "0" * 64})
    eng.dispose()
    db = Database(db_url)  # upgrades to head
    try:
        with db.read() as s:
            rows = s.query(Team).order_by(Team.id).all()
            task = s.query(Task).one()
        assert [t.name for t in rows] == ["TeamA", "teama", "TeamА"]
        assert rows[0].name_key == "teama" and rows[1].name_key.startswith("teama#")
        assert all(t.approved_at == t.created_at for t in rows)
        assert task.seed == 0 and task.split_secret is None and task.public_ids == ["d1"]
    finally:
        db.dispose()


def test_the_mode_comes_from_the_environment(sqlite_url, monkeypatch):
    monkeypatch.setenv("DIALEVAL_REGISTRATION", "approve")
    s = Settings(database_url=sqlite_url)
    assert s.registration == "approve"
    client = TestClient(create_app(s))
    try:
        r = client.post("/api/teams", json={"name": "from-env"})
        assert r.status_code == 201 and r.json()["approved"] is False
        assert "approve each team" in client.get("/").text
    finally:
        client.close()
        client.app.state.db.dispose()


def test_the_registration_form_sent_again_names_its_team_instead_of_a_taken_name(service):
    """A reload of the page with the one-time token sends the form again: no second team, no "name is taken"."""
    import re

    page = service.client.get("/").text
    form = re.search(r'name="form_nonce" value="([^"]+)"', page).group(1)
    data = {"name": "Reload Team", "csrf": service.client.cookies.get("dialeval_csrf"), "form_nonce": form}
    first = service.client.post("/register", data=data)
    assert first.status_code == 201 and 'id="token"' in first.text
    again = service.client.post("/register", data=data)
    assert again.status_code == 200 and 'id="repeated"' in again.text and "Reload Team" in again.text
    assert 'id="token"' not in again.text and "dt_" not in again.text and "is taken" not in again.text
    other = {**data, "form_nonce": re.search(r'name="form_nonce" value="([^"]+)"',
                                             service.client.get("/").text).group(1)}
    assert service.client.post("/register", data=other).status_code == 409  # a new form: the name is taken


def test_a_form_value_the_page_did_not_make_is_refused_never_a_500(service_any):
    """A NUL in the form value (PostgreSQL refuses it in a query) or any other character: a 422 page."""
    s = service_any
    s.client.get("/")
    csrf_token = s.client.cookies.get("dialeval_csrf")
    for bad in ("\x00", "a b", "é", "x" * 65):
        r = s.client.post("/register", data={"name": "Bad Nonce", "csrf": csrf_token, "form_nonce": bad})
        assert r.status_code == 422 and 'role="alert"' in r.text, repr(bad)
        r = s.client.post("/tasks/t1/submit", data={"token": s.team(f"t{len(bad)}{ord(bad[0])}"), "form_nonce": bad},
                          files={"file": ("run.json", b"[]", "application/json")})
        assert r.status_code == 422 and 'role="alert"' in r.text, repr(bad)


@pytest.mark.parametrize("mode", ["open", "approve"])
def test_an_invitation_code_where_none_counts_is_refused_not_ignored(sqlite_url, mode):
    """A team that registers with a code on a server that takes none (``approve``: it would wait for approval
    unaware that its code did nothing) is told so (422); without a code it registers as before."""
    s = in_mode(sqlite_url, mode)
    try:
        r = s.client.post("/api/teams", json={"name": "coded", "invite": "dti_something"})
        assert r.status_code == 422 and "without invitation codes" in r.text and mode in r.text, r.text
        if mode == "approve":
            assert "approve each team" in r.text
        assert register(s, "plain").status_code == 201
    finally:
        s.close()
