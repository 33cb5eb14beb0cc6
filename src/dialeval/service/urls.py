"""URLs on the service's pages: relative paths, or absolute ones from the organiser's public URL only.

The ``Host`` header (and ``X-Forwarded-Host``) is written by the client, so it never makes a URL:
Starlette's ``url_for`` in templates builds absolute URLs from it, so the pages' templates get
:func:`path_for` instead, which returns the route's path (under the ASGI ``root_path``). Where an absolute
URL is needed (the command line shown to a new team), it is :func:`absolute` of the configured public URL.
"""

from __future__ import annotations

from importlib.resources import files

import jinja2
from fastapi.templating import Jinja2Templates

from dialeval import __version__


@jinja2.pass_context
def path_for(context: dict, name: str, /, **path_params: object) -> str:
    """The path of route ``name`` (``url_for`` in templates): ``/tasks/t1``, never ``http://HOST/...``."""
    request = context["request"]
    root = request.scope.get("root_path", "").rstrip("/")
    return root + str(request.app.url_path_for(name, **path_params))


def under_root(request, path: str) -> str:
    """``path`` (``/annotate/p1``) under the ASGI ``root_path`` the app is mounted at, as :func:`path_for` gives a
    route's: a redirect's ``Location`` that stays within the service behind a proxy's path prefix."""
    return request.scope.get("root_path", "").rstrip("/") + path


def absolute(public_url: str, path: str) -> str | None:
    """``path`` under the organiser's public URL; None when no public URL is configured.

    Examples
    --------
    >>> absolute("https://eval.example.org/dq", "/api/tasks"), absolute("", "/")
    ('https://eval.example.org/dq/api/tasks', None)
    """
    return public_url.rstrip("/") + path if public_url else None


def templates(public_url: str = "", *, docs: bool = False) -> Jinja2Templates:
    """The service's page templates, with :func:`path_for` as ``url_for``, the version, the public URL and
    whether ``/docs`` is served (the footer links it)."""
    pages = Jinja2Templates(directory=str(files("dialeval.service") / "templates"))
    pages.env.globals["url_for"] = path_for
    pages.env.globals["version"] = __version__
    pages.env.globals["public_url"] = public_url
    pages.env.globals["docs"] = docs
    return pages
