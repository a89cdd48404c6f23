"""The weekly digest, in one package: change the digest here.

    model.py, scaling.py   pure (the core's rules): the campaign's facts and a window in, every section out
    render.py              the digest of a repository's window as markdown (templates/digest.md.j2)
    flow.py                due by `[digest] schedule`, posted once per week, previewed (the services' place)
    store.py               the `digests` table: the only module here that touches SQLAlchemy (the adapters' place)
    templates/             digest.md.j2, the issue's text; web/ the dashboard's digest pages

Entries stay where perfbot lists them: handlers/digest.py, `perfbot digest` (bot/cli/digest_cmd.py), the
routes of bot/app/dashboard.py, each calling into this package.
"""
