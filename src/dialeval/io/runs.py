"""STC-3/DialEval submission (run) files: parsed against prepared gold into aligned arrays.

A run is a JSON array of ``{"id", "quality": {"A": {"2": p, ..., "-2": p}, "S": ..., "E": ...},
"nugget": [{"CNUG0": p, ...}, {"HNUG": p, ...}, ...]}``; ``quality`` or ``nugget`` may be left out (the
same for every dialogue). A missing bin counts as 0; values are normalised per distribution.

Parsing works on batches of dialogues (a large file is streamed, never held whole). Each batch is first
taken apart with C-level ``map``/``itemgetter`` passes; any surprise (a missing key or bin, an unknown
bin, a wrong number of entries, a value that is not a number) sends the batch through the slow
per-dialogue path, which raises the located error or, for valid but unusual input (a missing bin, an
integer id), reads it correctly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import itemgetter
from pathlib import Path

import numpy as np

from dialeval.errors import DialevalError, describe, suggest
from dialeval.io.jsonarray import Source, dump_json, gc_paused, iter_records, source_name
from dialeval.io.stc3 import NUGGET_SCALE, NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS, dialogue_id
from dialeval.io.stc3_gold import Stc3Gold
from dialeval.io.values import first_bad_row, normalise, sum_problem, value_problem

BATCH = 5_000
_GET_ID = itemgetter("id")
_GET_KEYS = itemgetter(*QUALITY_KEYS)
_GET_Q = itemgetter(*QUALITY_LEVELS)
_GET_C = itemgetter(*NUGGET_TYPES["customer"])
_GET_H = itemgetter(*NUGGET_TYPES["helpdesk"])
_N_Q, _N_L = len(QUALITY_KEYS), len(QUALITY_LEVELS)
_N_C, _N_H = len(NUGGET_TYPES["customer"]), len(NUGGET_TYPES["helpdesk"])
_NUMBER_TYPES = {float, int}
RECORD_KEYS = ("id", "quality", "nugget")
_RECORD_KEY_SET = frozenset(RECORD_KEYS)
"""The keys a run record may have; any other is an error naming it and the closest of these."""


def _check_keys(rec: dict, i: int, file: str | None) -> None:
    for k in rec:
        if k not in RECORD_KEYS:
            did = rec.get("id")
            raise DialevalError(f"unknown key {k!r}{suggest(k, RECORD_KEYS)} (allowed keys: "
                                + ", ".join(RECORD_KEYS) + ")", file=file,
                                dialogue=str(did) if isinstance(did, str | int) and did != "" else None,
                                field=None if isinstance(did, str | int) and did != "" else f"item {i}")


@dataclass
class RunArrays:
    """A run aligned with the gold: ``rows`` are the gold rows (ascending) of the scored dialogues.

    ``quality[k]`` has one normalised row per scored dialogue (in ``rows`` order); ``cust`` / ``help`` one
    row per customer / helpdesk turn of the scored dialogues, in gold order (the order of ``gold.cust``).
    """

    rows: np.ndarray
    quality: dict[str, np.ndarray] | None
    cust: np.ndarray | None
    help: np.ndarray | None
    extra_ids: list[str] = field(default_factory=list)
    file: str | None = None


class _Slow(Exception):
    """The fast pass met something it does not handle; the batch goes through the slow path."""


@dataclass
class _Batch:
    """One batch, in run order: the dialogues that are in the gold, and the values they predict."""

    ids: list[str]                   # scored dialogues of the batch
    rows: list[int]                  # their gold rows
    extra: list[str]                 # ids not in the gold
    quality: np.ndarray | None       # (len(ids), 3, 5), raw values
    turn: np.ndarray | None          # flat gold turn index of each predicted turn (run order)
    owner: np.ndarray | None         # index into ids of each predicted turn
    cust: np.ndarray | None          # values of the customer turns among `turn` (in that order)
    help: np.ndarray | None


_ITEM_KEYS = frozenset((*QUALITY_KEYS, "turns"))
"""Keys of a record of dialeval's per-item layout of STC-3 scales (``dialeval gold``'s document)."""


def _is_item_record(rec: object) -> bool:
    return isinstance(rec, dict) and not _RECORD_KEY_SET - {"id"} & rec.keys() and bool(_ITEM_KEYS & rec.keys())


def items_as_records(source: Source) -> Source:
    """``source`` as STC-3 run records when it is in dialeval's per-item layout (the document ``dialeval
    gold`` writes for an STC-3 corpus, or its ``dialogues`` array): each dialogue's ``A``/``S``/``E``
    become ``quality``, its turns' nugget distributions, in turn order, ``nugget``. Anything else is
    returned as it is, for :func:`parse_run` to read or to reject.

    Raises
    ------
    DialevalError
        A per-item dialogue whose turns are not numbered 0, 1, 2, ... in order (STC-3 runs predict every
        turn, in order).

    Examples
    --------
    >>> items_as_records([{"id": "1", "A": {"2": 1.0}, "turns": [{"turn": 0, "nugget_customer": {"CNUG0": 1}}]}])
    [{'id': '1', 'quality': {'A': {'2': 1.0}}, 'nugget': [{'CNUG0': 1}]}]
    """
    from dialeval.io._files import load_json_document

    records = source
    if isinstance(source, str | os.PathLike):
        from dialeval.io.detect import probe

        pr = probe(Path(source))
        if not (pr.top == "{" or (pr.top == "[" and _is_item_record(pr.first))):
            return source
        records = load_json_document(Path(source))
        if isinstance(records, dict):
            records = records.get("dialogues", records)
    if not isinstance(records, list | tuple) or not records or not _is_item_record(records[0]):
        return source
    return [_item_record(r, source_name(source)) if isinstance(r, dict) else r for r in records]


def _item_record(rec: dict, file: str | None) -> dict:
    out: dict = {"id": rec.get("id")}
    if quality := {k: rec[k] for k in QUALITY_KEYS if k in rec}:
        out["quality"] = quality
    turns = rec.get("turns")
    if isinstance(turns, list) and turns:
        numbers = [t.get("turn") if isinstance(t, dict) else None for t in turns]
        if numbers != list(range(len(turns))):
            raise DialevalError(f"turns are numbered {describe(numbers)}; an STC-3 run predicts every turn, "
                                "numbered 0, 1, 2, ... in order", file=file, dialogue=str(rec.get("id")),
                                field="turns")
        out["nugget"] = [t.get(NUGGET_SCALE["customer"], t.get(NUGGET_SCALE["helpdesk"])) for t in turns]
    return out


def parse_run(source: Source, gold: Stc3Gold) -> RunArrays:
    """Read a run (path or parsed list) and align it with ``gold``.

    Dialogues whose id is not in the gold are counted in ``extra_ids`` (a warning, not an error).

    Raises
    ------
    DialevalError
        Not JSON / not UTF-8 / not a list; a dialogue without id; a duplicate id; a wrong number of
        nugget entries; a nugget type of the other sender; an unknown bin; a negative, NaN, infinite or
        all-zero distribution; a quality key other than A/S/E; a subtask given for some dialogues only or
        missing from the gold.

    Examples
    --------
    >>> from dialeval.io.stc3_gold import build_gold
    >>> g = build_gold([{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...                  "annotations": [{"nugget": ["CNUG0"]}]}])
    >>> r = parse_run([{"id": "1", "nugget": [{"CNUG0": 3, "CNaN": 1}]}, {"id": "9", "nugget": []}], g)
    >>> r.cust.tolist(), r.extra_ids
    ([[0.75, 0.0, 0.0, 0.25]], ['9'])
    """
    with gc_paused():
        return _parse_run(source, gold)


def _parse_run(source: Source, gold: Stc3Gold) -> RunArrays:
    file = source_name(source)
    shape: tuple[bool, bool] | None = None
    seen: set[str] = set()
    parts: list[_Batch] = []
    offset = 0
    records = iter(iter_records(source, what="run"))
    while batch := list(islice(records, BATCH)):
        if shape is None:
            shape = _subtasks(batch[0], gold, file)
        try:
            part = _fast(batch, shape, gold, seen)
        except (_Slow, KeyError, TypeError, AttributeError, ValueError, OverflowError):
            part = _slow(batch, shape, gold, seen, offset, file)
        _check_values(part, gold, file)
        seen.update(part.ids)
        seen.update(part.extra)
        parts.append(part)
        offset += len(batch)
    if shape is None:
        raise DialevalError("the run holds no dialogue", file=file)
    return _assemble(parts, shape, gold, file)


SUBTASK_VALUES = (("quality", "an object with keys A, S, E"), ("nugget", "a list with one distribution per turn"))
"""A run record's subtasks and what each may hold, as the refusals of a subtask given as ``null`` say it."""


