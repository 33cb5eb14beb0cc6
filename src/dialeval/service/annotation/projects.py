"""Annotation projects on the database: create, join (invitation codes), next item, save a label, submit.

The policy is :mod:`.assignment`; here it is applied in locked write transactions
(:meth:`dialeval.service.db.Database.write`; SQLite's ``BEGIN IMMEDIATE`` serializes writers whole, on
PostgreSQL rows are locked):

- a slot is taken only by ``UPDATE items SET live = live + 1 WHERE id = ? AND live < k`` (atomic; it holds
  the item's row until commit), and every change of an item's slots (take, expire, reopen, exclude) updates
  that row in the same transaction, so no item ever has more than k live assignments;
- "next item" locks the annotator's row (one request of theirs at a time), then the chosen item's row with
  ``FOR UPDATE SKIP LOCKED`` (annotators asking at once take different items instead of queueing);
- the unique constraints on (item, slot) and (item, annotator) make the same rules database rules.

Locks are taken in the order project -> annotator -> assignment -> item, items in id order when a
transaction changes several, and "next item" waits for an item's row only while it holds no other item's
row (see :func:`_find`), so no two transactions wait on each other. Saving a label or submitting locks the
annotator's row (checking under that lock that they are not excluded, and serializing their own requests),
then their assignment (and its item when an expired assignment takes a slot again).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import func, select, update

from dialeval.corpus import Corpus
from dialeval.distributions import labelled_items
from dialeval.errors import describe
from dialeval.io.wochat import NAME_TAG_IN_TEXT
from dialeval.service import invitations
from dialeval.service.annotation import assignment as policy
from dialeval.service.annotation.schemes import DIALOGUE, SCHEMES, Scheme, get_scheme
from dialeval.service.annotation.tables import AnnotationItem, AnnotationProject, Annotator, Assignment, Label
from dialeval.service.collection.sessions import bidi_problem
from dialeval.service.db import Database
from dialeval.service.errors import Conflict, Forbidden, Invalid, InvalidValue, NotFound
from dialeval.service.names import check_slug, is_slug

KIND = "annotation"
MAX_OVERLAP = 1000
MAX_GUIDELINES = 200_000
MAX_ITEMS = 100_000
MAX_ANNOTATOR = 2**31 - 1  # annotators.number is a 32-bit integer on PostgreSQL
EXCLUDED = "the organisers have closed this code's work in the project; thank you"


# ---------------------------------------------------------------------------------------------- projects


def _jsonable(obj: object) -> object:
    return json.loads(json.dumps(obj, default=str))


def _item_data(d, scheme: Scheme) -> dict:
    return {"id": d.id, "meta": _jsonable(d.meta),
            "turns": [{"sender": s, "utterances": list(t.utterances), "meta": _jsonable(t.meta)}
                      for t, s in zip(d.turns, scheme.senders(d), strict=True)]}


def create_project(db: Database, name: str, corpus: Corpus, scheme: str, overlap: int, now: datetime, *,
                   guidelines: str = "", hide_speakers: bool = False, timeout: str | float = policy.DEFAULT_TIMEOUT,
                   seed: int | None = None, source: str = "") -> AnnotationProject:
    """Create an annotation project over the dialogues of ``corpus`` (one item each).

    Parameters
    ----------
    scheme : str
        One of :data:`~dialeval.service.annotation.schemes.SCHEMES`.
    overlap : int
        k, the number of different annotators who finish each item (1-1000).
    timeout : str or float
        An assignment with no label saved for this long goes back to the pool (``30m``, ``1h``, seconds).
    seed : int, optional
        Seed of the tie-breaks between equally filled items (default: drawn at random, then stored).

    Raises
    ------
    InvalidValue
        A bad overlap, timeout, guidelines or seed (naming the parameter).
    Invalid
        A bad name or scheme, or a corpus with nothing to label. Dialogues with nothing to label (a chat the
        engine never answered, under a scheme that labels the system's turns) are left out of a corpus that has
        others, their ids in the project's ``meta["left_out"]``.
    Conflict
        The name is taken (by a project or by a chat collection).

    Notes
    -----
    The corpus's own labels are not carried into the project: it collects new labels of its scheme, and its export
    holds those only. Their number per scale is in the project's ``meta["not_carried"]`` (said on creation and on
    export).
    """
    check_slug(name, "project", Invalid)
    try:
        sch = get_scheme(scheme)
    except ValueError as e:
        raise Invalid(str(e)) from None
    try:
        timeout_s = policy.parse_duration(timeout)
    except ValueError:
        lo, hi = policy.TIMEOUT_RANGE_S
        raise InvalidValue("timeout", f"{describe(timeout)} is not allowed; allowed are durations from {lo:g} "
                           f"seconds to {hi / 86400:g} days, e.g. 30m, 1h, 1h30m, 90s, 2d") from None
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 1 <= overlap <= MAX_OVERLAP:
        raise InvalidValue("overlap", f"{describe(overlap)} is not allowed; allowed are integers from 1 to "
                           f"{MAX_OVERLAP}")
    if not isinstance(guidelines, str):
        raise InvalidValue("guidelines", f"must be text, received {type(guidelines).__name__}")
    if len(guidelines) > MAX_GUIDELINES:
        raise InvalidValue("guidelines", f"has {len(guidelines)} characters; at most {MAX_GUIDELINES} are allowed")
    if problem := bidi_problem(guidelines, where=True):  # shown to annotators: the rule of utterances
        raise InvalidValue("guidelines", problem)
    if not corpus.dialogues or len(corpus.dialogues) > MAX_ITEMS:
        raise Invalid(f"the corpus has {len(corpus.dialogues)} dialogues; a project takes 1 to {MAX_ITEMS}")
    empty = [d.id for d in corpus.dialogues if not sch.data_units(sch.senders(d), hidden=hide_speakers)]
    if len(empty) == len(corpus.dialogues):
        raise Invalid(f"the {len(empty)} dialogue(s) have nothing to label with scheme {sch.name!r} (e.g. "
                      f"{empty[0]!r}: no turn of the senders it labels)")
    if empty:  # e.g. a chat the engine never answered: left out, and said (meta["left_out"])
        gone = set(empty)
        corpus = replace(corpus, dialogues=[d for d in corpus.dialogues if d.id not in gone])
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**31 - 1):
        raise InvalidValue("seed", f"{describe(seed)} is not allowed; allowed are integers 0..2147483647 (or none: "
                           "random)")
    seed = secrets.randbits(31) if seed is None else int(seed)
    ties = policy.tie_order(seed, len(corpus.dialogues))
    with db.write() as s:
        invitations.check_target_name_free(s, name)
        p = AnnotationProject(name=name, scheme=sch.name, overlap=overlap, hide_speakers=bool(hide_speakers),
                              guidelines=guidelines, timeout_s=timeout_s, seed=seed, source=source[:500],
                              meta={"format": corpus.format, "dialogues": len(corpus.dialogues),
                                    **({"left_out": empty} if empty else {}),
                                    **({"not_carried": own} if (own := labels_by_scale(corpus)) else {})},
                              created_at=now)
        s.add(p)
        s.flush()
        s.add_all(AnnotationItem(project_id=p.id, position=i, dialogue_id=d.id, dialogue=_item_data(d, sch),
                                 live=0, finished=0, tie=ties[i]) for i, d in enumerate(corpus.dialogues))
    return p


def labels_by_scale(corpus: Corpus) -> dict[str, int]:
    """The labels ``corpus`` holds, per scale (dialogue-level and turn-level), where it holds any: those on the
    items the scale applies to (:func:`~dialeval.distributions.labelled_items`, the walk behind gold)."""
    counts = {s.name: sum(v is not None for _, _, item in labelled_items(corpus, s) for v in item.labels[s.name])
              for s in corpus.scales.values()}
    return {name: n for name, n in counts.items() if n}


def not_carried_note(p: AnnotationProject, source: str = "the source corpus") -> str | None:
    """What the project does not carry of its corpus's own labels (``meta["not_carried"]``), in words; None."""
    own = (p.meta or {}).get("not_carried") or {}
    if not own:
        return None
    return (f"the corpus's own labels ({', '.join(f'{n} on {s!r}' for s, n in own.items())}) are not part of "
            f"project {p.name!r}: it collects new labels of scheme {p.scheme}, and its export holds those only "
            f"(keep {source} for the others)")


