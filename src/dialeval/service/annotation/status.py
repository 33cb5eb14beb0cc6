"""The organiser's view of a project: progress, time per item, agreement so far, each annotator's agreement.

Agreement is Krippendorff's alpha per scale over the finished annotations, with the same code as
``dialeval corpus stats`` (:func:`dialeval.agreement.scale_agreement`). An annotator's agreement with the
rest is, over the units they labelled that others labelled too, the mean share of the other annotators
who gave the same label (1: always with the others; near 1/levels: chance; a careless annotator stands out).

The status is a read as of a given time ``now``: an active assignment past its time limit is shown as
``overdue`` (the database gives it back lazily, at the next request for an item, and a read changes nothing),
and the time spent on an item counts a pause longer than the time limit as the time limit
(:func:`working_seconds`), so an annotator who left for a day and came back does not show a day's work.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime
from itertools import pairwise

from sqlalchemy import func, select

from dialeval.agreement import scale_agreement
from dialeval.errors import describe
from dialeval.service.annotation import assignment as policy
from dialeval.service.annotation.export import project_corpus
from dialeval.service.annotation.projects import get_project, scheme_of
from dialeval.service.annotation.tables import AnnotationItem, Annotator, Assignment, Label
from dialeval.service.config import is_aware
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


ASSIGNMENT_COUNTS = ("active", "overdue", "finished", "expired", "excluded")
"""The keys of the status's ``assignments``: the states of :data:`.assignment.STATES`, with ``active`` split
into ``active`` (within its time limit) and ``overdue`` (past it, not yet given back)."""


def _check_now(now: object) -> None:
    if not is_aware(now):
        raise TypeError(f"now must be an aware datetime (the current time), not {describe(now)}")


def working_seconds(times: Iterable[datetime], time_limit_s: float) -> tuple[float, int]:
    """The time spent on an item: the pauses between its recorded actions, each counted up to the time limit.

    The recorded actions of an assignment are its taking, the last save of each of its labels and its
    submission. A pause between two successive ones longer than the time limit (the assignment lapsed: the
    annotator was away) counts as the time limit; shorter ones count in full. Saving a label again keeps its
    last time only, so a pause is measured between the times that are kept.

    Parameters
    ----------
    times : iterable of datetime
        The times of the actions (aware datetimes, in any order; at least one).
    time_limit_s : float
        The project's time limit in seconds (positive).

    Returns
    -------
    tuple of (float, int)
        The seconds counted, and how many pauses were longer than the time limit (counted as the limit).

    Raises
    ------
    TypeError
        A time is not an aware datetime, or the time limit is not a number.
    ValueError
        No time is given, or the time limit is not a positive finite number.

    Examples
    --------
    >>> from datetime import UTC, datetime, timedelta
    >>> t0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
    >>> working_seconds([t0, t0 + timedelta(seconds=40), t0 + timedelta(seconds=100)], 1800)
    (100.0, 0)
    >>> working_seconds([t0, t0 + timedelta(days=1), t0 + timedelta(days=1, seconds=5)], 1800)
    (1805.0, 1)
    """
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, int | float):
        raise TypeError(f"time_limit_s must be a number of seconds, not {describe(time_limit_s)}")
    if not math.isfinite(time_limit_s) or time_limit_s <= 0:
        raise ValueError(f"time_limit_s {describe(time_limit_s)} is not allowed; allowed are positive seconds")
    ts = list(times)
    if not ts:
        raise ValueError("working_seconds needs the time of at least one action (the item's taking)")
    for t in ts:
        if not is_aware(t):
            raise TypeError(f"the times of the actions must be aware datetimes, not {describe(t)}")
    ts.sort()
    gaps = [(b - a).total_seconds() for a, b in pairwise(ts)]
    return float(sum(min(g, time_limit_s) for g in gaps)), sum(g > time_limit_s for g in gaps)


def annotation_status(db: Database, name: str, now: datetime) -> dict:
    """Progress, time per item, alpha per scale and per-annotator figures of project ``name`` (JSON-ready).

    Parameters
    ----------
    db : Database
        The service's database (only read: nothing is expired here).
    name : str
        The project.
    now : datetime
        The current time (aware; the caller's clock): an active assignment whose time limit has passed by
        then (``expires_at <= now``) counts as ``overdue``, not ``active``.

    Returns
    -------
    dict
        Among others: ``assignments``, the count of each of :data:`ASSIGNMENT_COUNTS`; ``time_limit_s``;
        ``seconds_per_item`` over the finished assignments, measured by :func:`working_seconds` (``median``,
        ``mean``, ``pauses_capped_at_s``: the time limit, the most a pause counts, and
        ``items_with_a_capped_pause``: how many items had a longer pause); and per annotator ``active``,
        ``overdue``, ``finished``, ``median_seconds_per_item`` and ``items_with_a_capped_pause``.

    Raises
    ------
    TypeError
        ``now`` is not an aware datetime.
    NotFound
        No project called ``name``.
    """
    _check_now(now)
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
        done = s.execute(select(Assignment.id, Assignment.annotator_id, Assignment.created_at,
                                Assignment.finished_at)
                         .where(Assignment.project_id == p.id, Assignment.state == "finished")).all()
        saves = s.execute(select(Label.assignment_id, Label.saved_at)
                          .join(Assignment, Assignment.id == Label.assignment_id)
                          .where(Assignment.project_id == p.id, Assignment.state == "finished")).all()
        live = s.execute(select(Assignment.annotator_id, Assignment.expires_at)
                         .where(Assignment.project_id == p.id, Assignment.state == "active")).all()
    active, overdue = Counter(), Counter()
    for aid, expires_at in live:
        (overdue if policy.is_expired(expires_at, now) else active)[aid] += 1
    saved: dict[int, list[datetime]] = defaultdict(list)
    for asg_id, t in saves:
        saved[asg_id].append(t)
    secs: dict[int, list[float]] = defaultdict(list)
    capped: Counter[int] = Counter()
    for asg_id, aid, t0, t1 in done:
        seconds, pauses = working_seconds([t0, *saved.get(asg_id, []), t1], p.timeout_s)
        secs[aid].append(seconds)
        capped[aid] += pauses > 0
    all_secs = [x for v in secs.values() for x in v]
    counts = {k: states.get(k, 0) for k in ASSIGNMENT_COUNTS}
    counts["active"], counts["overdue"] = sum(active.values()), sum(overdue.values())
    corpus = project_corpus(db, name)
    alphas = {}
    for scale in corpus.scales:
        ag = scale_agreement(corpus, scale)
        # unrounded: a page or table rounds it once, as `corpus stats` does (rounded here to 4 places and there to
        # 3, -0.04249 showed as -0.043 beside corpus stats' -0.042)
        alphas[scale] = {"alpha": None if math.isnan(ag.alpha) else float(ag.alpha), "kind": ag.kind,
                         "units": ag.units, "labels": ag.pairable, "note": ag.note}
    rest = agreement_with_rest(corpus)
    n_items = sum(finished.values())
    annotators = []
    for a, label in people:
        aid = policy.annotator_id(a.number)
        annotators.append({"annotator": aid, "label": label, "joined_at": a.joined_at.isoformat(),
                           "excluded": a.excluded_at is not None, "finished": len(secs.get(a.id, [])),
                           "active": active.get(a.id, 0), "overdue": overdue.get(a.id, 0),
                           "median_seconds_per_item": _median(secs.get(a.id, [])),
                           "items_with_a_capped_pause": capped.get(a.id, 0),
                           "agreement_with_rest": rest.get(aid, {}).get("agreement"),
                           "units_compared": rest.get(aid, {}).get("units", 0)})
    complete = sum(c for f, c in finished.items() if f >= p.overlap)
    return {"project": p.name, "scheme": scheme_of(p).name, "overlap": p.overlap, "items": n_items,
            "complete_items": complete, "finished_annotations": sum(f * c for f, c in finished.items()),
            "needed_annotations": n_items * p.overlap,
            "progress": round(sum(min(f, p.overlap) * c for f, c in finished.items()) / (n_items * p.overlap), 4),
            "items_by_finished": {str(f): finished.get(f, 0) for f in range(p.overlap + 1)},
            "assignments": counts, "labels_saved": n_labels, "time_limit_s": p.timeout_s,
            "seconds_per_item": {"median": _median(all_secs),
                                 "mean": round(statistics.fmean(all_secs), 1) if all_secs else None,
                                 "pauses_capped_at_s": p.timeout_s,
                                 "items_with_a_capped_pause": sum(capped.values())},
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
    per, asg = st["seconds_per_item"], st["assignments"]
    cap = f"{per['pauses_capped_at_s']:g}"
    lines = [f"project {st['project']} (scheme {st['scheme']}, k = {st['overlap']}): {st['complete_items']} of "
             f"{st['items']} items complete, {st['finished_annotations']} of {st['needed_annotations']} annotations "
             f"({100 * st['progress']:.1f}%)",
             "items by finished annotations: " + ", ".join(f"{label}: {n}" for label, n in
                                                           finished_buckets(st["items_by_finished"], st["overlap"])),
             f"assignments: {asg['active']} active, {asg['overdue']} overdue (past the time limit of {cap} s, given "
             f"back at the next request for an item), {asg['finished']} finished, {asg['expired']} expired",
             "seconds per item: " + ("none finished yet" if per["median"] is None else
                                     f"median {per['median']}, mean {per['mean']} (a pause counts {cap} s at most; "
                                     f"{per['items_with_a_capped_pause']} item(s) had a longer one)"),
             "Krippendorff's alpha so far:"]
    for scale, a in st["alpha"].items():
        val = "undefined" if a["alpha"] is None else f"{a['alpha']:.3f}"
        lines.append(f"  {scale:<22} {val:>9} ({a['kind']}, {a['units']} units){'  ' + a['note'] if a['note'] else ''}")
    lines.append(f"{'annotator':<10} {'finished':>8} {'active':>6} {'overdue':>7} {'s/item':>7} {'agree':>6}  label")
    for a in st["annotators"]:
        agree = "-" if a["agreement_with_rest"] is None else f"{a['agreement_with_rest']:.2f}"
        sec = "-" if a["median_seconds_per_item"] is None else f"{a['median_seconds_per_item']:.1f}"  # as the JSON
        lines.append(f"{a['annotator']:<10} {a['finished']:>8} {a['active']:>6} {a['overdue']:>7} {sec:>7} "
                     f"{agree:>6}  {a['label']}{' (excluded)' if a['excluded'] else ''}")
    return lines
