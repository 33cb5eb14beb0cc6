"""Submitting a run: score it through the library, then check the quota and store it in one locked transaction.

The order of refusals: a team awaiting approval (403), unknown task (404), closed or past its deadline
(409), quota spent (429, checked once cheaply before scoring and again, authoritatively, under the lock),
invalid run (422: it never counts). Scoring happens outside the lock, so a slow run does not hold up the other teams.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import select, update

from dialeval.service.db import Database, Team
from dialeval.service.errors import Conflict, NotFound, QuotaSpent
from dialeval.service.leaderboard.deadline import task_state
from dialeval.service.leaderboard.quota import Quota, after_accepting, decide
from dialeval.service.leaderboard.runs import RunScores, all_finite, read_run, rounded_public, score_run
from dialeval.service.leaderboard.tables import Submission, SubmissionFile, Task
from dialeval.service.leaderboard.tasks import get_task, golds, list_tasks
from dialeval.service.teams import require_approved
from dialeval.service.uploads import clean_filename


def _check_open(task: Task, closed_at: datetime | None, deadline: datetime | None, now: datetime) -> None:
    state = task_state(closed_at, deadline, now)
    if state == "closed":
        raise Conflict(f"task {task.name!r} is closed (since {closed_at.isoformat()}); it takes no more runs")
    if state == "past its deadline":
        raise Conflict(f"the deadline of task {task.name!r} ({deadline.isoformat()}) has passed")


def _times(s, task_id: int, team_id: int) -> list[datetime]:
    return list(s.scalars(select(Submission.created_at).where(Submission.task_id == task_id,
                                                               Submission.team_id == team_id)))


def _quota(task: Task, times: list[datetime], now: datetime) -> Quota:
    return decide(now, times, daily_limit=task.daily_limit, total_limit=task.total_limit, deadline=task.deadline)


def _refuse(q: Quota) -> QuotaSpent:
    return QuotaSpent(q.reason, headers={"Retry-After": str(q.retry_after)} if q.retry_after else None)


def quota_of(db: Database, team: Team, task: Task, now: datetime) -> Quota:
    """The team's quota on ``task`` at ``now`` (a read; the binding check is in :func:`submit`)."""
    with db.read() as s:
        return _quota(task, _times(s, task.id, team.id), now)


def before_scoring(db: Database, team: Team, task_name: str, clock: Callable[[], datetime]) -> Task:
    """The checks made before a run is scored: approved team, known open task, quota left (cheaply).

    Raises
    ------
    Forbidden, NotFound, Conflict, QuotaSpent
        See the module's docstring.
    """
    require_approved(team)
    task = get_task(db, task_name)
    _check_open(task, task.closed_at, task.deadline, clock())
    q = quota_of(db, team, task, clock())
    if not q.allowed:
        raise _refuse(q)
    return task


def _from_form(s, task: Task, team: Team, form_nonce: str | None) -> Submission | None:
    """The team's run of ``task`` sent with the page form ``form_nonce`` (None without one)."""
    if not form_nonce:
        return None
    return s.scalar(select(Submission).where(Submission.task_id == task.id, Submission.team_id == team.id,
                                             Submission.form_nonce == form_nonce).limit(1))


def _answer(sub: Submission, task: Task, times: list[datetime], now: datetime, *, repeated: bool) -> dict:
    """What an upload is answered with: the run, its public-half scores and the quota left."""
    left = after_accepting(now, times, daily_limit=task.daily_limit, total_limit=task.total_limit,
                           deadline=task.deadline) if not repeated else _quota(task, times, now)
    return {"id": sub.id, "task": task.name, "created_at": sub.created_at.isoformat(),
            "scores": rounded_public(sub.public_scores),
            "scored_on": {"half": "public", "dialogues": len(task.public_ids)},
            "on_leaderboard": sub.on_leaderboard,
            "remaining_today": left.remaining_today, "remaining_total": left.remaining_total,
            **({"repeated": True} if repeated else {})}


def sent_before(db: Database, team: Team, task: Task, form_nonce: str | None, now: datetime) -> dict | None:
    """The answer to the run already sent with this page form (a reload of the result page), or None: that run
    is shown again, neither scored nor counted again (``"repeated": True``)."""
    if not form_nonce:
        return None
    with db.read() as s:
        sub = _from_form(s, task, team, form_nonce)
        return None if sub is None else _answer(sub, task, _times(s, task.id, team.id), now, repeated=True)


def store(db: Database, team: Team, task: Task, data: bytes, filename: str, result: RunScores,
          clock: Callable[[], datetime], *, on_leaderboard: bool = True, form_nonce: str | None = None) -> dict:
    """Store a scored run in the locked transaction that checks, authoritatively, task state and quota.

    ``form_nonce``: the random value of the page form the run came from; a second run with the same one (the
    form sent twice: a reload, a double click) is not stored, and the first is answered instead.
    """
    with db.write() as s:
        # The lock: this team's row (PostgreSQL; SQLite holds its one write lock already). The task row
        # is shared-locked so that closing waits for submissions in flight, and they see a close.
        s.execute(select(Team.id).where(Team.id == team.id).with_for_update())
        closed_at, deadline = s.execute(select(Task.closed_at, Task.deadline).where(Task.id == task.id)
                                        .with_for_update(read=True)).one()
        now = clock()
        times = _times(s, task.id, team.id)
        earlier = _from_form(s, task, team, form_nonce)
        if earlier is not None:
            return _answer(earlier, task, times, now, repeated=True)
        _check_open(task, closed_at, deadline, now)
        q = _quota(task, times, now)
        if not q.allowed:
            raise _refuse(q)
        sub = Submission(task_id=task.id, team_id=team.id, created_at=now, filename=filename, size=len(data),
                         sha256=hashlib.sha256(data).hexdigest(), on_leaderboard=bool(on_leaderboard),
                         chosen=False, public_scores=result.public, final_scores=None, settings=result.settings,
                         form_nonce=form_nonce or None)
        s.add(sub)
        s.flush()
        s.add(SubmissionFile(submission_id=sub.id, data=data))
        return _answer(sub, task, times, now, repeated=False)


