"""Security headers on every response of the service, as the outermost ASGI layer.

Every HTTP response (pages, JSON, static files, 404s, 413s, and the 500 of an unexpected error) gets
:data:`HEADERS`: a strict Content-Security-Policy (scripts and styles only from this site's
``/static``: no inline script, ``<style>`` or ``style=""``), ``nosniff``, frame protection, no referrer and
a same-origin opener policy. Every response outside ``/static`` is ``Cache-Control: no-store`` (pages show
tokens and carry them in forms; API answers hold tokens and scores) unless a route set its own. When the
organiser's public URL is HTTPS, ``Strict-Transport-Security`` is added too.
"""

from __future__ import annotations

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
"""The Content-Security-Policy of every response."""

HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Headers sent with every HTTP response."""

NO_STORE = "no-store"
HSTS = "max-age=31536000"
STATIC_PREFIX = "/static/"


class SecurityHeaders:
    """ASGI middleware adding :data:`HEADERS` (and ``Cache-Control``) to every HTTP response, and to a WebSocket's
    handshake answer: its ``101`` when accepted; when refused before that (an address with no WebSocket), the
    ``403`` is sent through the server's denial-response extension with the same headers (the server's own
    ``403`` has none), where the server offers it.

    Parameters
    ----------
    app : ASGI application
    https : bool
        The service is reached over HTTPS (its public URL says so): add ``Strict-Transport-Security``.
    """

    DENIED = b"403 Forbidden: no WebSocket at this address, or it was refused"

    def __init__(self, app, *, https: bool = False) -> None:
        self.app = app
        self.extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
        if https:
            self.extra.append((b"strict-transport-security", HSTS.encode()))

    def _headers(self, headers, *, cache: bool = True) -> list[tuple[bytes, bytes]]:
        """``headers`` with every one of :attr:`extra` it lacks (and ``Cache-Control: no-store`` unless ``cache``
        or it has one)."""
        headers = list(headers or [])
        names = {k.lower() for k, _v in headers}
        headers += [(k, v) for k, v in self.extra if k not in names]
        if not cache and b"cache-control" not in names:
            headers.append((b"cache-control", NO_STORE.encode()))
        return headers

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            await self.app(scope, receive, self._websocket_send(scope, send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith(STATIC_PREFIX)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self._headers(message.get("headers"), cache=static)}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _websocket_send(self, scope, send):
        denial = "websocket.http.response" in (scope.get("extensions") or {})
        answered = False  # the handshake's answer (101, or a denial) has been sent

        async def send_ws(message) -> None:
            nonlocal answered
            kind = message["type"]
            if kind in ("websocket.accept", "websocket.http.response.start"):
                answered = True
                message = {**message, "headers": self._headers(message.get("headers"), cache=False)}
            elif kind == "websocket.close" and not answered and denial:
                answered = True
                await send({"type": "websocket.http.response.start", "status": 403,
                            "headers": self._headers([(b"content-type", b"text/plain; charset=utf-8"),
                                                      (b"content-length", str(len(self.DENIED)).encode())],
                                                     cache=False)})
                message = {"type": "websocket.http.response.body", "body": self.DENIED}
            await send(message)

        return send_ws


def secure(app, *, https: bool = False) -> None:
    """Wrap ``app`` (a Starlette/FastAPI application) so that :class:`SecurityHeaders` is outermost.

    Starlette's own error layer (the 500 of an unexpected exception) sits outside the user middleware;
    wrapping the built stack puts the headers on that answer too.
    """
    build = app.build_middleware_stack

    def build_secured():
        return SecurityHeaders(build(), https=https)

    app.build_middleware_stack = build_secured
