"""Meta-evaluation: how well turn- or dialogue-level scores agree with human dialogue-level judgements.

Automatic side: per-turn scores (a model's, or a corpus's own turn labels such as ConTurE's overall
impression) aggregated per dialogue (mean by default), or per-dialogue scores. Human side: each dialogue-level
dimension averaged over its raters, missing ratings (``N/A``) dropped. Both are correlated with
:func:`dialeval.stats.correlate` (Pearson and Spearman by default: coefficient, two-sided p-value, percentile
bootstrap interval, pairs used) at dialogue level and, when the dialogues name their system
(``meta["system"]``, e.g. DSTC9's 11 chatbots), at system level: the mean over each system's dialogues.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dialeval.corpus import Corpus, expect_corpus
from dialeval.errors import DialevalError, DialevalWarning, describe, first_few, quote
from dialeval.io._files import as_path, load_json_document, read_bounded
from dialeval.io.atomic import atomic_path, output_format
from dialeval.io.stc3 import dialogue_id
from dialeval.io.text import csv_rows
from dialeval.progress import track
from dialeval.stats import correlate
from dialeval.stats.correlation import MIN_PAIRS

CORRELATION_PLOT_FORMATS = ("png", "svg", "pdf")
"""The formats :func:`plot_correlations` draws, by the suffix of its path."""

AGGREGATES = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}
"""How per-turn scores become one per dialogue."""
LEVELS = ("dialogue", "system")
DEFAULT_METHODS = ("pearson", "spearman")


class _DefaultLevels:
    """The type of :data:`DEFAULT_LEVELS`."""

    def __repr__(self) -> str:
        return "DEFAULT_LEVELS"


DEFAULT_LEVELS = _DefaultLevels()
"""``levels`` of :func:`correlate_with_humans` when none are asked for: dialogue, and system where the dialogues
name their systems and enough of them are scored (else left out with a warning)."""


def _check_aggregate(aggregate: str) -> None:
    if not isinstance(aggregate, str) or aggregate not in AGGREGATES:
        raise DialevalError(f"aggregate {describe(aggregate)} is not allowed; allowed are " + ", ".join(AGGREGATES))


def _aggregate(per_dialogue: dict[str, list[float]], aggregate: str) -> dict[str, float]:
    _check_aggregate(aggregate)
    fn = AGGREGATES[aggregate]
    return {i: float(fn(v)) for i, v in per_dialogue.items() if v}


def turn_scale_scores(corpus: Corpus, scale: str, *, aggregate: str = "mean") -> dict[str, float]:
    """Per dialogue, the aggregate over its turns of each turn's mean label on a turn-level scale.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn, Scale
    >>> s = Scale("q", ("0", "1", "2"), "ordinal", "turn")
    >>> c = Corpus([Dialogue("d", [Turn("system", ["a"], {"q": ["2"]}), Turn("system", ["b"], {"q": ["0", "1"]})])],
    ...            {"q": s})
    >>> turn_scale_scores(c, "q")
    {'d': 1.25}
    """
    expect_corpus(corpus)
    if scale not in corpus.scales or corpus.scales[scale].level != "turn":
        raise DialevalError(f"{scale!r} is not a turn-level scale of the corpus; its turn scales are "
                            + (", ".join(s.name for s in corpus.scales_at("turn")) or "(none)"), file=corpus.source)
    sc = corpus.scales[scale]
    value = dict(zip(sc.levels, sc.numeric(), strict=True))
    per: dict[str, list[float]] = {}
    for d in corpus:
        for t in d.turns:
            labs = [value[v] for v in t.labels.get(scale, ()) if v is not None]
            if labs:
                per.setdefault(d.id, []).append(sum(labs) / len(labs))
    return _aggregate(per, aggregate)


def dimension_means(corpus: Corpus, dimensions: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Per dialogue-level dimension, each dialogue's mean rating over its raters (missing ratings dropped).

    A dialogue whose raters all gave ``N/A`` is left out of that dimension.
    """
    expect_corpus(corpus)
    dims = dimensions if dimensions is not None else [s.name for s in corpus.scales_at("dialogue")]
    out: dict[str, dict[str, float]] = {}
    for name in dims:
        sc = corpus.scales.get(name)
        if sc is None or sc.level != "dialogue":
            raise DialevalError(f"{name!r} is not a dialogue-level dimension of the corpus; they are "
                                + (", ".join(s.name for s in corpus.scales_at("dialogue")) or "(none)"),
                                file=corpus.source)
        value = dict(zip(sc.levels, sc.numeric(), strict=True))
        means = {}
        for d in corpus:
            labs = [value[v] for v in d.labels.get(name, ()) if v is not None]
            if labs:
                means[d.id] = sum(labs) / len(labs)
        out[name] = means
    return out


