"""What an engine over HTTP may cost a participant and show them: one deadline for the whole exchange (a body or
headers dripped a byte at a time), a cap on the body's size (refused, never read whole), a reply cut and cleaned
to what a participant may write (never a dead end), and an error body kept in the server's log, not shown."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import select

from dialeval.service.collection.engines import EngineError
from dialeval.service.collection.engines.http import MAX_BODY_BYTES, MAX_LOGGED, post_json
from dialeval.service.collection.sessions import MAX_UTTERANCE
from dialeval.service.collection.tables import ChatSession, ChatTurn

SECRET = "OPENAI_API_KEY=sk-live-123secret"


class RawEngine:
    """An HTTP server in a thread whose every POST is answered by ``answer(handler)`` (set by each test), which
    writes the raw answer on ``handler.wfile`` (unbuffered: each write is sent at once)."""

    def __init__(self) -> None:
        self.answer: Callable[[BaseHTTPRequestHandler], None] = lambda h: None
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up, rightly
                    engine.answer(self)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/plain"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def raw():
    e = RawEngine()
    yield e
    e.close()


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, length: int | None = None) -> None:
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body) if length is None else length))
    h.end_headers()
    h.wfile.write(body)


def reply(text: str) -> Callable[[BaseHTTPRequestHandler], None]:
    return lambda h: send(h, 200, json.dumps({"utterance": text}).encode())


def drip(data: bytes, every_s: float = 0.1) -> Iterator[bytes]:
    for i in range(len(data)):
        yield data[i:i + 1]
        time.sleep(every_s)


def drip_body(h: BaseHTTPRequestHandler) -> None:
    body = json.dumps({"utterance": "slowly " * 10}).encode()
    h.send_response(200)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    for b in drip(body):
        h.wfile.write(b)


def drip_headers(h: BaseHTTPRequestHandler) -> None:
    for b in drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 200 + b"\r\n\r\n"):
        h.wfile.write(b)


def endless(h: BaseHTTPRequestHandler, announce: bool) -> None:
    """200 MB of JSON: announced by Content-Length, or not (the end is the connection's close)."""
    h.send_response(200)
    if announce:
        h.send_header("Content-Length", str(200 * 2**20))
    h.end_headers()
    h.wfile.write(b'{"utterance": "')
    chunk = b"a" * 65536
    for _ in range(200 * 16):
        h.wfile.write(chunk)


def _turns(ch) -> list[str]:
    with ch.db.read() as s:
        return [t.utterance for t in s.scalars(select(ChatTurn).order_by(ChatTurn.id))]


@pytest.mark.parametrize("answer", [drip_body, drip_headers], ids=["body", "headers"])
def test_one_deadline_for_the_whole_exchange(raw, answer):
    """A drip keeps every read within httpx's per-read timeout; the exchange still ends at the deadline."""
    raw.answer = reply("warm")  # the client's loop and connection pool exist before the clock starts
    assert post_json(raw.url, {"turns": []}, 5, "the chat engine") == {"utterance": "warm"}
    raw.answer = answer
    t0 = time.monotonic()
    with pytest.raises(EngineError, match=r"^the chat engine did not answer within 0\.5 s$"):
        post_json(raw.url, {"turns": []}, 0.5, "the chat engine")
    assert time.monotonic() - t0 < 1.5  # 0.5 s and room for a loaded machine; the drip alone lasts over 2 s
    raw.answer = reply("quick")  # the engine loop serves the next call as before
    assert post_json(raw.url, {"turns": []}, 2, "the chat engine") == {"utterance": "quick"}


def test_a_dripping_engine_holds_a_participant_no_longer_than_the_timeout(ch, raw):
    raw.answer = drip_body
    [code] = ch.collection("c1", raw.url, n_codes=1, timeout_s=1)
    sid = ch.start(code).json()["id"]
    t0 = time.monotonic()
    r = ch.say(code, sid, "hello?")
    assert time.monotonic() - t0 < 3.0  # 1 s and room for a loaded machine; the drip lasts over 7 s
    assert r.status_code == 202, r.text
    assert r.json()["engine_error"] == ("the chat engine did not answer within 1 s; your message is saved, ask again "
                                        "with Retry")
    assert _turns(ch) == ["hello?"]


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "until-close"])
def test_a_body_over_the_cap_is_refused_unread(raw, announce):
    raw.answer = lambda h: endless(h, announce)
    tracemalloc.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(EngineError) as e:
            post_json(raw.url, {"turns": []}, 10, "the chat engine")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    received = f"of {200 * 2**20} bytes (its Content-Length)" if announce else f"of more than {MAX_BODY_BYTES} bytes"
    assert str(e.value) == (f"the chat engine answered a body {received}; at most {MAX_BODY_BYTES} bytes (64 KiB) are "
                            "allowed for a reply")
    assert time.monotonic() - t0 < 5 and peak < 4 * MAX_BODY_BYTES + 2**20, peak