def get_project(db: Database, name: str) -> AnnotationProject:
    """The project called ``name``; :class:`NotFound` otherwise (a name no project can have is not looked up:
    PostgreSQL refuses NUL in a query's text)."""
    if not is_slug(name):
        raise NotFound(f"no annotation project named {describe(name)}")
    with db.read() as s:
        p = s.scalar(select(AnnotationProject).where(AnnotationProject.name == name))
    if p is None:
        raise NotFound(f"no annotation project named {describe(name)}")
    return p


def scheme_of(p: AnnotationProject) -> Scheme:
    return SCHEMES[p.scheme]


def project_info(p: AnnotationProject) -> dict:
    """What the page shows: the scheme's controls and keys, k, whether speakers are hidden, the guidelines."""
    return {"name": p.name, "scheme": scheme_of(p).info(hidden=p.hide_speakers), "overlap": p.overlap,
            "hide_speakers": p.hide_speakers, "timeout_s": p.timeout_s, "guidelines": p.guidelines}


# ---------------------------------------------------------------------------------------------- annotators


@dataclass(frozen=True)
class Who:
    """An annotator in a project (the invitation code checked)."""

    project: AnnotationProject
    annotator: Annotator

    @property
    def label(self) -> str:
        return policy.annotator_id(self.annotator.number)