@dataclass(frozen=True)
class AutomaticScores:
    """Per-dialogue automatic scores read by :func:`read_scores`, and how each was obtained."""

    scores: dict[str, float]
    from_turns: frozenset[str]  # the dialogues whose score aggregates turn scores
    aggregate: str
    without_turns: tuple[str, ...] = ()  # ids whose 'turns' give no usable score ([], or only other senders')

    def what(self) -> str:
        """What the scores are: ``mean over turns``, ``dialogue scores`` or both, for a report's label."""
        turns = sum(1 for i in self.scores if i in self.from_turns)
        if turns == len(self.scores):
            return f"{self.aggregate} over turns"
        if turns == 0:
            return "dialogue scores"
        return f"dialogue scores, and the {self.aggregate} over turns for {turns} of the {len(self.scores)} dialogues"

    def restricted(self, ids: object) -> AutomaticScores:
        """The same scores for the dialogues in ``ids`` only (``without_turns`` kept whole: they have no score)."""
        keep = set(ids)  # type: ignore[call-overload]
        return AutomaticScores({i: v for i, v in self.scores.items() if i in keep}, self.from_turns & keep,
                               self.aggregate, self.without_turns)


def _turn_number(v: object, file: str, did: str, where: str, *, text: bool) -> int:
    """A turn number: an integer >= 0 (a JSON number, ``text=False``; CSV text of digits, ``text=True``)."""
    if isinstance(v, str) and text:
        t = v.strip()
        if t.isascii() and t.isdigit():
            return int(t)
    elif isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    raise DialevalError(f"turn {describe(v)} is not allowed; allowed are integers >= 0", file=file, dialogue=did,
                        field=where)


def scored_sender(corpus: Corpus) -> str | None:
    """The sender whose turns the corpus's turn-level scales rate, when they all name the same one (ConTurE's
    overall impression: ``system``); None when the corpus has no turn-level scale, or its scales rate any
    sender's turns or different senders' (STC-3's customer and helpdesk nuggets)."""
    expect_corpus(corpus)
    senders = {s.sender for s in corpus.scales_at("turn")}
    return next(iter(senders)) if len(senders) == 1 else None


def _examples(ids: Sequence[str]) -> str:
    return first_few(ids)