def _check_not_null(rec: dict, did: str | None, file: str | None) -> None:
    """A subtask given as ``null`` is refused where it is: it is not a subtask left out (which every dialogue of
    the run must do alike), and read as one it made the next dialogue that gives the subtask the one blamed."""
    for key, allowed in SUBTASK_VALUES:
        if key in rec and rec[key] is None:
            raise DialevalError(f"{key} None is not allowed; allowed is {allowed}, or no '{key}' key in any "
                                "dialogue of a run without that subtask", file=file, dialogue=did, field=key)


def _subtasks(first: object, gold: Stc3Gold, file: str | None) -> tuple[bool, bool]:
    if not isinstance(first, dict):
        raise DialevalError(f"item 0 is a JSON {type(first).__name__}; expected an object", file=file)
    _check_keys(first, 0, file)
    did = None if first.get("id") is None else str(first.get("id"))
    _check_not_null(first, did, file)
    has_q, has_n = first.get("quality") is not None, first.get("nugget") is not None
    if not has_q and not has_n:
        raise DialevalError("neither 'quality' nor 'nugget' is given", file=file, dialogue=did)
    if has_q and gold.quality is None:
        raise DialevalError("the run has quality predictions but the gold has no quality labels", file=file,
                            dialogue=did, field="quality")
    if has_n and gold.cust is None:
        raise DialevalError("the run has nugget predictions but the gold has no nugget labels", file=file,
                            dialogue=did, field="nugget")
    return has_q, has_n


