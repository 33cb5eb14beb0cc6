"""The token of a request to the team and organiser routes: ``Authorization: Bearer TOKEN``.

Shared by the app's own routes (the organiser's team routes) and the leaderboard's; a route checks the token it
gets with :func:`dialeval.service.teams.authenticate` or :func:`~dialeval.service.teams.authenticate_admin`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

bearer = HTTPBearer(auto_error=False, description="A team's token (or an organiser token for /api/admin).")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def token_of(cred: HTTPAuthorizationCredentials | None) -> str | None:
    """The token sent, or None without an ``Authorization: Bearer`` header."""
    return cred.credentials if cred is not None else None
