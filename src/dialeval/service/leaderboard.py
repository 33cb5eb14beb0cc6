"""The leaderboard of a task: one row per team (its best run by the task's main column) or one per run.

Before close the rows hold means on the public half; after close, final means on 100% (a team's row is
then its chosen run, else its latest). Runs submitted "not on the leaderboard" never appear. Column
titles and the sort direction come from the measure registry.
"""

from __future__ import annotations

from sqlalchemy import select

from dialeval import __version__
from dialeval.errors import DialevalError, describe
from dialeval.measures import get as get_measure
from dialeval.service.db import Database, Submission, Task, Team
from dialeval.service.runs import all_finite
from dialeval.service.tasks import get_task, task_info

PER = ("team", "run")
"""Leaderboard views: one row per team, or one per run."""


def column_info(column: str) -> dict:
    """Label, measure title and direction of a score column such as ``quality.nmd.A`` (from the registry).

    Examples
    --------
    >>> column_info("quality.nmd.A")["label"], column_info("nugget.jsd")["lower_is_better"]
    ('NMD A', True)
    """
    parts = column.split(".")
    m = get_measure(parts[1])
    return {"name": column, "label": " ".join([m.name.upper(), *parts[2:]]), "measure": m.name,
            "title": m.title, "direction": m.direction, "lower_is_better": m.direction.startswith("lower")}


def _sort_key(column: str):
    sign = 1.0 if column_info(column)["lower_is_better"] else -1.0
    return lambda row: (sign * row["scores"][column], row["created_at"], row["id"])


def leaderboard(db: Database, task_name: str, *, by: str | None = None, per: str = "team") -> dict:
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
    task = get_task(db, task_name)
    by = by or task.rank_by
    if by not in task.columns:
        raise DialevalError(f"sort column {describe(by)} is not allowed; allowed are " + ", ".join(task.columns))
    if per not in PER:
        raise DialevalError(f"leaderboard view {describe(per)} is not allowed; allowed are " + ", ".join(PER))
    final = task.closed_at is not None
    with db.read() as s:
        subs = s.execute(select(Submission, Team.name, Team.affiliation).join(Team, Team.id == Submission.team_id)
                         .where(Submission.task_id == task.id).order_by(Submission.created_at, Submission.id)).all()
    counts: dict[int, int] = {}
    off: dict[int, int] = {}
    last: dict[int, str] = {}
    runs = []
    for sub, team, affiliation, in subs:
        counts[sub.team_id] = counts.get(sub.team_id, 0) + 1
        last[sub.team_id] = sub.created_at.isoformat()
        scores = sub.final_scores if final else sub.public_scores
        if sub.on_leaderboard and all_finite(scores, task.columns):
            runs.append({"id": sub.id, "team_id": sub.team_id, "team": team, "affiliation": affiliation,
                         "scores": scores, "created_at": sub.created_at.isoformat(), "chosen": sub.chosen})
        else:
            off[sub.team_id] = off.get(sub.team_id, 0) + 1
    rows = runs if per == "run" else _team_rows(runs, task, final)
    rows.sort(key=_sort_key(by))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        row["submissions"] = counts[row["team_id"]]
        row["off_leaderboard"] = off.get(row["team_id"], 0)
        row["last"] = last[row["team_id"]]
        del row["team_id"]
    scored_on = {"half": "all" if final else "public",
                  "dialogues": task.n_dialogues if final else len(task.public_ids), "dialeval_version": __version__}
    return {"task": task_info(task), "final": final, "scored_on": scored_on, "by": by, "per": per,
            "columns": [column_info(c) for c in task.columns], "rows": rows}


def _team_rows(runs: list[dict], task: Task, final: bool) -> list[dict]:
    """One run per team: before close its best by the task's main column; after, its chosen or latest run."""
    best: dict[int, dict] = {}
    key = _sort_key(task.rank_by)
    for run in runs:  # oldest first
        cur = best.get(run["team_id"])
        if final:
            if cur is None or not cur["chosen"]:
                best[run["team_id"]] = run  # the latest, unless a chosen run was seen
        elif cur is None or key(run) < key(cur):
            best[run["team_id"]] = run
    return list(best.values())
