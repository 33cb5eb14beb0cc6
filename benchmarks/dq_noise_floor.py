"""How close to the gold a perfect model could come: the annotators' own sampling noise on STC-3.

A gold distribution is the labels of n annotators (19 in STC-3), a sample of what all annotators would say.
A model that knew the true distribution would still be scored against that sample. This script estimates
the score of such a model by the plug-in bootstrap. Each gold distribution ``p`` (from ``n`` labels) stands
in for the truth; ``--panels`` new panels of ``n`` labels are drawn from it; and the prediction ``p`` is
scored against each panel's distribution with the registry's measures. Per item the mean over panels is
taken; then per dialogue; then over dialogues (DQ's averaging; for ND this is per scale, without the
sender weighting). The floor sits under the model's 5-fold CV figures: what is between them is what a
better model could still gain.

    python benchmarks/dq_noise_floor.py [--data ../shared/data/stc3/train_data_cn.json] [--panels 200]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import dialeval
from dialeval.distributions import gold_distributions
from dialeval.measures import get as measure
from dialeval.tasks import TASKS

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parents[1] / "shared" / "data" / "stc3" / "train_data_cn.json"


def floor(counts: np.ndarray, ids: list[str], name: str, panels: int, seed: int) -> float:
    """Mean over dialogues (of the mean over their items) of the expected score of the truth vs a panel."""
    rng = np.random.default_rng(seed)
    n = counts.sum(axis=1, keepdims=True)
    p = counts / n
    m = measure(name)
    acc = np.zeros(len(p))
    for _ in range(panels):
        drawn = np.array([rng.multinomial(k, row) for k, row in zip(n[:, 0].tolist(), p, strict=True)]) / n
        acc += m.compute(p, drawn)
    per_item = acc / panels
    dialogues = list(dict.fromkeys(ids))
    row = {d: i for i, d in enumerate(dialogues)}
    idx = np.array([row[i] for i in ids])
    return float(np.mean(np.bincount(idx, per_item) / np.bincount(idx)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--panels", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gold = gold_distributions(dialeval.read_corpus(args.data))
    print(f"{args.data.name}: {args.panels} panels per item, seed {args.seed}; annotators per item: "
          f"{sorted(set(int(c) for d in gold.values() for c in d.counts.sum(axis=1)))}")
    for task in ("stc3-dq", "stc3-nd"):
        t = TASKS[task]
        for name in t.measures:
            cells = []
            for scale in t.scales:
                d = gold[scale]
                cells.append(f"{scale} {floor(d.counts, d.ids, name, args.panels, args.seed):.4f}")
            print(f"{task:8s} {name.upper():6s} " + "   ".join(cells))


if __name__ == "__main__":
    main()
