"""Models that predict how a crowd of annotators would judge STC-3 customer–helpdesk dialogues.

The verbs: :func:`predict` (a submission file's records from a model: the shipped default for the
dialogues' language, or any saved model), :func:`train` (fit a model kind on an annotated corpus and
save it), :func:`load_model`, :func:`detect_language`; :func:`~dialeval.models.cv.cross_validate` scores
a kind by k-fold cross-validation. Model kinds (``uniform``, ``prior``, ``position``, ``linear``,
``neural``) share one interface, :class:`~dialeval.models.base.Estimator`.

Examples
--------
>>> import dialeval
>>> from dialeval.models import train, predict
>>> t = lambda s, u: {"sender": s, "utterances": [u]}
>>> data = [{"id": str(i), "turns": [t("customer", f"order {i} is late"), t("helpdesk", "sorry")],
...          "annotations": [{"quality": {"A": 1, "S": 0, "E": 0}, "nugget": ["CNUG0", "HNUG"]}]} for i in range(3)]
>>> model = train(data, kind="prior")
>>> records = predict([{"id": "x", "turns": [t("customer", "hello")]}], model=model, subtask="nugget")
>>> records[0]["nugget"][0]["CNUG0"]
0.999997
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dialeval.corpus import Corpus, expect_corpus, joint_scales
from dialeval.errors import DialevalError, describe, expect_instance
from dialeval.models.base import KINDS, Estimator, check_model_folder, kind_class
from dialeval.models.data import SUBTASKS, TurnTable, check_corpus, check_subtasks, has_subtasks

LANGUAGES = ("zh", "en")
"""Languages with a shipped default model (``src/dialeval/models/shipped/<lang>/``)."""

OPEN_DOMAIN = "open"
"""Name of the shipped English open-domain model (turn-level breakdown; ``shipped/index.json``)."""
SHIPPED_NAMES = (*LANGUAGES, OPEN_DOMAIN)

DEFAULT_KIND = "neural"
CJK_SHARE = 0.2
"""A corpus whose non-space characters are more than this share CJK ideographs is Chinese."""

SHIPPED = Path(__file__).parent / "shipped"
_SHIPPED_CACHE: dict[str, tuple[float, Estimator]] = {}


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2FA1F
            or 0xF900 <= o <= 0xFAFF)


def detect_language(corpus: Corpus | list | str | os.PathLike, sample: int = 200_000) -> str:
    """``"zh"`` when more than :data:`CJK_SHARE` of the text's non-space characters are CJK, else ``"en"``.

    Only the first ``sample`` characters of turn text are looked at. A corpus with no text is ``"en"``.

    Examples
    --------
    >>> t = lambda u: {"sender": "customer", "utterances": [u]}
    >>> detect_language([{"id": "1", "turns": [t("我的订单 order 123 还没到")]}])
    'zh'
    >>> detect_language([{"id": "1", "turns": [t("My order has not arrived.")]}])
    'en'
    """
    corpus = read_dialogues(corpus)
    cjk = total = 0
    for d in corpus.dialogues:
        for turn in d.turns:
            for u in turn.utterances:
                for ch in u:
                    if not ch.isspace():
                        total += 1
                        cjk += _is_cjk(ch)
            if total >= sample:
                break
        if total >= sample:
            break
    return "zh" if total and cjk / total > CJK_SHARE else "en"


def read_dialogues(dialogues: Corpus | list | str | os.PathLike) -> Corpus:
    """A Corpus from a Corpus, parsed STC-3 records, a path (format detected: STC-3 expected) or a list of
    paths (their dialogues one after the other: e.g. the Chinese and the English training files)."""
    if isinstance(dialogues, Corpus):
        return dialogues
    if isinstance(dialogues, list | tuple) and dialogues and all(isinstance(d, str | os.PathLike | Corpus)
                                                                 for d in dialogues):
        parts = [read_dialogues(d) for d in dialogues]
        if len(parts) == 1:
            return parts[0]
        langs = dict.fromkeys(p.language or detect_language(p) for p in parts)  # e.g. "zh+en"
        return Corpus([d for p in parts for d in p.dialogues], joint_scales(parts), parts[0].format,
                      " + ".join(str(p.source) for p in parts), "+".join(langs))
    if isinstance(dialogues, list | tuple):
        from dialeval.io.stc3 import read_stc3

        return read_stc3(list(dialogues))
    if isinstance(dialogues, str | os.PathLike):
        from dialeval import read_corpus

        return read_corpus(dialogues)
    raise DialevalError(f"dialogues must be a path, a list of STC-3 records or a Corpus; received "
                        f"{type(dialogues).__name__}")


def shipped_folder(lang: str) -> Path:
    """The folder of the shipped default model of ``lang``: ``shipped/index.json`` maps a language to a
    folder (one multilingual model serves both), else ``shipped/<lang>``."""
    index = SHIPPED / "index.json"
    if index.is_file():
        import json

        name = json.loads(index.read_text(encoding="utf-8")).get(lang)
        if isinstance(name, str) and name:
            return SHIPPED / name
    return SHIPPED / lang


def _shipped(lang: str) -> Estimator:
    folder = shipped_folder(lang)
    meta = folder / "model.json"
    if not meta.is_file():
        raise DialevalError(f"no shipped default model for {lang!r} in this installation (expected {folder}); "
                            "train one with `dialeval train TRAIN.json --out MODEL_DIR` and pass --model MODEL_DIR")
    mtime = meta.stat().st_mtime
    cached = _SHIPPED_CACHE.get(str(folder))
    if cached is None or cached[0] != mtime:
        cached = (mtime, Estimator.load(folder))
        _SHIPPED_CACHE[str(folder)] = cached
    return cached[1]


def load_model(model: Estimator | str | os.PathLike) -> Estimator:
    """A fitted model: ``model`` itself, the shipped default of ``"zh"``/``"en"``, or a folder saved by ``save``.

    Shipped defaults are loaded once per process (and again when their files change).

    Raises
    ------
    DialevalError
        An unfitted Estimator, a missing shipped model, or a path that is not a saved model.
    """
    if isinstance(model, Estimator):
        if not model.fitted:
            raise DialevalError(f"this {model.kind} model is not fitted; call fit(corpus) or load a saved one")
        return model
    if isinstance(model, str) and model in SHIPPED_NAMES and not Path(model).exists():
        return _shipped(model)
    if isinstance(model, str | os.PathLike):
        path = Path(model)
        if not path.exists():
            from dialeval.models import kinds as _kinds  # noqa: F401  (fills KINDS, for the hint)

            hint = f" ({model!r} is a model kind: train it first with `dialeval train`)" if model in KINDS else ""
            raise DialevalError(f"model {describe(str(model))} is neither a saved model folder nor one of "
                                f"{', '.join(LANGUAGES)} (the shipped defaults){hint}")
        return Estimator.load(path)
    raise DialevalError(f"model must be a path, {' or '.join(repr(x) for x in LANGUAGES)} or an Estimator; "
                        f"received {type(model).__name__}")


def predict(dialogues: Corpus | list | str | os.PathLike, model: Estimator | str | os.PathLike | None = None,
            lang: str | None = None, subtask: str = "both", out: str | os.PathLike | None = None,
            progress: bool | None = None) -> list[dict]:
    """Predict the annotators' distributions of STC-3 dialogues as a submission file's records.

    Parameters
    ----------
    dialogues : path, list of dict or Corpus
        STC-3/DialEval dialogues (annotations, if any, are ignored).
    model : path, ``"zh"``, ``"en"`` or Estimator, optional
        A saved model folder, a shipped default, or a fitted model. Default: the shipped default of
        ``lang``.
    lang : {'zh', 'en'}, optional
        Only used without ``model``: which shipped default; detected from the text when None
        (:func:`detect_language`).
    subtask : {'both', 'quality', 'nugget'}
        What to predict; the model must have been trained for it.
    out : path, optional
        Also write the records there as a run file (JSON, written atomically).
    progress : bool, optional
        Progress bars of the model's long work (None: when stderr is a terminal).

    Returns
    -------
    list of dict
        ``[{"id", "quality": {"A": {"2": p, ...}, ...}, "nugget": [{"CNUG0": p, ...}, ...]}]`` (FORMATS.md §1),
        in the order of ``dialogues``; scored by :func:`dialeval.evaluate`.

    Warns
    -----
    TrainingDataWarning
        When some of ``dialogues`` were in the model's training data (recognised by content, even renamed;
        :mod:`dialeval.models.leakage`): their predictions say little about the model.
    """
    subtasks = check_subtasks(subtask)
    if lang is not None and lang not in LANGUAGES:
        raise DialevalError(f"lang {describe(lang)} is not allowed; allowed are " + ", ".join(LANGUAGES))
    if out is not None and (not isinstance(out, str | os.PathLike) or not os.fspath(out)):
        raise DialevalError(f"out must be the path of a file to write; received {describe(out)}")
    corpus = read_dialogues(dialogues)
    stc3 = has_subtasks(check_corpus(corpus))
    if model is None:
        model = (lang or detect_language(corpus)) if stc3 else OPEN_DOMAIN
    est = load_model(model)
    records = run_records(corpus, est, subtasks, progress=progress)
    if out is not None:
        from dialeval.io.runs import write_run

        write_run(records, str(out))
    return records


def check_predictable(corpus: Corpus, est: Estimator, subtasks: tuple[str, ...] = SUBTASKS) -> bool:
    """The checks :func:`run_records` makes before predicting, alone: an error when ``est`` cannot predict
    ``subtasks`` of STC-3 dialogues (trained for other subtasks), or knows no scale of ``corpus`` nor a compatible
    one (:func:`dialeval.models.transfer.plan`). Returns whether the run is STC-3 records (a model of STC-3 on
    STC-3 dialogues) rather than the per-item layout of the corpus's other scales."""
    if est.scales or not has_subtasks(check_corpus(corpus)):
        from dialeval.models.transfer import plan

        plan(corpus, est)
        return False
    lacking = [s for s in subtasks if s not in est.subtasks]
    if lacking:
        raise DialevalError(f"the {est.kind} model was trained for {', '.join(est.subtasks)} only; it cannot "
                            f"predict {', '.join(lacking)} (ask for {est.subtasks[0]} only: "
                            f"--subtask {est.subtasks[0]}, or subtask={est.subtasks[0]!r} in Python)")
    return True


