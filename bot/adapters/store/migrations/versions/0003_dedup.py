"""dedup verdicts and pair overrides

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('dedup_verdicts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('new_hash', sa.String(length=64), nullable=False),
    sa.Column('old_hash', sa.String(length=64), nullable=False),
    sa.Column('reviewer', sa.String(length=100), nullable=False),
    sa.Column('prompt_version', sa.String(length=40), nullable=False),
    sa.Column('new_slug', sa.String(length=200), nullable=False),
    sa.Column('old_slug', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('confidence', sa.Float(), nullable=False),
    sa.Column('reasons', sa.JSON(), nullable=False),
    sa.Column('merged_report', sa.Text(), nullable=True),
    sa.Column('merge_problems', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('new_hash', 'old_hash', 'reviewer', 'prompt_version')
    )
    op.create_table('pair_overrides',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('slug_a', sa.String(length=200), nullable=False),
    sa.Column('slug_b', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('actor', sa.String(length=200), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_key', 'slug_a', 'slug_b')
    )


def downgrade() -> None:
    op.drop_table('pair_overrides')
    op.drop_table('dedup_verdicts')
