"""lease generation and a readiness probe row: a claim is fenced by owner and generation, and /readyz commits a
real write (one that fails on a full disk) to a row of its own

Revision ID: 0017
Revises: 0016
"""
import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('deliveries') as batch:
        batch.add_column(sa.Column('lease_generation', sa.Integer(), nullable=False, server_default='0'))
    probes = op.create_table('probes', sa.Column('name', sa.String(length=100), primary_key=True),
                             sa.Column('at', sa.DateTime(timezone=True), nullable=True))
    op.bulk_insert(probes, [{'name': 'readyz', 'at': None}])


def downgrade() -> None:
    op.drop_table('probes')
    with op.batch_alter_table('deliveries') as batch:
        batch.drop_column('lease_generation')
