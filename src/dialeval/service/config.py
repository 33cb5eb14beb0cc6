"""Settings of a running service: database, upload limit, clock (injectable for tests)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from dialeval.errors import DialevalError

DEFAULT_URL = "sqlite:///dialeval-service.sqlite"
DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024
URL_ENV = "DIALEVAL_DATABASE_URL"
MAX_UPLOAD_ENV = "DIALEVAL_MAX_UPLOAD_BYTES"


def utcnow() -> datetime:
    return datetime.now(UTC)


def _env_bytes() -> int:
    raw = os.environ.get(MAX_UPLOAD_ENV)
    if raw is None:
        return DEFAULT_MAX_UPLOAD_BYTES
    try:
        return int(raw)
    except ValueError:
        raise DialevalError(f"${MAX_UPLOAD_ENV} is {raw!r}; expected a whole number of bytes") from None


def database_url(url: str | None = None) -> str:
    """The database URL: the one given, else ``$DIALEVAL_DATABASE_URL``, else a SQLite file here."""
    return url or os.environ.get(URL_ENV) or DEFAULT_URL


@dataclass
class Settings:
    """Settings of one service instance.

    Parameters
    ----------
    database_url : str
        SQLite file (``sqlite:///FILE``) or PostgreSQL (``postgresql+psycopg://...``).
    max_upload_bytes : int, default 20 MB
        Larger run files are refused with 413 before they are read.
    clock : callable returning an aware datetime
        The time used for quotas, deadlines and timestamps (tests pass a fake one).
    """

    database_url: str = field(default_factory=database_url)
    max_upload_bytes: int = field(default_factory=_env_bytes)
    clock: Callable[[], datetime] = utcnow
    registration: str = field(default_factory=lambda: os.environ.get("DIALEVAL_REGISTRATION", "open"))

    def __post_init__(self) -> None:
        if isinstance(self.max_upload_bytes, bool) or not isinstance(self.max_upload_bytes, int) \
                or self.max_upload_bytes < 1:
            raise DialevalError(f"max upload size {self.max_upload_bytes!r} is not allowed; allowed are "
                                "integers >= 1 (bytes)")
