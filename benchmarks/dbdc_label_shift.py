"""How far DBDC3 English eval's labels drift from dev's: priors fitted on dev against priors that know eval.

The DBDC3 target of issue 13 (the neural model's JSD over O, T, X 15% below the dev prior's) is measured on
eval, whose annotators label differently from dev's: the same chatbot's mean distribution moves (CIC: T from
0.46 to 0.33, X from 0.22 to 0.38). This script prints the JSD (per turn, then per dialogue, then over
dialogues, as ``dialeval evaluate``) of four constant predictions on eval:

- the dev prior (the baseline of the target), and a per-chatbot dev prior;
- *oracles* that no model trained on dev can be: eval's own mean, and eval's own per-chatbot means.

With ``--run RUN`` (a model's run on eval, ``dialeval predict ../shared/data/dbdc3/en/eval --out RUN``), it
prints the run's JSD and that of the run with each level's probability reweighted, ``p'(y) ∝ w(y) p(y)``:

- by the EM prior adjustment of Saerens, Latinne and Decaestecker (2002, "Adjusting the outputs of a classifier
  to new a priori probabilities"): ``w = pi / dev mean`` with ``pi`` the fixed point of ``pi = mean over eval's
  turns of p'``. It reads eval's turns, not its labels (a transductive adaptation, which the target's rules, no
  eval for training, would not allow anyway): what a label shift visible in the inputs would give. With a
  model's soft predictions the iteration can run to a degenerate fixed point (a level's share 0);
- ``w = dev's mean / the chatbot's dev mean``, per chatbot: each chatbot's dev habit taken out of the run,
  from dev's labels alone (what ``pools=balance``, :mod:`dialeval.models.pools`, does in training: DBDC3 dev's
  two annotator pools each labelled two of the chatbots);
- *oracles*: ``w = eval's own mean / the run's mean``, over all turns and per chatbot: the run corrected by
  the label shift it cannot know.

With ``--oof``, it also trains the shipped open-domain configuration on folds of dev, twice: 5 folds by
dialogue (:func:`dialeval.models.cv.fold_of`), and one chatbot left out per fold (a shift of chatbot, as
between dev and eval). It prints the out-of-fold JSD against that of the prior of the other folds on the same
turns, and the JSD after sharpening or flattening the predictions (``p ** (1 / T)``, renormalised): what a
calibration of the sharpness on the training folds would choose; and after emptying the bins below a share
(``min_share``, :func:`dialeval.models.base.sparsify`; the model's predictions here are taken without it).

    python benchmarks/dbdc_label_shift.py [--data ../shared/data/dbdc3/en] [--run RUN] [--oof]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

import dialeval
from bench_opendomain import shipped_params  # this folder: the script's own
from dialeval.distributions import gold_distributions
from dialeval.io.values import normalise
from dialeval.measures.nominal import jsd

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parents[1] / "shared" / "data" / "dbdc3" / "en"


ALIASES = {"TT": "TICKTOCK", "YIT": "YI"}
"""Eval's ids of two dev chatbots (``tt_001`` in ``eval/TKTK_50``, ``YIT0001`` in ``eval/YI_50``)."""


def chatbot(dialogue_id: str) -> str:
    """The chatbot of a DBDC3 dialogue id: its leading letters, eval's aliases read as dev's names (``CIC0201``
    -> ``CIC``, ``tt_001`` -> ``TICKTOCK``)."""
    head = ""
    for ch in dialogue_id:
        if not ch.isalpha():
            break
        head += ch
    return ALIASES.get(head.upper(), head.upper())


def macro_jsd(ids: list[str], gold: np.ndarray, pred: np.ndarray) -> float:
    """Mean over dialogues of the mean JSD of their turns (``dialeval evaluate``'s default averaging)."""
    per_turn = jsd(gold, pred)  # row-wise
    dialogues = list(dict.fromkeys(ids))
    idx = np.array([dialogues.index(i) for i in ids])
    return float(np.mean([per_turn[idx == k].mean() for k in range(len(dialogues))]))


