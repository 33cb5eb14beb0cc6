"""Gold prepared once, for any corpus: dialogue ids, items per scale, the tasks that score them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from dialeval.corpus import Corpus, merge_blocks
from dialeval.distributions import Distributions, gold_distributions
from dialeval.errors import DialevalError, describe
from dialeval.io.stc3_gold import Stc3Gold, build_gold
from dialeval.scoring.layouts import AlignedRun, ItemLayout, ScaleItems, Stc3Layout
from dialeval.tasks import Task, tasks_for

STC3 = "stc3"
"""The corpus format whose runs are STC-3 records (:class:`~dialeval.scoring.layouts.Stc3Layout`)."""


class PreparedGold:
    """Gold distributions built once, to score many runs against (see :func:`load_gold`).

    ``ids`` are the dialogues in gold order; ``items[scale]`` the gold items of each scale
    (:class:`~dialeval.scoring.layouts.ScaleItems`); ``tasks`` the tasks that score them
    (:func:`dialeval.tasks.tasks_for`), in that order.
    """

    def __init__(self, layout: Stc3Layout | ItemLayout) -> None:
        self.layout = layout
        self.items: dict[str, ScaleItems] = layout.items()
        self.tasks: tuple[Task, ...] = tasks_for({n: it.scale for n, it in self.items.items()})

    @property
    def ids(self) -> list[str]:
        return self.layout.ids

    @property
    def file(self) -> str | None:
        return self.layout.file

    @property
    def subtasks(self) -> tuple[str, ...]:
        """The STC-3 subtasks (``quality``, ``nugget``) this gold scores; empty for other corpora."""
        return tuple(t.subtask for t in self.tasks if t.subtask is not None)

    @property
    def data(self) -> Stc3Gold:
        """The STC-3 gold arrays (an error for another corpus)."""
        if not isinstance(self.layout, Stc3Layout):
            raise DialevalError("this gold is not an STC-3/DialEval dataset; its scales are " + ", ".join(self.items),
                                file=self.file)
        return self.layout.data

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return (f"PreparedGold({len(self)} dialogues, tasks={tuple(t.name for t in self.tasks)}, "
                f"file={self.file!r})")

    def read_run(self, source: object) -> AlignedRun:
        """A run (path, parsed records, or a layout's folder) aligned with this gold."""
        return self.layout.read(source)

    def subset(self, ids: list[str] | np.ndarray) -> PreparedGold:
        """The gold restricted to some dialogues (e.g. a public half), in gold order."""
        row = {d: r for r, d in enumerate(self.ids)}
        keep = np.zeros(len(row), dtype=bool)
        for i in ids:
            if i not in row:
                raise DialevalError(f"id {describe(i)} is not in the gold", file=self.file)
            keep[row[i]] = True
        return PreparedGold(self.layout.take(keep))


def load_gold(source: object, *, format: str | None = None, blocks: bool = False) -> PreparedGold:
    """Prepare the gold of any corpus dialeval reads, to score runs against it.

    Parameters
    ----------
    source : path, list of dict, Corpus, dict of Distributions, or PreparedGold
        An annotated corpus (STC-3/DialEval JSON, parsed STC-3 records, DBDC, WOCHAT, ConTurE, DSTC9; see
        :func:`dialeval.io.read_corpus`), or gold distributions already built.
    format : str, optional
        The corpus format when it cannot be detected.
    blocks : bool, default False
        Merge consecutive turns of one sender into utterance blocks first (not for STC-3, whose turns are
        blocks already).

    Examples
    --------
    >>> from dialeval import load_gold
    >>> g = load_gold([{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...                 "annotations": [{"quality": {"A": 1, "S": 0, "E": 0}, "nugget": ["CNUG0"]}]}])
    >>> g.subtasks, [t.name for t in g.tasks]
    (('quality', 'nugget'), ['stc3-dq', 'stc3-nd'])
    """
    if isinstance(source, PreparedGold):
        return source
    if isinstance(source, dict) and source and all(isinstance(v, Distributions) for v in source.values()):
        return PreparedGold(ItemLayout(source))
    if isinstance(source, list) or (not isinstance(source, Corpus) and gold_format(source, format) == STC3):
        if blocks:
            raise DialevalError("blocks: STC-3 turns are utterance blocks already; leave it off for STC-3 gold")
        return PreparedGold(Stc3Layout(build_gold(source)))  # type: ignore[arg-type]
    if not isinstance(source, Corpus):
        from dialeval.io import read_corpus

        source = read_corpus(source, format=format)
    if source.format == STC3 and not blocks:
        from dialeval.io import stc3

        return PreparedGold(Stc3Layout(build_gold(stc3.to_records(source))))
    _check_ids(source)
    corpus = merge_blocks(source) if blocks else source
    dists = gold_distributions(corpus)
    if not dists:
        raise DialevalError("the gold corpus has no labels to score against (is it a test file?)", file=corpus.source)
    return PreparedGold(ItemLayout(dists, corpus.source))


def _check_ids(corpus: Corpus) -> None:
    """A gold's dialogue ids are strings, each once (a corpus built in Python is not checked by a reader: a
    repeated id merged two dialogues' items, and int ids never matched a run's)."""
    seen: set[str] = set()
    for i, d in enumerate(corpus.dialogues):
        if not isinstance(d.id, str) or not d.id:
            raise DialevalError(f"dialogue {i}'s id {describe(d.id)} is not allowed; allowed are non-empty strings",
                                file=corpus.source)
        if d.id in seen:
            raise DialevalError("duplicate dialogue id: a gold holds each dialogue once", file=corpus.source,
                                dialogue=d.id)
        seen.add(d.id)


def gold_format(source: object, format: str | None = None, *, choose: str | None = None) -> str:
    """The corpus format of a gold path: ``format`` when given, else the detected one (``choose``: how the
    user names a format instead, in detection's error; :data:`dialeval.io.detect.CHOOSE` by default).

    When detection fails on a file that may be JSON, STC-3's (the default reader then says where the file goes
    wrong, with its line); on a folder or an XML file, detection's own reasons are the error.

    Raises
    ------
    DialevalError
        For an unknown ``format``, or detection's reasons on a folder or an XML file.
    """
    if format is not None:
        from dialeval.io.formats import get

        return get(format).name
    from dialeval.io.detect import CHOOSE, detect

    try:
        return detect(source, choose=choose or CHOOSE)  # type: ignore[arg-type]
    except DialevalError:
        path = Path(source) if isinstance(source, str | os.PathLike) else None
        # a pipe or a device: detection's reason says to give the format (reading it to look for '<' used it up)
        if path is not None and (path.is_dir() or (path.exists() and not path.is_file())):
            raise
        head = _head(path) if path is not None else b""
        if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<":   # XML: detection's reasons are the error
            raise
        made_from = _gold_document_source(head)
        if made_from is not None:  # 'the top level is a JSON dict; expected an array' did not say what it was
            raise DialevalError("is a gold distributions file written by `dialeval gold`, which is read as a run "
                                "(a perfect one); as gold, give the annotated corpus it was built from"
                                + (f": {made_from}" if made_from else ""), file=str(path)) from None
        return STC3


_GOLD_DOCUMENT = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"dialeval"\s*:\s*"gold"')
_SOURCE = re.compile(rb'"source"\s*:\s*("(?:[^"\\]|\\.)*")')


def _head(path: Path) -> bytes:
    """The first 4,096 bytes of ``path`` (none when it cannot be read: the reader says why)."""
    try:
        with path.open("rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


def _gold_document_source(head: bytes) -> str | None:
    """The ``source`` of a gold document :func:`dialeval.distributions.gold_document` wrote, from the ``head`` of
    its file (``""`` when it names none), or None when it is not one."""
    if not _GOLD_DOCUMENT.match(head):
        return None
    m = _SOURCE.search(head)
    try:
        return str(json.loads(m.group(1))) if m else ""
    except ValueError:
        return ""
