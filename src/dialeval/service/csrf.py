"""CSRF protection for the service's HTML forms: a double-submit token, with no state on the server.

A page that shows a form calls :func:`form_token`, which reuses the browser's ``dialeval_csrf`` cookie or
makes a new random one, puts the value in the form's hidden field ``csrf`` and (with :func:`set_cookie`)
in the cookie. A POST from the form passes :func:`verify` only if the field equals the cookie: another
site can make a browser send the cookie, but cannot read it to fill in the field. The cookie is
``SameSite=Strict`` and ``HttpOnly``, so it also never travels with a cross-site request at all.

Nothing is stored on the server, so any worker process can check any form. JSON API calls authenticated by
a bearer token (``Authorization`` header) need no CSRF token: browsers never add that header on their own.
"""

from __future__ import annotations

import secrets

from fastapi import Request, Response

from dialeval.service.errors import Forbidden

COOKIE = "dialeval_csrf"
FIELD = "csrf"


def form_token(request: Request) -> str:
    """The token to put in a form's hidden ``csrf`` field (the cookie's value, or a new random one)."""
    value = request.cookies.get(COOKIE, "")
    if len(value) == 43 and value.replace("-", "").replace("_", "").isalnum():
        return value
    return secrets.token_urlsafe(32)


def set_cookie(response: Response, token: str, *, secure: bool = False) -> Response:
    """Set the CSRF cookie on a page's response (``secure`` when the service is reached over HTTPS)."""
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure, path="/")
    return response


def verify(request: Request, submitted: str | None) -> None:
    """Pass if the form's ``csrf`` field equals the cookie; else :class:`Forbidden` (403).

    Examples
    --------
    >>> from starlette.requests import Request as R
    >>> req = R({"type": "http", "headers": [(b"cookie", b"dialeval_csrf=" + b"a" * 43)]})
    >>> verify(req, "a" * 43) is None
    True
    """
    cookie = request.cookies.get(COOKIE, "")
    if not cookie or not isinstance(submitted, str) or not secrets.compare_digest(cookie.encode(),
                                                                                   submitted.encode()):
        raise Forbidden("the form has expired or did not come from this site; reload the page and try again")
