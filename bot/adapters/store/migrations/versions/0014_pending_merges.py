"""pending_merges: open merge PRs, for the dashboard

Revision ID: 0014
Revises: 0013
"""
import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('pending_merges',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('keep', sa.String(length=200), nullable=False),
    sa.Column('merged_from', sa.String(length=200), nullable=False),
    sa.Column('title', sa.String(length=400), nullable=False),
    sa.Column('opened_by', sa.String(length=200), nullable=False),
    sa.Column('opened_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_key', 'number')
    )
    op.create_index(op.f('ix_pending_merges_repo_key'), 'pending_merges', ['repo_key'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_pending_merges_repo_key'), table_name='pending_merges')
    op.drop_table('pending_merges')
