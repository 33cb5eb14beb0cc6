"""Score the average of several cross-validations' held-out predictions, fold by fold, as ``dialeval cv`` does.

Two runs of ``dialeval cv --runs-out DIR`` with the same model kind and ``--seed 0`` and ``--seed 8``
(``--param ensemble=8``: members with seeds 0-7 and 8-15) give, averaged, the held-out predictions of one
16-member ensemble: a neural model's prediction is the mean of its members' distributions. This script
averages the fold files of the folders given and scores each fold against its gold with the scorer
``dialeval cv`` uses (:func:`dialeval.models.cv.column_means`), then the mean over folds and the 95%
t-interval, per data file.

    python benchmarks/cv_average.py ../shared/data/stc3/train_data_cn.json ../shared/data/stc3/train_data_en.json \
        --runs /tmp/cv-seed0 --runs /tmp/cv-seed8

``--only FILE`` scores only the dialogues whose ids FILE holds, ``--except FILE`` the others: with one folder,
how the Chinese file's held-out predictions score on the dialogues that the English file translates (the same
dialogues and labels in the other language):

    python benchmarks/cv_average.py ../shared/data/stc3/train_data_cn.json --runs /tmp/cv-seed0 \
        --only ../shared/data/stc3/train_data_en.json

Each ``--runs`` folder is the ``--runs-out`` of one ``dialeval cv`` on the same data files (one sub-folder per
file, named after it, when several were cross-validated together). Probabilities in run files are rounded to
6 digits, so the average differs from the larger ensemble's own prediction by at most about 1e-6 per bin.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import dialeval
from dialeval.models.cv import column_means, t_interval
from dialeval.scoring import load_gold


def average(values: list):
    """The element-wise mean of records of one shape (dicts and lists of numbers; other values: the first's)."""
    first = values[0]
    if isinstance(first, dict):
        return {k: average([v[k] for v in values]) for k in first}
    if isinstance(first, list):
        return [average([v[i] for v in values]) for i in range(len(first))]
    if isinstance(first, int | float) and not isinstance(first, bool):
        return float(np.mean(values))
    return first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="+", type=Path, help="the data files cross-validated (in the cv's order)")
    ap.add_argument("--runs", action="append", type=Path, required=True, help="a --runs-out folder (repeat)")
    ap.add_argument("--kind", default="neural")
    pick = ap.add_mutually_exclusive_group()
    pick.add_argument("--only", type=Path, help="score only the dialogues whose ids this data file holds")
    pick.add_argument("--except", dest="but", type=Path, help="score only the dialogues this data file lacks")
    ap.add_argument("--folders", type=int, default=None,
                    help="how many data files the cv was run on (default: as many as given here)")
    args = ap.parse_args()
    ids_of = args.only or args.but
    chosen = set(dialeval.read_corpus(ids_of).ids()) if ids_of else None
    several = (args.folders or len(args.data)) > 1
    for data in args.data:
        corpus = dialeval.read_corpus(data)
        gold = load_gold(corpus)
        folders = [r / data.stem if several else r for r in args.runs]
        files = sorted((folders[0] / f"cv-{args.kind}-folds").glob("fold-*.json"),
                       key=lambda p: int(p.stem.split("-")[1]))
        if not files:
            raise SystemExit(f"error: no fold files in {folders[0] / f'cv-{args.kind}-folds'}")
        scores = []
        for path in files:
            runs = [json.loads((f / f"cv-{args.kind}-folds" / path.name).read_text(encoding="utf-8"))
                    for f in folders]
            if len({tuple(r["id"] for r in run) for run in runs}) != 1:
                raise SystemExit(f"error: {path.name} holds other dialogues in the folders given")
            records = [average(list(recs)) for recs in zip(*runs, strict=True)]
            if chosen is not None:
                records = [r for r in records if (r["id"] in chosen) == (args.only is not None)]
            scores.append(column_means(records, gold.subset([r["id"] for r in records])))
        which = f", dialogues {'in' if args.only else 'not in'} {ids_of.name}" if ids_of else ""
        print(f"{data.name}: {len(files)} folds, the average of {len(folders)} cross-validation(s){which}")
        for col in scores[0]:
            vals = [s[col] for s in scores]
            lo, hi = t_interval(vals)
            print(f"  {col:18s} {np.mean(vals):.4f}  [{lo:.4f}, {hi:.4f}]")


if __name__ == "__main__":
    main()