def annotator(db: Database, name: str, code: str | None, now: datetime) -> Who:
    """The annotator behind ``code`` in project ``name`` (registered at first use, numbered in order).

    Raises
    ------
    Unauthorized
        Not an annotation invitation of this project (a team token, another project's code...).
    Forbidden
        The annotator was excluded by the organisers.
    """
    from dialeval.service.db import Invitation
    from dialeval.service.tokens import hash_token

    if not is_slug(name):
        get_project(db, name)  # 404, before any query
    if not code or not isinstance(code, str):
        invitations.check(db, code, KIND, name)  # raises the one refusal message
    with db.read() as s:  # one round trip for the usual case: a known annotator of a known project
        row = s.execute(select(AnnotationProject, Invitation, Annotator)
                        .join(Invitation, (Invitation.token_hash == hash_token(code)) & (Invitation.kind == KIND)
                              & (Invitation.target == AnnotationProject.name) & Invitation.revoked_at.is_(None))
                        .outerjoin(Annotator, (Annotator.project_id == AnnotationProject.id)
                                   & (Annotator.invitation_id == Invitation.id))
                        .where(AnnotationProject.name == name)).first()
    if row is None:
        p = get_project(db, name)  # 404 for an unknown project
        invitations.check(db, code, KIND, p.name)  # 401 for any code that is not this project's
        raise Conflict("the invitation changed while it was checked; try again")
    p, inv, a = row
    if a is None:
        with db.write() as s:
            _lock_project(s, p.id)
            a = s.scalar(select(Annotator).where(Annotator.project_id == p.id, Annotator.invitation_id == inv.id))
            if a is None:
                invitations.consume(s, code, KIND, now, p.name)
                n = s.scalar(select(func.max(Annotator.number)).where(Annotator.project_id == p.id)) or 0
                a = Annotator(project_id=p.id, invitation_id=inv.id, number=n + 1, joined_at=now, excluded_at=None)
                s.add(a)
    if a.excluded_at is not None:
        raise Forbidden(EXCLUDED)
    return Who(p, a)


def _lock_annotator(s, who: Who) -> None:
    """Lock the annotator's row (one request of theirs at a time) and refuse an excluded annotator.

    :func:`annotator` checked the exclusion in a read before; an organiser may have excluded them since, so
    every write of theirs checks again under this lock (:func:`exclude_annotator` updates the same row).
    """
    row = s.execute(select(Annotator.excluded_at).where(Annotator.id == who.annotator.id)
                    .with_for_update(key_share=True)).first()
    if row is None or row.excluded_at is not None:
        raise Forbidden(EXCLUDED)


