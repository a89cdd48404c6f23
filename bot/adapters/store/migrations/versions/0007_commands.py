"""command answers, bench run options

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('command_answers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_key', sa.String(length=400), nullable=False),
    sa.Column('issue_number', sa.Integer(), nullable=False),
    sa.Column('source_comment_id', sa.BigInteger(), nullable=False),
    sa.Column('answer_comment_id', sa.BigInteger(), nullable=True),
    sa.Column('author', sa.String(length=200), nullable=False),
    sa.Column('lines', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_key', 'source_comment_id')
    )
    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('options', sa.JSON(), nullable=False, server_default='{}'))
        batch_op.add_column(sa.Column('cancel_requested', sa.Boolean(), nullable=False, server_default=sa.false()))



def downgrade() -> None:
    with op.batch_alter_table('bench_runs', schema=None) as batch_op:
        batch_op.drop_column('cancel_requested')
        batch_op.drop_column('options')

    op.drop_table('command_answers')
