"""Tasks: a subtask over a test set whose gold stays on the server, split once into a public and a hidden half.

The organiser creates a task from a gold file (:func:`create_task`); the split is drawn once from
``seed`` and stored; :func:`close_task` scores every stored run on 100% of the test set.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from datetime import datetime

import numpy as np
from sqlalchemy import select

from dialeval.errors import DialevalError
from dialeval.io.jsonarray import parse_bytes
from dialeval.progress import track
from dialeval.scoring import PreparedGold, load_gold
from dialeval.service.db import Database, Submission, SubmissionFile, Task, TaskGold
from dialeval.service.errors import Conflict, NotFound
from dialeval.service.runs import SUBTASKS, columns_of, score_run

TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def split_public(ids: list[str], fraction: float, seed: int) -> list[str]:
    """The public half: ``round(fraction * n)`` ids drawn without replacement with ``seed``, in gold order.

    Examples
    --------
    >>> split_public([str(i) for i in range(10)], 0.5, seed=0) == split_public([str(i) for i in range(10)], 0.5, 0)
    True
    >>> len(split_public([str(i) for i in range(390)], 0.5, seed=1))
    195
    """
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction <= 1:
        raise DialevalError(f"public fraction {fraction!r} is not allowed; allowed are numbers in (0, 1]")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DialevalError(f"seed {seed!r} is not allowed; allowed are integers >= 0")
    k = math.floor(fraction * len(ids) + 0.5)
    if k < 1:
        raise DialevalError(f"public fraction {fraction} of {len(ids)} dialogues leaves no public dialogue")
    picked = np.random.default_rng(seed).permutation(len(ids))[:k]
    return [ids[i] for i in np.sort(picked)]


def _check_limit(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise DialevalError(f"{what} {v!r} is not allowed; allowed are integers >= 1")
    return v


def create_task(db: Database, name: str, subtask: str, gold: bytes, gold_name: str, now: datetime, *,
                public_fraction: float = 0.5, seed: int = 0, daily_limit: int = 5, total_limit: int = 50,
                deadline: datetime | None = None, rank_by: str | None = None) -> Task:
    """Create a task from the bytes of a gold file (STC-3/DialEval JSON with annotations).

    Parameters
    ----------
    name : str
        1-64 characters of ``A-Z a-z 0-9 . _ -`` (it appears in URLs and file names).
    subtask : {'quality', 'nugget'}
        What the task scores (the choices are :data:`dialeval.scoring.TASKS`).
    public_fraction : float in (0, 1], default 0.5
        Share of the test set scored before close; the rest is hidden until then.
    seed : int >= 0
        Seed of the split (drawn once, stored, never changed).
    daily_limit, total_limit : int >= 1
        Scored submissions per team per UTC day, and in all.
    deadline : aware datetime, optional
        After it, submissions are refused (409).
    rank_by : str, optional
        The score column that picks a team's best run; default: the first column of the subtask's
        main measure (the first of :data:`dialeval.scoring.TASKS`).

    Raises
    ------
    DialevalError
        On a bad argument or gold file (the scorer's message). Conflict if the name is taken.
    """
    if not isinstance(name, str) or not TASK_NAME.fullmatch(name):
        raise DialevalError(f"task name {name!r} is not allowed; allowed are 1-64 characters of "
                            "A-Z a-z 0-9 . _ - (starting with a letter or digit)")
    if subtask not in SUBTASKS:
        raise DialevalError(f"subtask {subtask!r} is not allowed; allowed are " + ", ".join(SUBTASKS))
    _check_limit(daily_limit, "daily limit")
    _check_limit(total_limit, "total limit")
    if deadline is not None and (not isinstance(deadline, datetime) or deadline.tzinfo is None):
        raise DialevalError(f"deadline {deadline!r} must be a date and time with a time zone")
    try:
        prepared = load_gold(parse_bytes(gold, file=gold_name))
    except DialevalError as e:
        raise e.located(file=gold_name) from None
    columns = columns_of(prepared, subtask)
    rank_by = rank_by or columns[0]
    if rank_by not in columns:
        raise DialevalError(f"rank-by column {rank_by!r} is not allowed; allowed are " + ", ".join(columns))
    public = split_public(list(prepared.ids), public_fraction, seed)
    task = Task(name=name, subtask=subtask, columns=columns, rank_by=rank_by, n_dialogues=len(prepared),
                public_ids=public, public_fraction=float(public_fraction), seed=seed, daily_limit=daily_limit,
                total_limit=total_limit, deadline=deadline, closed_at=None, created_at=now,
                gold_name=gold_name, gold_sha256=hashlib.sha256(gold).hexdigest())
    with db.write() as s:
        if s.scalar(select(Task.id).where(Task.name == name)) is not None:
            raise Conflict(f"a task named {name!r} exists already")
        s.add(task)
        s.flush()
        s.add(TaskGold(task_id=task.id, data=gold))
    _cache_put(task, prepared)
    return task


def get_task(db: Database, name: str) -> Task:
    """The task called ``name``; :class:`NotFound` (listing the tasks) if there is none."""
    with db.read() as s:
        task = s.scalar(select(Task).where(Task.name == name))
        if task is None:
            names = s.scalars(select(Task.name).order_by(Task.name)).all()
            raise NotFound(f"no task named {name!r}; tasks are: " + (", ".join(names) or "(none yet)"))
    return task


def list_tasks(db: Database) -> list[Task]:
    with db.read() as s:
        return list(s.scalars(select(Task).order_by(Task.created_at, Task.id)))


def task_info(task: Task) -> dict:
    """What anyone may know about a task (no hidden id: only the sizes of the halves)."""
    return {"name": task.name, "subtask": task.subtask, "columns": task.columns, "rank_by": task.rank_by,
            "dialogues": task.n_dialogues, "public_dialogues": len(task.public_ids),
            "daily_limit": task.daily_limit, "total_limit": task.total_limit,
            "deadline": task.deadline.isoformat() if task.deadline else None,
            "closed": task.closed_at is not None,
            "closed_at": task.closed_at.isoformat() if task.closed_at else None}


# Prepared gold, built once per task and process (scoring many runs against it is then fast).
_CACHE: dict[tuple[int, str], tuple[PreparedGold, PreparedGold]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


def _cache_put(task: Task, full: PreparedGold) -> tuple[PreparedGold, PreparedGold]:
    pair = (full, full.subset(task.public_ids))
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
    with db.read() as s:
        data = s.get(TaskGold, task.id).data
    return _cache_put(task, load_gold(parse_bytes(data, file=task.gold_name)))


def close_task(db: Database, name: str, now: datetime) -> Task:
    """Close a task: score every stored run on 100% of the test set; refuse submissions from now on.

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
            sub.final_scores = score_run(parse_bytes(data, file=sub.filename), task.subtask, task.columns,
                                         full, filename=sub.filename).full
    return task
