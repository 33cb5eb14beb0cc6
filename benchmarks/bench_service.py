"""Benchmark of the evaluation service (issue 6): latency of one submission, and a load of concurrent clients.

The "test set" is the first 390 annotated dialogues of ``train_data_cn.json`` (STC-3's test set size);
runs are Dirichlet-random distributions over its dialogues (fixed seeds). Two figures:

(a) Latency of validate + score + store of a 390-dialogue run (quality and nugget, ~330 KB), median of
    ``--repeat`` submissions, on SQLite and on PostgreSQL: in process
    (``service.leaderboard.submissions.submit``: JSON parsing, validation against the full test set, scoring
    on the full set and the public half, quota check and insert in the locked transaction) and over HTTP (a
    ``dialeval serve`` subprocess, multipart upload, the same work plus the web stack). Target: median <= 300 ms.
(b) ``--clients`` concurrent clients (threads with their own HTTP connection; ``--teams`` teams sharing
    them, each with a daily quota of ``--daily-limit``) submitting for ``--seconds`` against a
    ``dialeval serve`` subprocess on SQLite and on PostgreSQL; every 5th request reads the leaderboard.
    Target: no status other than 201, 200 and 429, and no lost submission: every 201's id is in the
    database with the exact bytes sent, the database holds nothing else, and no team is over its quota.

PostgreSQL: ``$DIALEVAL_TEST_POSTGRES_URL`` or ``postgresql+psycopg://postgres@127.0.0.1:5432/test``; the
benchmark works in a fresh schema, dropped afterwards. Run:

    python benchmarks/bench_service.py [--data ../shared/data/stc3/train_data_cn.json] [--seconds 30]
        [--clients 50] [--teams 25] [--daily-limit 10] [--repeat 30] [--backends sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx
import orjson
from sqlalchemy import select

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
from service_support import drop_schema, free_port, fresh_schema_url, make_run  # noqa: E402

from dialeval.service import teams  # noqa: E402
from dialeval.service.db import Database, Team  # noqa: E402
from dialeval.service.leaderboard import submissions, tasks  # noqa: E402
from dialeval.service.leaderboard.tables import Submission, SubmissionFile  # noqa: E402

DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "stc3" / "train_data_cn.json"
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
TARGET_MS = 300.0
N_TEST = 390


def now() -> datetime:
    return datetime.now(UTC)


class Backend:
    """A fresh database for one part of the benchmark (a SQLite file, or a PostgreSQL schema)."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind, self.schema = kind, None
        if kind == "sqlite":
            self.url = f"sqlite:///{tmp / f'bench-{time.monotonic_ns()}.sqlite'}"
        else:
            self.base = os.environ.get("DIALEVAL_TEST_POSTGRES_URL", PG_DEFAULT)
            self.url, self.schema = fresh_schema_url(self.base)

    def drop(self) -> None:
        if self.schema:
            drop_schema(self.base, self.schema)


class Server:
    """``dialeval serve`` in a subprocess on a free loopback port."""

    def __init__(self, url: str, workers: int = 1) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        code = "from dialeval.cli.main import main; main()"
        self.proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--database-url", url, "--port",
                                      str(self.port), "--workers", str(workers)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())

    def __enter__(self) -> Server:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the server stopped: " + self.proc.stderr.read().decode()[-2000:])
            try:
                if httpx.get(self.base + "/api/tasks", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start in 60 s")

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def setup(url: str, gold: bytes, n_teams: int, daily_limit: int) -> tuple[Database, list[str]]:
    db = Database(url)
    tasks.create_task(db, "bench", "quality", gold, "gold.json", now(), public_fraction=0.5, seed=0,
                      daily_limit=daily_limit, total_limit=10 * daily_limit)
    tokens = [teams.register_team(db, f"team{i:02d}", "", now())[1] for i in range(n_teams)]
    return db, tokens


def latency(kind: str, tmp: Path, gold: bytes, runs: list[bytes], repeat: int) -> dict:
    """(a): in-process and HTTP medians of one submission."""
    backend = Backend(kind, tmp)
    try:
        db, (token,) = setup(backend.url, gold, 1, 10 * repeat + 10)
        team = teams.authenticate(db, token)
        submissions.submit(db, team, "bench", runs[0], "warm.json", now)  # loads the gold once
        inproc = []
        for i in range(repeat):
            t = time.perf_counter()
            submissions.submit(db, team, "bench", runs[i % len(runs)], f"run{i}.json", now)
            inproc.append(1000 * (time.perf_counter() - t))
        db.dispose()
        http = []
        with Server(backend.url) as srv, httpx.Client(base_url=srv.base, timeout=60) as c:
            h = {"Authorization": f"Bearer {token}"}
            for i in range(repeat + 1):
                t = time.perf_counter()
                r = c.post("/api/tasks/bench/submissions", headers=h,
                           files={"file": (f"h{i}.json", runs[i % len(runs)], "application/json")})
                if r.status_code != 201:
                    raise RuntimeError(f"HTTP submission refused: {r.status_code} {r.text[:300]}")
                if i:  # the first one loads the gold in the server process
                    http.append(1000 * (time.perf_counter() - t))
        return {"backend": kind, "in_process_ms": _stats(inproc), "http_ms": _stats(http)}
    finally:
        backend.drop()


def _stats(ms: list[float]) -> dict:
    q = statistics.quantiles(ms, n=10)
    return {"median": statistics.median(ms), "p10": q[0], "p90": q[-1], "n": len(ms)}


def load(kind: str, tmp: Path, gold: bytes, runs: list[bytes], args) -> dict:
    """(b): concurrent clients for a fixed time; then every accepted submission is checked in the database."""
    backend = Backend(kind, tmp)
    try:
        db, tokens = setup(backend.url, gold, args.teams, args.daily_limit)
        statuses: Counter = Counter()
        accepted: list[tuple[int, str, str]] = []  # (id, team token, sha256 sent)
        errors: list[str] = []
        lock = threading.Lock()
        stop_at = [0.0]
        with Server(backend.url, args.workers) as srv:
            barrier = threading.Barrier(args.clients + 1)

            def client(k: int) -> None:
                token = tokens[k % len(tokens)]
                h = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=srv.base, timeout=120) as c:
                    barrier.wait()
                    i = 0
                    while time.monotonic() < stop_at[0]:
                        i += 1
                        try:
                            if i % 5 == 0:
                                r = c.get("/api/tasks/bench/leaderboard")
                                sha = None
                            else:
                                body = runs[(k + i) % len(runs)]
                                sha = hashlib.sha256(body).hexdigest()
                                r = c.post("/api/tasks/bench/submissions", headers=h,
                                           files={"file": (f"c{k}-{i}.json", body, "application/json")})
                        except httpx.HTTPError as e:
                            with lock:
                                errors.append(f"{type(e).__name__}: {e}")
                            continue
                        with lock:
                            statuses[r.status_code] += 1
                            if r.status_code == 201:
                                accepted.append((r.json()["id"], token, sha))
                            elif r.status_code not in (200, 429):
                                errors.append(f"{r.status_code}: {r.text[:200]}")

            threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
            for t in threads:
                t.start()
            stop_at[0] = time.monotonic() + args.seconds
            t0 = time.monotonic()
            barrier.wait()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - t0
        lost, extra = _check_stored(db, accepted, args.daily_limit)
        db.dispose()
        return {"backend": kind, "seconds": round(elapsed, 1), "clients": args.clients, "teams": args.teams,
                "daily_limit": args.daily_limit, "statuses": dict(sorted(statuses.items())),
                "requests_per_s": round(sum(statuses.values()) / elapsed, 1), "accepted": len(accepted),
                "errors": len(errors), "first_errors": errors[:5], "lost": lost, "unexpected_in_db": extra}
    finally:
        backend.drop()


