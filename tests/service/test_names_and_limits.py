"""A hostile user's probe: invisible characters in names (default-ignorable code points, blank symbols), the
registration rate limit counted per IPv6 /64, a ``file`` part sent as a plain field, and a submission with a bad
token and a bad body (401, not 422)."""

from __future__ import annotations

import unicodedata
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from service_support import Service, at_once, register_by_page

from dialeval.service import ratelimit
from dialeval.service.db import Team
from dialeval.service.errors import Invalid
from dialeval.service.names import (
    DEFAULT_IGNORABLE,
    invisible,
    mark_problem,
    name_key,
    name_problem,
    skeleton,
    visible,
)

# ---- 1. invisible characters in names -----------------------------------------------------------

IMPERSONATIONS = ["Vic2989\u3164", "Vic2989\ufe0f", "Vic2989\u034f", "Vic2989\u2800", "Vic2989\u115f",
                  "\u3164Vic2989", "Vic\u034f2989", "Vic2989 \u3164", "Vic2989\U000e0100", "Vic2989\uffa0",
                  "Vic2989\u17b4", "Vic2989\u180b", "Vic2989\U0001d173", "Vic2989\U0001d159"]
"""``Vic2989`` with a character drawn as nothing or as blank space: each was registered (201) beside it."""


def _register(s: Service, name: str):
    s.clock.t += timedelta(hours=1)  # past the rate limit of the earlier attempts
    return s.client.post("/api/teams", json={"name": name})


