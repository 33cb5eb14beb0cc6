"""Helpers of the service's tests and benchmark: made-up gold and runs (seeded), a test service, a live server.

PostgreSQL: ``$DIALEVAL_TEST_POSTGRES_URL`` or ``postgresql+psycopg://postgres@127.0.0.1:5432/test``; each
user gets a fresh schema (:func:`fresh_schema_url`), dropped afterwards.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import orjson
import pytest
import uvicorn
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS
from dialeval.service.app import create_app
from dialeval.service.config import Settings
from dialeval.service.db import Database
from dialeval.service.leaderboard import tasks


def make_gold(n: int = 20, seed: int = 0, annotators: int = 5, prefix: str = "d") -> list[dict]:
    """``n`` dialogues of 2-5 alternating turns with ``annotators`` random quality and nugget labels each."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        senders = ["customer" if t % 2 == 0 else "helpdesk" for t in range(int(rng.integers(2, 6)))]
        anns = [{"quality": {k: int(rng.integers(-2, 3)) for k in QUALITY_KEYS},
                 "nugget": [str(rng.choice(NUGGET_TYPES[s])) for s in senders]} for _ in range(annotators)]
        out.append({"id": f"{prefix}{i:04d}", "turns": [{"sender": s, "utterances": [f"turn {t}"]}
                                                        for t, s in enumerate(senders)], "annotations": anns})
    return out


def make_run(gold: list[dict], seed: int = 1) -> list[dict]:
    """A run with Dirichlet-random quality and nugget distributions for every dialogue of ``gold``."""
    rng = np.random.default_rng(seed)

    def dist(levels):
        return dict(zip(levels, rng.dirichlet(np.ones(len(levels))).tolist(), strict=True))

    return [{"id": d["id"], "quality": {k: dist(QUALITY_LEVELS) for k in QUALITY_KEYS},
             "nugget": [dist(NUGGET_TYPES[t["sender"]]) for t in d["turns"]]} for d in gold]


def dumps(records: list) -> bytes:
    return orjson.dumps(records)


PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
_pg_state: dict = {}


def pg_base() -> str:
    if "url" not in _pg_state:
        url = os.environ.get("DIALEVAL_TEST_POSTGRES_URL", PG_DEFAULT)
        try:
            eng = create_engine(url, connect_args={"connect_timeout": 3})
            with eng.connect() as c:
                c.execute(text("SELECT 1"))
            eng.dispose()
            _pg_state["url"] = url
        except Exception as e:
            _pg_state["error"] = f"PostgreSQL unreachable at {url}: {type(e).__name__}: {e}"
    if "error" in _pg_state:
        if os.environ.get("CI"):
            pytest.fail(_pg_state["error"] + " (CI is set: the PostgreSQL tests must run)")
        pytest.skip(_pg_state["error"])
    return _pg_state["url"]


def fresh_schema_url(base: str) -> tuple[str, str]:
    schema = f"dialeval_test_{uuid.uuid4().hex[:12]}"
    eng = create_engine(base)
    with eng.begin() as c:
        c.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng.dispose()
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False), schema


def drop_schema(base: str, schema: str) -> None:
    eng = create_engine(base)
    with eng.begin() as c:
        c.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    eng.dispose()


class FakeClock:
    """A settable clock for quotas and deadlines."""

    def __init__(self, t: datetime | None = None) -> None:
        self.t = t or datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t


GOLD = make_gold(20, seed=0)
RUN = make_run(GOLD, seed=1)