def _lock_project(s, project_id: int) -> None:
    """One join or exclusion at a time per project (``FOR NO KEY UPDATE``: inserting rows that refer to the
    project, as every new assignment does, is not held up by it)."""
    s.execute(select(AnnotationProject.id).where(AnnotationProject.id == project_id)
              .with_for_update(key_share=True))


def expire_overdue(db: Database, p: AnnotationProject, now: datetime) -> int:
    """Give the slots of overdue active assignments back to their items (a transaction of its own); how many.

    Rows another transaction holds (an annotator saving a label right now) are skipped (``SKIP LOCKED``).
    """
    overdue = (Assignment.project_id == p.id, Assignment.state == "active", Assignment.expires_at <= now)
    with db.read() as s:  # the usual case, nothing overdue, takes no write lock
        if s.scalar(select(Assignment.id).where(*overdue).limit(1)) is None:
            return 0
    with db.write() as s:
        rows = s.execute(select(Assignment.id, Assignment.item_id).where(*overdue).order_by(Assignment.item_id)
                         .with_for_update(skip_locked=True)).all()  # items updated in one order: no deadlock
        return sum(_expire(s, aid, item_id) for aid, item_id in rows)


def _expire(s, assignment_id: int, item_id: int) -> bool:
    """Give an active assignment's slot back to its item; False if it is no longer active (``WHERE state =
    'active'``: PostgreSQL checks it again after waiting for a row another transaction expired)."""
    r = s.execute(update(Assignment).where(Assignment.id == assignment_id, Assignment.state == "active")
                  .values(state="expired", slot=None))
    if r.rowcount != 1:
        return False
    s.execute(update(AnnotationItem).where(AnnotationItem.id == item_id).values(live=AnnotationItem.live - 1))
    return True


def _claim(s, p: AnnotationProject, item_id: int) -> int | None:
    """Take one of the item's k slots: ``UPDATE ... SET live = live + 1 WHERE live < k`` (atomic: it locks
    the item's row until the transaction ends), then the lowest free slot number; None when full."""
    r = s.execute(update(AnnotationItem).where(AnnotationItem.id == item_id, AnnotationItem.live < p.overlap)
                  .values(live=AnnotationItem.live + 1))
    if r.rowcount != 1:
        return None
    taken = s.scalars(select(Assignment.slot).where(Assignment.item_id == item_id, Assignment.slot.is_not(None)))
    slot = policy.free_slot(list(taken), p.overlap)
    if slot is None:  # the count said free, the slots say full: refuse rather than over-assign
        raise Conflict("the item's slots disagree with its count; try again")
    return slot


def _free_items(p: AnnotationProject, annotator_id: int):
    """The items this annotator may take, best first (fewest finished, fewest live, the shuffled tie)."""
    had = select(Assignment.item_id).where(Assignment.annotator_id == annotator_id)
    return (select(AnnotationItem.id, AnnotationItem.finished, AnnotationItem.live, AnnotationItem.tie)
            .where(AnnotationItem.project_id == p.id, AnnotationItem.live < p.overlap, AnnotationItem.id.not_in(had))
            .order_by(AnnotationItem.finished, AnnotationItem.live, AnnotationItem.tie, AnnotationItem.id))


def _locked(s, q):
    """The first row of the locking query ``q``; or None, and then no row stays locked by it.

    PostgreSQL keeps the lock on a row it waited for and then dropped because the row no longer matched
    (an item that filled up meanwhile). Held on while waiting for the next item's row, such a lock let two
    "next item" transactions wait on each other (a deadlock); rolling back to a savepoint releases it.
    """
    sp = s.begin_nested()
    row = s.execute(q).first()
    if row is None:
        sp.rollback()
    else:
        sp.commit()
    return row


