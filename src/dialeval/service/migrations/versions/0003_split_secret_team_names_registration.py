"""A task's split secret; team names' canonical key and skeleton; team approval; registration attempts;
a run's final-scoring error.

Existing teams get their key and skeleton computed here (two old names with one key keep both teams: the
later one's key gets ``#ID`` appended) and count as approved from their registration; existing tasks keep
their seed (their split is unchanged).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: str | Sequence[str] | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    from dialeval.service.names import name_key, skeleton

    op.create_table('registration_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('client', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('registration_attempts', schema=None) as batch_op:
        batch_op.create_index('ix_registration_attempts_client_time', ['client', 'created_at'], unique=False)

    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('split_secret', sa.LargeBinary(), nullable=True))
        batch_op.alter_column('seed', existing_type=sa.Integer(), nullable=True)

    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('final_error', sa.String(length=500), nullable=True))

    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.add_column(sa.Column('name_key', sa.String(length=400), nullable=True))
        batch_op.add_column(sa.Column('name_skeleton', sa.String(length=400), nullable=True))
        batch_op.add_column(sa.Column('approved_at', sa.DateTime(), nullable=True))
    teams = sa.table('teams', sa.column('id', sa.Integer()), sa.column('name', sa.String()),
                     sa.column('name_key', sa.String()), sa.column('name_skeleton', sa.String()),
                     sa.column('created_at', sa.DateTime()), sa.column('approved_at', sa.DateTime()))
    conn = op.get_bind()
    seen: set[str] = set()
    for tid, name in conn.execute(sa.select(teams.c.id, teams.c.name).order_by(teams.c.id)).all():
        key = base = name_key(name)[:390]
        n = 0
        while key in seen:  # a suffixed key may be another team's own ('teama#3' registered as such): again
            n += 1
            key = f"{base}#{tid}" if n == 1 else f"{base}#{tid}-{n}"
        seen.add(key)
        conn.execute(teams.update().where(teams.c.id == tid)
                     .values(name_key=key, name_skeleton=skeleton(name)[:400], approved_at=teams.c.created_at))
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.alter_column('name_key', existing_type=sa.String(length=400), nullable=False)
        batch_op.alter_column('name_skeleton', existing_type=sa.String(length=400), nullable=False)
        batch_op.create_unique_constraint('uq_teams_name_key', ['name_key'])
        batch_op.create_index('ix_teams_name_skeleton', ['name_skeleton'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.drop_index('ix_teams_name_skeleton')
        batch_op.drop_constraint('uq_teams_name_key', type_='unique')
        batch_op.drop_column('approved_at')
        batch_op.drop_column('name_skeleton')
        batch_op.drop_column('name_key')
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('final_error')
    op.execute("UPDATE tasks SET seed = 0 WHERE seed IS NULL")
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.alter_column('seed', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column('split_secret')
    with op.batch_alter_table('registration_attempts', schema=None) as batch_op:
        batch_op.drop_index('ix_registration_attempts_client_time')
    op.drop_table('registration_attempts')
