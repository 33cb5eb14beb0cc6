"""A project's finished labels as a :class:`~dialeval.corpus.Corpus`, written by the existing writers.

Only finished assignments of annotators who were not excluded count. Each labelled turn (or the dialogue,
for dialogue-level scales) holds, for each scale, one label per annotator who finished the item, in the
order of the annotators' ids (``A001``, ``A002``...), with ``annotators`` set to those ids: the labels as
given, never merged. Optional WOCHAT tags are ``yes`` where the annotator set them and ``no`` otherwise.

The corpus is written as WOCHAT XML, STC-3 JSON or DBDC logs through :func:`dialeval.io.convert.convert`
(the one registry of formats), so ``read_corpus``, ``dialeval gold``, ``corpus stats``, ``evaluate``,
``train`` and ``correlate`` take the export as it is.
"""

from __future__ import annotations

import os
from collections import defaultdict

from sqlalchemy import select

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.convert import convert
from dialeval.io.formats import writable
from dialeval.io.wochat import BINARY_LEVELS, OPTIONAL_TAGS
from dialeval.io.wochat_writer import known_maps
from dialeval.io.writers import WriteReport
from dialeval.service.annotation import assignment as policy
from dialeval.service.annotation.projects import get_project, not_carried_note, scheme_of
from dialeval.service.annotation.schemes import DIALOGUE, Scheme
from dialeval.service.annotation.tables import AnnotationItem, Annotator, Assignment, Label
from dialeval.service.db import Database
from dialeval.service.errors import Conflict, Invalid


def project_corpus(db: Database, name: str, *, finished_only: bool = True) -> Corpus:
    """The items of project ``name`` with every finished annotation (``finished_only=False``: the
    unfinished ones too, for the organiser's view of agreement so far)."""
    p = get_project(db, name)
    scheme = scheme_of(p)
    states = ("finished",) if finished_only else ("finished", "active", "expired")
    with db.read() as s:
        items = list(s.scalars(select(AnnotationItem).where(AnnotationItem.project_id == p.id)
                               .order_by(AnnotationItem.position)))
        # one statement, so one snapshot on PostgreSQL too (READ COMMITTED): an annotator excluded meanwhile
        # is in it with all their labels or not at all
        rows = s.execute(select(Assignment.id, Assignment.item_id, Annotator.number, Label.turn, Label.scale,
                                Label.value)
                         .join(Annotator, Annotator.id == Assignment.annotator_id)
                         .outerjoin(Label, Label.assignment_id == Assignment.id)
                         .where(Assignment.project_id == p.id, Assignment.state.in_(states),
                                Annotator.excluded_at.is_(None))).all()
    given: dict[int, dict[tuple[int, str], str]] = defaultdict(dict)
    by_item: dict[int, set[tuple[int, int]]] = defaultdict(set)
    for aid, item_id, number, turn, scale, value in rows:
        by_item[item_id].add((number, aid))
        if scale is not None:  # None: an assignment without labels yet (outer join)
            given[aid][(turn, scale)] = value
    dialogues = []
    for it in items:
        who = sorted(by_item.get(it.id, ()))
        ids = [policy.annotator_id(n) for n, _ in who]
        data = it.dialogue
        turns = [Turn(t["sender"], list(t["utterances"]), meta=dict(t.get("meta") or {})) for t in data["turns"]]
        d = Dialogue(data["id"], turns, meta=dict(data.get("meta") or {}))
        if who:
            for u, controls in scheme.data_units([t.sender for t in turns], hidden=p.hide_speakers):
                target = d if u == DIALOGUE else turns[u]
                target.annotators = list(ids)
                for c in controls:
                    default = "no" if c.flag else None
                    target.labels[c.name] = [given[aid].get((u, c.name), default) for _, aid in who]
        dialogues.append(d)
    return Corpus(dialogues, scheme.scales(hidden=p.hide_speakers), scheme.format, f"annotation project {p.name}",
                  meta={"project": p.name, "scheme": scheme.name, "overlap": p.overlap})


def export_annotations(db: Database, name: str, to: str, out: str | os.PathLike, *,
                       sender_map: dict[str, str] | None = None, drop_labels: bool = False) -> WriteReport:
    """Write project ``name``'s finished annotations in format ``to`` (wochat, stc3, dbdc) at ``out``.

    Items no annotator finished yet are written without labels (WOCHAT, DBDC) so that the dialogues are
    all there; a format that cannot hold the scheme's labels is refused by its writer, naming them, unless
    ``drop_labels``. ``sender_map`` renames senders first (``{"user": "customer", "system": "helpdesk"}`` for
    STC-3), as ``dialeval corpus convert --senders`` does.

    Raises
    ------
    Invalid
        ``to`` is not a writable format; or WOCHAT XML cannot hold the scheme's labels (STC-3's A, S, E and
        nuggets) and ``drop_labels`` is not set: the message names what does (the scheme's own format, or
        ``drop_labels``), not the writer's ``scale``/``label_map``, which a project's export does not take.
    Conflict
        No annotation is finished yet.
    """
    if to not in writable():
        raise Invalid(f"export format {to!r} is not allowed; allowed are " + ", ".join(writable()))
    corpus = project_corpus(db, name)
    if not corpus.is_annotated():
        raise Conflict(f"project {name!r} has no finished annotation yet; nothing to export")
    project = get_project(db, name)
    scheme = scheme_of(project)
    options: dict = {"sender_map": sender_map, "drop_labels": drop_labels}
    if to == "wochat":
        turn_choice = [c for c in scheme.controls if c.scale.level == "turn" and not c.flag]
        if scheme.wochat_map:
            options.update(scale=turn_choice[0].name, label_map=dict(scheme.wochat_map))
        elif not drop_labels:
            _refuse_unmapped_wochat(corpus, scheme, name)
        ids = [d.id for d in corpus]
        from dialeval.io.wochat import ID_PATTERN
        if all(ID_PATTERN.match(i) for i in ids):
            options["ids"] = "strict"
    report = convert(corpus, out, to, **options)
    if note := not_carried_note(project, project.source or "the source corpus"):
        report.notes.append(note)
    return report


def _refuse_unmapped_wochat(corpus: Corpus, scheme: Scheme, name: str) -> None:
    """:class:`Invalid` when WOCHAT XML cannot hold the labels of ``scheme`` (it has no scale written as
    VALID/ACCEPTABLE/INVALID, neither known to the writer nor mapped by the scheme), naming the ways this export
    has: the scheme's own format, or ``drop_labels``. (The writer's own refusal would suggest ``scale`` and
    ``label_map``, which :func:`export_annotations` does not take.)"""
    if any(n in known_maps() for n in corpus.scales):
        return
    lost = [n for n, sc in corpus.scales.items() if not (n.upper() in OPTIONAL_TAGS and sc.levels == BINARY_LEVELS)]
    if not lost:
        return
    other = (f"--to {scheme.format} (in Python to={scheme.format!r}) writes them all; "
             if scheme.format in writable() and scheme.format != "wochat" else "")
    raise Invalid(f"project {name!r} (scheme {scheme.name}) cannot be written as WOCHAT XML, which holds per-turn "
                  "VALID/ACCEPTABLE/INVALID and the optional yes/no tags only: its labels on " + ", ".join(lost)
                  + f" would be lost; {other}--drop-labels (in Python drop_labels=True) writes the dialogues "
                  "without them")
