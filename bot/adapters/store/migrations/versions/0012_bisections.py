"""bisections

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('bisections',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('good_sha', sa.String(length=40), nullable=False),
    sa.Column('bad_sha', sa.String(length=40), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('outcome', sa.String(length=20), nullable=False),
    sa.Column('culprit_sha', sa.String(length=40), nullable=True),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('steps', sa.JSON(), nullable=False),
    sa.Column('requested_by', sa.String(length=200), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_bisections_repo_key'), 'bisections', ['repo_key'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_bisections_repo_key'), table_name='bisections')
    op.drop_table('bisections')
