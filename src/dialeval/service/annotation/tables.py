"""Tables of annotation projects, registered on :class:`dialeval.service.db.Base` (migration 0005).

``annotation_projects`` (scheme, overlap k, guidelines, timeout, the seed of the tie-breaks),
``annotation_items`` (one dialogue each, with its counts of live and finished assignments),
``annotators`` (one invitation code in one project, numbered A001...), ``annotation_assignments`` (an
annotator on an item: ``active`` / ``finished`` / ``expired`` / ``excluded``) and ``annotation_labels``
(one row per label given, as given; saving again replaces it).

Exactness is also a database rule: a live assignment (active or finished) holds one of the item's k
slots, ``UNIQUE (item_id, slot)`` (an expired one gives its slot back: NULL), and
``UNIQUE (item_id, annotator_id)`` keeps an annotator from ever getting an item twice.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from dialeval.service.db import Base, UTCDateTime


class AnnotationProject(Base):
    __tablename__ = "annotation_projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    scheme: Mapped[str] = mapped_column(String(16))               # schemes.SCHEMES
    overlap: Mapped[int] = mapped_column(Integer)                 # k
    hide_speakers: Mapped[bool] = mapped_column(Boolean, default=False)
    guidelines: Mapped[str] = mapped_column(Text, default="")     # Markdown, rendered safely
    timeout_s: Mapped[float] = mapped_column(Float)               # an unfinished assignment expires after this
    seed: Mapped[int] = mapped_column(Integer)                    # tie-breaks among equally filled items
    source: Mapped[str] = mapped_column(String(500), default="")  # the corpus file or collection
    meta: Mapped[dict] = mapped_column(JSON, default=dict)        # corpus format, scales' names
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AnnotationItem(Base):
    __tablename__ = "annotation_items"
    __table_args__ = (UniqueConstraint("project_id", "position", name="uq_annotation_items_position"),
                      Index("ix_annotation_items_fill", "project_id", "finished", "live", "tie"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("annotation_projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    dialogue_id: Mapped[str] = mapped_column(String(200))
    dialogue: Mapped[dict] = mapped_column(JSON)                  # turns (sender, utterances, meta) and meta
    live: Mapped[int] = mapped_column(Integer, default=0)         # active + finished assignments (<= k)
    finished: Mapped[int] = mapped_column(Integer, default=0)
    tie: Mapped[int] = mapped_column(Integer)                     # random order among equals (from the seed)


class Annotator(Base):
    __tablename__ = "annotators"
    __table_args__ = (UniqueConstraint("project_id", "number", name="uq_annotators_number"),
                      UniqueConstraint("project_id", "invitation_id", name="uq_annotators_invitation"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("annotation_projects.id", ondelete="CASCADE"))
    invitation_id: Mapped[int] = mapped_column(ForeignKey("invitations.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)                  # A001, A002... in order of first use
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())
    excluded_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Assignment(Base):
    __tablename__ = "annotation_assignments"
    __table_args__ = (UniqueConstraint("item_id", "slot", name="uq_annotation_assignments_slot"),
                      UniqueConstraint("item_id", "annotator_id", name="uq_annotation_assignments_once"),
                      Index("ix_annotation_assignments_state", "project_id", "state", "expires_at"),
                      Index("ix_annotation_assignments_annotator", "annotator_id", "state"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("annotation_projects.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("annotation_items.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    slot: Mapped[int | None] = mapped_column(Integer, nullable=True)   # 0..k-1 while live; NULL once expired
    state: Mapped[str] = mapped_column(String(16))                     # assignment.STATES
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Label(Base):
    __tablename__ = "annotation_labels"
    __table_args__ = (UniqueConstraint("assignment_id", "turn", "scale", name="uq_annotation_labels_unit"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("annotation_assignments.id", ondelete="CASCADE"))
    turn: Mapped[int] = mapped_column(Integer)                    # schemes.DIALOGUE (-1) or the turn's position
    scale: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(String(64))
    saved_at: Mapped[datetime] = mapped_column(UTCDateTime())
