"""Server-rendered pages that hold forms: the CSRF token in the page and its cookie, never cached; and the random
value of one rendered form (:func:`new_form_nonce`), by which the same form sent twice (a reload) is known.

The templates themselves (and their ``url_for``, which never reads the ``Host`` header) come from
:func:`dialeval.service.urls.templates`.
"""

from __future__ import annotations

import secrets

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from dialeval.service import csrf

FORM_NONCE_MAX = 64
"""Longest ``form_nonce`` a form may send (:func:`new_form_nonce` makes 32 characters; the columns hold 64)."""
FORM_NONCE_PATTERN = r"^[A-Za-z0-9_-]*$"
"""The characters of a ``form_nonce`` (URL-safe base64, as :func:`new_form_nonce` makes it); anything else, a NUL
that PostgreSQL refuses in a query included, is a form the page did not send (422)."""


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
    https = request.url.scheme == "https" or str(pages.env.globals.get("public_url", "")).startswith("https://")
    return csrf.set_cookie(r, token, secure=https)