def _find(s, p: AnnotationProject, annotator_id: int):
    """The best free item, its row locked; None only when no item is left for this annotator.

    First the best among the rows nobody holds (``SKIP LOCKED``, never waits). If every free row is held,
    wait for the best one alone (``WHERE id = ?``, so the wait is for one row while this transaction holds
    no other item's row) and take it if it is still free then; else look again.
    """
    free = _free_items(p, annotator_id)
    for _ in range(50):
        row = _locked(s, free.limit(1).with_for_update(skip_locked=True, key_share=True))
        if row is not None:
            return row
        best = s.execute(free.limit(1)).first()  # no lock: which row to wait for
        if best is None:
            return None
        row = _locked(s, free.where(AnnotationItem.id == best.id).with_for_update(key_share=True))
        if row is not None:
            return row
    raise Conflict("many annotators took the same items at once; ask again")


def next_assignment(db: Database, who: Who, now: datetime) -> Assignment | None:
    """The annotator's open assignment, or a new one on the item :func:`.assignment.pick` chooses.

    None when no item is left for this annotator (all full, or all had already). Locks: the annotator's
    row (one request of theirs at a time), then the chosen item's row (``FOR UPDATE SKIP LOCKED`` on
    PostgreSQL, so concurrent annotators take different items instead of queueing; if every candidate is
    locked, it waits for one rather than answering "none left"). SQLite serializes writers whole.
    """
    p, a = who.project, who.annotator
    expire_overdue(db, p, now)
    for _attempt in range(5):
        with db.write() as s:
            _lock_annotator(s, who)
            cur = s.scalar(select(Assignment).where(Assignment.annotator_id == a.id, Assignment.state == "active")
                           .order_by(Assignment.id).limit(1))
            if cur is not None and cur.expires_at > now:
                return cur
            if cur is not None:  # overdue, and skipped above while another request of theirs held it
                _expire(s, cur.id, cur.item_id)
            row = _find(s, p, a.id)
            item_id = policy.pick([policy.Candidate(*row)], p.overlap, set()) if row is not None else None
            if item_id is None:
                return None
            slot = _claim(s, p, item_id)
            if slot is None:
                continue  # filled meanwhile: choose again
            asg = Assignment(project_id=p.id, item_id=item_id, annotator_id=a.id, slot=slot, state="active",
                             created_at=now, expires_at=policy.deadline(now, p.timeout_s), finished_at=None)
            s.add(asg)
            s.flush()
            return asg
    raise Conflict("many annotators took the same items at once; ask again")


def _own(s, who: Who, assignment_id: int, lock: bool = False) -> Assignment:
    q = select(Assignment).where(Assignment.id == assignment_id, Assignment.annotator_id == who.annotator.id,
                                 Assignment.project_id == who.project.id)
    a = s.scalar(q.with_for_update() if lock else q)
    if a is None:
        raise NotFound(f"no assignment {assignment_id} of yours in this project")
    return a


def _reopen(s, who: Who, asg: Assignment, now: datetime) -> None:
    """An assignment (row locked by the caller) that may be overdue: still holding its slot, it is renewed;
    expired, it takes a slot again while its item has a free one and the annotator holds no other active
    assignment (else :class:`Conflict`; the caller holds the annotator's row, see :func:`_lock_annotator`)."""
    if asg.state == "expired":
        other = s.scalar(select(Assignment.id).where(Assignment.annotator_id == who.annotator.id,
                                                     Assignment.state == "active", Assignment.id != asg.id)
                         .order_by(Assignment.id).limit(1))
        if other is not None:
            raise Conflict(f"this item's time ran out (assignment {asg.id} expired) and you hold another item "
                           f"now (assignment {other}); finish that one first")
        slot = _claim(s, who.project, asg.item_id)
        if slot is None:
            raise Conflict("this item's time ran out and it went to other annotators; ask for the next item")
        asg.state, asg.slot = "active", slot
    asg.expires_at = policy.deadline(now, who.project.timeout_s)


