"""Are STC-3's annotators one fixed panel? Each position's bias against the dialogues' means, per scale.

STC-3 lists 19 labels per dialogue. If the j-th label were a different person's on every dialogue, the j-th
labels would deviate from each dialogue's mean label by 0 on average, within about two standard errors. This
script prints, per scale (A, S, E, on the 2 .. -2 numbers), each position's mean deviation ``mean_d(label_j(d) -
mean_k label_k(d))`` with its standard error, and the largest |deviation| in standard errors. Deviations of
many standard errors mean that position j is one person throughout, with their own way of rating: what
``Scale.panel`` declares for STC-3 and what the ``neural`` kind's ``annotators="panel"`` learns from.

    python benchmarks/stc3_panel.py [--data ../shared/data/stc3/train_data_cn.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import dialeval

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parents[1] / "shared" / "data" / "stc3" / "train_data_cn.json"


def position_bias(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over dialogues of each position's deviation from the dialogue's mean label."""
    dev = values - values.mean(axis=1, keepdims=True)
    return dev.mean(axis=0), dev.std(axis=0, ddof=1) / np.sqrt(len(values))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    args = ap.parse_args()
    corpus = dialeval.read_corpus(args.data)
    for name in ("A", "S", "E"):
        scale = corpus.scales[name]
        rows = [d.labels[name] for d in corpus.dialogues if d.labels.get(name)]
        sizes = {len(r) for r in rows}
        if len(sizes) != 1 or any(v is None for r in rows for v in r):
            print(f"{name}: labels per dialogue {sorted(sizes)} (or some missing); positions cannot be compared")
            continue
        values = np.array([[float(v) for v in r] for r in rows])
        mean, se = position_bias(values)
        z = np.abs(mean) / se
        print(f"{name} ({scale.description}), {len(rows)} dialogues x {sizes.pop()} labels; "
              f"largest |bias| {np.abs(mean).max():.2f} levels = {z.max():.0f} standard errors "
              f"(position {int(np.argmax(z)) + 1}); positions beyond 3 SE: {int((z > 3).sum())}")
        print("  bias per position: " + " ".join(f"{m:+.2f}" for m in mean))
        print("  standard error:    " + " ".join(f"{s:.2f} " for s in se))


if __name__ == "__main__":
    main()
