"""Meta-evaluation of the open-domain turn models (issue 13): DBDC3 English eval, ConTurE and DSTC9.

Every model is trained on DBDC3 English **dev** only (415 dialogues) and never sees the eval set, ConTurE or
DSTC9 in training (hyper-parameters were chosen by leave-one-chatbot-out CV on dev, but for ``pools=balance``,
which an analysis of eval's labels led to: the open-domain model card).

1. DBDC3 English eval (200 dialogues, 2,000 annotated system turns): JSD and MSE over (O, T, X), NMD and
   RSNOD (mean per dialogue, then over dialogues: ``dialeval evaluate``'s default; and DBDC3's micro-average
   over turns), accuracy and F1 of X of the hard label (DBDC3's majority label, threshold 0). Models:
   ``prior`` (training mean), ``bow`` (the DBDC3 organisers' style of baseline: bag of words of the system
   turn and of the user turn before it, soft-label logistic regression), ``linear``, ``linear_balanced``
   (``linear`` trained with ``pools=balance``, as the neural model is: :mod:`dialeval.models.pools`),
   ``neural``.
2. ConTurE (119 dialogues, 1,066 chatbot turns): Pearson and Spearman between the turn score (expected value of
   the predicted distribution on 0 = X .. 2 = O, ConTurE's 0/1/2 scale) and the human 0/1/2 turn label; and
   between the dialogue mean and each DSTC9 dimension of those dialogues; 95% percentile bootstrap intervals
   over pairs. Baseline: the chatbot turn's length in words.
3. DSTC9 interactive track (2,200 dialogues of 11 chatbots): Spearman between the chatbots' mean predicted
   turn score and their mean human overall rating.

Run (about 5 minutes on 2 cores; embeddings are cached after the first run):

    PYTHONPATH=src python benchmarks/bench_opendomain.py [--data ../shared/data] [--json out.json]
        [--neural-model src/dialeval/models/shipped/opendomain-en] [-B 1000] [--skip-dstc9]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import dialeval
from dialeval.breakdown import LEVELS, dbdc3_scores
from dialeval.io.jsonarray import json_text
from dialeval.metaeval import correlate_with_humans, dimension_means
from dialeval.models import train
from dialeval.models.base import Estimator
from dialeval.models.transfer import predict_turn_scales, turn_scores
from dialeval.scoring import load_gold, score_aligned
from dialeval.stats.correlation import correlate

HERE = Path(__file__).resolve().parent


def shipped_params() -> dict:
    """The shipped open-domain model's training parameters, read from its ``model.json`` (chosen on DBDC3 dev,
    its model card)."""
    from dialeval.models import shipped_folder

    return json.loads((shipped_folder("open") / "model.json").read_text(encoding="utf-8"))["params"]


PARAMS = {"linear": {"C": 0.1}, "linear_balanced": {"C": 0.1, "pools": "balance"}, "neural": shipped_params()}
"""Chosen on DBDC3 dev (leave-one-chatbot-out CV: CIC, IRIS, TickTock, YI); the neural kind's: the shipped model's."""

KIND = {"linear_balanced": "linear"}
"""The model kind of each row whose name is not a kind's."""


