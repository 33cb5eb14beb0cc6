"""The one registry of corpus formats: name, what it is, where it is specified, its reader and writer.

CLI choices (``--format``, ``--to``), detection and error messages all come from :data:`FORMATS`.
Readers and writers are named as ``module:function`` and imported when first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from dialeval.errors import DialevalError


@dataclass(frozen=True)
class Format:
    """One corpus format.

    ``reader(path, **options) -> Corpus``; ``writer(corpus, path, **options)`` (None: read only).
    ``reader_options`` names the keyword options its reader takes (others are refused); ``corpus`` is the
    short name of the corpus family for titles (figures, reports).
    """

    name: str
    title: str
    spec: str
    reader: str
    writer: str | None = None
    reader_options: tuple[str, ...] = ("max_bytes",)
    corpus: str = ""

    def _load(self, ref: str) -> Callable:
        module, func = ref.split(":")
        return getattr(importlib.import_module(module), func)

    def read(self, path, **options):
        unknown = sorted(set(options) - set(self.reader_options))
        if unknown:
            raise DialevalError(f"option(s) {', '.join(unknown)} do not apply to the {self.name} reader; it takes "
                                + (", ".join(self.reader_options) or "none"))
        return self._load(self.reader)(path, **options)

    def write(self, corpus, path, **options):
        if self.writer is None:
            raise DialevalError(f"format {self.name!r} is read only; writable formats are "
                                + ", ".join(writable()))
        return self._load(self.writer)(corpus, path, **options)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("stc3", "NTCIR-14 STC-3 / NTCIR-15-16 DialEval JSON", "FORMATS.md §1",
           "dialeval.io.stc3:read_stc3", "dialeval.io.convert:to_stc3", (), "STC-3 / DialEval"),
    Format("wochat", "WOCHAT chat-session XML with turn annotations", "FORMATS.md §2",
           "dialeval.io.wochat:read_wochat", "dialeval.io.wochat_writer:write_wochat", ("names", "max_bytes"),
           "WOCHAT"),
    Format("dbdc", "Dialogue Breakdown Detection Challenge *.log.json", "FORMATS.md §3",
           "dialeval.io.dbdc:read_dbdc", "dialeval.io.dbdc_writer:write_dbdc", corpus="DBDC"),
    Format("conture", "ConTurE turn-level evaluation JSON", "FORMATS.md §4",
           "dialeval.io.conture:read_conture", corpus="ConTurE"),
    Format("dstc9", "DSTC9 interactive-evaluation ratings (chatbot*.json)", "FORMATS.md §5",
           "dialeval.io.dstc9:read_dstc9", corpus="DSTC9"),
)}


def names() -> list[str]:
    """Registered format names."""
    return list(FORMATS)


def writable() -> list[str]:
    """Formats dialeval can write."""
    return [f.name for f in FORMATS.values() if f.writer is not None]


def get(name: str) -> Format:
    """The format called ``name``; a :class:`DialevalError` listing the allowed names otherwise."""
    key = str(name).strip().lower()
    if key not in FORMATS:
        raise DialevalError(f"format {name!r} is not allowed; allowed are " + ", ".join(FORMATS))
    return FORMATS[key]


def corpus_title(corpus: object) -> str:
    """A corpus named for a title: its family and size, never a file path (``DSTC9: 2200 dialogues``).

    Examples
    --------
    >>> from dialeval.corpus import Corpus
    >>> corpus_title(Corpus([], format="conture"))
    'ConTurE: 0 dialogues'
    """
    fmt = FORMATS.get(getattr(corpus, "format", ""))
    name = (fmt.corpus or fmt.name) if fmt is not None else "corpus"
    n = len(corpus)  # type: ignore[arg-type]
    return f"{name}: {n} dialogue{'s' if n != 1 else ''}"
