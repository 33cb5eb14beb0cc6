"""Settings of a running service: database, upload limit, clock (injectable for tests)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from dialeval.errors import DialevalError, describe

DEFAULT_URL = "sqlite:///dialeval-service.sqlite"
DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_UPLOAD_BYTES = 4096 * 1024 * 1024
"""The largest upload limit allowed (4 GB): an upload is buffered whole (in memory, then scored), so more than a
few GB is never meant."""
URL_ENV = "DIALEVAL_DATABASE_URL"
MAX_UPLOAD_ENV = "DIALEVAL_MAX_UPLOAD_BYTES"
PUBLIC_URL_ENV = "DIALEVAL_PUBLIC_URL"
FORWARDED_ENV = "DIALEVAL_FORWARDED_ALLOW_IPS"
DOCS_ENV = "DIALEVAL_DOCS"
SCORING_ENV = "DIALEVAL_SCORING_PROCESSES"
MAX_SCORING_PROCESSES = 64


def utcnow() -> datetime:
    return datetime.now(UTC)


def is_aware(t: object) -> bool:
    """Whether ``t`` is an aware datetime (a time zone that gives its offset): what every clock of the service
    returns and every time it is given must be (Python calls a datetime whose ``utcoffset()`` is None naive, even
    with a ``tzinfo``).

    Examples
    --------
    >>> is_aware(utcnow()), is_aware(datetime(2026, 3, 1)), is_aware("2026-03-01T00:00Z")
    (True, False, False)
    """
    return isinstance(t, datetime) and t.tzinfo is not None and t.utcoffset() is not None


def env_max_upload_bytes() -> int:
    """The upload limit in bytes: ``$DIALEVAL_MAX_UPLOAD_BYTES`` if set, else 20 MB."""
    raw = os.environ.get(MAX_UPLOAD_ENV)
    if raw is None:
        return DEFAULT_MAX_UPLOAD_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise DialevalError(f"${MAX_UPLOAD_ENV} is {raw!r}; expected a whole number of bytes") from None
    if not 1 <= value <= MAX_UPLOAD_BYTES:
        raise DialevalError(f"${MAX_UPLOAD_ENV} is {raw!r}; allowed are whole numbers of bytes from 1 to "
                            f"{MAX_UPLOAD_BYTES} (4 GB)")
    return value


def check_public_url(url: object) -> str:
    """The service's public URL as given by the organiser (``--public-url``): ``http(s)://HOST[:PORT][/PATH]``
    with no query, fragment or user part; returned without a trailing ``/``; ``""`` means none.

    Examples
    --------
    >>> check_public_url("https://eval.example.org/dq/"), check_public_url("")
    ('https://eval.example.org/dq', '')
    """
    from urllib.parse import urlsplit

    if url is None or url == "":
        return ""
    bad = DialevalError(f"public URL {describe(url)} is not allowed; allowed are http(s)://HOST[:PORT][/PATH] "
                        f"without query, fragment or user (--public-url, ${PUBLIC_URL_ENV})")
    if not isinstance(url, str) or not url.isprintable() or any(c.isspace() for c in url):
        raise bad
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise bad from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or parts.username is not None or "#" in url or "?" in url:
        raise bad
    return url.rstrip("/")


def check_forwarded_allow_ips(value: object) -> str:
    """The proxies trusted for ``X-Forwarded-For``/``-Proto`` (Uvicorn's ``--forwarded-allow-ips``): a comma
    separated list of IP addresses, networks (``10.0.0.0/8``) or ``*``; ``""`` trusts no one.

    Examples
    --------
    >>> check_forwarded_allow_ips(" 127.0.0.1, 10.0.0.0/8 "), check_forwarded_allow_ips("")
    ('127.0.0.1,10.0.0.0/8', '')
    """
    if not isinstance(value, str):
        raise DialevalError(f"trusted proxies {describe(value)} are not allowed; allowed is a text")
    items = [x.strip() for x in value.split(",") if x.strip()]
    for item in items:
        if item == "*":
            continue
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise DialevalError(f"trusted proxy {describe(item)} (in --forwarded-allow-ips / ${FORWARDED_ENV}) "
                                "is not allowed; allowed are IP addresses, networks such as 10.0.0.0/8, "
                                "or *") from None
    return ",".join(items)


def _env_flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw not in ("", "0", "1", "false", "true", "no", "yes"):
        raise DialevalError(f"${name} is {describe(raw)}; allowed are 1/0, true/false, yes/no")
    return raw in ("1", "true", "yes")


def default_scoring_processes() -> int:
    """Scoring processes per worker when not configured: every core but one (at least one)."""
    return max(1, (os.cpu_count() or 2) - 1)


def _env_scoring() -> int:
    raw = os.environ.get(SCORING_ENV)
    if raw is None or raw.strip() == "":
        return default_scoring_processes()
    try:
        return int(raw)
    except ValueError:
        raise DialevalError(f"${SCORING_ENV} is {describe(raw)}; expected a whole number from 0 to "
                            f"{MAX_SCORING_PROCESSES}") from None


def database_url(url: str | None = None) -> str:
    """The database URL: the one given, else ``$DIALEVAL_DATABASE_URL``, else a SQLite file here. An empty one,
    given or set, is an error (it fell back to the SQLite file here: a team registered in the wrong database)."""
    from dialeval.errors import DialevalError

    given = url if url is not None else os.environ.get(URL_ENV)
    if given is not None and not given.strip():
        raise DialevalError("the database URL is empty (--database-url or $" + URL_ENV + "); give sqlite:///FILE or "
                            "postgresql+psycopg://USER@HOST:PORT/DB, or leave both unset for " + DEFAULT_URL)
    return given or DEFAULT_URL


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
    registration : {'open', 'invite', 'approve'}
        Who may register a team.
    public_url : str, default ``$DIALEVAL_PUBLIC_URL`` or ""
        The URL the service is reached at (``https://eval.example.org``): the only source of absolute URLs
        (pages otherwise use relative paths; the ``Host`` header is never used). HTTPS also adds HSTS.
    forwarded_allow_ips : str, default ``$DIALEVAL_FORWARDED_ALLOW_IPS`` or "" (trust no one)
        Proxies whose ``X-Forwarded-For``/``-Proto`` are believed (Uvicorn's semantics).
    docs : bool, default ``$DIALEVAL_DOCS`` or False
        Serve ``/openapi.json`` and a self-hosted ``/docs`` page (no CDN).
    scoring_processes : int, default ``$DIALEVAL_SCORING_PROCESSES`` or cores - 1
        Processes that score uploads off the request threads (0: score in the request's thread).
    """

    database_url: str = field(default_factory=database_url)
    max_upload_bytes: int = field(default_factory=env_max_upload_bytes)
    clock: Callable[[], datetime] = utcnow
    registration: str = field(default_factory=lambda: os.environ.get("DIALEVAL_REGISTRATION", "open"))
    public_url: str = field(default_factory=lambda: os.environ.get(PUBLIC_URL_ENV, ""))
    forwarded_allow_ips: str = field(default_factory=lambda: os.environ.get(FORWARDED_ENV, ""))
    docs: bool = field(default_factory=lambda: _env_flag(DOCS_ENV))
    scoring_processes: int = field(default_factory=_env_scoring)

    def __post_init__(self) -> None:
        if isinstance(self.max_upload_bytes, bool) or not isinstance(self.max_upload_bytes, int) \
                or not 1 <= self.max_upload_bytes <= MAX_UPLOAD_BYTES:
            raise DialevalError(f"max upload size {self.max_upload_bytes!r} is not allowed; allowed are "
                                f"integers from 1 to {MAX_UPLOAD_BYTES} (bytes)")
        self.public_url = check_public_url(self.public_url)
        self.forwarded_allow_ips = check_forwarded_allow_ips(self.forwarded_allow_ips)
        sp = self.scoring_processes
        if isinstance(sp, bool) or not isinstance(sp, int) or not 0 <= sp <= MAX_SCORING_PROCESSES:
            raise DialevalError(f"scoring processes {describe(sp)} are not allowed; allowed are integers from 0 "
                                f"to {MAX_SCORING_PROCESSES}")
