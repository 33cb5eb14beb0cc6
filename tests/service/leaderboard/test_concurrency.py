"""Quotas hold under concurrency: 20 simultaneous uploads by one team with 3 left accept exactly 3.

On SQLite and on PostgreSQL, through a real server (uvicorn) and real HTTP clients.
"""

from __future__ import annotations

import httpx
from service_support import RUN, LiveServer, Service, at_once, dumps
from sqlalchemy import func, select

from dialeval.service.leaderboard.tables import Submission, SubmissionFile


def test_twenty_simultaneous_uploads_with_three_left_accept_exactly_three(db_url):
    s = Service(db_url, daily_limit=5, total_limit=50)
    try:
        token = s.team()
        for _ in range(2):
            assert s.submit(token).status_code == 201
        body = dumps(RUN)
        with LiveServer(s.app) as server:

            def upload() -> int:
                with httpx.Client(base_url=server.url, timeout=60) as c:
                    return c.post("/api/tasks/t1/submissions", headers={"Authorization": f"Bearer {token}"},
                                  files={"file": ("run.json", body, "application/json")}).status_code

            statuses = at_once([upload] * 20)
        assert sorted(statuses) == [201] * 3 + [429] * 17, statuses
        with s.db.read() as db:
            assert db.scalar(select(func.count()).select_from(Submission)) == 5
            assert db.scalar(select(func.count()).select_from(SubmissionFile)) == 5
    finally:
        s.close()
