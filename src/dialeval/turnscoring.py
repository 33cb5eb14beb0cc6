"""Scoring predicted distributions on any corpus's scales: turn-level (DBDC, WOCHAT, ConTurE...) or dialogue-level.

Per scale and item (turn, or dialogue for a dialogue-level scale) the run's distribution is compared with the
gold (the annotators' labels) using the measures of :data:`MEASURES_BY_KIND`: JSD and MSE, the DBDC measures,
for every scale, plus NMD and RSNOD for an ordinal one. Then, by default, the item scores are averaged per
dialogue and the dialogue means averaged (macro-average: each dialogue counts once); ``average="turn"``
averages over items instead (the official DBDC3 script's micro-average).

Missing items: a gold item the run does not predict is skipped and counted; with ``strict=True`` it scores the
worst value of each measure (1, or 2/L for MSE). Run items the gold does not have are counted as extra.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from dialeval.corpus import Corpus, merge_blocks
from dialeval.coverage import check_common
from dialeval.distributions import Distributions, gold_distributions
from dialeval.errors import DialevalError
from dialeval.io.atomic import write_matrix_csv
from dialeval.io.turnruns import TurnRun, read_turn_run
from dialeval.measures import get as get_measure
from dialeval.measures.ordinal import VARIANTS

MEASURES_BY_KIND: dict[str, tuple[str, ...]] = {"nominal": ("jsd", "mse"), "ordinal": ("jsd", "mse", "nmd", "rsnod")}
"""Measures reported for a scale of each kind, in report order (names from the measure registry)."""
AVERAGES = ("dialogue", "turn")


def measures_of(scale) -> tuple[str, ...]:
    """The measures of a scale: its task's (:mod:`dialeval.tasks`), else :data:`MEASURES_BY_KIND` of its kind."""
    from dialeval.tasks import task_of_scale

    task = task_of_scale(scale.name)
    if task is not None and task.level == "turn":
        return task.measures
    return MEASURES_BY_KIND[scale.kind]


def worst(measure: str, L: int) -> float:
    """The largest value of a measure on L bins (its declared range's upper end)."""
    up = get_measure(measure).range[1]
    table = {"1": 1.0, "L-1": float(L - 1), "2/L": 2.0 / L}
    if up not in table:
        raise DialevalError(f"measure {measure!r} declares an upper bound {up!r} that strict scoring cannot use")
    return table[up]


def prepare_gold(gold: object, *, blocks: bool = False, format: str | None = None) -> dict[str, Distributions]:
    """Gold distributions from a corpus path, a :class:`Corpus`, or already built distributions.

    ``blocks=True`` merges consecutive turns of one sender first (utterance blocks).
    """
    if isinstance(gold, dict) and all(isinstance(v, Distributions) for v in gold.values()):
        return gold
    if not isinstance(gold, Corpus):
        from dialeval.io import read_corpus
        gold = read_corpus(gold, format=format)
    if blocks:
        gold = merge_blocks(gold)
    dists = gold_distributions(gold)
    if not dists:
        raise DialevalError("the gold corpus has no labels to score against (is it a test file?)", file=gold.source)
    return dists


