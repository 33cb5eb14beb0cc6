"""One interface for every model kind: fit on a corpus, predict distributions, save, load.

A saved model is a folder: ``model.json`` (kind, subtasks, parameters, language, training data and
command, dialeval version) and ``arrays.npz`` (numeric state and the training dialogues' fingerprints,
:mod:`dialeval.models.leakage`, read with ``allow_pickle=False``: loading a
model never runs code from the file). A kind is one subclass registered with :func:`register`; the CLI's
``--model`` choices and error messages come from that registry.
"""

from __future__ import annotations

import json
import warnings
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError, describe
from dialeval.models import leakage
from dialeval.models.data import Predicted, TurnTable, check_corpus, check_subtasks, is_stc3, targets
from dialeval.models.turndata import TurnArrays, TurnScale, rows_for, turn_scales_of, turn_targets

FORMAT_VERSION = 1
KINDS: dict[str, type[Estimator]] = {}


def register(cls: type[Estimator]) -> type[Estimator]:
    """Class decorator: make ``cls`` available under ``cls.kind``."""
    KINDS[cls.kind] = cls
    return cls


def kind_class(kind: str) -> type[Estimator]:
    """The class of a model kind; a :class:`DialevalError` naming the kinds when it is unknown."""
    from dialeval.models import kinds as _kinds  # noqa: F401  (registers every kind)

    if kind not in KINDS:
        raise DialevalError(f"model kind {describe(kind)} is not known; allowed are " + ", ".join(KINDS))
    return KINDS[kind]