class BagOfWords:
    """The DBDC3 organisers' style of baseline: binary bag of words of the system turn and the user turn before
    it (two blocks), multinomial logistic regression fitted to the annotators' O/T/X distributions."""

    kind = "bow"

    def __init__(self, C: float = 1.0) -> None:
        self.C = C

    @staticmethod
    def _pairs(corpus) -> tuple[list[str], list[str], list[tuple[str, int]]]:
        sys_t, prev, keys = [], [], []
        for d in corpus.dialogues:
            for i, t in enumerate(d.turns):
                if t.sender == "system":
                    sys_t.append(t.text)
                    prev.append(d.turns[i - 1].text if i and d.turns[i - 1].sender != "system" else "")
                    keys.append((d.id, i))
        return sys_t, prev, keys

    def fit(self, corpus) -> BagOfWords:
        from scipy.sparse import hstack
        from sklearn.feature_extraction.text import CountVectorizer

        from dialeval.distributions import gold_distributions
        from dialeval.models.linear import _SoftLR

        g = gold_distributions(corpus, ["breakdown"])["breakdown"]
        row = {k: r for r, k in enumerate(g.item_keys())}
        s, p, keys = self._pairs(corpus)
        keep = [i for i, k in enumerate(keys) if k in row]
        self.vs = CountVectorizer(binary=True, min_df=2).fit([s[i] for i in keep])
        self.vp = CountVectorizer(binary=True, min_df=2).fit([p[i] for i in keep])
        X = hstack([self.vs.transform([s[i] for i in keep]), self.vp.transform([p[i] for i in keep])]).tocsr()
        Y = g.probs[[row[keys[i]] for i in keep]]
        self.lr = _SoftLR.fit(X, Y, self.C, 200, 0)
        return self

    def predict_records(self, corpus) -> list[dict]:
        from scipy.sparse import hstack

        s, p, keys = self._pairs(corpus)
        P = self.lr.predict(hstack([self.vs.transform(s), self.vp.transform(p)]).tocsr())
        by: dict[str, list] = {}
        for (did, t), q in zip(keys, P, strict=True):
            by.setdefault(did, []).append({"turn": t, "breakdown": dict(zip(LEVELS, q.tolist(), strict=True))})
        return [{"id": d.id, "turns": by.get(d.id, [])} for d in corpus.dialogues]


def predict_records(model, corpus) -> list[dict]:
    if isinstance(model, BagOfWords):
        return model.predict_records(corpus)
    return predict_turn_scales(corpus, model, progress=False)


def dbdc_eval(records: list[dict], gold) -> dict:
    run = gold.read_run(records)
    out = {}
    for avg in ("dialogue", "turn"):
        s = score_aligned(run, gold, average=avg).summary()["scales"]["breakdown"]
        out[avg] = {k: round(v, 5) for k, v in s.items()}
    g = gold.items["breakdown"]
    d3 = dbdc3_scores(g.probs[run.rows["breakdown"]], run.probs["breakdown"])
    out["accuracy"] = round(d3["accuracy"], 4)
    out["f1_X"] = round(d3["X"]["f_measure"], 4)
    return out


def turn_length_scores(corpus) -> list[dict]:
    return [{"id": d.id, "turns": [{"turn": i, "score": float(len(t.text.split()))}
                                   for i, t in enumerate(d.turns) if t.sender == "system"]} for d in corpus.dialogues]


def conture_eval(scores: list[dict], corpus, B: int) -> dict:
    """Turn-level correlation with the 0/1/2 label, and dialogue-level with each DSTC9 dimension."""
    label = {}
    for d in corpus.dialogues:
        for i, t in enumerate(d.turns):
            v = [x for x in t.labels.get("overall impression", []) if x is not None]
            if v:
                label[(d.id, i)] = float(v[0])
    x, y = [], []
    per: dict[str, list[float]] = {}
    for r in scores:
        for t in r["turns"]:
            if (r["id"], t["turn"]) in label:
                x.append(t["score"])
                y.append(label[(r["id"], t["turn"])])
            per.setdefault(r["id"], []).append(t["score"])
    out = {"turns": len(x)}
    for m in ("pearson", "spearman"):
        c = correlate(x, y, m, B=B, seed=0)
        out[f"turn_{m}"] = [round(c.statistic, 4), round(c.ci.low, 4), round(c.ci.high, 4)]
    auto = {i: float(np.mean(v)) for i, v in per.items() if v}
    table = correlate_with_humans(auto, dimension_means(corpus), levels=("dialogue",), B=B, progress=False)
    out["dialogue"] = {f"{row.dimension} {row.method}": [round(row.statistic, 4), round(row.ci_low, 4),
                                                         round(row.ci_high, 4)] for row in table.rows}
    return out


