"""STC-3/DialEval submission (run) files: parsed against prepared gold into aligned arrays.

A run is a JSON array of ``{"id", "quality": {"A": {"2": p, ..., "-2": p}, "S": ..., "E": ...},
"nugget": [{"CNUG0": p, ...}, {"HNUG": p, ...}, ...]}``; ``quality`` or ``nugget`` may be left out.
A missing bin counts as 0; values are normalised per distribution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from dialeval.errors import DialevalError, describe
from dialeval.io.jsonarray import Source, dump_json, iter_records, source_name
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS, Stc3Gold

_GET_Q = itemgetter(*QUALITY_LEVELS)
_GET_KEYS = itemgetter(*QUALITY_KEYS)
_GET_C = itemgetter(*NUGGET_TYPES["customer"])
_GET_H = itemgetter(*NUGGET_TYPES["helpdesk"])
_N_C, _N_H = len(NUGGET_TYPES["customer"]), len(NUGGET_TYPES["helpdesk"])


@dataclass
class RunArrays:
    """A run aligned with the gold: ``rows`` are gold row indices (sorted) of the scored dialogues."""

    rows: np.ndarray
    quality: dict[str, np.ndarray] | None
    cust: np.ndarray | None      # one row per customer turn of the scored dialogues, in gold order
    help: np.ndarray | None
    extra_ids: list[str] = field(default_factory=list)
    file: str | None = None


def _bins(d: object, levels: tuple[str, ...], did: str, where: str, file: str | None,
          sender: str | None = None) -> tuple:
    """Slow, exact read of one distribution object, with located errors."""
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
            raise DialevalError(f"unknown bin name {k!r}{hint}; allowed are " + ", ".join(levels),
                                file=file, dialogue=did, field=where)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise DialevalError(f"value {describe(v)} is not a number", file=file, dialogue=did,
                                field=f"{where}.{k}")
        if not math.isfinite(v) or v < 0:
            raise DialevalError(f"value {v!r} is not allowed; allowed are finite numbers >= 0", file=file,
                                dialogue=did, field=f"{where}.{k}")
    vals = tuple(d.get(k, 0) for k in levels)
    if sum(vals) <= 0:
        raise DialevalError("all-zero distribution; at least one bin must be positive", file=file,
                            dialogue=did, field=where)
    return vals


def _slow_quality(qd: object, did: str, file: str | None) -> tuple:
    if not isinstance(qd, dict):
        raise DialevalError(f"expected an object with keys A, S, E, received {describe(qd)}", file=file,
                            dialogue=did, field="quality")
    for k in qd:
        if k not in QUALITY_KEYS:
            raise DialevalError(f"quality key {k!r} is not allowed; allowed are A, S, E", file=file,
                                dialogue=did, field="quality")
    for k in QUALITY_KEYS:
        if k not in qd:
            raise DialevalError(f"quality key {k} is missing; A, S and E are all required", file=file,
                                dialogue=did, field="quality")
    return tuple(_bins(qd[k], QUALITY_LEVELS, did, f"quality.{k}", file) for k in QUALITY_KEYS)


def _slow_nugget(nug: object, senders: tuple[str, ...], did: str, file: str | None) -> tuple[list, list]:
    if not isinstance(nug, list):
        raise DialevalError(f"expected a list with one entry per turn, received {describe(nug)}",
                            file=file, dialogue=did, field="nugget")
    if len(nug) != len(senders):
        raise DialevalError(f"wrong number of nugget entries: {len(nug)} for {len(senders)} turns",
                            file=file, dialogue=did, field="nugget")
    c, h = [], []
    for t, (ent, s) in enumerate(zip(nug, senders, strict=True)):
        (c if s == "customer" else h).append(_bins(ent, NUGGET_TYPES[s], did, f"nugget[{t}]", file, s))
    return c, h


def parse_run(source: Source, gold: Stc3Gold) -> RunArrays:
    """Read a run (path or parsed list) and align it with ``gold``.

    Dialogues whose id is not in the gold are counted in ``extra_ids`` (a warning, not an error).

    Raises
    ------
    DialevalError
        Not JSON / not UTF-8 / not a list; a dialogue without id; a duplicate id; a wrong number of
        nugget entries; a nugget type of the other sender; an unknown bin; a negative, NaN, infinite or
        all-zero distribution; a quality key other than A/S/E; a subtask given for some dialogues only.
    """
    file = source_name(source)
    rows: list[int] = []
    q_rows: list = []
    c_rows: list = []
    h_rows: list = []
    extra: list[str] = []
    seen: set[str] = set()
    has_q = has_n = None
    g_row, g_senders = gold.row, gold.senders
    for i, rec in enumerate(iter_records(source, what="run")):
        if not isinstance(rec, dict):
            raise DialevalError(f"item {i} is a JSON {type(rec).__name__}; expected an object", file=file)
        did = rec.get("id")
        if did is None or did == "":
            raise DialevalError(f"item {i} has no 'id'", file=file, field="id")
        did = str(did)
        if did in seen:
            raise DialevalError("duplicate dialogue id", file=file, dialogue=did, field="id")
        seen.add(did)
        qd, nug = rec.get("quality"), rec.get("nugget")
        if has_q is None:
            has_q, has_n = qd is not None, nug is not None
            if not has_q and not has_n:
                raise DialevalError("neither 'quality' nor 'nugget' is given", file=file, dialogue=did)
        if (qd is not None) != has_q or (nug is not None) != has_n:
            raise DialevalError("this dialogue gives " + (" and ".join(
                k for k, v in (("quality", qd), ("nugget", nug)) if v is not None) or "no subtask")
                + " but the first dialogue of the run gives " + " and ".join(
                k for k, v in (("quality", has_q), ("nugget", has_n)) if v), file=file, dialogue=did)
        r = g_row.get(did)
        if r is None:
            extra.append(did)
            continue
        if has_q:
            if has_q is True and gold.quality is None:
                raise DialevalError("the run has quality predictions but the gold has no quality labels",
                                    file=file, dialogue=did, field="quality")
            try:
                dists = _GET_KEYS(qd)
                vals = tuple(map(_GET_Q, dists))
                if len(qd) != 3 or any(len(x) != 5 for x in dists):
                    raise KeyError
            except (KeyError, TypeError):
                vals = _slow_quality(qd, did, file)
            q_rows.append(vals)
        if has_n:
            if gold.cust is None:
                raise DialevalError("the run has nugget predictions but the gold has no nugget labels",
                                    file=file, dialogue=did, field="nugget")
            senders = g_senders[r]
            try:
                if not isinstance(nug, list) or len(nug) != len(senders):
                    raise KeyError
                cs = [e for e, s in zip(nug, senders, strict=True) if s == "customer"]
                hs = [e for e, s in zip(nug, senders, strict=True) if s != "customer"]
                cv = list(map(_GET_C, cs))
                hv = list(map(_GET_H, hs))
                if sum(map(len, nug)) != _N_C * len(cs) + _N_H * len(hs):
                    raise KeyError
            except (KeyError, TypeError):
                cv, hv = _slow_nugget(nug, senders, did, file)
            c_rows.append(cv)
            h_rows.append(hv)
        rows.append(r)
    if has_q is None:
        raise DialevalError("the run holds no dialogue", file=file)
    rows_arr = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows_arr, kind="stable")
    quality = cust = help_ = None
    if has_q:
        q = _to_array(q_rows, (len(rows), 3, 5), lambda j: (rows[j], "quality"), gold, file)
        q = q[order]
        _check_values(q.reshape(-1, 5), lambda j: (rows[order[j // 3]], f"quality.{QUALITY_KEYS[j % 3]}"),
                      gold, file)
        quality = {k: _normalise(q[:, j, :]) for j, k in enumerate(QUALITY_KEYS)}
    if has_n:
        cust = _turn_block(c_rows, order, rows, _N_C, "customer", gold, file)
        help_ = _turn_block(h_rows, order, rows, _N_H, "helpdesk", gold, file)
    return RunArrays(rows_arr[order], quality, cust, help_, extra, file)


def _turn_block(per_dlg: list, order: np.ndarray, rows: list[int], width: int, sender: str,
                gold: Stc3Gold, file: str | None) -> np.ndarray:
    flat = [v for j in order for v in per_dlg[j]]
    owner = [rows[j] for j in order for _ in per_dlg[j]]
    arr = _to_array(flat, (len(flat), width), lambda j: (owner[j], "nugget"), gold, file)
    _check_values(arr, lambda j: (owner[j], f"nugget ({sender} turn)"), gold, file)
    return _normalise(arr)


def _to_array(values: list, shape: tuple, locate, gold: Stc3Gold, file: str | None) -> np.ndarray:
    if not values:
        return np.zeros(shape)
    arr = np.array(values)
    if arr.dtype.kind not in "fiu" or arr.shape != shape:
        for j, v in enumerate(values):
            flat = np.ravel(np.array(v, dtype=object))
            if any(isinstance(x, bool) or not isinstance(x, int | float) for x in flat):
                r, where = locate(j)
                raise DialevalError(f"a value is not a number: {describe(v)}", file=file,
                                    dialogue=gold.ids[r], field=where)
        raise DialevalError(f"values of shape {arr.shape} where {shape} was expected", file=file)
    return arr.astype(float, copy=False)


def _check_values(arr: np.ndarray, locate, gold: Stc3Gold, file: str | None) -> None:
    if arr.size == 0:
        return
    finite = np.isfinite(arr).all(axis=1)
    nonneg = (arr >= 0).all(axis=1)
    positive = arr.sum(axis=1) > 0
    bad = ~(finite & nonneg & positive)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        r, where = locate(j)
        if not finite[j]:
            what = "a NaN or infinite value; allowed are finite numbers >= 0"
        elif not nonneg[j]:
            what = "a negative value; allowed are finite numbers >= 0"
        else:
            what = "an all-zero distribution; at least one bin must be positive"
        raise DialevalError(what, file=file, dialogue=gold.ids[r], field=where)


def _normalise(a: np.ndarray) -> np.ndarray:
    return a / a.sum(axis=1, keepdims=True)


def write_run(records: list[dict], path: str) -> None:
    """Write a run (list of ``{"id", "quality"?, "nugget"?}``) as JSON, atomically."""
    dump_json(records, path)
