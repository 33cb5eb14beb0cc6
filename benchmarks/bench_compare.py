"""Benchmark: the whole `dialeval compare ... -f md -f json --plot -B 10000` on 40 runs x 390 dialogues (issue 16).

Target: <= 4 s wall time on this 2-core machine (before issue 16: about 20 s, 14 of them drawing the plot).
Makes 40 noisy runs of the first 390 dialogues of the STC-3 Chinese training set with
``scripts/make_noisy_runs.py`` (in a temporary folder), then times the real command in a subprocess (best of
``--repeat``) and, in this process, each phase: scoring, comparison (Tukey HSD, bootstrap, Kendall's tau),
reports, plot. Prints the load average before and after: on a shared machine, absolute times are inflated.

    python benchmarks/bench_compare.py
    python benchmarks/bench_compare.py --repeat 1 --B 2000
    python benchmarks/bench_compare.py --baseline-src ../main/src   # also time another checkout, same run
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = str(ROOT / "src")
DATA = ROOT.parent / "shared" / "data" / "stc3" / "train_data_cn.json"


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--dialogues", type=int, default=390)
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, help="also time the command with this src folder (e.g. the "
                    "main branch), alternating with this checkout")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=SRC, DIALEVAL_PROGRESS="0")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_noisy_runs.py"), str(a.data), str(t),
                        "--dialogues", str(a.dialogues), "--runs", str(a.runs)], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        cmd = [sys.executable, "-m", "dialeval", "compare", str(t / "runs"), "--gold", str(t / "gold.json"),
               "--out", str(t / "report"), "-f", "md", "-f", "json", "--plot", "-B", str(a.B)]
        subprocess.run([*cmd[:-2], "-B", "100"], check=True, env=env, capture_output=True)  # warm numba's cache
        print(f"before: {load()}; {os.cpu_count()} cores")
        sides = {"this checkout": env}
        if a.baseline_src is not None:
            sides[f"baseline {a.baseline_src}"] = dict(env, PYTHONPATH=str(a.baseline_src.resolve()))
            subprocess.run([*cmd[:-2], "-B", "100"], check=True, env=sides[f"baseline {a.baseline_src}"],
                           capture_output=True)
        walls: dict[str, list[float]] = {k: [] for k in sides}
        cpus: dict[str, list[float]] = {k: [] for k in sides}
        for _ in range(a.repeat):
            for side, side_env in sides.items():  # alternate, so that both sides see the same load
                c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, env=side_env, capture_output=True)
                walls[side].append(time.perf_counter() - t0)
                c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus[side].append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
        print(f"dialeval compare <{a.runs} runs> --gold <{a.dialogues} dialogues> -f md -f json --plot -B {a.B}:")
        for side in sides:
            print(f"  {side}: best {min(walls[side]):.2f} s wall of {a.repeat} (all: "
                  f"{', '.join(f'{w:.2f}' for w in walls[side])}); CPU {min(cpus[side]):.2f} s (user + system, "
                  "all threads)")
        print("  target: <= 4 s wall on an idle machine")
        sys.path.insert(0, SRC)
        from dialeval.report import compare_scored, plot_means, run_files, score_runs, write_report

        phases = {}
        t0 = time.perf_counter()  # wall times of the phases in this process (CPU contention inflates them too)
        matrix = score_runs(run_files([t / "runs"], exclude=t / "gold.json"), str(t / "gold.json"), progress=False)
        phases[f"score {a.runs} runs"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        c = compare_scored(matrix, B=a.B, seed=0, progress=False)
        phases["compare (Tukey, bootstrap, tau)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for f in ("md", "json"):
            write_report(c, f, t / "r2")
        phases["reports md + json"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        plot_means(c, t / "r2", progress=False)
        phases["plot png + svg"] = time.perf_counter() - t0
        for k, v in phases.items():
            print(f"  {k:34s} {v:6.2f} s")
        print(f"after: {load()}")


if __name__ == "__main__":
    main()