# --- the fast pass -----------------------------------------------------------------------------------

def _fast(batch: list, shape: tuple[bool, bool], gold: Stc3Gold, seen: set[str]) -> _Batch:
    has_q, has_n = shape
    if not set(chain.from_iterable(map(dict.keys, batch))) <= _RECORD_KEY_SET:
        raise _Slow
    ids = list(map(_GET_ID, batch))
    if set(map(type, ids)) != {str} or "" in ids or len(set(ids)) != len(ids) or not seen.isdisjoint(ids):
        raise _Slow
    qs = list(map(dict.get, batch, repeat("quality")))
    ns = list(map(dict.get, batch, repeat("nugget")))
    if qs.count(None) != (0 if has_q else len(qs)) or ns.count(None) != (0 if has_n else len(ns)):
        raise _Slow
    if not has_q and any(map(dict.__contains__, batch, repeat("quality"))):   # "quality": null
        raise _Slow
    if not has_n and any(map(dict.__contains__, batch, repeat("nugget"))):
        raise _Slow
    rows_all = list(map(gold.row.get, ids))
    present = [r is not None for r in rows_all]
    kept_ids = list(compress(ids, present))
    rows = list(compress(rows_all, present))
    extra = [i for i, p in zip(ids, present, strict=True) if not p]
    quality = _fast_quality(list(compress(qs, present))) if has_q else None
    turn = owner = cust = help_ = None
    if has_n:
        turn, owner, cust, help_ = _fast_nuggets(list(compress(ns, present)), rows, gold)
    return _Batch(kept_ids, rows, extra, quality, turn, owner, cust, help_)


