"""The API's description without a CDN: off by default; with ``serve --docs``, ``/openapi.json`` and a
self-hosted ``/docs`` page listing the routes (FastAPI's Swagger UI would load its scripts from a CDN).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"
METHODS = ("get", "post", "put", "patch", "delete")


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
        return pages.TemplateResponse(request, "docs.html", {"ops": operations(app.openapi()),
                                                             "openapi": OPENAPI_PATH})
