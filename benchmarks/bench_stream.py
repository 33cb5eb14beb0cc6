"""Benchmark of streaming and distributed prediction (issue 14), and of ``dialeval summarize``.

Input: the STC-3 test dialogues (Chinese and English, 780) repeated with new ids up to ``--dialogues``, with
``system`` and ``day`` metadata, as ``--shards`` JSON Lines shards. Each configuration runs the real CLI
(``dialeval predict DIR --out OUT [--scheduler local --workers 2]``) in a subprocess; the process tree is
sampled every 50 ms with psutil for each process's peak RSS (the in-process run's peak is also read exactly
from ``getrusage`` after it ends). Configurations: in-process and LocalCluster (2 worker processes), each
with an empty embedding cache and then with the cache the first run left ("warm").

Note on "empty cache": the input repeats 780 dialogues, so an empty cache is only empty for the first
occurrence of each text; ``--unique`` adds a run on the 780 distinct dialogues with an empty cache, which is
what logs of all-new text cost per dialogue (the encoder's rate).

``--summarize N`` also times ``dialeval summarize`` on N predicted dialogues (the predictions of the
first run repeated with new ids) and reports its peak RSS.

Measured (2 cores, load average 1-2, 2026-11-24; dialogues/s wall, CPU seconds of all processes, peak RSS):

    20,000 dialogues, 8 shards       in-process                     LocalCluster, 2 workers
    empty cache                      21.7 s  923/s  27 CPU-s 251 MB  25.5 s  784/s  46 CPU-s 237+237 MB (+79 client)
    warm cache                       13.8 s 1449/s  14 CPU-s 116 MB  10.8 s 1850/s  19 CPU-s 235+235 MB (+79 client)
    780 distinct, empty cache        10.2 s   76/s (with start-up)   10.6 s   74/s (with start-up)
    200,000 dialogues, warm cache   134.2 s 1490/s 140 CPU-s 251 MB  90.3 s 2216/s 170 CPU-s 246+244 MB (+80 client)
    summarize, 1,000,000 predictions (635 MB JSONL): 13.8 s, 96 MB

Every configuration wrote byte-identical shards. The encoder alone: 274 distinct texts per CPU-second
(one thread, each text alone), 63 dialogues per CPU-second at 4.5 turns; the network: 1,209 dialogues per
CPU-second.

Run (about 10 minutes on 2 cores for the defaults):

    python benchmarks/bench_stream.py [--dialogues 20000] [--shards 8] [--configs inproc,local2]
        [--unique] [--summarize 1000000] [--memory-only]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
DATA = next((p / "shared" / "data" / "stc3" for p in HERE.parents if (p / "shared" / "data" / "stc3").is_dir()),
            HERE.parent.parent / "shared" / "data" / "stc3")  # ../shared/data beside the project (or a worktree)


def make_input(folder: Path, n: int, shards: int) -> None:
    """``n`` dialogues (the test sets repeated with new ids) in ``shards`` JSON Lines files."""
    base = []
    for lang in ("cn", "en"):
        base += json.loads((DATA / f"test_data_{lang}.json").read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-n // shards)
    for s in range(shards):
        with open(folder / f"shard{s:03d}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(s * per, min(n, (s + 1) * per)):
                d = base[i % len(base)]
                fh.write(json.dumps({"id": f"{d['id']}-{i}", "turns": d["turns"], "system": f"bot{i % 3}",
                                     "day": f"2026-11-{1 + (i * 30) // n:02d}"}, ensure_ascii=False) + "\n")


# Runs the command and prints the largest peak RSS (KB) of any process of its tree that it waited for.
_WRAP = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
         "print('MAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
         "sys.exit(r.returncode)")


def run_tree(cmd: list[str], env: dict) -> dict:
    """Run ``cmd``; its wall time and the peak RSS (MB) of each process of its tree (sampled)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _WRAP, *cmd], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    root = psutil.Process(proc.pid)
    peaks: dict[int, tuple[str, float]] = {}
    cpu: dict[int, float] = {}  # user + system seconds of each process, at its last sample
    while proc.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            procs = []
        for p in procs:
            try:
                rss = p.memory_info().rss / 2**20
                name = " ".join(p.cmdline()[1:4])[:60]
            except psutil.Error:
                continue
            if rss > peaks.get(p.pid, ("", 0.0))[1]:
                peaks[p.pid] = (name, rss)
            with contextlib.suppress(psutil.Error):
                cpu[p.pid] = sum(p.cpu_times()[:2])
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode:
        raise SystemExit(f"{cmd} failed:\n{err}")
    exact = [float(x.split()[1]) / 1024 for x in err.splitlines() if x.startswith("MAXRSS ")]
    peaks.pop(proc.pid, None)  # the wrapper
    cpu.pop(proc.pid, None)
    return {"seconds": wall, "peaks": peaks, "cpu": sum(cpu.values()),
            "max_child_rss_exact": exact[-1] if exact else float("nan"), "stderr": err.strip()}


