"""Teams and organisers: registration, tokens (shown once, stored hashed), authentication, approval.

Registration follows the server's mode (:data:`MODES`): ``open`` (anyone), ``invite`` (a single-use code
from ``dialeval admin invite-teams``, consumed in the registration's transaction) or ``approve`` (anyone may
register, but the team submits only once an organiser ran ``dialeval admin approve-team``). Names follow
:mod:`dialeval.service.names` (unique after NFKC and case folding, no invisible characters, no look-alikes).
"""

from __future__ import annotations

import unicodedata
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from dialeval.errors import DialevalError, describe
from dialeval.service import invitations
from dialeval.service.db import AdminToken, Database, Team
from dialeval.service.errors import Conflict, Forbidden, Invalid, InvalidValue, NotFound, Unauthorized
from dialeval.service.names import mark_problem, name_key, name_problem, skeleton
from dialeval.service.tokens import ADMIN_PREFIX, TEAM_PREFIX, hash_token, new_token

MAX_NAME = 100
MAX_AFFILIATION = 200
MAX_KEY = 400
MODES = ("open", "invite", "approve")
"""Registration modes of a server (``dialeval serve --registration``, ``$DIALEVAL_REGISTRATION``)."""


def check_mode(mode: object) -> str:
    """``mode`` if it is one of :data:`MODES`; else a :class:`DialevalError` listing them."""
    if not isinstance(mode, str) or mode not in MODES:
        raise DialevalError(f"registration mode {describe(mode)} is not allowed; allowed are " + ", ".join(MODES))
    return mode  # type: ignore[return-value]


def clean_text(value: object, what: str, limit: int, *, required: bool, param: str | None = None) -> str:
    """A name or affiliation as stored: a string, whitespace collapsed, NFC-normalised, no control or invisible
    characters, no stack of combining marks (:func:`~dialeval.service.names.mark_problem`), at most ``limit``
    long; else :class:`~dialeval.service.errors.InvalidValue` of parameter ``param`` (default ``what``) naming
    ``what``, what was received and what is allowed.

    >>> clean_text("  Nguye\\u0302\\u0303n   Lab ", "team name", 100, required=True) == "Nguy\\u1ec5n Lab"
    True
    """
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise InvalidValue(param or what, f"must be a string, received {type(value).__name__}", what=what)
    text = unicodedata.normalize("NFC", " ".join(value.split()))
    if required and not text:
        raise InvalidValue(param or what, f"is empty; give 1 to {limit} characters", what=what)
    if len(text) > limit:
        raise InvalidValue(param or what, f"has {len(text)} characters; at most {limit} are allowed", what=what)
    problem = name_problem(text) or mark_problem(text)
    if problem:
        raise InvalidValue(param or what, problem, what=what)
    return text


def registered_by_form(db: Database, form_nonce: str | None) -> Team | None:
    """The team the home page's form ``form_nonce`` registered, if it did (the form sent again: a reload)."""
    if not form_nonce:
        return None
    with db.read() as s:
        return s.scalar(select(Team).where(Team.form_nonce == form_nonce).limit(1))


def register_team(db: Database, name: object, affiliation: object, now: datetime, *, mode: str = "open",
                  invite: str | None = None, form_nonce: str | None = None) -> tuple[Team, str | None]:
    """Create a team; returns it and its token (the only time the token is shown), or the team the page form
    ``form_nonce`` registered already and None (the form sent twice at once: a double click).

    Parameters
    ----------
    mode : {'open', 'invite', 'approve'}
        The server's registration mode: ``invite`` needs an unused team invitation code (``invite``), which
        this registration consumes; under ``approve`` the team is created unapproved (it cannot submit until
        :func:`approve_team`). ``open`` and ``invite`` teams are approved at once.
    form_nonce : str, optional
        The random value of the page form the registration came from (:func:`registered_by_form`).

    Raises
    ------
    Invalid
        If the name or affiliation is not acceptable text (:mod:`dialeval.service.names`), or an invitation code
        is given to a server that takes none (``open``, ``approve``).
    Unauthorized
        In ``invite`` mode, without a valid code.
    Conflict
        If a team already has that name (after NFKC and case folding), one looks like it, or the code was used.
    """
    mode = check_mode(mode)
    name = clean_text(name, "team name", MAX_NAME, required=True, param="name")
    affiliation = clean_text(affiliation, "affiliation", MAX_AFFILIATION, required=False, param="affiliation")
    key, skel = name_key(name), skeleton(name)
    if len(key) > MAX_KEY or len(skel) > MAX_KEY:
        raise Invalid(f"team name is too long once normalised (NFKC); at most {MAX_NAME} plain characters")
    if mode == "invite":
        invitations.check(db, invite, "team")  # cheap refusal before the write lock
    elif invite not in (None, ""):  # a code where none counts: said, not ignored (the team would wait unawares)
        raise Invalid(f"this server registers teams without invitation codes (registration mode {mode!r}"
                      + (": the organisers approve each team before it can submit" if mode == "approve" else "")
                      + "); leave the invitation code out")
    token = new_token(TEAM_PREFIX)
    team = Team(name=name, name_key=key, name_skeleton=skel, affiliation=affiliation,
                token_hash=hash_token(token), created_at=now, approved_at=None if mode == "approve" else now,
                form_nonce=form_nonce or None)
    taken = Conflict(f"the team name {name!r} is taken (names differing only in case or width are one name); "
                     "choose another")
    try:
        with db.write() as s:
            # one registration at a time: a look-alike is no unique index's to refuse (two look-alikes of one
            # name registered at once were both created), and a form sent twice at once is this form's team
            db.serialise(s, "team registration")
            if form_nonce and (earlier := s.scalar(select(Team).where(Team.form_nonce == form_nonce))) is not None:
                return earlier, None
            if s.scalar(select(Team.id).where(Team.name_key == key)) is not None:
                raise taken
            if s.scalar(select(Team.id).where(Team.name_skeleton == skel)) is not None:
                raise Conflict(f"the team name {name!r} looks like the name of a registered team (look-alike "
                               "letters of another script, or digits for letters); choose another")
            if mode == "invite":
                invitations.consume(s, invite, "team", now)
            s.add(team)
    except IntegrityError:  # two registrations of one name at once: the unique index decides
        raise taken from None
    return team, token


