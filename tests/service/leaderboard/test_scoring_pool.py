"""Issue 17, finding 8: uploads are scored in scoring processes (a dead one is replaced, nothing counted
twice or lost) and leaderboard reads reuse a computed board only while the database says it is current."""

from __future__ import annotations

import asyncio

from service_support import Service, dumps

from dialeval.service import teams
from dialeval.service.leaderboard import board, scoring_pool, submissions, tasks


def test_runs_are_scored_in_another_process_with_the_same_scores(sqlite_url):
    s = Service(sqlite_url)
    try:
        assert s.app.state.scorer.processes >= 1
        token = s.team()
        r = s.submit(token)
        assert r.status_code == 201
        # the same run scored in this thread, as the library call does
        direct = submissions.submit(s.db, teams.authenticate(s.db, token), "t1", dumps(s.run), "run.json", s.clock)
        assert direct["scores"] == r.json()["scores"]
        bad = s.submit(token, [{"id": "d0000", "quality": {"A": {"9": 1}}}])
        assert bad.status_code == 422 and "run.json: dialogue d0000: quality" in bad.json()["detail"]
        assert s.client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json()["quota"]["t1"][
            "remaining_total"] == 48
    finally:
        s.close()


def test_a_dead_scoring_process_is_replaced(sqlite_url):
    s = Service(sqlite_url)
    try:
        token = s.team()
        assert s.submit(token).status_code == 201
        pool = scoring_pool._pool(s.app.state.scorer.processes)
        for p in list(pool._processes.values()):
            p.kill()
            p.join()
        r = s.submit(token)
        assert r.status_code == 201, r.text
        assert scoring_pool._pool(s.app.state.scorer.processes) is not pool
        assert [x["id"] for x in s.client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
                .json()["submissions"]] == [2, 1]
    finally:
        s.close()


def test_uploads_in_flight_are_bounded(sqlite_url):
    s = Service(sqlite_url)
    try:
        scorer = scoring_pool.Scorer(s.db, 1, slots=2)
        seen, most = [0], [0]

        async def one() -> None:
            async with scorer.slot():
                seen[0] += 1
                most[0] = max(most[0], seen[0])
                await asyncio.sleep(0.01)
                seen[0] -= 1

        async def many() -> None:
            await asyncio.gather(*(one() for _ in range(30)))

        asyncio.run(many())
        assert most[0] == 2
    finally:
        s.close()


def test_the_leaderboard_is_reused_only_while_the_database_says_it_is_current(sqlite_url, monkeypatch):
    s = Service(sqlite_url)
    computed = []
    compute = board.compute
    monkeypatch.setattr(board, "compute", lambda *a, **k: computed.append(1) or compute(*a, **k))
    try:
        a, b = s.team("team-a"), s.team("team-b")
        rows = lambda **q: s.client.get("/api/tasks/t1/leaderboard", params=q).json()["rows"]  # noqa: E731
        assert rows() == [] and rows() == [] and len(computed) == 1
        assert s.submit(a).status_code == 201
        assert [r["team"] for r in rows()] == ["team-a"] and len(computed) == 2
        rows()
        assert len(computed) == 2  # nothing changed: reused
        # stored by another worker process: this process's memory is not told, the database is
        submissions.submit(s.db, teams.authenticate(s.db, b), "t1", dumps(s.run), "b.json", s.clock)
        assert sorted(r["team"] for r in rows()) == ["team-a", "team-b"]
        run_rows = rows(per="run")
        assert [r["chosen"] for r in run_rows] == [False, False]
        s.client.post("/api/tasks/t1/submissions/1/choose", headers={"Authorization": f"Bearer {a}"})
        assert [r["chosen"] for r in rows(per="run") if r["id"] == 1] == [True]
        tasks.close_task(s.db, "t1", s.clock())
        final = s.client.get("/api/tasks/t1/leaderboard").json()
        assert final["final"] is True and final["task"]["closed"] is True
    finally:
        s.close()


def _stopped_server(sqlite_url: str, sig: int) -> tuple[int, str, list]:
    """A ``dialeval serve`` process with one scoring process, sent ``sig`` once it has scored one upload:
    ``(its exit status, its stderr, its children when the signal was sent)``."""
    import os
    import subprocess
    import sys
    import time

    import httpx
    import psutil
    from service_support import free_port

    s = Service(sqlite_url)
    token = s.team()
    s.close()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", "from dialeval.cli.main import main; main()", "serve",
                             "--database-url", sqlite_url, "--port", str(port), "--scoring-processes", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy(), text=True)
    children: list = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/api/tasks/t1/submissions",
                               headers={"Authorization": f"Bearer {token}"},
                               files={"file": ("run.json", dumps(s.run), "application/json")}, timeout=30)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        assert r.status_code == 201, r.text
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children  # the scoring process (and multiprocessing's resource tracker)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, children


def _left(children: list) -> list:
    """The processes of ``children`` still running 10 s later (killed, so that no test leaves any)."""
    import psutil

    _gone, alive = psutil.wait_procs(children, timeout=10)
    for p in alive:
        p.kill()
    return alive


def test_scoring_processes_end_with_a_killed_server(sqlite_url):
    import signal

    _status, _err, children = _stopped_server(sqlite_url, signal.SIGKILL)
    assert _left(children) == []


def test_a_server_stopped_by_sigterm_stops_its_scoring_processes_cleanly(sqlite_url):
    """SIGTERM (how a service manager stops it): the app's shutdown stops the scoring processes, so the server
    ends with none left and no multiprocessing "leaked semaphore" warning on stderr."""
    import signal

    status, err, children = _stopped_server(sqlite_url, signal.SIGTERM)
    assert status in (0, -signal.SIGTERM), err   # uvicorn ends by the signal it was stopped by
    assert _left(children) == [] and "leaked" not in err and "Traceback" not in err, err
