"""llm_answers: one keyed cache of LLM answers instead of dedup_verdicts, report_audits and fact_answers

Revision ID: 0015
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def _table(name, *columns):
    return sa.table(name, sa.column('id', sa.Integer()), *columns,
                    sa.column('usage', sa.JSON()), sa.column('created_at', sa.DateTime(timezone=True)))


def _text(name):
    return sa.column(name, sa.String())


ANSWERS = _table('llm_answers', *map(_text, ('kind', 'content_hash', 'partner_hash', 'model', 'prompt_version',
                                             'slug', 'partner_slug')), sa.column('answer', sa.JSON()))
VERDICTS = _table('dedup_verdicts', *map(_text, ('new_hash', 'old_hash', 'reviewer', 'prompt_version', 'new_slug',
                                                 'old_slug', 'kind', 'merged_report')),
                  sa.column('confidence', sa.Float()), sa.column('reasons', sa.JSON()),
                  sa.column('merge_problems', sa.JSON()))
AUDITS = _table('report_audits', *map(_text, ('content_hash', 'reviewer', 'prompt_version')),
                sa.column('findings', sa.JSON()), sa.column('not_checked', sa.JSON()))
FACTS = _table('fact_answers', *map(_text, ('content_hash', 'model', 'prompt_version', 'slug', 'problem')),
               sa.column('asked', sa.JSON()), sa.column('answer', sa.JSON()))

# Each kind's rows as the old table held them <-> as llm_answers holds them (dedup_store and services/fact_review
# read this `answer` JSON). Ids are not kept: nothing refers to these rows by id.
TO_ANSWER = {
    'dedup': lambda r: dict(content_hash=r.new_hash, partner_hash=r.old_hash, model=r.reviewer, slug=r.new_slug,
                            partner_slug=r.old_slug, answer={
                                'verdict': r.kind, 'confidence': r.confidence, 'reasons': r.reasons or [],
                                'merged_report': r.merged_report, 'merge_problems': r.merge_problems or []}),
    'audit': lambda r: dict(content_hash=r.content_hash, partner_hash='', model=r.reviewer, slug='', partner_slug='',
                            answer={'findings': r.findings or [], 'not_checked': r.not_checked or []}),
    'facts': lambda r: dict(content_hash=r.content_hash, partner_hash='', model=r.model, slug=r.slug, partner_slug='',
                            answer={'asked': r.asked or [], 'answer': r.answer, 'problem': r.problem or ''}),
}
FROM_ANSWER = {
    'dedup': lambda r: dict(new_hash=r.content_hash, old_hash=r.partner_hash, reviewer=r.model, new_slug=r.slug,
                            old_slug=r.partner_slug, kind=r.answer['verdict'], confidence=r.answer['confidence'],
                            reasons=r.answer.get('reasons') or [], merged_report=r.answer.get('merged_report'),
                            merge_problems=r.answer.get('merge_problems') or []),
    'audit': lambda r: dict(content_hash=r.content_hash, reviewer=r.model, findings=r.answer.get('findings') or [],
                            not_checked=r.answer.get('not_checked') or []),
    'facts': lambda r: dict(content_hash=r.content_hash, model=r.model, slug=r.slug, asked=r.answer.get('asked') or [],
                            answer=r.answer.get('answer'), problem=r.answer.get('problem') or ''),
}
OLD_TABLES = {'dedup': VERDICTS, 'audit': AUDITS, 'facts': FACTS}


def _copy(rows, table, convert, **fixed) -> None:
    kept = ('prompt_version', 'usage', 'created_at')  # the same in every table
    copied = [convert(r) | fixed | {name: getattr(r, name) for name in kept} for r in rows]
    if copied:
        op.bulk_insert(table, copied)


def upgrade() -> None:
    op.create_table('llm_answers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('partner_hash', sa.String(length=64), nullable=False),
    sa.Column('model', sa.String(length=100), nullable=False),
    sa.Column('prompt_version', sa.String(length=40), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('partner_slug', sa.String(length=200), nullable=False),
    sa.Column('answer', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('kind', 'content_hash', 'partner_hash', 'model', 'prompt_version')
    )
    bind = op.get_bind()
    for kind, old in OLD_TABLES.items():
        rows = bind.execute(sa.select(old).order_by(old.c.id)).all()
        _copy(rows, ANSWERS, TO_ANSWER[kind], kind=kind)
        op.drop_table(old.name)


def downgrade() -> None:
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
    op.create_table('report_audits',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('reviewer', sa.String(length=100), nullable=False),
    sa.Column('prompt_version', sa.String(length=40), nullable=False),
    sa.Column('findings', sa.JSON(), nullable=False),
    sa.Column('not_checked', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('content_hash', 'reviewer', 'prompt_version')
    )
    op.create_table('fact_answers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('model', sa.String(length=100), nullable=False),
    sa.Column('prompt_version', sa.String(length=40), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('asked', sa.JSON(), nullable=False),
    sa.Column('answer', sa.JSON(), nullable=True),
    sa.Column('problem', sa.Text(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('content_hash', 'model', 'prompt_version')
    )
    bind = op.get_bind()
    for kind, old in OLD_TABLES.items():
        rows = bind.execute(sa.select(ANSWERS).where(ANSWERS.c.kind == kind).order_by(ANSWERS.c.id)).all()
        _copy(rows, old, FROM_ANSWER[kind])
    op.drop_table('llm_answers')
