"""What leaves the service and what one request may hold: messages made safe, one file part per upload.

Every answer's message is printable UTF-8 (a lone surrogate in a user's id would otherwise make the JSON
encoder fail: a 500) and bounded in length; FastAPI's own 422s never echo the received input; a multipart
request with two ``file`` (or ``gold``) parts is refused instead of silently scoring one of them.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from dialeval.errors import quote
from dialeval.service.errors import Invalid

MAX_DETAIL = 2000
"""Longest message in an answer (user values inside are cut to ~100 characters already)."""
FILE_FIELDS = ("file", "gold")


def detail(message: str) -> str:
    """A message as it may leave the service: printable UTF-8 (no lone surrogate), at most MAX_DETAIL long."""
    return quote(message, MAX_DETAIL)


def validation_errors(e: RequestValidationError) -> list[dict]:
    """FastAPI's 422 items without the received input (never echoed) and with cut, printable strings."""
    return [{"loc": [quote(x) if isinstance(x, str) else x for x in err.get("loc", ())],
             "msg": quote(str(err.get("msg", "invalid")), 300), "type": quote(str(err.get("type", "")))}
            for err in e.errors()[:10]]


async def one_file_part(request: Request) -> None:
    """Route dependency: refuse (422) a multipart request with more than one ``file`` or ``gold`` part."""
    if request.headers.get("content-type", "").startswith("multipart/"):
        form = await request.form()  # parsed once: FastAPI reads the same cached form
        for field in FILE_FIELDS:
            n = len(form.getlist(field))
            if n > 1:
                raise Invalid(f"the request holds {n} '{field}' parts; send exactly one")