def _check_label(scheme: Scheme, who: Who, item: AnnotationItem, turn: int, scale: str, value: str | None) -> None:
    senders = [t["sender"] for t in item.dialogue["turns"]]
    units = dict(scheme.units(senders, hidden=who.project.hide_speakers))
    if isinstance(turn, bool) or not isinstance(turn, int) or turn not in units:
        allowed = ", ".join("dialogue (-1)" if u == DIALOGUE else str(u) for u in units)
        raise Invalid(f"turn {describe(turn)} is not labelled in this item; allowed are {allowed}")
    controls = {c.name: c for c in units[turn]}
    if scale not in controls:
        raise Invalid(f"scale {describe(scale)} is not labelled on this unit; allowed are " + ", ".join(controls))
    c = controls[scale]
    allowed_values = ("yes", "no") if c.flag else c.scale.levels
    if value is not None and value not in allowed_values:
        raise Invalid(f"label {describe(value)} is not on scale {scale!r}; allowed are " + ", ".join(allowed_values))


def save_label(db: Database, who: Who, assignment_id: int, turn: int, scale: str, value: str | None,
               now: datetime) -> datetime:
    """Save one label as given (replacing the one before on that unit and scale; ``None`` removes it);
    returns the assignment's new time limit.

    Each saved label renews the assignment's time limit. An expired assignment is taken back if its item
    still has a free slot (else :class:`Conflict`); a submitted one is final (:class:`Conflict`).
    """
    scheme = scheme_of(who.project)
    with db.write() as s:
        _lock_annotator(s, who)
        asg = _own(s, who, assignment_id, lock=True)
        _check_label(scheme, who, s.get(AnnotationItem, asg.item_id), turn, scale, value)
        if asg.state in ("finished", "excluded"):
            raise Conflict("this item was submitted already; its labels are final")
        _reopen(s, who, asg, now)
        old = s.scalar(select(Label).where(Label.assignment_id == asg.id, Label.turn == turn, Label.scale == scale))
        if value is None:
            if old is not None:
                s.delete(old)
        elif old is None:
            s.add(Label(assignment_id=asg.id, turn=turn, scale=scale, value=value, saved_at=now))
        else:
            old.value, old.saved_at = value, now
        return asg.expires_at


def missing(scheme: Scheme, who: Who, item: AnnotationItem, labels: list[Label]) -> list[tuple[int, str]]:
    """The (turn, scale) of every required control still without a label."""
    senders = [t["sender"] for t in item.dialogue["turns"]]
    have = {(lab.turn, lab.scale) for lab in labels}
    return [(u, c.name) for u, cs in scheme.units(senders, hidden=who.project.hide_speakers)
            for c in cs if c.required and (u, c.name) not in have]


def missing_message(gaps: list[tuple[int, str]], shown: int = 5) -> str:
    """The refusal of an item submitted with labels missing: each named by its place as the labels API takes it
    (``turn`` 0, 1, ... as ``POST .../labels`` and its 422 count, and as the annotate page numbers the turns;
    ``dialogue`` for a dialogue-level scale) and its scale.

    >>> missing_message([(0, "validity"), (2, "validity"), (-1, "A")])
    '3 label(s) missing before this item can be submitted: turn 0 validity, turn 2 validity, dialogue A \
(turns are numbered from 0, as on the page)'
    """
    where = ", ".join(f"{'dialogue' if u == DIALOGUE else f'turn {u}'} {sc}" for u, sc in gaps[:shown])
    more = f" and {len(gaps) - shown} more" if len(gaps) > shown else ""
    numbered = " (turns are numbered from 0, as on the page)" if any(u != DIALOGUE for u, _sc in gaps[:shown]) else ""
    return f"{len(gaps)} label(s) missing before this item can be submitted: {where}{more}{numbered}"


def submit(db: Database, who: Who, assignment_id: int, now: datetime) -> Assignment:
    """Finish an assignment: every required control labelled; the item's finished count goes up by one."""
    scheme = scheme_of(who.project)
    with db.write() as s:
        _lock_annotator(s, who)
        asg = _own(s, who, assignment_id, lock=True)
        if asg.state == "finished":
            return asg
        if asg.state == "excluded":
            raise Conflict("this assignment was withdrawn by the organisers")
        _reopen(s, who, asg, now)
        item = s.get(AnnotationItem, asg.item_id)
        labels = list(s.scalars(select(Label).where(Label.assignment_id == asg.id)))
        gaps = missing(scheme, who, item, labels)
        if gaps:
            raise Conflict(missing_message(gaps))
        asg.state, asg.finished_at = "finished", now
        s.execute(update(AnnotationItem).where(AnnotationItem.id == item.id)
                  .values(finished=AnnotationItem.finished + 1))
        return asg


