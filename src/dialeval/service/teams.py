"""Teams and organisers: registration, tokens (shown once, stored hashed), authentication."""

from __future__ import annotations

import unicodedata
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from dialeval.service.db import AdminToken, Database, Team
from dialeval.service.errors import Conflict, Invalid, Unauthorized
from dialeval.service.tokens import ADMIN_PREFIX, TEAM_PREFIX, hash_token, new_token

MAX_NAME = 100
MAX_AFFILIATION = 200


def clean_text(value: object, what: str, limit: int, *, required: bool) -> str:
    """A name or affiliation: a string, whitespace collapsed, no control characters, at most ``limit`` long."""
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{what} must be a string, received {type(value).__name__}")
    text = " ".join(value.split())
    if required and not text:
        raise Invalid(f"{what} is empty; give 1 to {limit} characters")
    if len(text) > limit:
        raise Invalid(f"{what} has {len(text)} characters; at most {limit} are allowed")
    if any(unicodedata.category(c) == "Cc" for c in text):
        raise Invalid(f"{what} contains a control character; printable text only")
    return text


def register_team(db: Database, name: object, affiliation: object, now: datetime) -> tuple[Team, str]:
    """Create a team; returns it and its token (the only time the token is shown).

    Raises
    ------
    Invalid
        If the name or affiliation is not acceptable text.
    Conflict
        If a team already has that name.
    """
    name = clean_text(name, "team name", MAX_NAME, required=True)
    affiliation = clean_text(affiliation, "affiliation", MAX_AFFILIATION, required=False)
    token = new_token(TEAM_PREFIX)
    team = Team(name=name, affiliation=affiliation, token_hash=hash_token(token), created_at=now)
    try:
        with db.write() as s:
            if s.scalar(select(Team.id).where(Team.name == name)) is not None:
                raise Conflict(f"the team name {name!r} is taken; choose another")
            s.add(team)
    except IntegrityError:  # two registrations of one name at once: the unique index decides
        raise Conflict(f"the team name {name!r} is taken; choose another") from None
    return team, token


def authenticate(db: Database, token: str | None) -> Team:
    """The team holding ``token``; :class:`Unauthorized` if there is none."""
    if not token:
        raise Unauthorized("no token; send the team's token as 'Authorization: Bearer TOKEN'",
                           headers={"WWW-Authenticate": "Bearer"})
    with db.read() as s:
        team = s.scalar(select(Team).where(Team.token_hash == hash_token(token)))
    if team is None:
        raise Unauthorized("the token is not valid", headers={"WWW-Authenticate": "Bearer"})
    return team


def create_admin_token(db: Database, now: datetime, label: str = "") -> str:
    """A new organiser token (shown once; stored hashed)."""
    label = clean_text(label, "label", MAX_AFFILIATION, required=False)
    token = new_token(ADMIN_PREFIX)
    with db.write() as s:
        s.add(AdminToken(token_hash=hash_token(token), label=label, created_at=now))
    return token


def authenticate_admin(db: Database, token: str | None) -> None:
    """Pass if ``token`` is an organiser token; :class:`Unauthorized` otherwise."""
    if not token:
        raise Unauthorized("no token; send an organiser token as 'Authorization: Bearer TOKEN'",
                           headers={"WWW-Authenticate": "Bearer"})
    with db.read() as s:
        if s.scalar(select(AdminToken.id).where(AdminToken.token_hash == hash_token(token))) is None:
            raise Unauthorized("the token is not an organiser token", headers={"WWW-Authenticate": "Bearer"})