def _check_turns(per: dict[str, list[tuple[int, float, str]]], corpus: Corpus, file: str) -> set[str]:
    """Turn scores against the corpus's dialogues (those not in the corpus are left to the caller): a turn the
    dialogue does not have is an error; a turn of another sender than the one the corpus's turn scales rate
    (:func:`scored_sender`) is left out, with one warning, and an error when every turn score is one.

    Returns the ids left with no turn score (all theirs were of another sender)."""
    expect_corpus(corpus)
    by_id: dict[str, object] = {}
    for d in corpus:
        by_id.setdefault(d.id, d)
    sender = scored_sender(corpus)
    other: list[tuple[str, int, str, str]] = []  # (id, turn, its sender, where)
    n_turns = 0
    for did, entries in per.items():
        d = by_id.get(did)
        if d is None:
            continue
        turns = d.turns  # type: ignore[attr-defined]
        n_turns += len(entries)
        for turn, _, where in entries:
            if turn >= len(turns):
                raise DialevalError(f"turn {turn} is not in the corpus's dialogue, which has {len(turns)} turn(s), "
                                    f"numbered 0 to {len(turns) - 1}: the scores are of another corpus, or number "
                                    "turns otherwise", file=file, dialogue=did, field=where)
            if sender is not None and turns[turn].sender != sender:
                other.append((did, turn, turns[turn].sender, where))
    if not other:
        return set()
    scales = ", ".join(repr(s.name) for s in corpus.scales_at("turn"))
    did, turn, who, where = other[0]
    first = f"dialogue {quote(did)} turn {turn}, a {quote(who)} turn ({where})"
    if len(other) == n_turns:
        raise DialevalError(f"none of the {n_turns} turn score(s) of the corpus's dialogues is of a {sender!r} turn, "
                            f"the turns the corpus's turn scale(s) {scales} rate (turns are numbered from 0, as in the "
                            f"corpus); the first: {first}", file=file)
    off = {(i, t) for i, t, _, _ in other}
    emptied = []
    for i in dict.fromkeys(i for i, _, _, _ in other):
        per[i] = [e for e in per[i] if (i, e[0]) not in off]
        if not per[i]:
            emptied.append(i)
    warnings.warn(f"{file}: {len(other)} turn score(s) of turns not sent by {sender!r} (the sender whose turns the "
                  f"corpus's turn scale(s) {scales} rate), left out; the first: {first}"
                  + (f"; {len(emptied)} dialogue(s) have no other turn score, left out: {_examples(emptied)}"
                     if emptied else ""), DialevalWarning, stacklevel=3)
    return set(emptied)