class Service:
    """An app on a database with a task "t1" (20 dialogues, 10 public) and helpers to use it."""

    def __init__(self, url: str, *, daily_limit: int = 5, total_limit: int = 50, max_upload_bytes: int = 1 << 20):
        from fastapi.testclient import TestClient

        self.clock = FakeClock()
        self.settings = Settings(database_url=url, max_upload_bytes=max_upload_bytes, clock=self.clock)
        self.db = Database(url)
        self.app = create_app(self.settings, self.db)
        self.client = TestClient(self.app)
        self.gold, self.run = GOLD, RUN
        self.task = tasks.create_task(self.db, "t1", "quality", dumps(GOLD), "gold.json", self.clock(),
                                      public_fraction=0.5, seed=3, daily_limit=daily_limit, total_limit=total_limit)

    def team(self, name: str = "team-a", affiliation: str = "") -> str:
        r = self.client.post("/api/teams", json={"name": name, "affiliation": affiliation})
        assert r.status_code == 201, r.text
        return r.json()["token"]

    def submit(self, token: str, run: list | bytes | None = None, task: str = "t1", filename: str = "run.json",
               **data):
        body = run if isinstance(run, bytes) else dumps(self.run if run is None else run)
        return self.client.post(f"/api/tasks/{task}/submissions", headers={"Authorization": f"Bearer {token}"},
                                files={"file": (filename, body, "application/json")}, data=data)

    def close(self) -> None:
        self.client.close()
        self.db.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """Uvicorn serving an app on a free loopback port in a background thread (stopped by :meth:`stop`)."""

    def __init__(self, app) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # proxy_headers=False as in `dialeval serve`: the app applies its own trusted-proxy rule.
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    proxy_headers=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(15)



CHROMIUM = Path("/usr/bin/chromium")
"""The browser of the browser tests: Debian's Chromium, driven by Playwright."""
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def at_once(calls, timeout: float = 120) -> list:
    """Run the callables in threads released together (a barrier); each one's result, or the exception it
    raised, in the order given."""
    barrier = threading.Barrier(len(calls))
    out: list = [None] * len(calls)

    def run(i: int, call) -> None:
        barrier.wait()
        try:
            out[i] = call()
        except Exception as e:  # returned to the test
            out[i] = e

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), f"a call took longer than {timeout} s"
    return out


def register_by_page(client, data: dict, headers: dict | None = None):
    """POST the registration form as a browser does: its page first (the CSRF cookie), then the form with the
    page's token."""
    client.get("/")
    return client.post("/register", data={**data, "csrf": client.cookies.get("dialeval_csrf")}, headers=headers)


def upload_by_page(client, task: str, data: dict, files, **kw):
    """POST the task page's upload form as a browser does: the page first (the CSRF cookie), then the form with the
    page's token."""
    client.get(f"/tasks/{task}")
    return client.post(f"/tasks/{task}/submit", data={"csrf": client.cookies.get("dialeval_csrf"), **data},
                       files=files, **kw)


def need(what: str, ok: bool) -> None:
    """Skip a browser test when ``what`` is missing (``ok`` false), or fail when ``CI`` is set."""
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing (CI is set: the browser test must run)")
        pytest.skip(f"{what} is missing")


CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
"""The Content-Security-Policy the service sends (written out here, not imported, so a change is noticed)."""


def with_csp(app) -> None:
    """Check that ``app`` sends :data:`CSP` itself (``service/security.py``): the browser tests then check the
    pages work under it."""
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        sent = c.get("/").headers.get("content-security-policy")
    if sent != CSP:
        raise AssertionError(f"the app sends the CSP {sent!r}; the browser tests expect {CSP!r}")


def watch(page) -> list[str]:
    """Collect a page's console errors and warnings (CSP violations among them), uncaught errors and dialogs."""
    problems: list[str] = []

    def console(m) -> None:
        if m.type in ("error", "warning") and not m.location.get("url", "").endswith("/favicon.ico"):
            problems.append(f"{m.text} ({m.location.get('url')})")

    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append("dialog: " + d.message), d.dismiss()))
    return problems


class UnderPrefix:
    """``app`` as a proxy serves it under a path prefix (the ASGI ``root_path``): requests at ``PREFIX/...``
    reach it with ``root_path`` set; any other path is a 404 (so a page that ignores the prefix breaks)."""

    def __init__(self, app, prefix: str = "/dq") -> None:
        self.app, self.prefix = app, prefix

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] in ("http", "websocket"):
            path = scope["path"]
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await send({"type": "http.response.start", "status": 404,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"not under the prefix"})
                return
            scope = {**scope, "root_path": self.prefix}
        await self.app(scope, receive, send)


def links(html: str) -> list[str]:
    """The site paths a page links to, loads or posts to (href, src, action, data-api)."""
    import re

    return sorted(set(re.findall(r'(?:href|src|action|data-api)="(/[^"]*)"', html)))