def _values(dists: list, getter: itemgetter, width: int) -> np.ndarray:
    """Rows of ``width`` numbers from a list of bin->value objects that hold exactly the bins of ``getter``."""
    if set(map(type, dists)) != {dict} or sum(map(len, dists)) != width * len(dists):
        raise _Slow
    vals = list(map(getter, dists))
    if not set(map(type, chain.from_iterable(vals))) <= _NUMBER_TYPES:
        raise _Slow
    return np.fromiter(chain.from_iterable(vals), dtype=float, count=width * len(vals)).reshape(-1, width)


def _fast_quality(qd: list) -> np.ndarray:
    if set(map(type, qd)) != {dict} or sum(map(len, qd)) != _N_Q * len(qd):
        raise _Slow
    dists = list(chain.from_iterable(map(_GET_KEYS, qd)))
    return _values(dists, _GET_Q, _N_L).reshape(len(qd), _N_Q, _N_L)


def _fast_nuggets(nd: list, rows: list[int], gold: Stc3Gold) -> tuple:
    if set(map(type, nd)) - {list}:
        raise _Slow
    lens = np.fromiter(map(len, nd), dtype=np.int64, count=len(nd))
    rows_a = np.asarray(rows, dtype=np.int64)
    if not np.array_equal(lens, gold.n_turns[rows_a]):
        raise _Slow
    total = int(lens.sum())
    within = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    turn = np.repeat(gold.turn_start[rows_a], lens) + within
    owner = np.repeat(np.arange(len(nd)), lens)
    is_c = gold.is_cust[turn]
    flat = list(chain.from_iterable(nd))
    cust = _values(list(compress(flat, is_c.tolist())), _GET_C, _N_C)
    help_ = _values(list(compress(flat, (~is_c).tolist())), _GET_H, _N_H)
    return turn, owner, cust, help_


# --- the slow path: every check, with its location ---------------------------------------------------

def _bins(d: object, levels: tuple[str, ...], did: str, where: str, file: str | None,
          sender: str | None = None) -> tuple:
    """Exact read of one distribution object, with located errors."""
    if not isinstance(d, dict):
        raise DialevalError(f"expected an object of bin: probability, received {describe(d)}",
                            file=file, dialogue=did, field=where)
    for k, v in d.items():
        if k not in levels:
            hint = ""
            if sender is not None:
                other = "helpdesk" if sender == "customer" else "customer"
                if k in NUGGET_TYPES[other]:
                    hint = f" (a {other} type; this turn's sender is {sender})"
            raise DialevalError(f"unknown bin name {describe(k)}{hint or suggest(k, levels)}; allowed are "
                                + ", ".join(levels),
                                file=file, dialogue=did, field=where)
        problem = value_problem(v)
        if problem:
            raise DialevalError(problem, file=file, dialogue=did, field=f"{where}.{k}")
    return tuple(d.get(k, 0) for k in levels)


def read_distribution(d: object, levels: tuple[str, ...], did: str, where: str, file: str | None) -> tuple:
    """One predicted distribution ``{bin: value}`` as a tuple over ``levels`` (missing bins 0), fully checked.

    Raises a located :class:`~dialeval.DialevalError` for a value that is not a number, negative, NaN or
    infinite, for an unknown bin, and for a distribution that cannot be normalised (all zero, or a sum
    too large for a float): :mod:`dialeval.io.values`.
    """
    vals = _bins(d, levels, did, where, file)
    problem = sum_problem(vals)
    if problem:
        raise DialevalError(problem, file=file, dialogue=did, field=where)
    return vals


