"""Gold distributions of an STC-3/DialEval dataset as arrays, built fast and in bounded memory.

The dataset is read in batches of dialogues (a large file is streamed, never held whole). Each batch is
first taken apart with C-level ``map``/``itemgetter`` passes and counted with numpy; any surprise (a
missing key, an unknown label, a wrong length, a value of the wrong type) sends that batch through the
slow per-dialogue path, which either raises the located error or, for unusual but valid input (integer
ids, say), builds the same counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice, repeat
from operator import itemgetter

import numpy as np

from dialeval.errors import DialevalError
from dialeval.io.jsonarray import Source, gc_paused, iter_records, source_name
from dialeval.io.stc3 import (
    NUGGET_TYPES,
    QUALITY_KEYS,
    QUALITY_LEVELS,
    annotations_of,
    check_annotations,
    dialogue_id,
    dialogue_senders,
)

BATCH = 2_000
_ALL_TYPES = NUGGET_TYPES["customer"] + NUGGET_TYPES["helpdesk"]
_CODE = {t: i for i, t in enumerate(_ALL_TYPES)}
_N_CUST = len(NUGGET_TYPES["customer"])
_N_TYPES = len(_ALL_TYPES)
_N_LEVELS = len(QUALITY_LEVELS)
_GET_ID = itemgetter("id")
_GET_TURNS = itemgetter("turns")
_GET_SENDER = itemgetter("sender")
_GET_QUALITY = itemgetter("quality")
_GET_NUGGET = itemgetter("nugget")
_GET_KEYS = itemgetter(*QUALITY_KEYS)


@dataclass
class Stc3Gold:
    """Gold distributions of an STC-3 dataset (built by :func:`build_gold`).

    ``quality[k]`` is n × 5 (levels ``2 .. -2``) per key; ``cust`` / ``help`` hold one row per
    customer / helpdesk turn (in dialogue order) over that sender's nugget types; all rows are
    normalised. ``senders[i]`` are the senders of dialogue i's turns; the other index arrays are derived
    from them: ``turn_start`` (n + 1 offsets into the flat list of turns), ``is_cust`` (per flat turn),
    ``turn_pos`` (a flat turn's row in ``cust`` or ``help``), ``cust_dlg`` / ``help_dlg`` (the dialogue
    row of each customer / helpdesk turn).
    """

    ids: list[str]
    senders: list[tuple[str, ...]]
    n_annotators: np.ndarray
    quality: dict[str, np.ndarray] | None
    cust: np.ndarray | None
    help: np.ndarray | None
    file: str | None = None
    row: dict[str, int] = field(init=False, repr=False)
    n_turns: np.ndarray = field(init=False, repr=False)
    turn_start: np.ndarray = field(init=False, repr=False)
    is_cust: np.ndarray = field(init=False, repr=False)
    turn_pos: np.ndarray = field(init=False, repr=False)
    cust_dlg: np.ndarray = field(init=False, repr=False)
    help_dlg: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.row = {d: i for i, d in enumerate(self.ids)}
        self.n_turns = np.fromiter(map(len, self.senders), dtype=np.int64, count=len(self.senders))
        self.turn_start = np.concatenate([[0], np.cumsum(self.n_turns)]).astype(np.int64)
        flat = list(chain.from_iterable(self.senders))
        self.is_cust = np.fromiter(map("customer".__eq__, flat), dtype=bool, count=len(flat))
        turn_dlg = np.repeat(np.arange(len(self.ids)), self.n_turns)
        self.turn_pos = np.where(self.is_cust, np.cumsum(self.is_cust) - 1, np.cumsum(~self.is_cust) - 1)
        self.cust_dlg, self.help_dlg = turn_dlg[self.is_cust], turn_dlg[~self.is_cust]

    def take(self, keep: np.ndarray) -> Stc3Gold:
        """The gold restricted to the dialogues where the boolean mask ``keep`` is true, in gold order."""
        return Stc3Gold(
            [i for i, k in zip(self.ids, keep.tolist(), strict=True) if k],
            [s for s, k in zip(self.senders, keep.tolist(), strict=True) if k],
            self.n_annotators[keep],
            {k: v[keep] for k, v in self.quality.items()} if self.quality is not None else None,
            self.cust[keep[self.cust_dlg]] if self.cust is not None else None,
            self.help[keep[self.help_dlg]] if self.help is not None else None,
            self.file)


class _Slow(Exception):
    """The fast pass met something it does not handle; the batch goes through the slow path."""


@dataclass
class _Batch:
    ids: list[str]
    senders: list[tuple[str, ...]]
    n_ann: np.ndarray                 # (b,)
    quality: np.ndarray | None        # (b, 3, 5) counts
    turns: np.ndarray | None          # (turns of the batch, 7) counts over all nugget types


def _batches(records: Iterable) -> Iterator[list]:
    it = iter(records)
    while batch := list(islice(it, BATCH)):
        yield batch


def build_gold(source: Source) -> Stc3Gold:
    """Build the gold distributions of an STC-3 dataset (path or parsed list).

    Every check of :func:`dialeval.io.stc3.read_stc3` applies, with its located message; a dialogue
    without annotations is an error (a test file is not a gold file), as is a dataset where some
    annotations give quality (or nugget) labels and others do not.

    Examples
    --------
    >>> g = build_gold([{"id": "7", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...                  "annotations": [{"quality": {"A": 2, "S": 1, "E": 1}, "nugget": ["CNUG0"]},
    ...                                  {"quality": {"A": 1, "S": 1, "E": 0}, "nugget": ["CNaN"]}]}])
    >>> g.quality["A"].tolist(), g.cust.tolist()
    ([[0.5, 0.5, 0.0, 0.0, 0.0]], [[0.5, 0.0, 0.0, 0.5]])
    """
    with gc_paused():
        return _build_gold(source)


def _build_gold(source: Source) -> Stc3Gold:
    file = source_name(source)
    parts: list[_Batch] = []
    seen: dict[str, int] = {}
    shape: tuple[bool, bool] | None = None
    offset = 0
    for batch in _batches(iter_records(source, what="gold")):
        if shape is None:
            shape = _subtasks(batch[0], file)
        try:
            part = _fast(batch, shape, seen)
        except (_Slow, KeyError, TypeError, AttributeError, ValueError):
            part = _slow(batch, shape, seen, offset, file)
        seen.update((d, offset + i) for i, d in enumerate(part.ids))
        parts.append(part)
        offset += len(batch)
    if shape is None:
        raise DialevalError("the gold file holds no dialogue", file=file)
    return _assemble(parts, shape, file)


def _subtasks(first: object, file: str | None) -> tuple[bool, bool]:
    """Which of quality / nugget the dataset gives, read off the first dialogue's first annotation."""
    did = dialogue_id(first, 0, file)
    senders = dialogue_senders(first, did, file)  # type: ignore[arg-type]
    anns = annotations_of(first, did, file)  # type: ignore[arg-type]
    if not anns:
        raise DialevalError("no annotations: a gold file needs every annotator's labels (is this a test file?)",
                            file=file, dialogue=did, field="annotations")
    check_annotations(anns, senders, did, file)
    has_q, has_n = "quality" in anns[0], "nugget" in anns[0]
    if not has_q and not has_n:
        raise DialevalError("the first annotation gives neither 'quality' nor 'nugget'", file=file, dialogue=did,
                            field="annotations[0]")
    return has_q, has_n


