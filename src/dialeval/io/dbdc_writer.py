"""Writing DBDC ``*.log.json`` (FORMATS.md §3): one file per dialogue in a new folder, read back by
:func:`dialeval.io.dbdc.read_dbdc` into the same dialogues, turns and breakdown labels.

Senders must be ``user``/``system`` (speaker ``U``/``S``); the only labels DBDC holds are ``breakdown``
(O, T, X) with each annotator's id. A corpus without breakdown labels but with WOCHAT's ``validity`` labels
(read from WOCHAT XML, or DBDC written to WOCHAT) has them written back as breakdown labels, VALID, ACCEPTABLE,
INVALID -> O, T, X (the inverse of the WOCHAT writer's known map; the report says so). Other labels are an
error unless ``drop_labels``.

A WOCHAT dialogue that keeps its original id in ``<source_id>`` is written under that id, and the DBDC fields
the WOCHAT writer keeps as tags (``speaker-id``, ``group-id``; a turn's ``time``, ``annotation-id``; an
annotation's ``comment``, ``ungrammatical-sentence``; empty ones too) are written back as fields: DBDC -> WOCHAT
-> DBDC gives the original logs (but a field's number comes back as its text: ``"speaker-id": 42`` as ``"42"``).
WOCHAT metadata DBDC has no field for (declared names, timestamps, other kept tags) is listed in the report as
dropped.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError
from dialeval.io.atomic import claim_file_name
from dialeval.io.dbdc import BREAKDOWN, SPEAKERS, breakdown_scale
from dialeval.io.jsonarray import json_text
from dialeval.io.wochat import VALIDITY
from dialeval.io.wochat_writer import known_maps
from dialeval.io.writers import (
    DBDC_ANNOTATION_FIELDS,
    DBDC_DIALOGUE_FIELDS,
    DBDC_TURN_FIELDS,
    WriteReport,
    dbdc_fields,
    map_senders,
    off_sender_labels,
    refuse_or_drop_labels,
    restore_source_ids,
    unheld_metadata,
    write_folder,
)

_SPEAKER_OF = {v: k for k, v in SPEAKERS.items()}


def _validity_as_breakdown(corpus: Corpus, report: WriteReport) -> Corpus:
    """``corpus`` with its turns' validity labels moved to the breakdown scale (VALID, ACCEPTABLE, INVALID -> O,
    T, X), recorded in ``report``; the dialogues are copied, the caller's corpus is left as it was."""
    mapping = {v: k for k, v in known_maps()[BREAKDOWN].items()}  # the WOCHAT writer's map, inverted
    dialogues = []
    for d in corpus:
        turns = []
        for t in d.turns:
            labels = dict(t.labels)
            if VALIDITY in labels:
                labels[BREAKDOWN] = [None if x is None else mapping[x] for x in labels.pop(VALIDITY)]
            turns.append(replace(t, labels=labels))
        dialogues.append(replace(d, turns=turns))
    report.mapping, report.mapped_scale = mapping, VALIDITY
    scales = {n: s for n, s in corpus.scales.items() if n != VALIDITY} | {BREAKDOWN: breakdown_scale()}
    return replace(corpus, dialogues=dialogues, scales=scales)


def _labelled_scales(corpus: Corpus) -> list[str]:
    names = {n for d in corpus for n, v in d.labels.items() if any(x is not None for x in v)}
    names |= {n for d in corpus for t in d.turns for n, v in t.labels.items() if any(x is not None for x in v)}
    return sorted(names)


def write_dbdc(corpus: Corpus, path: str | os.PathLike, *, sender_map: dict[str, str] | None = None,
               drop_labels: bool = False) -> WriteReport:
    """Write ``corpus`` as DBDC logs: a new folder ``path`` with ``<dialogue-id>.log.json`` per dialogue.

    Parameters
    ----------
    corpus : Corpus
        Senders ``user`` and ``system``; turn labels on scale ``breakdown`` (O/T/X), per annotator.
    path : path
        A folder that does not exist or is empty.
    sender_map : dict, optional
        Renames senders first, e.g. ``{"customer": "user", "helpdesk": "system"}``.
    drop_labels : bool, default False
        Labels of other scales are an error unless True.

    Returns
    -------
    WriteReport

    Raises
    ------
    DialevalError
        Another sender, labels DBDC cannot hold (without ``drop_labels``), a non-empty folder.
    """
    if Path(path).suffix.lower() in (".json", ".xml", ".jsonl", ".gz"):
        raise DialevalError("DBDC logs are a folder with one <dialogue-id>.log.json per dialogue; give a folder "
                            "path, not a file name", file=str(path))
    corpus, report = map_senders(corpus, sender_map, _SPEAKER_OF.__contains__,
                                 "DBDC speakers are user (U) and system (S)", "customer=user,helpdesk=system")
    corpus = restore_source_ids(corpus, report)
    labelled = _labelled_scales(corpus)
    if BREAKDOWN not in labelled and VALIDITY in labelled:
        corpus = _validity_as_breakdown(corpus, report)
        labelled = _labelled_scales(corpus)
    off = off_sender_labels(corpus, BREAKDOWN, "system")
    if off:
        report.notes.append(f"{off} label(s) of user turns written as they are; DBDC's breakdown scale counts "
                            "system turns only, so its gold leaves them out")
    other = [n for n in labelled if n != BREAKDOWN]
    refuse_or_drop_labels(other, drop_labels, report, "DBDC logs, which hold breakdown labels (O, T, X) only",
                          corpus.source)
    files, used = [], {}
    report.dropped.extend(unheld_metadata(corpus, dbdc_fields_held=True))
    joined = 0
    for d in corpus:
        turns = []
        for i, t in enumerate(d.turns):
            labs = t.labels.get(BREAKDOWN) or []
            ids = (t.annotators or [str(a + 1) for a in range(len(labs))]) if labs else []
            extra = t.meta.get("annotation_extra") or []
            ann_tags = t.meta.get("annotator_tags") or []
            anns = []
            for a, (aid, lab) in enumerate(zip(ids, labs, strict=True)):
                if lab is not None:
                    fields = dbdc_fields(extra[a] if a < len(extra) and isinstance(extra[a], dict) else {},
                                         ann_tags[a] if a < len(ann_tags) else [], DBDC_ANNOTATION_FIELDS)
                    anns.append({"annotator-id": str(aid), "breakdown": lab} | fields)
            report.labels += len(anns)
            joined += len(t.utterances) > 1
            turns.append({"turn-index": i, "speaker": _SPEAKER_OF[t.sender], "utterance": "\n".join(t.utterances)}
                         | dbdc_fields(t.meta, t.meta.get("tags"), DBDC_TURN_FIELDS) | {"annotations": anns})
            report.turns += 1
        name = claim_file_name(used, d.id, ".log.json", file=corpus.source)
        files.append((name, json_text({"dialogue-id": d.id} | dbdc_fields(d.meta, d.meta.get("tags"),
                                                                           DBDC_DIALOGUE_FIELDS)
                                      | {"turns": turns}).encode()))
        report.dialogues += 1
    report.note_joined(joined)
    report.files = write_folder(Path(path), files)
    return report
