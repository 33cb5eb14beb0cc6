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
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError, describe
from dialeval.io._files import as_path, load_json_document, read_bounded
from dialeval.io.atomic import atomic_path, output_format
from dialeval.io.text import csv_rows
from dialeval.progress import track
from dialeval.stats import correlate

CORRELATION_PLOT_FORMATS = ("png", "svg", "pdf")
"""The formats :func:`plot_correlations` draws, by the suffix of its path."""

AGGREGATES = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}
"""How per-turn scores become one per dialogue."""
LEVELS = ("dialogue", "system")
DEFAULT_METHODS = ("pearson", "spearman")


def _check_aggregate(aggregate: str) -> None:
    if aggregate not in AGGREGATES:
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


def load_scores(path: str | Path, *, aggregate: str = "mean", delimiter: str | None = None) -> dict[str, float]:
    """Per-dialogue automatic scores from a file, turn scores aggregated per dialogue.

    Layouts: CSV with a header ``id,score`` or ``id,turn,score``; JSON array of ``{"id", "score"}`` or
    ``{"id", "turns": [{"turn", "score"}, ...]}``. Scores are finite numbers; an id met twice at dialogue
    level is an error. Text is UTF-8 (with or without BOM) or UTF-16 with BOM (:mod:`dialeval.io.text`); the
    CSV delimiter is ``delimiter`` or sniffed from the header (``,`` ``;`` tab ``|``); where it is not ``,``
    a decimal comma (``0,5``) is read as a decimal point.
    """
    _check_aggregate(aggregate)
    p = as_path(path, "scores")
    file = str(p)
    per: dict[str, list[float]] = {}
    direct: dict[str, float] = {}

    def num(v: object, did: str, where: str) -> float:
        try:
            x = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(v, bool) or not math.isfinite(x):
            raise DialevalError(f"score {describe(v)} is not a finite number", file=file, dialogue=did, field=where)
        return x

    if p.suffix.lower() == ".csv":
        cols, rows, delim = csv_rows(read_bounded(p), file, delimiter)
        decimal_comma = delim != ","  # '0,5' is a number where the delimiter is not ','
        if "id" not in cols or "score" not in cols:
            raise DialevalError(f"the CSV's columns are {', '.join(map(repr, cols)) or 'none'}; expected id and score "
                                "(and optionally turn)" + ("" if delimiter else ", separated by one of , ; tab |"),
                                file=file)
        for n, row in enumerate(rows, start=2):
            did = row.get("id", "")
            raw = row.get("score")
            if decimal_comma and isinstance(raw, str):
                raw = raw.replace(",", ".")
            if "turn" in cols and row.get("turn") not in (None, ""):
                per.setdefault(did, []).append(num(raw, did, f"line {n}"))
            else:
                if did in direct:
                    raise DialevalError("dialogue score given twice", file=file, dialogue=did, field=f"line {n}")
                direct[did] = num(raw, did, f"line {n}")
    else:
        data = load_json_document(p)
        if not isinstance(data, list):
            raise DialevalError("expected a JSON array of {id, score} or {id, turns: [{turn, score}]}", file=file)
        for i, rec in enumerate(data):
            if not isinstance(rec, dict) or "id" not in rec:
                raise DialevalError(f"item {i} is not an object with an 'id'", file=file, field=f"[{i}]")
            did = str(rec["id"])
            if "score" in rec:
                if did in direct:
                    raise DialevalError("dialogue score given twice", file=file, dialogue=did)
                direct[did] = num(rec["score"], did, "score")
            elif isinstance(rec.get("turns"), list):
                per[did] = [num(t.get("score") if isinstance(t, dict) else t, did, f"turns[{j}].score")
                            for j, t in enumerate(rec["turns"])]
            else:
                raise DialevalError("expected 'score' or 'turns'", file=file, dialogue=did)
    out = _aggregate(per, aggregate)
    both = set(out) & set(direct)
    if both:
        raise DialevalError(f"{len(both)} dialogue(s) have both a dialogue score and turn scores, e.g. "
                            f"{sorted(both)[:3]}", file=file)
    out.update(direct)
    if not out:
        raise DialevalError("no score in the file", file=file)
    return out


@dataclass(frozen=True)
class CorrelationRow:
    level: str
    dimension: str
    method: str
    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float
    n: int
    n_dropped: int


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


def correlate_with_humans(auto: dict[str, float], human: dict[str, dict[str, float]], *,
                          systems: dict[str, str] | None = None, levels: tuple[str, ...] = ("dialogue", "system"),
                          methods: tuple[str, ...] = DEFAULT_METHODS, B: int = 2000, seed: int = 0,
                          ci_level: float = 0.95, label: str = "auto",
                          progress: bool | None = None) -> CorrelationTable:
    """Correlate per-dialogue automatic scores with each human dimension (per-dialogue means).

    Pairs are the dialogues present on both sides (``n``; ``n_dropped`` counts dialogues with an automatic score
    but no rating on that dimension). At system level the values are the means over each system's dialogues
    that have both; system level is skipped without ``systems``. The bootstraps show a progress bar on stderr
    (``progress``: see :func:`dialeval.progress.enabled`).
    """
    for lv in levels:
        if lv not in LEVELS:
            raise DialevalError(f"level {describe(lv)} is not allowed; allowed are " + ", ".join(LEVELS))
    if not auto:
        raise DialevalError("no automatic score to correlate")
    rows: list[CorrelationRow] = []
    jobs = [(lv, dim, hv) for lv in levels if lv != "system" or systems for dim, hv in human.items()]
    for lv, dim, hv in track(jobs, f"bootstrap (B = {B})", progress=progress):
        ids = [i for i in auto if i in hv]
        if lv == "dialogue":
            keys = list(auto)
            x = [auto[i] for i in keys]
            y = [hv.get(i) for i in keys]
        else:
            a = system_means({i: auto[i] for i in ids}, systems)
            h = system_means({i: hv[i] for i in ids}, systems)
            keys = sorted(a)
            x, y = [a[k] for k in keys], [h.get(k) for k in keys]
        for method in methods:
            try:
                c = correlate(x, y, method, level=ci_level, B=B, seed=seed)  # type: ignore[arg-type]
            except DialevalError as e:  # say which correlation: the level and the dimension
                pairs = "systems" if lv == "system" else "dialogues"
                raise DialevalError(f"{lv} level, dimension {dim!r}: {e} (pairs: {pairs} with an automatic score; "
                                    "a missing value is one without a rating of this dimension)") from None
            rows.append(CorrelationRow(lv, dim, method, c.statistic, c.pvalue, c.ci.low, c.ci.high, c.n,
                                       c.n_dropped))
    from dialeval import __version__
    settings = {"auto": label, "methods": list(methods), "B": B, "seed": seed, "ci_level": ci_level,
                "ci_method": "percentile bootstrap over pairs", "dialogues_with_auto_score": len(auto),
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