def check_quality_keys(qd: object, did: str | None, file: str | None) -> dict:
    """``qd`` if it is a run record's ``quality``: an object with exactly the keys A, S, E (their distributions
    are checked apart); else the located error naming what was received, an unknown key or a missing one."""
    if not isinstance(qd, dict):
        raise DialevalError(f"expected an object with keys A, S, E, received {describe(qd)}", file=file,
                            dialogue=did, field="quality")
    for k in qd:
        if k not in QUALITY_KEYS:
            raise DialevalError(f"quality key {describe(k)} is not allowed{suggest(k, QUALITY_KEYS)}; allowed are "
                                "A, S, E", file=file,
                                dialogue=did, field="quality")
    for k in QUALITY_KEYS:
        if k not in qd:
            raise DialevalError(f"quality key {k} is missing; A, S and E are all required", file=file,
                                dialogue=did, field="quality")
    return qd


def _slow_quality(qd: object, did: str, file: str | None) -> tuple:
    qd = check_quality_keys(qd, did, file)
    return tuple(_bins(qd[k], QUALITY_LEVELS, did, f"quality.{k}", file) for k in QUALITY_KEYS)


def _slow_nugget(nug: object, senders: tuple[str, ...], did: str, file: str | None) -> list[tuple]:
    if not isinstance(nug, list):
        raise DialevalError(f"expected a list with one entry per turn, received {describe(nug)}",
                            file=file, dialogue=did, field="nugget")
    if len(nug) != len(senders):
        raise DialevalError(f"wrong number of nugget entries: {len(nug)} for {len(senders)} turns",
                            file=file, dialogue=did, field="nugget")
    return [_bins(ent, NUGGET_TYPES[s], did, f"nugget[{t}]", file, s)
            for t, (ent, s) in enumerate(zip(nug, senders, strict=True))]


def _slow(batch: list, shape: tuple[bool, bool], gold: Stc3Gold, seen: set[str], offset: int,
          file: str | None) -> _Batch:
    has_q, has_n = shape
    ids, rows, extra, q_rows = [], [], [], []
    turn, owner, cust, help_ = [], [], [], []
    local: set[str] = set()
    for j, rec in enumerate(batch):
        i = offset + j
        if not isinstance(rec, dict):
            raise DialevalError(f"item {i} is a JSON {type(rec).__name__}; expected an object", file=file)
        _check_keys(rec, i, file)
        did = dialogue_id(rec, i, file)
        if did in seen or did in local:
            raise DialevalError("duplicate dialogue id", file=file, dialogue=did, field="id")
        local.add(did)
        _check_not_null(rec, did, file)
        qd, nug = rec.get("quality"), rec.get("nugget")
        if (qd is not None, nug is not None) != shape:
            gives = " and ".join(k for k, v in (("quality", qd), ("nugget", nug)) if v is not None)
            first = " and ".join(k for k, v in zip(("quality", "nugget"), shape, strict=True) if v)
            raise DialevalError(f"this dialogue gives {gives or 'no subtask'} but the first dialogue of the run "
                                f"gives {first}; every dialogue must give the same subtasks", file=file,
                                dialogue=did)
        r = gold.row.get(did)
        if r is None:
            extra.append(did)
            continue
        if has_q:
            q_rows.append(_slow_quality(qd, did, file))
        if has_n:
            start = int(gold.turn_start[r])
            for t, vals in enumerate(_slow_nugget(nug, gold.senders[r], did, file)):
                turn.append(start + t)
                owner.append(len(ids))
                (cust if len(vals) == _N_C else help_).append(vals)
        ids.append(did)
        rows.append(r)
    quality = np.asarray(q_rows, dtype=float).reshape(len(ids), _N_Q, _N_L) if has_q else None
    if not has_n:
        return _Batch(ids, rows, extra, quality, None, None, None, None)
    return _Batch(ids, rows, extra, quality, np.asarray(turn, dtype=np.int64), np.asarray(owner, dtype=np.int64),
                  np.asarray(cust, dtype=float).reshape(-1, _N_C), np.asarray(help_, dtype=float).reshape(-1, _N_H))


# --- values and assembly -----------------------------------------------------------------------------

