"""Everything a results table of a shared task needs, for a set of runs under one or more measures.

For each measure: run means with bootstrap intervals and ranks, every pair with |diff|, randomised
Tukey HSD p and ES_E, and the groups of runs not significantly different; across measures, Kendall's tau
between their rankings of the runs with a bootstrap-over-dialogues interval. The result is one object
that :mod:`dialeval.report` renders; it computes nothing the functions of this package don't expose.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError, describe, refused
from dialeval.stats._common import (
    Interval,
    Seed,
    as_matrix,
    check_B,
    check_level,
    decisive,
    percentile_interval,
    real_array,
    resampling_problems,
    snap_ties,
    stream_key,
    tie_tolerance,
    unit_scaled,
)
from dialeval.stats.anova import Anova2, anova2
from dialeval.stats.bootstrap import bootstrap_column_means
from dialeval.stats.correlation import (
    RANK_AGREEMENT_CI,
    Correlation,
    jackknife_means,
    kendall_rows_pairs,
    tau_from_bootstrap,
)
from dialeval.stats.randomization import TUKEY_TEST, TukeyHSD, auto_progress, permutation_null_multi, tukey_from_null

RUN_INTERVAL = "percentile bootstrap over dialogues"
EFFECT_SIZE = "ES_E = |diff| / sqrt(V_E), V_E from two-way ANOVA without replication"
GROUPS = "maximal sets of runs adjacent in rank order whose every pair has p >= alpha"


def _version() -> str:
    from dialeval import __version__
    return __version__


@dataclass(frozen=True)
class RunRow:
    """One run under one measure: mean, interval, rank (1 = best; ties share the best rank), group letters."""

    run: str
    mean: float
    ci: Interval
    rank: int
    groups: str


@dataclass(frozen=True)
class PairRow:
    """One pair of runs, the better-ranked first: |difference of means|, Tukey p, ES_E, p < alpha."""

    better: str
    worse: str
    abs_diff: float
    pvalue: float
    effect_size: float
    significant: bool


@dataclass(frozen=True, eq=False)
class MeasureComparison:
    """The runs compared under one measure (``name``); ``runs`` and ``pairs`` in rank order, best first."""

    name: str
    lower_is_better: bool
    runs: tuple[RunRow, ...]
    pairs: tuple[PairRow, ...]
    groups: tuple[tuple[str, ...], ...]
    anova: Anova2
    tukey: TukeyHSD
    alpha: float

    def to_dict(self) -> dict:
        return {"name": self.name, "lower_is_better": self.lower_is_better,
                "runs": [{"run": r.run, "mean": r.mean, "ci": r.ci.to_dict(), "rank": r.rank, "groups": r.groups}
                         for r in self.runs],
                "pairs": [vars(p).copy() for p in self.pairs],
                "groups": [list(g) for g in self.groups],
                "anova": {k: v for k, v in self.anova.to_dict().items() if k != "run_means"}}


@dataclass(frozen=True, eq=False)
class RankAgreement:
    """Kendall's tau-b between the run rankings of two measures (``tau.ci.method`` says how the interval was made)."""

    first: str
    second: str
    tau: Correlation


@dataclass(frozen=True, eq=False)
class Comparison:
    """Runs compared under several measures: one :class:`MeasureComparison` each, and their rank agreement.

    ``settings`` records the test, B, seed, alpha, interval level and methods, and the dialeval version;
    ``notes`` what the caller should know (e.g. dialogues or measures left out).
    """

    runs: tuple[str, ...]
    n: int
    measures: tuple[MeasureComparison, ...]
    agreement: tuple[RankAgreement, ...]
    settings: dict
    notes: tuple[str, ...] = field(default=())

    def measure(self, name: str) -> MeasureComparison:
        for mc in self.measures:
            if mc.name == name:
                return mc
        raise DialevalError(f"no measure {name!r} in this comparison; available are "
                            + ", ".join(mc.name for mc in self.measures))

    def to_dict(self) -> dict:
        return {"settings": dict(self.settings), "runs": list(self.runs), "dialogues": self.n,
                "measures": [mc.to_dict() for mc in self.measures],
                "agreement": [{"first": a.first, "second": a.second, **a.tau.to_dict()} for a in self.agreement],
                "notes": list(self.notes)}


def group_label(i: int) -> str:
    """The label of group i (from 0): a..z, then aa, ab, ... (like spreadsheet columns).

    >>> group_label(0), group_label(25), group_label(26)
    ('a', 'z', 'aa')
    """
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = string.ascii_lowercase[r] + out
    return out


