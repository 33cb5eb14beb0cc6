"""Scoring uploads off the request threads and the event loop: a pool of processes, few uploads at once.

Parsing and scoring a large run is pure Python and NumPy work that holds the GIL; done in a request thread
it stalls every other request of the worker (leaderboard reads took seconds during a rush). Here it runs
in a :class:`~concurrent.futures.ProcessPoolExecutor` shared by the worker process (``processes`` children,
started once, at a lower CPU priority, ending with the worker), while the request waits without holding a
thread. At most :attr:`Scorer.slots` uploads per worker are read and scored at once (an asyncio
semaphore: waiting uploads hold neither a thread nor a parsed run), so memory stays bounded however many
teams upload together.

A child keeps the prepared gold of the last few tasks (keyed by the gold's SHA-256 and the public ids), and
is sent the gold's bytes only the first time it scores a task. A run the scorer refuses comes back as its
message (a 422, as in process); a child that dies (out of memory) is replaced and the upload answered 503,
never stored and never counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import multiprocessing
import os
import threading
import time
import weakref
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from fastapi.concurrency import run_in_threadpool

from dialeval.errors import DialevalError
from dialeval.service.db import Database
from dialeval.service.errors import Unavailable
from dialeval.service.leaderboard.runs import RunScores, read_run, score_run
from dialeval.service.leaderboard.tables import Task
from dialeval.service.leaderboard.tasks import gold_data, golds, prepare_golds

CHILD_GOLDS = 4
"""Prepared golds a scoring process keeps (tasks scored recently)."""
NICE = 10
"""Scoring processes run at this lower CPU priority: a request of the worker is served first."""
PARENT_POLL_S = 1.0
"""How often a scoring process checks that its worker process is still there."""

_NEED_GOLD = "need-gold"


# ---- in the scoring process ---------------------------------------------------------------------
_child_golds: OrderedDict = OrderedDict()


def _start_child(parent: int) -> None:
    """A scoring process starts at a lower priority (:data:`NICE`), so reads are not queued behind it, and
    ends when its worker process is gone (even killed: an orphan would wait on its queue for ever)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICE)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="dialeval-parent-watch", daemon=True).start()


def _score_in_child(key: tuple[str, str], gold: bytes | None, gold_name: str, public_ids: list[str] | None,
                    data: bytes, filename: str, subtask: str, columns: list[str]) -> tuple[str, object]:
    """Score one run in a scoring process: ``("ok", RunScores)``, ``("invalid", message)`` or ``(need-gold)``."""
    pair = _child_golds.get(key)
    if pair is None:
        if gold is None:
            return _NEED_GOLD, None
        pair = _child_golds[key] = prepare_golds(gold, gold_name, public_ids)
        while len(_child_golds) > CHILD_GOLDS:
            _child_golds.popitem(last=False)
    _child_golds.move_to_end(key)
    try:
        return "ok", score_run(read_run(data, filename, subtask), subtask, columns, pair[0], pair[1],
                             filename=filename)
    except DialevalError as e:
        return "invalid", str(e)


# ---- in the worker process ----------------------------------------------------------------------
_pools: dict[int, ProcessPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(processes: int, broken: ProcessPoolExecutor | None = None) -> ProcessPoolExecutor:
    """The worker process's pool of ``processes`` scoring processes (made on first use; remade if broken)."""
    with _pools_lock:
        pool = _pools.get(processes)
        if pool is None or pool is broken:
            if broken is not None:
                broken.shutdown(wait=False, cancel_futures=True)
            # spawn: the scoring processes are children of this worker (they watch it, see _start_child);
            # fork is unsafe in a process with threads.
            pool = _pools[processes] = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                                                           initializer=_start_child, initargs=(os.getpid(),))
        return pool


def shutdown_pools() -> None:
    """Stop this worker process's scoring processes and wait for them (the app's shutdown). Uvicorn stopped by
    SIGTERM ends the process by the signal right after the app's shutdown, before :mod:`atexit` handlers run: a
    pool left running then leaks its semaphores (multiprocessing's resource tracker warns) and its children
    end only when they notice their parent is gone. A later upload starts a new pool."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def gold_key(task: Task) -> tuple[str, str]:
    """What the prepared gold of ``task`` depends on: its gold's SHA-256 and its public ids."""
    return task.gold_sha256, hashlib.sha256("\n".join(task.public_ids).encode()).hexdigest()


class Scorer:
    """Scores runs for the routes of one app.

    Parameters
    ----------
    db : Database
        Where the gold is read from (once per task and scoring process).
    processes : int
        Scoring processes (0: score in a thread of the worker, as a library call would).
    slots : int, optional
        Uploads read and scored at once in this worker; default ``max(2, 2 * processes)``.
    """

    def __init__(self, db: Database, processes: int, slots: int | None = None) -> None:
        self.db, self.processes = db, processes
        self.slots = slots or max(2, 2 * processes)
        self._semaphores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def slot(self) -> asyncio.Semaphore:
        """The semaphore bounding the uploads in flight (one per event loop: uvicorn runs one per worker)."""
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.slots)
        return sem

    async def score(self, task: Task, data: bytes, filename: str) -> RunScores:
        """Score ``data`` for ``task`` (public half and full set); :class:`DialevalError` for a bad run."""
        if self.processes == 0:
            full, public = await run_in_threadpool(golds, self.db, task)
            return await run_in_threadpool(lambda: score_run(read_run(data, filename, task.subtask), task.subtask,
                                                             task.columns, full, public, filename=filename))
        key = gold_key(task)
        gold = None
        for attempt in range(3):
            pool = _pool(self.processes)
            args = (key, gold, task.gold_name, list(task.public_ids) if gold else None, data, filename,
                    task.subtask, list(task.columns))
            try:
                outcome, value = await asyncio.wrap_future(pool.submit(_score_in_child, *args))
            except BrokenProcessPool:
                _pool(self.processes, broken=pool)
                if attempt:
                    raise Unavailable("the scoring process stopped while scoring this run (out of memory?); "
                                      "it was not stored and does not count; try again later") from None
                continue
            if outcome == _NEED_GOLD:
                gold = await run_in_threadpool(gold_data, self.db, task)
                continue
            if outcome == "invalid":
                raise DialevalError(value)
            return value
        raise Unavailable("the run could not be scored now; it was not stored and does not count; try again")
