"""Authentication (tokens and GitHub App JWTs), GitHub App installations, and the rate-limit endpoint.

Two kinds of credentials, as on GitHub:
- tokens (`Authorization: token X` or `Bearer X`): user tokens registered with the double, and installation
  tokens it minted; expired or unknown ones answer 401 "Bad credentials";
- a GitHub App's JWT (`Bearer <jwt>`) for the /app endpoints and `GET /repos/{owner}/{repo}/installation`:
  RS256-signed with the app's private key, checked with PyJWT against the public key given to
  `install_app`, `iss` = the app id, lifetime at most 10 minutes.
"""
from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import jwt

from .routes_common import ApiError, Call, Reply, not_found, paginate, route, user_json
from .state import RATE_LIMITS, Identity, Installation, State, iso, node_id, utc_now

APP_PERMISSIONS = {"checks": "write", "contents": "read", "issues": "write", "metadata": "read",
                   "pull_requests": "write", "statuses": "write"}
APP_EVENTS = ["check_run", "issue_comment", "issues", "pull_request", "push"]


def needs_app_jwt(template: str) -> bool:
    """Operations GitHub only accepts with the app's JWT (not with a token)."""
    return template == "/app" or template.startswith("/app/") or template.endswith("}/installation")


def authenticate(state: State, template: str, authorization: str | None) -> Identity | None:
    """The identity behind an Authorization header, or ApiError(401). None means no header at all."""
    if not authorization:
        return None
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() not in ("token", "bearer") or not credential:
        raise ApiError(401, "Bad credentials")
    if needs_app_jwt(template):
        return _verify_app_jwt(state, credential)
    identity = state.tokens.get(credential)
    if identity is None or (identity.expires_at is not None and identity.expires_at <= utc_now()):
        raise ApiError(401, "Bad credentials")
    return identity


def _verify_app_jwt(state: State, token: str) -> Identity:
    try:
        issuer = str(jwt.decode(token, options={"verify_signature": False}).get("iss"))
    except jwt.PyJWTError:
        raise ApiError(401, "A JSON web token could not be decoded") from None
    installations = [i for i in state.installations.values() if str(i.app_id) == issuer]
    if not installations:
        raise ApiError(401, f"Integration not found for issuer {issuer!r}")
    try:
        claims = jwt.decode(token, installations[0].public_key, algorithms=["RS256"],
                            options={"require": ["iat", "exp", "iss"]}, leeway=60)
    except jwt.ExpiredSignatureError:
        raise ApiError(401, "'Expiration time' claim ('exp') must be a numeric value representing the future time "
                            "at which the assertion expires") from None
    except jwt.PyJWTError as error:
        raise ApiError(401, f"A JSON web token could not be decoded ({error})") from None
    if claims["exp"] - claims["iat"] > 600 + 60:  # GitHub: at most 10 minutes (PyGithub's iat is 60 s early)
        raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")
    first = installations[0]
    return Identity(state.user(f"{first.app_slug}[bot]", "Bot"), app_id=first.app_id)


def _app_identity(call: Call) -> Identity:
    if call.identity is None or call.identity.app_id is None:
        raise ApiError(401, "A JSON web token could not be decoded")
    return call.identity


def integration_json(call: Call, installation: Installation) -> dict[str, Any]:
    """The `integration` object (the app itself)."""
    return {"id": installation.app_id, "slug": installation.app_slug, "node_id": node_id("A", installation.app_id),
            "client_id": f"Iv1.{installation.app_id:016x}", "owner": user_json(call, installation.account),
            "name": installation.app_slug, "description": "",
            "external_url": f"{call.web}/apps/{installation.app_slug}",
            "html_url": f"{call.web}/apps/{installation.app_slug}", "created_at": iso(installation.created_at),
            "updated_at": iso(installation.created_at), "permissions": APP_PERMISSIONS, "events": APP_EVENTS}


