"""Benchmark of the scorer (issue 2): dialeval vs a plain-Python per-dialogue loop, on 20,000 dialogues.

Builds a 20,000-dialogue gold by repeating the dialogues of ``train_data_cn.json`` under new ids (with
their 19 annotators' labels) and a run of noisy predicted distributions (fixed seed), writes both to a
temporary folder, then times, all in this one process:

(a) ``dialeval.evaluate(run, gold)`` on already-parsed lists vs a per-dialogue loop;
(b) a further run scored against gold prepared once with ``dialeval.load_gold`` vs the loop;
(c) the whole ``dialeval evaluate RUN GOLD`` command (a subprocess), and how much of it is JSON parsing;
(d) peak memory of the command on a gold file of about 100 MB (``--big-n`` dialogues) and its run.

Two loops are timed, both plain Python over dialogues, both from the definitions of MEASURES.md:

- ``original_shape_evaluate`` below, in the shape of the official STC-3/DialEval script: a dict of
  predictions and of truths by id, for each measure a loop over dialogues, gold counted with ``Counter``
  per distribution, each distribution a small numpy array, JSD through ``scipy.stats.entropy``. The issue's
  targets (>= 10x, >= 100x) are stated against this loop.
- ``dialeval.reference.evaluate``: the same loops on plain lists of floats, no numpy. A stronger baseline
  (tiny numpy arrays cost more than they save); its ratios are printed too.

Every dialeval figure is checked against both loops to 1e-9. Run:

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
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import scipy.stats

import dialeval
from dialeval import reference
from dialeval.io.jsonarray import load_records

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "stc3" / "train_data_cn.json"
LEVELS = ("2", "1", "0", "-1", "-2")
TYPES = {"customer": ("CNUG0", "CNUG", "CNUG*", "CNaN"), "helpdesk": ("HNUG", "HNUG*", "HNaN")}


def _normalise(pred, truth):
    pred, truth = np.asarray(pred, dtype=float), np.asarray(truth, dtype=float)
    return pred / pred.sum(), truth / truth.sum()


def _nmd(pred, truth):
    pred, truth = _normalise(pred, truth)
    return np.abs(np.cumsum(pred) - np.cumsum(truth)).sum() / (len(pred) - 1)


def _od(pred, truth):
    # mean over truth's non-empty bins of DW_i = sum_j |i - j| (pred(j) - truth(j))^2
    return np.mean([np.sum([abs(i - j) * (pred[j] - truth[j]) ** 2 for j in range(len(pred))])
                    for i in range(len(truth)) if truth[i] > 0])


def _rsnod(pred, truth):
    pred, truth = _normalise(pred, truth)
    return np.sqrt((_od(pred, truth) + _od(truth, pred)) / 2 / (len(pred) - 1))


def _jsd(pred, truth):
    pred, truth = _normalise(pred, truth)
    m = (pred + truth) / 2
    return (scipy.stats.entropy(pred, m, base=2) + scipy.stats.entropy(truth, m, base=2)) / 2


def _rnss(pred, truth):
    pred, truth = _normalise(pred, truth)
    return np.sqrt(((pred - truth) ** 2).sum() / 2)


def original_shape_evaluate(run: list[dict], gold: list[dict], alpha: float = 0.5) -> dict:
    """The task scores in the shape of the official script (see the module docstring); no strict mode."""
    id2pred = {d["id"]: d for d in run}
    id2truth = {d["id"]: d for d in gold}
    out: dict = {"quality": {}, "nugget": {}}
    for name, measure in (("nmd", _nmd), ("rsnod", _rsnod)):
        per_key: dict[str, list[float]] = {}
        for idx, pred in id2pred.items():
            if idx not in id2truth:
                continue
            truth = id2truth[idx]
            for key, dist in pred["quality"].items():
                c = Counter(str(a["quality"][key]) for a in truth["annotations"])
                q = np.array([c.get(level, 0) for level in LEVELS], dtype=float)
                p = np.array([dist.get(level, 0) for level in LEVELS], dtype=float)
                per_key.setdefault(key, []).append(measure(p, q / q.sum()))
        out["quality"][name] = {k: float(np.mean(v)) for k, v in per_key.items()}
    for name, measure in (("jsd", _jsd), ("rnss", _rnss)):
        scores = []
        for idx, pred in id2pred.items():
            if idx not in id2truth:
                continue
            truth = id2truth[idx]
            c_scores, h_scores = [], []
            for i, turn_pred in enumerate(pred["nugget"]):
                sender = truth["turns"][i]["sender"]
                c = Counter(a["nugget"][i] for a in truth["annotations"])
                q = np.array([c.get(t, 0) for t in TYPES[sender]], dtype=float)
                p = np.array([turn_pred.get(t, 0) for t in TYPES[sender]], dtype=float)
                (c_scores if sender == "customer" else h_scores).append(measure(p, q / q.sum()))
            if c_scores and h_scores:
                scores.append(alpha * np.mean(c_scores) + (1 - alpha) * np.mean(h_scores))
            else:
                scores.append(np.mean(c_scores or h_scores))
        out["nugget"][name] = float(np.mean(scores))
    n = sum(1 for i in id2pred if i in id2truth)
    out["dialogues"] = {"scored": n, "missing": len(id2truth) - n, "extra": len(id2pred) - n}
    return out


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
    ap.add_argument("--big-n", type=int, default=45_000, help="dialogues of the ~100 MB gold of (d)")
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

    t_orig, orig1 = best_of(lambda: original_shape_evaluate(run1, gold), 1)
    t_ref, ref1 = best_of(lambda: reference.evaluate(run1, gold), 1)
    check_agree(orig1, ref1, "the two loops")
    print(f"\nloop in the official script's shape (numpy per distribution): {t_orig:8.3f} s")
    print(f"loop on plain lists (dialeval.reference.evaluate):            {t_ref:8.3f} s")

    t_a, res_a = best_of(lambda: dialeval.evaluate(run1, gold), args.repeat)
    worst = check_agree(res_a, ref1, "(a)")
    print(f"(a) dialeval.evaluate(run, gold) on parsed lists:  {t_a:7.3f} s = {t_orig / t_a:6.1f}x faster than the "
          f"script-shaped loop (target >= 10x), {t_ref / t_a:5.1f}x than the plain-list loop; max |diff| {worst:.1e}")

    t_prep, prepared = best_of(lambda: dialeval.load_gold(gold), 1)
    t_orig2, orig2 = best_of(lambda: original_shape_evaluate(run2, gold), 1)
    t_ref2, ref2 = best_of(lambda: reference.evaluate(run2, gold), 1)
    t_b, res_b = best_of(lambda: dialeval.evaluate(run2, prepared), args.repeat)
    worst = max(check_agree(res_b, ref2, "(b)"), check_agree(res_b, orig2, "(b)"))
    print(f"(b) a further run vs gold prepared once:          {t_b:7.3f} s = {t_orig2 / t_b:6.1f}x faster than the "
          f"script-shaped loop (target >= 100x), {t_ref2 / t_b:5.1f}x than the plain-list loop; max |diff| "
          f"{worst:.1e} (load_gold once: {t_prep:.3f} s)")

    cmd = [sys.executable, "-m", "dialeval.cli", "evaluate", str(run_path), str(gold_path)]
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"(c) command failed: {proc.stderr}")
    check_agree(json.loads(proc.stdout), ref1, "(c)")
    # What the command does to read them: the streaming reader (orjson between top-level commas, GC paused).
    t_parse_gold, _ = best_of(lambda: load_records(gold_path), args.repeat)
    t_parse_run, _ = best_of(lambda: load_records(run_path), args.repeat)
    t_import = statistics.median(
        _timed([sys.executable, "-c", "import dialeval.cli.main"]) for _ in range(args.repeat))
    parse = t_parse_gold + t_parse_run
    wall = min(walls)
    print(f"(c) `dialeval evaluate RUN GOLD` whole command:             {wall:8.3f} s   of which JSON parsing "
          f"(dialeval.io.jsonarray.load_records) {parse:.3f} s = {100 * parse / wall:.0f}% "
          f"(gold {t_parse_gold:.3f} s, run {t_parse_run:.3f} s); "
          f"Python start + imports {t_import:.3f} s")

    big = make_gold(base, args.big_n)
    big_gold, big_run = tmp / "big_gold.json", tmp / "big_run.json"
    big_gold.write_bytes(orjson.dumps(big))
    big_run.write_bytes(orjson.dumps(make_run(big, seed=3)))
    del big
    base_rss = _peak_rss_mib([sys.executable, "-c", "import dialeval.cli.main"])
    rss = _peak_rss_mib([*cmd[:-2], str(big_run), str(big_gold)])
    size = (big_gold.stat().st_size + big_run.stat().st_size) / 2**20
    print(f"(d) `dialeval evaluate` on a {big_gold.stat().st_size / 2**20:.0f} MiB gold and a "
          f"{big_run.stat().st_size / 2**20:.0f} MiB run ({args.big_n} dialogues): peak RSS {rss:.0f} MiB, of which "
          f"{base_rss:.0f} MiB is Python with dialeval imported: {(rss - base_rss) / size:.2f}x the input size "
          "(target < 10x)")
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()


def _peak_rss_mib(cmd: list[str]) -> float:
    """Peak resident memory of a command, read from /usr/bin/time -v (Linux)."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=True)
    line = next(x for x in proc.stderr.splitlines() if "Maximum resident set size" in x)
    return int(line.rsplit(":", 1)[1]) / 1024


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
