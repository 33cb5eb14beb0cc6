"""Tasks: a declared task (:mod:`dialeval.tasks`) over a test set whose gold stays on the server, split once
into a public and a hidden half.

The organiser creates a task from a gold file (:func:`create_task`); the split is drawn once from a
secret the server generates (:func:`new_secret`, stored in the task's row, never shown: no one who knows
the gold, the ids or any seed can recompute it) or, only when asked, from an explicit seed (reproducible,
for tests); :func:`close_task` scores every stored run on 100% of the test set (a run that cannot be
scored any more is recorded as failed, never blocks the close).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
from datetime import datetime

import numpy as np
from sqlalchemy import select

from dialeval.errors import DialevalError, describe, quote, refused
from dialeval.progress import track
from dialeval.scoring import PreparedGold
from dialeval.service.db import Database
from dialeval.service.errors import Conflict, NotFound
from dialeval.service.leaderboard.deadline import check_deadline
from dialeval.service.leaderboard.quota import DAILY_LIMIT, TOTAL_LIMIT
from dialeval.service.leaderboard.runs import SUBTASKS, columns_of, read_run, run_layout, score_run
from dialeval.service.leaderboard.tables import Submission, SubmissionFile, Task, TaskGold
from dialeval.service.leaderboard.uploaded import gold_from_bytes
from dialeval.service.names import check_slug, is_slug
from dialeval.service.uploads import clean_filename
from dialeval.tasks import get as declared_task

MAX_LIMIT = 1_000_000
"""Largest daily or total quota (the columns are 32-bit integers on PostgreSQL)."""
MAX_SEED = 2**31 - 1
SECRET_BYTES = 32
_SPLIT_CONTEXT = b"dialeval public/hidden split v1"


def new_secret() -> bytes:
    """A fresh split secret: 256 bits from :func:`secrets.token_bytes` (stored with the task, never shown)."""
    return secrets.token_bytes(SECRET_BYTES)


def _secret_seed(secret: bytes) -> int:
    """The generator's seed: HMAC-SHA-256 of a fixed context under the secret (256 bits)."""
    return int.from_bytes(hmac.new(secret, _SPLIT_CONTEXT, hashlib.sha256).digest(), "big")


def split_public(ids: list[str], fraction: float, seed: int | None = None, *, secret: bytes | None = None
                 ) -> list[str]:
    """The public half: ``round(fraction * n)`` ids drawn without replacement, in gold order.

    The draw is seeded from ``secret`` (the service's default: 32 random bytes, so the split cannot be
    recomputed without it) or, when ``seed`` is given instead, from that seed (reproducible: tests).

    Examples
    --------
    >>> ids = [str(i) for i in range(10)]
    >>> split_public(ids, 0.5, seed=0) == split_public(ids, 0.5, 0)
    True
    >>> len(split_public([str(i) for i in range(390)], 0.5, secret=new_secret()))
    195
    """
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction <= 1:
        raise refused("public fraction", fraction, "numbers in (0, 1]")
    if (seed is None) == (secret is None):
        raise DialevalError("give either a seed or a secret to draw the split from")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        raise refused("seed", seed, f"integers from 0 to {MAX_SEED}")
    if secret is not None and (not isinstance(secret, bytes) or len(secret) < 16):
        raise DialevalError("a split secret must be at least 16 random bytes")
    k = math.floor(fraction * len(ids) + 0.5)
    if k < 1:
        raise DialevalError(f"public fraction {fraction} of {len(ids)} dialogues leaves no public dialogue")
    rng = np.random.default_rng(seed if secret is None else _secret_seed(secret))
    picked = rng.permutation(len(ids))[:k]
    return [ids[i] for i in np.sort(picked)]


