"""The organiser API (``/api/admin/...``) checks the token first: a request without an organiser token is a 401
whatever its body holds (FastAPI would answer a bad body with 422 before the route's code could say 401, and so
tell anyone what the route takes)."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute
from service_support import Service

from dialeval.service import teams

PARAMS = {"task": "t1", "name": "p1"}
ADMIN_ROUTES = {("GET", "/api/admin/teams"), ("POST", "/api/admin/teams/approve"), ("POST", "/api/admin/invitations"),
                ("POST", "/api/admin/tasks"), ("POST", "/api/admin/tasks/{task}/close"),
                ("GET", "/api/admin/annotation/{name}/status"), ("POST", "/api/admin/annotation/{name}/exclude")}
"""Every organiser route (written out: a new one must be added here, and is then checked below)."""

BAD_BODIES = {
    "malformed JSON": (b'{"count": ', "application/json"),
    "JSON of the wrong shape": (b'{"count": 100000000, "annotator": ["x"], "name": null}', "application/json"),
    "a JSON array": (b"[1, 2, 3]", "application/json"),
    "a form out of range": (b"count=0&name=" + b"x" * 500 + b"&public_fraction=7", "application/x-www-form-urlencoded"),
    "a broken multipart body": (b"--b\r\nContent-Disposition: form-data; name=\"gold\"\r\n\r\nno end",
                                "multipart/form-data; boundary=b"),
    "a multipart body without a file": (b'--b\r\nContent-Disposition: form-data; name="count"\r\n\r\n-5\r\n--b--\r\n',
                                        "multipart/form-data; boundary=b"),
    "no body": (b"", ""),
}


def _routes(routes, prefix: str = "") -> list[tuple[str, str, APIRoute]]:
    out = []
    for route in routes:
        if hasattr(route, "original_router"):  # an included router
            out += _routes(route.original_router.routes, prefix + route.include_context.prefix)
        elif isinstance(route, APIRoute):
            out += [(m, prefix + route.path, route) for m in sorted(route.methods) if m != "HEAD"]
    return out


@pytest.fixture
def admin_service(sqlite_url):
    s = Service(sqlite_url)
    yield s
    s.close()


def test_every_admin_route_is_an_admin_route(admin_service):
    from dialeval.service.bearer import AdminRoute

    found = {(m, p): r for m, p, r in _routes(admin_service.app.routes) if p.startswith("/api/admin")}
    assert set(found) == ADMIN_ROUTES
    for (m, p), route in found.items():
        assert isinstance(route, AdminRoute), (m, p, type(route))


@pytest.mark.parametrize("method, path", sorted(ADMIN_ROUTES))
def test_a_bad_token_is_a_401_whatever_the_body(admin_service, method, path):
    s = admin_service
    team_token = s.team()
    url = re.sub(r"\{(\w+)\}", lambda m: PARAMS[m.group(1)], path)
    for auth in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": f"Bearer {team_token}"},
                 {"Authorization": "Basic dXNlcjpwYXNz"}):
        for what, (body, content_type) in BAD_BODIES.items():
            headers = {**auth, **({"Content-Type": content_type} if content_type else {})}
            r = s.client.request(method, url, content=body, headers=headers)
            assert r.status_code == 401, (method, url, auth, what, r.status_code, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["detail"] in ("no token; send an organiser token as 'Authorization: Bearer TOKEN'",
                                          "the token is not an organiser token")


def test_with_the_organiser_token_the_body_is_still_validated(admin_service):
    """Authentication first does not let a bad body through: with the token, the same bodies are refused
    (422, or 400 for a body that cannot be parsed) as before, and good ones work."""
    s = admin_service
    token = teams.create_admin_token(s.db, s.clock())
    auth = {"Authorization": f"Bearer {token}"}
    r = s.client.post("/api/admin/invitations", data={"count": "0"}, headers=auth)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "count"], r.text
    r = s.client.post("/api/admin/invitations", data={"count": "2"}, headers=auth)
    assert r.status_code == 201 and len(r.json()["codes"]) == 2
    r = s.client.post("/api/admin/annotation/p1/exclude", content=b'{"annotator": ', headers={
        **auth, "Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid", r.text
    r = s.client.post("/api/admin/tasks", data={"name": "t2"}, headers=auth)
    assert r.status_code == 422, r.text
    assert s.client.get("/api/admin/teams", headers=auth).status_code == 200
    r = s.client.post("/api/admin/tasks/t1/close", headers=auth)
    assert r.status_code == 200 and r.json()["name"] == "t1", r.text
