"""Benchmark of the scorer (issue 2): dialeval vs a plain-Python per-dialogue loop, on 20,000 dialogues.

Builds a 20,000-dialogue gold by repeating the dialogues of ``train_data_cn.json`` under new ids (with
their 19 annotators' labels) and a run of noisy predicted distributions (fixed seed), writes both to a
temporary folder, then times, all in this one process:

(a) ``dialeval.evaluate(run, gold)`` on already-parsed lists vs ``dialeval.reference.evaluate`` (the plain
    loop in the shape of the original script), on the same lists;
(b) a further run scored against gold prepared once with ``dialeval.load_gold`` vs the loop;
(c) the whole ``dialeval evaluate RUN GOLD`` command (a subprocess), and how much of it is JSON parsing.

Every dialeval figure is checked against the loop's to 1e-9. Run:

    python benchmarks/bench_evaluate.py [--data ../shared/data/stc3/train_data_cn.json] [--n 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

import dialeval
from dialeval import reference

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "stc3" / "train_data_cn.json"
LEVELS = ("2", "1", "0", "-1", "-2")
TYPES = {"customer": ("CNUG0", "CNUG", "CNUG*", "CNaN"), "helpdesk": ("HNUG", "HNUG*", "HNaN")}


def make_gold(base: list[dict], n: int) -> list[dict]:
    out = []
    for k in range(n):
        d = base[k % len(base)]
        out.append({**d, "id": f"{d['id']}-{k // len(base)}"})
    return out


def make_run(gold: list[dict], seed: int) -> list[dict]:
    """Noisy distributions (Dirichlet around a flat prior); ids shuffled, as real runs may be."""
    rng = np.random.default_rng(seed)
    run = []
    for d in gold:
        q = {k: dict(zip(LEVELS, rng.dirichlet(np.ones(5)).round(6).tolist(), strict=True)) for k in "ASE"}
        nug = [dict(zip(TYPES[t["sender"]], rng.dirichlet(np.ones(len(TYPES[t["sender"]]))).round(6).tolist(),
                        strict=True)) for t in d["turns"]]
        run.append({"id": d["id"], "quality": q, "nugget": nug})
    order = rng.permutation(len(run))
    return [run[i] for i in order]


def flat(result: dict) -> dict[str, float]:
    out = {}
    for sub in ("quality", "nugget"):
        for m, v in result.get(sub, {}).items():
            if isinstance(v, dict):
                out.update({f"{sub}.{m}.{k}": x for k, x in v.items()})
            else:
                out[f"{sub}.{m}"] = v
    return out


def check_agree(a: dict, b: dict, what: str) -> float:
    fa, fb = flat(a), flat(b)
    if fa.keys() != fb.keys():
        raise SystemExit(f"{what}: different keys {sorted(fa)} vs {sorted(fb)}")
    worst = max(abs(fa[k] - fb[k]) for k in fa)
    if worst > 1e-9 or a["dialogues"] != b["dialogues"]:
        raise SystemExit(f"{what}: results differ by {worst:g} (or in counts): {a['dialogues']} vs {b['dialogues']}")
    return worst


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    base = orjson.loads(args.data.read_bytes())
    gold = make_gold(base, args.n)
    run1, run2 = make_run(gold, seed=1), make_run(gold, seed=2)
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-bench-"))
    gold_path, run_path = tmp / "gold.json", tmp / "run.json"
    gold_path.write_bytes(orjson.dumps(gold))
    run_path.write_bytes(orjson.dumps(run1))
    print(f"dialeval {dialeval.__version__}; {args.n} dialogues built from {args.data.name}; "
          f"gold file {gold_path.stat().st_size / 1e6:.1f} MB, run file {run_path.stat().st_size / 1e6:.1f} MB; "
          f"best of {args.repeat}; {os.cpu_count()} CPUs")

    t_loop, ref1 = best_of(lambda: reference.evaluate(run1, gold), 1)
    print(f"\nplain-Python loop (dialeval.reference.evaluate), parsed lists: {t_loop:8.3f} s")

    t_a, res_a = best_of(lambda: dialeval.evaluate(run1, gold), args.repeat)
    worst = check_agree(res_a, ref1, "(a)")
    print(f"(a) dialeval.evaluate(run, gold), parsed lists:              {t_a:8.3f} s   "
          f"{t_loop / t_a:6.1f}x faster  (max |diff| {worst:.1e})   target >= 10x")

    t_prep, prepared = best_of(lambda: dialeval.load_gold(gold), 1)
    t_loop2, ref2 = best_of(lambda: reference.evaluate(run2, gold), 1)
    t_b, res_b = best_of(lambda: dialeval.evaluate(run2, prepared), args.repeat)
    worst = check_agree(res_b, ref2, "(b)")
    print(f"(b) further run vs gold prepared once (load_gold {t_prep:.3f} s):  {t_b:8.3f} s   "
          f"{t_loop2 / t_b:6.1f}x faster than the loop ({t_loop2:.3f} s; max |diff| {worst:.1e})   target >= 100x")

    cmd = [sys.executable, "-m", "dialeval.cli", "evaluate", str(run_path), str(gold_path)]
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"(c) command failed: {proc.stderr}")
    check_agree(json.loads(proc.stdout), ref1, "(c)")
    t_parse_gold, _ = best_of(lambda: orjson.loads(gold_path.read_bytes()), args.repeat)
    t_parse_run, _ = best_of(lambda: orjson.loads(run_path.read_bytes()), args.repeat)
    t_import = statistics.median(
        _timed([sys.executable, "-c", "import dialeval.cli.main"]) for _ in range(args.repeat))
    parse = t_parse_gold + t_parse_run
    wall = min(walls)
    print(f"(c) `dialeval evaluate RUN GOLD` whole command:             {wall:8.3f} s   of which JSON parsing "
          f"(orjson) {parse:.3f} s = {100 * parse / wall:.0f}% (gold {t_parse_gold:.3f} s, run {t_parse_run:.3f} s); "
          f"Python start + imports {t_import:.3f} s")
    print(f"\nfiles left in {tmp} (delete when done)")


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
