"""Ways in and out: one module per corpus format, all mapping onto :class:`dialeval.corpus.Corpus`."""

from __future__ import annotations

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError

FORMATS = ("stc3",)


def read_corpus(path, format: str | None = None) -> Corpus:
    """Read a corpus; ``format`` is one of :data:`FORMATS` (detected when None)."""
    fmt = format or "stc3"
    if fmt not in FORMATS:
        raise DialevalError(f"format {fmt!r} is not allowed; allowed are " + ", ".join(FORMATS))
    from dialeval.io.stc3 import read_stc3
    return read_stc3(path)