def _check_limit(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_LIMIT:
        raise refused(what, v, f"integers from 1 to {MAX_LIMIT}")
    return v


def create_task(db: Database, name: str, subtask: str, gold: bytes, gold_name: str, now: datetime, *,
                public_fraction: float = 0.5, seed: int | None = None, daily_limit: int = DAILY_LIMIT,
                total_limit: int = TOTAL_LIMIT, deadline: datetime | None = None, rank_by: str | None = None) -> Task:
    """Create a task from the bytes of a gold file: any annotated corpus dialeval reads, in one file or a ZIP
    of its folder (:mod:`dialeval.service.leaderboard.uploaded`).

    Parameters
    ----------
    name : str
        1-64 characters of ``A-Z a-z 0-9 . _ -`` (it appears in URLs and file names).
    subtask : str
        What the task scores: a declared task's key (:data:`dialeval.tasks.KEYS`: ``quality``, ``nugget``,
        ``dbdc-breakdown``, ...); the gold must label its scales.
    public_fraction : float in (0, 1], default 0.5
        Share of the test set scored before close; the rest is hidden until then.
    seed : int in [0, 2**31), optional
        Only to make the split reproducible (tests): anyone who knows the seed and the ids can recompute the
        hidden half. Default: the split is drawn from a new secret (:func:`new_secret`), stored with the
        task and never shown.
    daily_limit, total_limit : int >= 1
        Scored submissions per team per UTC day, and in all.
    deadline : aware datetime, optional
        After it, submissions are refused (409); kept in UTC (:func:`.deadline.check_deadline`).
    rank_by : str, optional
        The score column that picks a team's best run; default: the first column of the subtask's
        main measure (the first of :data:`dialeval.scoring.TASKS`).

    Raises
    ------
    DialevalError
        On a bad argument or gold file (the scorer's message). Conflict if the name is taken.
    """
    check_slug(name, "task", DialevalError)
    if not isinstance(subtask, str) or subtask not in SUBTASKS:
        raise DialevalError(f"task {describe(subtask)} is not allowed; allowed are " + ", ".join(SUBTASKS))
    gold_name = clean_filename(gold_name, "gold.json")
    _check_limit(daily_limit, "daily limit")
    _check_limit(total_limit, "total limit")
    if deadline is not None:
        deadline = check_deadline(deadline)  # in UTC, as stored and shown
    try:
        prepared = gold_from_bytes(gold, gold_name)
    except DialevalError as e:
        raise e.located(file=gold_name) from None
    columns = columns_of(prepared, subtask)
    rank_by = rank_by or columns[0]
    if rank_by not in columns:
        raise refused("rank-by column", rank_by, ", ".join(columns))
    secret = new_secret() if seed is None else None
    public = split_public(list(prepared.ids), public_fraction, seed, secret=secret)
    task = Task(name=name, subtask=subtask, columns=columns, rank_by=rank_by, n_dialogues=len(prepared),
                public_ids=public, public_fraction=float(public_fraction), seed=seed, split_secret=secret,
                daily_limit=daily_limit,
                total_limit=total_limit, deadline=deadline, closed_at=None, created_at=now,
                gold_name=gold_name, gold_sha256=hashlib.sha256(gold).hexdigest())
    with db.write() as s:
        if s.scalar(select(Task.id).where(Task.name == name)) is not None:
            raise Conflict(f"a task named {name!r} exists already")
        s.add(task)
        s.flush()
        s.add(TaskGold(task_id=task.id, data=gold))
    _cache_put(task, (prepared, prepared.subset(task.public_ids)))
    return task


def get_task(db: Database, name: str) -> Task:
    """The task called ``name``; :class:`NotFound` (listing the tasks) if there is none."""
    with db.read() as s:
        task = s.scalar(select(Task).where(Task.name == name)) if is_slug(name) else None
        if task is None:
            names = s.scalars(select(Task.name).order_by(Task.name)).all()
            raise NotFound(f"no task named {describe(name)}; tasks are: " + (", ".join(names) or "(none yet)"))
    return task


def list_tasks(db: Database) -> list[Task]:
    with db.read() as s:
        return list(s.scalars(select(Task).order_by(Task.created_at, Task.id)))


def task_info(task: Task) -> dict:
    """What anyone may know about a task (no hidden id: only the sizes of the halves)."""
    declared = declared_task(task.subtask)
    return {"name": task.name, "subtask": task.subtask, "task": declared.name, "title": declared.title,
            "run_layout": run_layout(task.subtask), "columns": task.columns, "rank_by": task.rank_by,
            "dialogues": task.n_dialogues, "public_dialogues": len(task.public_ids),
            "daily_limit": task.daily_limit, "total_limit": task.total_limit,
            "deadline": task.deadline.isoformat() if task.deadline else None,
            "closed": task.closed_at is not None,
            "closed_at": task.closed_at.isoformat() if task.closed_at else None}


# Prepared gold, built once per task and process (scoring many runs against it is then fast).
_CACHE: dict[tuple[int, str], tuple[PreparedGold, PreparedGold]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


def prepare_golds(data: bytes, gold_name: str, public_ids) -> tuple[PreparedGold, PreparedGold]:
    """``(full test set, public half)`` prepared from the bytes of a task's gold file."""
    full = gold_from_bytes(data, gold_name)
    return full, full.subset(public_ids)


def _cache_put(task: Task, pair: tuple[PreparedGold, PreparedGold]) -> tuple[PreparedGold, PreparedGold]:
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[(task.id, task.gold_sha256)] = pair
    return pair


def golds(db: Database, task: Task) -> tuple[PreparedGold, PreparedGold]:
    """The task's prepared gold: ``(full test set, public half)``, loaded once per process."""
    with _CACHE_LOCK:
        pair = _CACHE.get((task.id, task.gold_sha256))
    if pair is not None:
        return pair
    return _cache_put(task, prepare_golds(gold_data(db, task), task.gold_name, task.public_ids))


def gold_data(db: Database, task: Task) -> bytes:
    """The bytes of the task's gold file, as the organiser uploaded them."""
    with db.read() as s:
        return s.get(TaskGold, task.id).data


def close_task(db: Database, name: str, now: datetime) -> Task:
    """Close a task: score every stored run on 100% of the test set; refuse submissions from now on.

    A stored run that cannot be scored any more (stored by an older version, or a score that is not a
    finite number) gets no final score and its reason in ``final_error``: it is off the final leaderboard
    and never stops the close.

    Raises
    ------
    NotFound, Conflict
        If there is no such task, or it is closed already.
    """
    task = get_task(db, name)
    if task.closed_at is not None:
        raise Conflict(f"task {name!r} was closed at {task.closed_at.isoformat()}")
    full, _ = golds(db, task)
    with db.write() as s:
        task = s.scalar(select(Task).where(Task.id == task.id).with_for_update())
        if task.closed_at is not None:
            raise Conflict(f"task {name!r} was closed at {task.closed_at.isoformat()}")
        task.closed_at = now  # taken first: a submission racing with the close now sees the task closed
        s.flush()
        subs = s.scalars(select(Submission).where(Submission.task_id == task.id).order_by(Submission.id)).all()
        for sub in track(subs, f"final scores of {name}"):
            data = s.get(SubmissionFile, sub.id).data
            try:
                sub.final_scores = score_run(read_run(data, sub.filename), task.subtask, task.columns,
                                             full, filename=sub.filename).full
                sub.final_error = None
            except Exception as e:
                sub.final_scores = None
                what = str(e) if isinstance(e, DialevalError) else f"{type(e).__name__}: {e}"
                sub.final_error = quote(f"not scored on the full test set: {what}", 480)
    return task


def final_errors(db: Database, task: Task) -> list[tuple[int, str]]:
    """The runs of a closed task that got no final score: ``(submission id, why)``, oldest first."""
    with db.read() as s:
        rows = s.execute(select(Submission.id, Submission.final_error).where(
            Submission.task_id == task.id, Submission.final_error.is_not(None)).order_by(Submission.id))
        return [(int(i), str(e)) for i, e in rows]
