"""What leaves the service and what one request may hold: messages made safe, one file part per upload.

Every answer's message is printable UTF-8 (a lone surrogate in a user's id would otherwise make the JSON
encoder fail: a 500) and bounded in length; FastAPI's own 422s never echo the received input; a multipart
request with two ``file`` (or ``gold``) parts is refused instead of silently scoring one of them, and a ``file``
sent as a plain field (no filename) is told to be a file upload; a ``HEAD``
request is answered as its ``GET`` would be, without the body (HTTP requires it of every ``GET`` route).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, model_validator
from pydantic_core import PydanticCustomError

from dialeval.errors import quote
from dialeval.service.errors import Invalid

MAX_DETAIL = 2000
"""Longest message in an answer (user values inside are cut to ~100 characters already)."""
FILE_FIELDS = {"file": "run.json", "gold": "gold.json"}
"""The upload parts of the service's forms, each with a file name for the examples of messages."""


def detail(message: str) -> str:
    """A message as it may leave the service: printable UTF-8 (no lone surrogate), at most MAX_DETAIL long."""
    return quote(message, MAX_DETAIL)


MAX_CLOSE_REASON = 123
"""Longest reason of a WebSocket close frame, in UTF-8 bytes (RFC 6455: 125-byte payload, 2 for the code)."""


def close_reason(message: str) -> str:
    """A message cut to fit a WebSocket close frame: at most :data:`MAX_CLOSE_REASON` UTF-8 bytes, never
    half a character (a longer reason makes the close itself fail, and the client sees an abnormal close).

    >>> len(close_reason("日本" * 30).encode()), close_reason("short")
    (123, 'short')
    """
    return detail(message).encode("utf-8")[:MAX_CLOSE_REASON].decode("utf-8", "ignore")


def validation_errors(e: RequestValidationError) -> list[dict]:
    """FastAPI's 422 items without the received input (never echoed) and with cut, printable strings; a file
    part sent as a plain field is told how to send a file (:func:`_message`)."""
    return [{"loc": [quote(x) if isinstance(x, str) else x for x in err.get("loc", ())],
             "msg": quote(_message(err), 300), "type": quote(str(err.get("type", "")))}
            for err in e.errors()[:10]]


def _message(err: dict) -> str:
    """The message of one of FastAPI's 422 items. A ``file`` (or ``gold``) part sent without a filename
    (``curl -F 'file=[]'``, or a urlencoded form) reaches the route as text, and FastAPI would answer "Value
    error, Expected UploadFile, received: <class 'str'>"."""
    loc = tuple(err.get("loc", ()))
    if len(loc) == 2 and loc[0] == "body" and loc[1] in FILE_FIELDS and isinstance(err.get("input"), str):
        field = loc[1]
        return (f"the '{field}' part was sent as a plain form field ({len(err['input'])} characters, no filename); "
                f"it must be a file upload, e.g. curl -F '{field}=@{FILE_FIELDS[field]}'")
    return str(err.get("msg", "invalid"))


class RequestBody(BaseModel):
    """A JSON request body whose unknown fields are refused (422), not dropped: ``{"nickname": "Bob"}`` where the
    field is ``name`` started a chat under no name, without a word."""

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: object) -> object:
        if isinstance(data, dict):
            unknown = [k for k in data if k not in cls.model_fields]
            if unknown:
                raise PydanticCustomError("unknown_field", "{field} is not a field of this request; allowed are "
                                          "{allowed}", {"field": repr(quote(str(unknown[0]), 40)),
                                                        "allowed": ", ".join(cls.model_fields)})
        return data


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request runs as ``GET`` and its answer keeps the status and headers (the
    ``Content-Length`` of the body included), without the body. FastAPI's ``GET`` routes answer ``HEAD`` with 405
    otherwise, which monitors and link checkers read as a broken site."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)


async def one_file_part(request: Request) -> None:
    """Route dependency: refuse (422) a multipart request with more than one ``file`` or ``gold`` part."""
    if request.headers.get("content-type", "").startswith("multipart/"):
        form = await request.form()  # parsed once: FastAPI reads the same cached form
        for field in FILE_FIELDS:
            n = len(form.getlist(field))
            if n > 1:
                raise Invalid(f"the request holds {n} '{field}' parts; send exactly one")
