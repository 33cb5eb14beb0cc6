"""Tables of chat collection, registered on :class:`dialeval.service.db.Base` (migration 0004).

``collections`` (one engine or human-human), ``chat_sessions`` (one dialogue: its participants, its number in
order of start, its state) and ``chat_turns`` (every utterance, stored as soon as it is given).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from dialeval.service.db import Base, UTCDateTime

MAX_ENGINE_SPEC = 1000
MAX_ENGINE_MODEL = 200
"""The longest engine address and model name a collection stores (checked by ``chats.create_collection``)."""


class Collection(Base):
    __tablename__ = "collections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    human_human: Mapped[bool] = mapped_column(Boolean, default=False)
    engine_spec: Mapped[str] = mapped_column(String(MAX_ENGINE_SPEC), default="")   # "" for human-human
    engine_model: Mapped[str] = mapped_column(String(MAX_ENGINE_MODEL), default="")
    engine_name: Mapped[str] = mapped_column(String(32))                 # <system_name>; "human" for human-human
    engine_timeout_s: Mapped[float] = mapped_column(Float, default=30.0)
    max_turns: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ChatSession(Base):
    """One chat. ``number`` (the 5 digits of the dialogue id) is given when the chat starts, in start order."""

    __tablename__ = "chat_sessions"
    __table_args__ = (UniqueConstraint("collection_id", "number", name="uq_chat_sessions_number"),
                      Index("ix_chat_sessions_collection_status", "collection_id", "status"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16))          # sessions.STATUSES
    user1_invitation_id: Mapped[int] = mapped_column(ForeignKey("invitations.id", ondelete="CASCADE"), index=True)
    user2_invitation_id: Mapped[int | None] = mapped_column(ForeignKey("invitations.id", ondelete="CASCADE"),
                                                            nullable=True, index=True)
    user1_name: Mapped[str] = mapped_column(String(40), default="")
    user2_name: Mapped[str] = mapped_column(String(40), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    end_reason: Mapped[str] = mapped_column(String(200), default="")
    seen1_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)   # last sign of life
    seen2_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    engine_error: Mapped[str] = mapped_column(String(500), default="")  # why the last reply is missing


class ChatTurn(Base):
    __tablename__ = "chat_turns"
    __table_args__ = (UniqueConstraint("session_id", "position", name="uq_chat_turns_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)            # 1, 2, ... (the WOCHAT turn id)
    speaker: Mapped[str] = mapped_column(String(16))          # SYSTEM, USER, USER1, USER2
    utterance: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    engine_ms: Mapped[float | None] = mapped_column(Float, nullable=True)  # the engine's own time (system turns)
