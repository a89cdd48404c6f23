"""retrieval features

Revision ID: 0009_retrieval
Revises: 0008
"""
from alembic import op
import sqlalchemy as sa


revision = '0009_retrieval'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('retrieval_features',
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('version', sa.String(length=20), nullable=False),
    sa.Column('words', sa.Text(), nullable=False),
    sa.Column('shingles', sa.Text(), nullable=False),
    sa.Column('locations', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('content_hash', 'version')
    )


def downgrade() -> None:
    op.drop_table('retrieval_features')
