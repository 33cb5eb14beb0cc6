"""Write a gold file and runs of known quality for trying ``dialeval compare`` on real annotations.

The gold is the first N dialogues of an STC-3 dataset; each run is that gold blurred by noise
(:func:`dialeval.report.simulate.noisy_run`): run ``teamNN`` has noise ``low + NN * step``, so the true
order of the runs is known and neighbours are near-ties. Nothing is copied into the project: write to a
folder outside it.

    python scripts/make_noisy_runs.py ../shared/data/stc3/train_data_cn.json /tmp/demo --dialogues 390 --runs 40
    dialeval compare /tmp/demo/runs --gold /tmp/demo/gold.json --out /tmp/demo/report -f md -f json --plot
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialeval.io.jsonarray import load_records
from dialeval.report.simulate import noisy_runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path, help="an annotated STC-3 dataset (JSON)")
    ap.add_argument("out", type=Path, help="folder to write gold.json and runs/*.json to")
    ap.add_argument("--dialogues", type=int, default=390, help="first N dialogues become the gold")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--low", type=float, default=0.2, help="noise of the best run")
    ap.add_argument("--step", type=float, default=0.01, help="noise added per run")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "runs").mkdir(exist_ok=True)
    gold = a.out / "gold.json"
    gold.write_text(json.dumps(load_records(str(a.dataset))[: a.dialogues], ensure_ascii=False), encoding="utf-8")
    noises = {f"team{i:02d}": min(1.0, a.low + i * a.step) for i in range(a.runs)}
    for name, records in noisy_runs(str(gold), noises, seed=a.seed).items():
        (a.out / "runs" / f"{name}.json").write_text(json.dumps(records), encoding="utf-8")
    print(f"wrote {gold} ({a.dialogues} dialogues) and {a.runs} runs in {a.out / 'runs'}")


if __name__ == "__main__":
    main()