def approve_team(db: Database, name: str, now: datetime) -> Team:
    """Approve a team registered under the ``approve`` mode (it may submit from now on); idempotent."""
    key = name_key(clean_text(name, "team name", MAX_NAME, required=True))
    with db.write() as s:
        team = s.scalar(select(Team).where(Team.name_key == key).with_for_update())
        if team is None:
            raise NotFound(f"no team named {describe(name)}")
        if team.approved_at is None:
            team.approved_at = now
    return team


def list_teams(db: Database) -> list[dict]:
    """Every team: name, affiliation, registration time and approval (for organisers)."""
    with db.read() as s:
        teams = s.scalars(select(Team).order_by(Team.created_at, Team.id)).all()
    return [{"name": t.name, "affiliation": t.affiliation, "created_at": t.created_at.isoformat(),
             "approved": t.approved_at is not None,
             "approved_at": t.approved_at.isoformat() if t.approved_at else None} for t in teams]


def require_approved(team: Team) -> None:
    """:class:`Forbidden` if the team awaits an organiser's approval (``approve`` mode)."""
    if team.approved_at is None:
        raise Forbidden(f"team {team.name!r} awaits approval by the organisers; it cannot submit yet")


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


def new_team_token(db: Database, name: object, *, token: str | None = None) -> tuple[Team, str]:
    """Give a team a new token (shown once); its old token stops working at once.

    For a leaked token: the organisers replace it by the team's name (``dialeval admin new-team-token``), or
    the team by its current token (``POST /api/me/token``, ``token``).

    Raises
    ------
    NotFound
        No team has that name.
    Unauthorized
        ``token`` was given and is not the team's current token (it was replaced meanwhile).
    """
    key = name_key(clean_text(name, "team name", MAX_NAME, required=True))
    fresh = new_token(TEAM_PREFIX)
    with db.write() as s:
        team = s.scalar(select(Team).where(Team.name_key == key).with_for_update())
        if team is None:
            raise NotFound(f"no team named {describe(name)}")
        if token is not None and team.token_hash != hash_token(token):
            raise Unauthorized("the token is not valid", headers={"WWW-Authenticate": "Bearer"})
        team.token_hash = hash_token(fresh)
    return team, fresh


def create_admin_token(db: Database, now: datetime, label: str = "") -> str:
    """A new organiser token (shown once; stored hashed)."""
    label = clean_text(label, "label", MAX_AFFILIATION, required=False, param="label")
    token = new_token(ADMIN_PREFIX)
    with db.write() as s:
        s.add(AdminToken(token_hash=hash_token(token), label=label, created_at=now))
    return token


def list_admin_tokens(db: Database) -> list[dict]:
    """The organiser tokens that work: id, label, creation time (never the token: only its hash is stored)."""
    with db.read() as s:
        rows = s.scalars(select(AdminToken).order_by(AdminToken.id)).all()
    return [{"id": t.id, "label": t.label, "created_at": t.created_at.isoformat()} for t in rows]


def revoke_admin_token(db: Database, token_id: object) -> dict:
    """Revoke the organiser token ``token_id`` (an id of :func:`list_admin_tokens`): it stops working at once.
    Returns what :func:`list_admin_tokens` showed of it.

    Raises
    ------
    InvalidValue, NotFound
        ``token_id`` is not a positive integer, or no working token has it.
    """
    if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 1:
        raise InvalidValue("token_id", f"{describe(token_id)} is not allowed; allowed are the ids "
                           "`dialeval admin list-admin-tokens` shows (integers from 1)", what="token id")
    with db.write() as s:
        row = s.get(AdminToken, token_id, with_for_update=True)
        if row is None:
            raise NotFound(f"no organiser token {token_id}; `dialeval admin list-admin-tokens` shows those that work")
        gone = {"id": row.id, "label": row.label, "created_at": row.created_at.isoformat()}
        s.delete(row)
    return gone


def authenticate_admin(db: Database, token: str | None) -> None:
    """Pass if ``token`` is an organiser token; :class:`Unauthorized` otherwise."""
    if not token:
        raise Unauthorized("no token; send an organiser token as 'Authorization: Bearer TOKEN'",
                           headers={"WWW-Authenticate": "Bearer"})
    with db.read() as s:
        if s.scalar(select(AdminToken.id).where(AdminToken.token_hash == hash_token(token))) is None:
            raise Unauthorized("the token is not an organiser token", headers={"WWW-Authenticate": "Bearer"})