def not_different_groups(pvalues: np.ndarray, order: Sequence[int], alpha: float) -> list[list[int]]:
    """Maximal runs of consecutive runs (in ``order``, best first) whose every pair has ``p >= alpha``.

    Returns groups of column indices, best group first; every run is in at least one group (alone if it
    differs from both neighbours). Runs in one group are not significantly different from each other.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[1, .5, .01], [.5, 1, .2], [.01, .2, 1]])
    >>> not_different_groups(p, [0, 1, 2], 0.05)
    [[0, 1], [1, 2]]
    """
    p = real_array(pvalues, "pvalues", "a square (m, m) matrix of p-values")
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise DialevalError(f"pvalues {describe(pvalues)} are not allowed; allowed is a square (m, m) matrix of "
                            "p-values")
    m = p.shape[0]
    given = order
    order = list(order) if isinstance(order, Sequence | np.ndarray) and not isinstance(order, str | bytes) else [None]
    if not all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in order) \
            or sorted(int(i) for i in order) != list(range(m)):
        raise DialevalError(f"order {describe(given)} is not allowed; allowed is each column index 0..{m - 1} "
                            "once, best run first")
    alpha = _check_alpha(alpha)
    same = p[np.ix_(order, order)] >= alpha   # same[i, j]: the i-th and j-th best runs do not differ
    groups: list[list[int]] = []
    last_end = end = -1
    for start in range(m):
        # the group from one run reaches at least as far as the group from the run before (a part of a group is
        # one): the end only moves forward, each step checking one column of the window (O(m^2), it was O(m^3))
        end = max(end, start)
        while end + 1 < m and same[start:end + 1, end + 1].all():
            end += 1
        if end > last_end:
            groups.append(order[start:end + 1])
            last_end = end
    return groups


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < float(alpha) < 1.0:
        raise refused("alpha", alpha, "significance levels in (0, 1), e.g. 0.05")
    return float(alpha)


def check_settings(B: int, seed: Seed, alpha: float, level: float) -> tuple[int, int, float, float]:
    """Checked ``(B, seed key, alpha, level)`` of a comparison (see :func:`compare_measures`)."""
    alpha, level = _check_alpha(alpha), check_level(level)
    return check_B(B, level=level, alpha=alpha), stream_key(seed), alpha, level