def _fast(batch: list, shape: tuple[bool, bool], seen: dict[str, int]) -> _Batch:
    has_q, has_n = shape
    ids = list(map(_GET_ID, batch))
    if set(map(type, ids)) != {str} or "" in ids or len(set(ids)) != len(ids) or not seen.keys().isdisjoint(ids):
        raise _Slow
    turns = list(map(_GET_TURNS, batch))
    if set(map(type, turns)) != {list}:
        raise _Slow
    n_turns = np.fromiter(map(len, turns), dtype=np.int64, count=len(turns))
    senders_flat = list(map(_GET_SENDER, chain.from_iterable(turns)))
    if n_turns.min() == 0 or not set(senders_flat) <= {"customer", "helpdesk"}:
        raise _Slow
    anns = list(map(dict.get, batch, repeat("annotations")))
    if set(map(type, anns)) != {list}:
        raise _Slow
    counts = np.fromiter(map(len, anns), dtype=np.int64, count=len(anns))
    if counts.min() == 0:
        raise _Slow
    flat = list(chain.from_iterable(anns))
    if sum(map(dict.__contains__, flat, repeat("quality"))) != (len(flat) if has_q else 0):
        raise _Slow
    if sum(map(dict.__contains__, flat, repeat("nugget"))) != (len(flat) if has_n else 0):
        raise _Slow
    quality = _fast_quality(flat, counts) if has_q else None
    turn_counts = _fast_nuggets(flat, counts, n_turns, senders_flat) if has_n else None
    senders, pos = [], 0
    for n in n_turns.tolist():
        senders.append(tuple(senders_flat[pos:pos + n]))
        pos += n
    return _Batch(ids, senders, counts, quality, turn_counts)


def _fast_quality(flat: list[dict], counts: np.ndarray) -> np.ndarray:
    qd = list(map(_GET_QUALITY, flat))
    if set(map(type, qd)) != {dict} or sum(map(len, qd)) != len(QUALITY_KEYS) * len(qd):
        raise _Slow
    triples = list(map(_GET_KEYS, qd))
    if set(map(type, chain.from_iterable(triples))) != {int}:
        raise _Slow
    v = np.fromiter(chain.from_iterable(triples), dtype=np.int64, count=len(QUALITY_KEYS) * len(qd))
    v = v.reshape(-1, len(QUALITY_KEYS))
    if v.min() < -2 or v.max() > 2:
        raise _Slow
    dlg = np.repeat(np.arange(len(counts)), counts)
    # level 2 is bin 0, ..., level -2 is bin 4
    idx = (dlg[:, None] * len(QUALITY_KEYS) + np.arange(len(QUALITY_KEYS))) * _N_LEVELS + (2 - v)
    return np.bincount(idx.ravel(), minlength=len(counts) * len(QUALITY_KEYS) * _N_LEVELS).reshape(
        len(counts), len(QUALITY_KEYS), _N_LEVELS).astype(float)


