"""A run uploaded from the task page keeps the random value of the form it came from (``form_nonce``): the same
form sent again (a reload of the result page) shows that run instead of scoring and counting it again. Runs of
the API, and earlier runs, have none.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | Sequence[str] | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('form_nonce', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('form_nonce')
