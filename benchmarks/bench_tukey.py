"""Benchmark: randomised Tukey HSD, B = 10,000 on 40 runs x 390 dialogues (issue 3).

Targets: <= 1 s on this 2-core machine, and >= 50x faster per iteration than a reference loop that, in
each iteration, permutes every row with numpy and recomputes the run means (measured here, same run).
Also prints numba's compile cost (fresh cache) and the first call of a new process (cache warm).

    python benchmarks/bench_tukey.py                 # the issue's settings
    python benchmarks/bench_tukey.py --B 20000 --m 80 --ref-iterations 100

Numbers on a shared machine are noisy: the script prints both sides, the ratio and its settings.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numba
import numpy as np

SRC = str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)

from dialeval.stats import randomized_tukey_hsd  # noqa: E402
from dialeval.stats.randomization import default_threads  # noqa: E402


def reference_loop(X: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """The slow way: each iteration permutes every row with numpy, then takes max - min of the run means."""
    rng = np.random.default_rng(seed)
    hsd = np.empty(iterations)
    P = np.empty_like(X)
    for b in range(iterations):
        for i in range(X.shape[0]):
            P[i] = rng.permutation(X[i])
        means = P.mean(axis=0)
        hsd[b] = means.max() - means.min()
    return hsd


def numpy_vectorised(X: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """Plain numpy, one call per iteration: ``Generator.permuted(X, axis=1)`` (context only)."""
    rng = np.random.default_rng(seed)
    hsd = np.empty(iterations)
    for b in range(iterations):
        means = rng.permuted(X, axis=1).mean(axis=0)
        hsd[b] = means.max() - means.min()
    return hsd


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def fresh_process_call(cache_dir: str, n: int, m: int, B: int) -> float:
    """Seconds for import + first call in a new process whose numba cache lives in ``cache_dir``."""
    code = textwrap.dedent(f"""
        import time; t0 = time.perf_counter()
        import numpy as np
        from dialeval.stats import randomized_tukey_hsd
        randomized_tukey_hsd(np.random.default_rng(0).random(({n}, {m})), B={B}, seed=0, progress=False)
        print(time.perf_counter() - t0)
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": SRC}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=390, help="dialogues (rows)")
    ap.add_argument("--m", type=int, default=40, help="runs (columns)")
    ap.add_argument("--B", type=int, default=10_000, help="iterations of the compiled test")
    ap.add_argument("--ref-iterations", type=int, default=300, help="iterations of the reference loop")
    ap.add_argument("--repeat", type=int, default=10, help="timed repeats of the compiled test (best is reported)")
    ap.add_argument("--skip-compile", action="store_true", help="skip the fresh-process compile measurements")
    a = ap.parse_args()

    rng = np.random.default_rng(2024)
    # per-dialogue scores in [0, 1] with dialogue and run effects, like NMD of 40 runs on 390 dialogues
    X = np.clip(rng.beta(2, 8, (a.n, 1)) + rng.normal(0, 0.05, (a.n, a.m)) + np.linspace(0, 0.05, a.m), 0, 1)

    print(f"settings: n={a.n} dialogues, m={a.m} runs, B={a.B}; reference loop {a.ref_iterations} iterations; "
          f"best of {a.repeat} (reference: best of 3); {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}")

    if not a.skip_compile:
        with tempfile.TemporaryDirectory() as cache:
            cold = fresh_process_call(cache, a.n, a.m, 100)
            warm = fresh_process_call(cache, a.n, a.m, 100)
        print(f"new process, import + first call (B=100): {cold:.2f} s with an empty numba cache (compiles), "
              f"{warm:.2f} s with the cache written")

    randomized_tukey_hsd(X, B=100, seed=0, progress=False)  # compile/load in this process
    threads = default_threads()
    print(f"numba {numba.__version__}; serial nogil kernel on {threads} threads (dialeval's default)")
    t_par = best_of(lambda: randomized_tukey_hsd(X, B=a.B, seed=0, progress=False), a.repeat)
    t_one = best_of(lambda: randomized_tukey_hsd(X, B=a.B, seed=0, progress=False, threads=1), a.repeat)
    t_ref = best_of(lambda: reference_loop(X, a.ref_iterations, 0), 3)
    t_np = best_of(lambda: numpy_vectorised(X, a.ref_iterations, 0), 3)

    per_par, per_one = t_par / a.B, t_one / a.B
    per_ref, per_np = t_ref / a.ref_iterations, t_np / a.ref_iterations
    print(f"randomized_tukey_hsd, {threads} threads: {t_par:.3f} s for B={a.B} ({per_par * 1e6:.1f} us/iteration)")
    print(f"randomized_tukey_hsd, 1 thread:  {t_one:.3f} s for B={a.B} ({per_one * 1e6:.1f} us/iteration)")
    print(f"reference loop (numpy permutation of every row): {per_ref * 1e6:.0f} us/iteration "
          f"(B={a.B} would take {per_ref * a.B:.1f} s)")
    print(f"numpy permuted(axis=1) per iteration (context): {per_np * 1e6:.0f} us/iteration "
          f"({per_ref / per_np:.1f}x the reference)")
    ratio = per_ref / per_par
    print(f"ratio per iteration, reference / compiled: {ratio:.0f}x ({threads} threads), "
          f"{per_ref / per_one:.0f}x (1 thread)")
    ok_time, ok_ratio = t_par <= 1.0, ratio >= 50
    print(f"targets: <= 1 s: {'met' if ok_time else 'MISSED'} ({t_par:.3f} s); >= 50x per iteration: "
          f"{'met' if ok_ratio else 'MISSED'} ({ratio:.0f}x)")


if __name__ == "__main__":
    main()
