"""Chat engines: the openai: adapter against a real OpenAI-compatible server on a loopback port (request shape,
timeout, error message, no turn lost), the plain http: protocol, and the offline builtin engines."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import select

from dialeval.corpus import Dialogue, Turn
from dialeval.service.collection.engines import EngineError, make_engine
from dialeval.service.collection.tables import ChatTurn


class FakeEngine:
    """An OpenAI-compatible (``/v1/chat/completions``) and plain-JSON (``/plain``) chat server in a thread.

    ``mode``: ``ok`` answers, ``slow`` sleeps ``delay`` seconds first, ``fail`` answers HTTP 500,
    ``garbage`` answers 200 with no choices. Every request is kept in ``requests``.
    """

    def __init__(self) -> None:
        self.mode, self.delay, self.requests = "ok", 0.0, []
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                engine.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                if engine.mode == "slow":
                    time.sleep(engine.delay)
                if engine.mode == "fail":
                    self._send(500, {"error": {"message": "model overloaded"}})
                elif engine.mode == "garbage":
                    self._send(200, {"object": "chat.completion", "choices": []})
                elif self.path == "/v1/chat/completions":
                    n = len(engine.requests)
                    self._send(200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
                                     "model": engine.requests[-1]["body"]["model"],
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": f"reply {n}"}}]})
                elif self.path == "/plain":
                    self._send(200, {"utterance": f"plain reply {len(engine.requests)}"})
                else:
                    self._send(404, {"error": "no such path"})

            def _send(self, status, data):
                raw = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def engine():
    e = FakeEngine()
    yield e
    e.close()



def _turns(ch) -> list[tuple]:
    with ch.db.read() as s:
        return [(t.position, t.speaker, t.utterance) for t in s.scalars(select(ChatTurn).order_by(ChatTurn.id))]


def test_openai_adapter_request_shape_timeout_errors_and_no_turn_lost(ch, engine):
    [code] = ch.collection("c1", f"openai:{engine.url}/v1", n_codes=1, engine_model="tiny-chat",
                           engine_name="Iris", timeout_s=0.5)
    sid = ch.start(code, "Ann").json()["id"]
    r = ch.say(code, sid, "hello Iris")
    assert r.status_code == 201, r.text
    assert [t["utterance"] for t in r.json()["turns"]] == ["hello Iris", "reply 1"]
    req = engine.requests[-1]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Content-Type"] == "application/json"
    assert req["body"] == {"model": "tiny-chat", "messages": [{"role": "user", "content": "hello Iris"}],
                           "stream": False}
    # Too slow: the turn is kept, the answer says why, nothing is added when the late reply would arrive.
    engine.mode, engine.delay = "slow", 4.0
    t0 = time.monotonic()
    r = ch.say(code, sid, "are you there?")
    assert time.monotonic() - t0 < 2.5  # 0.5 s and room for a loaded machine; the reply comes after 4 s
    assert r.status_code == 202, r.text
    assert r.json()["engine_error"].startswith("the chat engine (model 'tiny-chat') did not answer within 0.5 s")
    assert "your message is saved" in r.json()["engine_error"]
    assert [t["utterance"] for t in r.json()["turns"]] == ["are you there?"]
    assert _turns(ch) == [(1, "USER", "hello Iris"), (2, "SYSTEM", "reply 1"), (3, "USER", "are you there?")]
    # It is not the participant's turn while the reply is missing; the page shows the error after a reload.
    assert ch.say(code, sid, "hello?").status_code == 409
    state = ch.call("GET", f"/api/collections/c1/sessions/{sid}", code).json()
    assert "did not answer" in state["engine_error"]
    # A failing engine: its HTTP status in the message, its body only in the server's log (test_engine_limits).
    engine.mode = "fail"
    r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry?after=3", code)
    assert r.status_code == 202 and "answered HTTP 500 (Internal Server Error)" in r.json()["engine_error"]
    assert "model overloaded" not in r.json()["engine_error"]
    engine.mode = "garbage"
    r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry?after=3", code)
    assert r.status_code == 202 and "choices[0].message.content" in r.json()["engine_error"]
    # Back up: retry gets the reply, with the whole history in the request.
    engine.mode = "ok"
    r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry?after=3", code)
    assert r.status_code == 201, r.text
    assert r.json()["engine_error"] is None and [t["speaker"] for t in r.json()["turns"]] == ["SYSTEM"]
    assert engine.requests[-1]["body"]["messages"] == [
        {"role": "user", "content": "hello Iris"}, {"role": "assistant", "content": "reply 1"},
        {"role": "user", "content": "are you there?"}]
    # A retry with nothing awaited adds nothing.
    n = len(engine.requests)
    assert ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry", code).status_code == 201
    assert len(engine.requests) == n
    assert [p for p, _s, _u in _turns(ch)] == [1, 2, 3, 4]


def test_an_unreachable_engine_keeps_the_turn(ch, engine):
    url = engine.url
    engine.close()
    [code] = ch.collection("c1", f"openai:{url}/v1", n_codes=1, engine_model="m", timeout_s=2)
    sid = ch.start(code).json()["id"]
    r = ch.say(code, sid, "anyone?")
    assert r.status_code == 202 and "cannot be reached (ConnectError)" in r.json()["engine_error"]
    assert _turns(ch) == [(1, "USER", "anyone?")]


def test_plain_http_protocol(ch, engine):
    [code] = ch.collection("c1", f"{engine.url}/plain", n_codes=1)
    sid = ch.start(code).json()["id"]
    r = ch.say(code, sid, "hi")
    assert r.status_code == 201 and r.json()["turns"][1]["utterance"] == "plain reply 1"
    assert engine.requests[-1]["body"] == {"dialogue_id": "bot00000",
                                           "turns": [{"speaker": "USER", "utterance": "hi"}]}


def test_builtin_engines(tmp_path):
    d = Dialogue("x00000", [Turn("user", ["my parcel has not arrived yet"])])
    assert "order" in make_engine("builtin:retrieval").reply(d)
    corpus = tmp_path / "stc3.json"
    corpus.write_text(json.dumps([{"id": "a1", "turns": [
        {"sender": "customer", "utterances": ["the printer is out of toner"]},
        {"sender": "helpdesk", "utterances": ["Please order cartridge T-100."]},
        {"sender": "customer", "utterances": ["the screen stays black"]},
        {"sender": "helpdesk", "utterances": ["Hold the power button for ten seconds."]}]}]))
    e = make_engine(f"builtin:retrieval:{corpus}")
    assert e.reply(Dialogue("x00000", [Turn("user", ["my screen is black"])])) == \
        "Hold the power button for ten seconds."
    assert make_engine("builtin:echo").reply(d) == "You said: my parcel has not arrived yet"
    with pytest.raises(EngineError):
        make_engine("builtin:echo").reply(Dialogue("x00000", []))
