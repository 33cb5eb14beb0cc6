"""The service as several processes: 4 Uvicorn workers on one PostgreSQL database.

Nothing a worker needs lives in another worker's memory: quotas are rows locked in the database, the
leaderboard is read from it. Started the way a deployment starts it (``python -m uvicorn
dialeval.service.app:create_app --factory --workers 4`` with ``$DIALEVAL_DATABASE_URL``); every log line
carries the worker's pid, so the test also checks that the requests really were spread over processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx
from service_support import GOLD, RUN, at_once, drop_schema, dumps, free_port, fresh_schema_url, make_run, pg_base

from dialeval.service.config import URL_ENV
from dialeval.service.db import Database
from dialeval.service.leaderboard import tasks

SRC = str(Path(__file__).resolve().parents[3] / "src")
WORKERS = 4


def _log_config(path: Path, log: Path) -> Path:
    """A logging config for uvicorn: every line, access lines included, with the process id, to ``log``."""
    fmt = {"format": "%(process)d %(name)s %(message)s"}
    handler = {"class": "logging.FileHandler", "filename": str(log), "formatter": "pid"}
    config = {"version": 1, "disable_existing_loggers": False, "formatters": {"pid": fmt},
              "handlers": {"file": handler},
              "loggers": {name: {"handlers": ["file"], "level": "INFO", "propagate": False}
                          for name in ("uvicorn", "uvicorn.error", "uvicorn.access")}}
    path.write_text(json.dumps(config))
    return path


def _pids(log: Path, pattern: str) -> Counter:
    """How many log lines matching ``pattern`` each worker process wrote."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return Counter(line.split(" ", 1)[0] for line in lines if re.search(pattern, line))


def test_four_workers_quota_exact_and_leaderboard_complete_on_every_worker(tmp_path):
    base = pg_base()
    url, schema = fresh_schema_url(base)
    db = Database(url)  # migrates the schema once, before the workers start (as `dialeval serve` does)
    proc = None
    try:
        tasks.create_task(db, "t1", "quality", dumps(GOLD), "gold.json", datetime.now(UTC), public_fraction=0.5,
                          seed=3, daily_limit=5, total_limit=50)
        port, log = free_port(), tmp_path / "uvicorn.log"
        env = {**os.environ, URL_ENV: url, "PYTHONPATH": SRC, "DIALEVAL_PROGRESS": "0"}
        config = _log_config(tmp_path / "log.json", log)
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "dialeval.service.app:create_app", "--factory", "--host", "127.0.0.1",
             "--port", str(port), "--workers", str(WORKERS), "--log-config", str(config)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while len(_pids(log, "Application startup complete")) < WORKERS:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
            time.sleep(0.1)
        server = f"http://127.0.0.1:{port}"
        r = httpx.post(f"{server}/api/teams", json={"name": "team-a", "affiliation": ""}, timeout=30)
        assert r.status_code == 201, r.text
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        accepted = []
        for seed in (11, 12):  # 2 of the 5 a day: 3 left
            r = httpx.post(f"{server}/api/tasks/t1/submissions", headers=auth, timeout=60,
                           files={"file": ("run.json", dumps(make_run(GOLD, seed=seed)), "application/json")})
            assert r.status_code == 201, r.text
            accepted.append(r.json()["id"])

        def upload() -> httpx.Response:
            with httpx.Client(base_url=server, timeout=120) as c:  # one connection each: spread over workers
                return c.post("/api/tasks/t1/submissions", headers=auth,
                              files={"file": ("run.json", dumps(RUN), "application/json")})

        results = at_once([upload] * 20, timeout=180)
        assert sorted(r.status_code for r in results) == [201] * 3 + [429] * 17, [r.text for r in results]
        accepted += [r.json()["id"] for r in results if r.status_code == 201]
        uploads = _pids(log, r'"POST /api/tasks/t1/submissions')
        assert len(uploads) >= 2, uploads  # the uploads hit several workers

        before = _pids(log, r'"GET /api/tasks/t1/leaderboard')
        for _ in range(8 * WORKERS):  # a new connection each time: reads land on every worker
            with httpx.Client(base_url=server, timeout=30) as c:
                board = c.get("/api/tasks/t1/leaderboard", params={"per": "run"})
                assert board.status_code == 200, board.text
                assert sorted(row["id"] for row in board.json()["rows"]) == sorted(accepted)
                team = c.get("/api/tasks/t1/leaderboard").json()["rows"]
                assert [(row["team"], row["submissions"]) for row in team] == [("team-a", 5)]
        readers = _pids(log, r'"GET /api/tasks/t1/leaderboard') - before
        assert len(readers) >= 2, readers  # and they were read on several workers
        print(f"uploads per worker: {dict(uploads)}; leaderboard reads per worker: {dict(readers)}")
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        db.dispose()
        drop_schema(base, schema)