def test_every_default_ignorable_code_point_is_invisible():
    ranges = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]  # DerivedCoreProperties.txt, written out again
    assert list(DEFAULT_IGNORABLE) == ranges
    for first, last in ranges:
        for cp in (first, last, (first + last) // 2):
            assert invisible(chr(cp)) and name_problem("a" + chr(cp)), hex(cp)
        for cp in (first - 1, last + 1):
            if not any(f <= cp <= t for f, t in ranges):
                assert not invisible(chr(cp)), hex(cp)
    for c in "aZ09 -.'_\u0301\u3131\uac00\u1100\u2801":  # letters, marks, Hangul, a braille dot: visible
        assert not invisible(c), hex(ord(c))


def test_names_with_invisible_characters_are_refused_naming_the_character(service):
    assert service.team("Vic2989")
    for name in IMPERSONATIONS:
        r = _register(service, name)
        assert r.status_code == 422, (name, r.status_code, r.text)
        c = next(c for c in name if invisible(c))
        assert f"U+{ord(c):04X} ({unicodedata.name(c)})" in r.json()["detail"], r.text
        page = register_by_page(service.client, {"name": name})
        assert page.status_code == 422, name
    r = _register(service, "Vic 2989 한국어 Ünïcode")  # real letters of other scripts pass
    assert r.status_code == 201, r.text


def test_a_form_name_of_bytes_that_are_not_utf8_is_refused(service):
    """name=%ff%fe registered a team named U+FFFD U+FFFD (a browser probe)."""
    service.client.get("/")
    r = service.client.post("/register", content=b"name=%ff%fe&csrf=" + service.client.cookies.get("dialeval_csrf")
                            .encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 422 and "U+FFFD (REPLACEMENT CHARACTER)" in r.text, r.text


@pytest.mark.parametrize("name", IMPERSONATIONS)
def test_an_invisible_character_does_not_change_the_look_alike_key(name):
    assert skeleton(name) == skeleton("vic2989")


def test_visible_drops_invisible_characters_and_spaces_they_leave():
    assert visible("Vic2989 \u3164") == visible("\u3164 Vic2989\u2800") == "Vic2989"
    assert visible("Team A") == "Team A"


def test_a_stored_name_with_an_invisible_character_meets_its_look_alike(service):
    """A team stored before invisible characters were refused still blocks the name it imitates (409)."""
    old = "Vic2989\u3164"
    with service.db.write() as s:
        s.add(Team(name=old, name_key=name_key(old), name_skeleton=skeleton(old), affiliation="",
                   token_hash="x" * 64, created_at=service.clock(), approved_at=service.clock()))
    r = _register(service, "Vic2989")
    assert r.status_code == 409 and "looks like" in r.json()["detail"], r.text


def test_other_callers_of_the_name_check_refuse_invisible_characters(service):
    """Affiliations and invitation labels (teams.clean_text), and chat participants' nicknames (which use
    mark_problem alone)."""
    from dialeval.service.collection.sessions import check_person_name

    r = service.client.post("/api/teams", json={"name": "ok team", "affiliation": "Lab\u3164"})
    assert r.status_code == 422 and "U+3164" in r.json()["detail"], r.text
    for nick in ("Vic\u3164", "Vic\ufe0f", "Vic\u034f", "\u115fVic", "Vic\u2800"):
        with pytest.raises(Invalid, match=r"nickname .*invisible character U\+"):
            check_person_name(nick)
        assert mark_problem(nick) is not None and "\\u" in mark_problem(nick).split(" contains")[0]  # escaped
    assert check_person_name("Zoë Nguyễn") == "Zoë Nguyễn"


# ---- 2. the rate limit per IPv6 /64 -------------------------------------------------------------

@pytest.mark.parametrize("client, key", [
    ("192.0.2.7", "192.0.2.7"),
    ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("::ffff:192.0.2.7", "192.0.2.7"),
    ("fe80::1%eth0", "fe80::/64"),
    ("testclient", "testclient"),
    (None, "unknown"),
    ("x" * 100, "x" * 64),
])
def test_client_key(client, key):
    assert ratelimit.client_key(client) == key


def test_one_ipv6_64_shares_one_rate_limit(sqlite_url):
    s = Service(sqlite_url)
    clients = [TestClient(s.app, client=(f"2001:db8:1:2::{i:x}", 50000)) for i in range(ratelimit.REGISTRATIONS + 1)]
    other = TestClient(s.app, client=("2001:db8:1:3::1", 50000))
    mapped = TestClient(s.app, client=("::ffff:192.0.2.7", 50000))
    try:
        for i, c in enumerate(clients[:-1]):
            assert c.post("/api/teams", json={"name": f"team {i}"}).status_code == 201
        r = clients[-1].post("/api/teams", json={"name": "one too many"})
        assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0, r.text
        assert ratelimit.attempts(s.db, "2001:db8:1:2::abcd") == ratelimit.REGISTRATIONS
        assert other.post("/api/teams", json={"name": "next network"}).status_code == 201
        assert mapped.post("/api/teams", json={"name": "mapped"}).status_code == 201
        assert ratelimit.attempts(s.db, "192.0.2.7") == 1
    finally:
        for c in [*clients, other, mapped]:
            c.close()
        s.close()


# ---- 3. a 'file' part without a filename --------------------------------------------------------

def test_a_file_part_without_a_filename_is_told_to_send_a_file(service):
    token = service.team()
    auth = {"Authorization": f"Bearer {token}"}
    for sent in ({"files": {"file": (None, b"[]")}}, {"data": {"file": "[]"}}):
        r = service.client.post("/api/tasks/t1/submissions", headers=auth, **sent)
        assert r.status_code == 422, r.text
        [item] = r.json()["detail"]
        assert item["loc"] == ["body", "file"], item
        message = item["msg"]
        assert "'file' part was sent as a plain form field (2 characters, no filename)" in message, message
        assert "curl -F 'file=@run.json'" in message and "<class" not in message and "UploadFile" not in message
    r = service.client.post("/tasks/t1/submit", files={"file": (None, b"[]")}, data={"token": token})
    assert r.status_code == 422 and "the form was not sent as this page sends it (field file)" in r.text
    assert service.submit(token).status_code == 201  # a file upload still scores


def test_a_gold_part_without_a_filename_is_told_to_send_a_file(service):
    from dialeval.service import teams

    admin = teams.create_admin_token(service.db, service.clock())
    r = service.client.post("/api/admin/tasks", headers={"Authorization": f"Bearer {admin}"},
                            files={"gold": (None, b"[]")}, data={"name": "t2", "subtask": "quality"})
    assert r.status_code == 422 and "curl -F 'gold=@gold.json'" in r.json()["detail"][0]["msg"], r.text


# ---- 4. the token before the body ---------------------------------------------------------------

BAD_BODIES = {
    "no body": {},
    "no file part": {"data": {"leaderboard": "maybe"}},
    "a plain file field": {"files": {"file": (None, b"[]")}},
    "two file parts": {"files": [("file", ("a.json", b"[]")), ("file", ("b.json", b"[]"))]},
    "JSON": {"json": {"file": 1}},
    "a run": {"files": {"file": ("run.json", b"[]", "application/json")}},
}


@pytest.mark.parametrize("what", sorted(BAD_BODIES))
@pytest.mark.parametrize("token", [None, "not-a-token", "dtt_" + "x" * 40])
def test_a_submission_without_a_valid_token_is_401_whatever_the_body(service, what, token):
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    r = service.client.post("/api/tasks/t1/submissions", headers=headers, **BAD_BODIES[what])
    assert r.status_code == 401, (what, r.status_code, r.text)
    assert r.headers["WWW-Authenticate"] == "Bearer"
    r = service.client.post("/api/tasks/no-such-task/submissions", headers=headers, **BAD_BODIES[what])
    assert r.status_code == 401, (what, r.status_code, r.text)


def test_a_valid_token_still_gets_the_body_checked(service):
    auth = {"Authorization": f"Bearer {service.team()}"}
    r = service.client.post("/api/tasks/t1/submissions", headers=auth, data={"leaderboard": "true"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "file"], r.text
    r = service.client.post("/api/tasks/t1/submissions", headers=auth, files={"file": ("r.json", b"[]")},
                            data={"leaderboard": "maybe"})
    assert r.status_code == 422, r.text


@pytest.mark.parametrize("attempt", range(3))
def test_look_alike_names_registered_at_once_make_one_team(service_any, attempt):
    """Two look-alikes of one name registered at the same moment were both created on PostgreSQL (the look-alike
    key has no unique index; the check was a plain read). Found by a race probe: 10 of 10 trials."""
    from dialeval.service import teams

    s = service_any
    names = ["Popeabcdape", "P\u043e\u0440\u0435abcd\u0430\u0440e", "Popeabcdap\u0435", "P\u043epeabcdape"]
    out = at_once([lambda n=n: teams.register_team(s.db, n, "", s.clock()) for n in names])
    made = [r for r in out if isinstance(r, tuple)]
    assert len(made) == 1, out
    assert all(isinstance(r, teams.Conflict) for r in out if not isinstance(r, tuple)), out


def test_one_form_sent_twice_at_once_registers_one_team_and_names_it_both_times(service_any):
    """A double click on the registration form answered "the name is taken" to the second post (often the page
    the browser shows), so the token shown once in the first answer was never seen."""
    from dialeval.service import teams

    s = service_any
    out = at_once([lambda: teams.register_team(s.db, "twice", "", s.clock(), form_nonce="n" * 32)] * 3)
    assert all(isinstance(r, tuple) for r in out), out
    assert len({r[0].id for r in out}) == 1
    assert sorted(r[1] is None for r in out) == [False, True, True]   # the token once, the team every time
