"""The API's description without a CDN: off by default; with ``serve --docs``, ``/openapi.json`` and a
self-hosted ``/docs`` page listing the routes (FastAPI's Swagger UI would load its scripts from a CDN).

The routes' descriptions come from their docstrings, which are numpydoc (reStructuredText: literals in
double backquotes, roles such as ``:class:``, underlined section titles). OpenAPI descriptions are
CommonMark, so :func:`use_markdown` converts every description of the schema once, where the app is built
(:func:`markdown`), and ``/docs`` shows the code spans as code (:func:`code_spans`).
"""

from __future__ import annotations

import html
import re

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"
METHODS = ("get", "post", "put", "patch", "delete")


_INLINE = re.compile(r"``(?P<literal>.+?)``(?!`)|:(?:[a-z]+:)?[a-z]+:`(?P<role>[^`]+)`", re.DOTALL)
_TITLE = re.compile(r"^(?P<title>[^\n]+)\n(?P<rule>[-=~^]{3,})[ \t]*$", re.MULTILINE)
_CODE_SPAN = re.compile(r"(?P<fence>`+)(?P<code>.+?)(?P=fence)(?!`)", re.DOTALL)


def _code(text: str) -> str:
    """``text`` as one Markdown code span (a longer fence when it holds a backtick)."""
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"


def _inline(m: re.Match) -> str:
    if m.group("literal") is not None:
        return _code(m.group("literal"))
    target = m.group("role")
    shown = re.match(r"(?P<text>.+?)\s*<[^>]+>$", target, re.DOTALL)  # :ref:`text <target>`
    if shown:
        return shown.group("text")
    return _code(target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target)


def markdown(text: str) -> str:
    """A numpydoc (reStructuredText) docstring as CommonMark: double-backquoted literals and roles (such as
    ``:class:``, the target ``~a.b.C`` shown as ``C``) as code spans, an underlined section title as a bold
    line.

    Examples
    --------
    >>> markdown("The turns after ``after`` (:class:`~dialeval.corpus.Turn`).")
    'The turns after `after` (`Turn`).'
    >>> markdown("Raises\\n------\\nConflict\\n    when it has ended")
    '**Raises**\\n\\nConflict\\n    when it has ended'
    """
    text = _TITLE.sub(lambda m: f"**{m.group('title').strip()}**\n" if len(m.group("rule")) >= len(
        m.group("title").strip()) else m.group(0), text)
    return _INLINE.sub(_inline, text)


def _markdown_descriptions(node: object) -> None:
    """Every ``description`` and ``summary`` text in an OpenAPI schema (operations, parameters, models),
    converted in place by :func:`markdown`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary") and isinstance(value, str):
                node[key] = markdown(value)
            else:
                _markdown_descriptions(value)
    elif isinstance(node, list):
        for value in node:
            _markdown_descriptions(value)


def use_markdown(app: FastAPI) -> None:
    """Make ``app``'s OpenAPI schema (``/openapi.json``, ``/docs``) hold Markdown descriptions, converted from
    the route docstrings' reStructuredText once, when the schema is first built (:func:`markdown`)."""
    build = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = build()
            _markdown_descriptions(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def code_spans(text: str) -> Markup:
    """Markdown ``text`` as HTML for the ``/docs`` page: escaped, its code spans as ``<code>``.

    >>> str(code_spans("the `after` <b>"))
    'the <code>after</code> &lt;b&gt;'
    """
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(html.escape(text[last:m.start()], quote=False))
        out.append(f"<code>{html.escape(m.group('code').strip(), quote=False)}</code>")
        last = m.end()
    out.append(html.escape(text[last:], quote=False))
    return Markup("".join(out))


def operations(schema: dict) -> list[dict]:
    """The API's operations from an OpenAPI schema: method, path, summary, description, in path order.

    Examples
    --------
    >>> operations({"paths": {"/a": {"get": {"summary": "A", "description": "d"}}}})
    [{'method': 'GET', 'path': '/a', 'summary': 'A', 'description': 'd', 'tags': []}]
    """
    out = []
    for path, ops in schema.get("paths", {}).items():
        for method in METHODS:
            if method in ops:
                op = ops[method]
                out.append({"method": method.upper(), "path": path, "summary": op.get("summary", ""),
                            "description": op.get("description", ""), "tags": op.get("tags", [])})
    return out


def add_docs(app: FastAPI, pages: Jinja2Templates) -> None:
    """Serve ``/docs``: the routes of ``app`` as a page of this site (its schema is at ``/openapi.json``)."""

    @app.get(DOCS_PATH, response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> HTMLResponse:
        ops = [{**op, "description_html": code_spans(op["description"])} for op in operations(app.openapi())]
        return pages.TemplateResponse(request, "docs.html", {"ops": ops, "openapi": OPENAPI_PATH})