def dstc9_eval(scores: list[dict], corpus) -> dict:
    systems = {d.id: d.meta.get("system") for d in corpus.dialogues}
    auto = {r["id"]: float(np.mean([t["score"] for t in r["turns"]])) for r in scores if r["turns"]}
    human = dimension_means(corpus, ["human (overall)"])
    table = correlate_with_humans(auto, human, systems=systems, levels=("system",), methods=("spearman",), B=200,
                                  progress=False)
    row = table.rows[0]
    return {"systems": row.n, "spearman": round(row.statistic, 4), "ci": [round(row.ci_low, 4), round(row.ci_high, 4)]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--neural-model", type=Path, help="Use this saved neural model instead of training one.")
    ap.add_argument("-B", type=int, default=1000)
    ap.add_argument("--skip-dstc9", action="store_true")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        for parent in HERE.parents:
            if (parent.parent / "shared" / "data").is_dir():
                args.data = parent.parent / "shared" / "data"
                break
    dev = dialeval.read_corpus(args.data / "dbdc3" / "en" / "dev")
    ev = dialeval.read_corpus(args.data / "dbdc3" / "en" / "eval")
    conture = dialeval.read_corpus(args.data / "conture" / "data.json")
    gold = load_gold(ev)
    models: dict[str, object] = {}
    seconds = {}
    for name in ("prior", "bow", "linear", "linear_balanced", "neural"):
        t0 = time.perf_counter()
        if name == "bow":
            models[name] = BagOfWords().fit(dev)
        elif name == "neural" and args.neural_model is not None:
            models[name] = Estimator.load(args.neural_model)
        else:
            models[name] = train(dev, kind=KIND.get(name, name), params=PARAMS.get(name), progress=False)
        seconds[name] = round(time.perf_counter() - t0, 1)
        print(f"trained {name} in {seconds[name]} s", file=sys.stderr, flush=True)
    result: dict = {"train_seconds": seconds, "dbdc3_eval": {}, "conture": {}, "dstc9": {}}
    for name, m in models.items():
        result["dbdc3_eval"][name] = dbdc_eval(predict_records(m, ev), gold)
        print(name, "DBDC3 eval", json.dumps(result["dbdc3_eval"][name]), flush=True)
    for name, m in models.items():
        if name in ("bow", "prior"):
            continue  # bow: DBDC's breakdown only; prior: a constant score, every correlation undefined
        scores = turn_scores(predict_records(m, conture))
        result["conture"][name] = conture_eval(scores, conture, args.B)
    result["conture"]["length"] = conture_eval(turn_length_scores(conture), conture, args.B)
    for name, r in result["conture"].items():
        print(name, "ConTurE turn", r["turn_pearson"], r["turn_spearman"], "dialogue human (overall)",
              r["dialogue"].get("human (overall) pearson"), r["dialogue"].get("human (overall) spearman"), flush=True)
    if not args.skip_dstc9:
        dstc9 = dialeval.read_corpus(args.data / "dstc9")
        for name in ("linear", "linear_balanced", "neural"):
            result["dstc9"][name] = dstc9_eval(turn_scores(predict_records(models[name], dstc9)), dstc9)
            print(name, "DSTC9 system level", result["dstc9"][name], flush=True)
        result["dstc9"]["length"] = dstc9_eval(turn_length_scores(dstc9), dstc9)
        print("length DSTC9 system level", result["dstc9"]["length"], flush=True)
    prior, neural = result["dbdc3_eval"]["prior"]["dialogue"], result["dbdc3_eval"]["neural"]["dialogue"]
    lins = [result["dbdc3_eval"][n]["dialogue"] for n in ("linear", "linear_balanced")]
    result["targets"] = {"neural_beats_prior_and_linear": all(neural[k] < prior[k] and all(neural[k] < lin[k]
                                                                                           for lin in lins)
                                                              for k in neural),
                         "jsd_reduction_vs_prior": round(1 - neural["jsd"] / prior["jsd"], 4)}
    print("targets", result["targets"])
    if args.json:
        args.json.write_text(json_text(result, indent=1) + "\n")  # undefined (NaN) correlations as null
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