def read_scores(path: str | Path, *, aggregate: str = "mean", delimiter: str | None = None,
                corpus: Corpus | None = None) -> AutomaticScores:
    """Per-dialogue automatic scores from a file, turn scores aggregated per dialogue; see :func:`load_scores`.

    With ``corpus``, each turn score of one of its dialogues is checked against the dialogue before the
    aggregate: a turn the dialogue does not have is an error naming the file, the dialogue and the turn; a turn
    of another sender than the one the corpus's turn scales rate (:func:`scored_sender`, e.g. a user turn where
    ConTurE's scale rates system turns) is left out with a :class:`~dialeval.errors.DialevalWarning` (an error
    when every turn score is one). A JSON record with ``"turns": []`` is left out with a warning naming it;
    ``without_turns`` lists those ids and those whose every turn score was left out.
    """
    _check_aggregate(aggregate)
    if corpus is not None:
        expect_corpus(corpus)
    p = as_path(path, "scores")
    file = str(p)
    per: dict[str, list[tuple[int, float, str]]] = {}   # id -> (turn, score, where) in the file's order
    direct: dict[str, float] = {}
    seen_direct: dict[str, str] = {}             # id -> where its dialogue score was given
    seen_turn: dict[tuple[str, int], str] = {}   # (id, turn) -> where its score was given
    seen_list: dict[str, str] = {}               # JSON: id -> the record holding its turns

    def number(v: object, did: str, where: str, *, text: bool) -> float:
        """A finite number: a JSON number (``text=False``: no string, no bool) or CSV text of one."""
        if isinstance(v, bool) or (isinstance(v, str) and not text):
            raise DialevalError(f"score {describe(v)} is not allowed; allowed are finite numbers"
                                + (" (a JSON number, not a string)" if isinstance(v, str) else ""),
                                file=file, dialogue=did, field=where)
        try:
            x = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x):
            raise DialevalError(f"score {describe(v)} is not a finite number", file=file, dialogue=did, field=where)
        return x

    def once(key: object, seen: dict, what: str, did: str, where: str) -> None:
        if key in seen:
            raise DialevalError(f"{what} given twice (first at {seen[key]})", file=file, dialogue=did, field=where)
        seen[key] = where

    if p.suffix.lower() == ".csv":
        cols, rows, delim = csv_rows(read_bounded(p), file, delimiter)
        decimal_comma = delim != ","  # '0,5' is a number where the delimiter is not ','
        if "id" not in cols or "score" not in cols:
            raise DialevalError(f"the CSV's columns are {', '.join(map(repr, cols)) or 'none'}; expected id and score "
                                "(and optionally turn)" + ("" if delimiter else ", separated by one of , ; tab |"),
                                file=file)
        for n, row in rows:
            did, where = row.get("id", ""), f"line {n}"
            raw = row.get("score")
            if decimal_comma and isinstance(raw, str):
                raw = raw.replace(",", ".")
            if "turn" in cols and row.get("turn") not in (None, ""):
                turn = _turn_number(row.get("turn"), file, did, where, text=True)
                once((did, turn), seen_turn, f"score of turn {turn}", did, where)
                per.setdefault(did, []).append((turn, number(raw, did, where, text=True), where))
            else:
                once(did, seen_direct, "dialogue score", did, where)
                direct[did] = number(raw, did, where, text=True)
    else:
        data = load_json_document(p)
        if not isinstance(data, list):
            raise DialevalError("expected a JSON array of {id, score} or {id, turns: [{turn, score}]}", file=file)
        for i, rec in enumerate(data):
            did = dialogue_id(rec, i, file)   # the run readers' rule: a string (or an integer) id
            if "score" in rec and "turns" in rec:
                raise DialevalError("both 'score' and 'turns'; give one", file=file, dialogue=did, field=f"[{i}]")
            if "score" in rec:
                once(did, seen_direct, "dialogue score", did, f"[{i}]")
                direct[did] = number(rec["score"], did, f"[{i}].score", text=False)
            elif isinstance(rec.get("turns"), list):
                once(did, seen_list, "'turns'", did, f"[{i}]")
                values = per.setdefault(did, [])
                for j, t in enumerate(rec["turns"]):
                    where = f"[{i}].turns[{j}]"
                    if isinstance(t, dict) and "turn" in t:
                        turn = _turn_number(t["turn"], file, did, where + ".turn", text=False)
                    else:
                        turn = j  # a bare score, or one without 'turn': its position is its turn
                    once((did, turn), seen_turn, f"score of turn {turn}", did, where)
                    values.append((turn, number(t.get("score") if isinstance(t, dict) else t, did,
                                                where + ".score", text=False), where))
            else:
                raise DialevalError("expected 'score' or 'turns'", file=file, dialogue=did, field=f"[{i}]")
    emptied = _check_turns(per, corpus, file) if corpus is not None else set()
    empty = [i for i, v in per.items() if not v and i not in emptied and i not in direct]
    if empty:
        warnings.warn(f"{file}: {len(empty)} dialogue(s) with no turn score (\"turns\": []), left out: "
                      f"{_examples(empty)}", DialevalWarning, stacklevel=2)
    out = _aggregate({i: [x for _, x, _ in v] for i, v in per.items()}, aggregate)
    both = set(out) & set(direct)
    if both:
        raise DialevalError(f"{len(both)} dialogue(s) have both a dialogue score and turn scores, e.g. "
                            f"{sorted(both)[:3]}", file=file)
    from_turns = frozenset(out)
    out.update(direct)
    if not out:
        raise DialevalError("no score in the file" + (f" (only {len(empty)} empty \"turns\" list(s))" if empty else ""),
                            file=file)
    return AutomaticScores(out, from_turns, aggregate,
                           tuple(i for i in per if (i in emptied or i in empty) and i not in out))


def load_scores(path: str | Path, *, aggregate: str = "mean", delimiter: str | None = None,
                corpus: Corpus | None = None) -> dict[str, float]:
    """Per-dialogue automatic scores from a file, turn scores aggregated per dialogue.

    Layouts: CSV with a header ``id,score`` or ``id,turn,score``; JSON array of ``{"id", "score"}`` or
    ``{"id", "turns": [{"turn", "score"}, ...]}`` (a turn without ``turn`` is numbered by its position).
    Scores are finite numbers (in JSON, numbers: not strings, not booleans); turn numbers are integers >= 0.
    Each dialogue score, each (id, turn) and, in JSON, each id's ``turns`` is given once: a repeat is an
    error naming the dialogue, the turn and where both are (CSV line, JSON record). Text is UTF-8 (with or
    without BOM) or UTF-16 with BOM (:mod:`dialeval.io.text`); the CSV delimiter is ``delimiter`` or sniffed
    from the header (``,`` ``;`` tab ``|``); where it is not ``,`` a decimal comma (``0,5``) is read as a
    decimal point. With ``corpus``, turn scores are checked against its dialogues (:func:`read_scores`, which
    also says which scores aggregate turns).
    """
    return read_scores(path, aggregate=aggregate, delimiter=delimiter, corpus=corpus).scores


