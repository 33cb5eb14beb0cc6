"""Chat collection: collections, chat_sessions, chat_turns.

Revision ID: 0004
Revises: 0002
Create Date: 2026-11-24

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | Sequence[str] | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('collections',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('human_human', sa.Boolean(), nullable=False),
    sa.Column('engine_spec', sa.String(length=1000), nullable=False),
    sa.Column('engine_model', sa.String(length=200), nullable=False),
    sa.Column('engine_name', sa.String(length=32), nullable=False),
    sa.Column('engine_timeout_s', sa.Float(), nullable=False),
    sa.Column('max_turns', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('chat_sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('user1_invitation_id', sa.Integer(), nullable=False),
    sa.Column('user2_invitation_id', sa.Integer(), nullable=True),
    sa.Column('user1_name', sa.String(length=40), nullable=False),
    sa.Column('user2_name', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('ended_at', sa.DateTime(), nullable=True),
    sa.Column('end_reason', sa.String(length=200), nullable=False),
    sa.Column('seen1_at', sa.DateTime(), nullable=True),
    sa.Column('seen2_at', sa.DateTime(), nullable=True),
    sa.Column('engine_error', sa.String(length=500), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user1_invitation_id'], ['invitations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user2_invitation_id'], ['invitations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('collection_id', 'number', name='uq_chat_sessions_number')
    )
    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.create_index('ix_chat_sessions_collection_status', ['collection_id', 'status'], unique=False)
        batch_op.create_index(batch_op.f('ix_chat_sessions_user1_invitation_id'), ['user1_invitation_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_chat_sessions_user2_invitation_id'), ['user2_invitation_id'],
                              unique=False)
    op.create_table('chat_turns',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('speaker', sa.String(length=16), nullable=False),
    sa.Column('utterance', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('engine_ms', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['chat_sessions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('session_id', 'position', name='uq_chat_turns_position')
    )


def downgrade() -> None:
    op.drop_table('chat_turns')
    with op.batch_alter_table('chat_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chat_sessions_user2_invitation_id'))
        batch_op.drop_index(batch_op.f('ix_chat_sessions_user1_invitation_id'))
        batch_op.drop_index('ix_chat_sessions_collection_status')
    op.drop_table('chat_sessions')
    op.drop_table('collections')
