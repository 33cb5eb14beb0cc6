"""``dialeval submit`` / ``leaderboard`` / ``register`` / ``me``: a command-line client of the service."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from dialeval.cli._common import err, tables
from dialeval.errors import DialevalError

SERVER_ENV, TOKEN_ENV = "DIALEVAL_SERVER", "DIALEVAL_TOKEN"
ServerOption = typer.Option(..., "--server", envvar=SERVER_ENV, help="The service's URL, e.g. http://127.0.0.1:8000.")
TokenOption = typer.Option(..., "--token", envvar=TOKEN_ENV, help="The team's token.")
TIMEOUT_S = 120.0


class OutFormat(StrEnum):
    table = "table"
    json = "json"


def request(method: str, server: str, path: str, *, token: str | None = None, **kwargs) -> dict | list:
    """Call the service; its refusals become :class:`DialevalError` with the server's message."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = server.rstrip("/") + path
    try:
        r = httpx.request(method, url, headers=headers, timeout=TIMEOUT_S, **kwargs)
    except httpx.HTTPError as e:
        raise DialevalError(f"cannot reach the service at {server}: {e}") from None
    if r.status_code >= 400:
        try:
            detail = r.json().get("detail", r.text)
        except ValueError:
            detail = r.text.strip() or r.reason_phrase
        if not isinstance(detail, str):
            detail = json.dumps(detail)
        retry = f" (retry after {r.headers['Retry-After']} s)" if "Retry-After" in r.headers else ""
        raise DialevalError(f"the service refused ({r.status_code}): {detail}{retry}")
    return r.json()


def _runs(row: dict) -> str:
    off = row.get("off_leaderboard", 0)
    return f"{row['submissions']} ({off} off)" if off else str(row["submissions"])


def _scores_table(title: str, columns: list[dict], rows: list[dict], extra: tuple[str, ...] = ()) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("team", overflow="fold", min_width=6)
    for h in extra:
        table.add_column(h, no_wrap=True)
    for c in columns:
        table.add_column(c["label"], justify="right", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    table.add_column("last (UTC)", overflow="fold", min_width=10)
    for r in rows:
        table.add_row(str(r["rank"]), r["team"], *(str(r[k]) for k in extra),
                      *(f"{r['scores'][c['name']]:.4f}" for c in columns), _runs(r),
                      r["last"][:16].replace("T", " "))
    return table


def register(app: typer.Typer) -> None:
    @app.command("submit")
    def submit_cmd(file: Path = typer.Argument(..., help="Run file (JSON), or a ZIP of DBDC3 *.labels.json "
                                               "for a turn-level task."), server: str = ServerOption,
                   task: str = typer.Option(..., help="Task name."), token: str = TokenOption,
                   leaderboard: bool = typer.Option(True, "--leaderboard/--no-leaderboard",
                                                    help="Show this run on the leaderboard."),
                   format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Submit a run to a task; prints its public-half scores and the quota left."""
        if file.is_dir():
            raise DialevalError("is a folder; give a run file (JSON), or a ZIP of a folder of DBDC3 *.labels.json "
                                "(zip it first)", file=str(file))
        if not file.is_file():
            raise DialevalError("no such file", file=str(file))
        with file.open("rb") as fh:
            res = request("POST", server, f"/api/tasks/{task}/submissions", token=token,
                          files={"file": (file.name, fh, "application/zip" if file.suffix.lower() == ".zip"
                                          else "application/json")},
                          data={"leaderboard": "true" if leaderboard else "false"})
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        table = Table(title=f"run {res['id']} on {res['task']}: scores on the {res['scored_on']['half']} half "
                      f"({res['scored_on']['dialogues']} dialogues)", title_justify="left")
        table.add_column("column")
        table.add_column("mean", justify="right")
        for col, v in res["scores"].items():
            table.add_row(col, f"{v:.6f}")
        tables.print(table)
        err.print(f"remaining: {res['remaining_today']} today, {res['remaining_total']} in all", markup=False)

    @app.command("leaderboard")
    def leaderboard_cmd(server: str = ServerOption, task: str = typer.Option(..., help="Task name."),
                        by: str | None = typer.Option(None, help="Sort column, e.g. quality.rsnod.S."),
                        per: str = typer.Option("team", help="'team' or 'run'."),
                        format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Show a task's leaderboard."""
        params = {"per": per, **({"by": by} if by else {})}
        res = request("GET", server, f"/api/tasks/{task}/leaderboard", params=params)
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        t = res["task"]
        half = (f"final scores on all {t['dialogues']} dialogues" if res["final"]
                else f"public half: {t['public_dialogues']} of {t['dialogues']} dialogues")
        by = next(c for c in res["columns"] if c["name"] == res["by"])
        title = f"{t['name']} ({t['subtask']}), {half}; sorted by {by['label']} ({by['direction']})"
        tables.print(_scores_table(title, res["columns"], res["rows"], ("id",) if per == "run" else ()))

    @app.command("register")
    def register_cmd(name: str = typer.Argument(..., help="Team name."), server: str = ServerOption,
                     affiliation: str = typer.Option("", help="Affiliation."),
                     invite: str = typer.Option("", help="Invitation code (servers in 'invite' registration mode).",
                                                envvar="DIALEVAL_INVITE")) -> None:
        """Register a team; prints its token (shown once: keep it)."""
        res = request("POST", server, "/api/teams", json={"name": name, "affiliation": affiliation, "invite": invite})
        pending = "" if res.get("approved", True) else " (it can submit once the organisers approve it)"
        err.print(f"team {res['team']!r} registered{pending}; its token (shown once):", markup=False)
        print(res["token"])

    @app.command("new-token")
    def new_token_cmd(server: str = ServerOption, token: str = TokenOption) -> None:
        """Replace your team's token (a leaked one): prints the new one, shown once; the old one stops working."""
        res = request("POST", server, "/api/me/token", token=token)
        err.print(f"team {res['team']!r}: a new token (shown once; the old one no longer works):", markup=False)
        print(res["token"])

    @app.command("me")
    def me_cmd(server: str = ServerOption, token: str = TokenOption,
               format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Your team's submissions and remaining quota per task."""
        res = request("GET", server, "/api/me", token=token)
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        table = Table(title=f"team {res['team']}: quota", title_justify="left")
        for h in ("task", "left today", "left in all", "state"):
            table.add_column(h)
        for name, q in res["quota"].items():
            table.add_row(name, str(q["remaining_today"]), str(q["remaining_total"]),
                          q.get("state") or ("closed" if q["closed"] else "open"))
        tables.print(table)
        runs = Table(title="submissions (newest first)", title_justify="left")
        for h in ("id", "task", "time (UTC)", "file", "half", "on board", "chosen"):
            runs.add_column(h)
        for s in res["submissions"]:
            runs.add_row(str(s["id"]), s["task"], s["created_at"][:19], s["filename"], s["scored_on"]["half"],
                         "yes" if s["on_leaderboard"] else "no", "yes" if s["chosen"] else "")
        tables.print(runs)
