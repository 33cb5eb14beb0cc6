"""A run uploaded from the task page, and a team registered on the home page, keep the random value of the form
they came from (``form_nonce``): the same form sent again (a reload of the result page) shows that run, or says
that team was registered, instead of scoring and counting the run again or answering "the name is taken". Runs
and teams of the API, and earlier ones, have none.

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
    for table in ('submissions', 'teams'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('form_nonce', sa.String(length=64), nullable=True))


def downgrade() -> None:
    for table in ('teams', 'submissions'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('form_nonce')