def get_assignment(db: Database, who: Who, assignment_id: int) -> tuple[Assignment, AnnotationItem, list[Label]]:
    """One of the annotator's own assignments, its item and the annotator's own labels on it."""
    with db.read() as s:
        return _assignment(s, who, assignment_id)


def _assignment(s, who: Who, assignment_id: int) -> tuple[Assignment, AnnotationItem, list[Label]]:
    asg = _own(s, who, assignment_id)
    item = s.get(AnnotationItem, asg.item_id)
    labels = list(s.scalars(select(Label).where(Label.assignment_id == asg.id).order_by(Label.turn, Label.scale)))
    return asg, item, labels


def _progress(s, who: Who) -> dict:
    done = s.scalar(select(func.count()).where(Assignment.annotator_id == who.annotator.id,
                                               Assignment.state == "finished"))
    items = s.scalar(select(func.count()).where(AnnotationItem.project_id == who.project.id))
    return {"finished": done, "items": items}


def progress(db: Database, who: Who) -> dict:
    """The annotator's own counts: finished, and items there are in the project."""
    with db.read() as s:
        return _progress(s, who)


def view(db: Database, who: Who, assignment_id: int) -> dict:
    """:func:`assignment_view` of one of the annotator's assignments, with their progress (one read)."""
    with db.read() as s:
        asg, item, labels = _assignment(s, who, assignment_id)
        return {**assignment_view(who, asg, item, labels), "progress": _progress(s, who)}


def speaker_numbers(p: AnnotationProject, item: AnnotationItem) -> dict[str, int] | None:
    """With speakers hidden, the number each sender of ``item`` shows as (``{"system": 1, "user": 2}``), drawn
    from the project's stored seed (:func:`.assignment.speaker_order`): the same for every annotator and at
    every reload, and not the order of the first turns (the participant of a human-machine chat speaks first,
    so "Speaker 2" would always be the machine). None when speakers are shown."""
    if not p.hide_speakers:
        return None
    senders = [t["sender"] for t in item.dialogue["turns"]]
    return {sender: i + 1 for i, sender in enumerate(policy.speaker_order(p.seed, item.position, senders))}


def speaker_label(sender: str, numbers: dict[str, int] | None) -> str:
    """The speaker as annotators see it: the sender, or ``Speaker N`` with speakers hidden (``numbers``, from
    :func:`speaker_numbers`).

    >>> speaker_label("system", None), speaker_label("system", {"system": 1, "user": 2})
    ('system', 'Speaker 1')
    """
    return sender if numbers is None else f"Speaker {numbers[sender]}"


def neutral_name_tags(text: str, numbers: dict[str, int]) -> str:
    """With speakers hidden, the WOCHAT name tags in a text (``SYSTEM_NAME``, ``USER1_NAME``: a speaker's name
    replaced by its role) name the speaker as annotators see it instead (``numbers``, from
    :func:`speaker_numbers`), so that no tag says which one is the system (the ISMACHINE judgement is then the
    annotator's own); a tag of a role that does not speak in the item is ``SPEAKER_NAME``.

    >>> neutral_name_tags("Hi SYSTEM_NAME, I am USER_NAME (MY_NAME)", {"system": 1, "user": 2})
    'Hi SPEAKER1_NAME, I am SPEAKER2_NAME (MY_NAME)'
    """
    by_role = {sender.upper(): n for sender, n in numbers.items()}

    def label(m: re.Match) -> str:
        n = by_role.get(m.group(1))
        return f"SPEAKER{n}_NAME" if n is not None else "SPEAKER_NAME"

    return NAME_TAG_IN_TEXT.sub(label, text)


