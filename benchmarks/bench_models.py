"""Benchmark of the models (issue 5): training time, load time and prediction speed of the default model.

For one language (``--lang zh|en``), each figure measured on this machine:

(a) training the default model (``neural``, both subtasks, the shipped parameters) on all of
    ``train_data_<lang>.json`` from scratch: a fresh, empty embedding cache, so embedding every turn is
    included (target: <= 15 minutes);
(b) loading a saved model in a fresh Python process: ``dialeval.models.load_model(PATH)`` including the
    sentence encoder's weights, timed inside the process, and the whole process for reference (target: <= 3 s);
(c) prediction with the model loaded: ``test_data_<lang>.json`` (390 dialogues) with an empty embedding
    cache, dialogues per second, best of ``--repeat`` (target: >= 100 dialogues/s).

Run (training takes minutes; ``--model PATH`` skips (a) and measures a saved model instead):

    python benchmarks/bench_models.py --lang en
    python benchmarks/bench_models.py --lang zh --model src/dialeval/models/shipped/zh
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"zh": "cn", "en": "en"}


def _fresh_cache() -> str:
    d = tempfile.mkdtemp(prefix="dialeval-bench-cache-")
    os.environ["DIALEVAL_CACHE"] = d
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", choices=sorted(FILES), default="en")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "stc3")
    ap.add_argument("--model", type=Path, default=None, help="a saved model: skip training, measure this one")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))

    import dialeval
    from dialeval.models import encoders
    from dialeval.models.base import Estimator
    from dialeval.models.data import TurnTable
    from dialeval.models.neural import Neural

    lang = a.lang
    train = a.data / f"train_data_{FILES[lang]}.json"
    test = a.data / f"test_data_{FILES[lang]}.json"
    print(f"machine: {os.cpu_count()} CPUs, encoder threads {encoders.threads()}; load average "
          f"{os.getloadavg()[0]:.2f} at start")

    out = Path(tempfile.mkdtemp(prefix="dialeval-bench-model-"))
    if a.model is None:
        _fresh_cache()
        params = json.loads((ROOT / "src/dialeval/models/shipped/params.json").read_text())["neural"] \
            if (ROOT / "src/dialeval/models/shipped/params.json").is_file() else {}
        t0 = time.perf_counter()
        corpus = dialeval.read_corpus(train)
        model = Neural(seed=0, progress=True, **params).fit(corpus)
        model.save(out / "model")
        t_train = time.perf_counter() - t0
        print(f"(a) training neural on {train.name} ({len(corpus)} dialogues, {sum(len(d.turns) for d in corpus)} "
              f"turns), embedding included, cold cache: {t_train:.1f} s = {t_train / 60:.2f} min "
              f"(target <= 15 min) {'OK' if t_train <= 900 else 'MISSED'}")
        model_dir = out / "model"
    else:
        model_dir = a.model

    code = ("import time; t=time.perf_counter(); import dialeval.models as m; "
            f"x=m.load_model({str(model_dir)!r}); print(time.perf_counter()-t)")
    loads, procs = [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        procs.append(time.perf_counter() - t0)
        loads.append(float(r.stdout.strip().splitlines()[-1]))
    print(f"(b) load_model in a fresh process (imports + weights + encoder): best {min(loads):.2f} s, "
          f"median {sorted(loads)[len(loads) // 2]:.2f} s (target <= 3 s) {'OK' if min(loads) <= 3 else 'MISSED'}; "
          f"whole process {min(procs):.2f} s")

    model = Estimator.load(model_dir)
    encoders.warm()
    corpus = dialeval.read_corpus(test)
    times = []
    for _ in range(a.repeat):
        _fresh_cache()
        encoders._CACHES.clear()
        t0 = time.perf_counter()
        table = TurnTable.from_corpus(corpus)
        records = model.predict(table).to_records(table)
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"(c) predict {test.name}: {len(records)} dialogues, {len(table.texts)} turns, cold embedding cache: "
          f"best {best:.2f} s = {len(records) / best:.0f} dialogues/s (target >= 100) "
          f"{'OK' if len(records) / best >= 100 else 'MISSED'}")


if __name__ == "__main__":
    main()