def submit(db: Database, team: Team, task_name: str, data: bytes, filename: str,
           clock: Callable[[], datetime], *, on_leaderboard: bool = True) -> dict:
    """Score (in this thread) and store a run of ``team`` for a task; the answer holds public-half scores only.

    The service's routes do the same in three steps (:func:`before_scoring`, scoring in a scoring process,
    :func:`store`); this is the whole of it as one call.

    Returns
    -------
    dict
        ``{"id", "task", "created_at", "scores": {column: mean}, "scored_on": {"half", "dialogues"},
        "on_leaderboard", "remaining_today", "remaining_total"}``.

    Raises
    ------
    NotFound, Conflict, QuotaSpent, dialeval.DialevalError
        See the module's docstring.
    """
    filename = clean_filename(filename, "run.json")
    task = before_scoring(db, team, task_name, clock)
    full, public = golds(db, task)
    result = score_run(read_run(data, filename, task.subtask), task.subtask, task.columns, full, public,
                       filename=filename)
    return store(db, team, task, data, filename, result, clock, on_leaderboard=on_leaderboard)


def choose(db: Database, team: Team, task_name: str, submission_id: int) -> dict:
    """Mark one of the team's runs as its pick for the final ranking (else its latest run counts); a run uploaded
    not on the leaderboard cannot be chosen (409): the board never ranks it."""
    task = get_task(db, task_name)
    with db.write() as s:
        closed_at = s.scalar(select(Task.closed_at).where(Task.id == task.id).with_for_update(read=True))
        if closed_at is not None:
            raise Conflict(f"task {task.name!r} is closed; the final pick can no longer change")
        # An id beyond the 32-bit column is no submission (PostgreSQL would refuse the lookup).
        sub = s.get(Submission, submission_id) if 1 <= submission_id <= 2**31 - 1 else None
        if sub is None or sub.team_id != team.id or sub.task_id != task.id:
            raise NotFound(f"your team has no submission {submission_id} to task {task.name!r}")
        if not sub.on_leaderboard:  # the board never shows such a run: the pick would be dropped without a word
            raise Conflict(f"submission {submission_id} was uploaded not on the leaderboard, which never ranks it; "
                           "choose a run uploaded on the leaderboard")
        s.execute(update(Submission).where(Submission.task_id == task.id, Submission.team_id == team.id)
                  .values(chosen=False))
        sub.chosen = True
    return {"id": submission_id, "task": task.name, "chosen": True}


def _shown(scores: dict | None) -> dict | None:
    """Stored scores as they may be shown: None if any is not a finite number (rows of older versions)."""
    return scores if all_finite(scores) else None


def submission_info(sub: Submission, task: Task) -> dict:
    """A submission as its team sees it: public-half means before close, final means after."""
    final = task.closed_at is not None
    return {"id": sub.id, "task": task.name, "created_at": sub.created_at.isoformat(), "filename": sub.filename,
            "size": sub.size, "sha256": sub.sha256, "on_leaderboard": sub.on_leaderboard, "chosen": sub.chosen,
            "scores": _shown(sub.final_scores if final else rounded_public(sub.public_scores)),
            "final_error": sub.final_error,
            "scored_on": {"half": "all" if final else "public",
                          "dialogues": task.n_dialogues if final else len(task.public_ids)}}


def me(db: Database, team: Team, now: datetime) -> dict:
    """The team (``approved``: whether it may submit yet), its submissions (newest first) and per task its
    remaining quota, deadline and state (``open``, ``past its deadline`` or ``closed``)."""
    tasks = {t.id: t for t in list_tasks(db)}
    with db.read() as s:
        subs = list(s.scalars(select(Submission).where(Submission.team_id == team.id)
                              .order_by(Submission.created_at.desc(), Submission.id.desc())))
    quotas = {}
    for t in tasks.values():
        times = [x.created_at for x in subs if x.task_id == t.id]
        q = _quota(t, times, now)
        quotas[t.name] = {"remaining_today": q.remaining_today, "remaining_total": q.remaining_total,
                          "retry_after": q.retry_after, "closed": t.closed_at is not None,
                          "deadline": t.deadline.isoformat() if t.deadline else None,
                          "state": task_state(t.closed_at, t.deadline, now)}
    # approved: False while the organisers have not approved the team (registration mode approve): no task takes
    # its runs yet, whatever its quota says
    return {"team": team.name, "affiliation": team.affiliation, "approved": team.approved_at is not None,
            "submissions": [submission_info(x, tasks[x.task_id]) for x in subs], "quota": quotas}
