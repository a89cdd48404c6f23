"""records.reference: which kind of ratio a record claims (head/REF instead of language/C)

Revision ID: 0013
Revises: 0012
"""
import re

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


# The front matter's `reference:` line (bot/core/reports/frontmatter.py reads it fully): enough to backfill.
FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---", re.S)
REFERENCE = re.compile(r"^reference:[ \t]*([A-Za-z0-9_.@/-]+)[ \t]*$", re.M)


def upgrade() -> None:
    with op.batch_alter_table('records') as batch:
        batch.add_column(sa.Column('reference', sa.String(length=200), nullable=True))
    # Records stored before this column take it from their latest stored text, so no reference report shows a
    # head/REF ratio as language/C until its next edit.
    bind = op.get_bind()
    rows = bind.execute(sa.text(
        "SELECT r.id, v.content FROM records r JOIN revisions v ON v.record_id = r.id "
        "WHERE v.content IS NOT NULL ORDER BY r.id, v.committed_at, v.id")).all()
    latest = {record_id: content for record_id, content in rows}
    for record_id, content in latest.items():
        front = FRONT.match(content or "")
        found = REFERENCE.search(front.group(1)) if front else None
        if found:
            bind.execute(sa.text("UPDATE records SET reference = :reference WHERE id = :id"),
                         {"reference": found.group(1)[:200], "id": record_id})


def downgrade() -> None:
    with op.batch_alter_table('records') as batch:
        batch.drop_column('reference')
