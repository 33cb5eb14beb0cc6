"""Indexes for two lookups that read whole tables: a team's registration form (``teams.form_nonce``, looked up
under the one registration lock, so every registration waited for a scan of all teams: 5 ms at 10,000) and a
team's runs (``submissions.team_id``: ``/api/me`` read the whole index of tasks, teams and times for a team's
six runs). Found by a performance probe.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28

"""
from collections.abc import Sequence

from alembic import op

revision: str = '0008'
down_revision: str | Sequence[str] | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_teams_form_nonce', 'teams', ['form_nonce'], unique=False)
    op.create_index('ix_submissions_team_time', 'submissions', ['team_id', 'created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_submissions_team_time', table_name='submissions')
    op.drop_index('ix_teams_form_nonce', table_name='teams')