def test_the_cap_holds_the_longest_reply_kept():
    """A reply of MAX_UTTERANCE characters fits the cap however JSON writes it (escaped astral characters)."""
    assert len(json.dumps({"utterance": "\U0001f600" * MAX_UTTERANCE}).encode()) < MAX_BODY_BYTES // 2


def test_a_body_over_the_cap_tells_the_participant(ch, raw):
    raw.answer = lambda h: endless(h, False)
    [code] = ch.collection("c1", raw.url, n_codes=1, timeout_s=10)
    sid = ch.start(code).json()["id"]
    r = ch.say(code, sid, "hi")
    assert r.status_code == 202, r.text
    assert r.json()["engine_error"].startswith(f"the chat engine answered a body of more than {MAX_BODY_BYTES} bytes")
    assert _turns(ch) == ["hi"]


def test_a_long_or_unclean_reply_is_made_usable(ch, raw):
    """2,001-4,000 characters, bidi controls, control characters: cut and cleaned, stored, never a dead end."""
    [code] = ch.collection("c1", raw.url, n_codes=1, max_turns=10)
    sid = ch.start(code).json()["id"]
    raw.answer = reply("word " * 700)  # 3500 characters
    r = ch.say(code, sid, "tell me a lot")
    assert r.status_code == 201, r.text
    assert r.json()["turns"][-1]["utterance"] == ("word " * 400).rstrip()  # 2000 characters, the end blank dropped
    raw.answer = reply("left \u202eright\u2066 nul\x00 esc\x1b[31m del\x7f\r\nline\ttab \u200fmark")
    r = ch.say(code, sid, "and now?")
    assert r.status_code == 201, r.text
    assert r.json()["turns"][-1]["utterance"] == "left right nul esc[31m del\nline\ttab \u200fmark"
    raw.answer = reply("\u202e\x00\x07")  # nothing readable left: refused, the turn kept
    r = ch.say(code, sid, "and?")
    assert r.status_code == 202, r.text
    assert r.json()["engine_error"].startswith("the chat engine's reply cannot be used (the reply is empty")
    raw.answer = reply("x" * (2 * MAX_UTTERANCE))  # a retry gets a reply (the longest kept) through
    r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry?after=5", code)
    assert r.status_code == 201, r.text
    assert r.json()["turns"][-1]["utterance"] == "x" * MAX_UTTERANCE and r.json()["engine_error"] is None
    assert len(_turns(ch)) == 6


def test_an_error_body_is_logged_not_shown(ch, raw, caplog):
    body = ("Traceback (most recent call last):\n  File \"app.py\", line 3\n" + SECRET + "\n" + "y" * 5000).encode()
    raw.answer = lambda h: send(h, 500, body)
    [code] = ch.collection("c1", raw.url, n_codes=1)
    sid = ch.start(code).json()["id"]
    with caplog.at_level(logging.WARNING, logger="dialeval.service.collection.engines.http"):
        r = ch.say(code, sid, "hi")
    expected = ("the chat engine answered HTTP 500 (Internal Server Error); the organisers find its details in the "
                "server's log; your message is saved, ask again with Retry")
    assert r.status_code == 202 and r.json()["engine_error"] == expected, r.text
    assert ch.call("GET", f"/api/collections/c1/sessions/{sid}", code).json()["engine_error"] == expected
    with ch.db.read() as s:
        assert s.get(ChatSession, sid).engine_error == expected
    [record] = [x for x in caplog.records if x.name == "dialeval.service.collection.engines.http"]
    logged = record.getMessage()
    assert "answered HTTP 500; its body begins: Traceback (most recent call last): File \"app.py\"" in logged
    assert SECRET in logged and "\n" not in logged
    assert logged.endswith("y" * 10) and logged.count("y") < MAX_LOGGED
    assert raw.url.split("//")[1] in logged
