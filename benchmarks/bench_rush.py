"""Benchmark of the service at a deadline rush (issue 17): do leaderboard reads stay fast while uploads are scored?

``--clients`` clients (threads, each with its own HTTP connection and team) hit a ``dialeval serve``
subprocess for ``--seconds``: each request is a leaderboard read (``GET /api/tasks/bench/leaderboard``) with
probability 0.8, else an upload of a ~1.5 MB run (quality + nugget distributions for every dialogue of a
test set of ``--dialogues`` dialogues of ``train_data_cn.json``; Dirichlet-random, fixed seeds). Quotas are
high enough that every valid upload is scored and stored. On SQLite and PostgreSQL, with each of
``--workers`` worker counts. Reported: median and p95 of reads and of uploads, statuses, errors (any
status other than 200/201 or a broken connection), runs lost (a 201 whose run is not in the database with
the exact bytes sent) and the peak memory of the server's processes (workers and scoring processes).
Target: reads <= 100 ms p95 while uploads are scored; 0 errors, 0 lost.

PostgreSQL: ``$DIALEVAL_TEST_POSTGRES_URL`` or ``postgresql+psycopg://postgres@127.0.0.1:5432/test`` (a fresh
schema, dropped afterwards). Run:

    python benchmarks/bench_rush.py [--data ../shared/data/stc3/train_data_cn.json] [--seconds 40]
        [--clients 50] [--dialogues 1800] [--workers 1,4] [--backends sqlite,postgresql]
        [--scoring-processes N]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
from service_support import make_run  # noqa: E402

from bench_service import DEFAULT_DATA, Backend, Server, _check_stored, setup  # noqa: E402

READ_SHARE = 0.8
TARGET_READ_P95_MS = 100.0


def _pct(ms: list[float], q: float) -> float:
    if not ms:
        return float("nan")
    ms = sorted(ms)
    return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]


def _rss_mb(pid: int) -> float:
    """Resident memory of a process and all its children (MB)."""
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for x in procs:
        with contextlib.suppress(psutil.Error):
            total += x.memory_info().rss
    return total / 1048576


def _client_group(base: str, clients: list[tuple[int, str]], runs: list[bytes], read_share: float,
                  start_at: float, stop_at: float, queue) -> None:
    """Clients ``(k, token)`` as threads of one process, from ``start_at`` to ``stop_at`` (wall clock)."""
    lat: dict[str, list[float]] = {"read": [], "upload": []}
    statuses: Counter = Counter()
    accepted: list[tuple[int, str, str]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(k: int, token: str) -> None:
        rng = random.Random(k)
        h = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, timeout=120) as c:
            time.sleep(max(0.0, start_at - time.time()))
            i = 0
            while time.time() < stop_at:
                i += 1
                read = rng.random() < read_share
                body = None if read else runs[(k + i) % len(runs)]
                t = time.perf_counter()
                try:
                    if read:
                        r = c.get("/api/tasks/bench/leaderboard")
                    else:
                        r = c.post("/api/tasks/bench/submissions", headers=h,
                                   files={"file": (f"c{k}-{i}.json", body, "application/json")})
                except httpx.HTTPError as e:
                    with lock:
                        errors.append(f"{type(e).__name__}: {e}")
                    continue
                ms = 1000 * (time.perf_counter() - t)
                with lock:
                    statuses[r.status_code] += 1
                    lat["read" if read else "upload"].append(ms)
                    if r.status_code == 201:
                        accepted.append((r.json()["id"], token, hashlib.sha256(body).hexdigest()))
                    elif r.status_code != 200:
                        errors.append(f"{r.status_code}: {r.text[:200]}")

    threads = [threading.Thread(target=client, args=kt) for kt in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put((lat, statuses, accepted, errors))


def rush(kind: str, workers: int, tmp: Path, gold: bytes, runs: list[bytes], args) -> dict:
    backend = Backend(kind, tmp)
    try:
        db, tokens = setup(backend.url, gold, args.clients, 10_000)
        lat: dict[str, list[float]] = {"read": [], "upload": []}
        statuses: Counter = Counter()
        accepted: list[tuple[int, str, str]] = []
        errors: list[str] = []
        with Server(backend.url, workers) as srv:
            with httpx.Client(base_url=srv.base, timeout=120) as c:  # warm up: the gold in scoring processes
                h = {"Authorization": f"Bearer {tokens[0]}"}
                for i in range(2 * workers):
                    r = c.post("/api/tasks/bench/submissions", headers=h,
                               files={"file": (f"warm{i}.json", runs[0], "application/json")})
                    if r.status_code != 201:
                        raise RuntimeError(f"warm-up upload refused: {r.status_code} {r.text[:300]}")
                    accepted.append((r.json()["id"], tokens[0], hashlib.sha256(runs[0]).hexdigest()))
            peak = [0.0]
            start_at = time.time() + 1.0
            stop_at = start_at + args.seconds
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak[0] = max(peak[0], _rss_mb(srv.proc.pid))
                    time.sleep(0.5)

            sampler = threading.Thread(target=sample)
            sampler.start()
            # Clients in several processes (threads within each), so that the clients' own GIL does not
            # add to the latencies measured.
            ctx = multiprocessing.get_context("fork")
            queue = ctx.Queue()
            groups = [list(range(g, args.clients, args.client_processes)) for g in range(args.client_processes)]
            procs = [ctx.Process(target=_client_group, args=(srv.base, [(k, tokens[k]) for k in g], runs,
                                                             args.read_share, start_at, stop_at, queue))
                     for g in groups if g]
            for p in procs:
                p.start()
            for _ in procs:
                g_lat, g_statuses, g_accepted, g_errors = queue.get()
                for what in lat:
                    lat[what] += g_lat[what]
                statuses.update(g_statuses)
                accepted += g_accepted
                errors += g_errors
            for p in procs:
                p.join()
            elapsed = time.time() - start_at
            done.set()
            sampler.join()
        lost, extra = _check_stored(db, accepted, 10_000)
        db.dispose()
        out = {"backend": kind, "workers": workers, "seconds": round(elapsed, 1), "clients": args.clients,
               "statuses": dict(sorted(statuses.items())), "errors": len(errors), "first_errors": errors[:5],
               "accepted": len(accepted), "lost": lost, "unexpected_in_db": extra,
               "peak_rss_mb": round(peak[0])}
        for what, ms in lat.items():
            out[what] = {"n": len(ms), "median_ms": round(statistics.median(ms), 1) if ms else None,
                         "p95_ms": round(_pct(ms, 0.95), 1) if ms else None,
                         "max_ms": round(max(ms), 1) if ms else None}
        return out
    finally:
        backend.drop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--dialogues", type=int, default=1800, help="Test set size (1800: runs of ~1.5 MB).")
    ap.add_argument("--workers", default="1,4", help="Worker counts to run, comma-separated.")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--client-processes", type=int, default=5, help="Processes the clients run in.")
    ap.add_argument("--read-share", type=float, default=READ_SHARE,
                    help="Share of requests that read the leaderboard (1.0: a control without uploads).")
    ap.add_argument("--scoring-processes", type=int, default=None,
                    help="Scoring processes per worker (default: the service's, cores - 1).")
    args = ap.parse_args()
    os.environ.setdefault("DIALEVAL_PROGRESS", "0")
    if args.scoring_processes is not None:
        os.environ["DIALEVAL_SCORING_PROCESSES"] = str(args.scoring_processes)
    records = orjson.loads(args.data.read_bytes())
    test = [r for r in records if r.get("annotations")][:args.dialogues]
    gold = orjson.dumps(test)
    runs = [orjson.dumps(make_run(test, seed=s)) for s in range(4)]
    print(f"test set: {len(test)} dialogues of {args.data.name} ({len(gold) / 1e6:.1f} MB gold); runs of "
          f"{statistics.mean(map(len, runs)) / 1e6:.2f} MB; {args.clients} clients, {args.read_share:.0%} leaderboard "
          f"reads, {args.seconds:.0f} s per configuration")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} (other work on the machine makes figures noisy)")
    results = {"settings": vars(args) | {"data": str(args.data)}, "rush": []}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.backends.split(","):
            for workers in (int(w) for w in args.workers.split(",")):
                r = rush(kind, workers, Path(tmp), gold, runs, args)
                results["rush"].append(r)
                rd, up = r["read"], r["upload"]
                ok = r["errors"] == 0 and r["lost"] == 0 and (rd["p95_ms"] or 0) <= TARGET_READ_P95_MS
                print(f"{kind:10s} {workers} worker(s): reads n={rd['n']} median {rd['median_ms']} ms p95 "
                      f"{rd['p95_ms']} ms | uploads n={up['n']} median {up['median_ms']} ms p95 {up['p95_ms']} ms "
                      f"| statuses {r['statuses']} errors {r['errors']} lost {r['lost']} | peak RSS "
                      f"{r['peak_rss_mb']} MB -> {'OK' if ok else 'MISS'}", flush=True)
                for e in r["first_errors"]:
                    print(f"    {e}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
