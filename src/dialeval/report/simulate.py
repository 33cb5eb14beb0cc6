"""Runs made from the gold itself, blurred by noise: for demos, tests, and seeing what a comparison can detect.

A run of noise ``w`` predicts, for every distribution of the gold (A, S, E per dialogue; nugget types per
turn), ``(1 - w) * gold + w * d`` with ``d`` drawn from a flat Dirichlet. More noise, worse scores, so a
set of runs of increasing noise has a known order and known near-ties.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError, describe
from dialeval.io.jsonarray import Source
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS
from dialeval.scoring import PreparedGold, load_gold
from dialeval.stats._common import Seed, as_generator


def _blur(p: np.ndarray, w: float, rng: np.random.Generator) -> np.ndarray:
    noise = rng.dirichlet(np.ones(p.shape[1]), size=p.shape[0])
    return np.round((1.0 - w) * p + w * noise, 6)


def noisy_run(gold: Source | Corpus | PreparedGold, noise: float, seed: Seed = 0) -> list[dict]:
    """One run (a list of submission records, every gold dialogue) with gold distributions blurred by ``noise``.

    Parameters
    ----------
    gold : path, records, Corpus or PreparedGold
    noise : float in [0, 1]
        0 reproduces the gold (every score 0); 1 is pure Dirichlet noise.
    seed : int or numpy.random.Generator

    Examples
    --------
    >>> from dialeval.cli.demo import demo_dir
    >>> from dialeval import evaluate
    >>> gold = str(demo_dir() / "gold.json")
    >>> round(evaluate(noisy_run(gold, 0.0), gold)["quality"]["nmd"]["A"], 6)  # probabilities have 6 decimals
    0.0
    """
    if isinstance(noise, bool) or not isinstance(noise, int | float) or not 0.0 <= noise <= 1.0:
        raise DialevalError(f"noise {describe(noise)} is not allowed; allowed are numbers in [0, 1]")
    g = load_gold(gold).data
    rng = as_generator(seed)
    quality = {k: _blur(g.quality[k], noise, rng) for k in QUALITY_KEYS} if g.quality is not None else None
    cust = _blur(g.cust, noise, rng) if g.cust is not None else None
    help_ = _blur(g.help, noise, rng) if g.help is not None else None
    turn_rows = {"customer": iter(range(len(g.cust_dlg))) if cust is not None else None,
                 "helpdesk": iter(range(len(g.help_dlg))) if help_ is not None else None}
    records = []
    for i, did in enumerate(g.ids):
        rec: dict = {"id": did}
        if quality is not None:
            rec["quality"] = {k: dict(zip(QUALITY_LEVELS, quality[k][i].tolist(), strict=True)) for k in QUALITY_KEYS}
        if cust is not None and help_ is not None:
            rec["nugget"] = []
            for sender in g.senders[i]:
                arr = cust if sender == "customer" else help_
                row = next(turn_rows[sender])  # type: ignore[arg-type]
                rec["nugget"].append(dict(zip(NUGGET_TYPES[sender], arr[row].tolist(), strict=True)))
        records.append(rec)
    return records


def noisy_runs(gold: Source | Corpus | PreparedGold, noises: Mapping[str, float], seed: Seed = 0) -> dict[str, list]:
    """Several runs of :func:`noisy_run`, one per ``name: noise``, from one seeded generator."""
    rng = as_generator(seed)
    g = load_gold(gold)
    return {name: noisy_run(g, w, rng) for name, w in noises.items()}
