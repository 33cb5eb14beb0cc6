"""Real `dialeval serve` processes (SQLite and PostgreSQL): a label saved, then the server killed with SIGKILL
and started again, is still there; exact overlap over HTTP across two worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
from annotation_support import Projects, chats_corpus
from service_support import at_once, free_port


def _serve(db_url: str, port: int, workers: int = 1) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "dialeval", "serve", "--database-url", db_url, "--port", str(port),
                             "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/tasks", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError("the server did not start")
        time.sleep(0.2)


def test_a_saved_label_survives_kill_9_and_restart(db_url):
    pj = Projects(db_url)
    try:
        code = pj.project("p1", chats_corpus(2), overlap=1, n_codes=1)[0]
    finally:
        pj.close()
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/annotation/p1"
    auth = {"Authorization": f"Bearer {code}"}
    proc = _serve(db_url, port)
    try:
        aid = httpx.post(base + "/next", headers=auth, timeout=30).json()["assignment"]
        r = httpx.post(f"{base}/assignments/{aid}/labels", headers=auth, timeout=30,
                       json={"turn": 1, "scale": "validity", "value": "ACCEPTABLE"})
        assert r.status_code == 200
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    proc = _serve(db_url, port)
    try:
        v = httpx.post(base + "/next", headers=auth, timeout=30).json()
        assert v["assignment"] == aid
        assert v["labels"] == [{"turn": 1, "scale": "validity", "value": "ACCEPTABLE"}]
    finally:
        proc.terminate()
        proc.wait(30)


def test_overlap_is_exact_over_http_across_two_worker_processes(db_url):
    """40 annotators over HTTP on `dialeval serve --workers 2`, 30 items, k = 3: every item exactly 3
    finished, nobody twice on an item."""
    from collections import Counter

    from sqlalchemy import select

    from dialeval.service.annotation.tables import AnnotationItem, Assignment
    from dialeval.service.db import Database

    pj = Projects(db_url)
    try:
        codes = pj.project("p1", chats_corpus(30), overlap=3, n_codes=40)
    finally:
        pj.close()
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/annotation/p1"
    errors: list = []

    def work(code: str) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {code}"}, timeout=60) as c:
            while True:
                v = c.post("/next").json()
                if v.get("done", True):
                    if "done" not in v:
                        errors.append(v)
                    return
                for m in v["missing"]:
                    r = c.post(f"/assignments/{v['assignment']}/labels",
                               json={"turn": m["turn"], "scale": m["scale"], "value": "VALID"})
                    if r.status_code != 200:
                        errors.append(r.text)
                r = c.post(f"/assignments/{v['assignment']}/submit")
                if r.status_code != 200:
                    errors.append(r.text)

    proc = _serve(db_url, port, workers=2)
    try:
        at_once([lambda c=c: work(c) for c in codes], timeout=600)
    finally:
        proc.terminate()
        proc.wait(30)
    assert errors == []
    db = Database(db_url)
    try:
        with db.read() as s:
            done = s.execute(select(Assignment.item_id, Assignment.annotator_id)
                             .where(Assignment.state == "finished")).all()
            items = list(s.scalars(select(AnnotationItem)))
    finally:
        db.dispose()
    assert set(Counter(i for i, _a in done).values()) == {3} and len(items) == 30
    assert len(set(done)) == len(done) == 90
    assert {(i.finished, i.live) for i in items} == {(3, 3)}