@dataclass(frozen=True)
class CorrelationRow:
    level: str
    dimension: str
    method: str
    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float
    n: int                # pairs correlated: dialogues (dialogue level) or systems (system level)
    n_dropped: int        # dialogues with an automatic score left out: no rating (system level: or no system)
    n_dialogues: int = 0  # dialogues with both sides (system level: those averaged into the system means)
    undefined_resamples: int = 0  # bootstrap resamples where the coefficient is undefined, left out of the CI
    pvalue_below: float | None = None  # PVALUE_FLOOR when pvalue is below it (0.0 where it underflows)


PVALUE_FLOOR = 1e-16
"""p-values below this are reported as ``< 1e-16`` (:func:`dialeval.report.tables.p_text`), never as 0."""

COUNTS = {
    "n": "pairs correlated: dialogues at dialogue level, systems at system level",
    "n_dialogues": "dialogues with an automatic score and a rating of the dimension (at system level: those "
                   "averaged into the system means)",
    "n_dropped": "dialogues with an automatic score left out: no rating of the dimension (at system level also: "
                 "naming no system)",
    "undefined_resamples": "bootstrap resamples where the coefficient is undefined (a side constant within the "
                           "resample), left out of the interval",
}
"""What each count of a :class:`CorrelationRow` counts; in the settings of every table."""


@dataclass
class CorrelationTable:
    """Correlations of one automatic score with each human dimension, at dialogue and/or system level."""

    rows: list[CorrelationRow]
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"rows": [asdict(r) for r in self.rows], "settings": dict(self.settings)}

    def value(self, dimension: str, method: str = "pearson", level: str = "dialogue") -> CorrelationRow:
        for r in self.rows:
            if (r.dimension, r.method, r.level) == (dimension, method, level):
                return r
        raise DialevalError(f"no row for {dimension!r}, {method}, {level}")


def system_means(values: dict[str, float], systems: dict[str, str]) -> dict[str, float]:
    """Mean of per-dialogue values over each system's dialogues."""
    per: dict[str, list[float]] = {}
    for i, v in values.items():
        if i in systems:
            per.setdefault(systems[i], []).append(v)
    return {s: float(np.mean(v)) for s, v in per.items()}


def _known(v: object) -> bool:
    """A value that takes part in a correlation: a number, not None and not NaN."""
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def system_level_shortfall(auto: Mapping[str, float], human: Mapping[str, Mapping[str, float]],
                           systems: Mapping[str, str]) -> str | None:
    """Why the system level cannot be correlated for lack of systems, or None when every dimension has at least
    ``MIN_PAIRS`` (3, :mod:`dialeval.stats.correlation`) systems with an automatic score and a rating (the pairs
    :func:`correlate_with_humans` uses).

    Examples
    --------
    >>> system_level_shortfall({"a": 1.0, "b": 2.0}, {"q": {"a": 1.0, "b": 2.0}}, {"a": "s1", "b": "s2"})
    '2 system(s) have an automatic score (s1, s2); a correlation needs at least 3'
    """
    scored = {systems[i] for i in auto if i in systems and _known(auto[i])}
    named = len(set(systems.values()))
    of = f" of the {named} the dialogues name" if named != len(scored) else ""
    if len(scored) < MIN_PAIRS:
        return (f"{len(scored)} system(s){of} have an automatic score ({_examples(sorted(scored))}); a correlation "
                f"needs at least {MIN_PAIRS}")
    for dim, hv in human.items():
        rated = {systems[i] for i in auto if i in systems and i in hv and _known(auto[i]) and _known(hv[i])}
        if len(rated) < MIN_PAIRS:
            return (f"{len(scored)} system(s){of} have an automatic score, {len(rated)} of them a rating of "
                    f"{dim!r}; a correlation needs at least {MIN_PAIRS}")
    return None


