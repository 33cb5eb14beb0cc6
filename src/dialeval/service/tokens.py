"""Secret tokens: made with :mod:`secrets`, shown once, stored only as a SHA-256 hash.

A token carries 256 random bits, so a fast hash is enough (no password stretching is needed: there is
nothing to guess); lookups are by hash, so the token itself never reaches the database.
"""

from __future__ import annotations

import hashlib
import secrets

TEAM_PREFIX = "dt_"
ADMIN_PREFIX = "da_"


def new_token(prefix: str) -> str:
    """A new random token, e.g. ``dt_...`` for a team and ``da_...`` for an organiser."""
    return prefix + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The SHA-256 hex digest stored in place of ``token``.

    Examples
    --------
    >>> len(hash_token("dt_abc")), hash_token("dt_abc") == hash_token("dt_abc")
    (64, True)
    """
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()  # any string a client sends
