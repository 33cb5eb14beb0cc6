"""Tables of the leaderboard, registered on :class:`dialeval.service.db.Base` (migrations 0001, 0003, 0006).

``tasks`` (a declared task over a test set: the split, its secret and quotas; its gold file in ``task_golds``)
and ``submissions`` (a team's scored run; the uploaded bytes in ``submission_files``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from dialeval.service.db import Base, UTCDateTime


class Task(Base):
    __tablename__ = "tasks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    subtask: Mapped[str] = mapped_column(String(64))     # a declared task's key (dialeval.tasks.KEYS)
    columns: Mapped[list] = mapped_column(JSON)          # score columns of the subtask (Scores.columns)
    rank_by: Mapped[str] = mapped_column(String(64))     # the column a team's best run is chosen by
    n_dialogues: Mapped[int] = mapped_column(Integer)
    public_ids: Mapped[list] = mapped_column(JSON)       # fixed once, from public_fraction and the secret
    public_fraction: Mapped[float] = mapped_column(Float)
    seed: Mapped[int | None] = mapped_column(Integer, nullable=True)  # an explicit seed (tests), else None
    split_secret: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # never shown
    daily_limit: Mapped[int] = mapped_column(Integer)
    total_limit: Mapped[int] = mapped_column(Integer)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    gold_name: Mapped[str] = mapped_column(String(255))
    gold_sha256: Mapped[str] = mapped_column(String(64))


class TaskGold(Base):
    __tablename__ = "task_golds"

    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (Index("ix_submissions_task_team_time", "task_id", "team_id", "created_at"),
                      Index("ix_submissions_team_time", "team_id", "created_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    filename: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    on_leaderboard: Mapped[bool] = mapped_column(Boolean, default=True)
    chosen: Mapped[bool] = mapped_column(Boolean, default=False)  # the team's pick for the final ranking
    public_scores: Mapped[dict] = mapped_column(JSON)              # {column: mean} on the public half
    final_scores: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # on 100%, set at close
    final_error: Mapped[str | None] = mapped_column(String(500), nullable=True)  # why it has no final score
    settings: Mapped[dict] = mapped_column(JSON)                   # scorer settings and version
    form_nonce: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the page form it came from


class SubmissionFile(Base):
    __tablename__ = "submission_files"

    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"),
                                               primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