def run_records(corpus: Corpus, est: Estimator, subtasks: tuple[str, ...] = SUBTASKS, *,
                progress: bool | None = None, check_training: bool = True) -> list[dict]:
    """A fitted model's predictions on ``corpus`` as the records of a run that :func:`dialeval.evaluate`
    scores against the corpus's gold: STC-3 records of ``subtasks`` for a model of STC-3 on STC-3 dialogues,
    the per-item layout of the corpus's other scales otherwise (:mod:`dialeval.models.transfer`)."""
    expect_corpus(corpus)
    expect_instance(est, Estimator, "est", "; load one with dialeval.models.load_model(path)")
    stc3 = check_predictable(corpus, est, subtasks)
    saved = est.progress
    if progress is not None:
        est.progress = progress
    try:
        if not stc3:
            from dialeval.models.transfer import predict_turn_scales

            return predict_turn_scales(corpus, est, check_training=check_training)
        table = TurnTable.from_corpus(corpus)
        return est.predict(table, check_training=check_training).select(subtasks).to_records(table)
    finally:
        est.progress = saved


def train(corpus_or_path: Corpus | list | str | os.PathLike, kind: str = DEFAULT_KIND, subtask: str = "both",
          seed: int = 0, params: dict | None = None, out: str | os.PathLike | None = None,
          progress: bool | None = None) -> Estimator:
    """Fit a model kind on an annotated STC-3 corpus; save it to ``out`` (a folder) when given.

    Parameters
    ----------
    corpus_or_path : Corpus, list of dict, path or list of paths
        Annotated dialogues (every dialogue labelled for the subtasks asked); several files are trained on
        together (the shipped model: the Chinese and the English training files).
    kind : str, default ``"neural"``
        A registered kind: ``uniform``, ``prior``, ``position``, ``linear``, ``neural``.
    subtask : {'both', 'quality', 'nugget'}
    seed : int in 0..2**32-1 (a neural ensemble of k members: 0..2**32-k, its members use seed..seed+k-1)
        Same seed, same data: the same model.
    params : dict, optional
        The kind's hyper-parameters (an unknown name is an error listing the allowed ones).
    out : path, optional
        Folder to save the model to (``model.json`` + ``arrays.npz``).
    progress : bool, optional
        Progress bars (None: when stderr is a terminal).

    Returns
    -------
    Estimator
        The fitted model; ``model.info["language"]`` is the corpus's language (detected when unknown).
    """
    cls = kind_class(kind)
    if params is not None and (not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params)):
        raise DialevalError(f"params {describe(params)} are not allowed; allowed is a dict of parameter name -> "
                            "value, e.g. {'C': 4.0}")
    model = cls(subtask, seed, progress=progress, **dict(params or {}))
    if out is not None:
        check_model_folder(out)  # before the training, not after it
    corpus = read_dialogues(corpus_or_path)
    model.fit(corpus)
    model.info.setdefault("language", corpus.language or detect_language(corpus))
    if out is not None:
        model.save(out)
    return model


__all__ = ["DEFAULT_KIND", "KINDS", "LANGUAGES", "Estimator", "detect_language", "kind_class", "load_model",
           "predict", "read_dialogues", "run_records", "train"]
