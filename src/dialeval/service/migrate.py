"""Create or upgrade the service's schema with the Alembic migrations shipped in the package.

The migration scripts live in ``dialeval/service/migrations`` (installed with the package), so a
``pip install``-ed server upgrades its database with no alembic.ini: :func:`upgrade` runs on every
open of a :class:`~dialeval.service.db.Database`, under a lock so that two processes starting at once
do not both migrate.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from dialeval.errors import DialevalError, first_few

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x6469616C  # "dial": the advisory lock held while migrating


def config() -> Config:
    """An Alembic configuration pointing at the shipped migrations (no alembic.ini needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head() -> str:
    """The newest migration's revision id."""
    return ScriptDirectory.from_config(config()).get_current_head()


def current(engine: Engine) -> str | None:
    """The database's revision (None for an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database to ``revision`` (default: the newest), holding a lock while doing so.

    On SQLite the foreign keys are off while migrating (SQLite ignores the switch inside a transaction, so it is
    made before): a migration that changes a table copies it and drops the original, and with the keys on, that
    drop deleted every row pointing at it by ``ON DELETE CASCADE`` (an upgrade from 0005 emptied the runs, their
    files and the tasks' gold, without an error). The keys are checked before the commit.

    Raises
    ------
    DialevalError
        A database that holds tables but no dialeval schema version (another application's database); a
        migration that would leave rows pointing at nothing.
    """
    if revision == "head" and current(engine) == head():
        return
    _refuse_foreign(engine)
    cfg = config()
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if sqlite:
            conn = conn.execution_options(dialeval_begin="IMMEDIATE")
            raw = conn.connection.dbapi_connection
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                if engine.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise DialevalError(f"migrating to {revision} would leave {len(broken)} row(s) pointing at "
                                            f"nothing (e.g. table {broken[0][0]}, row {broken[0][1]}); nothing was "
                                            "changed")
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")


def _refuse_foreign(engine: Engine) -> None:
    """Refuse a database with tables but no dialeval schema version: opening it would add dialeval's tables
    beside another application's (or fail on a table of the same name with the database's own message)."""
    if current(engine) is not None:
        return
    tables = sorted(set(inspect(engine).get_table_names()) - {"alembic_version"})  # left empty by a downgrade
    if tables:
        shown = first_few(tables)
        raise DialevalError(f"the database holds tables ({shown}) but no dialeval schema version: it is not a "
                            "dialeval database; allowed are an empty database or one dialeval created")
