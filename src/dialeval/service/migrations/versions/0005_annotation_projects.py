"""Annotation projects: annotation_projects, annotation_items, annotators, annotation_assignments, annotation_labels.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 19:24:34.024458

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | Sequence[str] | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""

    op.create_table('annotation_projects',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('scheme', sa.String(length=16), nullable=False),
    sa.Column('overlap', sa.Integer(), nullable=False),
    sa.Column('hide_speakers', sa.Boolean(), nullable=False),
    sa.Column('guidelines', sa.Text(), nullable=False),
    sa.Column('timeout_s', sa.Float(), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(length=500), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('annotation_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('dialogue_id', sa.String(length=200), nullable=False),
    sa.Column('dialogue', sa.JSON(), nullable=False),
    sa.Column('live', sa.Integer(), nullable=False),
    sa.Column('finished', sa.Integer(), nullable=False),
    sa.Column('tie', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['annotation_projects.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'position', name='uq_annotation_items_position')
    )
    with op.batch_alter_table('annotation_items', schema=None) as batch_op:
        batch_op.create_index('ix_annotation_items_fill', ['project_id', 'finished', 'live', 'tie'], unique=False)

    op.create_table('annotators',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('invitation_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('joined_at', sa.DateTime(), nullable=False),
    sa.Column('excluded_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['invitation_id'], ['invitations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['annotation_projects.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'invitation_id', name='uq_annotators_invitation'),
    sa.UniqueConstraint('project_id', 'number', name='uq_annotators_number')
    )
    op.create_table('annotation_assignments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('slot', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['annotator_id'], ['annotators.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['item_id'], ['annotation_items.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['annotation_projects.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('item_id', 'annotator_id', name='uq_annotation_assignments_once'),
    sa.UniqueConstraint('item_id', 'slot', name='uq_annotation_assignments_slot')
    )
    with op.batch_alter_table('annotation_assignments', schema=None) as batch_op:
        batch_op.create_index('ix_annotation_assignments_annotator', ['annotator_id', 'state'], unique=False)
        batch_op.create_index('ix_annotation_assignments_state', ['project_id', 'state', 'expires_at'], unique=False)

    op.create_table('annotation_labels',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('assignment_id', sa.Integer(), nullable=False),
    sa.Column('turn', sa.Integer(), nullable=False),
    sa.Column('scale', sa.String(length=64), nullable=False),
    sa.Column('value', sa.String(length=64), nullable=False),
    sa.Column('saved_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['assignment_id'], ['annotation_assignments.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('assignment_id', 'turn', 'scale', name='uq_annotation_labels_unit')
    )



def downgrade() -> None:
    """Downgrade schema."""

    op.drop_table('annotation_labels')
    with op.batch_alter_table('annotation_assignments', schema=None) as batch_op:
        batch_op.drop_index('ix_annotation_assignments_state')
        batch_op.drop_index('ix_annotation_assignments_annotator')

    op.drop_table('annotation_assignments')
    op.drop_table('annotators')
    with op.batch_alter_table('annotation_items', schema=None) as batch_op:
        batch_op.drop_index('ix_annotation_items_fill')

    op.drop_table('annotation_items')
    op.drop_table('annotation_projects')