def _check_stored(db: Database, accepted: list, daily_limit: int) -> tuple[int, int]:
    """Count accepted submissions missing (or altered) in the database, and rows nobody was told of."""
    token_of = {i: tok for i, tok, _ in accepted}
    sha_of = {i: sha for i, _, sha in accepted}
    with db.read() as s:
        rows = s.execute(select(Submission.id, Submission.sha256, Team.token_hash)
                         .join(Team, Team.id == Submission.team_id)).all()
        by_id = {r.id: r for r in rows}
        lost = 0
        for i, sha in sha_of.items():
            r = by_id.get(i)
            data = s.get(SubmissionFile, i).data if r is not None else None
            if r is None or r.sha256 != sha or hashlib.sha256(data).hexdigest() != sha \
                    or r.token_hash != hashlib.sha256(token_of[i].encode()).hexdigest():
                lost += 1
    per_team = Counter(r.token_hash for r in rows)
    if max(per_team.values(), default=0) > daily_limit:
        raise RuntimeError(f"a team has {max(per_team.values())} accepted runs, over its quota {daily_limit}")
    return lost, len(set(by_id) - set(sha_of))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--teams", type=int, default=25)
    ap.add_argument("--daily-limit", type=int, default=10)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--backends", default="sqlite,postgresql")
    args = ap.parse_args()
    os.environ.setdefault("DIALEVAL_PROGRESS", "0")
    records = orjson.loads(args.data.read_bytes())
    test = [r for r in records if r.get("annotations")][:N_TEST]
    gold = orjson.dumps(test)
    runs = [orjson.dumps(make_run(test, seed=s)) for s in range(8)]
    print(f"test set: {len(test)} dialogues of {args.data.name} ({len(gold) / 1e6:.1f} MB gold); runs of "
          f"{statistics.mean(map(len, runs)) / 1e3:.0f} KB (quality + nugget); task: quality, public half 50%")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} (other work on the machine makes figures noisy)")
    results = {"settings": vars(args) | {"data": str(args.data)}, "latency": [], "load": []}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.backends.split(","):
            r = latency(kind, Path(tmp), gold, runs, args.repeat)
            results["latency"].append(r)
            for side in ("in_process_ms", "http_ms"):
                m = r[side]["median"]
                print(f"(a) {kind:10s} {side[:-3]:10s}: median {m:7.1f} ms (p10 {r[side]['p10']:.1f}, p90 "
                      f"{r[side]['p90']:.1f}, n={r[side]['n']}) vs target {TARGET_MS:.0f} ms: "
                      f"{m / TARGET_MS:.2f} of the budget -> {'OK' if m <= TARGET_MS else 'OVER'}")
        for kind in args.backends.split(","):
            r = load(kind, Path(tmp), gold, runs, args)
            results["load"].append(r)
            ok = r["errors"] == 0 and r["lost"] == 0 and r["unexpected_in_db"] == 0
            print(f"(b) {kind:10s} {r['clients']} clients x {r['seconds']} s: statuses {r['statuses']}, "
                  f"{r['requests_per_s']} req/s, {r['accepted']} accepted; errors other than 429: {r['errors']}, "
                  f"lost: {r['lost']}, unexpected rows: {r['unexpected_in_db']} -> {'OK' if ok else 'FAIL'}")
            for e in r["first_errors"]:
                print(f"    {e}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
