"""One interface for every model kind: fit on a corpus, predict distributions, save, load.

A saved model is a folder: ``model.json`` (kind, subtasks, parameters, language, training data and
command, dialeval version) and ``arrays.npz`` (numeric state and the training dialogues' fingerprints,
:mod:`dialeval.models.leakage`, read with ``allow_pickle=False``: loading a
model never runs code from the file). A kind is one subclass registered with :func:`register`; the CLI's
``--model`` choices and error messages come from that registry.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
import zipfile
import zlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError, describe
from dialeval.io.stc3 import SENDERS
from dialeval.models import leakage
from dialeval.models.data import SUBTASKS, Predicted, TurnTable, check_corpus, check_subtasks
from dialeval.models.pools import POOLS
from dialeval.models.turndata import ScaleArrays, TurnScale, learnt_scales, rows_for, scale_targets, scales_to_learn

FORMAT_VERSION = 1
KINDS: dict[str, type[Estimator]] = {}
SEED_MAX = 2**32 - 1
"""The largest seed a model uses: numpy's and scikit-learn's ``random_state`` take 0..2**32-1 (see
:func:`check_seed`)."""
COMMON_DEFAULTS: dict = {"min_share": 0.0, "pools": "keep"}
"""The parameters every kind takes besides its own: ``min_share`` (:func:`check_min_share`, :func:`sparsify`),
applied to the kind's distributions by :meth:`Estimator.predict`, and ``pools`` (:data:`~dialeval.models.pools.POOLS`),
how :meth:`Estimator.fit` treats the annotator pools of the training items (:mod:`dialeval.models.pools`)."""


def register(cls: type[Estimator]) -> type[Estimator]:
    """Class decorator: make ``cls`` available under ``cls.kind``."""
    KINDS[cls.kind] = cls
    return cls


def kind_class(kind: str) -> type[Estimator]:
    """The class of a model kind; a :class:`DialevalError` naming the kinds when it is unknown."""
    from dialeval.models import kinds as _kinds  # noqa: F401  (registers every kind)

    if not isinstance(kind, str) or kind not in KINDS:
        raise DialevalError(f"model kind {describe(kind)} is not known; allowed are " + ", ".join(KINDS))
    return KINDS[kind]


class Estimator(ABC):
    """A model that predicts the annotators' distributions of the scales of a corpus's tasks.

    Subclasses set ``kind`` and ``description``, take their hyper-parameters as keyword arguments
    (stored in ``self.params``, with those every kind takes, :data:`COMMON_DEFAULTS`), and implement
    :meth:`_fit`, :meth:`_predict`, :meth:`_state` and :meth:`_set_state`. Everything else (which scales to
    learn, checking input, subtasks, saving, loading, emptying the bins below ``min_share``) lives here. A
    kind sees every scale the same way: it learns from ``{scale: Targets(rows, probs, votes, panel)}``
    (:class:`~dialeval.models.turndata.Targets`: rows of dialogues for a dialogue-level scale, of flat turns
    otherwise; the annotators' distribution of each; each annotator's label when they are a fixed panel) and
    predicts ``{scale: probs}`` on the rows asked; what it knows of each is in :attr:`learnt` (its level), and
    what it may read is :attr:`context` (the tasks' declaration).
    """

    kind: ClassVar[str]
    description: ClassVar[str] = ""
    defaults: ClassVar[dict] = {}

    def __init__(self, subtask: str | tuple[str, ...] = "both", seed: int = 0, progress: bool | None = None,
                 **params: object) -> None:
        unknown = sorted(set(params) - set(self.defaults) - set(COMMON_DEFAULTS))
        if unknown:
            raise DialevalError(f"{self.kind}: unknown parameter(s) {', '.join(unknown)}; allowed are "
                                + ", ".join([*self.defaults, *COMMON_DEFAULTS]))
        self.params = {**COMMON_DEFAULTS, **self.defaults, **params}
        self.seed = check_seed(seed, self._seed_count(self.params))
        self.subtasks = check_subtasks(subtask)
        self.progress = progress
        check_min_share(self.params["min_share"], self.kind)
        check_param(self.kind, "pools", self.params["pools"], type_=str, choices=POOLS,
                    note="how training treats groups of annotators who labelled separate items")
        self.shares: dict[str, float] = {}
        """The ``min_share`` of each learnt scale (:func:`sparsify`), set by :meth:`fit` (``auto``: from the
        training items' annotator counts) and saved with the model."""
        self.info: dict = {}
        self.fitted = False
        self.learnt: dict[str, TurnScale] = {}
        """Every scale the model learnt (:func:`~dialeval.models.turndata.scales_to_learn`), in task order."""
        self.not_asked: dict[str, TurnScale] = {}
        """While fitting: the scales of the corpus's other subtasks, which the model was not asked to learn (the
        neural kind keeps their heads, untrained, so that a one-subtask network is the both-subtask one)."""
        self.training_fingerprints: np.ndarray | None = None
        """Sorted fingerprints of the training dialogues (:mod:`dialeval.models.leakage`); None: unknown."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(subtasks={self.subtasks}, seed={self.seed}, fitted={self.fitted})"

    @property
    def scales(self) -> dict[str, TurnScale]:
        """The learnt scales outside the STC-3 subtasks (turn-level scales of DBDC, WOCHAT..., dialogue-level
        ratings of DSTC9): their predictions take the per-item layout; empty for an STC-3 model."""
        return {n: s for n, s in self.learnt.items() if s.subtask is None}

    @property
    def context(self) -> str:
        """What the model reads to predict a turn-level item: ``dialogue`` (the whole dialogue) or ``past``
        (the turns up to the item), as the tasks of its turn-level scales declare
        (:attr:`dialeval.tasks.Task.context`). A dialogue-level scale is judged on the whole dialogue whatever
        this says."""
        contexts = {s.context for s in self.learnt.values() if s.level != "dialogue"}
        if len(contexts) > 1:
            raise DialevalError(f"model kind {self.kind!r} cannot learn turn scales read in the whole dialogue "
                                "and turn scales read in the turns so far together (" + ", ".join(self.learnt) + ")")
        return contexts.pop() if contexts else "dialogue"

    def _senders(self) -> tuple[str, ...] | None:
        """The senders every turn of an input must have: STC-3's (:data:`~dialeval.io.stc3.SENDERS`, the table's
        default) for a model of its subtasks, which predicts every turn as an item of its sender's scale; None
        (any sender) otherwise."""
        return SENDERS if any(s.subtask is not None for s in self.learnt.values()) else None

    # -- public API -------------------------------------------------------------------------------
    def fit(self, corpus: Corpus) -> Estimator:
        """Fit on an annotated corpus: the scales of its tasks (:func:`~dialeval.models.turndata.scales_to_learn`).

        An STC-3 corpus: the model's subtasks, every dialogue labelled for them. Any other corpus: every
        scale that labels some turn or dialogue (its distribution per labelled item), see
        :mod:`dialeval.models.turndata`.
        """
        scales = scales_to_learn(check_corpus(corpus), self.subtasks)
        if not scales:
            have = ", ".join(f"{s.name} ({s.level})" for s in corpus.scales.values()) or "none"
            raise DialevalError(f"the corpus labels no turn or dialogue on any scale, so there is nothing to "
                                f"learn (its scales: {have})", file=corpus.source)
        self.learnt = scales  # set first: a kind's _fit reads the scales' kinds, levels and context
        self.not_asked = {n: s for n, s in scales_to_learn(corpus, SUBTASKS).items() if n not in scales}
        _ = self.context  # one context, or an error
        table = TurnTable.from_corpus(corpus, senders=self._senders())
        prints = leakage.fingerprints(table)
        leakage.warn_repeats(table.ids, prints, stacklevel=2)  # said before the training, which may take minutes
        targets = scale_targets(corpus, table, scales, balance=self.params["pools"] == "balance")
        self._fit(table, targets)
        self.shares = {n: resolve_min_share(self.params["min_share"], t.votes) for n, t in targets.items()}
        self.fitted = True
        self.training_fingerprints = np.unique(prints)
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
        table = corpus if isinstance(corpus, TurnTable) else TurnTable.from_corpus(corpus,
                                                                                   senders=self._senders())
        if check_training:
            seen = self.in_training(table)
            if seen.count:
                warnings.warn(seen.message(), leakage.TrainingDataWarning, stacklevel=2)
        rows = {name: rows_for(table, s) for name, s in self.learnt.items()}
        probs = self._predict(table, rows)
        return Predicted.of({n: (rows[n], self._finish(self.learnt[n], probs[n], len(rows[n]))) for n in rows},
                            self.learnt).check(table)

    def _finish(self, scale: TurnScale, probs: np.ndarray, n: int) -> np.ndarray:
        """A kind's distributions of ``scale`` on its ``n`` rows as predicted.

        A kind returns floored distributions (:func:`normalise_rows`). Those of a scale outside the STC-3
        subtasks pass :func:`normalise_rows` once more, as they always did: a second pass moves a floored bin
        by about 1e-12, and a saved model must predict exactly what it predicted when it was trained. Last,
        the bins below the scale's ``min_share`` are emptied (:func:`sparsify`; none with the default 0).
        """
        if not n:
            return np.zeros((0, len(scale.levels)))
        probs = probs if scale.subtask is not None else normalise_rows(probs)
        return sparsify(probs, self.shares.get(scale.name, 0.0))

    def in_training(self, corpus: Corpus | TurnTable) -> leakage.Overlap:
        """The dialogues of ``corpus`` that were in this model's training data (by content, not by id).

        Empty when the model does not know its training data (saved without fingerprints).
        """
        table = corpus if isinstance(corpus, TurnTable) else TurnTable.from_corpus(corpus, senders=None)
        return leakage.overlap(self.training_fingerprints, table)

    def save(self, path: str | Path) -> Path:
        """Write the model to folder ``path`` (created; files replaced atomically). Returns the folder."""
        from dialeval import __version__
        from dialeval.io.atomic import atomic_path, make_folder, write_text

        if not self.fitted:
            raise DialevalError(f"this {self.kind} model is not fitted; nothing to save")
        check_model_folder(path)
        folder = make_folder(path, "a model")
        config, arrays = self._state()
        if leakage.ARRAY in arrays:
            raise DialevalError(f"model kind {self.kind!r} uses the reserved array name {leakage.ARRAY!r}")
        if self.training_fingerprints is not None:
            arrays = {**arrays, leakage.ARRAY: self.training_fingerprints}
        meta = {"format": FORMAT_VERSION, "kind": self.kind,
                "subtasks": [] if self.scales else list(self.subtasks), "seed": self.seed,
                "params": self.params, "config": config, "info": self.info, "dialeval_version": __version__}
        if any(self.shares.values()) or self.params["min_share"] == "auto":  # the loader needs 'auto' resolved
            meta["min_shares"] = self.shares
        if self.scales:
            meta["scales"] = {n: s.to_json() for n, s in self.scales.items()}
        if self.training_fingerprints is not None:
            meta["training_fingerprints"] = {"scheme": leakage.SCHEME, "count": len(self.training_fingerprints)}
        with atomic_path(folder / "arrays.npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            # the two files name each other: a save interrupted between them (over an earlier model) leaves a
            # folder that load refuses as damaged, not new arrays read with the earlier model's settings
            meta["arrays_sha256"] = _sha256(tmp)
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
        except RecursionError:  # '[' x 100000: json recurses once per level
            raise damaged("model.json nests its values too deeply to be a model's", str(meta_path)) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise DialevalError(f"model format {describe(meta.get('format') if isinstance(meta, dict) else meta)}"
                                f" is not supported; this dialeval reads format {FORMAT_VERSION}",
                                file=str(meta_path))
        try:
            cls = kind_class(meta.get("kind"))
            model = cls(tuple(meta["subtasks"]) or "both", int(meta["seed"]), **meta.get("params", {}))
            turn_scales = {n: TurnScale.from_json(n, d) for n, d in (meta.get("scales") or {}).items()}
            model.learnt = learnt_scales(() if turn_scales else model.subtasks, turn_scales)
            expected = meta.get("arrays_sha256")  # absent in models saved before 2026-11-28: not checked
            if expected is not None and _sha256(folder / "arrays.npz") != expected:
                raise damaged("arrays.npz is not the file model.json was saved with: a save interrupted, or "
                              "files of two models", str(folder))
            with np.load(folder / "arrays.npz", allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            known = arrays.pop(leakage.ARRAY, None)
            if known is not None and (meta.get("training_fingerprints") or {}).get("scheme") == leakage.SCHEME:
                model.training_fingerprints = leakage.check_stored(known, str(folder / "arrays.npz"))
            model._set_state(meta.get("config", {}), arrays)
            model.shares = _saved_shares(meta, model, str(meta_path))
        except DialevalError as exc:
            raise DialevalError(exc.message, file=exc.file or str(folder), dialogue=exc.dialogue,
                                field=exc.field) from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, OSError, EOFError, RecursionError,
                zipfile.BadZipFile, zlib.error) as exc:  # a file edited, truncated or taken from another model
            raise damaged(f"{type(exc).__name__}: {describe(str(exc), 120)}", str(folder)) from None
        model.info = meta.get("info", {})
        model.fitted = True
        return model

    # -- what a kind implements -------------------------------------------------------------------
    def _seed_count(self, params: dict) -> int:
        """How many seeds the model uses, ``seed .. seed + count - 1`` (:func:`check_seed`), read from its
        parameters ``params`` (not yet checked): 1 unless a kind trains several members with seeds of their own."""
        return 1

    @abstractmethod
    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        """Learn every scale of :attr:`learnt` from its :class:`~dialeval.models.turndata.Targets` ``y[scale]``."""

    @abstractmethod
    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Distributions of each scale on its ``rows[scale]`` (dialogues or flat turns; one row each)."""

    @abstractmethod
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able configuration and named numeric arrays that :meth:`_set_state` restores."""

    @abstractmethod
    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`_state` returned."""


def _sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_model_folder(path: str | Path) -> None:
    """Refuse to save a model into a folder that holds other files and no model (``out="/tmp"`` wrote
    ``model.json`` and ``arrays.npz`` among whatever was there); a folder with a saved model is replaced."""
    folder = Path(path)
    try:
        others = folder.is_dir() and not (folder / "model.json").exists() and any(folder.iterdir())
    except OSError:
        return  # make_folder names the problem
    if others:
        raise DialevalError("the folder for the model holds other files and no saved model; allowed is a new or "
                            "empty folder, or one with a model to replace", file=str(folder))


def damaged(detail: str, where: str | None = None) -> DialevalError:
    """The error of a saved model whose files do not make one model (edited, truncated, or model.json and
    arrays.npz taken from two models): ``detail`` says what is wrong; ``where``: the folder or file (a kind's
    ``_set_state`` leaves it out: :meth:`Estimator.load` adds the folder)."""
    return DialevalError(f"the saved model is damaged, or model.json and arrays.npz are not of one model ({detail})",
                         file=where)


_KINDS_OF_NUMBERS = {"f": "floating-point numbers", "i": "integers"}


def expect_array(arrays: dict[str, np.ndarray], key: str, shape: tuple[int | None, ...], implied_by: str, *,
                 shown: str | None = None, kind: str | None = None, distributions: bool = False) -> np.ndarray:
    """``arrays[key]`` of a model being loaded, checked: present, of ``shape`` (what ``implied_by`` implies; None:
    any length on that axis), of numpy dtype kind ``kind`` (``"f"`` or ``"i"``) when given, finite where it holds
    floats, and with ``distributions``, rows (last axis) of values >= 0 summing to 1; else a :func:`damaged`
    error naming the array (as ``shown``, default ``key``)."""
    name = key if shown is None else shown
    a = arrays.get(key)
    if a is None:
        raise damaged(f"arrays.npz has no array {name!r}, which model.json's configuration needs")
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape,
                                                                                        strict=True)):
        raise damaged(f"array {name!r} has shape {a.shape}; {implied_by} imply "
                      + str(tuple("any" if n is None else n for n in shape)).replace("'", ""))
    if kind is not None and a.dtype.kind != kind:
        raise damaged(f"array {name!r} is of type {a.dtype}; allowed are {_KINDS_OF_NUMBERS[kind]}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise damaged(f"array {name!r} holds values that are not finite numbers (NaN or infinite)")
    if distributions and a.size and ((a < 0).any() or not np.allclose(a.sum(axis=-1), 1.0, atol=1e-6)):
        raise damaged(f"array {name!r} holds rows that are not distributions (a value below 0, or a row not "
                      "summing to 1)")
    return a


def array_key(scale: TurnScale) -> str:
    """The name of a scale's state in a saved model (the names of the first save format, so that every saved
    model loads): ``<subtask>_<scale>`` for a dialogue-level scale of a subtask (``quality_A``), the labelled
    sender for a subtask's block-level scale (``customer``), ``turn/<scale>`` for any other scale."""
    if scale.subtask is None:
        return f"turn/{scale.name}"
    return f"{scale.subtask}_{scale.name}" if scale.level == "dialogue" else scale.senders[0]


def normalise_rows(a: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Rows clipped at ``floor`` and rescaled to sum 1 (a prediction never puts exactly 0 on a bin)."""
    a = np.clip(np.asarray(a, dtype=np.float64), floor, None)
    return a / a.sum(axis=1, keepdims=True)


def check_seed(seed: object, count: int = 1) -> int:
    """``seed`` if a model may use seeds ``seed .. seed + count - 1`` (an ensemble of ``count`` members, each
    trained with its own seed), all within 0..:data:`SEED_MAX`; else a :class:`DialevalError` saying what is
    allowed.

    Examples
    --------
    >>> check_seed(7)
    7
    >>> check_seed(2**32)
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: seed 4294967296 is not allowed; allowed are integers 0..4294967295
    """
    top = SEED_MAX - (count - 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= top:
        raise DialevalError(f"seed {describe(seed)} is not allowed; allowed are integers 0..{top}"
                            + (f" (the {count} members of the ensemble use seeds seed..seed+{count - 1})"
                               if count > 1 else ""))
    return seed


def check_param(kind: str, name: str, value: object, *, type_: type, lo: float | None = None,
                hi: float | None = None, gt: float | None = None, lt: float | None = None,
                choices: tuple[str, ...] | None = None, note: str = "") -> object:
    """``value`` if it is a valid hyper-parameter of model kind ``kind``, else a :class:`DialevalError` saying what
    was received and what is allowed: the one check every kind's parameters go through.

    ``type_`` is ``int``, ``float`` (an int is accepted and converted) or ``str``; ``lo``/``hi`` bound numbers
    inclusively, ``gt``/``lt`` exclusively; ``choices``: the allowed strings; ``note``: what the parameter means,
    added to the message.

    Examples
    --------
    >>> check_param("linear", "C", 2, type_=float, lo=1e-6)
    2.0
    >>> check_param("neural", "dropout", 1, type_=float, lo=0, lt=1)
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: neural: parameter dropout = 1 is not allowed; allowed are numbers >= 0 and < 1
    """
    received = value
    if type_ in (int, float):  # an int of any size (JSON's 1e400 written out) is finite but may not fit a float
        ok = ((isinstance(value, int) and not isinstance(value, bool) and (type_ is int or abs(value) < 2**1023))
              or (isinstance(value, float) and math.isfinite(value) and (type_ is float or value.is_integer())))
    else:
        ok = isinstance(value, str)
    if ok and type_ in (int, float):
        value = type_(value)
        ok = ((lo is None or value >= lo) and (hi is None or value <= hi) and (gt is None or value > gt)
              and (lt is None or value < lt))
    if ok and choices is not None:
        ok = value in choices
    if not ok:
        if choices is not None:
            allowed = ", ".join(choices)
        else:
            what = {int: "integers", float: "numbers", str: "strings"}[type_]
            bounds = [f"{op} {b:g}" for op, b in ((">=", lo), (">", gt), ("<=", hi), ("<", lt)) if b is not None]
            allowed = " ".join([what, " and ".join(bounds)]).strip()
        raise DialevalError(f"{kind}: parameter {name} = {describe(received)} is not allowed; allowed are {allowed}"
                            + (f" ({note})" if note else ""))
    return value


def check_min_share(value: object, where: str) -> None:
    """``min_share``: ``"auto"`` or a number ``0 <= min_share < 0.5``; a :class:`DialevalError` otherwise."""
    if value == "auto":
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 0.5:
        raise DialevalError(f"{where}: min_share = {describe(value)} is not allowed; allowed are 'auto' (half an "
                            "annotator's share, 1/(2n), n the median number of annotators of the scale's training "
                            "items; 0 when n < 2) or numbers 0 <= min_share < 0.5 (0: off)")


def resolve_min_share(value: float | str, votes: np.ndarray) -> float:
    """The ``min_share`` of one scale: ``value``, or for ``"auto"`` ``1 / (2 n)`` with ``n`` the median number of
    annotators of its training items (``votes``, :attr:`Targets.votes <dialeval.models.turndata.Targets.votes>`)
    when ``n >= 2``, and 0 (no bin emptied) otherwise.

    Half an annotator's share is a statement about the sampling noise of a crowd's distribution (:func:`sparsify`);
    an item of one annotator (ConTurE's consolidated turn score, DBDC with one label per turn) has a one-hot gold
    that says nothing of it, and 1/(2 x 1) = 0.5 would empty every bin but the largest: not a share the
    parameter allows (< 0.5), so a model trained with it could never be loaded.

    Examples
    --------
    >>> resolve_min_share("auto", np.array([19, 19, 18])), resolve_min_share(0.01, np.array([19]))
    (0.02631578947368421, 0.01)
    >>> resolve_min_share("auto", np.array([1, 1, 3])), resolve_min_share("auto", np.array([2, 2]))
    (0.0, 0.25)
    """
    if value != "auto":
        return float(value)
    n = float(np.median(votes)) if len(votes) else 0.0
    return 1.0 / (2.0 * n) if n >= AUTO_MIN_ANNOTATORS else 0.0


AUTO_MIN_ANNOTATORS = 2
"""``min_share="auto"`` empties bins only when the median training item of a scale has at least this many
annotators (:func:`resolve_min_share`)."""


def _saved_shares(meta: dict, model: Estimator, where: str) -> dict[str, float]:
    """A saved model's ``min_share`` per scale (``min_shares`` in model.json; else its numeric parameter)."""
    saved = meta.get("min_shares")
    if saved is None:
        share = model.params["min_share"]
        if share == "auto":
            raise DialevalError("the model says min_share = 'auto' but lists no min_shares per scale; "
                                "retrain it or set a number", file=where)
        return dict.fromkeys(model.learnt, float(share))
    if not isinstance(saved, dict) or set(saved) - set(model.learnt):
        raise DialevalError(f"min_shares {describe(saved)} is not allowed; allowed is an object of the model's "
                            f"scales ({', '.join(model.learnt)}) to numbers", file=where)
    saved = dict(saved)
    for name, v in saved.items():
        if isinstance(v, str):  # a saved share is resolved: a number, never 'auto'
            raise DialevalError(f"min_shares[{name!r}] = {describe(v)} is not allowed; allowed are numbers "
                                "0 <= share < 0.5", file=where)
        if model.params["min_share"] == "auto" and v == 0.5:
            # saved before resolve_min_share gave 0 for items of one annotator: 'auto' then resolved to
            # 1/(2 x 1); the model could not be loaded, so nothing ever predicted with that share
            saved[name] = 0.0
            continue
        check_min_share(v, f"min_shares[{name!r}]")
    return {n: float(saved.get(n, 0.0)) for n in model.learnt}


def sparsify(probs: np.ndarray, share: float) -> np.ndarray:
    r"""Distributions with the bins below ``share`` emptied and each row rescaled to sum 1.

    .. math:: p'_i = \frac{p_i\,[p_i \ge s \lor p_i = \max_j p_j]}{\sum_k p_k\,[p_k \ge s \lor p_k = \max_j p_j]}

    The gold of an item is the share of its ``n`` annotators on each bin, so a bin of probability ``p < 1/(2n)``
    holds no label more often than not (``(1 - p)^n > 0.6``), and the measures treat an empty bin apart
    (RSNOD averages over the non-empty bins of each side; NMD and JSD gain when a predicted tail matches an
    empty one). A row's largest bin is always kept; ``share`` 0 returns ``probs`` itself.

    Examples
    --------
    >>> sparsify(np.array([[0.01, 0.49, 0.5], [0.2, 0.3, 0.5]]), 0.05).tolist()
    [[0.0, 0.494949494949495, 0.5050505050505051], [0.2, 0.3, 0.5]]
    """
    if share <= 0 or not len(probs):
        return probs
    keep = (probs >= share) | (probs == probs.max(axis=1, keepdims=True))
    out = np.where(keep, probs, 0.0)
    return out / out.sum(axis=1, keepdims=True)
