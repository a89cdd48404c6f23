"""Bisection, in one package: change how perfbot finds the commit that brought a claim back here.

    search.py              pure (held to the core's rules): first-parent commits and the marks so far in, the
                           next commit to measure, the culprit or the range that holds it out
    flow.py                a bisection checked, queued, each step measured and saved, the comment written
                           (the services' place)
    store.py               the `bisections` rows: the only module here that touches SQLAlchemy (the adapters' place)
    templates/             bisect_comment.md.j2, the one marked comment on the record's issue

Entries stay where perfbot lists them and call in: handlers/bisect.py (through the Guards use case,
services/usecases/guards.py, which also starts one for a regressed guard or `/perf bisect`), `perfbot bisect`
(bot/cli/bisect_cmd.py) and `perfbot show` (bot/cli/records_cmd.py, a record's bisections). Shared, so kept
outside: the `bisections` table's model (adapters/store/service_models.py, read by the lead's queries too) and
`[guards] bisect`, `max_bisect_commits` (core/config).
"""
