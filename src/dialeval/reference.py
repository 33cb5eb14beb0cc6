"""A slow, plain-Python reference of the measures and the STC-3/DialEval task scores.

Written straight from ``MEASURES.md`` with loops over dialogues, turns and bins, in the shape of the
original STC-3 evaluation script, and sharing no code with :mod:`dialeval.measures` or
:mod:`dialeval.scoring`. It exists so that the fast, vectorised scorer can be checked against an
independent implementation (the test suite does it on the real training data) and timed against one
(``benchmarks/bench_evaluate.py``). Use :func:`dialeval.evaluate` for real work: this module does not
validate its input.

Examples
--------
>>> from dialeval import reference
>>> round(reference.rsnod([0, 1, 0], [1, 0, 0]), 4), round(reference.rsnod([0, 1, 0], [1, 0, 0], "2018"), 4)
(0.7071, 0.9129)
"""

from __future__ import annotations

import math

QUALITY_KEYS = ("A", "S", "E")
QUALITY_LEVELS = (2, 1, 0, -1, -2)
CUSTOMER_TYPES = ("CNUG0", "CNUG", "CNUG*", "CNaN")
HELPDESK_TYPES = ("HNUG", "HNUG*", "HNaN")


def _normalise(p: list[float]) -> list[float]:
    s = sum(p)
    return [x / s for x in p]


def nvd(p, q) -> float:
    p, q = _normalise(p), _normalise(q)
    return sum(abs(a - b) for a, b in zip(p, q, strict=True)) / 2


def rnss(p, q) -> float:
    p, q = _normalise(p), _normalise(q)
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q, strict=True)) / 2)


def mse(p, q) -> float:
    p, q = _normalise(p), _normalise(q)
    return sum((a - b) ** 2 for a, b in zip(p, q, strict=True)) / len(p)


def _kl_to_mean(p, q) -> float:
    """KL(p || m), m = (p + q) / 2, each term as a log2(2 a / (a + b)): (a + b) / 2 underflows to 0 for the smallest
    subnormal a."""
    return sum(a * math.log2(2 * a / (a + b)) for a, b in zip(p, q, strict=True) if a > 0)


def jsd(p, q) -> float:
    p, q = _normalise(p), _normalise(q)
    return (_kl_to_mean(p, q) + _kl_to_mean(q, p)) / 2


def nmd(p, q) -> float:
    p, q = _normalise(p), _normalise(q)
    total, cp, cq = 0.0, 0.0, 0.0
    for a, b in zip(p, q, strict=True):
        cp += a
        cq += b
        total += abs(cp - cq)
    return total / (len(p) - 1)


def _dw(p, q, i) -> float:
    return sum(abs(i - j) * (p[j] - q[j]) ** 2 for j in range(len(p)))


def od(p, q, variant: str = "paper") -> float:
    p, q = _normalise(p), _normalise(q)
    bins = range(len(q)) if variant == "2018" else [i for i in range(len(q)) if q[i] > 0]
    return sum(_dw(p, q, i) for i in bins) / len(bins)


def nod(p, q, variant: str = "paper") -> float:
    return od(p, q, variant) / (len(p) - 1)


def sod(p, q, variant: str = "paper") -> float:
    return (od(p, q, variant) + od(q, p, variant)) / 2


def snod(p, q, variant: str = "paper") -> float:
    return sod(p, q, variant) / (len(p) - 1)


def rnod(p, q, variant: str = "paper") -> float:
    return math.sqrt(nod(p, q, variant))


def rsnod(p, q, variant: str = "paper") -> float:
    return math.sqrt(snod(p, q, variant))


MEASURES = {"nvd": nvd, "rnss": rnss, "jsd": jsd, "mse": mse, "nmd": nmd, "od": od, "nod": nod, "sod": sod,
            "snod": snod, "rnod": rnod, "rsnod": rsnod}
"""The reference of every measure, by registry name (the property tests check both lists agree)."""


