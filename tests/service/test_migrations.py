"""The shipped Alembic migrations build exactly the models' schema, on SQLite and PostgreSQL, idempotently."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine

from dialeval.service import migrate
from dialeval.service.db import Base, Database


def test_migrations_match_the_models(db_url):
    db = Database(db_url)  # upgrades to head
    try:
        assert migrate.current(db.engine) == migrate.head()
        migrate.upgrade(db.engine)  # a second time: nothing to do
        with db.engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(ctx, Base.metadata) == []
    finally:
        db.dispose()


def test_migrations_are_shipped_inside_the_package():
    assert (migrate.MIGRATIONS / "env.py").is_file()
    assert list((migrate.MIGRATIONS / "versions").glob("0001_*.py"))


def test_downgrade_to_empty_and_back(sqlite_url):
    from alembic import command

    eng = create_engine(sqlite_url)
    migrate.upgrade(eng)
    cfg = migrate.config()
    with eng.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
    assert migrate.current(eng) is None
    migrate.upgrade(eng)
    assert migrate.current(eng) == migrate.head()
    eng.dispose()
