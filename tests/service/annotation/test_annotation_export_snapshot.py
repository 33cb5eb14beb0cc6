"""A project's export while an annotator is being excluded (PostgreSQL, READ COMMITTED): the annotator is in
the corpus with all their labels or not at all, never as a phantom with empty labels."""

from __future__ import annotations

import random
import threading

from annotation_support import annotate_all, chats_corpus
from sqlalchemy import event

from dialeval.service.annotation import projects
from dialeval.service.annotation.export import project_corpus


def _before_labels_are_read(engine, action) -> None:
    """Run ``action`` in another thread (and wait for it) right before this thread first reads labels."""
    me, done = threading.get_ident(), []

    def hook(conn, cursor, statement, parameters, context, executemany) -> None:
        if not done and threading.get_ident() == me and "annotation_labels" in statement:
            done.append(True)
            t = threading.Thread(target=action)
            t.start()
            t.join()

    event.listen(engine, "before_cursor_execute", hook)


def test_export_while_an_annotator_is_excluded(pg_projects):
    pj = pg_projects
    codes = pj.project("p1", chats_corpus(4), overlap=2, n_codes=2)
    annotate_all(pj, codes, "p1", random.Random(5))
    excluded = []
    _before_labels_are_read(pj.db.engine, lambda: excluded.append(
        projects.exclude_annotator(pj.db, "p1", "A001", pj.clock())))
    corpus = project_corpus(pj.db, "p1")
    assert excluded and excluded[0]["annotator"] == "A001"  # the exclusion ran, in the middle of the export
    units = [u for d in corpus for u in (d, *d.turns) if u.annotators]
    assert units and all(u.annotators == ["A002"] for u in units)  # the excluded annotator is not there at all
    for u in units:
        for scale, values in u.labels.items():
            assert None not in values, (scale, values)
    assert project_corpus(pj.db, "p1").is_annotated()  # and A002's labels are whole, read again
