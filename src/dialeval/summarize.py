"""What a folder of predictions says: per group, the predicted crowd's view of the dialogues.

:func:`summarize` streams the JSONL shards written by ``dialeval predict --out DIR``
(:mod:`dialeval.pipeline`) once, in bounded memory (sums per group and per group and day, and a heap of the
worst dialogues), and returns per group (``system``, ``day`` or any metadata field):

- ``dialogues``: how many;
- ``quality[K]["mean"]``: the mean predicted distribution of K in A, S, E over levels ``2 .. -2``, and
  ``quality[K]["expected"]``: its expected score ``sum(level * p)`` (the mean of the dialogues' expected
  scores: the same number);
- ``low_satisfaction``: the share of dialogues whose predicted ``P(S <= -1) = p(-1) + p(-2)`` exceeds
  ``threshold``;
- ``nugget``: per sender, the mean predicted nugget-type distribution over that sender's turns;

plus the ``worst`` dialogues by expected S (lowest first; ties by id) and a time series per group (by the
day of the metadata's ``day``, ``date``, ``time`` or ``timestamp``) that :func:`plot_summary` draws.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path

import numpy as np
import orjson

from dialeval.errors import DialevalError, describe
from dialeval.io.atomic import atomic_path, output_format
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS
from dialeval.io.stream import iter_lines, open_binary
from dialeval.io.values import first_bad_row, normalise, value_problem

DAY_FIELDS = ("day", "date", "time", "timestamp")
"""Metadata fields a dialogue's day is read from, first present wins (ISO text: its first 10 characters;
a number: seconds since the epoch, UTC)."""
SUMMARY_PLOT_FORMATS = ("png", "svg")
"""The formats :func:`plot_summary` draws, by the suffix of its path."""
NONE_GROUP = "(none)"
_LEVELS = np.array([float(v) for v in QUALITY_LEVELS])
_LOW = np.array([float(v) <= -1 for v in QUALITY_LEVELS])
_BLOCK = 20_000
_CUST, _HELP = NUGGET_TYPES["customer"], NUGGET_TYPES["helpdesk"]
_LEVEL_VALUES, _CUST_VALUES, _HELP_VALUES = itemgetter(*QUALITY_LEVELS), itemgetter(*_CUST), itemgetter(*_HELP)


def shard_files(pred: str | os.PathLike) -> list[Path]:
    """The prediction shards of a folder (in its manifest's order when there is one) or a single file.

    A manifest names its shards as text (:func:`dialeval.pipeline.path_text`): a shard whose file name is not
    UTF-8 is found by that text."""
    path = Path(pred)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DialevalError("no such file or folder of predictions", file=str(path))
    manifest = path / "manifest.json"
    if manifest.is_file():
        try:
            doc = orjson.loads(manifest.read_bytes())
            files = _named_shards(path, [e["output"] for e in doc["shards"]])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise DialevalError("not a manifest written by dialeval predict --out", file=str(manifest)) from None
    else:
        files = sorted(p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")) and p.name[0] != ".")
    if not files:
        raise DialevalError("no prediction shard (*.jsonl) in this folder; write one with dialeval predict --out",
                            file=str(path))
    return files


def _named_shards(folder: Path, names: list[str]) -> list[Path]:
    """The files of ``folder`` a manifest names: each by its name, or (a name that is not UTF-8, written as text
    with ``\\xNN`` escapes; or not encodable in this locale) by the file whose name reads as that text."""
    by_text: dict[str, Path] | None = None
    files = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(name)
        try:
            here = folder / name
            if here.exists():
                files.append(here)
                continue
        except (UnicodeError, ValueError):  # a name this file system's encoding cannot hold
            pass
        if by_text is None:
            from dialeval.report.display import display_text  # as dialeval.pipeline.path_text writes names

            by_text = {display_text(p.name): p for p in folder.iterdir()}
        files.append(by_text.get(name, folder / name))
    return files


def day_of(meta: dict) -> str | None:
    """The day (``YYYY-MM-DD``) of a dialogue's metadata, or None.

    Examples
    --------
    >>> day_of({"time": "2026-11-24T10:00:00Z"}), day_of({"timestamp": 0}), day_of({"system": "a"})
    ('2026-11-24', '1970-01-01', None)
    """
    for f in DAY_FIELDS:
        v = meta.get(f)
        if isinstance(v, str) and len(v) >= 10:
            return v[:10]
        if isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v):
            return datetime.fromtimestamp(v, UTC).strftime("%Y-%m-%d")
    return None


def group_of(meta: dict, by: str) -> str:
    """The group of a dialogue: its day for ``by="day"``, else the metadata field ``by`` as text."""
    if by == "day":
        return day_of(meta) or NONE_GROUP
    v = meta.get(by)
    if v is None or isinstance(v, dict | list):
        return NONE_GROUP
    return v if isinstance(v, str) else orjson.dumps(v).decode()


class _Acc:
    """Sums of one group (or one group-day)."""

    __slots__ = ("cust", "help", "low", "n", "n_cust", "n_help", "quality")

    def __init__(self) -> None:
        self.n = 0
        self.quality = np.zeros((len(QUALITY_KEYS), len(QUALITY_LEVELS)))
        self.low = 0
        self.cust = np.zeros(len(NUGGET_TYPES["customer"]))
        self.help = np.zeros(len(NUGGET_TYPES["helpdesk"]))
        self.n_cust = self.n_help = 0


def _check(rec: object, file: Path, line: int) -> dict:
    if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
        raise DialevalError(f"line {line}: expected a prediction {{id, quality?, nugget?}}, received "
                            f"{describe(rec)}", file=str(file))
    if "quality" not in rec and "nugget" not in rec:
        what = "a dialogue (its turns), not a prediction" if "turns" in rec else "no quality and no nugget"
        raise DialevalError(f"line {line}: {what}; summarize reads predictions {{id, quality?, nugget?}}, what "
                            "`dialeval predict --out FOLDER` writes", file=str(file), dialogue=rec["id"])
    return rec


def summarize(pred: str | os.PathLike, *, by: str = "system", threshold: float = 0.5, worst: int = 20) -> dict:
    """Summarise a folder (or file) of predictions by group; see the module docstring for the numbers.

    Parameters
    ----------
    pred : path
        A folder written by ``dialeval predict --out`` (or one of its ``.jsonl`` shards).
    by : str
        ``system``, ``day`` or any metadata field of the input dialogues.
    threshold : float in [0, 1)
        A dialogue counts as low-satisfaction when its ``P(S <= -1)`` is greater than this.
    worst : int >= 0
        How many of the lowest expected-S dialogues to list.

    Returns
    -------
    dict
        ``{"by", "threshold", "dialogues", "groups": [...], "worst": [...], "series": {...}, "settings":
        {"predictions", "model", "dialeval_version"}}`` (JSON-able; ``model`` as the folder's manifest names it).
    """
    if not isinstance(by, str) or not by:
        raise DialevalError(f"--by {describe(by)} is not allowed; allowed are system, day or a metadata field")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold < 1:
        raise DialevalError(f"--threshold {describe(threshold)} is not allowed; allowed are numbers in [0, 1)")
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise DialevalError(f"--worst {describe(worst)} is not allowed; allowed are integers >= 0")
    state = _State(by, threshold, worst)
    for file in shard_files(pred):
        with open_binary(file) as fh:
            for line, data in iter_lines(fh):
                try:
                    rec = orjson.loads(data)
                except orjson.JSONDecodeError as e:
                    if line == 1 and data.strip() == b"[":  # the JSON array dialeval predict writes for a file
                        raise _array_error(file) from None
                    raise DialevalError(f"line {line}: not valid JSON ({e})", file=str(file)) from None
                if line == 1 and isinstance(rec, list):   # a whole run file on one line
                    raise _array_error(file)
                state.add(_check(rec, file, line), file, line)
    state.flush()
    if by not in ("system", "day") and state.groups and by not in state.fields:
        raise DialevalError(f"--by {describe(by)}: no dialogue has this metadata field; allowed are system, day"
                            + (" or a field the dialogues have: " + ", ".join(sorted(state.fields))
                               if state.fields else " (the dialogues have no metadata)"), file=str(pred))
    from dialeval import __version__

    return {**_result(by, threshold, state.groups, state.days, state.heap, state.has_quality),
            "settings": {"predictions": str(pred), "model": _model_of(Path(pred)), "dialeval_version": __version__}}


def _array_error(file: object) -> DialevalError:
    return DialevalError("line 1: a JSON array (a run file?); summarize reads JSON Lines, one prediction per line: "
                         "what dialeval predict writes when --out is a folder", file=str(file))


def _model_of(pred: Path) -> dict | None:
    """The model that wrote a prediction folder, as its manifest names it (None for a file or a bare folder)."""
    manifest = pred / "manifest.json"
    if not manifest.is_file():
        return None
    model = orjson.loads(manifest.read_bytes()).get("model")  # read (and checked) by shard_files already
    return model if isinstance(model, dict) else None


class _State:
    """Running sums, fed one record at a time and added up a block of records at a time (numpy)."""

    def __init__(self, by: str, threshold: float, worst: int) -> None:
        self.by, self.threshold, self.worst = by, threshold, worst
        self.groups: dict[str, _Acc] = {}
        self.pos: dict[str, int] = {}
        self.day_pos: dict[str, int] = {}
        self.day_names: list[str] = []
        self.days: dict[tuple[str, str], list[float]] = {}  # (group, day) -> [n, sum of E[S], low count]
        self.heap: list = []  # the `worst` largest (-E[S], reversed id, group, file)
        self.has_quality = False
        self.fields: set[str] = set()  # the metadata fields met, for an error naming them
        self._reset()

    def _reset(self) -> None:
        self.ids: list[str] = []
        self.files: list[str] = []
        self.gidx: list[int] = []
        self.day: list[int] = []  # index into self.day_names, -1: no day
        self.q: list[float] = []  # 15 values per dialogue with quality: A, S, E over levels 2 .. -2
        self.q_rows: list[int] = []
        self.cust: list[float] = []  # 4 values per customer turn
        self.cust_g: list[int] = []
        self.cust_d: list[int] = []  # the turn's dialogue row
        self.help: list[float] = []  # 3 values per helpdesk turn
        self.help_g: list[int] = []
        self.help_d: list[int] = []

    def add(self, rec: dict, file: Path, line: int) -> None:
        meta = rec.get("meta") or {}
        if meta and self.by not in ("system", "day"):   # only an error about another field names them
            self.fields.update(meta)
        g = group_of(meta, self.by)
        gi = self.pos.get(g)
        if gi is None:
            gi = self.pos[g] = len(self.groups)
            self.groups[g] = _Acc()
        row = len(self.ids)
        self.ids.append(rec["id"])
        self.files.append(file.name)
        self.gidx.append(gi)
        day = day_of(meta) if meta else None
        if day is None:
            self.day.append(-1)
        else:
            di = self.day_pos.get(day)
            if di is None:
                di = self.day_pos[day] = len(self.day_names)
                self.day_names.append(day)
            self.day.append(di)
        q = rec.get("quality")
        if q is not None:
            try:
                self.q.extend(_LEVEL_VALUES(q["A"]))
                self.q.extend(_LEVEL_VALUES(q["S"]))
                self.q.extend(_LEVEL_VALUES(q["E"]))
            except (KeyError, TypeError):
                raise DialevalError(f"line {line}: quality is not A, S, E over levels {', '.join(QUALITY_LEVELS)}",
                                    file=str(file), dialogue=rec["id"]) from None
            self.q_rows.append(row)
        for turn in rec.get("nugget") or ():
            try:
                if "CNUG0" in turn:
                    self.cust.extend(_CUST_VALUES(turn))
                    self.cust_g.append(gi)
                    self.cust_d.append(row)
                else:
                    self.help.extend(_HELP_VALUES(turn))
                    self.help_g.append(gi)
                    self.help_d.append(row)
            except (KeyError, TypeError):
                raise DialevalError(f"line {line}: a nugget entry is not a distribution over "
                                    f"{', '.join(_CUST)} or {', '.join(_HELP)}: {describe(turn)}",
                                    file=str(file), dialogue=rec["id"]) from None
        if row + 1 >= _BLOCK:
            self.flush()

    def flush(self) -> None:
        if not self.ids:
            return
        accs = list(self.groups.values())
        gidx = np.asarray(self.gidx)
        counts = np.bincount(gidx, minlength=len(accs))
        for acc, c in zip(accs, counts.tolist(), strict=True):
            acc.n += c
        if self.q:
            self.has_quality = True
            k = len(QUALITY_KEYS)
            q = self._distributions(self.q, QUALITY_LEVELS,
                                    lambda i: (self.q_rows[i // k], f"quality.{QUALITY_KEYS[i % k]}")).reshape(
                -1, k, len(QUALITY_LEVELS))
            rows = np.asarray(self.q_rows)
            gq = gidx[rows]
            sums = np.zeros((len(accs), *q.shape[1:]))
            np.add.at(sums, gq, q)
            s = q[:, QUALITY_KEYS.index("S")]
            exp_s = s @ _LEVELS
            low = s[:, _LOW].sum(axis=1) > self.threshold
            lows = np.bincount(gq, weights=low, minlength=len(accs))
            for i, acc in enumerate(accs):
                acc.quality += sums[i]
                acc.low += int(lows[i])
            names = list(self.groups)
            days = np.asarray(self.day)[rows]
            has = days >= 0
            if has.any():  # per (group, day): n, sum of E[S], low count
                cell = gq[has] * len(self.day_names) + days[has]
                size = len(accs) * len(self.day_names)
                n = np.bincount(cell, minlength=size)
                e = np.bincount(cell, weights=exp_s[has], minlength=size)
                lo = np.bincount(cell, weights=low[has], minlength=size)
                for c in np.flatnonzero(n).tolist():
                    key = (names[c // len(self.day_names)], self.day_names[c % len(self.day_names)])
                    acc_day = self.days.setdefault(key, [0, 0.0, 0])
                    acc_day[0] += int(n[c])
                    acc_day[1] += float(e[c])
                    acc_day[2] += int(lo[c])
            if self.worst:
                k = min(self.worst, len(exp_s))
                kth = np.partition(exp_s, k - 1)[k - 1]
                for r in np.flatnonzero(exp_s <= kth).tolist():  # the k lowest and every tie (ids decide)
                    item = (-float(exp_s[r]), _Rev(self.ids[rows[r]]), names[self.gidx[rows[r]]],
                            self.files[rows[r]])
                    if len(self.heap) < self.worst:
                        heapq.heappush(self.heap, item)
                    elif item > self.heap[0]:
                        heapq.heapreplace(self.heap, item)
        for rows_, g_, d_, attr in ((self.cust, self.cust_g, self.cust_d, "cust"),
                                    (self.help, self.help_g, self.help_d, "help")):
            if rows_:
                a = self._distributions(rows_, _CUST if attr == "cust" else _HELP,
                                        lambda i, d_=d_: (d_[i], "nugget"))
                sums = np.zeros((len(accs), a.shape[1]))
                np.add.at(sums, np.asarray(g_), a)
                n = np.bincount(np.asarray(g_), minlength=len(accs))
                for i, acc in enumerate(accs):
                    setattr(acc, attr, getattr(acc, attr) + sums[i])
                    setattr(acc, f"n_{attr}", getattr(acc, f"n_{attr}") + int(n[i]))
        self._reset()


    def _distributions(self, values: list, bins: tuple[str, ...],
                       where: Callable[[int], tuple[int, str]]) -> np.ndarray:
        """``values`` as rows over ``bins``, each checked by the readers' rule for distributions and normalised
        (as ``dialeval evaluate`` reads a run); ``where(i)`` is row ``i``'s dialogue row and field, asked only
        to name a bad row in the error (with the bin)."""
        def fail(i: int, b: int | None, why: str) -> DialevalError:
            r, name = where(i)
            return DialevalError(why, file=self.files[r], dialogue=self.ids[r],
                                 field=name + (f".{bins[b]}" if b is not None else ""))

        try:
            a = np.asarray(values, dtype=float).reshape(-1, len(bins))
        except (TypeError, ValueError):   # a value that is not a number: found the slow way
            i = next(i for i, v in enumerate(values) if value_problem(v) is not None)
            raise fail(i // len(bins), i % len(bins), value_problem(values[i]) or "") from None
        if (bad := first_bad_row(a)) is not None:
            raise fail(*bad)
        return normalise(a)


class _Rev:
    """An id that orders in reverse, so the heap of (-E[S], id) keeps the smallest ids among ties."""

    __slots__ = ("id",)

    def __init__(self, i: str) -> None:
        self.id = i

    def __lt__(self, other: _Rev) -> bool:
        return self.id > other.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Rev) and self.id == other.id

    def __hash__(self) -> int:
        return hash(self.id)


def _r(x: float) -> float:
    return round(float(x), 6)


def _result(by, threshold, groups, days, heap, has_quality) -> dict:
    out_groups = []
    for g in sorted(groups):
        a = groups[g]
        entry: dict = {"group": g, "dialogues": a.n}
        if has_quality and a.n:
            mean = a.quality / a.n
            entry["quality"] = {k: {"mean": dict(zip(QUALITY_LEVELS, map(_r, mean[i]), strict=True)),
                                    "expected": _r(mean[i] @ _LEVELS)} for i, k in enumerate(QUALITY_KEYS)}
            entry["low_satisfaction"] = _r(a.low / a.n)
        if a.n_cust or a.n_help:
            entry["nugget"] = {
                "customer": dict(zip(NUGGET_TYPES["customer"], map(_r, a.cust / max(a.n_cust, 1)), strict=True)),
                "helpdesk": dict(zip(NUGGET_TYPES["helpdesk"], map(_r, a.help / max(a.n_help, 1)), strict=True)),
                "turns": {"customer": a.n_cust, "helpdesk": a.n_help}}
        out_groups.append(entry)
    worst = [{"id": r.id, "group": g, "expected_S": _r(-neg), "file": f}
             for neg, r, g, f in sorted(heap, reverse=True)]
    series: dict[str, list] = {}
    for (g, day), (n, s, low) in sorted(days.items()):
        series.setdefault(g, []).append({"day": day, "dialogues": n, "expected_S": _r(s / n),
                                         "low_satisfaction": _r(low / n)})
    return {"by": by, "threshold": threshold, "dialogues": sum(a.n for a in groups.values()),
            "groups": out_groups, "worst": worst, "series": series}


def plot_summary(summary: dict, path: str | os.PathLike) -> Path:
    """Draw, per group, the mean expected S and the low-satisfaction share by day (PNG or SVG by suffix).

    Raises
    ------
    DialevalError
        No dialogue has a day (metadata ``day``, ``date``, ``time`` or ``timestamp``), or an unknown suffix.
    """
    from matplotlib.figure import Figure

    path = Path(path)
    fmt = output_format(path, SUMMARY_PLOT_FORMATS)
    series = summary["series"]
    if not series:
        raise DialevalError("no dialogue has a day to plot over time; the input's metadata needs one of "
                            + ", ".join(DAY_FIELDS))
    fig = Figure(figsize=(8, 5.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    all_days = sorted({p["day"] for pts in series.values() for p in pts})
    x_of = {d: i for i, d in enumerate(all_days)}
    for g, pts in series.items():
        x = [x_of[p["day"]] for p in pts]
        label = g if summary["by"] != "day" else "all dialogues"
        top.plot(x, [p["expected_S"] for p in pts], marker="o", label=label)
        bottom.plot(x, [100 * p["low_satisfaction"] for p in pts], marker="o", label=label)
    top.set_ylabel("mean expected S (-2 .. 2)")
    bottom.set_ylabel(f"% with P(S ≤ -1) > {summary['threshold']:g}")
    step = max(1, len(all_days) // 12)
    bottom.set_xticks(range(0, len(all_days), step), all_days[::step], rotation=30, ha="right")
    bottom.set_xlabel("day")
    by = "day" if summary["by"] == "day" else summary["by"]
    top.set_title(f"Predicted customer satisfaction per {by} over time ({summary['dialogues']} dialogues)")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    if summary["by"] != "day" and len(series) <= 12:
        top.legend(fontsize=8, loc="best")
    fig.subplots_adjust(left=0.12, right=0.97, top=0.93, bottom=0.15, hspace=0.12)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=110)
    return path