def _expect_mapping(value: object, what: str, of: str) -> None:
    if not isinstance(value, Mapping):
        raise DialevalError(f"{what} must be a mapping of {of}; received {describe(value)}")


def correlate_with_humans(auto: dict[str, float], human: dict[str, dict[str, float]], *,
                          systems: dict[str, str] | None = None,
                          levels: tuple[str, ...] | _DefaultLevels = DEFAULT_LEVELS,
                          methods: tuple[str, ...] = DEFAULT_METHODS, B: int = 2000, seed: int = 0,
                          ci_level: float = 0.95, label: str = "auto",
                          progress: bool | None = None) -> CorrelationTable:
    """Correlate per-dialogue automatic scores with each human dimension (per-dialogue means).

    Pairs are the dialogues present on both sides (``n``; ``n_dropped`` counts dialogues with an automatic score
    but no rating on that dimension). At system level the values are the means over each system's dialogues
    that have both (``n`` counts systems, ``n_dialogues`` the dialogues averaged, ``n_dropped`` the dialogues
    with an automatic score left out: no rating, or no system); system level is skipped without ``systems``.
    ``levels`` :data:`DEFAULT_LEVELS` (the default): dialogue, and system when ``systems`` are given and every
    dimension has at least ``MIN_PAIRS`` (3) systems with both sides; otherwise the system level is left out with a
    :class:`~dialeval.errors.DialevalWarning` saying why (:func:`system_level_shortfall`); a system level
    asked for where there are too few systems is an error. Repeated levels and methods count once. ``B``,
    ``seed``, ``ci_level``, the levels and the methods are checked before any correlation. The bootstraps show
    a progress bar on stderr (``progress``: see :func:`dialeval.progress.enabled`).
    """
    from dialeval.stats import METHODS
    from dialeval.stats._common import as_generator, check_B, check_level

    _expect_mapping(auto, "auto", "dialogue ids to numbers")
    _expect_mapping(human, "human", "dimensions to {dialogue id: mean rating}")
    for dim, values in human.items():
        _expect_mapping(values, f"human[{dim!r}]", "dialogue ids to mean ratings")
    if systems is not None:
        _expect_mapping(systems, "systems", "dialogue ids to system names")
    for name, value in (("levels", levels), ("methods", methods)):
        if value is DEFAULT_LEVELS:
            continue
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
            raise DialevalError(f"{name} must be a non-empty list of names; received {describe(value)}")
    default_levels = levels is DEFAULT_LEVELS
    levels = LEVELS if default_levels else tuple(dict.fromkeys(levels))  # type: ignore[arg-type]
    methods = tuple(dict.fromkeys(methods))
    for lv in levels:
        if not isinstance(lv, str) or lv not in LEVELS:
            raise DialevalError(f"level {describe(lv)} is not allowed; allowed are " + ", ".join(LEVELS))
    for m in methods:
        if not isinstance(m, str) or m not in METHODS:
            raise DialevalError(f"correlation method {describe(m)} is not allowed; allowed are " + ", ".join(METHODS))
    ci_level = check_level(ci_level)
    B = check_B(B, level=ci_level)
    if not isinstance(seed, np.random.Generator):
        as_generator(seed)  # checks it
    if not auto:
        raise DialevalError("no automatic score to correlate")
    short = system_level_shortfall(auto, human, systems) if systems and "system" in levels else None
    if short and default_levels:
        warnings.warn(f"system level left out: {short}; the dialogue level is reported", DialevalWarning,
                      stacklevel=2)
        levels = tuple(lv for lv in levels if lv != "system")
    elif short:
        raise DialevalError(f"system level: {short}; the dialogue level can be correlated (levels=('dialogue',))")
    rows: list[CorrelationRow] = []
    jobs = [(lv, dim, hv) for lv in levels if lv != "system" or systems for dim, hv in human.items()]
    for lv, dim, hv in track(jobs, f"bootstrap (B = {B})", progress=progress):
        ids = [i for i in auto if i in hv and _known(auto[i]) and _known(hv[i])]   # both sides, NaN as missing
        if lv == "dialogue":
            keys = list(auto)
            x = [auto[i] for i in keys]
            y = [hv.get(i) for i in keys]
        else:  # a system-level job exists only when dialogues name systems
            by_system = systems or {}
            ids = [i for i in ids if i in by_system]
            a = system_means({i: auto[i] for i in ids}, by_system)
            h = system_means({i: hv[i] for i in ids}, by_system)
            keys = sorted(a)
            x, y = [a[k] for k in keys], [h[k] for k in keys]
        used = len(ids)
        for method in methods:
            try:
                c = correlate(x, y, method, level=ci_level, B=B, seed=seed)  # type: ignore[arg-type]
            except DialevalError as e:  # say which correlation: the level and the dimension
                pairs = "systems" if lv == "system" else "dialogues"
                raise DialevalError(f"{lv} level, dimension {dim!r}: {e} (pairs: {pairs} with an automatic score; "
                                    "a missing value is one without a rating of this dimension)") from None
            below = PVALUE_FLOOR if c.pvalue < PVALUE_FLOOR else None  # NaN compares False: None
            rows.append(CorrelationRow(lv, dim, method, c.statistic, c.pvalue, c.ci.low, c.ci.high, c.n,
                                       len(auto) - used, used, c.undefined_resamples, below))
    from dialeval import __version__
    settings = {"auto": label, "methods": list(methods), "B": B, "seed": seed, "ci_level": ci_level,
                "ci_method": "percentile bootstrap over pairs",
                "ci_note": "clipped to [-1, 1]; resamples where the coefficient is undefined are left out "
                           "(undefined_resamples)",
                "pvalue": "scipy's two-sided p-value for no correlation; where it is below 1e-16, pvalue_below is "
                          "1e-16 (tables print < 1e-16; pvalue can be 0.0 where it underflows a double)",
                "counts": dict(COUNTS), "dialogues_with_auto_score": len(auto),
                "systems": len(set(systems.values())) if systems else 0, "dialeval_version": __version__}
    return CorrelationTable(rows, settings)


