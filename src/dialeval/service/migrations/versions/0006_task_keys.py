"""A task scores any declared task: ``tasks.subtask`` holds a declared task's key (up to 64 characters,
``conture-impression``), not only ``quality``/``nugget``. Existing tasks keep their key.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | Sequence[str] | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.alter_column('subtask', existing_type=sa.String(length=16), type_=sa.String(length=64),
                              existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.alter_column('subtask', existing_type=sa.String(length=64), type_=sa.String(length=16),
                              existing_nullable=False)
