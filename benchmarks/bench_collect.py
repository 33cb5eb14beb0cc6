"""Benchmark of chat collection (issue 12): the server's overhead on a chat turn beyond the engine's own time.

A ``dialeval serve`` subprocess (SQLite file or PostgreSQL schema) holds a human-machine collection; clients
(threads, one HTTP connection each) start chats and send turns over real HTTP, as the chat page does
(``POST /api/collections/NAME/sessions/ID/turns``, the answer holding the engine's reply). For each turn:

    overhead = client-side latency of the POST  -  the engine's own time (measured by the server around
               ``engine.reply`` and stored with the reply as ``chat_turns.engine_ms``)

so what remains is HTTP, authentication by invitation code, the turn-taking checks, the two locked
transactions (the participant's turn is committed before the engine is asked; the reply in a second one)
and reading the answer back. Engines: ``builtin:echo`` (answers at once) and an OpenAI-compatible server in
this process that answers after ``--delay-ms`` (an ``openai:`` engine: the adapter's HTTP call counts as
engine time). Target: median overhead <= 20 ms.

Run:

    python benchmarks/bench_collect.py [--turns 200] [--clients 1,8] [--delay-ms 50]
        [--backends sqlite,postgresql] [--engines echo,openai]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from sqlalchemy import select

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
from service_support import PG_DEFAULT, drop_schema, free_port, fresh_schema_url  # noqa: E402

from dialeval.service import invitations  # noqa: E402
from dialeval.service.collection import chats  # noqa: E402
from dialeval.service.collection.tables import ChatTurn  # noqa: E402
from dialeval.service.config import utcnow  # noqa: E402
from dialeval.service.db import Database  # noqa: E402

TARGET_MS = 20.0


class SlowOpenAI:
    """An OpenAI-compatible chat-completions server answering after a fixed delay."""

    def __init__(self, delay_s: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(delay_s)
                raw = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(url: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "dialeval", "serve", "--database-url", url, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/api/tasks", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def client(base: str, name: str, code: str, turns: int, out: list, errors: list) -> None:
    auth = {"Authorization": f"Bearer {code}"}
    with httpx.Client(base_url=base, headers=auth, timeout=60) as c:
        sid = None
        for i in range(turns):
            if sid is None:
                r = c.post(f"/api/collections/{name}/sessions", json={"name": ""})
                if r.status_code != 201:
                    errors.append(r.status_code)
                    return
                sid = r.json()["id"]
            t0 = time.perf_counter()
            r = c.post(f"/api/collections/{name}/sessions/{sid}/turns", json={"utterance": f"turn {i} hello"})
            ms = (time.perf_counter() - t0) * 1000
            if r.status_code != 201:
                errors.append(r.status_code)
                continue
            reply = r.json()["turns"][-1]
            out.append((sid, reply["position"], ms))
            if r.json()["status"] != "active":
                sid = None


def run(url: str, engine: str, n_clients: int, turns: int) -> dict:
    db = Database(url)
    name = f"bench-{engine.split(':')[0]}-{n_clients}"
    chats.create_collection(db, name, engine, utcnow(), engine_model="bench", engine_name="bench",
                            max_turns=40, timeout_s=30)
    codes = invitations.create_invitations(db, "collection", name, n_clients, utcnow())
    proc, base = serve(url)
    try:
        # Warm up (first imports, engine construction, connection pools) on a code of its own.
        [warm] = invitations.create_invitations(db, "collection", name, 1, utcnow())
        client(base, name, warm, 5, [], [])
        out: list = []
        errors: list = []
        per = max(1, turns // n_clients)
        threads = [threading.Thread(target=client, args=(base, name, c, per, out, errors)) for c in codes]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(20)
    with db.read() as s:
        engine_ms = {(t.session_id, t.position): t.engine_ms
                     for t in s.scalars(select(ChatTurn).where(ChatTurn.speaker == "SYSTEM"))}
    db.dispose()
    over = sorted(ms - engine_ms[(sid, pos)] for sid, pos, ms in out)
    lat = sorted(ms for _sid, _pos, ms in out)
    eng = sorted(engine_ms[(sid, pos)] for sid, pos, _ in out)

    def p(xs, q):
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    return {"turns": len(out), "errors": len(errors), "wall_s": wall,
            "latency_median": statistics.median(lat), "engine_median": statistics.median(eng),
            "overhead_median": statistics.median(over), "overhead_p95": p(over, 0.95)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=200, help="Turns per configuration (spread over the clients).")
    ap.add_argument("--clients", default="1,8", help="Concurrent participants, comma-separated settings.")
    ap.add_argument("--delay-ms", type=float, default=50.0, help="Fixed delay of the openai: test engine.")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--engines", default="echo,openai")
    a = ap.parse_args()
    slow = SlowOpenAI(a.delay_ms / 1000) if "openai" in a.engines else None
    specs = {"echo": "builtin:echo", "openai": f"openai:{slow.url}" if slow else ""}
    print(f"chat turn overhead beyond the engine's own time; {a.turns} turns per row; target median <= "
          f"{TARGET_MS:g} ms")
    print(f"{'backend':<11}{'engine':<22}{'clients':>8}{'turns':>7}{'errors':>7}{'latency':>10}{'engine':>9}"
          f"{'overhead':>10}{'p95':>8}")
    for backend in a.backends.split(","):
        for n in (int(x) for x in a.clients.split(",")):
            for eng in a.engines.split(","):
                if backend == "sqlite":
                    tmp = tempfile.mkdtemp(prefix="bench-collect-")
                    url, cleanup = f"sqlite:///{tmp}/service.sqlite", None
                else:
                    base = os.environ.get("DIALEVAL_TEST_POSTGRES_URL", PG_DEFAULT)
                    url, schema = fresh_schema_url(base)
                    cleanup = (base, schema)
                try:
                    r = run(url, specs[eng], n, a.turns)
                finally:
                    if cleanup:
                        drop_schema(*cleanup)
                label = "builtin:echo" if eng == "echo" else f"openai (+{a.delay_ms:g} ms)"
                print(f"{backend:<11}{label:<22}{n:>8}{r['turns']:>7}{r['errors']:>7}"
                      f"{r['latency_median']:>8.1f}ms{r['engine_median']:>7.1f}ms{r['overhead_median']:>8.1f}ms"
                      f"{r['overhead_p95']:>6.1f}ms", flush=True)
    if slow:
        slow.close()
    print("latency: client-side median of POST .../turns; engine: median of the engine's own time (server side); "
          "overhead: median and p95 of latency - engine time, per turn")


if __name__ == "__main__":
    main()
