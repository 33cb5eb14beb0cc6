"""Benchmark of the models (issue 5): training time, load time and prediction speed of the default model.

Each figure measured on this machine:

(a) training the default model from scratch with the documented command (the shipped model's card),
    ``dialeval train train_data_cn.json train_data_en.json --model neural --seed 0 --param min_share=auto
    --out DIR``, as a subprocess with a fresh, empty embedding cache, so embedding every turn is included
    (target: <= 15 minutes for one language; this default is trained on both files, 5,372 dialogues);
(b) loading the saved model in a fresh Python process: ``dialeval.models.load_model(PATH)`` and the
    sentence encoder's weights (``encoders.warm()``: they load lazily otherwise), timed inside the process,
    and the whole process for reference (target: <= 3 s);
(c) prediction with the model loaded: ``test_data_cn.json`` and ``test_data_en.json`` (390 dialogues each)
    with an empty embedding cache, dialogues per second, best of ``--repeat`` (target: >= 100 dialogues/s);
(d) size on disk: the model's folder, and every shipped model together with this one in place of the STC-3
    default ``shipped/multi`` (target: <= 25 MB together, decimal, as ``tests/models/test_shipped.py`` checks).

Run (training takes minutes; ``--model PATH`` skips (a) and measures a saved model instead):

    python benchmarks/bench_models.py                       # (a), (b), (c); the model is kept in --keep DIR
    python benchmarks/bench_models.py --model src/dialeval/models/shipped/multi
"""

from __future__ import annotations

import argparse
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


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "stc3")
    ap.add_argument("--model", type=Path, default=None, help="a saved model: skip training, measure this one")
    ap.add_argument("--keep", type=Path, default=None, help="where to keep the trained model (default: temporary)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))

    import dialeval
    from dialeval.models import encoders
    from dialeval.models.base import Estimator
    from dialeval.models.data import TurnTable
    from dialeval.threads import default_threads

    print(f"machine: {os.cpu_count()} CPUs, dialeval threads {default_threads()}; load average "
          f"{os.getloadavg()[0]:.2f} at start")
    if a.model is None:
        model_dir = a.keep or Path(tempfile.mkdtemp(prefix="dialeval-bench-model-")) / "model"
        train = [str(a.data / f"train_data_{FILES[lang]}.json") for lang in ("zh", "en")]
        cmd = ["dialeval", "train", *train, "--model", "neural", "--seed", "0", "--param", "min_share=auto",
               "--out", str(model_dir)]
        env = {**os.environ, "DIALEVAL_CACHE": tempfile.mkdtemp(prefix="dialeval-bench-cache-")}
        print("(a) " + " ".join(cmd) + "   [empty embedding cache]", flush=True)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env)
        t_train = time.perf_counter() - t0
        print(f"(a) trained from scratch, embedding included: {t_train:.1f} s = {t_train / 60:.2f} min "
              f"(target <= 15 min) {'OK' if t_train <= 900 else 'MISSED'}; load average now "
              f"{os.getloadavg()[0]:.2f}")
    else:
        model_dir = a.model

    code = ("import time; t=time.perf_counter(); import dialeval.models as m; "
            f"x=m.load_model({str(model_dir)!r}); from dialeval.models import encoders; encoders.warm(); "
            "print(time.perf_counter()-t)")
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
    for lang in ("zh", "en"):
        corpus = dialeval.read_corpus(a.data / f"test_data_{FILES[lang]}.json")
        times = []
        for _ in range(a.repeat):
            _fresh_cache()
            encoders._CACHES.clear()
            t0 = time.perf_counter()
            table = TurnTable.from_corpus(corpus)
            records = model.predict(table).to_records(table)
            times.append(time.perf_counter() - t0)
        best = min(times)
        print(f"(c) predict test_data_{FILES[lang]}.json: {len(records)} dialogues, {len(table.texts)} turns, "
              f"empty embedding cache: best {best:.2f} s = {len(records) / best:.0f} dialogues/s (target >= 100) "
              f"{'OK' if len(records) / best >= 100 else 'MISSED'}; load average {os.getloadavg()[0]:.2f}")

    shipped = ROOT / "src" / "dialeval" / "models" / "shipped"
    own, others = _bytes(model_dir), _bytes(shipped) - _bytes(shipped / "multi")
    print(f"(d) size: this model {own / 1e6:.2f} MB; with the other shipped models {(own + others) / 1e6:.2f} MB "
          f"(target <= 25 MB) {'OK' if own + others <= 25e6 else 'MISSED'}")


if __name__ == "__main__":
    main()
