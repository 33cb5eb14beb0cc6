"""Refuse request bodies over their limit before they are read (413), as an ASGI middleware.

Only an upload (a ``multipart/form-data`` body: a run, a gold file) may be as long as the organiser's upload
limit; every other body (JSON, a page's form) is a few fields and may hold at most :data:`MAX_FORM_BYTES`.
A declared ``Content-Length`` over the limit is refused at once, without reading the body; a body
without one (chunked) is counted as it streams and cut off as soon as it passes the limit. Route
handlers still check the exact size of the file itself (:func:`read_upload`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import BinaryIO

from starlette.requests import Request
from starlette.responses import Response

from dialeval.service.errors import TooLarge

MULTIPART_SLACK = 64 * 1024
"""Room for the multipart envelope and the small form fields around the file."""
MAX_FORM_BYTES = 64 * 1024
"""Longest body that is not an upload: a JSON request or a page's form (a chat turn, a dialogue's labels)."""
UPLOAD_ROUTES = re.compile(r"/api/tasks/[^/]+/submissions|/api/admin/tasks|/tasks/[^/]+/submit")
"""The paths that take a file (a run, a gold): only there may a multipart body be as long as the upload limit (a
test checks that these are exactly the routes with a file parameter)."""


def too_large_message(limit: int, what: str = "the upload") -> str:
    mb = f" ({limit / 1048576:.1f} MB)" if limit >= 1048576 else ""
    return f"{what} is larger than the limit of {limit} bytes{mb}"


class BodyLimit:
    """ASGI middleware: 413 for an upload (``multipart/form-data`` to one of :data:`UPLOAD_ROUTES`) longer than
    ``max_bytes`` plus :data:`MULTIPART_SLACK`, and for any other request body longer than :data:`MAX_FORM_BYTES`
    (a multipart body sent elsewhere included).

    Parameters
    ----------
    app : ASGI application
    max_bytes : int
        The upload limit (``--max-upload-mb``).
    error_page : callable, optional
        ``error_page(request, message)``: the answer to a refused request as a page (a response, an ASGI app),
        or None for the JSON answer ``{"detail": message}``. The app gives its error page for a page's address
        (outside ``/api/``), as every other refusal of a page's form gets; default: JSON always.
    """

    def __init__(self, app, max_bytes: int,
                 error_page: Callable[[Request, str], Response | None] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.error_page = error_page

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if headers.get(b"content-type", b"").lower().startswith(b"multipart/form-data") \
                and UPLOAD_ROUTES.fullmatch(scope.get("path", "")):
            cap, why = self.max_bytes + MULTIPART_SLACK, too_large_message(self.max_bytes)
        else:
            cap = MAX_FORM_BYTES
            why = too_large_message(cap, "a request body that is not an upload (multipart/form-data)")
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            await self._refuse(scope, send, why)
            return
        seen, too_big, refused = 0, False, False

        async def counted_receive():
            # Past the limit the app is told the client left: it stops reading, and whatever it
            # answers is replaced by the 413 below.
            nonlocal seen, too_big
            if too_big:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    too_big = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            nonlocal refused
            if not too_big:
                await send(message)
            elif message["type"] == "http.response.start" and not refused:
                refused = True
                await self._refuse(scope, send, why)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not too_big:
                raise
        if too_big and not refused:
            await self._refuse(scope, send, why)

    async def _refuse(self, scope, send, message: str) -> None:
        """Answer 413 with ``message`` (the connection is then closed: the rest of the body is never read)."""
        page = self.error_page(Request(scope), message) if self.error_page is not None else None
        if page is not None:
            page.status_code = 413
            page.headers["connection"] = "close"

            async def nothing_to_receive():
                return {"type": "http.disconnect"}

            await page(scope, nothing_to_receive, send)
            return
        body = json.dumps({"detail": message}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def read_upload(fh: BinaryIO, limit: int) -> bytes:
    """Read an uploaded file, refusing (413) one longer than ``limit`` bytes after reading ``limit + 1``."""
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(too_large_message(limit))
    return data


MAX_FILENAME = 255


def clean_filename(name: object, default: str) -> str:
    """An uploaded file's name as it may be stored and shown: no control, format or surrogate characters
    (NUL included), no folder part, at most :data:`MAX_FILENAME` characters; ``default`` if nothing is left.

    Examples
    --------
    >>> clean_filename("../run" + chr(0) + ".json", "run.json"), clean_filename(chr(0xD800), "run.json")
    ('run.json', 'run.json')
    """
    if not isinstance(name, str):
        return default
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Cn"))
    name = " ".join(name.split())[-MAX_FILENAME:]
    return name if name.strip(".") else default
