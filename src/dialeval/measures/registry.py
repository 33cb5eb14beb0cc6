"""The one registry of distribution measures.

Each measure is declared here once — name, aliases, scale, range, direction, symmetry, formula, citation,
kernel and a runnable example — and everything else (the public functions and their docstrings, CLI
choices, report headers, error messages) is generated from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dialeval.errors import DialevalError
from dialeval.errors import describe as describe_value
from dialeval.measures import nominal, ordinal
from dialeval.measures._arrays import check_pair

SAKAI_2017 = ("T. Sakai. Towards automatic evaluation of multi-turn dialogues: a task design that "
              "leverages inherently subjective annotations. EVIA 2017.")
SAKAI_2018 = ("T. Sakai. Comparing two binned probability distributions for information access "
              "evaluation. SIGIR 2018.")
LIN_1991 = "J. Lin. Divergence measures based on the Shannon entropy. IEEE Trans. Inf. Theory 37(1), 1991."
HIGASHINAKA_2016 = ("R. Higashinaka et al. The dialogue breakdown detection challenge: task description, "
                    "datasets, and evaluation metrics. LREC 2016.")


SCALES = ("ordinal", "nominal")
"""The scales a measure can respect: ordered bins, or bins with no order."""

BOUNDS: dict[str, Callable[[int, float], float]] = {
    "1": lambda L, c: 1.0,
    "L-1": lambda L, c: float(L - 1),
    "2/L": lambda L, c: 2.0 / L,
    "c_L": lambda L, c: c,
    "c_L (L-1)": lambda L, c: c * (L - 1),
    "sqrt(c_L)": lambda L, c: float(np.sqrt(c)),
}
"""The upper ends a declared range may have, as functions of L bins and ``c_L`` (:data:`C_L_NOTE`)."""


@dataclass(frozen=True)
class Measure:
    """One declared measure. Call it as ``measure(pred, gold)`` (or through the module-level function)."""

    name: str
    title: str
    scale: str                      # "ordinal" or "nominal": the scale the measure respects
    formula: str
    kernel: Callable[..., np.ndarray]
    citation: str
    symmetric: bool
    example: tuple[tuple[float, ...], tuple[float, ...], str]
    aliases: tuple[str, ...] = ()
    range: tuple[str, str] = ("0", "1")   # may mention L, the number of bins, and c_L (BOUNDS)
    has_variant: bool = False
    lower_is_better: bool = True

    @property
    def direction(self) -> str:
        """The direction in words, from :attr:`lower_is_better` (reports, listings and the leaderboard read the
        flag; this is its text)."""
        return "lower is better; 0 is a perfect match" if self.lower_is_better else "higher is better"

    def __call__(self, pred: object, gold: object, *, variant: str = "paper") -> float | np.ndarray:
        p, q, single = check_pair(pred, gold)
        out = self.compute(p, q, variant=variant)
        return float(out[0]) if single else out

    def compute(self, p: np.ndarray, q: np.ndarray, *, variant: str = "paper") -> np.ndarray:
        """Apply the kernel to already checked, normalised 2-D arrays (no boundary checks)."""
        if self.has_variant:
            if not isinstance(variant, str) or variant not in ordinal.VARIANTS:
                raise DialevalError(f"variant {variant!r} is not allowed for {self.name}; allowed are "
                                    + ", ".join(repr(v) for v in ordinal.VARIANTS))
            return self.kernel(p, q, variant)
        if variant != "paper":
            raise DialevalError(f"{self.name} has no variants; received variant={variant!r}")
        return self.kernel(p, q)

    @property
    def upper_bound(self) -> str:
        return self.range[1]

    def upper(self, L: int, variant: str = "paper") -> float:
        """The declared range's upper end on ``L`` bins, a number (``c_L``: :func:`~dialeval.measures.ordinal.od_bound`
        of ``L`` and ``variant``).

        >>> get("rsnod").upper(3), round(get("rsnod").upper(5), 4), get("mse").upper(4)
        (1.0, 1.0408, 0.5)
        """
        if isinstance(L, bool) or not isinstance(L, int | np.integer) or L < 2:
            raise DialevalError(f"L = {describe_value(L)} is not allowed; allowed are integers >= 2 (the number of "
                                "bins)")
        if not isinstance(variant, str) or variant not in ordinal.VARIANTS:
            raise DialevalError(f"variant {describe_value(variant)} is not allowed; allowed are "
                                + ", ".join(repr(v) for v in ordinal.VARIANTS))
        c = ordinal.od_bound(int(L), variant) if "c_L" in self.range[1] else 1.0
        return BOUNDS[self.range[1]](int(L), c)


def _declare() -> dict[str, Measure]:
    od_note = "averaged over the gold's non-empty bins (variant='2018': over all L bins)"
    ms = [
        Measure("nvd", "normalised variational distance", "nominal",
                "NVD(p, q) = sum_i |p(i) - q(i)| / 2", nominal.nvd, SAKAI_2018, True,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.6667")),
        Measure("rnss", "root normalised sum of squares", "nominal",
                "RNSS(p, q) = sqrt( sum_i (p(i) - q(i))^2 / 2 )", nominal.rnss, SAKAI_2017, True,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.5774")),
        Measure("jsd", "Jensen-Shannon divergence (bits)", "nominal",
                "JSD(p, q) = (KL(p || m) + KL(q || m)) / 2,  m = (p + q) / 2,  log base 2, 0 log 0 = 0",
                nominal.jsd, LIN_1991, True, ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.4591"),
                aliases=("js", "jensen-shannon")),
        Measure("mse", "mean squared error of the bins", "nominal",
                "MSE(p, q) = sum_i (p(i) - q(i))^2 / L", nominal.mse, HIGASHINAKA_2016, True,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.2222"), range=("0", "2/L")),
        Measure("nmd", "normalised match distance", "ordinal",
                "NMD(p, q) = sum_i |cp(i) - cq(i)| / (L - 1),  cp(i) = p(0) + ... + p(i)",
                ordinal.nmd, SAKAI_2018, True, ((0, 1, 0), (1, 0, 0), "0.5")),
        Measure("od", "order-aware divergence", "ordinal",
                "OD(p || q) = mean_{i : q(i) > 0} DW_i,  DW_i = sum_j |i - j| (p(j) - q(j))^2  "
                f"({od_note})", ordinal.od, SAKAI_2017, False, ((0, 1, 0), (1, 0, 0), "1.0"),
                range=("0", "c_L (L-1)"), has_variant=True),
        Measure("nod", "normalised order-aware divergence", "ordinal",
                f"NOD(p || q) = OD(p || q) / (L - 1)  (OD {od_note})", ordinal.nod, SAKAI_2017, False,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.3148"), range=("0", "c_L"), has_variant=True),
        Measure("sod", "symmetric order-aware divergence", "ordinal",
                f"SOD(p, q) = (OD(p || q) + OD(q || p)) / 2  (each OD {od_note.replace('gold', 'second argument')})",
                ordinal.sod, SAKAI_2017, True, ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.4815"),
                range=("0", "c_L (L-1)"), has_variant=True),
        Measure("snod", "symmetric normalised order-aware divergence", "ordinal",
                "SNOD(p, q) = SOD(p, q) / (L - 1)", ordinal.snod, SAKAI_2017, True,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.2407"), range=("0", "c_L"), has_variant=True),
        Measure("rnod", "root normalised order-aware divergence", "ordinal",
                "RNOD(p || q) = sqrt(NOD(p || q))", ordinal.rnod, SAKAI_2017, False,
                ((0, 1, 0), (1, 0, 0), "0.7071"), range=("0", "sqrt(c_L)"), has_variant=True),
        Measure("rsnod", "root symmetric normalised order-aware divergence", "ordinal",
                "RSNOD(p, q) = sqrt(SNOD(p, q))", ordinal.rsnod, SAKAI_2017, True,
                ((1, 0, 0), (1 / 3, 1 / 3, 1 / 3), "0.4907"), range=("0", "sqrt(c_L)"), has_variant=True),
    ]
    return {m.name: m for m in ms}


MEASURES: dict[str, Measure] = _declare()
_ALIASES = {a: m.name for m in MEASURES.values() for a in (m.name, *m.aliases)}


def names(scale: str | None = None) -> list[str]:
    """Registered measure names, optionally only those for one scale kind ('ordinal' or 'nominal')."""
    if scale is not None and scale not in SCALES:
        raise DialevalError(f"scale {describe_value(scale)} is not allowed; allowed are " + ", ".join(SCALES))
    return [m.name for m in MEASURES.values() if scale is None or m.scale == scale]


def get(name: str) -> Measure:
    """The measure called ``name`` (or one of its aliases), case-insensitive.

    Raises
    ------
    DialevalError
        If no measure has that name; the message lists the allowed names.
    """
    key = str(name).strip().lower()
    if key not in _ALIASES:
        raise DialevalError(f"unknown measure {name!r}; allowed are " + ", ".join(MEASURES))
    return MEASURES[_ALIASES[key]]


def register(measure: Measure) -> Measure:
    """Add a measure (for plug-ins): its name and aliases must be new (names are case-insensitive, kept in lower
    case), its scale one of :data:`SCALES` and its range's upper end one of :data:`BOUNDS`.

    Raises
    ------
    DialevalError
        For anything else, saying what was received and what is allowed.
    """
    if not isinstance(measure, Measure):
        raise DialevalError(f"register() takes a Measure; received {describe_value(measure)}")
    names_ = [measure.name, *measure.aliases]
    if not all(isinstance(a, str) and a.strip() for a in names_):
        raise DialevalError(f"measure names and aliases must be non-empty strings; received {names_!r}")
    if measure.scale not in SCALES:
        raise DialevalError(f"measure {measure.name!r}: scale {measure.scale!r} is not allowed; allowed are "
                            + ", ".join(SCALES))
    if measure.range[1] not in BOUNDS:
        raise DialevalError(f"measure {measure.name!r}: range upper end {measure.range[1]!r} is not allowed; "
                            "allowed are " + ", ".join(repr(b) for b in BOUNDS))
    keys = [a.strip().lower() for a in names_]
    for a in keys:
        if a in _ALIASES:
            raise DialevalError(f"measure name {a!r} is already registered")
    name = keys[0]
    if name != measure.name or keys[1:] != list(measure.aliases):
        measure = dataclasses.replace(measure, name=name, aliases=tuple(keys[1:]))
    MEASURES[name] = measure
    for a in keys:
        _ALIASES[a] = name
    return measure


def describe(m: Measure) -> dict:
    """A measure's declaration as plain data (for listings, reports and the JSON of ``dialeval measures``)."""
    return {"name": m.name, "title": m.title, "scale": m.scale, "range": list(m.range), "symmetric": m.symmetric,
            "variants": list(ordinal.VARIANTS) if m.has_variant else [], "direction": m.direction,
            "formula": m.formula, "aliases": list(m.aliases), "citation": m.citation}


