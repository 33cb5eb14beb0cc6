"""The torch networks that training fits (:mod:`.training`) and their losses; torch is imported inside each
function, so that prediction (:mod:`.numpy_net`) never loads it."""

from __future__ import annotations

import numpy as np

from dialeval.models import encoders
from dialeval.models.neural.numpy_net import bins_mask, panel_bins

_N_CUST, _N_HELP, _N_LEVELS = 4, 3, 5
"""STC-3's numbers of levels (customer and helpdesk nuggets, quality): :func:`build_net`'s default shape."""


def _top_columns(top, X):
    """:func:`.numpy_net.with_top` in torch: the turn vectors ``X`` (..., d) with their first 512 columns
    recomputed by the member's top network ``top`` from their last 512, which are dropped."""
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


def build_net(d_in: int, hidden: int, dropout: float, widths: tuple[int, ...] = (_N_CUST, _N_HELP),
               pooled: tuple[int, int] = (3, _N_LEVELS), pooled_widths: list[int] | None = None,
               input_dropout: float = 0.0, panel: int = 1, turn_panels: tuple[int, ...] | None = None,
               top: dict[str, np.ndarray] | None = None):
    """The whole-dialogue network: a head of each of ``widths`` levels per turn-level scale, and the pooled
    heads of ``pooled = (scales, levels)`` dialogue-level scales (none when 0), ``pooled_widths`` their numbers
    of levels when they differ (``levels`` is the largest; :func:`.numpy_net.bins_mask`). Defaults: STC-3's.
    ``input_dropout``: dropout on the turn vectors' components in training (0: none, and no random draw).
    ``panel``: the pooled heads' logits are ``(n, k, panel, L)``, one distribution per annotator of a fixed
    panel (1: ``(n, k, L)``, the crowd's); ``turn_panels``: the same for each turn head (``(n, T, J, L)``; None:
    1 each). ``top``: the encoder's top-network weights (:func:`encoders.top_weights`) the member fine-tunes: the
    turn vectors' last 512 columns are its inputs, and its output replaces their first 512 (:func:`.numpy_net.with_top`;
    ``d_in`` counts the turn vector without the inputs)."""
    import torch
    from torch import nn

    k, L = pooled
    panels = turn_panels or (1,) * len(widths)
    bins = bins_mask(pooled_widths, L)
    bins = torch.from_numpy(np.asarray(panel_bins(bins) if panel > 1 else bins, dtype=np.float32)) \
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


def build_turn_net(d_in: int, hidden: int, dropout: float, heads: list[tuple[str, int, bool]],
                    top: dict[str, np.ndarray] | None = None):
    """A causal network: turn projection, a forward GRU over the turns so far, one linear head per scale.
    ``top``: as :func:`build_net`'s (the member's own copy of the encoder's top network)."""
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


def soft_ce(logits, target, mask):
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    per = -(target * logp).sum(-1)
    m = mask.to(per.dtype)
    return (per * m).sum() / m.sum().clamp(min=1)


def panel_mean(logits, labels):
    """A panel head's ``(log of the mean of the J annotators' distributions (n, k, L), the mean negative
    log-likelihood of each annotator's own label)``: ``logits`` (n, k, J, L), ``labels`` (n, k, J) level indices
    (-1: no label, left out)."""
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    given = labels >= 0
    nll = -logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    mean = torch.logsumexp(logp, dim=2) - float(np.log(logits.shape[2]))
    return mean, (nll * given).sum() / given.sum().clamp(min=1)


def cumulative_loss(probs, target):
    """``sum_i (cp(i) - cq(i))^2`` over the last axis: the squared distance of the cumulative distributions of
    ``probs`` and ``target`` (the ordinal part of the quality and ordinal turn losses; 0 when they are equal)."""
    import torch

    return ((torch.cumsum(probs, -1) - torch.cumsum(target, -1)) ** 2).sum(-1)


def quality_loss(logits, target, ordinal_weight: float, mask=None):
    """Cross-entropy plus ``ordinal_weight`` x the squared distance of the cumulative distributions, the mean
    over the (dialogue, scale) pairs, or over those where ``mask`` (n, k) is true."""
    import torch

    logp = torch.log_softmax(logits, dim=-1)
    ce = -(target * logp).sum(-1)
    ordinal = cumulative_loss(logp.exp(), target)
    if mask is None:
        return ce.mean() + ordinal_weight * ordinal.mean()
    m = mask.to(ce.dtype)
    return ((ce * m).sum() + ordinal_weight * (ordinal * m).sum()) / m.sum().clamp(min=1)
