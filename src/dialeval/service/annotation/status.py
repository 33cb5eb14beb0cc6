"""The organiser's view of a project: progress, time per item, agreement so far, each annotator's agreement.

Agreement is Krippendorff's alpha per scale over the finished annotations, with the same code as
``dialeval corpus stats`` (:func:`dialeval.agreement.scale_agreement`). An annotator's agreement with the
rest is, over the units they labelled that others labelled too, the mean share of the other annotators
who gave the same label (1: always with the others; near 1/levels: chance; a careless annotator stands out).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict

from sqlalchemy import func, select

from dialeval.agreement import scale_agreement
from dialeval.service.annotation import assignment as policy
from dialeval.service.annotation.export import project_corpus
from dialeval.service.annotation.projects import get_project, scheme_of
from dialeval.service.annotation.tables import AnnotationItem, Annotator, Assignment, Label
from dialeval.service.db import Database, Invitation


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 1) if xs else None


def agreement_with_rest(corpus) -> dict[str, dict]:
    """For each annotator id: units compared and the mean share of the others agreeing (choice scales).

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn, Scale
    >>> t = Turn("system", ["x"], {"v": ["a", "a", "b"]}, ["A001", "A002", "A003"])
    >>> c = Corpus([Dialogue("d", [t])], {"v": Scale("v", ("a", "b"), "nominal", "turn")})
    >>> agreement_with_rest(c)["A003"]
    {'units': 1, 'agreement': 0.0}
    """
    scores: dict[str, list[float]] = defaultdict(list)
    choice = [n for n, sc in corpus.scales.items() if sc.levels != ("no", "yes")]
    for d in corpus:
        for unit in [d, *d.turns]:
            if not unit.annotators:
                continue
            for name in choice:
                labs = unit.labels.get(name)
                if not labs:
                    continue
                for i, (aid, lab) in enumerate(zip(unit.annotators, labs, strict=True)):
                    others = [x for j, x in enumerate(labs) if j != i and x is not None]
                    if lab is not None and others:
                        scores[aid].append(sum(x == lab for x in others) / len(others))
    return {a: {"units": len(v), "agreement": round(sum(v) / len(v), 3)} for a, v in scores.items()}


def annotation_status(db: Database, name: str) -> dict:
    """Progress, time per item, alpha per scale and per-annotator figures of project ``name`` (JSON-ready)."""
    p = get_project(db, name)
    with db.read() as s:
        finished = Counter(s.scalars(select(AnnotationItem.finished).where(AnnotationItem.project_id == p.id)))
        states = Counter(s.scalars(select(Assignment.state).where(Assignment.project_id == p.id)))
        n_labels = s.scalar(select(func.count()).select_from(Label)
                            .join(Assignment, Assignment.id == Label.assignment_id)
                            .where(Assignment.project_id == p.id))
        people = s.execute(select(Annotator, Invitation.label)
                           .join(Invitation, Invitation.id == Annotator.invitation_id)
                           .where(Annotator.project_id == p.id).order_by(Annotator.number)).all()
        done = s.execute(select(Assignment.annotator_id, Assignment.created_at, Assignment.finished_at)
                         .where(Assignment.project_id == p.id, Assignment.state == "finished")).all()
        active = Counter(s.scalars(select(Assignment.annotator_id).where(Assignment.project_id == p.id,
                                                                          Assignment.state == "active")))
    secs: dict[int, list[float]] = defaultdict(list)
    for aid, t0, t1 in done:
        secs[aid].append((t1 - t0).total_seconds())
    all_secs = [x for v in secs.values() for x in v]
    corpus = project_corpus(db, name)
    alphas = {}
    for scale in corpus.scales:
        ag = scale_agreement(corpus, scale)
        alphas[scale] = {"alpha": None if math.isnan(ag.alpha) else round(ag.alpha, 4), "kind": ag.kind,
                         "units": ag.units, "labels": ag.pairable, "note": ag.note}
    rest = agreement_with_rest(corpus)
    n_items = sum(finished.values())
    annotators = []
    for a, label in people:
        aid = policy.annotator_id(a.number)
        annotators.append({"annotator": aid, "label": label, "joined_at": a.joined_at.isoformat(),
                           "excluded": a.excluded_at is not None, "finished": len(secs.get(a.id, [])),
                           "active": active.get(a.id, 0), "median_seconds_per_item": _median(secs.get(a.id, [])),
                           "agreement_with_rest": rest.get(aid, {}).get("agreement"),
                           "units_compared": rest.get(aid, {}).get("units", 0)})
    complete = sum(c for f, c in finished.items() if f >= p.overlap)
    return {"project": p.name, "scheme": scheme_of(p).name, "overlap": p.overlap, "items": n_items,
            "complete_items": complete, "finished_annotations": sum(f * c for f, c in finished.items()),
            "needed_annotations": n_items * p.overlap,
            "progress": round(sum(min(f, p.overlap) * c for f, c in finished.items()) / (n_items * p.overlap), 4),
            "items_by_finished": {str(f): finished.get(f, 0) for f in range(p.overlap + 1)},
            "assignments": dict(states), "labels_saved": n_labels,
            "seconds_per_item": {"median": _median(all_secs),
                                 "mean": round(statistics.fmean(all_secs), 1) if all_secs else None},
            "alpha": alphas, "annotators": annotators}


SHOWN_ONE_BY_ONE = 10
"""Up to this k, the status table lists the items for each number of finished annotations 0..k; above it,
:func:`finished_buckets` summarises them."""
RANGES = 10
"""At most this many ranges of 1..k-1 finished annotations in the summary of a larger k."""


def finished_buckets(by_finished: dict[str, int], k: int) -> list[tuple[str, int]]:
    """How many items have how many finished annotations, as (label, items) for the status table.

    For k up to :data:`SHOWN_ONE_BY_ONE` every number 0..k is shown. For a larger k, 0 (not started) and k
    (complete) are shown alone, 1..k-1 in at most :data:`RANGES` ranges of a round width (1, 2, 5, 10, 20,
    50...), and neighbouring ranges with no item are merged, so that the line stays short for any k.

    Parameters
    ----------
    by_finished : dict
        ``items_by_finished`` of :func:`annotation_status`: ``"n"`` -> items with n finished annotations.
    k : int
        The project's overlap.

    Examples
    --------
    >>> finished_buckets({"0": 1, "1": 0, "2": 3}, 2)
    [('0', 1), ('1', 0), ('2', 3)]
    >>> finished_buckets({str(i): 5 if i in (0, 37, 38) else 0 for i in range(101)}, 100)
    [('0', 5), ('1-30', 0), ('31-40', 10), ('41-99', 0), ('100', 0)]
    """
    count = [int(by_finished.get(str(n), 0)) for n in range(k + 1)]
    if k <= SHOWN_ONE_BY_ONE:
        return [(str(n), c) for n, c in enumerate(count)]
    width = next(w * 10**e for e in range(len(str(k))) for w in (1, 2, 5) if -(-(k - 1) // (w * 10**e)) <= RANGES)
    ranges: list[list[int]] = []  # [first, last, items]
    for first in range(1, k, width):
        last = min(first + width - 1, k - 1)
        items = sum(count[first:last + 1])
        if ranges and items == 0 and ranges[-1][2] == 0:
            ranges[-1][1] = last
        else:
            ranges.append([first, last, items])
    middle = [(str(a) if a == b else f"{a}-{b}", n) for a, b, n in ranges]
    return [("0", count[0]), *middle, (str(k), count[k])]


def status_table(st: dict) -> list[str]:
    """The status as lines of text (``annotation-status --format table``)."""
    per = st["seconds_per_item"]
    lines = [f"project {st['project']} (scheme {st['scheme']}, k = {st['overlap']}): {st['complete_items']} of "
             f"{st['items']} items complete, {st['finished_annotations']} of {st['needed_annotations']} annotations "
             f"({100 * st['progress']:.1f}%)",
             "items by finished annotations: " + ", ".join(f"{label}: {n}" for label, n in
                                                           finished_buckets(st["items_by_finished"], st["overlap"])),
             "seconds per item: " + ("none finished yet" if per["median"] is None else
                                     f"median {per['median']}, mean {per['mean']}"),
             "Krippendorff's alpha so far:"]
    for scale, a in st["alpha"].items():
        val = "undefined" if a["alpha"] is None else f"{a['alpha']:.3f}"
        lines.append(f"  {scale:<22} {val:>9} ({a['kind']}, {a['units']} units){'  ' + a['note'] if a['note'] else ''}")
    lines.append(f"{'annotator':<10} {'finished':>8} {'active':>6} {'s/item':>7} {'agree':>6}  label")
    for a in st["annotators"]:
        agree = "-" if a["agreement_with_rest"] is None else f"{a['agreement_with_rest']:.2f}"
        sec = "-" if a["median_seconds_per_item"] is None else f"{a['median_seconds_per_item']:.0f}"
        lines.append(f"{a['annotator']:<10} {a['finished']:>8} {a['active']:>6} {sec:>7} {agree:>6}  "
                     f"{a['label']}{' (excluded)' if a['excluded'] else ''}")
    return lines
