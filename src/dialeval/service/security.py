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
    """ASGI middleware adding :data:`HEADERS` (and ``Cache-Control``) to every HTTP response.

    Parameters
    ----------
    app : ASGI application
    https : bool
        The service is reached over HTTPS (its public URL says so): add ``Strict-Transport-Security``.
    """

    def __init__(self, app, *, https: bool = False) -> None:
        self.app = app
        self.extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
        if https:
            self.extra.append((b"strict-transport-security", HSTS.encode()))

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith(STATIC_PREFIX)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _v in headers}
                headers += [(k, v) for k, v in self.extra if k not in names]
                if not static and b"cache-control" not in names:
                    headers.append((b"cache-control", NO_STORE.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def secure(app, *, https: bool = False) -> None:
    """Wrap ``app`` (a Starlette/FastAPI application) so that :class:`SecurityHeaders` is outermost.

    Starlette's own error layer (the 500 of an unexpected exception) sits outside the user middleware;
    wrapping the built stack puts the headers on that answer too.
    """
    build = app.build_middleware_stack

    def build_secured():
        return SecurityHeaders(build(), https=https)

    app.build_middleware_stack = build_secured
