"""``dialeval submit`` / ``leaderboard`` / ``register`` / ``new-token`` / ``me``: a command-line client of the service.

Every input is checked before any request (:func:`check_server`, :func:`check_token`, :func:`check_task`; the
choices of ``--per`` and ``--format``), and every answer before it is shown (:func:`request`'s ``expect``): an
answer that is not the service's (another server at that address, a proxy's page, a path prefix with no service
behind it) is one ``error:`` line that says so, never a traceback nor the page's HTML. The token is a secret: no
message shows it. A token's outer whitespace (a newline or a space copied with it) is dropped; any other
character outside a token's alphabet (:data:`TOKEN_ALPHABET`) is refused, naming where the token came from.
"""

from __future__ import annotations

import contextlib
import json
import re
import string
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote as url_quote
from urllib.parse import urlsplit

import typer
from pydantic import BaseModel, ConfigDict, ValidationError
from rich.table import Table

from dialeval.cli._common import err, tables
from dialeval.errors import DialevalError, describe, quote
from dialeval.service.names import SLUG_RULE, character, is_slug

SERVER_ENV, TOKEN_ENV = "DIALEVAL_SERVER", "DIALEVAL_TOKEN"
TIMEOUT_S = 120.0
"""How long a request may wait for the connection, and then for each part of the answer."""
SERVER_RULE = "http(s)://HOST[:PORT][/PATH]"
TOKEN_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
"""The characters of a token: its prefix (``dt_``, ``da_``) and ``secrets.token_urlsafe``'s base64url
(:func:`dialeval.service.tokens.new_token`)."""
TOKEN_RULE = "A-Z a-z 0-9 _ -"
MAX_TOKEN = 256
"""The longest token sent (the service's are 46 characters): a longer one is not a token (a file given by mistake)."""
MESSAGE_LIMIT = 2000
"""The service's refusal is shown up to this many characters (escaped: a server's control characters never reach
the terminal)."""
CELL_LIMIT = 1000


def _where(ctx: typer.Context, param: typer.CallbackParam, envvar: str) -> str:
    """How the user gave a parameter's value: its option (``--token``) or the environment variable."""
    source = ctx.get_parameter_source(param.name) if param.name else None
    if getattr(source, "name", "") == "ENVIRONMENT":
        return f"the environment variable {envvar}"
    return param.opts[0] if param.opts else (param.name or "")


def shown_server(server: str) -> str:
    """``server`` as a message shows it: a password in it as ``***``, control characters escaped.

    >>> shown_server("http://user:secret@host:8000/dq"), shown_server("http://u:p@ss@host/a@b")
    ('http://user:***@host:8000/dq', 'http://u:***@host/a@b')
    """
    return quote(re.sub(r"^([^/]*//[^/@:]*:)[^/]*@", r"\1***@", server), 200)


def check_server(value: str, where: str = "--server") -> str:
    """The service's URL ``value`` (outer whitespace dropped) if it is ``http(s)://HOST[:PORT][/PATH]``, else a
    :class:`DialevalError` naming ``where`` it came from, what it is and what is allowed.

    >>> check_server(" http://127.0.0.1:8000/dq/ ")
    'http://127.0.0.1:8000/dq'
    >>> check_server("127.0.0.1:8000")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dialeval.errors.DialevalError: --server '127.0.0.1:8000' is not a valid URL: it does not start with http://...
    """
    import httpx

    text = value.strip()
    if not text:
        raise DialevalError(f"{where} is empty; allowed are {SERVER_RULE}, e.g. http://127.0.0.1:8000")
    shown = f"{where} {describe(shown_server(text))}"

    def invalid(why: str) -> DialevalError:
        return DialevalError(f"{shown} is not a valid URL: {why}; allowed are {SERVER_RULE}")

    odd = next((c for c in text if c.isspace() or not c.isprintable()), None)
    if odd is not None:
        raise invalid(f"it holds {character(odd)}")
    try:
        parts = urlsplit(text)
    except ValueError as e:  # "Invalid IPv6 URL": a bracket not closed
        raise invalid(str(e)[:1].lower() + str(e)[1:]) from None
    try:
        port = parts.port
    except ValueError:
        raise invalid(f"its port {describe(parts.netloc.rpartition(':')[2])} is not a number from 1 to 65535") \
            from None
    if parts.scheme.lower() not in ("http", "https") or not text.lower().startswith(f"{parts.scheme.lower()}://"):
        raise invalid("it does not start with http:// or https://")
    if not parts.hostname:
        raise invalid("it names no host")
    if port == 0:
        raise invalid("its port 0 is not a number from 1 to 65535")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise invalid("it holds a query (?...) or a fragment (#...)")
    try:
        httpx.URL(text)
    except httpx.InvalidURL as e:
        raise invalid(quote(str(e))) from None
    return text.rstrip("/")


