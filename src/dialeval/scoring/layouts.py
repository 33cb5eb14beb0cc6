"""Gold as items per scale, and the run layouts that align a run with it.

Scoring sees every corpus the same way (ARCHITECTURE.md): per scale, an ``n × L`` array of gold
distributions with the dialogue of each item (:class:`ScaleItems`), and a run as, per scale, the gold items
it predicts with its distributions (:class:`AlignedRun`). What differs between corpora is only how a run
file is laid out, so that is all a *layout* knows:

- :class:`Stc3Layout`: STC-3/DialEval run records ``{id, quality, nugget}``, read by the fast
  :func:`dialeval.io.runs.parse_run` against the STC-3 gold arrays of :mod:`dialeval.io.stc3_gold`;
- :class:`ItemLayout`: dialeval's per-item run layout and DBDC3's ``*.labels.json``
  (:func:`dialeval.io.turnruns.read_turn_run`), against the gold distributions of any corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.corpus import Scale
from dialeval.distributions import Distributions
from dialeval.io.stc3 import NUGGET_SCALE, QUALITY_KEYS, stc3_scales
from dialeval.io.stc3_gold import Stc3Gold


@dataclass(frozen=True)
class ScaleItems:
    """Gold of one scale: ``probs[i]`` is item i's distribution, ``dialogue[i]`` its dialogue's gold row."""

    scale: Scale
    probs: np.ndarray
    dialogue: np.ndarray

    def __len__(self) -> int:
        return len(self.probs)


@dataclass
class AlignedRun:
    """A run aligned with gold: the gold dialogue rows it covers (ascending) and, per scale it predicts, the
    gold item rows (``rows``) with its normalised distributions (``probs``, same order).

    ``labels[scale]`` holds the run's hard label of each row where its layout carries one (DBDC3's).
    """

    dialogues: np.ndarray
    rows: dict[str, np.ndarray]
    probs: dict[str, np.ndarray]
    extra_dialogues: list[str] = field(default_factory=list)
    extra_items: list[str] = field(default_factory=list)
    file: str | None = None
    labels: dict[str, list[str | None]] = field(default_factory=dict)


def _rows_of(n: int, keep: np.ndarray) -> np.ndarray:
    """New dialogue row of each old row where ``keep`` (-1 elsewhere)."""
    new = np.full(n, -1, dtype=np.int64)
    new[keep] = np.arange(int(keep.sum()))
    return new


@dataclass
class Stc3Layout:
    """Runs as STC-3/DialEval records, aligned by :func:`dialeval.io.runs.parse_run` with ``data``."""

    data: Stc3Gold

    @property
    def ids(self) -> list[str]:
        return self.data.ids

    @property
    def file(self) -> str | None:
        return self.data.file

    def items(self) -> dict[str, ScaleItems]:
        d, scales = self.data, stc3_scales()
        out: dict[str, ScaleItems] = {}
        if d.quality is not None:
            every = np.arange(len(d.ids))
            out |= {k: ScaleItems(scales[k], d.quality[k], every) for k in QUALITY_KEYS}
        if d.cust is not None:
            out[NUGGET_SCALE["customer"]] = ScaleItems(scales[NUGGET_SCALE["customer"]], d.cust, d.cust_dlg)
            out[NUGGET_SCALE["helpdesk"]] = ScaleItems(scales[NUGGET_SCALE["helpdesk"]], d.help, d.help_dlg)
        return out

    def take(self, keep: np.ndarray) -> Stc3Layout:
        return Stc3Layout(self.data.take(keep))

    def read(self, source: object) -> AlignedRun:
        from dialeval.io.jsonarray import check_source
        from dialeval.io.runs import items_as_records, parse_run

        check_source(source, what="run")
        return self.align(parse_run(items_as_records(source), self.data))

    def align(self, run) -> AlignedRun:
        """A parsed :class:`~dialeval.io.runs.RunArrays` as items per scale."""
        d = self.data
        rows, probs = {}, {}
        if run.quality is not None:
            for k in QUALITY_KEYS:
                rows[k], probs[k] = run.rows, run.quality[k]
        if run.cust is not None:
            in_run = np.zeros(len(d.ids), dtype=bool)
            in_run[run.rows] = True
            rows[NUGGET_SCALE["customer"]] = np.flatnonzero(in_run[d.cust_dlg])
            rows[NUGGET_SCALE["helpdesk"]] = np.flatnonzero(in_run[d.help_dlg])
            probs[NUGGET_SCALE["customer"]], probs[NUGGET_SCALE["helpdesk"]] = run.cust, run.help
        return AlignedRun(np.asarray(run.rows, dtype=np.int64), rows, probs, list(run.extra_ids), [], run.file)


@dataclass
class ItemLayout:
    """Runs in dialeval's per-item layout or DBDC3's ``*.labels.json``, aligned with ``dists`` by
    :func:`dialeval.io.turnruns.read_turn_run`."""

    dists: dict[str, Distributions]
    file: str | None = None
    ids: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.ids = list(dict.fromkeys(i for d in self.dists.values() for i in d.ids))
        self._row = {i: r for r, i in enumerate(self.ids)}

    def items(self) -> dict[str, ScaleItems]:
        return {n: ScaleItems(d.scale, d.probs, np.fromiter((self._row[i] for i in d.ids), dtype=np.int64,
                                                            count=len(d.ids))) for n, d in self.dists.items()}

    def take(self, keep: np.ndarray) -> ItemLayout:
        kept = {i for i, k in zip(self.ids, keep.tolist(), strict=True) if k}
        return ItemLayout({n: d.take(np.flatnonzero(np.fromiter((i in kept for i in d.ids), dtype=bool,
                                                                   count=len(d.ids))))
                           for n, d in self.dists.items()}, self.file)

    def read(self, source: object) -> AlignedRun:
        from dialeval.io.turnruns import read_turn_run

        run = read_turn_run(source, self.dists)
        covered = np.sort(np.fromiter((self._row[i] for i in run.dialogue_ids), dtype=np.int64,
                                      count=len(run.dialogue_ids)))
        return AlignedRun(covered, run.rows, run.probs, run.extra_dialogues, run.extra_items, run.file, run.labels)
