"""What a folder of predictions says: per group, the predicted crowd's view of the dialogues.

:func:`summarize` streams the JSONL shards written by ``dialeval predict --out DIR``
(:mod:`dialeval.pipeline`) once, in bounded memory (sums per group and per group and day, a heap of the
worst dialogues, and 16 bytes per dialogue to refuse a repeated id), and returns per group (``system``, ``day``
or any metadata field):

- ``dialogues``: how many;
- ``quality[K]["mean"]``: the mean predicted distribution of K in A, S, E over levels ``2 .. -2``, and
  ``quality[K]["expected"]``: its expected score ``sum(level * p)`` (the mean of the dialogues' expected
  scores: the same number);
- ``low_satisfaction``: the share of dialogues whose predicted ``P(S <= -1) = p(-1) + p(-2)`` exceeds
  ``threshold``;
- ``nugget``: per sender, the mean predicted nugget-type distribution over that sender's turns;

plus the ``worst`` dialogues by expected S (lowest first; ties by id) and a time series per group (by the
day of the metadata's ``day``, ``date``, ``time`` or ``timestamp``) that :func:`plot_summary` draws.

The predictions are held to the rules ``dialeval evaluate`` reads a run by (:mod:`dialeval.io.runs`,
:mod:`dialeval.io.values`): every value a finite number >= 0 (not a string, not a boolean), every
distribution normalisable, a missing bin 0, an unknown bin or quality key refused, ids unique (across every shard),
every dialogue giving ``quality`` or none (``nugget`` may be left out for some), and a subtask given as null
refused. Every error names the file as given, the line and the dialogue.
"""

from __future__ import annotations

import gzip
import heapq
import os
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from pathlib import Path

import numpy as np
import orjson

from dialeval.errors import DialevalError, describe, quote, refused, suggest
from dialeval.io.atomic import atomic_path, output_format
from dialeval.io.runs import SUBTASK_VALUES, check_quality_keys, read_distribution
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS
from dialeval.io.stream import iter_lines, open_binary
from dialeval.io.values import first_bad_row, normalise, value_problem

DAY_FIELDS = ("day", "date", "time", "timestamp")
"""Metadata fields a dialogue's day is read from, the first present and not null wins: ISO 8601 text (a date
or a date-time; its date as written) or a number (seconds since 1970-01-01 UTC). Anything else is refused
(:data:`DAY_ALLOWED`)."""
DAY_ALLOWED = ("ISO 8601 dates or date-times (2026-11-24, 2026-11-24T10:00:00Z), seconds since 1970-01-01 UTC "
               "(numbers, years 1 to 9999) or null")
"""What a day field (:data:`DAY_FIELDS`) may hold, as the errors say it."""
META_ALLOWED = 'objects of the input dialogue\'s other fields ({"system": "a", "day": "2026-11-24"}) or null'
"""What a prediction's ``meta`` may be, as the errors say it."""
GROUP_ALLOWED = "text, numbers, true, false or null (a dialogue without the field)"
"""What a metadata field grouped by (``--by``) may hold, as the errors say it."""
SUMMARY_PLOT_FORMATS = ("png", "svg")
"""The formats :func:`plot_summary` draws, by the suffix of its path."""
NONE_GROUP = "(none)"
_LEVELS = np.array([float(v) for v in QUALITY_LEVELS])
_LOW = np.array([float(v) <= -1 for v in QUALITY_LEVELS])
_BLOCK = 20_000
_CUST, _HELP = NUGGET_TYPES["customer"], NUGGET_TYPES["helpdesk"]
_LEVEL_VALUES, _CUST_VALUES, _HELP_VALUES = itemgetter(*QUALITY_LEVELS), itemgetter(*_CUST), itemgetter(*_HELP)
_KEY_VALUES = itemgetter(*QUALITY_KEYS)
_CUST_SET, _HELP_SET = frozenset(_CUST), frozenset(_HELP)
_N_CUST, _N_HELP = len(_CUST), len(_HELP)
_N_KEYS, _N_LEVELS = len(QUALITY_KEYS), len(QUALITY_LEVELS)
_NUMBER_TYPES = {float, int}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LINE_BITS = 40  # a dialogue's place: file index << _LINE_BITS | line


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
    """The day (``YYYY-MM-DD``) of a dialogue's metadata, or None when no day field (:data:`DAY_FIELDS`) is given.

    Parameters
    ----------
    meta : dict
        A prediction's ``meta``: the input dialogue's fields other than id and turns.

    Returns
    -------
    str or None
        The date of the first day field present and not null: of ISO 8601 text (a date or a date-time, its
        date as written, no time zone conversion) or of a number of seconds since 1970-01-01 UTC.

    Raises
    ------
    DialevalError
        ``meta`` is not a dict, or its first day field holds text that is not an ISO 8601 date or date-time,
        a boolean, a number outside years 1 to 9999, an object or a list (the message names the field).

    Examples
    --------
    >>> day_of({"time": "2026-11-24T10:00:00Z"}), day_of({"timestamp": 0}), day_of({"system": "a"})
    ('2026-11-24', '1970-01-01', None)
    >>> day_of({"day": "2024-13-45"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: meta.day '2024-13-45' is not allowed; allowed are ISO 8601 dates ...
    """
    _check_meta(meta)
    return _day_of(meta)


