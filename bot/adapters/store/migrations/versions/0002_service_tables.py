"""service tables

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('deliveries',
    sa.Column('id', sa.String(length=100), nullable=False),
    sa.Column('event', sa.String(length=60), nullable=False),
    sa.Column('action', sa.String(length=60), nullable=True),
    sa.Column('repo', sa.String(length=400), nullable=True),
    sa.Column('installation_id', sa.BigInteger(), nullable=True),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('lease_owner', sa.String(length=100), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_deliveries_next_attempt_at'), ['next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_deliveries_status'), ['status'], unique=False)

    op.create_table('installations',
    sa.Column('id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('account', sa.String(length=200), nullable=False),
    sa.Column('repos', sa.JSON(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('issue_mirrors',
    sa.Column('record_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('lint_comment_id', sa.BigInteger(), nullable=True),
    sa.Column('lint_hash', sa.String(length=64), nullable=False),
    sa.Column('duplicate_comment_id', sa.BigInteger(), nullable=True),
    sa.Column('synced_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['record_id'], ['records.id'], ),
    sa.PrimaryKeyConstraint('record_id')
    )
    op.create_table('record_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('record_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('actor', sa.String(length=200), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('delivery_id', sa.String(length=100), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['record_id'], ['records.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('record_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_record_events_record_id'), ['record_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('record_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_record_events_record_id'))

    op.drop_table('record_events')
    op.drop_table('issue_mirrors')
    op.drop_table('installations')
    with op.batch_alter_table('deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_deliveries_status'))
        batch_op.drop_index(batch_op.f('ix_deliveries_next_attempt_at'))

    op.drop_table('deliveries')
