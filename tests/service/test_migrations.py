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


def test_upgrading_keeps_the_rows_that_point_at_a_table_a_migration_copies(db_url):
    """On SQLite, with the foreign keys on (as every connection of the service has them), a migration that copies
    a table and drops the original (batch mode: 0003 and 0006 change tasks and teams) deleted every run, run
    file and gold by ON DELETE CASCADE: an upgrade from 0005 emptied them without an error. Found by a
    migrations probe."""
    import json
    from datetime import datetime

    from sqlalchemy import text

    db = Database(db_url, migrate=False)
    try:
        migrate.upgrade(db.engine, "0002")
        t = datetime(2026, 11, 23, 12)
        with db.engine.begin() as c:
            c.execute(text("INSERT INTO teams (id, name, affiliation, token_hash, created_at) "
                           "VALUES (1, 'TeamA', '', :h, :t)"), {"h": "a" * 64, "t": t})
            c.execute(text("INSERT INTO tasks (id, name, subtask, columns, rank_by, n_dialogues, public_ids, "
                           "public_fraction, seed, daily_limit, total_limit, created_at, gold_name, gold_sha256) "
                           "VALUES (1, 'dq', 'quality', :cols, 'quality.nmd.A', 2, :pub, 0.5, 7, 5, 50, :t, "
                           "'gold.json', :s)"),
                      {"cols": json.dumps(["quality.nmd.A"]), "pub": json.dumps(["d1"]), "t": t, "s": "b" * 64})
            c.execute(text("INSERT INTO task_golds (task_id, data) VALUES (1, :d)"), {"d": b"[]"})
            c.execute(text("INSERT INTO submissions (id, task_id, team_id, created_at, filename, size, sha256, "
                           "on_leaderboard, chosen, public_scores, settings) VALUES (1, 1, 1, :t, 'run.json', 2, :s, "
                           ":y, :n, '{}', '{}')"), {"t": t, "s": "c" * 64, "y": True, "n": False})
            c.execute(text("INSERT INTO submission_files (submission_id, data) VALUES (1, :d)"), {"d": b"[]"})
    finally:
        db.dispose()
    db = Database(db_url)  # upgrades to head, as every command does
    try:
        with db.engine.connect() as c:
            counts = [c.execute(text(f"SELECT count(*) FROM {table}")).scalar()
                      for table in ("teams", "tasks", "task_golds", "submissions", "submission_files")]
            assert counts == [1, 1, 1, 1, 1]
            if db.is_sqlite:
                assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1   # on again after migrating
    finally:
        db.dispose()


def test_old_team_names_whose_suffixed_key_is_taken_still_migrate(sqlite_url):
    """'teama#3' (id 1), 'TeamA' (id 2), 'teama' (id 3): 0003 gave id 3 the key 'teama#3', team 1's, and the
    unique constraint then made the database impossible to upgrade."""
    from datetime import datetime

    from sqlalchemy import text

    db = Database(sqlite_url, migrate=False)
    try:
        migrate.upgrade(db.engine, "0002")
        with db.engine.begin() as c:
            for i, name in enumerate(["teama#3", "TeamA", "teama"], 1):
                c.execute(text("INSERT INTO teams (id, name, affiliation, token_hash, created_at) "
                               "VALUES (:i, :n, '', :h, :t)"), {"i": i, "n": name, "h": str(i) * 64,
                                                               "t": datetime(2026, 11, 23)})
        migrate.upgrade(db.engine)
        with db.engine.connect() as c:
            keys = [k for (k,) in c.execute(text("SELECT name_key FROM teams ORDER BY id"))]
        assert keys == ["teama#3", "teama", "teama#3-2"]
    finally:
        db.dispose()


def test_another_applications_database_is_refused_not_added_to(db_url):
    from sqlalchemy import text

    from dialeval.errors import DialevalError

    eng = create_engine(db_url)
    with eng.begin() as c:
        c.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY)"))
    eng.dispose()
    import pytest

    with pytest.raises(DialevalError, match=r"holds tables \(customers\) but no dialeval schema version"):
        Database(db_url)


def test_an_empty_sqlite_file_is_not_a_database_to_a_command_that_only_reads(tmp_path):
    """A 0-byte file was quietly made a new database, even by the read-only commands (create=False)."""
    import pytest

    from dialeval.errors import DialevalError

    f = tmp_path / "empty.sqlite"
    f.write_bytes(b"")
    with pytest.raises(DialevalError, match="is an empty file"):
        Database(f"sqlite:///{f}", create=False)
    assert f.stat().st_size == 0


def test_a_command_that_only_reads_makes_no_schema_in_an_empty_database(db_url, capsys):
    """`dialeval admin list-tasks` on an empty PostgreSQL schema (or SQLite file holding no table of dialeval's)
    made dialeval's 17 tables there; it is now an error naming the database, and nothing is made."""
    from sqlalchemy import inspect

    from dialeval.cli.main import run

    if db_url.startswith("sqlite"):  # a SQLite database file with no table (a file that is not there is refused)
        import sqlite3

        con = sqlite3.connect(db_url.removeprefix("sqlite:///"))
        con.execute("PRAGMA user_version = 1")
        con.close()
    assert run(["admin", "list-tasks", "--database-url", db_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the database ") and "holds no dialeval data" in err and err.count("\n") == 1
    eng = create_engine(db_url)
    try:
        assert inspect(eng).get_table_names() == []
    finally:
        eng.dispose()
    Database(db_url)                                        # a command that adds to it makes the schema
    assert run(["admin", "list-tasks", "--database-url", db_url]) == 0
