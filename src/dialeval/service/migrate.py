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
from sqlalchemy import text
from sqlalchemy.engine import Engine

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
    """Upgrade the database to ``revision`` (default: the newest), holding a lock while doing so."""
    if revision == "head" and current(engine) == head():
        return
    cfg = config()
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn = conn.execution_options(dialeval_begin="IMMEDIATE")
        with conn.begin():
            if engine.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