def installation_json(call: Call, installation: Installation) -> dict[str, Any]:
    account = installation.account
    # GET /app/installations documents `account` as allOf [Simple User, Enterprise] (anyOf elsewhere), so
    # the account also carries the enterprise fields: name, slug and dates.
    account_json = dict(user_json(call, account), name=account.login, slug=account.login.lower(),
                        created_at=iso(installation.created_at), updated_at=iso(installation.created_at))
    return {"id": installation.id, "account": account_json, "repository_selection": "selected",
            "access_tokens_url": f"{call.api}/app/installations/{installation.id}/access_tokens",
            "repositories_url": f"{call.api}/installation/repositories",
            "html_url": f"{call.web}/organizations/{account.login}/settings/installations/{installation.id}",
            "app_id": installation.app_id, "app_slug": installation.app_slug, "target_id": account.id,
            "target_type": account.type, "permissions": APP_PERMISSIONS, "events": APP_EVENTS,
            "created_at": iso(installation.created_at), "updated_at": iso(installation.created_at),
            "single_file_name": None, "has_multiple_single_files": False, "single_file_paths": [],
            "suspended_by": None, "suspended_at": None}


def _own_installation(call: Call, installation_id: int) -> Installation:
    installation = call.state.installations.get(installation_id)
    if installation is None or installation.app_id != _app_identity(call).app_id:
        raise not_found()
    return installation


@route("GET", "/app")
def get_app(call: Call) -> Reply:
    app_id = _app_identity(call).app_id
    installation = next(i for i in call.state.installations.values() if i.app_id == app_id)
    return Reply(200, dict(integration_json(call, installation), installations_count=sum(
        1 for i in call.state.installations.values() if i.app_id == app_id)))


@route("GET", "/app/installations")
def list_installations(call: Call) -> Reply:
    app_id = _app_identity(call).app_id
    mine = [i for i in call.state.installations.values() if i.app_id == app_id]
    return paginate(call, mine, lambda i: installation_json(call, i))


@route("GET", "/app/installations/{installation_id}")
def get_installation(call: Call) -> Reply:
    return Reply(200, installation_json(call, _own_installation(call, call.int_arg("installation_id"))))


@route("GET", "/repos/{owner}/{repo}/installation")
def get_repo_installation(call: Call) -> Reply:
    app_id = _app_identity(call).app_id
    full_name = f"{call.args['owner']}/{call.args['repo']}".lower()
    for installation in call.state.installations.values():
        if installation.app_id == app_id and full_name in installation.repositories:
            return Reply(200, installation_json(call, installation))
    raise not_found()


@route("POST", "/app/installations/{installation_id}/access_tokens")
def create_installation_token(call: Call) -> Reply:
    installation = _own_installation(call, call.int_arg("installation_id"))
    repositories = installation.repositories
    if call.field("repositories"):  # a token narrowed to some of the installation's repositories
        wanted = {f"{installation.account.login}/{name}".lower() for name in call.field("repositories")}
        if not wanted <= repositories:
            raise ApiError(422, "There is at least one repository that does not exist or is not accessible "
                                "to the parent installation.")
        repositories = frozenset(wanted)
    token = "ghs_" + secrets.token_urlsafe(27)
    expires_at = utc_now() + timedelta(seconds=installation.token_ttl_seconds)
    call.state.tokens[token] = Identity(call.state.user(f"{installation.app_slug}[bot]", "Bot"), installation.id,
                                        repositories, expires_at)
    permissions = {**APP_PERMISSIONS, **(call.field("permissions") or {})}
    return Reply(201, {"token": token, "expires_at": iso(expires_at), "permissions": permissions,
                       "repository_selection": "selected"})


@route("GET", "/installation/repositories")
def list_installation_repositories(call: Call) -> Reply:
    from .routes_repos import repo_json

    identity = call.identity
    if identity is None or identity.installation_id is None:
        raise ApiError(403, "This endpoint can only be accessed with an installation token.")
    repos = sorted((r for key, r in call.state.repos.items() if key in (identity.repositories or ())),
                   key=lambda r: r.id)
    return paginate(call, repos, lambda r: repo_json(call, r),
                    wrap=lambda page, total: {"total_count": total, "repository_selection": "selected",
                                              "repositories": page})


@route("GET", "/rate_limit")
def get_rate_limit(call: Call) -> Reply:
    who = call.identity.user.login if call.identity else "anonymous"
    resources = {}
    for resource, limit in RATE_LIMITS.items():
        used = call.state.rate_used.get((who, resource), 0)
        resources[resource] = {"limit": limit, "remaining": max(limit - used, 0), "reset": call.state.rate_reset,
                               "used": used, "resource": resource}
    return Reply(200, {"resources": resources, "rate": resources["core"]})