def _texts(value: object, what: str) -> tuple[str, ...]:
    """A list of texts (a lone string, or anything but a list, is not one: "abc" named three runs a, b, c)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise DialevalError(f"{what} must be a list of texts; received {describe(value)}")
    return tuple(str(v) for v in value)


def _check_runs(runs: Sequence[str], m: int) -> tuple[str, ...]:
    names = _texts(runs, "runs")
    if len(names) != m:
        raise DialevalError(f"{len(names)} run name(s) for {m} column(s); give one name per run (column)")
    seen: set[str] = set()
    for r in names:
        if r in seen:
            raise DialevalError(f"run name {r!r} appears twice; run names must be unique")
        seen.add(r)
    return names


@dataclass(frozen=True)
class _Ranking:
    """One measure's run means as ranks see them (equal where they differ by rounding only: :func:`snap_ties`),
    its runs best first, their ranks (ties share the best), the p-values that decide significance and the groups
    of runs not significantly different."""

    tied: np.ndarray
    order: list[int]
    ranks: np.ndarray
    deciding: np.ndarray
    groups: list[list[int]]


def _ranking(tukey: TukeyHSD, tol: float, lower: bool, alpha: float) -> _Ranking:
    tied = snap_ties(tukey.means, tol)
    key = tied if lower else -tied
    order = [int(i) for i in np.argsort(key, kind="stable")]
    # the p-values that decide: the test's own, or all 1 when B cannot resolve alpha (decisive: p = 0 then
    # only says p < 1/B)
    deciding = tukey.pvalues if decisive(tukey.B, alpha) else np.ones_like(tukey.pvalues)
    return _Ranking(tied, order, np.searchsorted(np.sort(key), key, side="left") + 1, deciding,
                    not_different_groups(deciding, order, alpha))


def _measure(name: str, X: np.ndarray, runs: tuple[str, ...], lower: bool, tukey: TukeyHSD, ranking: _Ranking,
             boot: np.ndarray, alpha: float, level: float, sep: str = "") -> MeasureComparison:
    means = tukey.means
    order, ranks, deciding, groups = ranking.order, ranking.ranks, ranking.deciding, ranking.groups
    labels = {i: "" for i in range(len(runs))}
    for g, members in enumerate(groups):
        for i in members:
            labels[i] = (labels[i] + sep if labels[i] else "") + group_label(g)
    a = anova2(X)
    scaled, e = unit_scaled(X)  # ES_E has no units: at 1e-165 V_E underflowed in data units and ES_E was NaN
    v = a.V_E if e == 0 else anova2(scaled).V_E
    sd = np.sqrt(v) if v > 0 else np.nan
    run_rows = tuple(RunRow(runs[i], float(means[i]), percentile_interval(boot[:, i], level, RUN_INTERVAL),
                            int(ranks[i]), labels[i]) for i in order)
    pairs = []
    for x, i in enumerate(order):
        for j in order[x + 1:]:
            d = float(abs(means[i] - means[j]))
            p = float(tukey.pvalues[i, j])
            pairs.append(PairRow(runs[i], runs[j], d, p, float(math.ldexp(d, -e) / sd), bool(deciding[i, j] < alpha)))
    return MeasureComparison(name, lower, run_rows, tuple(pairs), tuple(tuple(runs[i] for i in g) for g in groups),
                             a, tukey, alpha)


def compare_measures(matrices: Mapping[str, object], runs: Sequence[str], *,
                     lower_is_better: bool | Mapping[str, bool] = True, B: int = 5000, seed: Seed = 0,
                     alpha: float = 0.05, level: float = 0.95, progress: bool | None = None,
                     notes: Sequence[str] = ()) -> Comparison:
    """Compare m runs under each measure of ``matrices`` and the measures' rankings with each other.

    Parameters
    ----------
    matrices : mapping of measure name -> array_like (n, m)
        Per-dialogue scores, the same n dialogues (rows) and m runs (columns, in ``runs`` order) in each.
    runs : sequence of str
        Unique run names, one per column.
    lower_is_better : bool or mapping of measure name -> bool, default True
        Direction of each measure: ranks, "better" in pairs, and the sign used for rank agreement.
    B : int >= 1, default 5000
        Iterations of the randomised Tukey HSD and resamples of every bootstrap.
    seed : int or numpy.random.Generator
        Every measure's Tukey test uses this seed (so ``randomized_tukey_hsd(X, B, seed)`` reproduces its
        p-values), and one bootstrap of the dialogues (``numpy.random.default_rng(seed)``) serves all
        intervals. A Generator contributes one 64-bit draw, recorded as the seed.
    alpha : float in (0, 1), default 0.05
        Significance level for ``PairRow.significant`` and the groups.
    level : float in (0, 1), default 0.95
        Level of the run intervals and the tau intervals.
    progress : bool or None
        A bar over the Tukey iterations (None: on a terminal, for work of about a second or more).
    notes : sequence of str
        Passed through to the result (e.g. what the caller left out).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import numpy as np
    >>> from dialeval.stats import compare_measures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((40, 3)) * 0.2 + [0.1, 0.2, 0.5]
    >>> c = compare_measures({"err": X, "err2": X ** 2}, ["r1", "r2", "r3"], B=1000, seed=0)
    >>> [r.run for r in c.measure("err").runs], c.measure("err").groups
    (['r1', 'r2', 'r3'], (('r1',), ('r2',), ('r3',)))
    >>> c.agreement[0].tau.statistic
    1.0
    """
    if not isinstance(matrices, Mapping) or not matrices:
        raise DialevalError(f"matrices: expected a non-empty mapping of measure name -> (n, m) array, received "
                            f"{describe(matrices)}")
    arrays = {str(k): as_matrix(v, f"matrix {k!r}") for k, v in matrices.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        raise DialevalError("matrices differ in shape (" + ", ".join(f"{k}: {a.shape}" for k, a in arrays.items())
                            + "); every measure needs the same dialogues x runs")
    n, m = next(iter(shapes))
    names = _check_runs(runs, m)
    if isinstance(lower_is_better, Mapping):
        given = {str(k): v for k, v in lower_is_better.items()}  # keyed as the matrices are (str of their keys)
        missing = [k for k in arrays if k not in given]
        if missing:
            raise DialevalError("lower_is_better gives no direction for " + ", ".join(missing))
        lower = {k: _direction(given[k], f"lower_is_better[{k!r}]") for k in arrays}
    else:
        lower = dict.fromkeys(arrays, _direction(lower_is_better, "lower_is_better"))
    B, key, alpha, level = check_settings(B, seed, alpha, level)
    k = len(arrays)
    with _progress.bar(f"Tukey HSD ({k} measure(s), {m} runs, B={B})", k * B,
                       progress=auto_progress(progress, float(k) * B * n * m)) as bar:
        # one pass of permutations for every measure: the same draws K separate calls with this key would make
        nulls = permutation_null_multi(np.stack(list(arrays.values()), axis=2), B, key, bar.advance)
        tukeys = {name: tukey_from_null(X, nulls[:, q], key) for q, (name, X) in enumerate(arrays.items())}
    boot = bootstrap_column_means(np.hstack(list(arrays.values())), B, np.random.default_rng(key))
    boots = {name: boot[:, i * m:(i + 1) * m] for i, name in enumerate(arrays)}
    # One group-letter style for the whole comparison: letters run together ("abc") unless some measure has
    # more than 26 groups, whose two-letter labels need commas ("z,aa") -- then commas in every measure.
    tol = {name: tie_tolerance(X) for name, X in arrays.items()}  # ties of rounding: in ranks, groups and tau
    rankings = {name: _ranking(tukeys[name], tol[name], lower[name], alpha) for name in arrays}
    sep = "" if max(len(r.groups) for r in rankings.values()) <= 26 else ","
    measures = tuple(_measure(name, X, names, lower[name], tukeys[name], rankings[name], boots[name], alpha, level,
                              sep) for name, X in arrays.items())
    keys = list(arrays)
    sign = {name: 1.0 if lower[name] else -1.0 for name in keys}  # orient every measure best-first
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    replicates = kendall_rows_pairs([snap_ties(sign[name] * boots[name], tol[name]) for name in keys], pairs)
    jackknife = kendall_rows_pairs([snap_ties(sign[name] * jackknife_means(arrays[name]), tol[name])
                                    for name in keys], pairs)
    agreement = [RankAgreement(keys[i], keys[j], tau_from_bootstrap(
        sign[keys[i]] * rankings[keys[i]].tied, sign[keys[j]] * rankings[keys[j]].tied, replicates[:, p],
        jackknife[:, p], level, B, key)) for p, (i, j) in enumerate(pairs)]
    settings = {"test": TUKEY_TEST, "permutation": "scores permuted within each dialogue", "B": B, "seed": key,
                "pvalue": f"share of the B permuted datasets whose largest difference of run means reaches the "
                          f"pair's (0: below 1/B = {1 / B:.2g})",
                "alpha": alpha, "level": level, "interval": RUN_INTERVAL, "effect_size": EFFECT_SIZE,
                "groups": GROUPS, "agreement": "Kendall's tau-b between run means; interval: " + RANK_AGREEMENT_CI,
                "dialeval_version": _version()}
    undefined = [f"{a.first} / {a.second}" for a in agreement if not np.isfinite(a.tau.statistic)]
    notes = [*_texts(notes, "notes"), *resampling_problems(B, level=level, alpha=alpha)]
    if undefined:
        notes.append("Kendall's tau is undefined (n/a) where a measure gives every run the same mean: "
                     + ", ".join(undefined))
    return Comparison(names, n, measures, tuple(agreement), settings, tuple(notes))


def _direction(value: object, what: str) -> bool:
    """A direction given as a bool (numpy's too); "False" or None would have been read as bool("False") = True."""
    if not isinstance(value, bool | np.bool_):
        raise DialevalError(f"{what} = {describe(value)} is not allowed; allowed are True (lower is better) and "
                            "False (higher is better)")
    return bool(value)


def compare_runs_matrix(X: object, runs: Sequence[str], *, name: str = "score", lower_is_better: bool = True,
                        B: int = 5000, seed: Seed = 0, alpha: float = 0.05, level: float = 0.95,
                        progress: bool | None = None) -> MeasureComparison:
    """Compare m runs under one measure: :func:`compare_measures` with a single matrix (n x m).

    Examples
    --------
    >>> from dialeval.stats import compare_runs_matrix
    >>> X = [[.7, .5, .0], [.3, .1, .0], [.2, .0, .2], [.6, .2, .1], [.4, .4, .3]]
    >>> mc = compare_runs_matrix(X, ["A", "B", "C"], lower_is_better=False, B=1000, seed=0)
    >>> [(r.run, r.rank) for r in mc.runs]
    [('A', 1), ('B', 2), ('C', 3)]
    """
    return compare_measures({name: X}, runs, lower_is_better=lower_is_better, B=B, seed=seed, alpha=alpha,
                            level=level, progress=progress).measures[0]