def _first_bad(arr: np.ndarray, levels: tuple[str, ...]) -> tuple[int, str, str] | None:
    """The first row (in order) that is not a distribution: its index, the bin at fault ('' for the row), why.

    The check and its messages are :mod:`dialeval.io.values`' (the slow path's too).
    """
    hit = first_bad_row(arr)
    if hit is None:
        return None
    j, col, why = hit
    return j, "" if col is None else f".{levels[col]}", why


def _check_values(part: _Batch, gold: Stc3Gold, file: str | None) -> None:
    """Raise at the first prediction (in run order) that is not a valid distribution."""
    problems = []
    if part.quality is not None:
        hit = _first_bad(part.quality.reshape(-1, _N_L), QUALITY_LEVELS)
        if hit:
            j, bin_, what = hit
            problems.append((j // _N_Q, -1, f"quality.{QUALITY_KEYS[j % _N_Q]}{bin_}", what))
    if part.turn is not None:
        is_c = gold.is_cust[part.turn]
        for vals, mask, sender in ((part.cust, is_c, "customer"), (part.help, ~is_c, "helpdesk")):
            hit = _first_bad(vals, NUGGET_TYPES[sender])
            if hit:
                j, bin_, what = hit
                k = int(np.flatnonzero(mask)[j])
                d = int(part.owner[k])
                t = int(part.turn[k] - gold.turn_start[part.rows[d]])
                problems.append((d, t, f"nugget[{t}]{bin_}", what))
    if problems:
        d, _, where, what = min(problems, key=lambda p: (p[0], p[1]))
        raise DialevalError(what, file=file, dialogue=part.ids[d], field=where)


def _normalise(a: np.ndarray) -> np.ndarray:
    return normalise(a)


def _assemble(parts: list[_Batch], shape: tuple[bool, bool], gold: Stc3Gold, file: str | None) -> RunArrays:
    has_q, has_n = shape
    rows = np.fromiter(chain.from_iterable(p.rows for p in parts), dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    extra = [i for p in parts for i in p.extra]
    quality = cust = help_ = None
    if has_q:
        q = _normalise(np.concatenate([p.quality for p in parts]))[order]  # type: ignore[misc]
        quality = {k: np.ascontiguousarray(q[:, j, :]) for j, k in enumerate(QUALITY_KEYS)}
    if has_n:
        turn = np.concatenate([p.turn for p in parts])  # type: ignore[misc]
        is_c = gold.is_cust[turn]
        # Every gold turn of a scored dialogue appears once: sorting by its row in gold.cust / gold.help
        # puts the run's turns in gold order.
        cust = _normalise(np.concatenate([p.cust for p in parts]))[np.argsort(gold.turn_pos[turn[is_c]])]
        help_ = _normalise(np.concatenate([p.help for p in parts]))[np.argsort(gold.turn_pos[turn[~is_c]])]
    return RunArrays(rows[order], quality, cust, help_, extra, file)


def check_run_values(records: list[dict]) -> None:
    """Check every distribution of a run's records (quality and nugget) with :mod:`dialeval.io.values`.

    What a model writes is held to the same rule as what ``dialeval evaluate`` reads: a located
    :class:`DialevalError` for a value that is not a finite number >= 0 or a distribution that cannot be
    normalised.
    """
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise DialevalError(f"item {i} is a {type(rec).__name__}; expected an object")
        did = None if rec.get("id") is None else str(rec.get("id"))
        q = rec.get("quality")
        if q is not None:
            for k in QUALITY_KEYS:
                read_distribution(q.get(k) if isinstance(q, dict) else q, QUALITY_LEVELS, did, f"quality.{k}", None)
        for t, ent in enumerate(rec.get("nugget") or []):
            levels = tuple(dict.fromkeys(NUGGET_TYPES["customer"] + NUGGET_TYPES["helpdesk"]))
            read_distribution(ent, levels, did, f"nugget[{t}]", None)


def write_run(records: list[dict], path: str) -> None:
    """Write a run (list of ``{"id", "quality"?, "nugget"?}``) as JSON, atomically, after checking its values."""
    check_run_values(records)
    dump_json(records, path)
