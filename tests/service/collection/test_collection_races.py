"""Races of a collection (on SQLite and PostgreSQL): a participant's second WebSocket (a reconnect before the
dead one is noticed) keeps the chat when the old one closes; an export while a chat ends; and the WebSocket's
answers to messages that are not JSON objects and to a missing ``auth``."""

from __future__ import annotations

import threading

import pytest
from collection_support import until
from sqlalchemy import event, select
from starlette.websockets import WebSocketDisconnect

from dialeval.service.collection import chats, routes
from dialeval.service.collection.export import collection_corpus
from dialeval.service.collection.tables import ChatSession

PATH = "/api/collections/hh/ws"


def _connect(ch, code: str):
    """A socket of ``code``'s participant (left open: the caller closes it with ``__exit__``) and its chat."""
    ws = ch.client.websocket_connect(PATH, headers={"Authorization": f"Bearer {code}"})
    ws.__enter__()
    return ws, until(ws, "state")["session"]


def _session(ch, sid: int) -> ChatSession:
    with ch.db.read() as s:
        return s.scalar(select(ChatSession).where(ChatSession.id == sid))


def _partner_here(ch, code: str, sid: int) -> bool:
    return ch.call("GET", f"/api/collections/hh/sessions/{sid}", code).json()["partner_here"]


def test_a_reconnect_keeps_the_waiting_chat(ch):
    u1, u2 = ch.collection("hh", None, n_codes=2, human_human=True)
    old, s = _connect(ch, u1)
    new, s_new = _connect(ch, u1)
    assert s["status"] == s_new["status"] == "waiting" and s_new["id"] == s["id"]
    old.__exit__(None, None, None)  # the dead socket is noticed (its cleanup has run when this returns)
    assert _session(ch, s["id"]).status == "waiting"
    with ch.client.websocket_connect(PATH, headers={"Authorization": f"Bearer {u2}"}) as w2:
        s2 = until(w2, "state")["session"]
        assert s2["status"] == "active" and s2["id"] == s["id"]
        assert until(new, "state", lambda m: m["session"]["status"] == "active")["session"]["id"] == s["id"]
    new.__exit__(None, None, None)


def test_a_reconnect_keeps_the_partner_here(ch):
    u1, u2 = ch.collection("hh", None, n_codes=2, human_human=True)
    w1, s = _connect(ch, u1)
    old, _ = _connect(ch, u2)
    new, s_new = _connect(ch, u2)
    assert s_new["status"] == "active" and s_new["id"] == s["id"]
    old.__exit__(None, None, None)
    sess = _session(ch, s["id"])
    assert sess.status == "active" and sess.seen2_at is not None
    assert _partner_here(ch, u1, s["id"])  # not "the other person seems to have left"
    new.send_json({"type": "turn", "utterance": "out of turn"})  # the new socket still talks for USER2
    assert "not your turn" in until(new, "error")["detail"]
    # The last socket going still marks the person away, as before.
    new.__exit__(None, None, None)
    assert _session(ch, s["id"]).seen2_at is None
    assert not _partner_here(ch, u1, s["id"])
    w1.__exit__(None, None, None)


def test_the_last_socket_going_still_abandons_a_waiting_chat(ch):
    [u1] = ch.collection("hh", None, n_codes=1, human_human=True)
    a, s = _connect(ch, u1)
    b, _ = _connect(ch, u1)
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    sess = _session(ch, s["id"])
    assert (sess.status, sess.end_reason) == ("abandoned", "left before anyone joined")


def test_export_while_a_chat_ends(ch):
    """A chat that ends between the export's reads (PostgreSQL: READ COMMITTED) is left out whole, not a
    KeyError; the next export has it."""
    a, b = ch.collection("c1", "builtin:echo", n_codes=2)
    sa, sb = ch.start(a).json()["id"], ch.start(b).json()["id"]
    for code, sid in ((a, sa), (b, sb)):
        assert ch.say(code, sid, f"hello from {sid}").status_code == 201
    assert ch.end(a, sa).status_code == 200
    c, inv_b = chats.participant(ch.db, "c1", b)
    me, done = threading.get_ident(), []

    def end_b_first(conn, cursor, statement, parameters, context, executemany) -> None:
        if not done and threading.get_ident() == me and "chat_turns" in statement:
            done.append(True)
            t = threading.Thread(target=chats.end_session, args=(ch.db, c, inv_b, sb, ch.clock))
            t.start()
            t.join()

    event.listen(ch.db.engine, "before_cursor_execute", end_b_first)
    try:
        corpus = collection_corpus(ch.db, "c1")
    finally:
        event.remove(ch.db.engine, "before_cursor_execute", end_b_first)
    assert done and _session(ch, sb).status == "ended"
    ids = [d.id for d in corpus]
    assert ids in (["echo00000"], ["echo00000", "echo00001"])  # as of the first read, or of the second
    assert all(len(d.turns) == 2 for d in corpus)
    assert [d.id for d in collection_corpus(ch.db, "c1")] == ["echo00000", "echo00001"]


@pytest.mark.parametrize(("send", "got"), [
    (lambda w: w.send_bytes(b"\x00binary"), "a binary frame"),
    (lambda w: w.send_text("not json"), "text that is not JSON"),
    (lambda w: w.send_text("[1, 2]"), "a JSON array"),
    (lambda w: w.send_text('"turn"'), "a JSON string"),
])
def test_a_message_that_is_not_a_json_object_is_named(ch, send, got):
    [u1] = ch.collection("hh", None, n_codes=1, human_human=True)
    w, _ = _connect(ch, u1)
    send(w)
    m = until(w, "error")
    assert m["status"] == 422 and got in m["detail"] and "not a text message holding a JSON object" in m["detail"]
    assert "turn, end, ping" in m["detail"]
    w.send_json({"type": "pnig"})
    m = until(w, "error")
    assert "type 'pnig'" in m["detail"] and "did you mean 'ping'?" in m["detail"]
    w.send_json({"type": "end"})  # the chat goes on after each
    assert until(w, "state", lambda m: m["session"]["status"] != "waiting")["session"]["status"] == "abandoned"
    w.__exit__(None, None, None)
    # Before auth, the close reason says what came instead.
    with ch.client.websocket_connect(PATH) as w:
        send(w)
        with pytest.raises(WebSocketDisconnect) as e:
            w.receive_json()
        assert e.value.code == 4401 and got in e.value.reason and "auth" in e.value.reason


def test_no_auth_in_time_closes_with_a_code_and_reason(ch, monkeypatch):
    monkeypatch.setattr(routes, "WS_AUTH_TIMEOUT_S", 0.2)
    ch.collection("hh", None, n_codes=1, human_human=True)
    with ch.client.websocket_connect(PATH) as w:
        with pytest.raises(WebSocketDisconnect) as e:
            w.receive_json()
        assert e.value.code == routes.WS_AUTH_LATE == 4408
        assert e.value.reason == "no {type: auth, code} message within 0.2 s"
