"""A local GitHub double for tests: a real HTTP server on 127.0.0.1 that speaks GitHub's REST wire format,
keeps state, and checks every request against GitHub's official OpenAPI description (npm @octokit/openapi,
installed by scripts/ensure-npm-fixtures).

    with GitHubDouble() as double:
        double.add_repo("acme/runtime")
        gh = github.Github(base_url=double.url, auth=github.Auth.Token(double.token))
        gh.get_repo("acme/runtime").create_issue("slow loop", labels=["perf"])
        assert double.violations == []

Modules: `server` (the HTTP pipeline and `GitHubDouble`), `controls` (seeding, fault injection, recording),
`state` (what the double remembers), `openapi_paths` (which documented operation a request is),
`openapi_check` (validation against the description), `routes_*` (the endpoints, in GitHub's JSON shapes).
"""
from .server import GitHubDouble, RecordedRequest

__all__ = ["GitHubDouble", "RecordedRequest"]
