"""Server-rendered pages that hold forms: the CSRF token in the page and its cookie, never cached; the random
value of one rendered form (:func:`new_form_nonce`), by which the same form sent twice (a reload) is known; and
the code an annotator or a chat participant joined with, kept for the page it opened (:func:`remember_code`).

A join form is Post/Redirect/Get: the POST checks the code and answers with a redirect (303) to the page's own
address, which a reload, Back and Forward then open with a GET, with no "Confirm Form Resubmission". The code
goes from the POST to that GET in a cookie (:data:`CODE_COOKIE`): ``HttpOnly``, ``SameSite=Lax``, ``Secure``
over HTTPS, valid only under the project's or collection's own path, and gone when the browser closes or the
person leaves (:func:`forget_code`). The code is never in a URL. ``Lax``, not ``Strict``: a link from another
site (an e-mail, the crowdsourcing platform) opens the person's page again, a GET that changes nothing; no other
site's POST carries the cookie, and no other site can read or frame the page that shows the code
(``X-Frame-Options: DENY``, ``frame-ancestors 'none'``). The join page itself sends a person whose code is kept
on to their page.

The templates themselves (and their ``url_for``, which never reads the ``Host`` header) come from
:func:`dialeval.service.urls.templates`.
"""

from __future__ import annotations

import secrets
from urllib.parse import quote, unquote

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from dialeval.service import csrf
from dialeval.service.errors import ServiceError

FORM_NONCE_MAX = 64
"""Longest ``form_nonce`` a form may send (:func:`new_form_nonce` makes 32 characters; the columns hold 64)."""
FORM_NONCE_PATTERN = r"^[A-Za-z0-9_-]*$"
"""The characters of a ``form_nonce`` (URL-safe base64, as :func:`new_form_nonce` makes it); anything else, a NUL
that PostgreSQL refuses in a query included, is a form the page did not send (422)."""


CODE_COOKIE = "dialeval_code"
"""The cookie that holds the code a person joined a project or a collection with (under its path only)."""
NAME_COOKIE = "dialeval_name"
"""The cookie that holds the name a chat participant gave when joining (URL-quoted; under the collection's path)."""
_COOKIE_MAX = 1000  # longest value kept (a code is about 40 characters; a name is at most a few hundred)


def new_form_nonce() -> str:
    """The random value of one rendered form (``form_nonce``): a new one each time a page with the form is made."""
    return secrets.token_urlsafe(24)


def form_page(pages: Jinja2Templates, request: Request, template: str, status: int = 200,
              **context) -> HTMLResponse:
    """A page with a form: the CSRF token in ``csrf_token`` and in its cookie; never cached.

    The cookie is ``Secure`` when the request came over HTTPS or the configured public URL is ``https://``.
    """
    token = csrf.form_token(request)
    r = pages.TemplateResponse(request, template, {"csrf_token": token, **context}, status_code=status)
    r.headers["Cache-Control"] = "no-store"
    return csrf.set_cookie(r, token, secure=is_https(pages, request))


def is_https(pages: Jinja2Templates, request: Request) -> bool:
    """Whether the request came over HTTPS or the configured public URL is ``https://`` (cookies are then
    ``Secure``)."""
    return request.url.scheme == "https" or str(pages.env.globals.get("public_url", "")).startswith("https://")


def remember_code(pages: Jinja2Templates, request: Request, response: Response, scope: str, code: str,
                  name: str | None = None) -> Response:
    """Keep ``code`` (and a chat participant's ``name``) for the pages under path ``scope`` (``/annotate/p1``,
    under the ASGI root path): session cookies, ``HttpOnly``, ``SameSite=Lax``, ``Secure`` over HTTPS."""
    secure = is_https(pages, request)
    response.set_cookie(CODE_COOKIE, quote(code, safe=""), httponly=True, samesite="lax", secure=secure,
                        path=scope)
    if name is not None:
        response.set_cookie(NAME_COOKIE, quote(name, safe=""), httponly=True, samesite="lax", secure=secure,
                            path=scope)
    return response


def remembered_code(request: Request) -> tuple[str, str]:
    """The code and name :func:`remember_code` kept for this page's path (``""`` for either when none)."""
    def value(cookie: str) -> str:
        raw = request.cookies.get(cookie, "")
        return unquote(raw) if len(raw) <= _COOKIE_MAX else ""

    return value(CODE_COOKIE), value(NAME_COOKIE)


def forget_code(pages: Jinja2Templates, request: Request, response: Response, scope: str) -> Response:
    """Clear what :func:`remember_code` kept under ``scope`` (the person left, or the code was refused)."""
    for cookie in (CODE_COOKIE, NAME_COOKIE):
        response.delete_cookie(cookie, path=scope, secure=is_https(pages, request), httponly=True,
                               samesite="lax")
    return response


def leave(pages: Jinja2Templates, request: Request, csrf_token: str, scope: str) -> Response:
    """A Leave button's POST (CSRF-checked): what :func:`remember_code` kept under ``scope`` is forgotten, and a
    redirect (303) to ``scope``, the join page."""
    try:
        csrf.verify(request, csrf_token)
    except ServiceError as e:
        return form_page(pages, request, "error.html", e.status, error=e.message)
    return forget_code(pages, request, RedirectResponse(scope, status_code=303), scope)