class Estimator(ABC):
    """A model that predicts the annotators' distributions of STC-3 dialogues.

    Subclasses set ``kind`` and ``description``, take their hyper-parameters as keyword arguments
    (stored in ``self.params``), and implement :meth:`_fit`, :meth:`_predict`, :meth:`_state` and
    :meth:`_set_state`. Everything else (checking input, subtasks, saving, loading) lives here.
    """

    kind: ClassVar[str]
    description: ClassVar[str] = ""
    defaults: ClassVar[dict] = {}

    def __init__(self, subtask: str | tuple[str, ...] = "both", seed: int = 0, progress: bool | None = None,
                 **params: object) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise DialevalError(f"{self.kind}: unknown parameter(s) {', '.join(unknown)}; allowed are "
                                + (", ".join(self.defaults) or "none"))
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise DialevalError(f"seed {describe(seed)} is not allowed; allowed are integers >= 0")
        self.subtasks = check_subtasks(subtask)
        self.seed = seed
        self.progress = progress
        self.params = {**self.defaults, **params}
        self.info: dict = {}
        self.fitted = False
        self.scales: dict[str, TurnScale] = {}
        """The turn-level scales learnt from a non-STC-3 corpus (empty for an STC-3 model)."""
        self.training_fingerprints: np.ndarray | None = None
        """Sorted fingerprints of the training dialogues (:mod:`dialeval.models.leakage`); None: unknown."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(subtasks={self.subtasks}, seed={self.seed}, fitted={self.fitted})"

    # -- public API -------------------------------------------------------------------------------
    def fit(self, corpus: Corpus) -> Estimator:
        """Fit on an annotated corpus.

        An STC-3 corpus (customer and helpdesk turns): the model's subtasks, every dialogue labelled for them.
        Any other corpus: every turn-level scale that labels some turn (its distribution per labelled turn,
        learnt from the turn and the turns before it), see :mod:`dialeval.models.turndata`.
        """
        if is_stc3(check_corpus(corpus)):
            table = TurnTable.from_corpus(corpus)
            self._fit(table, targets(corpus, table, self.subtasks))
            self.scales = {}
        else:
            scales = turn_scales_of(corpus)
            if not scales:
                have = ", ".join(f"{s.name} ({s.level})" for s in corpus.scales.values()) or "none"
                raise DialevalError(f"the corpus labels no turn on a turn-level scale, so there is nothing to learn "
                                    f"(its scales: {have})", file=corpus.source)
            table = TurnTable.from_corpus(corpus, stc3=False)
            self.scales = scales  # set first: a kind's _fit_turns reads the scales' kinds and levels
            self._fit_turns(table, turn_targets(corpus, table, scales))
        self.fitted = True
        self.training_fingerprints = np.unique(leakage.fingerprints(table))
        self.info.setdefault("trained_on", {"source": corpus.source, "dialogues": table.n_dialogues,
                                            "turns": len(table.texts)})
        if corpus.language:
            self.info.setdefault("language", corpus.language)
        return self

    def predict(self, corpus: Corpus | TurnTable, *, check_training: bool = True) -> Predicted:
        """Predicted distributions for every dialogue of ``corpus`` (labels, if any, are ignored).

        With ``check_training``, a :class:`~dialeval.models.leakage.TrainingDataWarning` names the input
        dialogues that were in the model's training data (see :meth:`in_training`).
        """
        if not self.fitted:
            raise DialevalError(f"this {self.kind} model is not fitted; call fit(corpus) or load a saved one")
        table = corpus if isinstance(corpus, TurnTable) else TurnTable.from_corpus(corpus, stc3=not self.scales)
        if check_training:
            seen = self.in_training(table)
            if seen.count:
                warnings.warn(seen.message(), leakage.TrainingDataWarning, stacklevel=2)
        if self.scales:
            rows = {name: rows_for(table, s) for name, s in self.scales.items()}
            probs = self._predict_turns(table, rows)
            return Predicted(turns={n: (rows[n], normalise_rows(probs[n]) if len(rows[n]) else
                                        np.zeros((0, len(self.scales[n].levels)))) for n in rows}).check(table)
        return self._predict(table).select(self.subtasks).check(table)

    def in_training(self, corpus: Corpus | TurnTable) -> leakage.Overlap:
        """The dialogues of ``corpus`` that were in this model's training data (by content, not by id).

        Empty when the model does not know its training data (saved without fingerprints).
        """
        table = corpus if isinstance(corpus, TurnTable) else TurnTable.from_corpus(corpus, stc3=False)
        return leakage.overlap(self.training_fingerprints, table)

    def save(self, path: str | Path) -> Path:
        """Write the model to folder ``path`` (created; files replaced atomically). Returns the folder."""
        from dialeval import __version__
        from dialeval.io.atomic import atomic_path, write_text

        if not self.fitted:
            raise DialevalError(f"this {self.kind} model is not fitted; nothing to save")
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise DialevalError(f"{folder} exists and is not a folder; a model is saved as a folder")
        folder.mkdir(parents=True, exist_ok=True)
        config, arrays = self._state()
        if leakage.ARRAY in arrays:
            raise DialevalError(f"model kind {self.kind!r} uses the reserved array name {leakage.ARRAY!r}")
        if self.training_fingerprints is not None:
            arrays = {**arrays, leakage.ARRAY: self.training_fingerprints}
        meta = {"format": FORMAT_VERSION, "kind": self.kind,
                "subtasks": [] if self.scales else list(self.subtasks), "seed": self.seed,
                "params": self.params, "config": config, "info": self.info, "dialeval_version": __version__}
        if self.scales:
            meta["scales"] = {n: s.to_json() for n, s in self.scales.items()}
        if self.training_fingerprints is not None:
            meta["training_fingerprints"] = {"scheme": leakage.SCHEME, "count": len(self.training_fingerprints)}
        with atomic_path(folder / "arrays.npz") as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        write_text(folder / "model.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        return folder

    @staticmethod
    def load(path: str | Path) -> Estimator:
        """Load a model saved by :meth:`save` (any kind)."""
        folder = Path(path)
        meta_path = folder / "model.json"
        if not meta_path.is_file():
            raise DialevalError(f"{folder} is not a saved dialeval model (no model.json in it)")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DialevalError(f"model.json is not valid JSON: {exc}", file=str(meta_path)) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise DialevalError(f"model format {describe(meta.get('format') if isinstance(meta, dict) else meta)}"
                                f" is not supported; this dialeval reads format {FORMAT_VERSION}",
                                file=str(meta_path))
        cls = kind_class(meta.get("kind"))
        model = cls(tuple(meta["subtasks"]) or "both", int(meta["seed"]), **meta.get("params", {}))
        model.scales = {n: TurnScale.from_json(n, d) for n, d in (meta.get("scales") or {}).items()}
        with np.load(folder / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        known = arrays.pop(leakage.ARRAY, None)
        if known is not None and (meta.get("training_fingerprints") or {}).get("scheme") == leakage.SCHEME:
            model.training_fingerprints = leakage.check_stored(known, str(folder / "arrays.npz"))
        model._set_state(meta.get("config", {}), arrays)
        model.info = meta.get("info", {})
        model.fitted = True
        return model

    # -- what a kind implements -------------------------------------------------------------------
    @abstractmethod
    def _fit(self, table: TurnTable, y: Predicted) -> None:
        """Learn from the targets ``y`` (only the model's subtasks are set)."""

    @abstractmethod
    def _predict(self, table: TurnTable) -> Predicted:
        """Distributions for the model's subtasks on ``table``."""

    def _fit_turns(self, table: TurnTable, y: TurnArrays) -> None:
        """Learn turn-level scales: ``y[scale] = (flat turn rows, annotators' distributions)``."""
        raise DialevalError(f"model kind {self.kind!r} does not model turn-level scales")

    def _predict_turns(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Distributions of each scale on the flat turns ``rows[scale]`` (one row each)."""
        raise DialevalError(f"model kind {self.kind!r} does not model turn-level scales")

    @abstractmethod
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able configuration and named numeric arrays that :meth:`_set_state` restores."""

    @abstractmethod
    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`_state` returned."""


def normalise_rows(a: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Rows clipped at ``floor`` and rescaled to sum 1 (a prediction never puts exactly 0 on a bin)."""
    a = np.clip(np.asarray(a, dtype=np.float64), floor, None)
    return a / a.sum(axis=1, keepdims=True)
