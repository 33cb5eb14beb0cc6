"""Human-human collection: pairing as people arrive (exact under concurrency, on SQLite and PostgreSQL, also
across two worker processes), a waiting person who left is not paired, and the chat over the WebSocket
(Starlette's TestClient)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from collection_support import Chats, until
from service_support import at_once, free_port
from sqlalchemy import select

from dialeval.service.collection.tables import ChatSession
from dialeval.service.db import Database


def test_pairing_is_exact_under_concurrency(ch):
    codes = ch.collection("hh", None, n_codes=21, human_human=True)
    got = {code: state["id"] for code, state in ch.start_all(codes, "hh").items()}
    with ch.db.read() as s:
        rows = s.scalars(select(ChatSession)).all()
    active = [r for r in rows if r.status == "active"]
    waiting = [r for r in rows if r.status == "waiting"]
    assert len(active) == 10 and len(waiting) == 1 and len(rows) == 11
    people = [p for r in active for p in (r.user1_invitation_id, r.user2_invitation_id)]
    people.append(waiting[0].user1_invitation_id)
    assert len(set(people)) == 21 and all(r.user1_invitation_id != r.user2_invitation_id for r in active)
    assert sorted(r.number for r in active) == list(range(10))
    # Each person's answer named the session they are in.
    assert sorted(got.values()).count(waiting[0].id) == 1


def test_a_waiting_person_who_left_is_not_paired(ch):
    a, b, c = ch.collection("hh", None, n_codes=3, human_human=True)
    s_a = ch.start(a, "", "hh").json()
    ch.tick(31)  # a's page stopped calling: a is gone
    s_b = ch.start(b, "", "hh").json()
    assert s_b["status"] == "waiting" and s_b["id"] != s_a["id"]
    assert ch.call("GET", f"/api/collections/hh/sessions/{s_a['id']}", a).json()["status"] == "abandoned"
    s_c = ch.start(c, "", "hh").json()
    assert s_c["id"] == s_b["id"] and s_c["status"] == "active"


def test_chat_over_the_websocket(ch):
    u1, u2, other = ch.collection("hh", None, n_codes=3, human_human=True)
    [c1_code] = ch.collection("c1", "builtin:echo", n_codes=1)
    path = "/api/collections/hh/ws"
    with ch.client.websocket_connect(path) as bad:
        bad.send_json({"type": "auth", "code": c1_code})
        m = bad.receive_json()
        assert m["type"] == "error" and m["status"] == 401
    with ch.client.websocket_connect(path) as w1:
        w1.send_json({"type": "auth", "code": u1, "name": "Ann"})
        s = until(w1, "state")["session"]
        assert s["status"] == "waiting" and s["you"] == "USER1"
        with ch.client.websocket_connect(path, headers={"Authorization": f"Bearer {u2}"}) as w2:
            s2 = until(w2, "state")["session"]
            assert s2["status"] == "active" and s2["you"] == "USER2" and s2["dialogue_id"] == "human00000"
            assert s2["next"] == "USER1"
            s1 = until(w1, "state", lambda m: m["session"]["status"] == "active")["session"]
            assert s1["id"] == s2["id"] and s1["next"] == "USER1"
            w2.send_json({"type": "turn", "utterance": "me first?"})
            assert "not your turn" in until(w2, "error")["detail"]
            w1.send_json({"type": "turn", "utterance": "<script>alert(1)</script> hi"})
            for w in (w1, w2):
                t = until(w, "turn")["turn"]
                assert (t["position"], t["speaker"], t["utterance"]) == (1, "USER1", "<script>alert(1)</script> hi")
            w2.send_json({"type": "turn", "utterance": "hello"})
            for w in (w1, w2):
                assert until(w, "turn")["turn"]["speaker"] == "USER2"
            # The JSON API sees the same chat (and refuses the third person).
            assert ch.call("GET", f"/api/collections/hh/sessions/{s1['id']}", other).status_code == 404
            got = ch.call("GET", f"/api/collections/hh/sessions/{s1['id']}", u1).json()
            assert [t["utterance"] for t in got["turns"]] == ["<script>alert(1)</script> hi", "hello"]
            w2.send_json({"type": "end"})
            for w in (w1, w2):
                s = until(w, "state", lambda m: m["session"]["status"] == "ended")["session"]
                assert s["end_reason"] == "ended by USER2"


def test_pairing_is_exact_across_worker_processes(db_url):
    """`dialeval serve --workers 2`: people arriving at once on two processes are paired exactly once."""
    ch = Chats(db_url)
    try:
        codes = ch.collection("hh", None, n_codes=20, human_human=True)
    finally:
        ch.close()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "dialeval", "serve", "--database-url", db_url, "--port", str(port),
                             "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/api/tasks", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the server did not start"
            time.sleep(0.2)
        def go(code: str) -> int:
            return httpx.post(f"{base}/api/collections/hh/sessions", json={"name": ""}, timeout=30,
                              headers={"Authorization": f"Bearer {code}"}).status_code

        statuses = at_once([lambda c=c: go(c) for c in codes])
    finally:
        proc.terminate()
        proc.wait(30)
    assert set(statuses) == {201} and len(statuses) == 20
    db = Database(db_url)
    try:
        with db.read() as s:
            rows = s.scalars(select(ChatSession)).all()
    finally:
        db.dispose()
    assert sorted(r.status for r in rows) == ["active"] * 10
    people = [p for r in rows for p in (r.user1_invitation_id, r.user2_invitation_id)]
    assert len(set(people)) == 20 and sorted(r.number for r in rows) == list(range(10))


def test_websocket_refusals(ch):
    [u1] = ch.collection("hh", None, n_codes=1, human_human=True)
    [m1] = ch.collection("m1", "builtin:echo", n_codes=1)
    from starlette.websockets import WebSocketDisconnect

    # A name no collection can have (NUL: PostgreSQL refuses it in a query) is a 404, never a 500.
    assert ch.client.get("/collections/a%00b").status_code == 404
    assert ch.client.post("/collections/a%00b/join", data={"code": "x"}).status_code == 404
    with ch.client.websocket_connect("/api/collections/m1/ws") as w:  # an engine's collection talks over HTTP
        w.send_json({"type": "auth", "code": m1})
        m = w.receive_json()
        assert m["type"] == "error" and m["status"] == 422 and "the WebSocket is for human-human" in m["detail"]

    for first in ("not json", '{"type": "turn", "utterance": "hi"}', "[1, 2]", "[" * 8_000 + "]" * 8_000):
        with ch.client.websocket_connect("/api/collections/hh/ws") as w:
            w.send_text(first)
            with pytest.raises(WebSocketDisconnect) as e:
                w.receive_json()
            assert e.value.code == 4401
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:
        w.send_json({"type": "auth", "code": u1, "name": "<script>"})
        m = w.receive_json()
        assert m["type"] == "error" and m["status"] == 422 and "nickname" in m["detail"]
    # A value that is not text is not echoed in full; a long refusal still closes with a proper close frame
    # (its reason cut to the frame's 123 bytes, never half a character).
    for name, cut in ((["a" * 10_000], "is not text"), ("日本" * 30, "nickname")):
        with ch.client.websocket_connect("/api/collections/hh/ws") as w:
            w.send_json({"type": "auth", "code": u1, "name": name})
            m = w.receive_json()
            assert m["status"] == 422 and len(m["detail"]) < 2000 and cut in m["detail"]
            with pytest.raises(WebSocketDisconnect) as e:
                w.receive_json()
            assert e.value.code == 4422 and 0 < len(e.value.reason.encode()) <= 123
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:
        w.send_json({"type": "auth", "code": u1})
        assert until(w, "state")["session"]["status"] == "waiting"
        for bad in ({"type": "turn", "utterance": "too early"}, {"type": "nope"}, {"type": "turn", "utterance": 5}):
            w.send_json(bad)
            assert until(w, "error")["status"] in (409, 422)
    # A binary frame is answered as a message that is not JSON, and the chat goes on.
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:
        w.send_json({"type": "auth", "code": u1})
        assert until(w, "state")["session"]["status"] == "waiting"
        w.send_bytes(b"\x00binary")
        assert until(w, "error")["detail"].startswith("received a binary frame, not a text message holding a JSON")
    # Closing the page while waiting gives the place up.
    for _ in range(40):
        with ch.db.read() as s:
            statuses = [r.status for r in s.scalars(select(ChatSession))]
        if statuses == ["abandoned"] * 2:
            break
        time.sleep(0.05)
    assert statuses == ["abandoned"] * 2  # each page closed while waiting: its place given up


def test_websocket_messages_are_bounded_in_size_and_rate(ch):
    """A message larger than WS_MAX_BYTES closes the socket unparsed (1009), before or after auth; more than
    WS_RATE's messages a second close it (1008): no client fills the server's memory or its event loop."""
    from starlette.websockets import WebSocketDisconnect

    from dialeval.service.collection.routes import WS_MAX_BYTES, WS_RATE

    [u1, u2] = ch.collection("hh", None, n_codes=2, human_human=True)
    big = '{"type": "ping", "pad": "' + "x" * WS_MAX_BYTES + '"}'
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:  # an outsider, no code yet
        w.send_text(big)
        with pytest.raises(WebSocketDisconnect) as e:
            w.receive_json()
        assert e.value.code == 1009
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:
        w.send_json({"type": "auth", "code": u1})
        assert until(w, "state")["session"]["status"] == "waiting"
        w.send_text(big)
        with pytest.raises(WebSocketDisconnect) as e:
            for _ in range(50):
                w.receive_json()
        assert e.value.code == 1009
    with ch.client.websocket_connect("/api/collections/hh/ws") as w:
        w.send_json({"type": "auth", "code": u2})
        assert until(w, "state")["session"]["status"] == "waiting"
        for _ in range(WS_RATE[0] + 5):
            w.send_json({"type": "ping"})
        with pytest.raises(WebSocketDisconnect) as e:
            for _ in range(100):
                w.receive_json()
        assert e.value.code == 1008


def test_a_reconnected_socket_says_who_is_who_before_the_turns(ch):
    """After a reload (a new socket), the first message is the state (``you``), then the stored turns: the
    page labels the participant's own turns as theirs. A turn sent with a position already taken is refused
    (409) and not stored."""
    u1, u2 = ch.collection("hh", None, n_codes=2, human_human=True)
    path = "/api/collections/hh/ws"
    with ch.client.websocket_connect(path) as w1:
        w1.send_json({"type": "auth", "code": u1})
        until(w1, "state")
        with ch.client.websocket_connect(path) as w2:
            w2.send_json({"type": "auth", "code": u2})
            until(w1, "state", lambda m: m["session"]["status"] == "active")
            w1.send_json({"type": "turn", "utterance": "mine", "position": 1})
            assert until(w2, "turn")["turn"]["speaker"] == "USER1"
            w2.send_json({"type": "turn", "utterance": "yours", "position": 2})
            until(w1, "turn", lambda m: m["turn"]["position"] == 2)
            with ch.client.websocket_connect(path) as again:  # USER1 reloads the page
                again.send_json({"type": "auth", "code": u1})
                first = again.receive_json()
                assert first["type"] == "state" and first["session"]["you"] == "USER1", first
                assert [again.receive_json()["turn"]["position"] for _ in range(2)] == [1, 2]
                again.send_json({"type": "turn", "utterance": "mine", "position": 1})
                e = until(again, "error")
                assert e["status"] == 409 and "sent as turn 1" in e["detail"]
                again.send_json({"type": "turn", "utterance": "again", "position": True})
                assert until(again, "error")["status"] == 422
    got = ch.call("GET", f"/api/collections/hh/sessions/{first['session']['id']}", u1).json()
    assert [t["utterance"] for t in got["turns"]] == ["mine", "yours"]


def test_a_socket_closed_for_flooding_is_never_written_to_again(ch):
    """A participant floods the socket (more than WS_RATE's messages a second: closed with 1008) while the other
    person's turn arrives: the turn is not sent on the closed socket (that raised in the server: "Cannot call
    send once a close message has been sent"). Only the handler writes to a socket, the close included."""
    from starlette.websockets import WebSocketDisconnect

    from dialeval.service.collection.routes import WS_RATE

    for i in range(6):
        u1, u2 = ch.collection(f"hh{i}", None, n_codes=2, human_human=True)
        path = f"/api/collections/hh{i}/ws"
        with ch.client.websocket_connect(path) as w1, ch.client.websocket_connect(path) as w2:
            w1.send_json({"type": "auth", "code": u1})
            assert until(w1, "state")["session"]["you"] == "USER1"  # the first to come opens the chat
            w2.send_json({"type": "auth", "code": u2})
            until(w1, "state", lambda m: m["session"]["status"] == "active")
            until(w2, "state", lambda m: m["session"]["status"] == "active")
            for _ in range(WS_RATE[0] + 5):
                w2.send_json({"type": "ping"})
            w1.send_json({"type": "turn", "utterance": "hello", "position": 1})
            with pytest.raises(WebSocketDisconnect) as e:
                for _ in range(100):
                    w2.receive_json()
            assert e.value.code == 1008


def test_a_code_that_is_not_text_is_said_to_be_so(ch):
    """``{"type": "auth", "code": 5}`` is refused as a code that is not text, not as no code at all."""
    [u1] = ch.collection("hh", None, n_codes=1, human_human=True)
    for code, said in ((5, "must be text; got 5"), ([u1], "must be text; got ['"), (None, "no invitation code")):
        with ch.client.websocket_connect("/api/collections/hh/ws") as w:
            w.send_json({"type": "auth", "code": code})
            m = w.receive_json()
            assert m["type"] == "error" and m["status"] == 401 and said in m["detail"], m
