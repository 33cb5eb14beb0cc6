"""Export a task's runs as topic-by-run matrices for ``dialeval compare`` and Sakai's Discpower.

Layout of ``DIR`` (the convention ``dialeval compare`` reads too):

- ``runs.txt``: one run name per line (the matrix columns, in order);
- ``topics.txt``: one dialogue id per line (the matrix rows, in gold order);
- one matrix per score column (:func:`~dialeval.io.discpower.matrix_name`: ``quality.nmd.A.matrix``,
  ``breakdown.jsd.matrix``...): one line per dialogue, the runs' scores separated by single spaces
  (Discpower's format);
- ``<run>.json``: the submitted run file, byte for byte (a run uploaded as a ZIP of DBDC3 labels: the JSON
  array of its records), so ``dialeval compare DIR/*.json --gold GOLD`` works;
- ``export.manifest``: what the files hold, as JSON (task, gold hash, runs, columns, scorer settings,
  dialeval version); not named ``*.json``, so that ``DIR/*.json`` are the runs only.

Every per-dialogue score is computed by :func:`dialeval.scoring.score` on 100% of the test set.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import numpy as np
from sqlalchemy import select

from dialeval.errors import DialevalError
from dialeval.io.atomic import write_bytes, write_text
from dialeval.io.discpower import matrix_name
from dialeval.io.jsonarray import dump_json, json_text
from dialeval.progress import track
from dialeval.scoring import score
from dialeval.service.db import Database, Team
from dialeval.service.leaderboard.runs import read_run
from dialeval.service.leaderboard.tables import Submission, SubmissionFile
from dialeval.service.leaderboard.tasks import get_task, golds, task_info
from dialeval.service.leaderboard.uploaded import is_zip


def run_name(team: str, submission_id: int) -> str:
    """A file-safe run name: the team name's safe characters and the submission id.

    Examples
    --------
    >>> run_name("NTT <lab> #1", 7), run_name("Ünï team", 8)
    ('NTT_lab_1-7', 'Ünï_team-8')
    """
    safe = re.sub(r"[^\w.]+", "_", team).strip("_.")[:40] or "team"  # letters of any script (Ünï was n)
    return f"{safe}-{submission_id}"


def export_matrix(db: Database, task_name: str, out: str | os.PathLike, now: datetime) -> dict:
    """Write every stored run of a task, scored per dialogue on the full test set, under ``out``.

    Returns the manifest written to ``out/export.manifest``. Files are written atomically one by one;
    ``out`` is created if needed and must not hold an earlier export's ``runs.txt``.
    """
    task = get_task(db, task_name)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DialevalError("is a file; expected a folder to write the matrices into", file=str(out))
    if (out / "runs.txt").exists():
        raise DialevalError("holds an earlier export (runs.txt); choose an empty folder", file=str(out))
    out.mkdir(parents=True, exist_ok=True)
    full, _ = golds(db, task)
    with db.read() as s:
        subs = s.execute(select(Submission, Team.name).join(Team, Team.id == Submission.team_id)
                         .where(Submission.task_id == task.id).order_by(Submission.id)).all()
    names, columns = [], {c: [] for c in task.columns}
    for sub, team in track(subs, f"scoring the runs of {task.name}"):
        with db.read() as s:
            data = s.get(SubmissionFile, sub.id).data
        name = run_name(team, sub.id)
        records = read_run(data, sub.filename)
        scores = score(records, full)
        if scores.ids != list(full.ids):
            raise DialevalError(f"run {name} does not give every test-set dialogue", file=sub.filename)
        for c in task.columns:   # float64 arrays: as Python floats, 58 KB a run (3,000 runs: 364 MB)
            columns[c].append(np.array(scores.column(c), dtype=np.float64))
        write_bytes(out / f"{name}.json", json_text(records).encode() if is_zip(data) else data)
        names.append(name)
    for c, per_run in columns.items():
        lines = (" ".join(repr(float(run[i])) for run in per_run) for i in range(len(full.ids)))
        write_text(out / matrix_name(c), "".join(line + "\n" for line in lines))
    write_text(out / "topics.txt", "".join(f"{i}\n" for i in full.ids))
    manifest = {"task": task_info(task), "gold": {"name": task.gold_name, "sha256": task.gold_sha256},
                "runs": [{"name": n, "id": sub.id, "team": team, "created_at": sub.created_at.isoformat(),
                          "on_leaderboard": sub.on_leaderboard, "sha256": sub.sha256}
                         for n, (sub, team) in zip(names, subs, strict=True)],
                "columns": task.columns, "rows": "topics.txt", "matrix_columns": "runs.txt",
                "settings": dict(subs[0][0].settings) if subs else {}, "exported_at": now.isoformat()}
    dump_json(manifest, out / "export.manifest")
    write_text(out / "runs.txt", "".join(f"{n}\n" for n in names))  # last: marks a complete export
    return manifest
