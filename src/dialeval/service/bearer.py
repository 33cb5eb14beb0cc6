"""The token of a request to the team and organiser routes: ``Authorization: Bearer TOKEN``.

Shared by the app's own routes (the organiser's team routes) and the leaderboard's; a route checks the token it
gets with :func:`dialeval.service.teams.authenticate` or :func:`~dialeval.service.teams.authenticate_admin`.

The organiser's routes (``/api/admin/...``) are of the class :class:`AdminRoute`: their token is checked before
anything of the request's body is read or validated, so that a request without an organiser token is a 401
whatever it sends (FastAPI reads the body before a route's dependencies run, and validates it before the
route's code: a bad body would answer 422, and tell what the route takes, to anyone).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from dialeval.service import teams

bearer = HTTPBearer(auto_error=False, description="A team's token (or an organiser token for /api/admin).")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def token_of(cred: HTTPAuthorizationCredentials | None) -> str | None:
    """The token sent, or None without an ``Authorization: Bearer`` header."""
    return cred.credentials if cred is not None else None


class AdminRoute(APIRoute):
    """A route of the organiser API: the request's ``Authorization: Bearer`` token must be an organiser token
    (:func:`~dialeval.service.teams.authenticate_admin` on the app's ``state.db``), checked before FastAPI reads
    the body or validates any parameter, so a bad or missing token is a 401 whatever the request holds.

    Use it as ``APIRouter(route_class=AdminRoute)`` for the ``/api/admin`` routes (a test checks that every
    one is). The token is checked here, once; a route declares it (``cred: Token``) only for the API's
    description.
    """

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def authenticated(request: Request) -> Response:
            token = token_of(await bearer(request))
            await run_in_threadpool(teams.authenticate_admin, request.app.state.db, token)
            return await handler(request)

        return authenticated
