"""full_name: a repository is `full_name` in every table, as in the services (it was `repo_key` in nine, `key` in repos)

Revision ID: 0016
Revises: 0015
"""
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

TABLES = ('pair_overrides', 'bench_runs', 'fixes', 'command_answers', 'digests', 'dashboard_issues', 'notices',
          'bisections', 'pending_merges')
INDEXED = ('bench_runs', 'fixes', 'bisections', 'pending_merges')


def _rename(old: str, new: str) -> None:
    # RENAME COLUMN keeps constraints, keys and indexes on the column (SQLite >= 3.25, PostgreSQL); only the
    # indexes' names say the column's, so they are made again under the new one.
    for table in INDEXED:
        op.drop_index(f'ix_{table}_{old}', table_name=table)
    for table in TABLES:
        op.execute(f'ALTER TABLE {table} RENAME COLUMN {old} TO {new}')
    op.execute(f"ALTER TABLE repos RENAME COLUMN {'key' if old == 'repo_key' else 'full_name'} TO "
               f"{'full_name' if old == 'repo_key' else 'key'}")
    for table in INDEXED:
        op.create_index(f'ix_{table}_{new}', table, [new], unique=False)


def upgrade() -> None:
    _rename('repo_key', 'full_name')


def downgrade() -> None:
    _rename('full_name', 'repo_key')
