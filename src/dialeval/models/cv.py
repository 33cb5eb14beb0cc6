"""K-fold cross-validation of a model kind on any annotated corpus, scored by the project's one scorer.

STC-3 corpora are cross-validated on their subtasks (DQ, ND), other corpora (DBDC, WOCHAT, ConTurE) on their
turn-level scales; either way a fold's predictions are a run (:func:`dialeval.models.run_records`) scored
by :func:`dialeval.score` against the fold's gold, each task averaged as it declares (:mod:`dialeval.tasks`).

Folds are a stable hash of the dialogue id (:func:`fold_of`), never a shuffle: every model kind, every
seed and every run sees the same folds, so their scores are comparable fold by fold. Each fold's model
is trained on the other folds and predicts the held-out one (a dialogue's turns are always on one side);
the held-out predictions are scored against the held-out gold (``alpha = 0.5``, RSNOD variant ``paper``).

The result gives the scorer's measures per fold, their mean over folds and a 95% t-interval over folds
(``mean ± t(0.975, k-1) · sd / sqrt(k)``, sd with ``k - 1`` degrees of freedom), and the score of all
held-out predictions pooled as one run. With ``out_dir``, each fold's predictions and their
concatenation (``cv-<kind>.json``, every dialogue once) are written as run files for ``dialeval compare``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dialeval import progress as _progress
from dialeval.corpus import Corpus, joint_scales
from dialeval.errors import DialevalError, describe, first_few
from dialeval.io.atomic import make_folder
from dialeval.models import leakage
from dialeval.models.data import TurnTable, check_corpus, check_subtasks, has_subtasks
from dialeval.models.turndata import labelled_scales_of
from dialeval.scoring import PreparedGold, load_gold, score

LEVEL = 0.95


def fold_of(dialogue_id: str, k: int) -> int:
    """The fold (0 .. k-1) of a dialogue: ``int(sha256(utf-8 id).hexdigest(), 16) % k``.

    Stable across runs, machines and Python versions (unlike ``hash``), and independent of the order
    and of the other dialogues of the corpus.

    Examples
    --------
    >>> fold_of("4358", 5), [fold_of(str(i), 3) for i in range(6)]
    (0, [0, 0, 0, 2, 0, 1])
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise DialevalError(f"folds = {describe(k)} is not allowed; allowed are integers >= 1")
    return int(hashlib.sha256(str(dialogue_id).encode("utf-8")).hexdigest(), 16) % k


def check_folds(k: int, n_dialogues: int | None = None, *, name: str = "folds", file: str | None = None) -> None:
    """An error when ``k`` is not a number of folds: not an integer >= 2, or (with ``n_dialogues``) more folds
    than dialogues, which leaves a fold empty (checked before the folds are built: ``k`` may be any integer).
    ``name`` is how the message names ``k`` (``--folds`` on the command line).

    >>> check_folds(10**20, 8, name="--folds")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: --folds 100000000000000000000 is more than the 8 dialogue(s) of the corpus; ...
    """
    given = f"{name} {describe(k)}" if name.startswith("-") else f"{name} = {describe(k)}"
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise DialevalError(f"{given} is not allowed; allowed are integers >= 2", file=file)
    if n_dialogues is not None and k > n_dialogues:
        fix = f"allowed are 2 to {n_dialogues}" if n_dialogues >= 2 else "cross-validation needs at least two"
        raise DialevalError(f"{given} is more than the {n_dialogues} dialogue(s) of the corpus; each fold needs "
                            f"a dialogue: {fix}", file=file)


