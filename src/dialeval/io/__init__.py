"""Ways in and out: one module per corpus format, all mapping onto :class:`dialeval.corpus.Corpus`.

The formats are registered once, in :mod:`dialeval.io.formats`; :func:`read_corpus` detects the format of a
path (:mod:`dialeval.io.detect`) and says why when it cannot.
"""

from __future__ import annotations

import os

from dialeval.corpus import Corpus
from dialeval.io.formats import FORMATS as REGISTRY
from dialeval.io.formats import get as get_format

FORMATS = tuple(REGISTRY)
"""Names of the corpus formats dialeval reads."""


def read_corpus(path: str | os.PathLike | list, format: str | None = None, **options) -> Corpus:
    """Read a corpus in any registered format, detected from the path when ``format`` is None.

    Parameters
    ----------
    path : path or list
        A file, or a folder for the formats stored as many files (DBDC logs, DSTC9 ratings, WOCHAT XML); or
        the records of an STC-3 dataset already parsed (a list).
    format : str, optional
        One of :data:`FORMATS` (``stc3``, ``wochat``, ``dbdc``, ``conture``, ``dstc9``).
    **options
        Passed to the reader, e.g. ``names="replace"`` for WOCHAT or ``max_bytes``.

    Raises
    ------
    DialevalError
        An unknown format; a path whose format cannot be told (the message says why, for each format);
        any reader's error.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "chatbot1.json"
    >>> _ = p.write_text(json.dumps([{"context": "User: hi\\nSystem: hello\\n", "likeable": 3}]))
    >>> c = read_corpus(p)
    >>> c.format, len(c)
    ('dstc9', 1)
    """
    if format is None and isinstance(path, list | tuple):
        format = "stc3"
    if format is None:
        from dialeval.io.detect import detect
        format = detect(path)
    return get_format(format).read(path, **options)


__all__ = ["FORMATS", "read_corpus"]
