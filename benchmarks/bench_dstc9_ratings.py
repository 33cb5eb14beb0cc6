"""DSTC9's ratings of whole dialogues: how well each model kind predicts the raters' distributions, out of fold.

The DSTC9 interactive track (2,200 dialogues of 11 chatbots) has each dialogue rated by 3 people on 11
dimensions (``consistent`` 0/1; ``human (overall)`` 1-5; the others 1-3). ``dialeval cv`` learns every
dimension as a dialogue-level scale (5 folds by dialogue: sha256 of the id mod 5; never a dialogue on both
sides) and scores the held-out predictions with ``dialeval evaluate``'s measures. Printed per kind:

1. JSD and NMD of each dimension (mean over dialogues, pooled over the folds' held-out predictions), and their
   mean over the 11 dimensions; lower is better. The prior (training mean) is the baseline to beat.
2. ``human (overall)``: Spearman, over the 2,200 dialogues, between the expected predicted rating and the raters'
   mean; and over the 11 chatbots, between their mean expected predicted rating and their mean human rating
   (95% bootstrap intervals). The prior predicts one rating for all: no correlation is defined.

Run (26 minutes on 2 cores with ``--neural-param ensemble=2``, most of it the neural kind: a member trains in
about 4 minutes, its random batches mixing short and 630-turn dialogues; embeddings are cached after the first
run):

    PYTHONPATH=src python benchmarks/bench_dstc9_ratings.py [--data ../shared/data] [--kinds prior linear neural]
        [--neural-param ensemble=2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import dialeval
from dialeval.cli.models import parse_params
from dialeval.models.cv import cross_validate
from dialeval.stats.correlation import correlate

HERE = Path(__file__).resolve().parent
OVERALL = "human (overall)"


def expected(dist: dict[str, float]) -> float:
    """The expected rating of a distribution over numeric levels."""
    p = np.array(list(dist.values()), dtype=np.float64)
    return float(np.array(list(map(float, dist)), dtype=np.float64) @ p / p.sum())


def correlations(corpus, records: list[dict], B: int) -> dict:
    """Dialogue- and system-level Spearman of the expected predicted overall rating with the raters' mean."""
    by_id = {r["id"]: r for r in records}
    auto, human, system = [], [], []
    for d in corpus.dialogues:
        labels = [float(v) for v in d.labels.get(OVERALL, []) if v is not None]
        if not labels:
            continue
        auto.append(expected(by_id[d.id][OVERALL]))
        human.append(float(np.mean(labels)))
        system.append(str(d.meta.get("system", d.id.split("-")[0])))
    out = {"dialogues": correlate(auto, human, "spearman", B=B, seed=0).to_dict()}
    bots = sorted(set(system))
    a = [float(np.mean([x for x, s in zip(auto, system, strict=True) if s == b])) for b in bots]
    h = [float(np.mean([x for x, s in zip(human, system, strict=True) if s == b])) for b in bots]
    out["systems"] = correlate(a, h, "spearman", B=B, seed=0).to_dict()
    out["systems"]["chatbots"] = len(bots)
    return out


def _versus(value: float, prior: float) -> str:
    """``3.9% above`` / ``1.0% below``: a figure against the prior's (lower is better)."""
    change = 100 * (value / prior - 1)
    return f"{abs(change):.1f}% {'above' if change > 0 else 'below'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--kinds", nargs="+", default=["prior", "linear", "neural"])
    ap.add_argument("--neural-param", action="append", default=[], metavar="KEY=VALUE",
                    help="A neural hyper-parameter (repeat), e.g. ensemble=2 for a quicker run.")
    ap.add_argument("-B", type=int, default=1000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    corpus = dialeval.read_corpus(args.data / "dstc9")
    print(f"DSTC9: {len(corpus)} dialogues, {len(corpus.scales)} dimensions; read in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    results = {}
    for kind in args.kinds:
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            r = cross_validate(corpus, kind, folds=5, out_dir=tmp, progress=True,
                               params=parse_params(args.neural_param) if kind == "neural" else None)
            records = json.loads(Path(r.runs[0]).read_text(encoding="utf-8"))
        seconds = time.perf_counter() - t
        cols = {c: r.pooled[c] for c in r.columns}
        res = {"seconds": round(seconds, 1), "params": r.params, "columns": cols,
               "mean_jsd": float(np.mean([v for c, v in cols.items() if c.endswith("/jsd")])),
               "mean_nmd": float(np.mean([v for c, v in cols.items() if c.endswith("/nmd")]))}
        if kind != "prior":
            res["overall"] = correlations(corpus, records, args.B)
        results[kind] = res
        print(f"{kind}: 5-fold CV in {seconds:.0f} s" + (f" ({r.params})" if r.params else ""), file=sys.stderr)
    names = list(corpus.scales)
    print("| dimension | " + " | ".join(f"{k} JSD | {k} NMD" for k in results) + " |")
    print("|---|" + "---:|" * (2 * len(results)))
    for n in names:
        cells = [f"{results[k]['columns'][f'{n}/{m}']:.4f}" for k in results for m in ("jsd", "nmd")]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("| **mean of 11** | " + " | ".join(f"**{results[k]['mean_jsd']:.4f}** | **{results[k]['mean_nmd']:.4f}**"
                                             for k in results) + " |")
    if "prior" in results:
        for k in results:
            if k != "prior":
                print(f"{k}: mean JSD {_versus(results[k]['mean_jsd'], results['prior']['mean_jsd'])}, mean NMD "
                      f"{_versus(results[k]['mean_nmd'], results['prior']['mean_nmd'])} the prior's")
    for k, res in results.items():
        if "overall" in res:
            d, s = res["overall"]["dialogues"], res["overall"]["systems"]
            print(f"{k}: {OVERALL} Spearman, dialogues {d['statistic']:.3f} [{d['ci']['low']:.3f}, "
                  f"{d['ci']['high']:.3f}] (n={d['n']}); chatbots {s['statistic']:.3f} [{s['ci']['low']:.3f}, "
                  f"{s['ci']['high']:.3f}] (n={s['n']})")
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"dialeval": dialeval.__version__, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