SHIPPED = shipped_params()
"""The shipped open-domain model's parameters (its ``model.json``; the model card's training command)."""


def out_of_fold(data: Path, group: Callable[[str], str], what: str) -> None:
    """Out-of-fold predictions of the shipped configuration on dev, one fold per value of ``group(id)``; the
    JSD of each sharpness ``T`` against the prior of the other folds."""
    import warnings

    from dialeval.models import run_records
    from dialeval.models.base import kind_class, sparsify
    from dialeval.models.leakage import TrainingDataWarning

    corpus = dialeval.read_corpus(data / "dev")
    gold = gold_distributions(corpus)["breakdown"]
    pred: dict[tuple[str, int], list[float]] = {}
    folds = sorted({group(d.id) for d in corpus.dialogues})
    for f in folds:
        train = corpus.subset([d.id for d in corpus.dialogues if group(d.id) != f])
        test = corpus.subset([d.id for d in corpus.dialogues if group(d.id) == f])
        model = kind_class("neural")(seed=0, progress=False, **{**SHIPPED, "min_share": 0.0}).fit(train)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingDataWarning)
            for rec in run_records(test, model):
                for t in rec["turns"]:
                    pred[(rec["id"], t["turn"])] = [t["breakdown"][lv] for lv in gold.scale.levels]
    P = np.array([pred[k] for k in gold.item_keys()])
    fold = np.array([group(i) for i in gold.ids])
    prior_rows = {f: gold.probs[fold != f].mean(axis=0) for f in folds}
    prior = macro_jsd(gold.ids, gold.probs, np.array([prior_rows[f] for f in fold]))
    print(f"dev, {what} ({len(folds)} folds), out of fold: prior of the other folds JSD {prior:.5f}; "
          "neural with p ** (1 / T), T < 1 sharpens:")
    for T in (0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 2.0):
        R = P ** (1 / T)
        R /= R.sum(axis=1, keepdims=True)
        v = macro_jsd(gold.ids, gold.probs, R)
        print(f"  neural, T = {T:.1f}{' (as shipped)' if T == 1 else '':14s} JSD {v:.5f}  "
              f"({100 * (1 - v / prior):+.1f}% vs prior)")
    auto = kind_class("prior")(min_share="auto", progress=False).fit(corpus).shares["breakdown"]  # a model's own
    print(f"  and with the bins below min_share emptied (sparsify; 'auto' = 1/(2n) = {auto:.4f} here):")
    for share in (0.005, 0.01, auto, 0.02, 0.03, 0.05):
        v = macro_jsd(gold.ids, gold.probs, sparsify(P, share))
        print(f"  neural, min_share = {share:.4f}{' (auto)' if share == auto else '':7s} JSD {v:.5f}  "
              f"({100 * (1 - v / prior):+.1f}% vs prior)")