def plot_correlations(table: CorrelationTable, path: str | Path, *, title: str = "") -> None:
    """A bar chart of the coefficients with their intervals, one group per dimension (PNG, SVG or PDF, by the
    suffix of ``path``: :data:`CORRELATION_PLOT_FORMATS`)."""
    fmt = output_format(path, CORRELATION_PLOT_FORMATS)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = list(dict.fromkeys(r.level for r in table.rows))
    methods = list(dict.fromkeys(r.method for r in table.rows))
    dims = list(dict.fromkeys(r.dimension for r in table.rows))
    fig, axes = plt.subplots(len(levels), 1, figsize=(max(6, 0.9 * len(dims) + 2), 3.2 * len(levels)),
                             squeeze=False)
    width = 0.8 / max(len(methods), 1)
    for ax, lv in zip(axes[:, 0], levels, strict=True):
        for k, m in enumerate(methods):
            rs = [next((r for r in table.rows if (r.level, r.method, r.dimension) == (lv, m, d)), None) for d in dims]
            xs = np.arange(len(dims)) + (k - (len(methods) - 1) / 2) * width
            ys = np.array([r.statistic if r else np.nan for r in rs])
            lo = np.array([r.statistic - r.ci_low if r else np.nan for r in rs])
            hi = np.array([r.ci_high - r.statistic if r else np.nan for r in rs])
            ax.bar(xs, ys, width, yerr=np.vstack([lo, hi]), capsize=2, label=m)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(np.arange(len(dims)), dims, rotation=30, ha="right")
        ax.set_ylim(-1, 1)
        n = next((r.n for r in table.rows if r.level == lv), 0)
        ax.set_ylabel(f"{lv} level (n = {n})")
        ax.legend(fontsize="small")
    s = table.settings
    fig.suptitle((title + "\n" if title else "") + f"{s['auto']} vs human ratings; {int(s['ci_level'] * 100)}% "
                 f"{s['ci_method']}, B = {s['B']}, seed {s['seed']}", fontsize="small")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=120)
    plt.close(fig)
