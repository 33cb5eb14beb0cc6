"""The service's storage: SQLAlchemy 2 models and one :class:`Database` handle (SQLite or PostgreSQL).

Tables shared by the capabilities: ``teams`` (a token hash, never the token; the name's canonical key and
confusable skeleton; approval), ``admin_tokens``, ``invitations`` (hashed codes), ``registration_attempts``
(per client address, for the rate limit). Each capability's own tables register on the same :class:`Base`
in its ``tables`` module: :mod:`dialeval.service.leaderboard.tables` (tasks and submissions),
:mod:`dialeval.service.collection.tables`, :mod:`dialeval.service.annotation.tables`.
The schema is created and upgraded by the Alembic migrations shipped in ``service/migrations``.

Every write goes through :meth:`Database.write`: one transaction that takes a real lock first,
``BEGIN IMMEDIATE`` on SQLite (one writer at a time); on PostgreSQL the writer locks the rows it checks
with ``SELECT ... FOR UPDATE`` (a submission locks its team's row before counting its quota).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import (
    DateTime,
    Index,
    Integer,
    String,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from dialeval.errors import DialevalError
from dialeval.service.config import DEFAULT_URL, URL_ENV  # noqa: F401  (DEFAULT_URL: re-exported)

"""The database used when neither ``--database-url`` nor ``DIALEVAL_DATABASE_URL`` is given."""

SQLITE_BUSY_TIMEOUT_S = 60.0
#: SQLSTATEs with which PostgreSQL refuses a transaction for now: trying the same request again succeeds.
RETRY_LATER = {"40001": "serialization failure", "40P01": "deadlock broken", "55P03": "lock not available"}


class UTCDateTime(TypeDecorator):
    """A timestamp stored as naive UTC and read back as an aware UTC datetime on every backend."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use an aware UTC time")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    pass


class Team(Base):
    __tablename__ = "teams"
    __table_args__ = (Index("ix_teams_name_skeleton", "name_skeleton"), Index("ix_teams_form_nonce", "form_nonce"),
                      UniqueConstraint("name_key", name="uq_teams_name_key"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    name_key: Mapped[str] = mapped_column(String(400))   # NFKC + case fold (service.names)
    name_skeleton: Mapped[str] = mapped_column(String(400))           # look-alike key (service.names)
    affiliation: Mapped[str] = mapped_column(String(200), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    approved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)  # None: awaits approval
    form_nonce: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the page form it came from


class AdminToken(Base):
    __tablename__ = "admin_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Invitation(Base):
    """A code an organiser hands out: to register a team, or to join a collection or an annotation project.

    Only the SHA-256 of the code is stored (:mod:`dialeval.service.invitations`).
    """

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))             # one of invitations.KINDS
    target: Mapped[str] = mapped_column(String(64), default="")  # collection / project name; "" for teams
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)   # first use
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (Index("ix_invitations_kind_target", "kind", "target"),)