def _shown(text: str, numbers: dict[str, int] | None) -> str:
    return text if numbers is None else neutral_name_tags(text, numbers)


def assignment_view(who: Who, asg: Assignment, item: AnnotationItem, labels: list[Label]) -> dict:
    """The assignment as the page and the API show it: the dialogue, what to label, the annotator's labels."""
    p, scheme = who.project, scheme_of(who.project)
    turns = item.dialogue["turns"]
    senders = [t["sender"] for t in turns]
    units = scheme.units(senders, hidden=p.hide_speakers)
    numbers = speaker_numbers(p, item)
    return {"assignment": asg.id, "state": asg.state, "expires_at": asg.expires_at.isoformat(),
            "item": {"position": item.position, "dialogue_id": None if p.hide_speakers else item.dialogue_id,
                     "turns": [{"index": i, "speaker": speaker_label(t["sender"], numbers),
                                "text": _shown("\n".join(u for u in t["utterances"] if u), numbers)}
                               for i, t in enumerate(turns)]},
            "units": [{"turn": u, "controls": [c.name for c in cs]} for u, cs in units],
            "labels": [{"turn": lab.turn, "scale": lab.scale, "value": lab.value} for lab in labels],
            "missing": [{"turn": u, "scale": sc} for u, sc in missing(scheme, who, item, labels)]}


# ---------------------------------------------------------------------------------------------- organisers


def find_annotator(db: Database, p: AnnotationProject, ref: str) -> Annotator:
    """An annotator by its id (``A003``) or number (``3``): ASCII digits only (``str.isdigit`` takes ``²``,
    which ``int`` refuses); a number no annotator can have (0, or beyond the column's range, which PostgreSQL
    refuses to compare) is :class:`NotFound` without a query."""
    text = str(ref).strip().upper().removeprefix("A")
    if not text or not text.isascii() or not text.isdigit():
        raise Invalid(f"annotator {describe(ref)} is not an annotator id; use e.g. A003 (see annotation-status)")
    digits = text.lstrip("0") or "0"
    number = int(digits) if len(digits) <= len(str(MAX_ANNOTATOR)) else 0  # no int() of thousands of digits
    if not 1 <= number <= MAX_ANNOTATOR:
        raise NotFound(f"no annotator {describe(ref)} in project {p.name!r}")
    with db.read() as s:
        a = s.scalar(select(Annotator).where(Annotator.project_id == p.id, Annotator.number == number))
    if a is None:
        raise NotFound(f"no annotator {describe(ref)} in project {p.name!r}")
    return a


def exclude_annotator(db: Database, name: str, ref: str, now: datetime) -> dict:
    """Exclude an annotator: their code stops working, their assignments (finished too) free their slots so
    that other annotators redo those items; their labels are kept but never exported or counted.

    Their expired assignments (which hold no slot) are closed too, so that none can take a slot again.
    ``assignments_returned`` counts the slots freed."""
    p = get_project(db, name)
    a = find_annotator(db, p, ref)
    with db.write() as s:
        _lock_project(s, p.id)
        done = s.execute(update(Annotator).where(Annotator.id == a.id, Annotator.excluded_at.is_(None))
                         .values(excluded_at=now))  # first: next_assignment locks annotator, then item
        if done.rowcount == 0:
            raise Conflict(f"annotator {policy.annotator_id(a.number)} is excluded from {p.name!r} already")
        rows = list(s.scalars(select(Assignment).where(Assignment.annotator_id == a.id,
                                                       Assignment.state.in_((*policy.LIVE, "expired")))
                              .order_by(Assignment.item_id).with_for_update()))
        returned = 0
        for asg in rows:
            if asg.state in policy.LIVE:
                s.execute(update(AnnotationItem).where(AnnotationItem.id == asg.item_id).values(
                    live=AnnotationItem.live - 1,
                    finished=AnnotationItem.finished - (1 if asg.state == "finished" else 0)))
                returned += 1
            asg.state, asg.slot = "excluded", None
    return {"annotator": policy.annotator_id(a.number), "assignments_returned": returned}