def _day_of(meta: dict) -> str | None:
    """:func:`day_of` of a dict."""
    for f in DAY_FIELDS:
        v = meta.get(f)
        if v is None:
            continue
        day = _iso_day(v) if isinstance(v, str) else _epoch_day(v)
        if day is None:
            raise refused(f"meta.{f}", v, DAY_ALLOWED)
        return day
    return None


@lru_cache(maxsize=4096)   # the days of a folder of predictions repeat
def _iso_day(text: str) -> str | None:
    """The date of ISO 8601 text (a date or a date-time, as written), or None."""
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return None


def _epoch_day(v: object) -> str | None:
    """The UTC date of a number of seconds since 1970-01-01, or None (not a number, beyond years 1 .. 9999)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        return (_EPOCH + timedelta(seconds=v)).date().isoformat()
    except (OverflowError, ValueError):  # beyond the years 1 .. 9999, NaN, infinite
        return None


def group_of(meta: dict, by: str) -> str:
    """The group of a dialogue: its day for ``by="day"``, else the metadata field ``by`` as text.

    Parameters
    ----------
    meta : dict
        A prediction's ``meta``.
    by : str
        ``day`` or a metadata field.

    Returns
    -------
    str
        The day (:func:`day_of`), the field's text, a number or boolean as JSON text, or :data:`NONE_GROUP`
        when the field is missing or null.

    Raises
    ------
    DialevalError
        ``meta`` is not a dict, ``by`` is not a string, the field holds an object or a list, or (``day``) a
        value :func:`day_of` refuses.

    Examples
    --------
    >>> group_of({"system": "a"}, "system"), group_of({"n": 3}, "n"), group_of({}, "system")
    ('a', '3', '(none)')
    """
    _check_meta(meta)
    if not isinstance(by, str):
        raise refused("by", by, "system, day or a metadata field (text)")
    if by == "day":
        return day_of(meta) or NONE_GROUP
    v = meta.get(by)
    if v is None:
        return NONE_GROUP
    if isinstance(v, dict | list):
        raise refused(f"meta.{by}", v, GROUP_ALLOWED)
    return v if isinstance(v, str) else orjson.dumps(v).decode()


def _check_meta(meta: object) -> None:
    if not isinstance(meta, dict):
        raise refused("meta", meta, META_ALLOWED)


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
    """``rec`` if it is a prediction ``{id, meta?, quality?, nugget?}`` giving a subtask."""
    if type(rec) is dict and type(rec.get("id")) is str and (rec.get("quality") is not None
                                                              or rec.get("nugget") is not None):
        return rec
    where = f"{file}: line {line}"
    if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
        raise DialevalError(f"expected a prediction {{id, quality?, nugget?}}, received {describe(rec)}", file=where)
    try:
        _check_not_null(rec)
    except DialevalError as e:
        raise e.located(file=where, dialogue=rec["id"]) from None
    if rec.get("quality") is None and rec.get("nugget") is None:
        what = "a dialogue (its turns), not a prediction" if "turns" in rec else "no quality and no nugget"
        raise DialevalError(f"{what}; summarize reads predictions {{id, quality?, nugget?}}, what "
                            "`dialeval predict --out FOLDER` writes", file=where, dialogue=rec["id"])
    return rec


def _check_not_null(rec: dict) -> None:
    """Refuse a subtask given as null, where it is (as ``dialeval evaluate`` does): it is not a subtask left out."""
    for key, allowed in SUBTASK_VALUES:
        if key in rec and rec[key] is None:
            raise refused(key, None, f"{allowed}, or no {key!r} key" + (" in any prediction" if key == "quality"
                                                                        else ""))


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

    Raises
    ------
    DialevalError
        A bad argument; no prediction at all (empty or blank files); and, naming the file as given, the line
        and the dialogue: a line that is not JSON or not a prediction, a repeated id (with the line of its first
        occurrence), a ``quality`` or ``nugget`` given as null, a dialogue giving quality when the first does not
        or the reverse, a ``meta`` that is not an object, a day
        field that is not a date (:func:`day_of`), a group field holding an object or a list, a quality or nugget
        entry that is not a distribution over its bins (a value that is not a number, such as ``"0.3"`` or
        ``true``, is refused as ``dialeval evaluate`` refuses it), a nugget entry mixing customer and helpdesk
        types.
    """
    if not isinstance(by, str) or not by:
        raise DialevalError(f"--by {describe(by)} is not allowed; allowed are system, day or a metadata field")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold < 1:
        raise DialevalError(f"--threshold {describe(threshold)} is not allowed; allowed are numbers in [0, 1)")
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise DialevalError(f"--worst {describe(worst)} is not allowed; allowed are integers >= 0")
    state = _State(by, threshold, worst)
    files = shard_files(pred)
    for file in files:
        state.start(file)
        try:
            with open_binary(file) as fh:
                for line, data in iter_lines(fh):
                    try:
                        rec = orjson.loads(data)
                    except orjson.JSONDecodeError as e:
                        if line == 1 and data.strip() == b"[":  # the JSON array dialeval predict writes for a file
                            raise _array_error(file) from None
                        raise DialevalError(f"not valid JSON ({e})", file=f"{file}: line {line}") from None
                    if line == 1 and isinstance(rec, list):   # a whole run file on one line
                        raise _array_error(file)
                    state.add(_check(rec, file, line), line)
        except (EOFError, zlib.error, gzip.BadGzipFile) as e:   # as dialeval.io.stream.iter_items says it
            raise DialevalError(f"not readable: not a complete gzip file: {e} (the file is cut short or damaged; "
                                "allowed are whole gzip files: compress it again)", file=str(file)) from None
    state.flush()
    if not state.count:
        what = "this file is empty or blank" if len(files) == 1 and Path(pred).is_file() else \
            f"its {len(files)} shard(s) are empty or blank"
        raise DialevalError(f"no prediction to summarize: {what}; summarize reads JSON Lines, one prediction "
                            "{id, quality?, nugget?} per line, what `dialeval predict --out FOLDER` writes",
                            file=str(pred))
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
        self.paths: list[Path] = []  # the files read, in order (a dialogue's place names its index)
        self.count = 0
        self.quality_given: bool | None = None  # whether the first dialogue gives quality (then every one does)
        self.first = ""  # where the first dialogue is, for an error about the subtasks
        self.seen: list[tuple[np.ndarray, np.ndarray]] = []  # runs of (sorted id hashes, their places)
        self._reset()

    def _reset(self) -> None:
        self.ids: list[str] = []
        self.places: list[int] = []  # file index << _LINE_BITS | line
        self.gidx: list[int] = []
        self.day: list[int] = []  # index into self.day_names, -1: no day
        self.q: list[float] = []  # 15 values per dialogue with quality: A, S, E over levels 2 .. -2
        self.q_rows: list[int] = []
        self.cust: list[float] = []  # 4 values per customer turn
        self.cust_d: list[int] = []  # the turn's dialogue row
        self.cust_t: list[int] = []  # the turn's index in its dialogue's nugget list
        self.help: list[float] = []  # 3 values per helpdesk turn
        self.help_d: list[int] = []
        self.help_t: list[int] = []

    def start(self, file: Path) -> None:
        """Read ``file`` next."""
        self.paths.append(file)

    def where(self, place: int) -> str:
        """``FILE: line N`` of a dialogue's place."""
        return f"{self.paths[place >> _LINE_BITS]}: line {place & ((1 << _LINE_BITS) - 1)}"

    def add(self, rec: dict, line: int) -> None:
        """Add one prediction (checked by :func:`_check`) read at ``line`` of the current file."""
        place = (len(self.paths) - 1) << _LINE_BITS | line
        try:
            self._add(rec, place)
        except DialevalError as e:
            raise e.located(file=self.where(place), dialogue=rec["id"]) from None

    def _add(self, rec: dict, place: int) -> None:
        # Checked as it is added: an error ends the summary (nothing is returned), a half-added dialogue with it.
        did = rec["id"]
        q, nug = rec.get("quality"), rec.get("nugget")
        if (q is None and "quality" in rec) or (nug is None and "nugget" in rec):
            _check_not_null(rec)
        if (q is not None) is not self.quality_given:
            if self.quality_given is not None:   # a group's mean would count a dialogue without quality
                this, first = ("gives no quality", "gives it") if q is None else ("gives quality", "does not")
                raise DialevalError(f"this prediction {this} but the first ({self.first}) {first}; every prediction "
                                    "gives quality or none does, as dialeval evaluate reads a run", field="quality")
            self.quality_given, self.first = q is not None, f"{self.where(place)}, dialogue {quote(did)}"
        meta = rec.get("meta")
        if meta is None:
            meta = {}
        elif type(meta) is not dict:
            _check_meta(meta)
        day = _day_of(meta)
        if self.by == "day":
            g = day or NONE_GROUP
        else:
            g = meta.get(self.by)
            if type(g) is not str:
                g = group_of(meta, self.by)
            if meta and self.by != "system":   # only an error about another field names them
                self.fields.update(meta)
        gi = self.pos.get(g)
        if gi is None:
            gi = self.pos[g] = len(self.groups)
            self.groups[g] = _Acc()
        row = len(self.ids)
        self.count += 1
        self.ids.append(did)
        self.places.append(place)
        self.gidx.append(gi)
        if day is None:
            self.day.append(-1)
        else:
            di = self.day_pos.get(day)
            if di is None:
                di = self.day_pos[day] = len(self.day_names)
                self.day_names.append(day)
            self.day.append(di)
        if q is not None:
            try:   # exactly A, S, E over exactly the five levels (what dialeval predict writes): taken as they are
                a, s, e = _KEY_VALUES(q)
                if len(q) != _N_KEYS or len(a) != _N_LEVELS or len(s) != _N_LEVELS or len(e) != _N_LEVELS:
                    raise KeyError
                values = _LEVEL_VALUES(a) + _LEVEL_VALUES(s) + _LEVEL_VALUES(e)
            except (KeyError, TypeError):
                values = _quality_values(q, did)   # checked the slow way
            self.q.extend(values)
            self.q_rows.append(row)
        if nug is not None:
            if type(nug) is not list:
                raise DialevalError(f"expected a list with one entry per turn, received {describe(nug)}",
                                    field="nugget")
            cust, cust_d, cust_t, help_, help_d, help_t = (self.cust, self.cust_d, self.cust_t, self.help,
                                                            self.help_d, self.help_t)
            for t, turn in enumerate(nug):
                try:   # all the bins of one sender (what dialeval predict writes): taken as they are
                    n = len(turn)
                    if n == _N_CUST:
                        cust.extend(_CUST_VALUES(turn))
                        cust_d.append(row)
                        cust_t.append(t)
                        continue
                    if n == _N_HELP:
                        help_.extend(_HELP_VALUES(turn))
                        help_d.append(row)
                        help_t.append(t)
                        continue
                except (KeyError, TypeError):
                    pass
                is_cust, values = _turn_values(turn, t, did)   # checked the slow way
                (cust if is_cust else help_).extend(values)
                (cust_d if is_cust else help_d).append(row)
                (cust_t if is_cust else help_t).append(t)
        if row + 1 >= _BLOCK:
            self.flush()

    def flush(self) -> None:
        if not self.ids:
            return
        self._check_ids()
        accs = list(self.groups.values())
        gidx = np.asarray(self.gidx)
        if self.q:
            k = len(QUALITY_KEYS)
            q = self._distributions(self.q, QUALITY_LEVELS,
                                    lambda i: (self.q_rows[i // k], f"quality.{QUALITY_KEYS[i % k]}")).reshape(
                -1, k, len(QUALITY_LEVELS))
        nuggets = [(self._distributions(rows_, _CUST if attr == "cust" else _HELP,
                                        lambda i, d_=d_, t_=t_: (d_[i], f"nugget[{t_[i]}]")), gidx[d_], attr)
                   for rows_, d_, t_, attr in ((self.cust, self.cust_d, self.cust_t, "cust"),
                                               (self.help, self.help_d, self.help_t, "help"))
                   if rows_]
        # every value of the block checked: now added up
        counts = np.bincount(gidx, minlength=len(accs))
        for acc, c in zip(accs, counts.tolist(), strict=True):
            acc.n += c
        if self.q:
            self.has_quality = True
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
                            self.paths[self.places[rows[r]] >> _LINE_BITS].name)
                    if len(self.heap) < self.worst:
                        heapq.heappush(self.heap, item)
                    elif item > self.heap[0]:
                        heapq.heapreplace(self.heap, item)
        for a, g_, attr in nuggets:
            sums = np.zeros((len(accs), a.shape[1]))
            np.add.at(sums, g_, a)
            n = np.bincount(g_, minlength=len(accs))
            for i, acc in enumerate(accs):
                setattr(acc, attr, getattr(acc, attr) + sums[i])
                setattr(acc, f"n_{attr}", getattr(acc, f"n_{attr}") + int(n[i]))
        self._reset()

    def _check_ids(self) -> None:
        """Refuse an id of this block met before (in this block or an earlier one), naming both places.

        Ids are kept as their hashes and places (16 bytes a dialogue), in sorted runs merged as they grow (a
        binary counter: about log2(dialogues / block) runs); a hash met again is confirmed on the ids themselves
        (an earlier block's id read again from its line), so two ids that only share a hash pass."""
        h = np.fromiter(map(hash, self.ids), dtype=np.int64, count=len(self.ids))
        order = np.argsort(h, kind="stable")
        hs, ps = h[order], np.asarray(self.places, dtype=np.int64)[order]
        suspect = np.zeros(len(h), dtype=bool)
        suspect[order[1:][hs[1:] == hs[:-1]]] = True   # a hash met earlier in this block
        for rh, _ in self.seen:
            suspect |= np.searchsorted(rh, h, "right") > np.searchsorted(rh, h, "left")
        for r in np.flatnonzero(suspect).tolist():   # in file order; almost always none
            did = self.ids[r]
            earlier = [self.places[j] for j in np.flatnonzero(h[:r] == h[r]).tolist() if self.ids[j] == did]
            for rh, rp in self.seen:
                run = rp[np.searchsorted(rh, h[r], "left"):np.searchsorted(rh, h[r], "right")].tolist()
                earlier += [place for place in run if self._id_at(place) == did]
            if earlier:
                raise DialevalError(f"duplicate dialogue id: given first at {self.where(min(earlier))}; ids must be "
                                    "unique across the predictions (every shard)", file=self.where(self.places[r]),
                                    dialogue=did, field="id")
        self.seen.append((hs, ps))
        while len(self.seen) > 1 and len(self.seen[-2][0]) <= len(self.seen[-1][0]):
            (h1, p1), (h2, p2) = self.seen.pop(-2), self.seen.pop()
            merged = np.concatenate([h1, h2])
            order = np.argsort(merged, kind="stable")   # two sorted runs: a linear merge
            self.seen.append((merged[order], np.concatenate([p1, p2])[order]))

    def _id_at(self, place: int) -> object:
        """The id of the prediction at a place read before (read again: only for an id whose hash was met before)."""
        line = place & ((1 << _LINE_BITS) - 1)
        with open_binary(self.paths[place >> _LINE_BITS]) as fh:
            for n, data in iter_lines(fh):
                if n == line:
                    return orjson.loads(data).get("id")
        return None

    def _distributions(self, values: list, bins: tuple[str, ...],
                       where: Callable[[int], tuple[int, str]]) -> np.ndarray:
        """``values`` as rows over ``bins``, each checked by the readers' rule for distributions and normalised
        (as ``dialeval evaluate`` reads a run: :func:`~dialeval.io.values.value_problem`, a string or a boolean
        is not a number); ``where(i)`` is row ``i``'s dialogue row and field, asked only to name a bad row in
        the error (with the bin)."""
        def fail(i: int, b: int | None, why: str) -> DialevalError:
            r, name = where(i)
            return DialevalError(why, file=self.where(self.places[r]), dialogue=self.ids[r],
                                 field=name + (f".{bins[b]}" if b is not None else ""))

        try:
            if not set(map(type, values)) <= _NUMBER_TYPES:
                raise TypeError
            a = np.asarray(values, dtype=float).reshape(-1, len(bins))
        except (TypeError, ValueError, OverflowError):   # a value that is not a number: found the slow way
            i = next(i for i, v in enumerate(values) if value_problem(v) is not None)
            raise fail(i // len(bins), i % len(bins), value_problem(values[i]) or "") from None
        if (bad := first_bad_row(a)) is not None:
            raise fail(*bad)
        return normalise(a)


def _quality_values(q: object, did: str) -> tuple:
    """The 15 values of a ``quality`` that is not exactly A, S, E over the five levels (A, S, E over levels
    2 .. -2), read as ``dialeval evaluate`` reads it (:func:`~dialeval.io.runs.read_distribution`: a missing bin 0,
    an unknown key or bin refused, a value that is not a finite number >= 0 refused)."""
    q = check_quality_keys(q, None, None)   # located by the caller (file, line, dialogue)
    return tuple(chain.from_iterable(read_distribution(q[k], QUALITY_LEVELS, did, f"quality.{k}", None)
                                     for k in QUALITY_KEYS))


def _turn_values(turn: object, t: int, did: str) -> tuple[bool, tuple]:
    """(customer turn?, values) of the ``t``-th nugget entry that is not all of one sender's types: one sender's
    nugget types, the sender told by the types given (a missing type 0, as ``dialeval evaluate`` reads it); a
    turn mixing both senders' types, giving none or an unknown one, is refused."""
    field = f"nugget[{t}]"
    allowed = f"allowed are the customer types {', '.join(_CUST)} or the helpdesk types {', '.join(_HELP)}"
    if not isinstance(turn, dict):
        raise DialevalError(f"expected an object of nugget type: probability, received {describe(turn)}; {allowed}",
                            field=field)
    cust = [k for k in turn if k in _CUST_SET]
    help_ = [k for k in turn if k in _HELP_SET]
    if cust and help_:
        raise DialevalError(f"this turn mixes customer types ({', '.join(cust)}) and helpdesk types "
                            f"({', '.join(help_)}); a turn is one sender's: {allowed}", field=field)
    if not cust and not help_:
        what = (f"unknown nugget type {describe(next(iter(turn)))}{suggest(next(iter(turn)), _CUST + _HELP)}"
                if turn else "no nugget type given")
        raise DialevalError(f"{what}; {allowed}", field=field)
    is_cust = bool(cust)
    return is_cust, read_distribution(turn, _CUST if is_cust else _HELP, did, field, None)


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
