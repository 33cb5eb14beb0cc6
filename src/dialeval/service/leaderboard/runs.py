"""Scoring a submitted run for a task, through the library only (no measure is computed here).

A run must give every dialogue of the test set (the full set, as the participants know it) and no
other; it is validated against the full gold, so an error about a dialogue reads the same whether the
dialogue is public or hidden. Before the task closes only the means over the public half are returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dialeval import tasks as declared
from dialeval.errors import DialevalError, describe, first_few, quote
from dialeval.scoring import PreparedGold, Scores, score
from dialeval.service.leaderboard.uploaded import is_zip, run_records

SUBTASKS: tuple[str, ...] = declared.KEYS
"""What a service task can score: every declared task, by its key (:data:`dialeval.tasks.KEYS`)."""

MAX_LISTED_IDS = 5

PUBLIC_DIGITS = 4
"""Decimals of a public-half mean, as stored and shown while the task is open (as STC-3's tables printed them).

At full precision a public mean let a team learn which dialogues are hidden, a dozen per scale and run: a probe
run moving a tiny share ``eps * 10**-i`` of dialogue i's mass changes the mean by a digit at place i exactly when
the dialogue is public. Four decimals leave room for about one or two such digits per scale. A probe of one
dialogue per run and scale (move its whole mass, see whether the public mean moves) cannot be prevented by
any public score; the quota bounds it.
"""


@dataclass(frozen=True)
class RunScores:
    """Means of one run per score column: on the public half (None if not asked) and on the full set."""

    public: dict[str, float] | None
    full: dict[str, float]
    settings: dict


def read_run(data: bytes, filename: str, key: str | None = None) -> list:
    """The records of an uploaded run: a JSON array, or a ZIP of DBDC3 labels (:func:`run_records`); for a task
    keyed ``key`` whose runs are dialogue records (STC-3's), a ZIP is refused with the layout the task takes (its
    contents were read as DBDC3 labels files, and the refusal said none was there)."""
    if key is not None and is_zip(data) and declared.get(key).subtask is not None:
        raise DialevalError(f"a ZIP archive is a run of a task scored per turn (DBDC3 *.labels.json files); this "
                            f"task takes {run_layout(key)}", file=filename)
    return run_records(data, filename)


def run_layout(key: str) -> str:
    """How a run for the task keyed ``key`` is laid out, in a line (shown on the task's page and in its info).

    Examples
    --------
    >>> run_layout("quality")
    'a JSON array of {"id", "quality": ...} records, the STC-3/DialEval submission format (dialeval predict writes it)'
    >>> run_layout("dbdc-breakdown")[:54]
    'a JSON array of {"id", "turns": [{"turn", "breakdown":'
    """
    t = declared.get(key)
    if t.subtask is not None:
        return (f'a JSON array of {{"id", "{t.subtask}": ...}} records, the STC-3/DialEval submission format '
                "(dialeval predict writes it)")
    return (f'a JSON array of {{"id", "turns": [{{"turn", "{t.scales[0]}": {{level: probability}}}}]}} records '
            "(dialeval predict --to run), or a ZIP of DBDC3 *.labels.json files")


def means(scores: Scores, columns: list[str]) -> dict[str, float]:
    """The library's means (:meth:`Scores.means`) of ``columns``, keyed by column name."""
    m = scores.means()
    return {col: m[col] for col in columns}


def rounded_public(scores: dict | None) -> dict | None:
    """Public-half means at :data:`PUBLIC_DIGITS` decimals (rows stored by older versions held every digit).

    Examples
    --------
    >>> rounded_public({"quality/nmd/A": 0.0812345678}), rounded_public(None)
    ({'quality/nmd/A': 0.0812}, None)
    """
    if scores is None:
        return None
    return {k: round(v, PUBLIC_DIGITS) if isinstance(v, float) else v for k, v in scores.items()}


def _listed(ids: list[str]) -> str:
    return first_few(ids, MAX_LISTED_IDS)


def all_finite(scores: dict | None, columns: list[str] | None = None) -> bool:
    """Whether stored scores hold a finite number in every column (``columns``: these must all be there).

    Rows stored by older versions may hold NaN; they are never shown or ranked.

    Examples
    --------
    >>> all_finite({"a": 0.5}), all_finite({"a": float("nan")}), all_finite(None), all_finite({}, ["a"])
    (True, False, False, False)
    """
    if scores is None:
        return False
    values = [scores.get(c) for c in columns] if columns is not None else list(scores.values())
    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


def check_finite(s_full: Scores, columns: list[str], filename: str | None) -> None:
    """The last guard before anything is stored: every per-dialogue score on the full test set is finite.

    The library refuses every run value that could make a score non-finite (:mod:`dialeval.io.values`);
    this guard names the first dialogue if a score still is not, with the same words for either half.
    """
    idx = [s_full.columns.index(c) for c in columns]
    bad = ~np.isfinite(s_full.matrix[:, idx])
    if bad.any():
        r, c = (int(x) for x in np.argwhere(bad)[0])
        raise DialevalError(f"the score {columns[c]} is not a finite number; the run's values cannot be scored",
                            file=filename, dialogue=s_full.ids[r])


def check_items(records: list, full: PreparedGold, s_full: Scores, scales: tuple[str, ...],
                filename: str | None) -> None:
    """Every gold item of ``scales`` is predicted: the scorer skips an item a run leaves out (and counts it), so a
    run could leave out its hardest turns and rank higher. The message names the first dialogue with one missing.
    """
    for s in scales:
        missing = s_full.item_counts.get(s, {}).get("missing", 0)
        if not missing:
            continue
        run, g = full.read_run(records), full.items[s]
        have = np.zeros(len(g), dtype=bool)
        have[run.rows.get(s, np.zeros(0, dtype=np.int64))] = True
        first = full.ids[int(g.dialogue[np.flatnonzero(~have)[0]])]
        raise DialevalError(f"the run lacks {missing} of the test set's {len(g)} items of scale {s!r} (the first in "
                            f"dialogue {quote(first)}); a run must predict every item the test set labels",
                            file=filename)


def score_run(records: list, subtask: str, columns: list[str], full: PreparedGold,
              public: PreparedGold | None = None, *, filename: str | None = None) -> RunScores:
    """Validate a run against the full test set and score it on ``full`` (and on ``public`` if given).

    Raises
    ------
    DialevalError
        The scorer's message for a malformed run; also when the run lacks a test-set dialogue, gives a
        dialogue not in the test set, or lacks the predictions of ``subtask``. Ids named in messages
        are test-set ids, never a hint of which half they belong to.
    """
    try:
        s_full = score(records, full)
    except DialevalError as e:
        raise e.located(file=filename) from None
    if s_full.missing_ids:
        raise DialevalError(f"the run lacks {len(s_full.missing_ids)} of the test set's {len(full)} dialogues: "
                            f"{_listed(s_full.missing_ids)}; a run must give every dialogue of the test set",
                            file=filename)
    if s_full.extra_ids:
        raise DialevalError(f"{len(s_full.extra_ids)} dialogue(s) of the run are not in the test set: "
                            f"{_listed(s_full.extra_ids)}", file=filename)
    if not set(columns) <= set(s_full.columns):
        raise DialevalError(f"this task scores {subtask} but the run gives no {subtask!r} predictions",
                            file=filename, field=subtask)
    check_items(records, full, s_full, declared.get(subtask).scales, filename)
    check_finite(s_full, columns, filename)
    pub = rounded_public(means(score(records, public), columns)) if public is not None else None
    full_means = means(s_full, columns)
    if not all(math.isfinite(v) for v in [*full_means.values(), *(pub or {}).values()]):
        raise DialevalError("the run's mean scores are not finite numbers", file=filename)
    return RunScores(pub, full_means, dict(s_full.settings))


def columns_of(gold: PreparedGold, key: str) -> list[str]:
    """The score columns of the task keyed ``key`` on this gold (:meth:`dialeval.tasks.Task.columns`).

    Raises
    ------
    DialevalError
        When ``key`` is not a declared task's key, or the gold has no labels of that task (the message lists
        the tasks it has).
    """
    if not isinstance(key, str) or key not in SUBTASKS:
        raise DialevalError(f"task {describe(key)} is not allowed; allowed are " + ", ".join(SUBTASKS))
    want = declared.get(key).name
    for t in gold.tasks:
        if t.name == want:
            return t.columns()
    have = ", ".join(t.key for t in gold.tasks) or "none"
    raise DialevalError(f"the gold has no labels of task {key!r} (its tasks: {have})", file=gold.file)