C_L_NOTE = ("; c_L = dialeval.measures.ordinal.od_bound(L), the supremum of NOD: 1 for L <= 4, 13/12 for L = 5, "
            "17/15 for L = 6, reached as the gold's slivers of mass on far bins count as much as its main bin; "
            "1 with variant='2018'")
"""What ``c_L`` in a declared range is (the docstrings say it)."""


def markdown_table() -> str:
    """The registry as a Markdown table (the README's table is this text; a test keeps them equal)."""
    rows = ["| measure | scale | range | symmetric | definition |", "|---|---|---|---|---|"]
    for m in MEASURES.values():
        formula = m.formula.replace("|", "\\|")
        rows.append(f"| {m.name.upper()} | {m.scale} | [{m.range[0]}, {m.range[1]}] | "
                    f"{'yes' if m.symmetric else 'no'} | `{formula}` |")
    return "\n".join(rows) + "\n"


def _fmt(v: tuple[float, ...]) -> str:
    parts = []
    for x in v:
        parts.append("1/3" if abs(x - 1 / 3) < 1e-12 else ("2/3" if abs(x - 2 / 3) < 1e-12 else repr(x)))
    return "[" + ", ".join(parts) + "]"


def make_docstring(m: Measure) -> str:
    """The numpydoc docstring of a measure's public function, built from its declaration."""
    p, q, expected = m.example
    variant = ("variant : {'paper', '2018'}, default 'paper'\n"
               "    'paper' averages DW_i over the non-empty bins (MEASURES.md, DialEval scripts);\n"
               "    '2018' over all bins, as the first STC-3 script (September 2018) did.\n") if m.has_variant else ""
    sym = "yes" if m.symmetric else "no: argument order matters, (pred, gold)"
    return f"""{m.title.capitalize()} ({m.name.upper()}).

    {m.formula}

Parameters
----------
pred : array_like, shape (L,) or (n, L)
    Predicted distribution(s). Each row is normalised to sum 1; it must be finite, >= 0 and not all zero.
gold : array_like, same shape as ``pred``
    Gold (annotator) distribution(s), checked and normalised the same way.
{variant}
Returns
-------
float or numpy.ndarray of shape (n,)
    A float for two 1-D distributions, one value per row for 2-D input.

Notes
-----
Scale: {m.scale}. Range: [{m.range[0]}, {m.range[1]}] (L = number of bins{C_L_NOTE if "c_L" in m.range[1] else ""}).
Direction: {m.direction}.
Symmetric: {sym}.
Reference: {m.citation}

Raises
------
dialeval.DialevalError
    On shapes that differ, fewer than 2 bins, NaN, infinite or negative values, or an all-zero row.

Examples
--------
>>> from dialeval.measures import {m.name}
>>> round({m.name}({_fmt(p)}, {_fmt(q)}), 4)
{expected}
"""
