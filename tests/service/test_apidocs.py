"""The API description (``serve --docs``): the route docstrings are numpydoc (reStructuredText), OpenAPI
descriptions are Markdown; one conversion where the app is built turns ``x`` literals and roles into
Markdown code spans, so /openapi.json and /docs read well."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from dialeval.service.app import create_app
from dialeval.service.config import Settings


def _texts(node, where=""):
    """Every (place, text) of a description or summary in an OpenAPI schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary") and isinstance(value, str):
                yield f"{where}.{key}", value
            else:
                yield from _texts(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _texts(value, f"{where}[{i}]")


def test_no_openapi_description_holds_rest_markup(sqlite_url):
    app = create_app(Settings(database_url=sqlite_url, docs=True))
    with TestClient(app) as c:
        schema = c.get("/openapi.json").json()
        ops = [(m, p, op) for p, item in schema["paths"].items() for m, op in item.items()]
        assert len(ops) >= 20
        texts = list(_texts(schema))
        for where, text in texts:
            assert "``" not in text, (where, text)
            assert not re.search(r":[a-z]+:`", text), (where, text)
        retry = schema["paths"]["/api/collections/{name}/sessions/{sid}/retry"]["post"]["description"]
        assert retry.startswith("Ask the engine again for the reply the chat waits for (turns after `after` come")
        page = c.get("/docs").text
        assert "``" not in page and "<code>after</code>" in page and "<code>engine_error</code>" in page


def test_markdown_of_numpydoc():
    from dialeval.service.apidocs import markdown

    assert markdown("``a`` and ``b c``, :class:`~dialeval.service.errors.Conflict`, :func:`f`") == \
        "`a` and `b c`, `Conflict`, `f`"
    assert markdown("a ``x`y`` literal") == "a `` x`y `` literal"
    assert markdown("Raises\n------\nConflict\n    409") == "**Raises**\n\nConflict\n    409"
    assert markdown("plain *text*, `x`") == "plain *text*, `x`"


def test_one_conversion_for_any_app():
    from dialeval.service.apidocs import use_markdown

    app = FastAPI()
    use_markdown(app)

    @app.get("/x", description="Explicit ``description``.")
    def x(q: int = 0) -> dict:
        """Ignored by FastAPI when ``description`` is given."""
        return {}

    @app.get("/y")
    def y() -> dict:
        """The ``y`` route (:data:`y`)."""
        return {}

    schema = app.openapi()
    assert schema["paths"]["/x"]["get"]["description"] == "Explicit `description`."
    assert schema["paths"]["/y"]["get"]["description"] == "The `y` route (`y`)."
    assert app.openapi() is schema                                     # built and converted once