def describe(peaks: dict) -> str:
    """Peak RSS per process, largest first: the client/in-process, the workers, the nannies, the scheduler."""
    rows = sorted(peaks.values(), key=lambda x: -x[1])
    return "; ".join(f"{rss:.0f} MB" for _, rss in rows[:6])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dialogues", type=int, default=20_000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--configs", default="inproc,local2")
    ap.add_argument("--unique", action="store_true")
    ap.add_argument("--summarize", type=int, default=0)
    ap.add_argument("--memory-only", action="store_true", help="only the in-process run on a warm cache")
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench_stream_"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(SRC), "DIALEVAL_PROGRESS": "0"}
    inp = work / f"in{args.dialogues}"
    if not inp.exists():
        t = time.perf_counter()
        make_input(inp, args.dialogues, args.shards)
        size = sum(f.stat().st_size for f in inp.iterdir()) / 2**20
        print(f"input: {args.dialogues} dialogues in {args.shards} JSONL shards ({size:.0f} MB), made in "
              f"{time.perf_counter() - t:.1f} s")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    outputs = {}
    configs = args.configs.split(",")
    for config in configs:
        extra = [] if config == "inproc" else ["--scheduler", "local", "--workers", config.removeprefix("local")]
        cache = work / f"cache-{config}"
        shutil.rmtree(cache, ignore_errors=True)
        states = ("warm",) if args.memory_only else ("empty", "warm")
        if args.memory_only:  # warm the cache on the 780 distinct dialogues first
            uniq = work / "unique780"
            make_input(uniq, 780, 1)
            run_tree([sys.executable, "-m", "dialeval", "predict", str(uniq), "--out", str(work / "warmup")],
                     {**env, "DIALEVAL_CACHE": str(cache)})
        for state in states:
            out = work / f"out-{config}-{state}"
            shutil.rmtree(out, ignore_errors=True)
            r = run_tree([sys.executable, "-m", "dialeval", "predict", str(inp), "--out", str(out), *extra],
                         {**env, "DIALEVAL_CACHE": str(cache)})
            outputs[(config, state)] = out
            rate = args.dialogues / r["seconds"]
            print(f"{config:7s} cache {state:5s}: {r['seconds']:7.1f} s  {rate:7.0f} dialogues/s  CPU {r['cpu']:.0f} s "
                  f"(all processes, sampled)  peak RSS per "
                  f"process: {describe(r['peaks'])}" + f" (exact max over the tree: {r['max_child_rss_exact']:.0f} MB)")
    names = sorted(outputs)
    if len(names) > 1:
        first = outputs[names[0]]
        same = all(
            sorted(p.name for p in first.glob("*.jsonl")) == sorted(p.name for p in outputs[k].glob("*.jsonl"))
            and all((first / f.name).read_bytes() == (outputs[k] / f.name).read_bytes() for f in first.glob("*.jsonl"))
            for k in names[1:])
        print(f"all {len(names)} outputs byte-identical: {same}")
    if args.unique:
        uniq = work / "unique780"
        make_input(uniq, 780, 2)
        cache = work / "cache-unique"
        shutil.rmtree(cache, ignore_errors=True)
        for config in configs:
            extra = [] if config == "inproc" else ["--scheduler", "local", "--workers", config.removeprefix("local")]
            shutil.rmtree(cache, ignore_errors=True)
            r = run_tree([sys.executable, "-m", "dialeval", "predict", str(uniq), "--out",
                          str(work / f"out-unique-{config}"), *extra], {**env, "DIALEVAL_CACHE": str(cache)})
            print(f"{config:7s} 780 distinct dialogues, empty cache: {r['seconds']:6.1f} s  "
                  f"{780 / r['seconds']:6.1f} dialogues/s (includes start-up and model load)")
    if args.summarize:
        src = outputs[names[0]] if names else None
        if src is None:
            raise SystemExit("--summarize needs a prediction run")
        lines = [x for f in sorted(src.glob("*.jsonl")) for x in f.read_text(encoding="utf-8").splitlines()]
        big = work / f"pred{args.summarize}"
        big.mkdir(exist_ok=True)
        per = -(-args.summarize // 8)
        for s in range(8):
            with open(big / f"p{s}.jsonl", "w", encoding="utf-8") as fh:
                for i in range(s * per, min(args.summarize, (s + 1) * per)):
                    rec = json.loads(lines[i % len(lines)])
                    rec["id"] = f"{rec['id']}-{i}"
                    fh.write(json.dumps(rec) + "\n")
        size = sum(f.stat().st_size for f in big.iterdir()) / 2**20
        r = run_tree([sys.executable, "-m", "dialeval", "summarize", str(big), "--by", "system", "--format", "json",
                      "--plot", str(work / "summary.png")], env)
        print(f"summarize {args.summarize} predicted dialogues ({size:.0f} MB JSONL): {r['seconds']:.1f} s, "
              f"peak RSS {max(v[1] for v in r['peaks'].values()):.0f} MB (exact {r['max_child_rss_exact']:.0f} MB)")
    print(f"load average after: {os.getloadavg()[0]:.1f}; files in {work}")


if __name__ == "__main__":
    main()