class RegistrationAttempt(Base):
    """One registration request from a client address (the rate limit counts them: service.ratelimit)."""

    __tablename__ = "registration_attempts"
    __table_args__ = (Index("ix_registration_attempts_client_time", "client", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


def check_url(url: str) -> str:
    """Check a database URL: SQLite (a file) or PostgreSQL; returns it unchanged.

    Raises
    ------
    DialevalError
        If the URL cannot be parsed, names another backend, or is an in-memory SQLite database
        (which would lose everything on restart).
    """
    try:
        u = make_url(url)
    except ArgumentError:
        raise DialevalError(f"database URL {url!r} is not a URL; expected sqlite:///FILE or "
                            "postgresql+psycopg://USER@HOST:PORT/DB") from None
    if u.get_backend_name() not in ("sqlite", "postgresql"):
        raise DialevalError(f"database backend {u.get_backend_name()!r} is not supported; allowed are "
                            "sqlite, postgresql")
    if u.get_backend_name() == "postgresql" and not u.database:
        raise DialevalError(f"database URL {make_url(url).render_as_string(hide_password=True)!r} names no database; "
                            "give one: postgresql+psycopg://USER@HOST:PORT/DB (without it PostgreSQL would use the "
                            "user's default database)")
    if u.get_backend_name() == "sqlite" and u.database in (None, "", ":memory:"):
        raise DialevalError(f"database URL {url!r} is an in-memory SQLite database, which loses every "
                            "submission on restart; give a file: sqlite:///FILE")
    if u.get_backend_name() == "postgresql" and u.drivername == "postgresql":
        url = u.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


class Database:
    """An engine, its sessions and the locked write transaction of the service.

    Parameters
    ----------
    url : str
        ``sqlite:///FILE`` or ``postgresql+psycopg://USER@HOST:PORT/DB`` (``postgresql://`` means psycopg).
    migrate : bool, default True
        Create or upgrade the schema to the newest migration on open.
    create : bool, default True
        Create a SQLite file (and its folders) that is not there, and dialeval's schema in an empty database. False
        for a command that only reads or changes what is in the database: a mistyped path or database name is
        then an error naming it, not a new empty dialeval database (neither a file nor tables are made). (A
        PostgreSQL database itself is never created here.)

    Raises
    ------
    DialevalError
        A URL :func:`check_url` refuses; with ``create=False``, a SQLite file that is not there or a database
        with no dialeval schema; a database that cannot be opened or was written by a newer dialeval.
    """

    def __init__(self, url: str, *, migrate: bool = True, create: bool = True) -> None:
        self.url = check_url(url)
        self.is_sqlite = make_url(self.url).get_backend_name() == "sqlite"
        if self.is_sqlite:
            file = Path(make_url(self.url).database).expanduser()
            if not create and (not file.is_file() or file.stat().st_size == 0):
                raise DialevalError(f"the SQLite database {file} (database URL {self.url}) "
                                    + ("is a folder, not a file" if file.is_dir() else
                                       "is an empty file" if file.is_file() else "does not exist")
                                    + f"; check --database-url or ${URL_ENV}, or create the database with a command "
                                    "that adds to it (dialeval admin create-task, create-team...)")
            file.parent.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(self.url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            _sqlite_transactions(self.engine)
        else:
            self.engine = create_engine(self.url, pool_size=10, max_overflow=40, pool_pre_ping=True)
        if migrate:
            from alembic.util.exc import CommandError

            from dialeval.service.migrate import current, upgrade
            try:
                if not create and current(self.engine) is None:  # nothing of dialeval's there: not made now
                    self.engine.dispose()
                    raise DialevalError(f"the database {self!r} holds no dialeval data (no dialeval schema); check "
                                        f"--database-url or ${URL_ENV}, or create it with a command that adds to "
                                        "it (dialeval admin create-task, create-team...)")
                upgrade(self.engine)
            except DBAPIError as e:  # unreachable, refused, not a database file ("file is not a database")
                self.engine.dispose()
                reason = " ".join(str(e.orig or e).split())[:300]
                raise DialevalError(f"cannot open the database {self!r}: {reason}") from None
            except CommandError as e:  # alembic: a revision this dialeval does not know
                self.engine.dispose()
                raise DialevalError(f"the database {self!r} was written by a newer dialeval (its schema is at a "
                                    f"revision this one does not know: {' '.join(str(e).split())[:200]}); use that "
                                    "version, or another database") from None

    def __repr__(self) -> str:
        return f"Database({make_url(self.url).render_as_string(hide_password=True)!r})"

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading (one snapshot on SQLite's WAL; READ COMMITTED on PostgreSQL)."""
        with Session(self.engine, expire_on_commit=False) as s, s.begin():
            yield s

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction, committed on success and rolled back on error.

        On SQLite it starts with ``BEGIN IMMEDIATE``: the database's one write lock is taken before the
        first read, so what the transaction reads cannot change before it commits (a deferred
        transaction could not upgrade to a write after another writer committed). On PostgreSQL,
        callers lock the rows they check with ``SELECT ... FOR UPDATE`` (``with_for_update()``,
        which SQLite ignores, being locked whole already).
        """
        with Session(self.engine, expire_on_commit=False) as s:
            # The session begins here; on SQLite the begin hook turns this option into BEGIN IMMEDIATE.
            s.connection(execution_options={"dialeval_begin": "IMMEDIATE"})
            yield s
            s.commit()

    def serialise(self, s: Session, key: str) -> None:
        """Hold the lock named ``key`` until ``s``'s write transaction ends: a PostgreSQL advisory lock, for
        checks no unique index can make (a look-alike name, a count within a window); SQLite's write
        transactions are serialised whole already."""
        if not self.is_sqlite:
            k = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
            s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": k})

    def dispose(self) -> None:
        self.engine.dispose()


def _sqlite_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not the sqlite3 module, issue BEGIN (so BEGIN IMMEDIATE is possible); WAL mode."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=FULL")  # a 201 survives a power cut too
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        mode = conn.get_execution_options().get("dialeval_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def busy(e: OperationalError) -> bool:
    """Whether the database refused a transaction for now (:data:`RETRY_LATER` on PostgreSQL, SQLite's
    "database is locked" after its busy timeout): not a fault of the request or the server, so the service
    answers 409 with ``Retry-After`` instead of 500."""
    state = getattr(e.orig, "sqlstate", None)
    return state in RETRY_LATER or "database is locked" in str(e.orig)
