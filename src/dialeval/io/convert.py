"""Converting a corpus to another format, saying what was mapped and refusing to drop labels silently."""

from __future__ import annotations

import os

from dialeval.corpus import Corpus, Dialogue, Turn, merge_blocks
from dialeval.errors import DialevalError
from dialeval.io import stc3
from dialeval.io.formats import get as get_format
from dialeval.io.formats import writable
from dialeval.io.writers import (
    WriteReport,
    map_senders,
    refuse_or_drop_labels,
    restore_source_ids,
    unheld_metadata,
)


def to_stc3(corpus: Corpus, path: str | os.PathLike, *, sender_map: dict[str, str] | None = None,
            drop_labels: bool = False) -> WriteReport:
    """Write a corpus as STC-3 JSON: senders customer/helpdesk, turns merged into utterance blocks.

    ``sender_map`` renames senders (e.g. ``{"user": "customer", "system": "helpdesk"}``). Labels other than
    STC-3's (A, S, E quality and nugget types) are an error unless ``drop_labels``. A WOCHAT dialogue that keeps
    its original id in ``<source_id>`` is written under that id (:func:`dialeval.io.writers.restore_source_ids`).
    Metadata STC-3 JSON has no place for (DBDC's speaker-id, time...; WOCHAT's declared names, kept tags) is
    listed in the report as dropped (:func:`dialeval.io.writers.unheld_metadata`).
    """
    corpus, report = map_senders(corpus, sender_map, set(stc3.SENDERS).__contains__,
                                 "STC-3 senders are customer and helpdesk", "user=customer,system=helpdesk")
    corpus = restore_source_ids(corpus, report)
    report.files = [str(path)]
    ok = set(stc3.stc3_scales())
    other = [n for n in corpus.scales if n not in ok and _labelled(corpus, n)]
    refuse_or_drop_labels(other, drop_labels, report, "STC-3 JSON, which holds quality A/S/E and nugget types only",
                          corpus.source)
    report.dropped.extend(unheld_metadata(corpus, dbdc_fields_held=False))
    keep = [n for n in corpus.scales if n in ok]
    dialogues = [Dialogue(d.id, [Turn(t.sender, list(t.utterances),
                                      {k: v for k, v in t.labels.items() if k in keep}, t.annotators, dict(t.meta))
                                 for t in d.turns],
                          {k: v for k, v in d.labels.items() if k in keep}, d.annotators, dict(d.meta))
                 for d in corpus]
    mapped = Corpus(dialogues, {n: s for n, s in corpus.scales.items() if n in keep}, corpus.format, corpus.source)
    # STC-3's turns are utterance blocks; a corpus read from STC-3 is written as it was read (its reader takes
    # two turns of one sender in a row, and merging them would move their nugget labels)
    blocks = mapped if corpus.format == "stc3" else merge_blocks(mapped)
    merged = sum(len(d.turns) for d in mapped) - sum(len(d.turns) for d in blocks)
    if merged:
        report.notes.append(f"{merged} turn(s) merged into the utterance block before them (same sender)")
    stc3.write_stc3(blocks, str(path))
    report.dialogues = len(blocks)
    report.turns = sum(len(d.turns) for d in blocks)
    report.labels = sum(sum(v is not None for v in vs) for d in blocks for vs in d.labels.values()) + \
        sum(sum(v is not None for v in vs) for d in blocks for t in d.turns for vs in t.labels.values())
    return report


def _labelled(corpus: Corpus, name: str) -> bool:
    return any(any(v is not None for v in d.labels.get(name, ())) or
               any(any(v is not None for v in t.labels.get(name, ())) for t in d.turns) for d in corpus)


def convert(corpus: Corpus, path: str | os.PathLike, to: str, **options) -> WriteReport:
    """Write ``corpus`` in format ``to`` (one of :func:`dialeval.io.formats.writable`).

    Options go to the writer: for ``wochat`` ``scale``, ``label_map``, ``ids``, ``drop_labels``, ``sender_map``
    (see :func:`dialeval.io.wochat.write_wochat`); for ``stc3`` and ``dbdc`` ``sender_map``, ``drop_labels``
    (:func:`to_stc3`, :func:`dialeval.io.dbdc_writer.write_dbdc`).
    """
    fmt = get_format(to)
    if fmt.writer is None:
        raise DialevalError(f"format {to!r} is read only; writable formats are " + ", ".join(writable()))
    return fmt.write(corpus, path, **options)
