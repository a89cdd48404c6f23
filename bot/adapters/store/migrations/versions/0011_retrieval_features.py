"""retrieval features

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
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