def _fast_nuggets(flat: list[dict], counts: np.ndarray, n_turns: np.ndarray, senders_flat: list[str]) -> np.ndarray:
    nl = list(map(_GET_NUGGET, flat))
    if set(map(type, nl)) != {list}:
        raise _Slow
    lens = np.fromiter(map(len, nl), dtype=np.int64, count=len(nl))
    if not np.array_equal(lens, np.repeat(n_turns, counts)):
        raise _Slow
    total = int(lens.sum())
    codes = np.fromiter(map(_CODE.__getitem__, chain.from_iterable(nl)), dtype=np.int64, count=total)
    is_cust = np.fromiter(map("customer".__eq__, senders_flat), dtype=bool, count=len(senders_flat))
    # flat turn index of each label: annotations of dialogue d list that dialogue's turns in order
    turn_base = np.concatenate([[0], np.cumsum(n_turns)[:-1]])
    ann_turn_base = np.repeat(turn_base, counts)
    turn = np.repeat(ann_turn_base, lens) + (np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens))
    if ((codes < _N_CUST) != is_cust[turn]).any():
        raise _Slow
    return np.bincount(turn * _N_TYPES + codes, minlength=len(senders_flat) * _N_TYPES).reshape(
        len(senders_flat), _N_TYPES).astype(float)


def _slow(batch: list, shape: tuple[bool, bool], seen: dict[str, int], offset: int, file: str | None) -> _Batch:
    """Check each dialogue in full (raising the first located error) and count its labels."""
    has_q, has_n = shape
    ids, senders_all, n_ann, q_rows, t_rows = [], [], [], [], []
    local: set[str] = set()
    for j, rec in enumerate(batch):
        did = dialogue_id(rec, offset + j, file)
        if did in seen or did in local:
            raise DialevalError("duplicate dialogue id", file=file, dialogue=did, field="id")
        local.add(did)
        senders = dialogue_senders(rec, did, file)
        anns = annotations_of(rec, did, file)
        if not anns:
            raise DialevalError("no annotations: a gold file needs every annotator's labels (is this a test "
                                "file?)", file=file, dialogue=did, field="annotations")
        check_annotations(anns, senders, did, file)
        if ("quality" in anns[0], "nugget" in anns[0]) != shape:
            raise DialevalError("annotations differ from the first dialogue's in which of quality/nugget they "
                                "give", file=file, dialogue=did, field="annotations")
        if has_q:
            q = np.zeros((len(QUALITY_KEYS), _N_LEVELS))
            for a in anns:
                for k, key in enumerate(QUALITY_KEYS):
                    q[k, QUALITY_LEVELS.index(str(a["quality"][key]))] += 1
            q_rows.append(q)
        if has_n:
            t = np.zeros((len(senders), _N_TYPES))
            for a in anns:
                for i, label in enumerate(a["nugget"]):
                    t[i, _CODE[label]] += 1
            t_rows.append(t)
        ids.append(did)
        senders_all.append(tuple(senders))
        n_ann.append(len(anns))
    return _Batch(ids, senders_all, np.asarray(n_ann, dtype=np.int64),
                  np.stack(q_rows) if has_q else None,
                  np.concatenate(t_rows) if has_n else None)


def _assemble(parts: list[_Batch], shape: tuple[bool, bool], file: str | None) -> Stc3Gold:
    has_q, has_n = shape
    ids = [i for p in parts for i in p.ids]
    senders = [s for p in parts for s in p.senders]
    n_ann = np.concatenate([p.n_ann for p in parts])
    quality = cust = help_ = None
    if has_q:
        q = np.concatenate([p.quality for p in parts]) / n_ann[:, None, None]  # type: ignore[misc]
        quality = {k: np.ascontiguousarray(q[:, j, :]) for j, k in enumerate(QUALITY_KEYS)}
    gold = Stc3Gold(ids, senders, n_ann, quality, None, None, file)
    if has_n:
        t = np.concatenate([p.turns for p in parts])  # type: ignore[misc]
        t /= np.repeat(n_ann, gold.n_turns)[:, None]
        cust, help_ = t[gold.is_cust, :_N_CUST], t[~gold.is_cust, _N_CUST:]
        gold.cust, gold.help = np.ascontiguousarray(cust), np.ascontiguousarray(help_)
    return gold
