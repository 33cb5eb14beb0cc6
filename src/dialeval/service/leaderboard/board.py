"""The leaderboard of a task: one row per team (its best run by the task's main column) or one per run.

Before close the rows hold means on the public half; after close, final means on 100% (a team's row is
then its chosen run, else its latest). Runs submitted "not on the leaderboard" never appear. Column
titles and the sort direction come from the measure registry.

Reads are cheap: a computed leaderboard is kept per task, view and sort column in the worker process and
reused while the database's fingerprint of the task and its runs (:func:`fingerprint`: their count, the
newest id, the chosen ones, the close) is unchanged. The fingerprint is read from the database on every call, so an
upload or a close through any worker process is seen by all of them at once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import orjson
from sqlalchemy import case, func, select

from dialeval import __version__
from dialeval.errors import DialevalError, describe
from dialeval.measures import get as get_measure
from dialeval.service.db import Database, Team
from dialeval.service.errors import NotFound, ServiceError
from dialeval.service.leaderboard.runs import all_finite, rounded_public
from dialeval.service.leaderboard.tables import Submission, Task
from dialeval.service.leaderboard.tasks import get_task, task_info
from dialeval.service.names import is_slug
from dialeval.tasks import get as declared_task

PER = ("team", "run")
"""Leaderboard views: one row per team, or one per run."""
ROWS_PER_PAGE = 100
"""Rows of a leaderboard page (the JSON API gives every row unless asked for a page)."""
MAX_ROWS_PER_PAGE = 1000
"""Most rows one page (of the HTML board or the JSON API) may ask for."""


def column_info(column: str, task: str) -> dict:
    """Label, measure title and direction of a score column of the declared task ``task`` (its key or name):
    from the task and measure registries.

    Examples
    --------
    >>> column_info("quality.nmd.A", "quality")["label"], column_info("nugget.jsd", "nugget")["lower_is_better"]
    ('NMD A', True)
    >>> column_info("breakdown/jsd", "dbdc-breakdown")["label"]
    'JSD'
    """
    measure, label = declared_task(task).column_label(column)
    m = get_measure(measure)
    return {"name": column, "label": label, "measure": m.name, "title": m.title, "direction": m.direction,
            "lower_is_better": m.lower_is_better}


def _sort_key(column: str, task: str):
    sign = 1.0 if column_info(column, task)["lower_is_better"] else -1.0
    return lambda row: (sign * row["scores"][column], row["created_at"], row["id"])


BOARDS_KEPT = 64
"""Computed leaderboards kept per worker process (task, view and column)."""
ROWS_KEPT = 100_000
"""At most this many rows in the kept leaderboards of a worker process, the newest board always kept: a board of
one row per run of 50,000 runs holds about 100 MB (twelve of them took a server from 115 MB to 945 MB)."""
_boards: OrderedDict = OrderedDict()
_boards_lock = threading.Lock()
_building = tuple(threading.Lock() for _ in range(16))
"""Locks of the boards being built, by the hash of their key: one build of a board at a time, so the readers
that come after an upload wait for it instead of each building it again (8 readers at 50,000 runs each took
14-18 s, building the same board side by side)."""


def fingerprint(db: Database, task_name: str) -> tuple | None:
    """What the leaderboard of a task depends on that can change, in one query (None: no such task).

    The task's id, creation time (a task made again under the same name differs), close, deadline, quotas
    and main column (element 6), and of its runs: the count and newest id (runs are only ever added), and the
    sum of the chosen ids (a team's pick). Final scores are written in the transaction that closes the task.
    """
    if not is_slug(task_name):
        return None
    agg = (Task.id, Task.created_at, Task.closed_at, Task.deadline, Task.daily_limit, Task.total_limit,
           Task.rank_by)
    with db.read() as s:
        row = s.execute(
            select(*agg, func.count(Submission.id), func.coalesce(func.max(Submission.id), 0),
                   func.coalesce(func.sum(case((Submission.chosen, Submission.id), else_=0)), 0))
            .select_from(Task).outerjoin(Submission, Submission.task_id == Task.id)
            .where(Task.name == task_name).group_by(*agg)).one_or_none()
    return tuple(row) if row is not None else None


def _kept(db: Database, task_name: str, by: str | None, per: str) -> tuple[dict, bytes]:
    """The board and its JSON encoding, computed again only when the database says the task changed.

    A read of an unchanged board is one query (:func:`fingerprint`); the stamp is read before computing,
    so a run stored meanwhile makes the next read compute again rather than be missed.
    """
    with _building[hash((db.url, task_name, per)) % len(_building)]:
        stamp = fingerprint(db, task_name)
        # the main column named or left out is one board (they were kept, and built, twice)
        key = (db.url, task_name, by or (stamp[6] if stamp is not None else None), per)
        with _boards_lock:
            kept = _boards.get(key)
            if stamp is not None and kept is not None and kept[0] == stamp:
                _boards.move_to_end(key)
                return kept[1], kept[2]
        board = compute(db, get_task(db, task_name), by=by, per=per)
        body = orjson.dumps(board)
        with _boards_lock:
            _boards[key] = (stamp, board, body)
            while len(_boards) > 1 and (len(_boards) > BOARDS_KEPT
                                        or sum(len(b[1]["rows"]) for b in _boards.values()) > ROWS_KEPT):
                _boards.popitem(last=False)
        return board, body


def leaderboard(db: Database, task_name: str, *, by: str | None = None, per: str = "team") -> dict:
    """The leaderboard of a task (see :func:`compute`), reused while the task and its runs are unchanged.

    The dict is shared between calls: read it, do not change it.
    """
    return _kept(db, task_name, by, per)[0]


def leaderboard_json(db: Database, task_name: str, *, by: str | None = None, per: str = "team") -> bytes:
    """:func:`leaderboard` encoded as JSON (encoded once per change of the board)."""
    return _kept(db, task_name, by, per)[1]


def page_bounds(n_rows: int, page: object, per_page: object = ROWS_PER_PAGE) -> tuple[int, int, int]:
    """The rows ``[start, stop)`` of page ``page`` (from 1) of ``per_page`` rows, and the number of pages.

    A board with no row has one (empty) page. ``page`` and ``per_page`` may be given as the text of a query
    parameter.

    Raises
    ------
    ServiceError
        ``page`` is not an integer from 1 to the number of pages (404 past the last page), or ``per_page`` not
        an integer from 1 to :data:`MAX_ROWS_PER_PAGE` (400).

    Examples
    --------
    >>> page_bounds(250, 3), page_bounds(0, 1), page_bounds(5, "1", "2")
    ((200, 250, 3), (0, 0, 1), (0, 2, 3))
    """
    size = _whole(per_page, "rows per page", 1, MAX_ROWS_PER_PAGE)
    pages = max(1, -(-n_rows // size))
    number = _whole(page, "page", 1, None)
    if number > pages:
        raise NotFound(f"page {number} is past the last page; this leaderboard has {pages} page"
                       f"{'s' if pages > 1 else ''} of {size} rows")
    start = (number - 1) * size
    return start, min(start + size, n_rows), pages


def _whole(value: object, what: str, low: int, high: int | None) -> int:
    """``value`` (an int or its decimal text) as an int from ``low`` to ``high``, else a ServiceError (400)."""
    allowed = f"allowed are integers from {low}" + (f" to {high}" if high is not None else " up")
    number = value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value) < 12:
        number = int(value)
    if not isinstance(number, int) or isinstance(number, bool) or number < low or (high is not None and number > high):
        raise ServiceError(f"{what} {describe(value)} is not allowed; {allowed}")
    return number


def board_page(board: dict, page: object, per_page: object = None) -> dict:
    """``board`` (as :func:`leaderboard` returns it) with only the rows of one page, and ``page``: ``{"number",
    "pages", "per_page", "rows"}`` (``rows``: the board's number of rows, on every page). ``per_page`` None:
    :data:`ROWS_PER_PAGE`. The board itself is not changed."""
    size = _whole(ROWS_PER_PAGE if per_page is None else per_page, "rows per page", 1, MAX_ROWS_PER_PAGE)
    start, stop, pages = page_bounds(len(board["rows"]), page, size)
    return {**board, "rows": board["rows"][start:stop],
            "page": {"number": start // size + 1, "pages": pages, "per_page": size, "rows": len(board["rows"])}}


def compute(db: Database, task: Task, *, by: str | None = None, per: str = "team") -> dict:
    """The rows of a task's leaderboard, sorted by column ``by`` (default: the task's main column).

    Returns
    -------
    dict
        ``{"task": {...}, "final": bool, "scored_on": {"half", "dialogues", "dialeval_version"},
        "by": column, "per": "team"|"run", "columns": [column_info...], "rows": [{"rank", "team",
        "affiliation", "id", "scores", "submissions", "off_leaderboard", "created_at", "last"}]}``:
        ``submissions`` counts every run of the team, ``off_leaderboard`` those of them that are not on this
        leaderboard (submitted off it, or without a final score after close).
    """
    by = by or task.rank_by
    if by not in task.columns:
        raise DialevalError(f"sort column {describe(by)} is not allowed; allowed are " + ", ".join(task.columns))
    if not isinstance(per, str) or per not in PER:
        raise DialevalError(f"leaderboard view {describe(per)} is not allowed; allowed are " + ", ".join(PER))
    final = task.closed_at is not None
    with db.read() as s:
        # Only the columns the board shows (no ORM objects: a read recomputes after every accepted upload).
        subs = s.execute(select(Submission.id, Submission.team_id, Submission.created_at, Submission.on_leaderboard,
                                Submission.chosen, Submission.final_scores if final else Submission.public_scores,
                                Team.name, Team.affiliation).join(Team, Team.id == Submission.team_id)
                         .where(Submission.task_id == task.id).order_by(Submission.created_at, Submission.id)).all()
    counts: dict[int, int] = {}
    off: dict[int, int] = {}
    last: dict[int, str] = {}
    runs = []
    for sub_id, team_id, created_at, on_board, chosen, scores, team, affiliation in subs:
        counts[team_id] = counts.get(team_id, 0) + 1
        last[team_id] = created_at.isoformat()
        if on_board and all_finite(scores, task.columns):
            runs.append({"id": sub_id, "team_id": team_id, "team": team, "affiliation": affiliation,
                         "scores": scores if final else rounded_public(scores),
                         "created_at": created_at.isoformat(), "chosen": chosen})
        else:
            off[team_id] = off.get(team_id, 0) + 1
    rows = runs if per == "run" else _team_rows(runs, task, final)
    rows.sort(key=_sort_key(by, task.subtask))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        row["submissions"] = counts[row["team_id"]]
        row["off_leaderboard"] = off.get(row["team_id"], 0)
        row["last"] = last[row["team_id"]]
        del row["team_id"]
    scored_on = {"half": "all" if final else "public",
                  "dialogues": task.n_dialogues if final else len(task.public_ids), "dialeval_version": __version__}
    return {"task": task_info(task), "final": final, "scored_on": scored_on, "by": by, "per": per,
            "columns": [column_info(c, task.subtask) for c in task.columns], "rows": rows}


def _team_rows(runs: list[dict], task: Task, final: bool) -> list[dict]:
    """One run per team: before close its best by the task's main column; after, its chosen or latest run."""
    best: dict[int, dict] = {}
    key = _sort_key(task.rank_by, task.subtask)
    for run in runs:  # oldest first
        cur = best.get(run["team_id"])
        if final:
            if cur is None or not cur["chosen"]:
                best[run["team_id"]] = run  # the latest, unless a chosen run was seen
        elif cur is None or key(run) < key(cur):
            best[run["team_id"]] = run
    return list(best.values())
