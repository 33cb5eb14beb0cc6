"""The token of a request to the team and organiser routes: ``Authorization: Bearer TOKEN``.

Shared by the app's own routes (the organiser's team routes) and the leaderboard's; a route checks the token it
gets with :func:`dialeval.service.teams.authenticate` or :func:`~dialeval.service.teams.authenticate_admin`.

The organiser's routes (``/api/admin/...``) are of the class :class:`AdminRoute`, a team's routes that take a
body (a run's upload) of the class :class:`TeamRoute`: their token is checked before anything of the request's
body is read or validated, so that a request without a valid token is a 401 whatever it sends (FastAPI reads
the body before a route's dependencies run, and validates it before the route's code: a bad body would answer
422, and tell what the route takes, to anyone).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from dialeval.service import teams
from dialeval.service.db import Database, Team

bearer = HTTPBearer(auto_error=False, description="A team's token (or an organiser token for /api/admin).")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def token_of(cred: HTTPAuthorizationCredentials | None) -> str | None:
    """The token sent, or None without an ``Authorization: Bearer`` header."""
    return cred.credentials if cred is not None else None


class AuthenticatedRoute(APIRoute):
    """A route whose ``Authorization: Bearer`` token is checked by :meth:`authenticate` (on the app's
    ``state.db``) before FastAPI reads the body or validates any parameter, so a bad or missing token is a 401
    whatever the request holds. What :meth:`authenticate` returns is kept as ``request.state.authenticated``.
    """

    @staticmethod
    def authenticate(db: Database, token: str | None) -> object:
        """Who holds ``token``; :class:`~dialeval.service.errors.Unauthorized` (401) if nobody does."""
        raise NotImplementedError

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()
        authenticate = self.authenticate

        async def authenticated(request: Request) -> Response:
            token = token_of(await bearer(request))
            request.state.authenticated = await run_in_threadpool(authenticate, request.app.state.db, token)
            return await handler(request)

        return authenticated


class AdminRoute(AuthenticatedRoute):
    """A route of the organiser API: the request's ``Authorization: Bearer`` token must be an organiser token
    (:func:`~dialeval.service.teams.authenticate_admin`), checked before the body is read.

    Use it as ``APIRouter(route_class=AdminRoute)`` for the ``/api/admin`` routes (a test checks that every
    one is). The token is checked here, once; a route declares it (``cred: Token``) only for the API's
    description.
    """

    authenticate = staticmethod(teams.authenticate_admin)


class TeamRoute(AuthenticatedRoute):
    """A route of a team that takes a body (an upload): the request's ``Authorization: Bearer`` token must be a
    team's (:func:`~dialeval.service.teams.authenticate`), checked before the body is read. The route gets the
    team as a parameter ``team: AuthenticatedTeam`` (and declares ``cred: Token`` only for the API's
    description).
    """

    authenticate = staticmethod(teams.authenticate)


def authenticated_team(request: Request) -> Team:
    """The team a :class:`TeamRoute` found behind the request's token."""
    team = getattr(request.state, "authenticated", None)
    if not isinstance(team, Team):  # a route of another class: a fault of the code, not of the request
        raise TypeError("authenticated_team is a dependency of TeamRoute routes only")
    return team


AuthenticatedTeam = Annotated[Team, Depends(authenticated_team)]
