"""``dialeval serve``: run the evaluation service (FastAPI under Uvicorn) on a SQLite file or PostgreSQL."""

from __future__ import annotations

import os

import typer

from dialeval.cli._common import err
from dialeval.service.config import DEFAULT_MAX_UPLOAD_BYTES, MAX_UPLOAD_ENV, URL_ENV, database_url

DB_HELP = f"sqlite:///FILE or postgresql+psycopg://USER@HOST:PORT/DB (default: ${URL_ENV}, else a SQLite file here)."


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        database_url_: str | None = typer.Option(None, "--database-url", help=DB_HELP),
        host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
        port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
        max_upload_mb: float = typer.Option(DEFAULT_MAX_UPLOAD_BYTES / 1048576, min=0.001,
                                            help="Larger run files are refused with 413."),
        workers: int = typer.Option(1, min=1, help="Worker processes (quotas hold across them)."),
        registration: str = typer.Option("open", envvar="DIALEVAL_REGISTRATION",
                                         help="Who may register a team: open | invite (a code from dialeval admin "
                                              "invite-teams) | approve (dialeval admin approve-team)."),
    ) -> None:
        """Serve the leaderboard, the upload page and the JSON API (docs at /docs)."""
        import uvicorn

        from dialeval.service.db import Database
        from dialeval.service.teams import check_mode

        os.environ["DIALEVAL_REGISTRATION"] = check_mode(registration)  # read by every worker's Settings
        url = database_url(database_url_)
        db = Database(url)  # checks the URL and migrates the schema once, before the workers start
        db.dispose()
        os.environ[URL_ENV] = db.url
        os.environ[MAX_UPLOAD_ENV] = str(int(max_upload_mb * 1048576))
        err.print(f"dialeval service on http://{host}:{port}/  (API docs: /docs; database: {db!r})", markup=False)
        uvicorn.run("dialeval.service.app:create_app", factory=True, host=host, port=port, workers=workers,
                    log_level="info")
