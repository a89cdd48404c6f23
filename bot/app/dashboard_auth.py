"""Who may read the dashboard: anyone in local mode; otherwise whoever holds PERFBOT_DASHBOARD_TOKEN."""
from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, urlencode

from flask import Response, render_template, request

from bot.config import Settings

COOKIE = "perfbot_dashboard"
COOKIE_SECONDS = 30 * 24 * 3600
# Pages are read-only and load nothing from elsewhere; the policy makes the browser hold them to that.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def cookie_value(token: str) -> str:
    # The cookie holds a keyed digest, not the token itself: a copied cookie jar does not reveal the token, and
    # changing the token signs every browser out.
    return hmac.new(token.encode(), b"perfbot dashboard cookie v1", hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def _bearer() -> str | None:
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None


def _without_token() -> str:
    """This page's own address minus `token`, so the secret leaves the address bar and the history."""
    kept = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
    return quote(request.script_root + request.path) + (f"?{urlencode(kept)}" if kept else "")


def _refused(status: int, reason: str) -> Response:
    response = Response(render_template("refused.html", status=status, reason=reason), status=status)
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="perfbot dashboard"'
    return response


def check(settings: Settings, cookie_path: str) -> Response | None:
    """None when the request may go on; otherwise the response to send instead."""
    if settings.local_mode:
        return None
    token = settings.dashboard_token
    if not token:
        return _refused(403, "no dashboard token is configured: set PERFBOT_DASHBOARD_TOKEN (or "
                             "PERFBOT_DASHBOARD_TOKEN_FILE) and restart perfbot")
    bearer = _bearer()
    if bearer is not None:
        return None if _same(bearer, token) else _refused(401, "the bearer token does not match")
    given = request.args.get("token")
    if given is not None:
        if not _same(given, token):
            return _refused(401, "the token in the address does not match")
        # A page of our own moves on to the clean address: a redirect would be part of the (maybe cross-site)
        # navigation that brought the token, and browsers withhold a SameSite=Strict cookie from it.
        target = _without_token()
        response = Response(render_template("signed_in.html", target=target))
        response.set_cookie(COOKIE, cookie_value(token), max_age=COOKIE_SECONDS, path=cookie_path, httponly=True,
                            samesite="Strict", secure=request.is_secure)
        return response
    cookie = request.cookies.get(COOKIE)
    if cookie is not None and _same(cookie, cookie_value(token)):
        return None
    return _refused(401, "this dashboard needs its token" if cookie is None else "the sign-in cookie is out of date")


def secure(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
