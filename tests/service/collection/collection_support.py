"""Helpers of the collection tests and benchmark: an app with a collection and invitation codes."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from service_support import FakeClock, LiveServer, at_once, watch, with_csp

from dialeval.service import invitations
from dialeval.service.app import create_app
from dialeval.service.collection import chats
from dialeval.service.config import Settings
from dialeval.service.db import Database


class Chats:
    """An app on ``url`` (fake clock) and a TestClient; :meth:`collection` creates one with codes."""

    def __init__(self, url: str) -> None:
        from fastapi.testclient import TestClient

        self.clock = FakeClock()
        self.db = Database(url)
        self.app = create_app(Settings(database_url=url, clock=self.clock), self.db)
        self.client = TestClient(self.app)

    def collection(self, name: str = "c1", engine: str | None = "builtin:echo", n_codes: int = 2, **kw) -> list[str]:
        chats.create_collection(self.db, name, engine, self.clock(), **kw)
        return invitations.create_invitations(self.db, "collection", name, n_codes, self.clock())

    def tick(self, seconds: float = 1.0) -> None:
        self.clock.t += timedelta(seconds=seconds)

    def call(self, method: str, path: str, code: str | None, json: dict | None = None):
        headers = {"Authorization": f"Bearer {code}"} if code else {}
        return self.client.request(method, path, headers=headers, json=json)

    def start(self, code: str, name: str = "", collection: str = "c1"):
        return self.call("POST", f"/api/collections/{collection}/sessions", code, {"name": name})

    def say(self, code: str, sid: int, text: str, collection: str = "c1"):
        self.tick()
        return self.call("POST", f"/api/collections/{collection}/sessions/{sid}/turns", code, {"utterance": text})

    def end(self, code: str, sid: int, collection: str = "c1"):
        self.tick()
        return self.call("POST", f"/api/collections/{collection}/sessions/{sid}/end", code)

    def start_all(self, codes: list[str], collection: str = "c1") -> dict[str, dict]:
        """Start a chat for every code at once (one thread each); each code's answer (all must be 201)."""
        got: dict[str, dict] = {}

        def go(code: str) -> dict:
            r = self.start(code, "", collection)
            return r.json() if r.status_code == 201 else {"error": r.status_code, "text": r.text}

        got = dict(zip(codes, at_once([lambda c=c: go(c) for c in codes]), strict=True))
        bad = [v for v in got.values() if "error" in v]
        assert not bad and len(got) == len(codes), bad
        return got

    def close(self) -> None:
        self.client.close()
        self.db.dispose()


def until(ws, kind: str, pred=lambda m: True) -> dict:
    """The first message of type ``kind`` (and ``pred``) a WebSocket receives within 50 messages."""
    for _ in range(50):
        m = ws.receive_json()
        if m["type"] == kind and pred(m):
            return m
    raise AssertionError(f"no {kind} message")


def said(ch) -> list[str]:
    """The participants' stored turns (not the system's), in order: by chat, then position."""
    from sqlalchemy import select

    from dialeval.service.collection.tables import ChatTurn

    with ch.db.read() as s:
        return list(s.scalars(select(ChatTurn.utterance).where(ChatTurn.speaker != "SYSTEM")
                              .order_by(ChatTurn.session_id, ChatTurn.position)))


def expected_noise(problems: list[str]) -> list[str]:
    """A page's console problems but the failed requests a test causes on purpose (a dropped answer, a 409)."""
    return [p for p in problems if "Failed to load resource" not in p]


def join_chat(page, url: str, code: str, nickname: str) -> None:
    """Join collection c1's chat page at ``url`` with ``code`` as ``nickname`` (the chat shows). A browser that
    joined before (and did not leave) is sent on to its chat page by the join page itself, as the invitation's
    link opened again is."""
    page.goto(f"{url}/collections/c1")
    if page.url.endswith("/collections/c1/join"):
        page.wait_for_selector("#chat")
        return
    page.fill("input[name=code]", code)
    page.fill("input[name=nickname]", nickname)
    page.click("#join-form button[type=submit]")
    page.wait_for_selector("#chat")


@contextlib.contextmanager
def echo_chat(sqlite_url, browser, prepare=None, *, ready: str = "#utterance:enabled", **collection):
    """A participant (Ann) joined in the browser to a chat of collection c1 (the builtin echo engine;
    ``collection``: more options of :meth:`Chats.collection`, e.g. ``engine_name``), the page ready (``ready``
    enabled): ``(ch, page, problems)``. ``prepare(ch, code)`` runs before the page opens."""
    ch = Chats(sqlite_url)
    try:
        [code] = ch.collection("c1", "builtin:echo", n_codes=1, **collection)
        if prepare is not None:
            prepare(ch, code)
        with_csp(ch.app)
        with LiveServer(ch.app) as server:
            page = browser.new_page()
            problems = watch(page)
            join_chat(page, server.url, code, "Ann")
            page.wait_for_selector(ready)
            yield ch, page, problems
    finally:
        ch.close()