def check_token(value: str, where: str = "--token") -> str:
    """The token ``value`` without its outer whitespace, if every character is of :data:`TOKEN_ALPHABET`; else a
    :class:`DialevalError` naming ``where`` it came from and the first character refused (never the token).

    >>> check_token("dt_abc-_9\\n")
    'dt_abc-_9'
    >>> check_token("dt_é")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dialeval.errors.DialevalError: the token given by --token holds U+00E9 (LATIN SMALL LETTER E WITH ACUTE) at ...
    """
    token = value.strip()
    if not token:
        raise DialevalError(f"the token given by {where} is empty; give the team's token (dt_..., printed by "
                            "dialeval register)")
    if len(token) > MAX_TOKEN:
        raise DialevalError(f"the token given by {where} has {len(token)} characters; a token has at most "
                            f"{MAX_TOKEN} (the service's have 46; the token is not shown)")
    for i, c in enumerate(token, 1):
        if c not in TOKEN_ALPHABET:
            raise DialevalError(f"the token given by {where} holds {character(c)} at character {i}; allowed are "
                                f"{TOKEN_RULE} (the token is not shown)")
    return token


def check_task(value: str, where: str = "--task") -> str:
    """``value`` if it can name a task (:func:`dialeval.service.names.is_slug`: it goes into the request's path),
    else a :class:`DialevalError` naming ``where`` and what is allowed.

    >>> check_task("../me/token#")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dialeval.errors.DialevalError: --task '../me/token#' is not allowed; allowed are 1-64 characters of A-Z a-z ...
    """
    if not is_slug(value):
        raise DialevalError(f"{where} {describe(value)} is not allowed; allowed are {SLUG_RULE}")
    return value


