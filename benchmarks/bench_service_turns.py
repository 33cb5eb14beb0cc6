"""Benchmark of a turn-level service task: DBDC3 English eval (200 dialogues, 2,000 labelled system turns).

Figures (SQLite, in process, ``service.leaderboard.submissions.submit``: reading the upload, validation against
the full test set, scoring on the full set and the public half, quota check and insert):

(a) creating the task from a ZIP of the eval folder (unpack, read 200 ``*.log.json``, gold distributions,
    split), once;
(b) the median latency of one submission of a Dirichlet-random run (fixed seeds) as dialeval's per-item JSON
    (``dialeval predict --to run``), and (c) as a ZIP of DBDC3 ``*.labels.json``, over ``--repeat`` runs.
    Reference: the STC-3 service target is a median <= 300 ms for a 390-dialogue run (bench_service.py).

    python benchmarks/bench_service_turns.py [--data ../shared/data/dbdc3/en/eval] [--repeat 20]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import tempfile
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import dialeval
from dialeval.distributions import gold_distributions
from dialeval.io.turnruns import run_document, write_dbdc_labels
from dialeval.service import teams
from dialeval.service.db import Database
from dialeval.service.leaderboard import submissions, tasks

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "dbdc3" / "en" / "eval"


def now() -> datetime:
    return datetime.now(UTC)


def zipped(folder: Path, root: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*.json")):
            z.write(f, f"{root}/{f.relative_to(folder).as_posix()}")
    return buf.getvalue()


def random_runs(dists, n: int, tmp: Path) -> tuple[list[bytes], list[bytes]]:
    """``n`` random runs, each as per-item JSON and as a ZIP of DBDC3 labels files."""
    as_json, as_zip = [], []
    for seed in range(n):
        rng = np.random.default_rng(seed)
        doc = run_document(dists)
        for rec in doc:
            for t in rec["turns"]:
                levels = list(t["breakdown"])
                t["breakdown"] = dict(zip(levels, rng.dirichlet(np.ones(len(levels))).round(6).tolist(), strict=True))
        as_json.append(json.dumps(doc).encode())
        folder = tmp / f"labels{seed}"
        write_dbdc_labels(doc, str(folder))
        as_zip.append(zipped(folder, "run"))
    return as_json, as_zip


def median_ms(db, team, runs: list[bytes], name: str) -> float:
    times = []
    for i, body in enumerate(runs):
        t = time.perf_counter()
        submissions.submit(db, team, "bd", body, f"{name}{i}", now)
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        gold_zip = zipped(args.data, "eval")
        dists = gold_distributions(dialeval.read_corpus(args.data))
        as_json, as_zip = random_runs(dists, args.repeat, tmp)
        db = Database(f"sqlite:///{tmp / 'bench.sqlite'}")
        t = time.perf_counter()
        tasks.create_task(db, "bd", "dbdc-breakdown", gold_zip, "eval.zip", now(), seed=0,
                          daily_limit=10 * args.repeat, total_limit=10 * args.repeat)
        create_s = time.perf_counter() - t
        team = teams.authenticate(db, teams.register_team(db, "bench", "", now())[1])
        submissions.submit(db, team, "bd", as_json[0], "warm.json", now)
        json_ms = median_ms(db, team, as_json, "run.json.")
        zip_ms = median_ms(db, team, as_zip, "run.zip.")
        db.dispose()
    print(json.dumps({"gold_zip_bytes": len(gold_zip), "dialogues": len(set(dists["breakdown"].ids)),
                      "items": len(dists["breakdown"]), "create_task_s": round(create_s, 3),
                      "submit_json_median_ms": round(json_ms, 1), "submit_zip_median_ms": round(zip_ms, 1),
                      "run_json_bytes": len(as_json[0]), "run_zip_bytes": len(as_zip[0]), "repeat": args.repeat},
                     indent=2))


if __name__ == "__main__":
    main()