def reweighted(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row of ``P`` times ``w`` (one weight per level, or one row of weights per row), renormalised."""
    return normalise(P * w)


def em_prior(P: np.ndarray, prior: np.ndarray, iterations: int = 1000, tol: float = 1e-12) -> np.ndarray:
    """The level shares ``pi`` of unlabelled items whose predicted distributions ``P`` a model trained with
    level shares ``prior`` gave: the fixed point of ``pi = mean of reweighted(P, pi / prior)`` (Saerens et al.
    2002), from ``pi = prior``."""
    pi = prior
    for _ in range(iterations):
        new = reweighted(P, pi / prior).mean(axis=0)
        if np.abs(new - pi).max() < tol:
            return new
        pi = new
    return pi


def run_rows(run: Path, ev_corpus, ev) -> np.ndarray:
    """The run's distributions in the rows of eval's gold ``ev`` (an error if it leaves a turn out)."""
    from dialeval import load_gold

    aligned = load_gold(ev_corpus).read_run(run)
    rows = aligned.rows["breakdown"]
    if len(rows) != len(ev.probs):
        raise SystemExit(f"error: {run} predicts {len(rows)} of eval's {len(ev.probs)} annotated turns")
    P = np.empty_like(ev.probs)
    P[rows] = aligned.probs["breakdown"]
    return P


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--run", type=Path, help="a model's run on eval: also its JSD, reweighted (EM, oracles)")
    ap.add_argument("--oof", action="store_true", help="also: out-of-fold predictions on dev (trains 5 models)")
    args = ap.parse_args()
    dev = gold_distributions(dialeval.read_corpus(args.data / "dev"))["breakdown"]
    ev_corpus = dialeval.read_corpus(args.data / "eval")
    ev = gold_distributions(ev_corpus)["breakdown"]
    bots_dev = np.array([chatbot(i) for i in dev.ids])
    bots_ev = np.array([chatbot(i) for i in ev.ids])
    dev_mean = dev.probs.mean(axis=0)

    def per_bot(source: np.ndarray, bots: np.ndarray) -> np.ndarray:
        means = {b: source[bots == b].mean(axis=0) for b in set(bots)}
        return np.array([means.get(b, dev_mean) for b in bots_ev])

    rows = {
        "dev prior (the target's baseline)": np.tile(dev_mean, (len(ev.probs), 1)),
        "dev prior per chatbot (unseen chatbot: dev prior)": per_bot(dev.probs, bots_dev),
        "oracle: eval's own mean": np.tile(ev.probs.mean(axis=0), (len(ev.probs), 1)),
        "oracle: eval's own mean per chatbot": per_bot(ev.probs, bots_ev),
    }
    base = None
    print(f"chatbots: dev {sorted(set(bots_dev.tolist()))}, eval {sorted(set(bots_ev.tolist()))}; "
          f"levels {ev.scale.levels}")
    print(f"mean distribution: dev {dev_mean.round(3).tolist()}, eval {ev.probs.mean(axis=0).round(3).tolist()}")
    for name, pred in rows.items():
        v = macro_jsd(ev.ids, ev.probs, pred)
        base = base or v
        print(f"{name:52s} JSD {v:.5f}  ({100 * (1 - v / base):+.1f}% vs dev prior)")
    if args.run:
        P = run_rows(args.run, ev_corpus, ev)
        pi = em_prior(P, dev_mean)
        by_bot, dev_habit = np.empty_like(P), np.empty_like(P)
        for b in set(bots_ev.tolist()):
            here = bots_ev == b
            by_bot[here] = ev.probs[here].mean(axis=0) / P[here].mean(axis=0)
            dev_habit[here] = dev_mean / dev.probs[bots_dev == b].mean(axis=0) if b in bots_dev else 1.0
        print(f"the run {args.run}: mean distribution {P.mean(axis=0).round(3).tolist()}; EM's eval shares "
              f"{pi.round(3).tolist()}")
        for name, pred in {
            "run": P,
            "run, EM prior adjustment (eval's turns, no labels)": reweighted(P, pi / dev_mean),
            "run, each chatbot's dev habit taken out (dev only)": reweighted(P, dev_habit),
            "oracle: run reweighted to eval's own mean": reweighted(P, ev.probs.mean(axis=0) / P.mean(axis=0)),
            "oracle: run reweighted to eval's mean per chatbot": reweighted(P, by_bot),
        }.items():
            v = macro_jsd(ev.ids, ev.probs, pred)
            print(f"{name:52s} JSD {v:.5f}  ({100 * (1 - v / base):+.1f}% vs dev prior)")
    if args.oof:
        from dialeval.models.cv import fold_of

        out_of_fold(args.data, lambda i: str(fold_of(i, 5)), "by dialogue")
        out_of_fold(args.data, chatbot, "one chatbot left out per fold")


if __name__ == "__main__":
    main()
