"""Times are read under the lock that orders them (on SQLite and PostgreSQL): a chat's number follows its start
time, and a turn's position follows its time, also when a request reads the clock and another one then takes
the lock first.

The clock of these tests steps one second at each call; its first call can let another whole request run
before it returns (``hook``): the race the clock sees when a request reads the time and then waits. A
request that read the time under the lock makes the other one wait for that lock (the hook waits for it
one second at most, then goes on)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from collection_support import Chats
from fastapi.testclient import TestClient
from sqlalchemy import select

from dialeval.service.app import create_app
from dialeval.service.collection import chats
from dialeval.service.collection.tables import ChatSession, ChatTurn
from dialeval.service.config import Settings
from dialeval.service.db import Database

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class SteppingClock:
    """The n-th call returns ``T0 + n`` seconds; the call that finds ``hook`` set runs it first (once)."""

    def __init__(self) -> None:
        self.calls = 0
        self.hook = None
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            self.calls += 1
            n = self.calls
            hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return T0 + timedelta(seconds=n)


class Racing(Chats):
    """:class:`Chats` on a :class:`SteppingClock`."""

    def __init__(self, url: str) -> None:
        self.clock = SteppingClock()
        self.db = Database(url)
        self.app = create_app(Settings(database_url=url, clock=self.clock), self.db)
        self.client = TestClient(self.app)


@pytest.fixture
def rc(db_url):
    r = Racing(db_url)
    yield r
    r.close()


def meanwhile(call, wait_s: float = 1.0):
    """A hook running ``call`` in another thread, waiting for it ``wait_s`` at most (it may wait for a lock
    the caller holds); the thread, and a dict that gets its ``result``."""
    got: dict = {}

    def run() -> None:
        got["result"] = call()

    thread = threading.Thread(target=run)

    def hook() -> None:
        thread.start()
        thread.join(wait_s)

    return hook, thread, got


def test_chat_numbers_follow_start_times_when_starts_race(rc):
    a, b = rc.collection("c1", "builtin:echo", n_codes=2)
    calls_before = rc.clock.calls
    hook, other, got = meanwhile(lambda: rc.start(b))
    rc.clock.hook = hook  # a's first clock read lets b's whole start run before it returns
    r = rc.start(a)
    other.join(60)
    assert r.status_code == 201, r.text
    assert got["result"].status_code == 201, got["result"].text
    with rc.db.read() as s:
        rows = s.execute(select(ChatSession.number, ChatSession.started_at, ChatSession.id)
                         .order_by(ChatSession.number)).all()
    assert [n for n, _t, _i in rows] == [0, 1]
    assert rows[0].started_at < rows[1].started_at  # numbers in the order of the start times
    # a's time is the first read after the collection was made; b read the clock later, under the lock a held
    assert rows[0].id == r.json()["id"] and r.json()["dialogue_id"] == "echo00000"
    assert rows[0].started_at == T0 + timedelta(seconds=calls_before + 1)
    assert got["result"].json()["dialogue_id"] == "echo00001"


def test_turn_positions_follow_turn_times_when_human_turns_race(rc):
    u1, u2 = rc.collection("hh", None, n_codes=2, human_human=True)
    sid = rc.start(u1, "Ann", "hh").json()["id"]
    assert rc.start(u2, "Bob", "hh").json()["status"] == "active"
    # u2 sends before u1's first turn is stored; u1's turn is stored while u2's request is on its way
    hook, other, got = meanwhile(lambda: rc.call("POST", f"/api/collections/hh/sessions/{sid}/turns", u1,
                                                 {"utterance": "hello"}))
    rc.clock.hook = hook
    r2 = rc.call("POST", f"/api/collections/hh/sessions/{sid}/turns", u2, {"utterance": "hi"})
    other.join(60)
    assert got["result"].status_code == 201, got["result"].text
    # u2's turn comes after u1's (it read the time after u1's turn was stored: PostgreSQL), or is refused as
    # out of turn (it held the lock first: SQLite serializes the whole write); never stored before it in time
    assert r2.status_code in (201, 409), r2.text
    if r2.status_code == 409:
        assert "not your turn" in r2.json()["detail"]
    with rc.db.read() as s:
        turns = s.execute(select(ChatTurn.position, ChatTurn.speaker, ChatTurn.created_at)
                          .where(ChatTurn.session_id == sid).order_by(ChatTurn.position)).all()
    assert [(p, who) for p, who, _t in turns] == [(1, "USER1"), (2, "USER2")][:1 + (r2.status_code == 201)]
    times = [t for _p, _w, t in turns]
    assert times == sorted(times) and len(set(times)) == len(times)


def test_start_and_turn_take_the_clock_not_a_time(ch):
    [code] = ch.collection("c1", "builtin:echo", n_codes=1)
    c, inv = chats.participant(ch.db, "c1", code)
    with pytest.raises(TypeError, match="clock must be a callable returning an aware datetime"):
        chats.start_session(ch.db, c, code, "", ch.clock())
    with pytest.raises(TypeError, match="clock\\(\\) must return an aware datetime"):
        chats.start_session(ch.db, c, code, "", lambda: datetime(2026, 3, 1, 12))  # naive
    with ch.db.read() as s:
        assert s.scalar(select(ChatSession.id)) is None  # nothing stored by either
    sess = chats.start_session(ch.db, c, code, "", ch.clock)
    assert sess.number == 0 and sess.started_at == ch.clock.t
    with pytest.raises(TypeError, match="clock must be a callable"):
        chats.add_turn(ch.db, c, inv, sess.id, "hello", ch.clock())
    with pytest.raises(TypeError, match="clock must be a callable"):
        chats.answer(ch.db, c, inv, sess.id, ch.clock())
    ch.tick(5)
    _inv, _sess, turns = chats.add_turn(ch.db, c, code, sess.id, "hello", ch.clock)
    assert [(t.position, t.created_at) for t in turns] == [(1, T0 + timedelta(seconds=5))]


def test_a_chat_never_ends_before_a_turn_stored_while_the_end_waited(rc):
    """The end's time is read under the chat's lock too: an end that read the clock, then waited while a turn
    was stored, ended the chat before that turn in time."""
    u1, u2 = rc.collection("hh", None, n_codes=2, human_human=True)
    sid = rc.start(u1, "Ann", "hh").json()["id"]
    assert rc.start(u2, "Bob", "hh").json()["status"] == "active"
    hook, other, got = meanwhile(lambda: rc.call("POST", f"/api/collections/hh/sessions/{sid}/turns", u1,
                                                 {"utterance": "hello"}))
    rc.clock.hook = hook  # the end's first clock read lets Ann's turn in first
    r = rc.call("POST", f"/api/collections/hh/sessions/{sid}/end", u2)
    other.join(60)
    assert r.status_code == 200, r.text
    with rc.db.read() as s:
        ended = s.scalar(select(ChatSession.ended_at).where(ChatSession.id == sid))
        stored = s.scalars(select(ChatTurn.created_at).where(ChatTurn.session_id == sid)).all()
    # the turn is stored before the end in time (PostgreSQL: it took the lock first), or refused, the chat ended
    # (the end held the lock: SQLite serializes the whole write); never stored after the chat's end
    assert all(t <= ended for t in stored), (stored, ended)
    if not stored:
        assert got["result"].status_code == 409, got["result"].text
    with pytest.raises(TypeError, match="clock must be a callable"):
        c, inv = chats.participant(rc.db, "hh", u1)
        chats.end_session(rc.db, c, inv, sid, rc.clock())
