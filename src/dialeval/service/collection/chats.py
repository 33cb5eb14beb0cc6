"""Chat collection on the database: collections, participants (invitation codes), sessions, turns, replies.

The policy (whose turn, limits, pairing rules) is :mod:`.sessions`; this module applies it inside locked write
transactions (:meth:`dialeval.service.db.Database.write`), so it holds across worker processes:

- a new session takes its number (the dialogue id's 5 digits) under a lock on the collection's row, and
  its start time is read from the clock under that same lock, so numbers follow the order of the start
  times and are never given twice;
- human-human pairing claims a waiting session under the same lock: two people never take the same one;
- a participant's turn is committed before the engine is asked; the reply is stored in a second
  transaction, only if the chat still waits for it (a retry racing a slow reply adds nothing twice);
- the time of a turn or reply is read from the clock once its chat's row is locked, so the order of the
  turns' positions is the order of their times.

The functions that store a start or a turn therefore take the clock (a callable returning an aware
datetime), not a time read before the lock: a time read before waiting on the lock can be earlier than
that of a request that took the lock first.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select

from dialeval.corpus import Dialogue, Turn
from dialeval.errors import DialevalError, describe
from dialeval.service import invitations
from dialeval.service.collection import sessions
from dialeval.service.collection.engines import (
    DEFAULT_TIMEOUT_S,
    EngineError,
    default_name,
    make_engine,
    timeout_problem,
)
from dialeval.service.collection.tables import MAX_ENGINE_MODEL, MAX_ENGINE_SPEC, ChatSession, ChatTurn, Collection
from dialeval.service.config import is_aware
from dialeval.service.db import Database, Invitation
from dialeval.service.errors import Invalid, InvalidValue, NotFound
from dialeval.service.names import check_slug, is_slug

KIND = "collection"
TOUCH_EVERY = timedelta(seconds=5)
_engines: dict[tuple, object] = {}


# ---------------------------------------------------------------------------------------------- collections


def create_collection(db: Database, name: str, engine_spec: str | None, now: datetime, *, engine_model: str = "",
                      engine_name: str | None = None, max_turns: int = 20, human_human: bool = False,
                      timeout_s: float = DEFAULT_TIMEOUT_S) -> Collection:
    """Create a collection: human-machine with the engine ``engine_spec``, or human-human.

    The engine is built (and a ``builtin:retrieval`` corpus read) once here, so a bad spec fails now.
    """
    check_slug(name, "collection", Invalid)
    lo, hi = sessions.MAX_TURNS_RANGE
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or not lo <= max_turns <= hi:
        raise InvalidValue("max_turns", f"{describe(max_turns)} is not allowed; allowed are integers from {lo} to "
                           f"{hi}", what="max turns")
    if human_human:
        if engine_spec:
            raise Invalid("a human-human collection has no engine; drop --engine or --human-human")
        engine_spec, engine_model, engine_name = "", "", sessions.HUMAN
    else:
        if not engine_spec:
            raise Invalid("a human-machine collection needs an engine (--engine), e.g. builtin:retrieval")
        for param, what, value, most in (("engine_spec", "engine", engine_spec, MAX_ENGINE_SPEC),
                                         ("engine_model", "engine model", engine_model or "", MAX_ENGINE_MODEL)):
            if not isinstance(value, str) or len(value) > most or (what == "engine model" and value
                                                                    and not value.strip()):
                raise InvalidValue(param, f"{describe(value)} is not allowed; allowed is a text of at most {most} "
                                   "characters" + (" that is not blank" if what == "engine model" else ""), what=what)
        if problem := timeout_problem(timeout_s):   # the engine's own rule, named as the caller gave it
            raise InvalidValue("timeout_s", problem, what="engine timeout")
        try:
            make_engine(engine_spec, engine_model or "", timeout_s)
        except DialevalError as e:
            raise Invalid(str(e)) from None
        engine_name = sessions.check_engine_name(engine_name or default_name(engine_spec))
    with db.write() as s:
        invitations.check_target_name_free(s, name)
        c = Collection(name=name, human_human=human_human, engine_spec=engine_spec, engine_model=engine_model or "",
                       engine_name=engine_name, engine_timeout_s=float(timeout_s), max_turns=max_turns,
                       created_at=now)
        s.add(c)
    return c


def get_collection(db: Database, name: str) -> Collection:
    """The collection called ``name`` (kept per process once found: a collection's settings never change)."""
    cache = db.__dict__.setdefault("_dialeval_collections", {})
    if name in cache:
        return cache[name]
    if not is_slug(name):
        raise NotFound(f"no collection named {describe(name)}")
    with db.read() as s:
        c = s.scalar(select(Collection).where(Collection.name == name))
    if c is None:
        raise NotFound(f"no collection named {describe(name)}")
    cache[name] = c
    return c


def list_collections(db: Database) -> list[Collection]:
    with db.read() as s:
        return list(s.scalars(select(Collection).order_by(Collection.id)))


def collection_info(c: Collection) -> dict:
    return {"name": c.name, "kind": "human-human" if c.human_human else "human-machine",
            "engine_name": c.engine_name, "max_turns": c.max_turns,
            "roles": list(sessions.roles(c.human_human))}


def engine_of(c: Collection):
    """The collection's engine (built once per process)."""
    key = (c.engine_spec, c.engine_model, c.engine_timeout_s)
    if key not in _engines:
        _engines[key] = make_engine(*key)
    return _engines[key]


def warm(c: Collection) -> None:
    """Build the collection's engine in the background (a retrieval index takes seconds), if not built yet."""
    if not c.human_human and (c.engine_spec, c.engine_model, c.engine_timeout_s) not in _engines:
        threading.Thread(target=_warm, args=(c,), daemon=True).start()


def _warm(c: Collection) -> None:
    with contextlib.suppress(Exception):  # the first reply reports any problem to the participant
        engine_of(c)


# ---------------------------------------------------------------------------------------------- participants


def participant(db: Database, name: str, code: str | None) -> tuple[Collection, Invitation]:
    """The collection and the invitation behind a participant's code (401 for any other code or token)."""
    inv = invitations.check(db, code, KIND, target=name)
    return get_collection(db, name), inv


def role_in(sess: ChatSession, inv: Invitation, human_human: bool) -> str:
    first, second = sessions.roles(human_human)
    if sess.user1_invitation_id == inv.id:
        return first if human_human else "USER"
    if sess.user2_invitation_id == inv.id:
        return second
    raise NotFound(f"no chat {sess.id} of yours in this collection")


def _own(s, c: Collection, inv: Invitation, session_id: int, lock: bool = False) -> ChatSession:
    q = select(ChatSession).where(ChatSession.id == session_id, ChatSession.collection_id == c.id,
                                  or_(ChatSession.user1_invitation_id == inv.id,
                                      ChatSession.user2_invitation_id == inv.id))
    sess = s.scalar(q.with_for_update() if lock else q)
    if sess is None:
        raise NotFound(f"no chat {session_id} of yours in this collection")
    return sess


def _turns(s, session_id: int) -> list[ChatTurn]:
    return list(s.scalars(select(ChatTurn).where(ChatTurn.session_id == session_id).order_by(ChatTurn.position)))


def _speakers(s, session_id: int) -> list[str]:
    return list(s.scalars(select(ChatTurn.speaker).where(ChatTurn.session_id == session_id)
                          .order_by(ChatTurn.position)))


def _seen(sess: ChatSession, role: str, now: datetime | None) -> None:
    if role in ("USER", "USER1"):
        sess.seen1_at = now
    else:
        sess.seen2_at = now


def _check_clock(clock: object) -> None:
    """Refuse a ``clock`` that cannot be called (a time given instead of the clock, say)."""
    if not callable(clock):
        raise TypeError(f"clock must be a callable returning an aware datetime (read under the lock), not "
                        f"{describe(clock)}")


def _read(clock: Callable[[], datetime]) -> datetime:
    """The time ``clock()`` gives, checked: an aware datetime."""
    now = clock()
    if not is_aware(now):
        raise TypeError(f"clock() must return an aware datetime; it returned {describe(now)}")
    return now


def start_session(db: Database, c: Collection, code: str, nickname: str,
                  clock: Callable[[], datetime]) -> ChatSession:
    """The participant's open chat if there is one, else a new one (human-human: paired, or waiting).

    Parameters
    ----------
    db : Database
        The service's database.
    c : Collection
        The collection.
    code : str
        The participant's invitation code (checked, and marked used, in the same transaction).
    nickname : str
        The participant's nickname (:func:`.sessions.check_person_name`).
    clock : callable
        Returns the current time (an aware datetime). It is read once, after the collection's row is
        locked, so that the start time and the chat's number (taken under that lock) are in the same order
        as those of every other start: a later number never has an earlier start time.

    Returns
    -------
    ChatSession
        The open chat, the chat this participant was paired into, or a new one (``waiting`` in a
        human-human collection until someone joins; else ``active`` with its number).

    Raises
    ------
    TypeError
        ``clock`` is not callable, or did not return an aware datetime.
    Invalid
        The nickname is not allowed.
    Unauthorized, Conflict
        The code is not one of this collection's (401); the participant started too many chats.
    """
    _check_clock(clock)
    nickname = sessions.check_person_name(nickname, None if c.human_human else c.engine_name)
    with db.write() as s:
        s.scalar(select(Collection.id).where(Collection.id == c.id).with_for_update())  # one pairing at a time
        now = _read(clock)  # under the lock: start times in the order of the numbers
        inv = invitations.consume(s, code, KIND, now, target=c.name)
        mine = or_(ChatSession.user1_invitation_id == inv.id, ChatSession.user2_invitation_id == inv.id)
        open_ = s.scalar(select(ChatSession).where(ChatSession.collection_id == c.id, mine,
                                                   ChatSession.status.in_(("waiting", "active")))
                         .order_by(ChatSession.id.desc()).limit(1))
        if open_ is not None:
            _seen(open_, role_in(open_, inv, c.human_human), now)
            return open_
        sessions.check_chats_started(s.scalar(select(func.count()).select_from(ChatSession)
                                              .where(ChatSession.collection_id == c.id, mine)))
        if c.human_human:
            waiting = s.scalars(select(ChatSession).where(ChatSession.collection_id == c.id,
                                                          ChatSession.status == "waiting")
                                .order_by(ChatSession.created_at, ChatSession.id)).all()
            for w in waiting:
                if not sessions.is_alive(w.seen1_at, now):
                    w.status, w.ended_at, w.end_reason = "abandoned", now, "left before anyone joined"
                    continue
                w.user2_invitation_id, w.user2_name, w.seen2_at = inv.id, nickname, now
                _begin(s, c, w, now)
                return w
            sess = ChatSession(collection_id=c.id, status="waiting", user1_invitation_id=inv.id,
                               user1_name=nickname, user2_name="", created_at=now, seen1_at=now, end_reason="",
                               engine_error="")
            s.add(sess)
            return sess
        sess = ChatSession(collection_id=c.id, status="waiting", user1_invitation_id=inv.id, user1_name=nickname,
                           user2_name="", created_at=now, seen1_at=now, end_reason="", engine_error="")
        s.add(sess)
        _begin(s, c, sess, now)
        return sess


def _begin(s, c: Collection, sess: ChatSession, now: datetime) -> None:
    """Start a chat: the next number of the collection and the start time ``now``, both taken under the
    collection's lock (held by the caller), so that numbers follow start times."""
    last = s.scalar(select(func.max(ChatSession.number)).where(ChatSession.collection_id == c.id))
    number = 0 if last is None else last + 1
    sessions.dialogue_id(c.engine_name, number)  # refuses a 6th digit
    sess.number, sess.status, sess.started_at = number, "active", now
    s.flush()


def get_session(db: Database, c: Collection, inv: Invitation, session_id: int, now: datetime | None = None,
                after: int = 0) -> tuple[ChatSession, list[ChatTurn]]:
    """A participant's chat and its turns after position ``after``; marks them seen (at most every 5 s)."""
    with db.read() as s:
        sess = _own(s, c, inv, session_id)
        turns = list(s.scalars(select(ChatTurn).where(ChatTurn.session_id == sess.id, ChatTurn.position > after)
                               .order_by(ChatTurn.position)))
    if now is not None and sess.status in ("waiting", "active"):
        role = role_in(sess, inv, c.human_human)
        seen = sess.seen1_at if role in ("USER", "USER1") else sess.seen2_at
        if seen is None or now - seen >= TOUCH_EVERY:
            touch(db, c, inv, session_id, now)
    return sess, turns


def touch(db: Database, c: Collection, inv: Invitation, session_id: int, now: datetime | None) -> None:
    """Record that the participant is (``now``) or is no longer (None) on the chat page."""
    with db.write() as s:
        sess = _own(s, c, inv, session_id, lock=True)
        _seen(sess, role_in(sess, inv, c.human_human), now)


def add_turn(db: Database, c: Collection, who: Invitation | str | None, session_id: int, text: str,
             clock: Callable[[], datetime], position: object = None
             ) -> tuple[Invitation, ChatSession, list[ChatTurn]]:
    """Store a participant's turn (committed before any engine is asked); ends the chat at its turn limit.

    Parameters
    ----------
    db : Database
        The service's database.
    c : Collection
        The collection.
    who : Invitation or str or None
        The participant's invitation, or their code: then it is checked in the same transaction (one
        database round trip less on the path of every turn; the clock is read for it too, as the time of
        the code's first use, before the chat's row is locked).
    session_id : int
        The chat.
    text : str
        The utterance (:func:`.sessions.clean_utterance`).
    clock : callable
        Returns the current time (an aware datetime). The turn's time is read after the chat's row is
        locked, so that the order of the turns' positions is the order of their times (a time read before
        waiting on the lock could be earlier than that of the turn stored while it waited).
    position : int or None
        The place the sender's page gives the turn (its last turn + 1); a turn whose place is taken already
        (sent again after a lost answer, or from a page that missed turns) is refused, nothing stored
        (:func:`.sessions.check_position`, 409); None: no check.

    Returns
    -------
    tuple
        The invitation, the session and all its turns, the new one last.

    Raises
    ------
    TypeError
        ``clock`` is not callable, or did not return an aware datetime.
    Unauthorized
        ``who`` is a code that is not one of this collection's (401).
    Invalid
        The utterance or ``position`` is not allowed (422).
    Conflict
        Not this participant's turn, the chat is not active, or ``position`` is taken (409).
    NotFound
        No such chat of this participant's.
    """
    _check_clock(clock)
    with db.write() as s:
        inv = who if isinstance(who, Invitation) else invitations.consume(s, who, KIND, _read(clock),
                                                                         target=c.name)
        text = sessions.clean_utterance(text)
        sess = _own(s, c, inv, session_id, lock=True)
        now = _read(clock)  # under the chat's lock: positions and times in the same order
        role = role_in(sess, inv, c.human_human)
        rows = _turns(s, sess.id)
        sessions.check_position(position, len(rows))
        sessions.check_turn(c.human_human, sess.status, [t.speaker for t in rows], role, c.max_turns)
        turn = ChatTurn(session_id=sess.id, position=len(rows) + 1, speaker=role, utterance=text, created_at=now)
        s.add(turn)
        if sessions.limit_reached(len(rows) + 1, c.max_turns):
            sess.status, sess.ended_at, sess.end_reason = "ended", now, f"reached {c.max_turns} turns"
    return inv, sess, [*rows, turn]


def answer(db: Database, c: Collection, inv: Invitation, session_id: int, clock: Callable[[], datetime],
           known: tuple[ChatSession, list[ChatTurn]] | None = None) -> tuple[ChatSession, ChatTurn | None, str]:
    """Ask the engine for the reply a human-machine chat waits for, and store it.

    ``known``: the session and its turns as :func:`add_turn` returned them (else they are read). Returns
    ``(session, turn, "")``, or ``(session, None, message)`` when the engine failed (the message is kept on
    the session until a reply arrives), or ``(session, None, "")`` when no reply is awaited.

    The reply is made storable by :func:`.sessions.usable_reply` (cut to the participant's limit, control
    characters and bidi controls removed) rather than refused: the engine would answer the same at every retry.
    ``clock`` (a callable returning an aware datetime) gives the reply's time, read once the chat's row is
    locked, as a participant's turn (:func:`add_turn`); a clock that is not callable is a :class:`TypeError`.
    """
    _check_clock(clock)
    if known is None:
        with db.read() as s:
            sess = _own(s, c, inv, session_id)
            rows = _turns(s, sess.id)
    else:
        sess, rows = known
    speakers = [t.speaker for t in rows]
    if c.human_human or not sessions.awaiting_reply(False, sess.status, speakers, c.max_turns):
        return sess, None, ""
    dialogue = Dialogue(sessions.dialogue_id(c.engine_name, sess.number),
                        [Turn(t.speaker.lower(), [t.utterance]) for t in rows])
    t0 = time.perf_counter()
    try:
        text = sessions.usable_reply(engine_of(c).reply(dialogue))  # cut and cleaned, never refused
        error = ""
    except EngineError as e:
        text, error = None, f"{e}; your message is saved, ask again with Retry"
    except (Invalid, DialevalError) as e:
        text, error = None, f"the chat engine's reply cannot be used ({e}); your message is saved, ask again"
    except Exception as e:  # an engine's own bug must not lose the turn nor answer 500
        text, error = None, f"the chat engine failed ({type(e).__name__}); your message is saved, ask again"
    engine_ms = (time.perf_counter() - t0) * 1000
    with db.write() as s:
        sess = _own(s, c, inv, session_id, lock=True)
        now = _read(clock)  # under the chat's lock, as a participant's turn (:func:`add_turn`)
        now_speakers = _speakers(s, sess.id)
        if now_speakers != speakers or not sessions.awaiting_reply(False, sess.status, now_speakers, c.max_turns):
            return sess, None, ""  # answered meanwhile (a retry), or ended
        if text is None:
            sess.engine_error = error[:500]
            return sess, None, error
        turn = ChatTurn(session_id=sess.id, position=len(speakers) + 1, speaker="SYSTEM", utterance=text,
                        created_at=now, engine_ms=engine_ms)
        s.add(turn)
        sess.engine_error = ""
        if sessions.limit_reached(len(speakers) + 1, c.max_turns):
            sess.status, sess.ended_at, sess.end_reason = "ended", now, f"reached {c.max_turns} turns"
    return sess, turn, ""


def retry(db: Database, c: Collection, inv: Invitation, session_id: int, clock: Callable[[], datetime],
          after: int = 0) -> tuple[ChatSession, list[ChatTurn], str]:
    """Ask the engine again for the reply a chat waits for (the participant's Retry).

    Returns ``(session, turns after position after, engine error or "")``. A retry on an active chat that
    waits for nothing adds nothing (a reply came meanwhile); one on a chat that is not going on is refused
    (:func:`.sessions.check_retry`), before the engine is asked and again when the chat ended while it was
    being asked (then nothing was stored).

    Raises
    ------
    Conflict
        The chat has ended or was abandoned (409), or nobody has joined it yet.
    NotFound
        No such chat of this participant's.
    """
    with db.read() as s:
        sess = _own(s, c, inv, session_id)
        rows = _turns(s, sess.id)
    sessions.check_retry(sess.status, [t.speaker for t in rows], c.max_turns, after)
    sess, reply, error = answer(db, c, inv, session_id, clock, (sess, rows))
    if reply is not None or error:
        return sess, [t for t in rows if t.position > after] + ([reply] if reply is not None else []), error
    with db.read() as s:  # nothing stored by this call: the chat as it is now (answered, or ended, meanwhile)
        sess = _own(s, c, inv, session_id)
        rows = _turns(s, sess.id)
    sessions.check_retry(sess.status, [t.speaker for t in rows], c.max_turns, after)
    return sess, [t for t in rows if t.position > after], ""


def end_session(db: Database, c: Collection, inv: Invitation, session_id: int,
                clock: Callable[[], datetime]) -> ChatSession:
    """End a chat (a waiting one is abandoned); ending an ended chat changes nothing.

    ``clock`` (returning an aware datetime) is read once the chat's row is locked, as in :func:`add_turn`: the
    chat's end is never earlier than a turn stored while the end waited on the lock.
    """
    _check_clock(clock)
    with db.write() as s:
        sess = _own(s, c, inv, session_id, lock=True)
        now = _read(clock)
        if sess.status == "waiting":
            sess.status, sess.ended_at, sess.end_reason = "abandoned", now, "left before anyone joined"
        elif sess.status == "active":
            role = role_in(sess, inv, c.human_human)
            sess.status, sess.ended_at, sess.end_reason = "ended", now, f"ended by {role}"
        sess.engine_error = ""  # it waits for no reply now
    return sess


def collection_status(db: Database, name: str) -> dict:
    """What an organiser sees of a collection: its settings, chats by status, turns, and codes used."""
    c = get_collection(db, name)
    with db.read() as s:
        by_status = dict(s.execute(select(ChatSession.status, func.count()).where(ChatSession.collection_id == c.id)
                                   .group_by(ChatSession.status)).all())
        turns = s.scalar(select(func.count()).select_from(ChatTurn).join(ChatSession)
                         .where(ChatSession.collection_id == c.id))
        failing = s.scalar(select(func.count()).select_from(ChatSession).where(
            ChatSession.collection_id == c.id, ChatSession.status == "active", ChatSession.engine_error != ""))
    return {**collection_info(c), "engine": c.engine_spec, "chats": {k: by_status.get(k, 0) for k in sessions.STATUSES},
            "turns": turns, "waiting_for_engine_after_error": failing,
            "codes": invitations.counts(db, KIND, c.name)}


def session_state(c: Collection, sess: ChatSession, turns: list[ChatTurn], inv: Invitation,
                  now: datetime | None = None) -> dict:
    """What the page and the API show of a chat, from one participant's side.

    ``engine_error`` (the engine's last failure, "ask again with Retry") is shown while the chat is active
    only: a chat that has ended or was abandoned waits for no reply (a retry there is a 409)."""
    role = role_in(sess, inv, c.human_human)
    out = {"id": sess.id, "collection": c.name, "status": sess.status, "you": role,
           # the name this chat keeps for the participant (its log's), not the one typed when joining again
           "your_name": sess.user1_name if sess.user1_invitation_id == inv.id else sess.user2_name,
           "dialogue_id": None if sess.number is None else sessions.dialogue_id(c.engine_name, sess.number),
           "max_turns": c.max_turns, "end_reason": sess.end_reason,
           # only an active chat waits for a reply: an ended one offers no Retry, whatever failed before
           "engine_error": (sess.engine_error or None) if sess.status == "active" else None,
           "turns": [turn_info(t) for t in turns]}
    if c.human_human and now is not None:
        partner_seen = sess.seen2_at if role == "USER1" else sess.seen1_at
        out["partner_here"] = sess.status == "active" and sessions.is_alive(partner_seen, now, 3 * TOUCH_EVERY)
    return out


def turn_info(t: ChatTurn) -> dict:
    return {"position": t.position, "speaker": t.speaker, "utterance": t.utterance,
            "time": t.created_at.isoformat().replace("+00:00", "Z")}
