"""Benchmark of annotation projects (issue 12): 50 simulated annotators over HTTP on 200 items, k = 3.

A ``dialeval serve`` subprocess (SQLite file or PostgreSQL schema) holds a WOCHAT project of ``--items``
chats (4 turns, 2 system turns to label each); ``--annotators`` threads (one HTTP connection each, an
invitation code each) do what the annotate page does until no item is left for them: ``GET`` the project
once (the first use registers the annotator), then ``POST .../next`` -> one ``POST .../labels`` per system
turn -> ``POST .../submit``, waiting
``--think-ms`` (uniform 0..2x) before each label as a person would (0: as fast as possible).

Reported: median and p95 latency (client side) of "next item" and of "save label"; then, from the
database: items lost (finished fewer than k times although annotators asked until nothing was left),
over-assigned items (more than k finished or live), and labels lost (acknowledged by a 200 but not in
the database). Targets: median <= 50 ms, p95 <= 200 ms; 0 lost, 0 over-assigned.

Run:

    python benchmarks/bench_annotate.py [--items 200] [--annotators 50] [--overlap 3] [--think-ms 0,1000]
        [--backends sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import select

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
sys.path.insert(0, str(HERE.parent / "tests" / "service" / "annotation"))
sys.path.insert(0, str(HERE))
from annotation_support import chats_corpus  # noqa: E402
from service_support import PG_DEFAULT, drop_schema, fresh_schema_url  # noqa: E402

from bench_collect import serve  # noqa: E402
from dialeval.service import invitations  # noqa: E402
from dialeval.service.annotation import projects  # noqa: E402
from dialeval.service.annotation.tables import AnnotationItem, Assignment, Label  # noqa: E402
from dialeval.service.config import utcnow  # noqa: E402
from dialeval.service.db import Database  # noqa: E402

TARGET_MEDIAN_MS, TARGET_P95_MS = 50.0, 200.0
LEVELS = ("VALID", "ACCEPTABLE", "INVALID")


def annotator(base: str, name: str, code: str, think_s: float, seed: int, out: dict, errors: list) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=f"{base}/api/annotation/{name}", headers={"Authorization": f"Bearer {code}"},
                      timeout=60) as c:
        t0 = time.perf_counter()
        r = c.get(f"{base}/api/annotation/{name}")  # what the page does first: project, controls, annotator id
        out["join"].append((time.perf_counter() - t0) * 1000)
        if r.status_code != 200:
            errors.append(("join", r.status_code, r.text[:200]))
            return
        while True:
            t0 = time.perf_counter()
            r = c.post("/next")
            out["next"].append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                errors.append(("next", r.status_code, r.text[:200]))
                return
            v = r.json()
            if v["done"]:
                return
            aid = v["assignment"]
            for m in v["missing"]:
                if think_s:
                    time.sleep(rng.uniform(0, 2 * think_s))
                value = rng.choice(LEVELS)
                t0 = time.perf_counter()
                r = c.post(f"/assignments/{aid}/labels", json={"turn": m["turn"], "scale": m["scale"], "value": value})
                out["label"].append((time.perf_counter() - t0) * 1000)
                if r.status_code != 200:
                    errors.append(("label", r.status_code, r.text[:200]))
                    return
                out["saved"].append((aid, m["turn"], m["scale"], value))
            r = c.post(f"/assignments/{aid}/submit")
            if r.status_code != 200:
                errors.append(("submit", r.status_code, r.text[:200]))
                return


def run(url: str, n_items: int, n_annotators: int, k: int, think_s: float) -> dict:
    db = Database(url)
    projects.create_project(db, "bench", chats_corpus(n_items), "wochat", k, utcnow(), seed=1)
    codes = invitations.create_invitations(db, "annotation", "bench", n_annotators, utcnow())
    proc, base = serve(url)
    out: dict = {"join": [], "next": [], "label": [], "saved": []}
    errors: list = []
    try:
        httpx.get(base + "/annotate/bench", timeout=30)  # warm up: first imports, pools
        threads = [threading.Thread(target=annotator, args=(base, "bench", c, think_s, i, out, errors))
                   for i, c in enumerate(codes)]
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
        items = list(s.scalars(select(AnnotationItem)))
        live = s.execute(select(Assignment.item_id, Assignment.state)).all()
        stored = {(a, t, sc): v for a, t, sc, v in s.execute(select(Label.assignment_id, Label.turn, Label.scale,
                                                                    Label.value)).all()}
    db.dispose()
    finished_per_item: dict[int, int] = {}
    for item_id, state in live:
        if state == "finished":
            finished_per_item[item_id] = finished_per_item.get(item_id, 0) + 1
    over = sum(1 for i in items if finished_per_item.get(i.id, 0) > k or i.live > k)
    lost_items = sum(1 for i in items if finished_per_item.get(i.id, 0) < k)
    lost_labels = sum(1 for a, t, sc, v in out["saved"] if stored.get((a, t, sc)) != v)

    def p(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

    if not out["next"] or not out["label"] or not out["join"]:
        raise SystemExit(f"no request succeeded: {errors[:3]}")

    return {"wall_s": wall, "errors": errors, "next": out["next"], "label": out["label"],
            "next_median": statistics.median(out["next"]), "next_p95": p(out["next"], 0.95),
            "label_median": statistics.median(out["label"]), "label_p95": p(out["label"], 0.95),
            "join_median": statistics.median(out["join"]), "labels": len(out["saved"]), "lost_items": lost_items,
            "lost_labels": lost_labels, "over": over}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--annotators", type=int, default=50)
    ap.add_argument("--overlap", type=int, default=3)
    ap.add_argument("--think-ms", default="0,1000", help="Mean pause before each label (comma-separated settings).")
    ap.add_argument("--backends", default="sqlite,postgresql")
    a = ap.parse_args()
    print(f"{a.annotators} annotators over HTTP, {a.items} items (2 labels each), k = {a.overlap}; targets: median "
          f"<= {TARGET_MEDIAN_MS:g} ms, p95 <= {TARGET_P95_MS:g} ms, 0 lost, 0 over-assigned")
    print(f"{'backend':<11}{'think':>6}{'wall':>7}{'next med':>10}{'p95':>8}{'label med':>11}{'p95':>8}"
          f"{'labels':>8}{'lost items':>11}{'lost labels':>12}{'over':>6}{'errors':>7}{'join med':>10}")
    for backend in a.backends.split(","):
        for think in (float(x) for x in a.think_ms.split(",")):
            if backend == "sqlite":
                tmp = tempfile.mkdtemp(prefix="bench-annotate-")
                url, cleanup = f"sqlite:///{tmp}/service.sqlite", None
            else:
                base = os.environ.get("DIALEVAL_TEST_POSTGRES_URL", PG_DEFAULT)
                url, schema = fresh_schema_url(base)
                cleanup = (base, schema)
            try:
                r = run(url, a.items, a.annotators, a.overlap, think / 1000)
            finally:
                if cleanup:
                    drop_schema(*cleanup)
            print(f"{backend:<11}{think:>4.0f}ms{r['wall_s']:>6.0f}s{r['next_median']:>8.1f}ms{r['next_p95']:>6.0f}ms"
                  f"{r['label_median']:>9.1f}ms{r['label_p95']:>6.0f}ms{r['labels']:>8}{r['lost_items']:>11}"
                  f"{r['lost_labels']:>12}{r['over']:>6}{len(r['errors']):>7}{r['join_median']:>8.0f}ms", flush=True)
            for e in r["errors"][:3]:
                print("  error:", e)
    print("latencies are client side (HTTP round trip through one `dialeval serve` worker); think: mean pause "
          "before each label; join: the first request of each annotator (all at once), which registers them")


if __name__ == "__main__":
    main()
