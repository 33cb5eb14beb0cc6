"""Invitations: codes an organiser hands out, shown once and stored only as a SHA-256 hash.

One concept for every way into the service that an organiser controls:

=============  =========  ==============================================================================
kind           prefix     what the code does
=============  =========  ==============================================================================
``team``       ``dti_``   registers one team (single use: consumed by the registration it allows)
``collection`` ``dci_``   lets one participant chat in a collection (the code is that person's key)
``annotation`` ``dai_``   lets one annotator label a project's items (the code is that person's key)
=============  =========  ==============================================================================

The prefix tells people which code is which; the check is by ``kind`` and ``target`` in the database, so
a team token (``dt_``) or an invitation of another kind or project never passes for this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from dialeval.errors import describe
from dialeval.service.db import Database, Invitation
from dialeval.service.errors import Conflict, Invalid, InvalidValue, NotFound, Unauthorized
from dialeval.service.tokens import hash_token, new_token


@dataclass(frozen=True)
class Kind:
    """A kind of invitation: its name, the prefix of its codes, and whether one use consumes it."""

    name: str
    prefix: str
    single_use: bool
    what: str


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("team", "dti_", True, "registers one team"),
    Kind("collection", "dci_", False, "lets one participant chat in a collection"),
    Kind("annotation", "dai_", False, "lets one annotator label a project's items"),
)}
"""Every kind of invitation, declared once."""

MAX_COUNT = 10_000


def _kind(kind: str) -> Kind:
    if not isinstance(kind, str) or kind not in KINDS:
        raise Invalid(f"invitation kind {describe(kind)} is not allowed; allowed are " + ", ".join(KINDS))
    return KINDS[kind]


def check_target_name_free(s, name: str) -> None:
    """In write transaction ``s``: :class:`Conflict` when a chat collection or an annotation project is called
    ``name`` already. The two share one namespace: their codes name their target, and ``dialeval admin invite
    NAME`` must find exactly one."""
    from dialeval.service.annotation.tables import AnnotationProject
    from dialeval.service.collection.tables import Collection

    for what, table in (("a collection", Collection), ("an annotation project", AnnotationProject)):
        if s.scalar(select(table.id).where(table.name == name)) is not None:
            raise Conflict(f"{what} named {name!r} exists already: the name is taken (collections and annotation "
                           "projects share names); choose another")


def create_invitations(db: Database, kind: str, target: str, count: int, now: datetime, *,
                       label: str = "") -> list[str]:
    """Make ``count`` new codes of ``kind`` for ``target``; returns them (the only time they are shown).

    Parameters
    ----------
    kind : {'team', 'collection', 'annotation'}
        See :data:`KINDS`.
    target : str
        The collection or annotation project the codes open ("" for team registration).
    count : int in [1, 10000]
    label : str, optional
        A note kept with the codes (at most 200 characters, as an admin token's label).

    Raises
    ------
    InvalidValue
        ``count`` or ``label`` refused (naming the parameter).

    Examples
    --------
    >>> KINDS["team"].prefix, KINDS["annotation"].single_use
    ('dti_', False)
    """
    k = _kind(kind)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise InvalidValue("count", f"{describe(count)} is not allowed; allowed are integers from 1 to {MAX_COUNT}")
    if not isinstance(target, str) or len(target) > 64:
        raise Invalid("invitation target must be a name of at most 64 characters")
    from dialeval.service.teams import MAX_AFFILIATION, clean_text  # teams imports this module

    label = clean_text(label, "label", MAX_AFFILIATION, required=False, param="label")  # as an admin token's
    codes = [new_token(k.prefix) for _ in range(count)]
    with db.write() as s:
        for c in codes:
            s.add(Invitation(kind=k.name, target=target, token_hash=hash_token(c), label=label,
                             created_at=now, used_at=None, revoked_at=None))
    return codes


def _check_given(code: object, k: Kind) -> None:
    """Pass for a code that is non-empty text; else :class:`Unauthorized` saying none was given, or what was
    given instead of text (a JSON number, a list...)."""
    if isinstance(code, str) and code:
        return
    if code is None or code == "":
        raise Unauthorized(f"no invitation code was given: this needs one ({k.what}); ask the organisers for one",
                           headers={"WWW-Authenticate": "Bearer"})
    raise Unauthorized(f"the invitation code must be text; got {describe(code, 40)} ({k.what})",
                       headers={"WWW-Authenticate": "Bearer"})


def _refused(k: Kind) -> Unauthorized:
    return Unauthorized(f"the code is not a valid invitation ({k.what}); ask the organisers for one",
                        headers={"WWW-Authenticate": "Bearer"})


def check(db: Database, code: str | None, kind: str, target: str | None = None) -> Invitation:
    """The unrevoked invitation of ``kind`` (and ``target``, if given) behind ``code``; else Unauthorized.

    A single-use code that was used already is refused too (:class:`Conflict`).
    """
    k = _kind(kind)
    _check_given(code, k)
    with db.read() as s:
        inv = s.scalar(select(Invitation).where(Invitation.token_hash == hash_token(code)))
    if inv is None or inv.kind != k.name or inv.revoked_at is not None or (target is not None
                                                                           and inv.target != target):
        raise _refused(k)
    if k.single_use and inv.used_at is not None:
        raise Conflict("this invitation code was used already; each code registers one team")
    return inv


def consume(s, code: str | None, kind: str, now: datetime, target: str | None = None) -> Invitation:
    """Inside a write transaction ``s``: lock the invitation, check it, and mark it used.

    For a single-use kind a second use is a :class:`Conflict` (the row lock makes two concurrent uses
    of one code give exactly one success). For a reusable kind only the first use is recorded.
    """
    k = _kind(kind)
    _check_given(code, k)
    inv = s.scalar(select(Invitation).where(Invitation.token_hash == hash_token(code)).with_for_update())
    if inv is None or inv.kind != k.name or inv.revoked_at is not None or (target is not None
                                                                           and inv.target != target):
        raise _refused(k)
    if inv.used_at is not None and k.single_use:
        raise Conflict("this invitation code was used already; each code registers one team")
    if inv.used_at is None:
        inv.used_at = now
    return inv


def revoke_code(db: Database, code: object, now: datetime) -> Invitation:
    """Revoke the invitation behind ``code`` (any kind): it stops working at once, and is counted as revoked.

    What was done with it stays: a team it registered keeps its own token (replace that with
    :func:`dialeval.service.teams.new_team_token`); an annotator's finished items stay finished (to drop them too,
    exclude the annotator); a chat stops being reachable with it.

    Raises
    ------
    Invalid, NotFound
        ``code`` is not a string, or is no invitation's code.
    """
    if not isinstance(code, str) or not code.strip():
        raise Invalid(f"invitation code {describe(code)} is not allowed; give a code as `dialeval admin invite` "
                      "or `invite-teams` printed it")
    with db.write() as s:
        inv = s.scalar(select(Invitation).where(Invitation.token_hash == hash_token(code.strip())).with_for_update())
        if inv is None:
            raise NotFound("no invitation has this code (codes are case-sensitive; "
                           + ", ".join(f"{k.prefix}... {k.what}" for k in KINDS.values()) + ")")
        if inv.revoked_at is None:
            inv.revoked_at = now
    return inv


def counts(db: Database, kind: str, target: str = "") -> dict[str, int]:
    """How many codes of ``kind`` for ``target`` exist, were used, and are revoked."""
    k = _kind(kind)
    with db.read() as s:
        rows = s.execute(select(Invitation.used_at, Invitation.revoked_at)
                         .where(Invitation.kind == k.name, Invitation.target == target)).all()
    return {"created": len(rows), "used": sum(1 for u, _ in rows if u is not None),
            "revoked": sum(1 for _, r in rows if r is not None)}
