"""A collection's finished chats as a :class:`~dialeval.corpus.Corpus` and as WOCHAT XML (COLLECT.md).

- dialogue id: engine name (``human`` for human-human) + the session's 5-digit number, given in order of
  session start (numbers of chats that never ended are skipped, so ids never change between exports);
- ``<system_name>``/``<user_name>`` (human-human ``<user1_name>``, ``<user2_name>``), ``<timestamp>`` of
  the session start, speakers only among those roles, a ``<timestamp>`` in each turn;
- every whole-word occurrence of a declared name in an utterance is replaced by its tag (``SYSTEM_NAME``,
  ``USER_NAME``...): "Iris, hi" -> "SYSTEM_NAME, hi", but "Irish" stays.

The XML is written by :func:`dialeval.io.wochat_writer.write_wochat` and reads back with
``dialeval.read_corpus`` into the same corpus :func:`collection_corpus` returns.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.wochat import VALIDITY, name_pattern, validity_scale
from dialeval.io.wochat_writer import write_wochat
from dialeval.io.writers import WriteReport
from dialeval.service.collection import sessions
from dialeval.service.collection.chats import get_collection
from dialeval.service.collection.tables import ChatSession, ChatTurn, Collection
from dialeval.service.db import Database


def stamp(t: datetime) -> str:
    """An ISO 8601 UTC time to the second, e.g. ``2026-03-01T12:00:00Z``."""
    return t.isoformat(timespec="seconds").replace("+00:00", "Z")


def replace_names(text: str, names: dict[str, str]) -> str:
    """Replace each declared name (whole word, any case; longest names first) by its tag ``ROLE_NAME``.

    Examples
    --------
    >>> replace_names("about you Iris, you are Irish", {"SYSTEM": "IRIS", "USER": "Ann"})
    'about you SYSTEM_NAME, you are Irish'
    """
    for role, name in sorted(names.items(), key=lambda kv: -len(kv[1])):
        if name:
            text = name_pattern(name).sub(f"{role}_NAME", text)
    return text


def _names(c: Collection, sess: ChatSession) -> dict[str, str]:
    if c.human_human:
        return {"USER1": sess.user1_name, "USER2": sess.user2_name}
    return {"SYSTEM": c.engine_name, "USER": sess.user1_name}


def _dialogue(c: Collection, sess: ChatSession, turns: list[ChatTurn]) -> Dialogue:
    names = _names(c, sess)
    out = [Turn(t.speaker.lower(), [replace_names(t.utterance, names)],
                meta={"id": t.position, "tags": [{"tag": "timestamp", "attrib": {}, "text": stamp(t.created_at)}]})
           for t in turns]
    return Dialogue(sessions.dialogue_id(c.engine_name, sess.number), out,
                    meta={"timestamp": stamp(sess.started_at), "names": names})


def collection_corpus(db: Database, name: str, *, unfinished: bool = False) -> Corpus:
    """The ended chats (with at least one turn) of collection ``name``, in order of start, as a Corpus.

    ``unfinished=True`` adds the chats still open (a participant who left without ending), as they are.

    Senders are ``user``/``system`` (human-human ``user1``/``user2``); ``dialogue.meta`` holds ``names`` and
    ``timestamp``, ``turn.meta`` the turn ``id`` and its ``timestamp`` tag: the content of the XML export.

    Raises
    ------
    dialeval.service.errors.NotFound
        No collection of that name.
    """
    c = get_collection(db, name)
    statuses = ("ended", "active") if unfinished else ("ended",)
    with db.read() as s:
        chats = list(s.scalars(select(ChatSession).where(ChatSession.collection_id == c.id,
                                                         ChatSession.status.in_(statuses),
                                                         ChatSession.number.is_not(None))
                               .order_by(ChatSession.number)))
        by_session: dict[int, list[ChatTurn]] = {x.id: [] for x in chats}
        for t in s.scalars(select(ChatTurn).join(ChatSession, ChatSession.id == ChatTurn.session_id)
                           .where(ChatSession.collection_id == c.id, ChatSession.status.in_(statuses))
                           .order_by(ChatTurn.session_id, ChatTurn.position)):
            # PostgreSQL reads each statement at its own time (READ COMMITTED): a chat that ended (or began)
            # after the first one is not in this export, its turns are left out with it (the next export has it)
            if t.session_id in by_session:
                by_session[t.session_id].append(t)
    dialogues = [_dialogue(c, x, by_session[x.id]) for x in chats if by_session[x.id]]
    return Corpus(dialogues, {VALIDITY: validity_scale()}, "wochat", f"collection {c.name}",
                  meta={"collection": c.name, "kind": "human-human" if c.human_human else "human-machine"})


def export_chats(db: Database, name: str, out_dir: str | Path, *, unfinished: bool = False) -> WriteReport:
    """Write the ended chats of collection ``name`` as WOCHAT XML, one ``ID.xml`` per dialogue in a new folder
    (``unfinished=True``: the open ones too)."""
    corpus = collection_corpus(db, name, unfinished=unfinished)
    if not corpus.dialogues:
        from dialeval.service.errors import Conflict
        raise Conflict(f"collection {name!r} has no finished chat yet; nothing to export")
    return write_wochat(corpus, out_dir, ids="strict")
