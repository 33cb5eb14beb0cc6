"""STC-3/DialEval task scores: dialogue quality (DQ) and nugget detection (ND), per dialogue and mean.

- DQ: per dialogue and key (A, S, E), NMD and RSNOD between predicted and gold distributions over
  the levels ``2, 1, 0, -1, -2``; reported per key as the mean over dialogues.
- ND: per turn, JSD and RNSS over the sender's nugget types; per dialogue
  ``alpha * mean(customer turns) + (1 - alpha) * mean(helpdesk turns)`` (a dialogue with turns of one
  sender only takes that sender's mean); reported as the mean over dialogues.
- Missing dialogues: skipped and counted by default; ``strict=True`` scores each as 1.0 (the worst).

The measures of each task are named once, in :data:`TASKS`; their definitions come from the registry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from dialeval.corpus import Corpus
from dialeval.coverage import check_common
from dialeval.errors import DialevalError, describe
from dialeval.io import stc3
from dialeval.io.atomic import write_matrix_csv
from dialeval.io.jsonarray import Source, check_source
from dialeval.io.runs import RunArrays, parse_run
from dialeval.io.stc3_gold import Stc3Gold, build_gold
from dialeval.measures import get as get_measure
from dialeval.measures.ordinal import VARIANTS
from dialeval.tasks import subtask_measures

TASKS: dict[str, tuple[str, ...]] = subtask_measures()
"""Measures of each subtask, in report order (declared in :mod:`dialeval.tasks`)."""


def _version() -> str:
    from dialeval import __version__
    return __version__


class PreparedGold:
    """Gold distributions built once, to score many runs against (see :func:`load_gold`)."""

    def __init__(self, data: Stc3Gold) -> None:
        self.data = data

    @property
    def ids(self) -> list[str]:
        return self.data.ids

    @property
    def subtasks(self) -> tuple[str, ...]:
        return tuple(t for t, ok in (("quality", self.data.quality is not None),
                                     ("nugget", self.data.cust is not None)) if ok)

    def __len__(self) -> int:
        return len(self.data.ids)

    def __repr__(self) -> str:
        return f"PreparedGold({len(self)} dialogues, subtasks={self.subtasks}, file={self.data.file!r})"

    def subset(self, ids: list[str] | np.ndarray) -> PreparedGold:
        """The gold restricted to some dialogues (e.g. a public half), in gold order."""
        d = self.data
        keep = np.zeros(len(d.ids), dtype=bool)
        for i in ids:
            if i not in d.row:
                raise DialevalError(f"id {describe(i)} is not in the gold", file=d.file)
            keep[d.row[i]] = True
        return PreparedGold(d.take(keep))


def load_gold(source: Source | Corpus | PreparedGold) -> PreparedGold:
    """Prepare gold distributions from an STC-3 dataset path, a parsed list, or a Corpus.

    Examples
    --------
    >>> from dialeval import load_gold
    >>> g = load_gold([{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...                 "annotations": [{"quality": {"A": 1, "S": 0, "E": 0}, "nugget": ["CNUG0"]}]}])
    >>> g.subtasks
    ('quality', 'nugget')
    """
    if isinstance(source, PreparedGold):
        return source
    if isinstance(source, Corpus):
        source = stc3.to_records(source)
    return PreparedGold(build_gold(source))


@dataclass
class Scores:
    """Per-dialogue scores of one run: ``matrix[i, j]`` is dialogue ``ids[i]`` under ``columns[j]``.

    Columns are named ``quality.<measure>.<key>`` and ``nugget.<measure>``. In strict mode the
    missing dialogues are rows of 1.0.
    """

    ids: list[str]
    columns: list[str]
    matrix: np.ndarray
    missing_ids: list[str]
    extra_ids: list[str]
    settings: dict = field(default_factory=dict)

    @property
    def scored(self) -> int:
        return len(self.ids) - (len(self.missing_ids) if self.settings.get("strict") else 0)

    def column(self, name: str) -> np.ndarray:
        try:
            return self.matrix[:, self.columns.index(name)]
        except ValueError:
            raise DialevalError(f"no column {describe(name)}; available are " + ", ".join(self.columns)) from None

    def summary(self) -> dict:
        """Mean over dialogues, shaped ``{"quality": {m: {key: v}}, "nugget": {m: v}, "dialogues": ...}``."""
        out: dict = {}
        means = self.matrix.mean(axis=0) if len(self.ids) else np.full(len(self.columns), np.nan)
        for col, v in zip(self.columns, means, strict=True):
            parts = col.split(".")
            node = out.setdefault(parts[0], {})
            if len(parts) == 3:
                node.setdefault(parts[1], {})[parts[2]] = float(v)
            else:
                node[parts[1]] = float(v)
        out["dialogues"] = {"scored": self.scored, "missing": len(self.missing_ids), "extra": len(self.extra_ids)}
        out["settings"] = dict(self.settings)
        return out

    def to_csv(self, path: str | os.PathLike) -> None:
        """One row per dialogue, one column per measure and key (the topic-by-run data of stats)."""
        write_matrix_csv(path, self.ids, self.columns, self.matrix)


def _check_options(alpha: float, rsnod_variant: str) -> None:
    if not isinstance(alpha, int | float) or not 0.0 <= float(alpha) <= 1.0:
        raise DialevalError(f"alpha {alpha!r} is not allowed; allowed are numbers in [0, 1]")
    if rsnod_variant not in VARIANTS:
        raise DialevalError(f"rsnod variant {describe(rsnod_variant)} is not allowed; allowed are "
                            + ", ".join(VARIANTS))


def score(submission: Source, gold: Source | Corpus | PreparedGold, *, alpha: float = 0.5,
          strict: bool = False, rsnod_variant: str = "paper") -> Scores:
    """Score a run per dialogue. See :func:`evaluate` for the arguments."""
    _check_options(alpha, rsnod_variant)
    check_source(submission, what="run")
    g = load_gold(gold)
    run = parse_run(submission, g.data)
    return score_arrays(run, g, alpha=alpha, strict=strict, rsnod_variant=rsnod_variant)


def score_arrays(run: RunArrays, gold: PreparedGold, *, alpha: float = 0.5, strict: bool = False,
                 rsnod_variant: str = "paper") -> Scores:
    """Score an already parsed run (:func:`dialeval.io.runs.parse_run`) against prepared gold."""
    _check_options(alpha, rsnod_variant)
    g = gold.data
    rows = run.rows
    check_common(run.extra_ids, g.ids, len(rows), run.file)
    cols: list[str] = []
    blocks: list[np.ndarray] = []
    if run.quality is not None:
        for m in TASKS["quality"]:
            meas = get_measure(m)
            for k in stc3.QUALITY_KEYS:
                cols.append(f"quality.{m}.{k}")
                blocks.append(meas.compute(run.quality[k], g.quality[k][rows], variant=rsnod_variant
                                           if meas.has_variant else "paper"))
    if run.cust is not None:
        in_run = np.zeros(len(g.ids), dtype=bool)
        in_run[rows] = True
        pos = np.full(len(g.ids), -1)
        pos[rows] = np.arange(len(rows))
        c_keep, h_keep = in_run[g.cust_dlg], in_run[g.help_dlg]
        c_dlg, h_dlg = pos[g.cust_dlg[c_keep]], pos[g.help_dlg[h_keep]]
        n = len(rows)
        nc = np.bincount(c_dlg, minlength=n)
        nh = np.bincount(h_dlg, minlength=n)
        wc = np.where(nh == 0, 1.0, np.where(nc == 0, 0.0, alpha))
        for m in TASKS["nugget"]:
            meas = get_measure(m)
            sc = np.bincount(c_dlg, meas.compute(run.cust, g.cust[c_keep]), minlength=n)
            sh = np.bincount(h_dlg, meas.compute(run.help, g.help[h_keep]), minlength=n)
            mc = np.divide(sc, nc, out=np.zeros(n), where=nc > 0)
            mh = np.divide(sh, nh, out=np.zeros(n), where=nh > 0)
            cols.append(f"nugget.{m}")
            blocks.append(wc * mc + (1.0 - wc) * mh)
    matrix = np.column_stack(blocks) if blocks else np.zeros((len(rows), 0))
    present = np.zeros(len(g.ids), dtype=bool)
    present[rows] = True
    missing = [g.ids[i] for i in np.flatnonzero(~present)]
    if strict and missing:
        full = np.ones((len(g.ids), matrix.shape[1]))
        full[rows] = matrix
        ids, matrix = list(g.ids), full
    else:
        ids = [g.ids[i] for i in rows]
    settings = {"alpha": float(alpha), "strict": bool(strict), "rsnod_variant": rsnod_variant,
                "dialeval_version": _version()}
    return Scores(ids, cols, matrix, missing, list(run.extra_ids), settings)


def evaluate(submission: Source, gold: Source | Corpus | PreparedGold, *, alpha: float = 0.5,
             strict: bool = False, rsnod_variant: str = "paper") -> dict:
    """Score an STC-3/DialEval run: DQ (NMD, RSNOD per A/S/E) and ND (JSD, RNSS), means over dialogues.

    Parameters
    ----------
    submission : path or list of dict
        The run file, or its records already parsed.
    gold : path, list of dict, Corpus or PreparedGold
        The annotated dataset; prepare it once with :func:`load_gold` to score many runs fast.
    alpha : float in [0, 1], default 0.5
        ND weight of customer turns; helpdesk turns get ``1 - alpha``.
    strict : bool, default False
        If True, a gold dialogue missing from the run scores 1.0 (the worst) on every measure; if False
        it is skipped and counted under ``dialogues.missing``.
    rsnod_variant : {'paper', '2018'}
        'paper' (MEASURES.md, the default) or the first STC-3 script's all-bins averaging.

    Returns
    -------
    dict
        ``{"quality": {"nmd": {"A", "S", "E"}, "rsnod": {...}}, "nugget": {"jsd", "rnss"},
        "dialogues": {"scored", "missing", "extra"}, "settings": {...}}``; a subtask absent from the run
        is absent here. Lower is better for every measure.

    Examples
    --------
    >>> import dialeval
    >>> gold = [{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...          "annotations": [{"quality": {"A": 1, "S": 0, "E": 0}}, {"quality": {"A": 1, "S": 1, "E": 0}}]}]
    >>> run = [{"id": "1", "quality": {k: {"1": 1.0} for k in "ASE"}}]
    >>> r = dialeval.evaluate(run, gold)
    >>> r["quality"]["nmd"]["A"], round(r["quality"]["nmd"]["S"], 4)
    (0.0, 0.125)
    """
    return score(submission, gold, alpha=alpha, strict=strict, rsnod_variant=rsnod_variant).summary()