def folds_of(corpus: Corpus, k: int) -> list[int]:
    """:func:`fold_of` of each dialogue of ``corpus`` (in its order); an error when a fold is left empty."""
    fold = [fold_of(i, k) for i in corpus.ids()]
    present = set(fold)
    n_empty = k - len(present)  # k may be any integer: only the first few empty folds are looked for
    if n_empty:
        first = list(itertools.islice((f + 1 for f in range(k) if f not in present), 10))  # range: lazy too
        listed = first_few(first, 10, total=n_empty)
        fix = "use fewer folds" if k > 2 else "cross-validation needs dialogues in both folds: give more dialogues"
        raise DialevalError(f"{k} folds of {len(fold)} dialogue(s) leave {n_empty} fold(s) empty ({listed}); "
                            f"{fix}", file=corpus.source)
    return fold


def column_means(records: list[dict], gold: PreparedGold) -> dict[str, float]:
    """Each score column of a run (``quality.nmd.A``, ``nugget.jsd``, ``breakdown/jsd``, ...), averaged as
    its task declares: the means :func:`dialeval.evaluate` reports."""
    return score(records, gold).means()


def t_interval(values: list[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """Two-sided t-interval of the mean of ``values`` (NaN bounds for fewer than two values).

    Examples
    --------
    >>> [round(v, 4) for v in t_interval([1.0, 2.0, 3.0])]
    [-0.4841, 4.4841]
    """
    from scipy.stats import t

    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return (math.nan, math.nan)
    half = float(t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return (float(x.mean()) - half, float(x.mean()) + half)


@dataclass
class CVResult:
    """Scores of a k-fold cross-validation (see :func:`cross_validate`).

    ``folds[f]`` maps each column (:attr:`columns`) to fold f's score; ``mean`` and ``interval`` (95%
    t-interval over folds) summarise them; ``pooled`` scores all held-out predictions as one run.
    ``sizes[f]`` is the number of dialogues held out in fold f; ``seconds[f]`` its fit + predict time.
    """

    kind: str
    k: int
    subtasks: tuple[str, ...]
    seed: int
    params: dict
    n_dialogues: int
    columns: list[str]
    folds: list[dict[str, float]]
    sizes: list[int]
    seconds: list[float]
    mean: dict[str, float] = field(default_factory=dict)
    interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    pooled: dict[str, float] = field(default_factory=dict)
    source: str | None = None
    runs: list[str] = field(default_factory=list)
    trained_on: list[str] = field(default_factory=list)
    """The files each fold's model was trained on (their dialogues outside the fold); [] means ``source``."""
    scoring: dict = field(default_factory=dict)
    """How the folds were scored: the scorer's settings (alpha where ND weights its senders, strict, the RSNOD
    variant, each task's measures and averaging) and the dialeval version (:attr:`Scores.settings`)."""

    def flat(self) -> list[tuple[str, list[float]]]:
        """``[(column, [fold scores])]`` in column order, for tables."""
        return [(c, [f[c] for f in self.folds]) for c in self.columns]

    def to_dict(self) -> dict:
        """A JSON-able dict of everything (settings, per-fold scores, means, intervals)."""
        d = asdict(self)
        d["subtasks"] = list(self.subtasks)
        d["interval"] = {c: list(v) for c, v in self.interval.items()}
        d["interval_method"] = f"t-interval over folds, level {LEVEL}"
        return d


def cross_validate(corpus: Corpus | str | Path | list, kind: str, folds: int = 5, subtask: str = "both",
                   seed: int = 0, params: dict | None = None, progress: bool | None = None,
                   out_dir: str | Path | None = None) -> CVResult:
    """Train ``kind`` on k-1 folds, predict the held-out fold, score it; for each of the k folds.

    Parameters
    ----------
    corpus : Corpus, path or list of dict
        An annotated STC-3 dataset (every dialogue labelled for the subtasks asked).
    kind : str
        A registered model kind (``uniform``, ``prior``, ``position``, ``linear``, ``neural``, ...).
    folds : int >= 2, default 5
        Number of folds; dialogue ``d`` is in fold :func:`fold_of(d.id, folds) <fold_of>`.
    subtask : {'both', 'quality', 'nugget'}
    seed : int in 0..2**32-1 (a neural ensemble of k members: 0..2**32-k, its members use seed..seed+k-1)
        The seed of every fold's model (the folds themselves never depend on it).
    params : dict, optional
        Hyper-parameters of the kind.
    progress : bool, optional
        A bar over folds (None: when stderr is a terminal).
    out_dir : path, optional
        Write ``cv-<kind>.json`` (all held-out predictions: one full run) and
        ``cv-<kind>-folds/fold-<f>.json`` (fold f's held-out predictions, f from 1) here.

    Returns
    -------
    CVResult

    See Also
    --------
    cross_validate_many : several files trained on together (translations sharing ids), scored apart.

    Examples
    --------
    >>> t = lambda s, i: {"sender": s, "utterances": [f"turn of dialogue {i}"]}
    >>> data = [{"id": str(i), "turns": [t("customer", i), t("helpdesk", i)], "annotations": [
    ...     {"quality": {"A": i % 3 - 1, "S": 0, "E": 1}, "nugget": ["CNUG0", "HNaN"]}]} for i in range(20)]
    >>> r = cross_validate(data, "prior", folds=4)
    >>> r.sizes, round(r.mean["nugget.jsd"], 4), r.columns[0]
    ([3, 7, 3, 7], 0.0, 'quality.nmd.A')
    """
    return cross_validate_many([corpus], kind, folds, subtask, seed, params, progress, out_dir)[0]


def cross_validate_many(corpora: list, kind: str, folds: int = 5, subtask: str = "both", seed: int = 0,
                        params: dict | None = None, progress: bool | None = None,
                        out_dir: str | Path | None = None) -> list[CVResult]:
    """k-fold cross-validation of a model trained on several annotated files at once; one result per file.

    For fold f, one model is trained on the dialogues of *every* file whose id is not in fold f, then each
    file's held-out dialogues are predicted and scored on their own. Folds depend on the dialogue id only,
    so files that share ids (STC-3's English file translates part of the Chinese one, with the same ids and
    labels) never train on a translation of a held-out dialogue. With one file this is
    :func:`cross_validate`. Parameters as there; ``out_dir`` gets one sub-folder per file when there are
    several (:func:`folder_names`: named after the file, numbered where two files share a name).

    Returns
    -------
    list of CVResult
        In the order of ``corpora`` (always a list, one per file).
    """
    from dialeval.io.runs import write_run
    from dialeval.models import read_dialogues, run_records
    from dialeval.models.base import kind_class

    if not isinstance(corpora, list | tuple) or not corpora:
        raise DialevalError(f"corpora must be a non-empty list of corpora or paths; received {describe(corpora)}")
    loaded = [check_corpus(read_dialogues(c)) for c in corpora]
    names = folder_names(loaded)
    cls = kind_class(kind)
    subtasks = check_subtasks(subtask)
    check_folds(folds)
    params = dict(params or {})
    cls(subtasks, seed, progress=False, **params)  # check the settings before any work
    scales = joint_scales(loaded)
    parts = []
    for n, corpus in enumerate(loaded):
        gold = load_gold(corpus)
        stc3 = has_subtasks(corpus)
        missing = [s for s in subtasks if s not in gold.subtasks] if stc3 else []
        if missing:
            raise DialevalError(f"the corpus has no {' or '.join(missing)} annotations to cross-validate on",
                                file=corpus.source)
        if not stc3 and not labelled_scales_of(corpus):
            raise DialevalError("the corpus labels no turn or dialogue on any scale; nothing to cross-validate",
                                file=corpus.source)
        sub = None
        if out_dir is not None:
            sub = Path(out_dir) if len(loaded) == 1 else Path(out_dir) / names[n]
        parts.append({"corpus": corpus, "ids": corpus.ids(), "fold": folds_of(corpus, folds), "gold": gold,
                      "out": sub, "scores": [], "sizes": [], "records": {}, "runs": [],
                      "subtasks": subtasks if stc3 else ()})
    _warn_repeats(loaded)
    seconds: list[float] = []
    for f in _progress.track(range(folds), f"cv {kind}: {folds} folds", progress=progress):
        t0 = time.perf_counter()
        train_dialogues = [d for p in parts for d, g in zip(p["corpus"].dialogues, p["fold"], strict=True) if g != f]
        first = parts[0]["corpus"]
        train = Corpus(train_dialogues, scales, first.format, " + ".join(str(p["corpus"].source) for p in parts),
                       first.language)
        with warnings.catch_warnings():  # said once for all folds, above
            warnings.simplefilter("ignore", leakage.RepeatedDialoguesWarning)
            model = cls(subtasks, seed, progress=False, **params).fit(train)
        for p in parts:
            test_ids = [i for i, g in zip(p["ids"], p["fold"], strict=True) if g == f]
            records = run_records(p["corpus"].subset(test_ids), model, subtasks, progress=False,
                                  check_training=False)
            p["scores"].append(column_means(records, p["gold"].subset(test_ids)))
            p["sizes"].append(len(test_ids))
            p["records"] |= {r["id"]: r for r in records}
            if p["out"] is not None:
                path = p["out"] / f"cv-{kind}-folds" / f"fold-{f + 1}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_run(records, str(path))
                p["runs"].append(str(path))
        seconds.append(time.perf_counter() - t0)
    results = []
    for p in parts:
        pooled_records = [p["records"][i] for i in p["ids"]]
        pooled_scores = score(pooled_records, p["gold"])
        pooled = pooled_scores.means()
        if p["out"] is not None:
            make_folder(p["out"], "the held-out runs (--runs-out)")
            path = p["out"] / f"cv-{kind}.json"
            write_run(pooled_records, str(path))
            p["runs"].insert(0, str(path))
            # folds of an earlier cv with more folds (fold-4.json, fold-5.json beside this one's three) would be
            # read as this split's
            for stale in sorted(set((p["out"] / f"cv-{kind}-folds").glob("fold-*.json")) - set(map(Path, p["runs"]))):
                stale.unlink()
        cols = list(pooled)
        scores = [{c: s.get(c, math.nan) for c in cols} for s in p["scores"]]
        with warnings.catch_warnings():  # a column no fold scored: NaN, said as n/a in reports
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = {c: float(np.nanmean([s[c] for s in scores])) for c in cols}
        interval = {c: t_interval([s[c] for s in scores]) for c in cols}
        results.append(CVResult(kind, folds, p["subtasks"], seed, params, len(p["ids"]), cols, scores, p["sizes"],
                                list(seconds), mean, interval, pooled, p["corpus"].source, p["runs"],
                                [str(q["corpus"].source) for q in parts], dict(pooled_scores.settings)))
    return results


def _warn_repeats(corpora: list[Corpus]) -> None:
    """One :class:`~dialeval.models.leakage.RepeatedDialoguesWarning` if any dialogue's turns occur twice in the
    files cross-validated together (folds go by id: copies under two ids can land on both sides of a fold)."""
    tables = [TurnTable.from_corpus(c, senders=None) for c in corpora]
    leakage.warn_repeats([i for t in tables for i in t.ids], np.concatenate([leakage.fingerprints(t) for t in tables]),
                         cv=True, stacklevel=3)


def folder_names(corpora: list[Corpus]) -> list[str]:
    """One sub-folder name per corpus for the held-out runs of several: each file's stem, numbered where two
    stems are the same (``a/train.json`` and ``b/train.json``: ``train-1``, ``train-2``), so no corpus's runs
    overwrite another's.

    >>> from dialeval.corpus import Corpus
    >>> folder_names([Corpus([], source="a/tr.json"), Corpus([], source="b/tr.json"), Corpus([], source="x.json")])
    ['tr-1', 'tr-2', 'x']
    """
    stems = [Path(str(c.source)).stem if c.source else "corpus" for c in corpora]
    return [f"{s}-{stems[:n].count(s) + 1}" if stems.count(s) > 1 else s for n, s in enumerate(stems)]
