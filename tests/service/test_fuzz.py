"""Property-based (hypothesis): hostile bodies, names and file names never give a 5xx and never use quota.

Drives the upload (API and page), registration (API and page) and admin endpoints through FastAPI's
TestClient on SQLite with: runs mutated at any place by any JSON value (huge integers, 1e308, NaN and
Infinity literals, lone surrogates, control and bidi characters, deep nesting), raw bytes, multipart
bodies built by hand (raw bytes in file names and fields, NUL included, several ``file`` parts).
The specific findings run on PostgreSQL too in leaderboard/test_attack.py.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_support import GOLD, RUN, Service, dumps

from dialeval.service import teams
from dialeval.service.app import create_app
from dialeval.service.config import Settings
from dialeval.service.leaderboard.tables import Task

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
BOUNDARY = "fuzzb0undary"

# Any code point, surrogates and controls included (JSON escapes them; the service must cope).
hostile_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
hostile_text = st.one_of(
    st.text(hostile_char, max_size=30),
    st.sampled_from(["\ud800", "\udfff", "a\x00b", "TeamA\u200b", "\u202eTeamA", "TeamА", "", " ", "x" * 5000,
                     "../../etc/passwd", "<script>alert(1)</script>", "None", "NaN", "1e308"]),
)
numbers = st.one_of(st.integers(min_value=-(10**400), max_value=10**400), st.floats(),
                    st.sampled_from([1e308, -0.0, 5e-324, 2**63, 2**64 + 1, -(2**63) - 1]))
json_values = st.recursive(st.one_of(st.none(), st.booleans(), numbers, hostile_text),
                           lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(hostile_text, inner, max_size=4)),
                           max_leaves=12)
PLACES = ("id", "quality", "quality.A", "quality.A.2", "quality.X", "nugget", "nugget.0", "nugget.0.CNUG0",
          "record", "extra-record", "top")


@st.composite
def run_bodies(draw) -> bytes:
    """A valid run with one place replaced by a hostile value, as JSON bytes (NaN literals allowed)."""
    kind = draw(st.sampled_from(("mutated", "mutated", "mutated", "raw", "deep", "huge-int")))
    if kind == "raw":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        n = draw(st.integers(1, 200_000))
        return b"[" * n + b"]" * draw(st.integers(0, n))
    if kind == "huge-int":
        return dumps(RUN).replace(b'"2":', b'"2":' + b"9" * draw(st.integers(300, 6000)) + b",\"x\":", 1)
    run = copy.deepcopy(RUN)
    i = draw(st.integers(0, len(run) - 1))
    place = draw(st.sampled_from(PLACES))
    value = draw(json_values)
    rec = run[i]
    if place == "top":
        run = value
    elif place == "record":
        run[i] = value
    elif place == "extra-record":
        run.append(value)
    elif place in ("id", "quality", "nugget"):
        rec[place] = value
    elif place == "quality.A":
        rec["quality"]["A"] = value
    elif place in ("quality.A.2", "quality.X"):
        rec["quality"]["A" if place == "quality.A.2" else "X"] = {"2": value} if place == "quality.X" else \
            {**rec["quality"]["A"], "2": value}
    elif place == "nugget.0":
        rec["nugget"][0] = value
    else:
        rec["nugget"][0] = {**rec["nugget"][0], "CNUG0": value}
    return json.dumps(run, ensure_ascii=draw(st.booleans()), allow_nan=True).encode("utf-8", "surrogatepass")


raw_names = st.one_of(hostile_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=40),
                      st.sampled_from([b"run\x00.json", b"\x00", b"a\r\nContent-Type: text/html", b'"', b"\\"]))


def multipart(parts: list[tuple[str, bytes | None, bytes]]) -> bytes:
    """A multipart body built by hand: (field name, raw file name or None, raw content) per part."""
    out = b""
    for name, filename, content in parts:
        disp = f'form-data; name="{name}"'.encode()
        if filename is not None:
            disp += b'; filename="' + filename + b'"'
        out += f"--{BOUNDARY}\r\n".encode() + b"Content-Disposition: " + disp + b"\r\n\r\n" + content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


def raw(text: str) -> bytes:
    """Text as bytes on the wire, lone surrogates included (what a hostile client can send)."""
    return text.encode("utf-8", "surrogatepass")


MULTIPART = {"content-type": f"multipart/form-data; boundary={BOUNDARY}"}


@pytest.fixture
def fuzz_service(sqlite_url):
    s = Service(sqlite_url)
    s.token = s.team("fuzzers")
    s.admin = teams.create_admin_token(s.db, s.clock())
    s.modes = {m: TestClient(create_app(Settings(database_url=sqlite_url, clock=s.clock, registration=m), s.db))
               for m in teams.MODES}
    yield s
    for c in s.modes.values():
        c.close()
    s.close()


def _used(s: Service) -> int:
    me = s.client.get("/api/me", headers={"Authorization": f"Bearer {s.token}"}).json()
    return 50 - me["quota"]["t1"]["remaining_total"]


@FUZZ
@given(body=run_bodies(), filename=raw_names, extra_file=st.booleans(), page=st.booleans())
def test_uploads_never_5xx_and_never_use_quota(fuzz_service, body, filename, extra_file, page):
    s = fuzz_service
    before = _used(s)
    parts = [("file", filename, body)] + ([("file", b"b.json", dumps(RUN))] if extra_file else [])
    if page:  # the form as the page sends it: its CSRF token (the cookie's) and the team's token
        csrf = s.client.cookies.get("dialeval_csrf") or (s.client.get("/tasks/t1") and s.client.cookies.get(
            "dialeval_csrf"))
        r = s.client.post("/tasks/t1/submit", headers=MULTIPART,
                          content=multipart([("csrf", None, csrf.encode()), ("token", None, s.token.encode()),
                                             *parts]))
    else:
        r = s.client.post("/api/tasks/t1/submissions", content=multipart(parts),
                          headers={**MULTIPART, "Authorization": f"Bearer {s.token}"})
    assert r.status_code < 500, r.text[:500]
    r.text.encode("utf-8")  # the answer is valid UTF-8
    assert _used(s) == before + (1 if r.status_code == 201 else 0)
    if r.status_code != 201:
        assert len(r.content) < 200_000


@FUZZ
@given(name=json_values, affiliation=json_values, invite=json_values, page=st.booleans(),
       mode=st.sampled_from(("open", "invite", "approve")), ascii_only=st.booleans())
def test_registration_never_5xx(fuzz_service, name, affiliation, invite, page, mode, ascii_only):
    s = fuzz_service
    s.clock.t += timedelta(hours=1)  # each example is past the rate limit of the earlier ones
    client = s.modes[mode]
    if page:
        client.get("/")  # the form's page first, as a browser: its CSRF cookie, sent back in the form
        fields = [(k, None, raw(v if isinstance(v, str) else json.dumps(v, allow_nan=True)))
                  for k, v in (("name", name), ("affiliation", affiliation), ("invite", invite),
                               ("csrf", client.cookies.get("dialeval_csrf")))]
        r = client.post("/register", content=multipart(fields), headers=MULTIPART)
    else:
        body = json.dumps({"name": name, "affiliation": affiliation, "invite": invite}, ensure_ascii=ascii_only,
                          allow_nan=True).encode("utf-8", "surrogatepass")
        r = client.post("/api/teams", content=body, headers={"content-type": "application/json"})
    assert r.status_code < 500, r.text[:500]
    r.text.encode("utf-8")
    assert len(r.content) < 200_000


admin_values = st.one_of(st.integers(min_value=-(2**80), max_value=2**80).map(str), hostile_text,
                         st.sampled_from(["nan", "inf", "-1", "0", "1e400", "0.5", "quality", "nugget"]))


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["name", "subtask", "public_fraction", "seed", "daily_limit",
                                               "total_limit"]), admin_values),
       gold=st.one_of(st.just(dumps(GOLD)), run_bodies()), gold_name=raw_names,
       count=admin_values, approve=hostile_text)
def test_admin_endpoints_never_5xx(fuzz_service, fields, gold, gold_name, count, approve):
    s = fuzz_service
    auth = {"Authorization": f"Bearer {s.admin}"}
    base = {"name": "fz", "subtask": "quality"} | fields
    parts = [(k, None, v.encode("utf-8", "surrogatepass")) for k, v in base.items()] + [("gold", gold_name, gold)]
    r = s.client.post("/api/admin/tasks", content=multipart(parts), headers={**MULTIPART, **auth})
    assert r.status_code < 500, r.text[:500]
    if r.status_code == 201:  # a valid task: close it again, so the next example can reuse the name
        assert s.client.post(f"/api/admin/tasks/{r.json()['name']}/close", headers=auth).status_code == 200
        with s.db.write() as w:
            w.query(Task).filter(Task.name == r.json()["name"]).delete()
    r = s.client.post("/api/admin/invitations", content=multipart([("count", None, raw(count))]),
                      headers={**MULTIPART, **auth})
    assert r.status_code < 500, r.text[:500]
    r = s.client.post("/api/admin/teams/approve", content=multipart([("name", None, raw(approve))]),
                      headers={**MULTIPART, **auth})
    assert r.status_code < 500, r.text[:500]
    r = s.client.get("/api/tasks/t1/leaderboard", params={"by": approve.encode("utf-8", "surrogatepass")
                                                          .decode("utf-8", "replace")[:2000]})
    assert r.status_code < 500, r.text[:500]
