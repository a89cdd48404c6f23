"""The weekly digest, in one package: change the digest here.

    model.py, scaling.py   pure (held to the core's rules): the campaign's facts and a window in, every section out
    render.py              the digest of a repository's window as markdown (templates/digest.md.j2)
    flow.py                due by `[digest] schedule`, posted once per week, previewed (the services' place)
    store.py               the `digests` table: the only module here that touches SQLAlchemy (the adapters' place)
    templates/             digest.md.j2, the issue's text; web/ the dashboard's two digest pages

Entries stay where perfbot lists them and call in: handlers/digest.py and `perfbot digest` through the Lead use
case (services/usecases/lead.py), the dashboard's routes (app/dashboard.py). Shared with other features, so kept
outside: the campaign's facts (core/lead/facts.py, adapters/store/lead/facts_queries.py) and adapters/schedule.py.
"""
