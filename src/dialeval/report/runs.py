"""Score many runs against one gold and line them up as topic-by-run matrices, one per score column.

A run is a submission file (JSON); a folder stands for the ``*.json`` files in it. Each run is scored
with :func:`dialeval.scoring.score` against gold prepared once. A run that lacks gold dialogues is an
error by default (``missing="error"``); ``"worst"`` scores them as each measure's worst value (the scorer's strict mode:
:func:`dialeval.scoring.engine.worst`, 1 but for NOD-based measures on 5 levels or more) and
``"common"`` keeps only the dialogues every run has.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from dialeval import progress as _progress
from dialeval.coverage import normalisation_note
from dialeval.errors import DialevalError, expect_instance, first_few
from dialeval.io.jsonarray import Source
from dialeval.report.display import display_text
from dialeval.report.labels import lower_is_better
from dialeval.scoring import PreparedGold, Scores, load_gold, score
from dialeval.stats._common import Seed, check_policy
from dialeval.stats.comparison import Comparison, check_settings, compare_measures

MISSING_POLICIES = ("error", "worst", "common")
"""What a run lacking gold dialogues means: an error, the worst score (`dialeval.scoring.worst`), or fewer dialogues."""
_SHOW_IDS = 20

PathLike = str | os.PathLike


@dataclass(frozen=True, eq=False)
class RunMatrix:
    """Per-dialogue scores of m runs: ``values[i, j, c]`` is dialogue ``ids[i]``, run ``runs[j]``, ``columns[c]``."""

    runs: tuple[str, ...]
    files: tuple[str, ...]
    ids: tuple[str, ...]
    columns: tuple[str, ...]
    values: np.ndarray
    settings: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def column(self, name: str) -> np.ndarray:
        """The n x m (dialogues x runs) matrix of one score column."""
        if name not in self.columns:
            raise DialevalError(f"no score column {name!r}; available are " + ", ".join(self.columns))
        return self.values[:, :, self.columns.index(name)]

    def matrices(self) -> dict[str, np.ndarray]:
        return {c: self.column(c) for c in self.columns}

    def select(self, columns: Sequence[str]) -> RunMatrix:
        """The same runs and dialogues with only ``columns`` (in that order)."""
        idx = [self.columns.index(c) if c in self.columns else self.column(c) for c in columns]
        return replace(self, columns=tuple(columns), values=self.values[:, :, idx])


def run_files(paths: Sequence[PathLike], *, exclude: PathLike | None = None) -> list[Path]:
    """The run files named by ``paths``: files as given, folders as their ``*.json`` files (sorted by name).

    ``exclude`` (e.g. the gold file) is left out wherever it turns up. Raises if a path does not exist, a
    folder holds no JSON file, or two runs would share a name (the file name without ``.json``, as reports show
    it: :func:`run_name`).
    """
    if isinstance(paths, str | os.PathLike) or not paths:
        raise DialevalError("no runs given; pass run files (JSON) or folders of them")
    skip = Path(exclude).resolve() if exclude is not None else None
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.suffix.lower() == ".json" and f.is_file()
                           and f.resolve() != skip)
            if not found:
                raise DialevalError("folder holds no run file (*.json)", file=str(p))
            files.extend(found)
        elif p.is_file():
            if p.resolve() != skip:
                files.append(p)
        else:
            raise DialevalError("no such file or folder", file=str(p))
    seen: dict[str, Path] = {}
    for f in files:
        name = run_name(f)
        if name in seen:
            raise DialevalError(f"two runs are named '{name}': {display_text(seen[name])} and {display_text(f)}; "
                                "run names (file names without .json) must be unique", file=display_text(f))
        seen[name] = f
    return files


def run_name(path: PathLike) -> str:
    r"""The name of the run in file ``path``, as every report shows it: the file name without its extension, through
    :func:`dialeval.report.display.display_text` (bytes that are not UTF-8 as ``\xNN`` escapes, control characters
    escaped).

    >>> run_name("runs/team-a.json"), run_name(b"runs/caf\xe9.json")
    ('team-a', 'caf\\xe9')
    """
    return display_text(Path(os.fsdecode(path)).stem)


def _ids_text(ids: Sequence[str]) -> str:
    return first_few(ids, _SHOW_IDS)


def score_runs(runs: Sequence[PathLike], gold: Source | PreparedGold, *,
               missing: Literal["error", "worst", "common"] = "error", nugget_alpha: float = 0.5,
               rsnod_variant: str = "paper", progress: bool | None = None) -> RunMatrix:
    """Score every run against ``gold`` (prepared once) and align the per-dialogue scores.

    Parameters
    ----------
    runs : sequence of paths
        Run files or folders of them (see :func:`run_files`); at least two runs.
    gold : path, list of records or PreparedGold
    missing : {'error', 'worst', 'common'}, default 'error'
        A run lacking gold dialogues: raise an error naming the run and the dialogue ids; score each missing
        dialogue 1.0 on every measure (the worst); or compare on the dialogues every run has.
    nugget_alpha, rsnod_variant :
        Passed to :func:`dialeval.scoring.score` (``alpha`` there: the ND weight of customer turns).

    Returns
    -------
    RunMatrix
        Score columns are those every run has (a note says which were dropped); dialogues in gold order.
    """
    missing = check_policy("missing", missing, MISSING_POLICIES)  # type: ignore[assignment]
    gold_path = gold if isinstance(gold, str | os.PathLike) else getattr(gold, "file", None)  # a PreparedGold's file
    files = run_files(runs, exclude=gold_path)
    if len(files) < 2:
        raise DialevalError(f"{len(files)} run given ({', '.join(map(str, files))}); a comparison needs at least 2")
    g = load_gold(gold)
    notes: list[str] = []
    scored: list[Scores] = []
    for f in _progress.track(files, f"scoring {len(files)} runs", progress=progress):
        s = score(str(f), g, alpha=nugget_alpha, strict=missing == "worst", rsnod_variant=rsnod_variant)
        name = run_name(f)
        unnormalised = normalisation_note(s.extra_ids, s.missing_ids)  # ids that differ only as NFC and NFD
        if s.missing_ids:
            if missing == "error":
                raise DialevalError(f"run '{name}' is missing {len(s.missing_ids)} of the {len(g)} gold dialogues: "
                                    f"{_ids_text(s.missing_ids)}{unnormalised}; score them as the worst "
                                    "(missing='worst', --missing worst) or compare on the dialogues all runs have "
                                    "('common')", file=display_text(f))
            how = "scored as the worst value" if missing == "worst" else "left out of the comparison"
            notes.append(f"run '{name}' lacks {len(s.missing_ids)} gold dialogue(s), {how}: "
                         f"{_ids_text(s.missing_ids)}")
        if s.extra_ids:
            notes.append(f"run '{name}' has {len(s.extra_ids)} dialogue(s) not in the gold, ignored: "
                         f"{_ids_text(s.extra_ids)}{unnormalised}")
        scored.append(s)
    columns = [c for c in scored[0].columns if all(c in s.columns for s in scored)]
    for f, s in zip(files, scored, strict=True):
        dropped = [c for c in s.columns if c not in columns]
        if dropped:
            notes.append(f"run '{run_name(f)}': column(s) {', '.join(dropped)} left out (not every run has them)")
    if not columns:
        raise DialevalError("the runs share no score column (e.g. one has only quality, another only nugget)")
    if missing == "common":
        have = [set(s.ids) for s in scored]
        ids = [i for i in g.ids if all(i in h for h in have)]
    else:
        ids = list(scored[0].ids)
    if len(ids) < 2:
        raise DialevalError(f"{len(ids)} dialogue(s) scored in every run; a comparison needs at least 2")
    values = np.empty((len(ids), len(files), len(columns)))
    for j, s in enumerate(scored):
        row = {d: r for r, d in enumerate(s.ids)}
        rows = [row[d] for d in ids]
        values[:, j, :] = s.matrix[np.ix_(rows, [s.columns.index(c) for c in columns])]
    if missing == "common" and len(ids) < len(g):
        notes.append(f"compared on the {len(ids)} of {len(g)} gold dialogues that every run has")
    scorable = ~np.isnan(values).any(axis=(1, 2))  # a turn-level dialogue with no labelled item of a column
    if not scorable.all():
        notes.append(f"{int((~scorable).sum())} dialogue(s) without a labelled item of every column left out: "
                     + _ids_text([d for d, k in zip(ids, scorable.tolist(), strict=True) if not k]))
        ids = [d for d, k in zip(ids, scorable.tolist(), strict=True) if k]
        values = values[scorable]
        if len(ids) < 2:
            raise DialevalError(f"{len(ids)} dialogue(s) scored in every column; a comparison needs at least 2")
    settings = {"gold": display_text(gold_path) if gold_path is not None else None,
                "runs": [display_text(f) for f in files],
                "missing": missing, "nugget_alpha": float(nugget_alpha), "rsnod_variant": rsnod_variant,
                "tasks": dict(scored[0].settings.get("tasks", {}))}
    return RunMatrix(tuple(run_name(f) for f in files), tuple(str(f) for f in files), tuple(ids), tuple(columns),
                     values, settings, tuple(notes))


def compare_scored(matrix: RunMatrix, *, B: int = 5000, seed: Seed = 0, alpha: float = 0.05, level: float = 0.95,
                   progress: bool | None = None) -> Comparison:
    """:func:`dialeval.stats.compare_measures` over every score column, directions from the measures registry."""
    expect_instance(matrix, RunMatrix, "matrix", "; make one with dialeval.report.runs.score_runs")
    directions = {k: lower_is_better(k) for k in matrix.columns}
    c = compare_measures(matrix.matrices(), matrix.runs, lower_is_better=directions, B=B, seed=seed,
                         alpha=alpha, level=level, progress=progress, notes=matrix.notes)
    return replace(c, settings={**c.settings, "scoring": dict(matrix.settings)})


def compare_runs(runs: Sequence[PathLike], gold: Source | PreparedGold, *, B: int = 5000, seed: Seed = 0,
                 alpha: float = 0.05, level: float = 0.95, missing: Literal["error", "worst", "common"] = "error",
                 nugget_alpha: float = 0.5, rsnod_variant: str = "paper",
                 progress: bool | None = None) -> Comparison:
    """Score runs against gold and compare them under every measure and key (what ``dialeval compare`` does).

    See :func:`score_runs` for the runs, gold and ``missing``; :func:`dialeval.stats.compare_measures` for
    ``B``, ``seed``, ``alpha`` and ``level``. The settings are checked before any run is scored.
    """
    B, key, alpha, level = check_settings(B, seed, alpha, level)
    matrix = score_runs(runs, gold, missing=missing, nugget_alpha=nugget_alpha, rsnod_variant=rsnod_variant,
                        progress=progress)
    return compare_scored(matrix, B=B, seed=key, alpha=alpha, level=level, progress=progress)
