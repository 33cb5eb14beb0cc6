"""dialeval: evaluate dialogue systems against the distribution of many annotators' judgements.

The few verbs: :func:`evaluate` (score a run), :func:`load_gold` (prepare gold once),
:func:`read_corpus` (any supported corpus format), :func:`predict` (a model's predicted distributions).
"""

from __future__ import annotations

import importlib.metadata as _metadata

try:
    __version__ = _metadata.version("dialeval")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, DialevalWarning
from dialeval.scoring import PreparedGold, Scores, evaluate, load_gold, score


def read_corpus(path, format=None, **options):
    """Read a corpus in any supported format (see :func:`dialeval.io.read_corpus`)."""
    from dialeval.io import read_corpus as _read
    return _read(path, format=format, **options)


def predict(dialogues, **kwargs):
    """Predict annotator distributions with a model (see :func:`dialeval.models.predict`)."""
    from dialeval.models import predict as _predict
    return _predict(dialogues, **kwargs)


def predict_many(inputs, out, **kwargs):
    """Predict many shards into a folder, in-process or on Dask (see :func:`dialeval.pipeline.predict_many`)."""
    from dialeval.pipeline import predict_many as _predict_many
    return _predict_many(inputs, out, **kwargs)


__all__ = ["Corpus", "DialevalError", "DialevalWarning", "Dialogue", "PreparedGold", "Scale", "Scores", "Turn",
           "__version__", "evaluate", "load_gold", "predict", "predict_many", "read_corpus", "score"]
