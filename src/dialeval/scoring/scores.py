"""Scores of one run: a dialogue × column matrix, the item scores behind it, and their summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from dialeval.errors import DialevalError, describe
from dialeval.io.atomic import write_matrix_csv


@dataclass(repr=False)
class Scores:
    """Per-dialogue scores of one run: ``matrix[i, j]`` is dialogue ``ids[i]`` under ``columns[j]``.

    Columns are named by their task (:meth:`dialeval.tasks.Task.column`): ``quality.<measure>.<key>`` and
    ``nugget.<measure>`` for STC-3, ``<scale>/<measure>`` for other tasks; ``paths[j]`` is where column j's
    mean sits in :meth:`summary`. A cell is NaN where the dialogue has no item of that scale. In strict mode
    the missing dialogues are rows of the worst values. ``items[scale][measure]`` holds each scored item's
    value (the turn average's input; ``sources[j]`` is column j's scale and measure); ``averages[j]`` says
    how column j is averaged (``dialogue``: the mean of per-dialogue values; ``turn``: over its items).
    """

    ids: list[str]
    columns: list[str]
    matrix: np.ndarray
    missing_ids: list[str]
    extra_ids: list[str]
    settings: dict = field(default_factory=dict)
    paths: list[tuple[str, ...]] = field(default_factory=list)
    averages: list[str] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)
    items: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    item_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    extra_items: list[str] = field(default_factory=list)

    REPR_COLUMNS = 6
    """How many columns' means ``repr`` shows."""

    def __repr__(self) -> str:
        """A summary, not the matrix: ``Scores(390 dialogues x 8 columns, 0 missing, 0 extra; means
        quality.nmd.A=0.08123, ...)``."""
        means = list(self.means().items())
        shown = ", ".join(f"{k}={v:.4g}" for k, v in means[:self.REPR_COLUMNS])
        more = f", ... ({len(means) - self.REPR_COLUMNS} more)" if len(means) > self.REPR_COLUMNS else ""
        return (f"Scores({len(self.ids)} dialogues x {len(self.columns)} columns, {len(self.missing_ids)} missing, "
                f"{len(self.extra_ids)} extra" + (f"; means {shown}{more}" if means else "") + ")")

    @property
    def scored(self) -> int:
        """Dialogues of the gold the run predicts."""
        return len(self.ids) - (len(self.missing_ids) if self.settings.get("strict") else 0)

    def column(self, name: str) -> np.ndarray:
        try:
            return self.matrix[:, self.columns.index(name)]
        except ValueError:
            raise DialevalError(f"no column {describe(name)}; available are " + ", ".join(self.columns)) from None

    def means(self) -> dict[str, float]:
        """The mean of each column, averaged as its task declares (NaN when nothing was scored)."""
        whole = self.matrix.mean(axis=0) if len(self.ids) else np.full(len(self.columns), np.nan)
        out = {}
        for j, col in enumerate(self.columns):
            if self.averages and self.averages[j] == "turn":
                scale, measure = self.sources[j]
                x = self.items[scale][measure]
                out[col] = float(x.mean()) if x.size else float("nan")
            elif np.isnan(whole[j]) and len(self.ids):  # dialogues without an item of this scale: left out
                x = self.matrix[:, j]
                x = x[~np.isnan(x)]
                out[col] = float(x.mean()) if x.size else float("nan")
            else:
                out[col] = float(whole[j])
        return out

    def summary(self) -> dict:
        """The means nested as each task reports them, then counts and settings.

        STC-3: ``{"quality": {measure: {key: v}}, "nugget": {measure: v}, ...}``; other tasks:
        ``{"scales": {scale: {measure: v}}, "items": {scale: {"scored", "missing"}}, ...}``; always
        ``"dialogues": {"scored", "missing", "extra"}`` and ``"settings"``.
        """
        out: dict = {}
        for path, v in zip(self.paths, self.means().values(), strict=True):
            node = out
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = v
        if "scales" in out:
            out["items"] = {s: n for s, n in self.item_counts.items() if s in out["scales"]}
        out["dialogues"] = {"scored": self.scored, "missing": len(self.missing_ids), "extra": len(self.extra_ids)}
        out["settings"] = dict(self.settings)
        return out

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per dialogue, one column per measure and key (the topic-by-run data of stats; empty where
        undefined)."""
        write_matrix_csv(path, self.ids, self.columns, self.matrix)