def _gold_of(dialogue: dict) -> tuple[dict[str, list[float]] | None, list[list[float]] | None]:
    anns = dialogue["annotations"]
    quality = None
    if "quality" in anns[0]:
        quality = {}
        for k in QUALITY_KEYS:
            counts = [0.0] * len(QUALITY_LEVELS)
            for a in anns:
                counts[QUALITY_LEVELS.index(a["quality"][k])] += 1
            quality[k] = [c / len(anns) for c in counts]
    nuggets = None
    if "nugget" in anns[0]:
        nuggets = []
        for t, turn in enumerate(dialogue["turns"]):
            types = CUSTOMER_TYPES if turn["sender"] == "customer" else HELPDESK_TYPES
            counts = [0.0] * len(types)
            for a in anns:
                counts[types.index(a["nugget"][t])] += 1
            nuggets.append([c / len(anns) for c in counts])
    return quality, nuggets


RSNOD_WORST_5 = {"paper": math.sqrt(13 / 12), "2018": 1.0}
"""The supremum of RSNOD on STC-3's 5 levels, worked by hand: gold (e, e, 0, 1 - 2e, 0) against the prediction
(e, e, 0, 0, 1 - 2e). The squared differences tend to 1 at bins 3 and 4 and 0 elsewhere, so DW_i -> |i - 3| +
|i - 4|: DW_0 -> 7, DW_1 -> 5, DW_3 = DW_4 -> 1. Each OD averages over its second argument's non-empty bins,
{0, 1, 3} and {0, 1, 4}: 13/3 both ways, so SOD -> 13/3 as e -> 0 and SNOD = SOD / 4 -> 13/12 (no support
does better: ``dialeval.measures.ordinal.od_bound`` searches them all). With OD over all 5 bins (the 2018
script) the mean over i of |i - j| + |i - k| is at most 4 for any bins j, k (4 for 0 and 4): SNOD <= 1, reached by
one-hot opposites. The tasks' other measures (NMD, JSD, RNSS) are at most 1, reached by one-hot opposites."""


def evaluate(submission: list[dict], gold: list[dict], alpha: float = 0.5, strict: bool = False,
             rsnod_variant: str = "paper") -> dict:
    """The task scores of MEASURES.md, one dialogue at a time (the shape of the original script).

    Returns the same dict as :func:`dialeval.evaluate` without its ``settings``.
    """
    golds = {str(d["id"]): d for d in gold}
    sums: dict[str, float] = {}
    scored, extra, seen = 0, 0, set()
    has_q = has_n = False
    for run in submission:
        did = str(run["id"])
        if did not in golds:
            extra += 1
            continue
        seen.add(did)
        scored += 1
        g = golds[did]
        gq, gn = _gold_of(g)
        if "quality" in run:
            has_q = True
            for k in QUALITY_KEYS:
                pred = [run["quality"][k].get(str(level), 0.0) for level in QUALITY_LEVELS]
                sums[f"quality.nmd.{k}"] = sums.get(f"quality.nmd.{k}", 0.0) + nmd(pred, gq[k])
                sums[f"quality.rsnod.{k}"] = (sums.get(f"quality.rsnod.{k}", 0.0)
                                              + rsnod(pred, gq[k], rsnod_variant))
        if "nugget" in run:
            has_n = True
            for name, fn in (("jsd", jsd), ("rnss", rnss)):
                cust, helpd = [], []
                for t, turn in enumerate(g["turns"]):
                    types = CUSTOMER_TYPES if turn["sender"] == "customer" else HELPDESK_TYPES
                    pred = [run["nugget"][t].get(x, 0.0) for x in types]
                    (cust if turn["sender"] == "customer" else helpd).append(fn(pred, gn[t]))
                if cust and helpd:
                    value = alpha * sum(cust) / len(cust) + (1 - alpha) * sum(helpd) / len(helpd)
                else:
                    value = sum(cust or helpd) / len(cust or helpd)
                sums[f"nugget.{name}"] = sums.get(f"nugget.{name}", 0.0) + value
    missing = len(golds) - len(seen)
    n = scored + (missing if strict else 0)
    if strict:  # a missing dialogue scores the worst value of each measure
        for key in sums:
            sums[key] += missing * (RSNOD_WORST_5[rsnod_variant] if ".rsnod." in key else 1.0)
    out: dict = {}
    if has_q:
        out["quality"] = {m: {k: sums[f"quality.{m}.{k}"] / n for k in QUALITY_KEYS} for m in ("nmd", "rsnod")}
    if has_n:
        out["nugget"] = {m: sums[f"nugget.{m}"] / n for m in ("jsd", "rnss")}
    out["dialogues"] = {"scored": scored, "missing": missing, "extra": extra}
    return out
