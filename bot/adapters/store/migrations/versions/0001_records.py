"""records, revisions, slug aliases

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('repos',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=400), nullable=False),
    sa.Column('last_synced_commit', sa.String(length=40), nullable=True),
    sa.Column('synced_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key')
    )
    op.create_table('records',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('path', sa.String(length=400), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('merged_into_id', sa.Integer(), nullable=True),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('track', sa.String(length=8), nullable=True),
    sa.Column('backend', sa.String(length=8), nullable=True),
    sa.Column('threads', sa.Integer(), nullable=True),
    sa.Column('ratio', sa.Float(), nullable=True),
    sa.Column('table_ratio', sa.Float(), nullable=True),
    sa.Column('fix', sa.String(length=300), nullable=True),
    sa.Column('supersedes', sa.JSON(), nullable=False),
    sa.Column('errors', sa.Integer(), nullable=False),
    sa.Column('warnings', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['merged_into_id'], ['records.id'], ),
    sa.ForeignKeyConstraint(['repo_id'], ['repos.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_id', 'slug')
    )
    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_records_repo_id'), ['repo_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_records_state'), ['state'], unique=False)

    op.create_table('revisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('record_id', sa.Integer(), nullable=False),
    sa.Column('commit_sha', sa.String(length=40), nullable=False),
    sa.Column('author_name', sa.String(length=200), nullable=False),
    sa.Column('author_email', sa.String(length=200), nullable=False),
    sa.Column('committed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('path', sa.String(length=400), nullable=False),
    sa.Column('change', sa.String(length=12), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=True),
    sa.Column('content', sa.Text(), nullable=True),
    sa.Column('facts', sa.JSON(), nullable=False),
    sa.Column('findings', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['record_id'], ['records.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('record_id', 'commit_sha')
    )
    with op.batch_alter_table('revisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_revisions_record_id'), ['record_id'], unique=False)

    op.create_table('slug_aliases',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo_id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('record_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['record_id'], ['records.id'], ),
    sa.ForeignKeyConstraint(['repo_id'], ['repos.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_id', 'slug')
    )
    with op.batch_alter_table('slug_aliases', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_slug_aliases_record_id'), ['record_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('slug_aliases', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_slug_aliases_record_id'))

    op.drop_table('slug_aliases')
    with op.batch_alter_table('revisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_revisions_record_id'))

    op.drop_table('revisions')
    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_records_state'))
        batch_op.drop_index(batch_op.f('ix_records_repo_id'))

    op.drop_table('records')
    op.drop_table('repos')
