"""``dialeval serve``: run the evaluation service (FastAPI under Uvicorn) on a SQLite file or PostgreSQL."""

from __future__ import annotations

import math
import os

import typer

from dialeval.cli._common import err
from dialeval.errors import DialevalError
from dialeval.service.config import (
    DEFAULT_MAX_UPLOAD_BYTES,
    DOCS_ENV,
    FORWARDED_ENV,
    MAX_SCORING_PROCESSES,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_ENV,
    PUBLIC_URL_ENV,
    SCORING_ENV,
    URL_ENV,
    Settings,
    check_forwarded_allow_ips,
    check_public_url,
    database_url,
    default_scoring_processes,
    env_max_upload_bytes,
)

MIN_UPLOAD_MB = 0.001
MAX_UPLOAD_MB = MAX_UPLOAD_BYTES // 1048576
"""Bounds of ``--max-upload-mb`` (the service's own bound, :data:`~dialeval.service.config.MAX_UPLOAD_BYTES`)."""


def upload_limit(max_upload_mb: float | None) -> int | None:
    """``--max-upload-mb`` in bytes (None when not given); an error naming the option for a value out of
    [:data:`MIN_UPLOAD_MB`, :data:`MAX_UPLOAD_MB`] or not a number (``inf``, ``nan``).

    >>> upload_limit(1), upload_limit(None)
    (1048576, None)
    """
    if max_upload_mb is None:
        return None
    if not (math.isfinite(max_upload_mb) and MIN_UPLOAD_MB <= max_upload_mb <= MAX_UPLOAD_MB):
        raise DialevalError(f"--max-upload-mb {max_upload_mb:g} is not allowed; allowed are numbers of megabytes "
                            f"from {MIN_UPLOAD_MB:g} to {MAX_UPLOAD_MB}")
    return int(max_upload_mb * 1048576)


DB_HELP = (f"sqlite:///FILE, or postgresql+psycopg:// followed by USER@HOST:PORT/DB (default: from {URL_ENV} "
           "if set, else a SQLite file here).")


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        database_url_: str | None = typer.Option(None, "--database-url", help=DB_HELP),
        host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface)."),
        port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
        max_upload_mb: float | None = typer.Option(None,
                                                   help="Larger run files are refused with 413 "
                                                        f"({MIN_UPLOAD_MB:g} to {MAX_UPLOAD_MB}). Default: "
                                                        f"${MAX_UPLOAD_ENV} (bytes) if set, else "
                                                        f"{DEFAULT_MAX_UPLOAD_BYTES / 1048576:g}."),
        workers: int = typer.Option(1, min=1, help="Worker processes (quotas hold across them)."),
        registration: str = typer.Option("open", envvar="DIALEVAL_REGISTRATION",
                                         help="Who may register a team: open | invite (a code from dialeval admin "
                                              "invite-teams) | approve (dialeval admin approve-team)."),
        public_url: str = typer.Option("", envvar=PUBLIC_URL_ENV,
                                       help="The URL people reach the service at, e.g. https://eval.org "
                                            "(the only source of absolute URLs; the Host header never is). "
                                            "HTTPS also turns on HSTS."),
        forwarded_allow_ips: str = typer.Option("", envvar=FORWARDED_ENV,
                                                help="Proxies whose X-Forwarded-For/-Proto are believed "
                                                     "(comma-separated IPs or networks, or *; Uvicorn's "
                                                     "semantics). Default: none, so every client is its "
                                                     "connection's address."),
        docs: bool = typer.Option(False, "--docs", envvar=DOCS_ENV,
                                  help="Serve /openapi.json and a self-hosted /docs page (off by default)."),
        scoring_processes: int = typer.Option(default_scoring_processes(), min=0, max=MAX_SCORING_PROCESSES,
                                              envvar=SCORING_ENV,
                                              help="Processes per worker that score uploads, so scoring never "
                                                   "stalls other requests (0: in the request's thread)."),
    ) -> None:
        """Serve the leaderboard, the upload page and the JSON API (with --docs: described at /docs)."""
        import uvicorn

        from dialeval.service.collection.routes import WS_MAX_BYTES
        from dialeval.service.db import Database
        from dialeval.service.teams import check_mode

        upload_bytes = upload_limit(max_upload_mb)  # before any work
        # Checked here, once; every worker's Settings reads them back from the environment.
        os.environ["DIALEVAL_REGISTRATION"] = check_mode(registration)
        os.environ[PUBLIC_URL_ENV] = check_public_url(public_url)
        os.environ[FORWARDED_ENV] = check_forwarded_allow_ips(forwarded_allow_ips)
        os.environ[DOCS_ENV] = "1" if docs else "0"
        os.environ[SCORING_ENV] = str(scoring_processes)
        url = database_url(database_url_)
        db = Database(url)  # checks the URL and migrates the schema once, before the workers start
        db.dispose()
        os.environ[URL_ENV] = db.url
        limit = env_max_upload_bytes() if upload_bytes is None else upload_bytes
        os.environ[MAX_UPLOAD_ENV] = str(Settings(database_url=db.url, max_upload_bytes=limit).max_upload_bytes)
        shown = public_url.rstrip("/") or f"http://{host}:{port}"
        err.print(f"dialeval service on {shown}/  ({'API docs: /docs; ' if docs else ''}database: {db!r})",
                  markup=False)
        # proxy_headers=False: the app applies the same rule itself (Settings.forwarded_allow_ips), so
        # Uvicorn's default of trusting 127.0.0.1 never applies.
        uvicorn.run("dialeval.service.app:create_app", factory=True, host=host, port=port, workers=workers,
                    proxy_headers=False, server_header=False, log_level="info", ws_max_size=WS_MAX_BYTES)
