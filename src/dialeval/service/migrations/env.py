"""Alembic environment of the dialeval service: runs on the connection handed over by dialeval.service.migrate."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

import dialeval.service.annotation.tables  # (each capability's tables join Base.metadata)
import dialeval.service.collection.tables
import dialeval.service.leaderboard.tables  # noqa: F401
from dialeval.service.db import Base

target_metadata = Base.metadata


def run() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if connection is None:  # `alembic` command line: -x url=...
        url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
        with create_engine(url).begin() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # run by Alembic (importing this file elsewhere, e.g. for doctests, does nothing)
    if context.is_offline_mode():
        raise SystemExit("offline (--sql) migrations are not supported; run against a database")
    run()
