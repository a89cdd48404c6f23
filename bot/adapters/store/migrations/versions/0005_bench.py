"""bench runs

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('bench_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('runner', sa.String(length=100), nullable=False),
    sa.Column('base_sha', sa.String(length=40), nullable=True),
    sa.Column('head_sha', sa.String(length=40), nullable=False),
    sa.Column('verdict', sa.String(length=20), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('result', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_runs_repo_key'), ['repo_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_runs_slug'), ['slug'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_runs_slug'))
        batch_op.drop_index(batch_op.f('ix_bench_runs_repo_key'))

    op.drop_table('bench_runs')