def _server_callback(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    return value if value is None else check_server(value, _where(ctx, param, SERVER_ENV))


def _token_callback(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    return value if value is None else check_token(value, _where(ctx, param, TOKEN_ENV))


def _task_callback(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    return value if value is None else check_task(value, _where(ctx, param, ""))


ServerOption = typer.Option(..., "--server", envvar=SERVER_ENV, callback=_server_callback,
                            help="The service's URL: http:// or https://, its host, port and path prefix if it has "
                            "one, e.g. http://127.0.0.1:8000.")
TokenOption = typer.Option(..., "--token", envvar=TOKEN_ENV, callback=_token_callback,
                           help="The team's token (spaces and line breaks around it are dropped).")
TaskOption = typer.Option(..., "--task", callback=_task_callback, help="Task name.")


class OutFormat(StrEnum):
    table = "table"
    json = "json"


class View(StrEnum):
    """``leaderboard --per``: the best run of each team, or every run."""

    team = "team"
    run = "run"


# ---- the shape of the service's answers --------------------------------------------------------------------
# What each command reads of an answer, as pydantic models (strict: a "1" is not an integer, a true not a number;
# the answer's other fields are let be). An answer that departs from them is not the service's.

class _Answer(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class TokenAnswer(_Answer):
    team: str
    token: str


class Registered(TokenAnswer):
    approved: bool = True


class _Half(_Answer):
    half: str


class _ScoredOn(_Half):
    dialogues: int


class Submitted(_Answer):
    id: int
    task: str
    scored_on: _ScoredOn
    scores: dict[str, float | None]
    remaining_today: int
    remaining_total: int


class _BoardTask(_Answer):
    name: str
    subtask: str
    dialogues: int
    public_dialogues: int


class _Column(_Answer):
    name: str
    label: str
    direction: str


class _Row(_Answer):
    rank: int
    team: str
    id: int | None = None
    scores: dict[str, float]
    submissions: int
    off_leaderboard: int = 0
    last: str
    created_at: str | None = None


class Board(_Answer):
    task: _BoardTask
    final: bool
    by: str
    columns: list[_Column]
    rows: list[_Row]


class _Quota(_Answer):
    remaining_today: int
    remaining_total: int
    closed: bool


class _MySubmission(_Answer):
    id: int
    task: str
    created_at: str
    filename: str
    scored_on: _Half
    on_leaderboard: bool
    chosen: bool


class Me(_Answer):
    team: str
    approved: bool = True
    quota: dict[str, _Quota]
    submissions: list[_MySubmission]


def mismatch(value: object, model: type[BaseModel]) -> str | None:
    """Where ``value`` (parsed JSON) departs from ``model`` (one of this module's answers), in words; or None.

    >>> mismatch({"ok": 1}, TokenAnswer), mismatch([1, 2], TokenAnswer)
    ("the answer has no 'team'", 'the answer is not an object (received [1, 2])')
    >>> mismatch({"team": "a", "token": 5}, TokenAnswer)
    'token: input should be a valid string (received 5)'
    """
    try:
        model.model_validate(value)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        loc = [f"[{k}]" if isinstance(k, int) else f".{k}" for k in first["loc"]]
        if first["type"] == "missing":
            parent = "".join(loc[:-1]).lstrip(".") or "the answer"
            return f"{parent} has no {str(first['loc'][-1])!r}"
        where = "".join(loc).lstrip(".")
        if not where and first["type"] in ("dict_type", "model_type"):
            return f"the answer is not an object (received {describe(value, 40)})"
        msg = first["msg"][:1].lower() + first["msg"][1:]
        return f"{where or 'the answer'}: {msg} (received {describe(first.get('input'), 40)})"
    return None


def _board_problem(res: dict, per: str) -> str | None:
    """What of a leaderboard's answer (``per`` team or run) its table could not show (beyond :data:`BOARD`), or
    None."""
    names = [c["name"] for c in res["columns"]]  # the answer has Board's shape
    if res["by"] not in names:
        return f"its sort column {quote(res['by'])!r} is not one of its columns"
    for i, row in enumerate(res["rows"]):
        missing = next((n for n in names if n not in row["scores"]), None)
        if missing is not None:
            return f"rows[{i}].scores has no {quote(missing)!r}"
        if per == "run" and "id" not in row:
            return f"rows[{i}] has no 'id'"
    return None


def _token_problem(res: dict) -> str | None:
    """Whether a new token in an answer is one (it is printed as it is)."""
    token = res["token"]
    if not token or len(token) > MAX_TOKEN or any(c not in TOKEN_ALPHABET for c in token):
        return "its token is not a token of the service (it is not shown)"
    return None


def _not_dialeval(server: str, method: str, path: str, why: str) -> DialevalError:
    return DialevalError(f"{shown_server(server)} did not answer as a dialeval service ({method} "
                         f"{path.split('?')[0]}: {why}); check --server")


def _content_type(r) -> str:
    return (r.headers.get("content-type") or "no content type").split(";")[0].strip() or "no content type"


def _refusal(r, server: str, method: str, path: str) -> DialevalError:
    """The error for an answer of status >= 300: the service's own message (its JSON ``detail``), or what the
    answer was when it is not the service's (never its body: an HTML page is not a message)."""
    status = f"{r.status_code} {r.reason_phrase}".strip()
    try:
        body = r.json()
    except ValueError:
        body = None
    detail = body.get("detail") if isinstance(body, dict) else None
    url = shown_server(server + path.split("?")[0])
    if 300 <= r.status_code < 400:
        location = r.headers.get("location")
        where = f" to {describe(location)}" if location else ""
        return DialevalError(f"{shown_server(server)} answered {status}, a redirect{where}: give the address it "
                             "redirects to (without its /api/... part) as --server")
    if detail is None or (r.status_code == 404 and detail == "Not Found"):  # Starlette's: no route at this path
        if r.status_code in (404, 405):
            return DialevalError(f"no dialeval API at {url} ({status}, {_content_type(r)}): check --server (the "
                                 "service's URL, with its path prefix if it has one)")
        if r.status_code >= 500:
            return DialevalError(f"the server at {shown_server(server)} failed ({status}, {_content_type(r)}); try "
                                 "again later, or tell the organisers")
        return _not_dialeval(server, method, path, f"{status}, {_content_type(r)}")
    if not isinstance(detail, str):
        detail = json.dumps(detail)
    message = quote(detail, MESSAGE_LIMIT)
    retry = r.headers.get("retry-after", "").strip()
    if retry and not re.search(rf"(?<![\d.]){re.escape(retry)} s\b", message):  # said already: "try again in 60 s"
        message += f" (retry after {quote(retry, 40)} s)"
    return DialevalError(f"the service refused ({r.status_code}): {message}")


def request(method: str, server: str, path: str, *, token: str | None = None,
            expect: type[BaseModel] | None = None,
            check=None, pending: str = "", **kwargs) -> dict | list:
    """Call the service at ``server`` (checked by :func:`check_server`) on ``path`` (its parts quoted already).

    Its refusals become :class:`DialevalError` with the service's message; an answer that is not JSON of the shape
    ``expect`` (a pydantic model, :func:`mismatch`; then ``check``, a function of the answer returning a problem
    or None) is
    one saying that ``server`` did not answer as a dialeval service. ``pending``: what may have happened when the
    request was sent but no answer came (a run scored, a token replaced). A terminal shows "waiting for SERVER"
    on stderr meanwhile.
    """
    import httpx

    server = check_server(server, "the server URL")
    shown = shown_server(server)
    headers = {"Authorization": f"Bearer {check_token(token, 'the caller')}"} if token else {}

    password = urlsplit(server).password

    def secret_free(text: str) -> str:
        """An error's text without the token or the URL's password (whatever the library put in it)."""
        for secret in (token, password):
            text = text.replace(secret, "***") if secret else text
        return quote(text, 300)

    after = f"; {pending}" if pending else ""
    waiting = err.status(f"waiting for {shown}…") if err.is_terminal else contextlib.nullcontext()
    try:
        with waiting:
            r = httpx.request(method, server + path, headers=headers, timeout=TIMEOUT_S, **kwargs)
    except httpx.InvalidURL as e:
        raise DialevalError(f"--server {describe(shown)} is not a valid URL: {secret_free(str(e))}; allowed are "
                            f"{SERVER_RULE}") from None
    except httpx.ConnectTimeout:
        raise DialevalError(f"cannot reach the service at {shown}: no connection within {TIMEOUT_S:g} s") from None
    except httpx.TimeoutException:
        raise DialevalError(f"{shown} gave no answer within {TIMEOUT_S:g} s (it may be busy: try again later)"
                            f"{after}") from None
    except (httpx.ConnectError, httpx.UnsupportedProtocol) as e:
        raise DialevalError(f"cannot reach the service at {shown}: {secret_free(str(e))}") from None
    except httpx.HTTPError as e:
        raise DialevalError(f"the connection to {shown} failed: {secret_free(str(e)) or type(e).__name__}"
                            f"{after}") from None
    if r.status_code >= 300:
        raise _refusal(r, server, method, path)
    try:
        res = r.json()
    except ValueError:
        raise _not_dialeval(server, method, path, f"{r.status_code} {r.reason_phrase} with a body that is not "
                            f"JSON, {_content_type(r)}".replace("  ", " ")) from None
    problem = mismatch(res, expect) if expect is not None else None
    if problem is None and check is not None:
        problem = check(res)
    if problem:
        raise _not_dialeval(server, method, path, problem)
    return res


def _cell(value: object) -> str:
    """A value of the service's answer as a table shows it (control characters escaped)."""
    return quote(value, CELL_LIMIT)


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
        table.add_column(_cell(c["label"]), justify="right", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    # a team's row: the time of its latest run; a run's row (--per run): that run's own time
    when = "created_at" if extra else "last"
    table.add_column("time (UTC)" if extra else "last (UTC)", overflow="fold", min_width=10)
    for r in rows:
        table.add_row(str(r["rank"]), _cell(r["team"]), *(_cell(r[k]) for k in extra),
                      *(f"{r['scores'][c['name']]:.4f}" for c in columns), _runs(r),
                      _cell(str(r.get(when) or r["last"])[:16].replace("T", " ")))
    return table


def _task_path(task: str, rest: str) -> str:
    """``/api/tasks/TASK/REST``, the task's name checked (:func:`check_task`) and quoted."""
    return f"/api/tasks/{url_quote(check_task(task), safe='')}/{rest}"


def register(app: typer.Typer) -> None:
    @app.command("submit")
    def submit_cmd(file: Path = typer.Argument(..., help="Run file (JSON), or a ZIP of DBDC3 *.labels.json "
                                               "for a turn-level task."), server: str = ServerOption,
                   task: str = TaskOption, token: str = TokenOption,
                   leaderboard: bool = typer.Option(True, "--leaderboard/--no-leaderboard",
                                                    help="Show this run on the leaderboard."),
                   format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Submit a run to a task; prints its public-half scores and the quota left."""
        if file.is_dir():
            raise DialevalError("is a folder; give a run file (JSON), or a ZIP of a folder of DBDC3 *.labels.json "
                                "(zip it first)", file=str(file))
        if not file.is_file():
            raise DialevalError("not a regular file (a device, a pipe...); give a run file" if file.exists()
                                else "no such file", file=str(file))
        with file.open("rb") as fh:
            res = request("POST", server, _task_path(task, "submissions"), token=token, expect=Submitted,
                          pending="the run may have been scored and counted all the same: see dialeval me",
                          files={"file": (file.name, fh, "application/zip" if file.suffix.lower() == ".zip"
                                          else "application/json")},
                          data={"leaderboard": "true" if leaderboard else "false"})
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        table = Table(title=f"run {res['id']} on {_cell(res['task'])}: scores on the {_cell(res['scored_on']['half'])} "
                      f"half ({res['scored_on']['dialogues']} dialogues)", title_justify="left")
        table.add_column("column")
        table.add_column("mean", justify="right")
        for col, v in res["scores"].items():
            table.add_row(_cell(col), "-" if v is None else f"{v:.6f}")
        tables.print(table)
        err.print(f"remaining: {res['remaining_today']} today, {res['remaining_total']} in all", markup=False)

    @app.command("leaderboard")
    def leaderboard_cmd(server: str = ServerOption, task: str = TaskOption,
                        by: str | None = typer.Option(None, help="Sort column, e.g. quality.rsnod.S."),
                        per: View = typer.Option(View.team, "--per", help="team: the best run of each team; run: "
                                                 "every run."),
                        format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Show a task's leaderboard."""
        params = {"per": per.value, **({"by": by} if by else {})}
        res = request("GET", server, _task_path(task, "leaderboard"), params=params, expect=Board,
                      check=lambda answer: _board_problem(answer, per.value))
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        t = res["task"]
        half = (f"final scores on all {t['dialogues']} dialogues" if res["final"]
                else f"public half: {t['public_dialogues']} of {t['dialogues']} dialogues")
        column = next(c for c in res["columns"] if c["name"] == res["by"])
        title = (f"{_cell(t['name'])} ({_cell(t['subtask'])}), {half}; sorted by {_cell(column['label'])} "
                 f"({_cell(column['direction'])})")
        tables.print(_scores_table(title, res["columns"], res["rows"], ("id",) if per == View.run else ()))

    @app.command("register")
    def register_cmd(name: str = typer.Argument(..., help="Team name."), server: str = ServerOption,
                     affiliation: str = typer.Option("", help="Affiliation."),
                     invite: str = typer.Option("", help="Invitation code (servers in 'invite' registration mode).",
                                                envvar="DIALEVAL_INVITE")) -> None:
        """Register a team; prints its token (shown once: keep it)."""
        res = request("POST", server, "/api/teams", json={"name": name, "affiliation": affiliation, "invite": invite},
                      expect=Registered, check=_token_problem,
                      pending="the team may have been registered all the same: try registering again (a name "
                              "taken says so)")
        pending = "" if res.get("approved", True) else " (it can submit once the organisers approve it)"
        err.print(f"team {_cell(res['team'])!r} registered{pending}; its token (shown once):", markup=False)
        print(res["token"])

    @app.command("new-token")
    def new_token_cmd(server: str = ServerOption, token: str = TokenOption) -> None:
        """Replace your team's token (a leaked one): prints the new one, shown once; the old one stops working."""
        res = request("POST", server, "/api/me/token", token=token, expect=TokenAnswer, check=_token_problem,
                      pending="the token may have been replaced all the same: if dialeval me refuses the old "
                              "token, ask the organisers for a new one")
        err.print(f"team {_cell(res['team'])!r}: a new token (shown once; the old one no longer works):",
                  markup=False)
        print(res["token"])

    @app.command("me")
    def me_cmd(server: str = ServerOption, token: str = TokenOption,
               format: OutFormat = typer.Option(OutFormat.table, "--format")) -> None:
        """Your team's submissions and remaining quota per task."""
        res = request("GET", server, "/api/me", token=token, expect=Me)
        if format == OutFormat.json:
            print(json.dumps(res, indent=2))
            return
        table = Table(title=f"team {_cell(res['team'])}: quota", title_justify="left")
        for h in ("task", "left today", "left in all", "state"):
            table.add_column(h)
        for name, q in res["quota"].items():
            state = q.get("state")
            state = state if isinstance(state, str) and state else ("closed" if q["closed"] else "open")
            takes = state == "open" and res.get("approved", True)  # a quota counts only where runs are taken
            table.add_row(_cell(name), str(q["remaining_today"]) if takes else "-",
                          str(q["remaining_total"]) if takes else "-", _cell(state))
        tables.print(table)
        if res.get("approved", True) is False:
            err.print("this team awaits the organisers' approval: no task takes its runs until then", markup=False)
        runs = Table(title="submissions (newest first)", title_justify="left")
        for h in ("id", "task", "time (UTC)", "file", "half", "on board", "chosen"):
            runs.add_column(h)
        for s in res["submissions"]:
            runs.add_row(str(s["id"]), _cell(s["task"]), _cell(s["created_at"][:19]), _cell(s["filename"]),
                         _cell(s["scored_on"]["half"]), "yes" if s["on_leaderboard"] else "no",
                         "yes" if s["chosen"] else "")
        tables.print(runs)
