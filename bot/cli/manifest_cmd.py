"""`perfbot app-manifest`: the GitHub App manifest (the least permissions, the events perfbot takes) for a URL."""
from __future__ import annotations

import html
import json
from urllib.parse import quote, urlsplit

import click

PLACEHOLDER_URL = "https://perfbot.example.com"

# Each permission, and why perfbot needs it at that level; tests/service/test_deploy.py holds this set exactly.
PERMISSIONS = {
    "actions": "write",        # the actions runner dispatches the bench workflow and downloads its artifact
    "contents": "write",       # fetch repositories; push perfbot/merge-* and perfbot/fixed-* branches
    "issues": "write",         # an issue per record, comments, labels, reactions on issue comments
    "metadata": "read",        # mandatory; also covers a collaborator's permission (comment commands)
    "pull_requests": "write",  # open merge and fixed PRs, read PR details, react to review comments
    "statuses": "write",       # the perfbot/verify commit status on a PR head
}

# The events handlers/ take, plus workflow_run for the actions runner. installation and
# installation_repositories are sent to every App without subscribing, so a manifest does not list them.
EVENTS = (
    "issue_comment",
    "issues",
    "pull_request",
    "pull_request_review_comment",
    "push",
    "workflow_run",
)
AUTOMATIC_EVENTS = frozenset({"installation", "installation_repositories"})


def manifest(base_url: str = PLACEHOLDER_URL, name: str = "perfbot") -> dict:
    """The manifest for a perfbot reachable at `base_url`: webhook at /webhook, GitHub's redirect (carrying
    the one-time code to exchange for the App's credentials) to /healthz, which answers without a token."""
    base = base_url.rstrip("/")
    return {
        "name": name,
        "url": f"{base}/",
        "description": "Keeps a performance campaign honest: devs/issues/perf_*.md reports become records, "
                       "GitHub issues follow them, fixes are measured.",
        "hook_attributes": {"url": f"{base}/webhook", "active": True},
        "redirect_url": f"{base}/healthz",
        "public": False,
        "default_permissions": dict(PERMISSIONS),
        "default_events": list(EVENTS),
    }


def manifest_json(base_url: str = PLACEHOLDER_URL, name: str = "perfbot") -> str:
    return json.dumps(manifest(base_url, name), indent=2) + "\n"


def registration_form(document: dict, github_url: str, org: str | None) -> str:
    """A page whose button POSTs the manifest to GitHub's "register an App" form, as the manifest flow asks."""
    target = f"{github_url.rstrip('/')}/organizations/{quote(org)}/settings/apps/new" if org else \
        f"{github_url.rstrip('/')}/settings/apps/new"
    value = html.escape(json.dumps(document), quote=True)
    return (f'<!doctype html>\n<meta charset="utf-8">\n<title>Register {html.escape(document["name"])}</title>\n'
            f'<form action="{html.escape(target, quote=True)}" method="post">\n'
            f'  <input type="hidden" name="manifest" value="{value}">\n'
            f'  <button type="submit">Create the GitHub App {html.escape(document["name"])}</button>\n'
            f'</form>\n')


def _base_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise click.BadParameter(f"{value!r} is not an http(s) address like https://perfbot.example.com")
    return value


@click.command("app-manifest")
@click.option("--url", "base_url", default=PLACEHOLDER_URL, show_default=True, metavar="BASE",
              help="Where GitHub reaches perfbot; the webhook is BASE/webhook.")
@click.option("--name", default="perfbot", show_default=True, help="The App's name (unique on GitHub).")
@click.option("--form", is_flag=True, help="Print an HTML page that submits the manifest to GitHub instead.")
@click.option("--org", default=None, help="With --form: register the App under this organization.")
@click.option("--github-url", default="https://github.com", show_default=True,
              help="With --form: GitHub's web address (GitHub Enterprise Server: https://HOST).")
def manifest_command(base_url: str, name: str, form: bool, org: str | None, github_url: str) -> None:
    """Print the GitHub App manifest: the permissions and events perfbot needs, nothing more."""
    base_url = _base_url(base_url)
    if urlsplit(base_url).scheme == "http":
        click.echo("warning: GitHub will send deliveries unencrypted to an http:// address", err=True)
    if form:
        click.echo(registration_form(manifest(base_url, name), _base_url(github_url), org), nl=False)
    else:
        click.echo(manifest_json(base_url, name), nl=False)
