"""fixes, live bench runs, verdicts on records

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('fixes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('branch', sa.String(length=255), nullable=False),
    sa.Column('source', sa.String(length=12), nullable=False),
    sa.Column('state', sa.String(length=12), nullable=False),
    sa.Column('head_sha', sa.String(length=40), nullable=True),
    sa.Column('base_sha', sa.String(length=40), nullable=True),
    sa.Column('pr_number', sa.Integer(), nullable=True),
    sa.Column('additions', sa.Integer(), nullable=False),
    sa.Column('deletions', sa.Integer(), nullable=False),
    sa.Column('changed_files', sa.Integer(), nullable=False),
    sa.Column('token_delta', sa.Integer(), nullable=True),
    sa.Column('attached_by', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_key', 'slug', 'branch')
    )
    with op.batch_alter_table('fixes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_fixes_repo_key'), ['repo_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_fixes_slug'), ['slug'], unique=False)

    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('status', sa.String(length=12), nullable=False, server_default="done"))
        batch_op.add_column(sa.Column('purpose', sa.String(length=12), nullable=False, server_default="fix"))
        batch_op.add_column(sa.Column('pr_number', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('requested_by', sa.String(length=200), nullable=False, server_default=""))
        batch_op.add_column(sa.Column('host', sa.String(length=200), nullable=False, server_default=""))
        batch_op.add_column(sa.Column('progress', sa.JSON(), nullable=False, server_default='{}'))
        batch_op.add_column(sa.Column('started_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f('ix_bench_runs_status'), ['status'], unique=False)

    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.add_column(sa.Column('verdict', sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column('verdict_run_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('reproduced', sa.String(length=20), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.drop_column('reproduced')
        batch_op.drop_column('verdict_run_id')
        batch_op.drop_column('verdict')

    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_runs_status'))
        batch_op.drop_column('finished_at')
        batch_op.drop_column('started_at')
        batch_op.drop_column('progress')
        batch_op.drop_column('host')
        batch_op.drop_column('requested_by')
        batch_op.drop_column('pr_number')
        batch_op.drop_column('purpose')
        batch_op.drop_column('status')

    with op.batch_alter_table('fixes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_fixes_slug'))
        batch_op.drop_index(batch_op.f('ix_fixes_repo_key'))

    op.drop_table('fixes')