@dataclass
class TurnScores:
    """Scores of one run: per dialogue (``matrix``, NaN where a dialogue has no item of that scale) and per item.

    ``columns`` are ``<scale>/<measure>``; ``items[scale]`` holds each scored item's measure values.
    """

    ids: list[str]
    columns: list[str]
    matrix: np.ndarray
    items: dict[str, dict[str, np.ndarray]]
    item_counts: dict[str, dict[str, int]]
    missing_dialogues: list[str]
    extra_dialogues: list[str]
    extra_items: list[str]
    settings: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """``{"scales": {scale: {measure: mean, ...}}, "items": ..., "dialogues": ..., "settings": ...}``."""
        out: dict = {"scales": {}}
        macro = self.settings.get("average", "dialogue") == "dialogue"
        for j, col in enumerate(self.columns):
            scale, m = col.rsplit("/", 1)
            if macro:
                v = self.matrix[:, j]
                v = v[~np.isnan(v)]
                mean = float(v.mean()) if v.size else float("nan")
            else:
                x = self.items[scale][m]
                mean = float(x.mean()) if x.size else float("nan")
            out["scales"].setdefault(scale, {})[m] = mean
        out["items"] = self.item_counts
        out["dialogues"] = {"scored": len(self.ids), "missing": len(self.missing_dialogues),
                            "extra": len(self.extra_dialogues)}
        out["settings"] = dict(self.settings)
        return out

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per dialogue, one column per scale and measure (empty where undefined)."""
        write_matrix_csv(path, self.ids, self.columns, self.matrix)


def _check(average: str, rsnod_variant: str) -> None:
    if average not in AVERAGES:
        raise DialevalError(f"average {average!r} is not allowed; allowed are " + ", ".join(AVERAGES))
    if rsnod_variant not in VARIANTS:
        raise DialevalError(f"rsnod variant {rsnod_variant!r} is not allowed; allowed are " + ", ".join(VARIANTS))


def score_turns(run: object, gold: object, *, average: str = "dialogue", strict: bool = False,
                rsnod_variant: str = "paper", blocks: bool = False, gold_format: str | None = None) -> TurnScores:
    """Score a run of predicted distributions against a corpus's annotator distributions.

    Parameters
    ----------
    run : path, folder of DBDC3 ``*.labels.json``, or parsed JSON
        See :mod:`dialeval.io.turnruns` for the layouts.
    gold : path, Corpus, or dict of Distributions
        The annotated corpus (any format :func:`dialeval.io.read_corpus` reads).
    average : {'dialogue', 'turn'}, default 'dialogue'
        Macro-average (mean of per-dialogue means) or micro-average over items (DBDC3's official script).
    strict : bool, default False
        A gold item missing from the run scores the worst value instead of being skipped.
    rsnod_variant : {'paper', '2018'}
    blocks : bool, default False
        Merge consecutive turns of one sender into utterance blocks before building the gold.
    gold_format : str, optional
        The gold's format when it cannot be detected.

    Returns
    -------
    TurnScores
        ``.summary()`` gives the means; every measure is a distance, lower is better.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn
    >>> from dialeval.io.dbdc import breakdown_scale
    >>> gold = Corpus([Dialogue("d1", [Turn("user", ["hi"]), Turn("system", ["yo"], {"breakdown": ["O", "X"]})])],
    ...               {"breakdown": breakdown_scale()})
    >>> run = [{"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 0.5, "X": 0.5}}]}]
    >>> score_turns(run, gold).summary()["scales"]["breakdown"]
    {'jsd': 0.0, 'mse': 0.0, 'nmd': 0.0, 'rsnod': 0.0}
    """
    _check(average, rsnod_variant)
    g = prepare_gold(gold, blocks=blocks, format=gold_format)
    parsed = read_turn_run(run, g)
    return score_aligned(parsed, g, average=average, strict=strict, rsnod_variant=rsnod_variant)


def score_aligned(run: TurnRun, gold: dict[str, Distributions], *, average: str = "dialogue", strict: bool = False,
                  rsnod_variant: str = "paper") -> TurnScores:
    """Score a run already aligned by :func:`dialeval.io.turnruns.read_turn_run`."""
    _check(average, rsnod_variant)
    run_ids = set(run.dialogue_ids)
    all_ids = list(dict.fromkeys(i for d in gold.values() for i in d.ids))
    check_common(run.extra_dialogues, all_ids, len(run_ids), run.file)
    ids = all_ids if strict else [i for i in all_ids if i in run_ids]
    pos = {i: k for k, i in enumerate(ids)}
    columns: list[str] = []
    blocks: list[np.ndarray] = []
    items: dict[str, dict[str, np.ndarray]] = {}
    counts: dict[str, dict[str, int]] = {}
    for name, g in gold.items():
        rows = run.rows.get(name, np.zeros(0, dtype=np.int64))
        probs = run.probs.get(name, np.zeros((0, len(g.scale))))
        present = np.zeros(len(g), dtype=bool)
        present[rows] = True
        in_scope = np.array([i in run_ids or strict for i in g.ids], dtype=bool)
        missing = np.flatnonzero(~present & in_scope)
        if not len(rows) and not (strict and len(missing)):
            continue
        scored_rows = np.concatenate([rows, missing]) if strict else rows
        dlg = np.array([pos[g.ids[r]] for r in scored_rows.tolist()], dtype=np.int64)
        n_per = np.bincount(dlg, minlength=len(ids))
        items[name] = {}
        counts[name] = {"scored": len(rows), "missing": len(missing)}
        for m in measures_of(g.scale):
            meas = get_measure(m)
            v = meas.compute(probs, g.probs[rows], variant=rsnod_variant if meas.has_variant else "paper") \
                if len(rows) else np.zeros(0)
            if strict:
                v = np.concatenate([v, np.full(len(missing), worst(m, len(g.scale)))])
            items[name][m] = v
            sums = np.bincount(dlg, v, minlength=len(ids))
            with np.errstate(invalid="ignore", divide="ignore"):
                blocks.append(np.where(n_per > 0, sums / np.maximum(n_per, 1), np.nan))
            columns.append(f"{name}/{m}")
    if not columns:
        raise DialevalError("the run predicts no item the gold has; check its ids, turn positions and scale names",
                            file=run.file)
    matrix = np.column_stack(blocks) if blocks else np.zeros((len(ids), 0))
    from dialeval import __version__
    settings = {"average": average, "strict": bool(strict), "rsnod_variant": rsnod_variant,
                "measures": {n: list(measures_of(gold[n].scale)) for n in items},
                "dialeval_version": __version__}
    missing_d = [i for i in all_ids if i not in run_ids]
    return TurnScores(ids, columns, matrix, items, counts, missing_d, run.extra_dialogues, run.extra_items, settings)


def evaluate_turns(run: object, gold: object, **kwargs) -> dict:
    """:func:`score_turns` then ``.summary()``: the means per scale and measure, counts and settings."""
    return score_turns(run, gold, **kwargs).summary()
