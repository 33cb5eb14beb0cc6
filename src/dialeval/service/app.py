"""The FastAPI application: routes only (the work is done in the service's modules and the library).

JSON API under ``/api`` (described at ``/docs`` and ``/openapi.json`` when ``Settings.docs`` is on) and
server-rendered pages (``/``, ``/tasks/NAME``) with a form to register a team and one to upload a run.
Every response carries the security headers of :mod:`.security`; pages link with relative paths
(:mod:`.urls`); ``X-Forwarded-*`` is believed only from ``Settings.forwarded_allow_ips``.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated

from fastapi import Depends, FastAPI, File, Form, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from dialeval import __version__
from dialeval.errors import DialevalError, quote
from dialeval.service import invitations, ratelimit, security, submissions, tasks, teams
from dialeval.service import leaderboard as boards
from dialeval.service.annotation.routes import annotation_router
from dialeval.service.apidocs import OPENAPI_PATH, add_docs
from dialeval.service.boundary import detail, one_file_part, validation_errors
from dialeval.service.collection.routes import collection_router
from dialeval.service.config import Settings
from dialeval.service.db import Database
from dialeval.service.errors import ServiceError
from dialeval.service.runs import SUBTASKS
from dialeval.service.scoring_pool import Scorer
from dialeval.service.uploads import BodyLimit, clean_filename, read_upload
from dialeval.service.urls import templates

_HERE = files("dialeval.service")
bearer = HTTPBearer(auto_error=False, description="A team's token (or an organiser token for /api/admin).")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


class TeamIn(BaseModel):
    name: str = Field(description="Unique team name (1-100 characters; unique after NFKC and case folding; "
                                  "no invisible characters, no look-alike of a registered name).")
    affiliation: str = Field("", description="Optional affiliation (at most 200 characters).")
    invite: str = Field("", description="Invitation code (servers in 'invite' registration mode).")


class TeamOut(BaseModel):
    team: str
    token: str = Field(description="The team's secret token: shown once, never stored in clear.")
    approved: bool = Field(True, description="False: the team submits once an organiser approves it.")


def _token(cred: HTTPAuthorizationCredentials | None) -> str | None:
    return cred.credentials if cred is not None else None


def create_app(settings: Settings | None = None, database: Database | None = None) -> FastAPI:
    """The service's ASGI application on ``settings.database_url`` (migrated to the newest schema)."""
    settings = settings or Settings()
    mode = teams.check_mode(settings.registration)
    db = database or Database(settings.database_url)
    clock = settings.clock
    app = FastAPI(title="dialeval evaluation service", version=__version__,
                  description="Score runs of STC-3/DialEval-style tasks on hidden gold: teams, quotas, a public "
                              "half before close and 100% after, a leaderboard.",
                  docs_url=None, redoc_url=None, openapi_url=OPENAPI_PATH if settings.docs else None)
    app.state.db, app.state.settings = db, settings
    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes)
    if settings.forwarded_allow_ips:  # Uvicorn's own rule, inside the app: the rate limit sees its result
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.forwarded_allow_ips)
    security.secure(app, https=settings.public_url.startswith("https://"))
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    pages = templates(settings.public_url, docs=settings.docs)
    if settings.docs:
        add_docs(app, pages)

    @app.exception_handler(ServiceError)
    def _service_error(_request: Request, e: ServiceError) -> JSONResponse:
        return JSONResponse({"detail": detail(e.message)}, status_code=e.status, headers=e.headers)

    @app.exception_handler(DialevalError)
    def _bad_input(_request: Request, e: DialevalError) -> JSONResponse:
        return JSONResponse({"detail": detail(str(e))}, status_code=422)

    @app.exception_handler(RequestValidationError)
    def _bad_request(_request: Request, e: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_errors(e)}, status_code=422)

    def client_of(request: Request) -> str:
        """The client's address: the connection's peer, or what a trusted proxy forwarded (never a header
        of an untrusted client: see ``Settings.forwarded_allow_ips``)."""
        return request.client.host if request.client else "unknown"

    def register_any(request: Request, name: object, affiliation: object, invite: str | None):
        """The one registration path of the API and the page: rate limit, then the server's mode."""
        ratelimit.record_attempt(db, client_of(request), clock())
        return teams.register_team(db, name, affiliation, clock(), mode=mode, invite=invite or None)

    # ---- JSON API -------------------------------------------------------------------------------
    @app.post("/api/teams", status_code=201, response_model=TeamOut, tags=["teams"])
    def register(body: TeamIn, request: Request) -> TeamOut:
        """Register a team; the answer holds its token, shown this once.

        401 without a valid invitation code (``invite`` mode), 409 if the name is taken or looks like a
        registered one, 422 for a refused name, 429 past the rate limit per address (``Retry-After``).
        Under the ``approve`` mode the team submits once an organiser approves it (``approved: false``).
        """
        team, token = register_any(request, body.name, body.affiliation, body.invite)
        return TeamOut(team=team.name, token=token, approved=team.approved_at is not None)

    @app.get("/api/me", tags=["teams"])
    def me(cred: Token) -> dict:
        """The token's team, its submissions and its remaining quota per task."""
        return submissions.me(db, teams.authenticate(db, _token(cred)), clock())

    @app.get("/api/tasks", tags=["tasks"])
    def list_tasks() -> list[dict]:
        """Every task: what it scores, score columns, sizes of the test set and of its public half, quotas."""
        return [tasks.task_info(t) for t in tasks.list_tasks(db)]

    @app.get("/api/tasks/{task}", tags=["tasks"])
    def get_task(task: str) -> dict:
        return tasks.task_info(tasks.get_task(db, task))

    scorer = Scorer(db, settings.scoring_processes)
    app.state.scorer = scorer

    async def score_and_store(team, task: str, file: UploadFile, on_leaderboard: bool) -> dict:
        """Read, score (in a scoring process: no request waits for it) and store an upload.

        At most ``scorer.slots`` uploads per worker are read and scored at once; the others wait here
        holding no thread and no parsed run.
        """
        async with scorer.slot():
            t = await run_in_threadpool(submissions.before_scoring, db, team, task, clock)
            data = await run_in_threadpool(read_upload, file.file, settings.max_upload_bytes)
            filename = clean_filename(file.filename, "run.json")
            result = await scorer.score(t, data, filename)
        return await run_in_threadpool(lambda: submissions.store(db, team, t, data, filename, result, clock,
                                                                 on_leaderboard=on_leaderboard))

    @app.post("/api/tasks/{task}/submissions", status_code=201, tags=["submissions"],
              dependencies=[Depends(one_file_part)])
    async def submit(task: str, cred: Token, file: UploadFile = File(..., description="The run file (JSON)."),
                     leaderboard: bool = Form(True, description="false: keep this run off the leaderboard.")
                     ) -> dict:
        """Score a run: scores on the public half only before close; the quota left after it.

        401 bad token, 403 team awaiting approval, 404 unknown task, 409 closed, 413 too large, 422 invalid
        run (the scorer's message; it does not count), 429 quota spent (``Retry-After`` when the daily quota
        renews), 503 the scoring process failed (it does not count).
        """
        team = await run_in_threadpool(teams.authenticate, db, _token(cred))
        return await score_and_store(team, task, file, leaderboard)

    @app.post("/api/tasks/{task}/submissions/{submission_id}/choose", tags=["submissions"])
    def choose(task: str, submission_id: int, cred: Token) -> dict:
        """Pick the run that represents the team in the final ranking (default: its latest run)."""
        return submissions.choose(db, teams.authenticate(db, _token(cred)), task, submission_id)

    @app.get("/api/tasks/{task}/leaderboard", tags=["tasks"])
    def leaderboard(task: str, by: str | None = Query(None, description="Sort column, e.g. quality.nmd.A."),
                    per: str = Query("team", description="'team' (best run of each) or 'run'.")) -> Response:
        """Leaderboard rows: public-half means before close, final means on 100% after."""
        return Response(boards.leaderboard_json(db, task, by=by, per=per), media_type="application/json")

    @app.post("/api/admin/tasks", status_code=201, tags=["admin"], dependencies=[Depends(one_file_part)])
    def admin_create_task(cred: Token, name: str = Form(...),
                          subtask: str = Form(..., description=" | ".join(SUBTASKS)),
                          gold: UploadFile = File(..., description="Gold with annotations: any corpus dialeval "
                                                  "reads, in one file or a ZIP of its folder (DBDC)."),
                          public_fraction: float = Form(0.5),
                          seed: int | None = Form(None, description="Only for a reproducible split (tests); "
                                                  "default: drawn from a secret the server keeps."),
                          daily_limit: int = Form(5), total_limit: int = Form(50)) -> dict:
        """Create a task from a gold file (organiser token)."""
        teams.authenticate_admin(db, _token(cred))
        data = read_upload(gold.file, settings.max_upload_bytes)
        t = tasks.create_task(db, name, subtask, data, gold.filename or "gold.json", clock(),
                              public_fraction=public_fraction, seed=seed, daily_limit=daily_limit,
                              total_limit=total_limit)
        return tasks.task_info(t)

    @app.post("/api/admin/tasks/{task}/close", tags=["admin"])
    def admin_close_task(task: str, cred: Token) -> dict:
        """Close a task: final scores on 100% of the test set (organiser token)."""
        teams.authenticate_admin(db, _token(cred))
        return tasks.task_info(tasks.close_task(db, task, clock()))

    @app.get("/api/admin/teams", tags=["admin"])
    def admin_list_teams(cred: Token) -> list[dict]:
        """Every team and whether it is approved (organiser token)."""
        teams.authenticate_admin(db, _token(cred))
        return teams.list_teams(db)

    @app.post("/api/admin/teams/approve", tags=["admin"])
    def admin_approve_team(cred: Token, name: str = Form(..., max_length=teams.MAX_NAME)) -> dict:
        """Approve a team (``approve`` registration mode): it may submit from now on (organiser token)."""
        teams.authenticate_admin(db, _token(cred))
        team = teams.approve_team(db, name, clock())
        return {"team": team.name, "approved": True}

    @app.post("/api/admin/invitations", status_code=201, tags=["admin"])
    def admin_invite_teams(cred: Token, count: int = Form(1, ge=1, le=invitations.MAX_COUNT)) -> dict:
        """Make single-use team invitation codes (``invite`` mode), shown this once (organiser token)."""
        teams.authenticate_admin(db, _token(cred))
        return {"codes": invitations.create_invitations(db, "team", "", count, clock())}

    # ---- pages ----------------------------------------------------------------------------------
    def page(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        return pages.TemplateResponse(request, name, context, status_code=status)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        return page(request, "index.html", registration=mode,
                    tasks=[tasks.task_info(t) for t in tasks.list_tasks(db)])

    @app.post("/register", response_class=HTMLResponse, include_in_schema=False)
    def register_page(request: Request, name: str = Form(""), affiliation: str = Form(""),
                      invite: str = Form("")) -> HTMLResponse:
        try:
            team, token = register_any(request, name, affiliation, invite.strip())
        except (ServiceError, DialevalError) as e:
            status = e.status if isinstance(e, ServiceError) else 422
            return page(request, "index.html", status, error=detail(str(e)), registration=mode,
                        form={"name": quote(name, teams.MAX_NAME)},
                        tasks=[tasks.task_info(t) for t in tasks.list_tasks(db)])
        return page(request, "registered.html", 201, team=team.name, token=token,
                    approved=team.approved_at is not None)

    def task_page(request: Request, task: str, by: str | None, per: str, status: int = 200, **context):
        board = boards.leaderboard(db, task, by=by, per=per)
        return page(request, "task.html", status, board=board, task=board["task"], **context)

    @app.get("/tasks/{task}", response_class=HTMLResponse, include_in_schema=False)
    def task_view(request: Request, task: str, by: str | None = None, per: str = "team") -> HTMLResponse:
        try:
            return task_page(request, task, by, per)
        except (ServiceError, DialevalError) as e:
            status = e.status if isinstance(e, ServiceError) else 422
            return page(request, "error.html", status, error=detail(str(e)))

    @app.post("/tasks/{task}/submit", response_class=HTMLResponse, include_in_schema=False,
              dependencies=[Depends(one_file_part)])
    async def submit_page(request: Request, task: str, token: str = Form(""), file: UploadFile | None = File(None),
                          leaderboard: str | None = Form(None)) -> HTMLResponse:
        try:
            if file is None or not file.filename:
                raise DialevalError("no file chosen; choose a run file (JSON) to upload")
            team = await run_in_threadpool(teams.authenticate, db, token.strip())
            result = await score_and_store(team, task, file, leaderboard is not None)
        except (ServiceError, DialevalError) as e:
            status = e.status if isinstance(e, ServiceError) else 422
            try:
                return await run_in_threadpool(task_page, request, task, None, "team", status,
                                               error=detail(str(e)))
            except ServiceError as e2:
                return page(request, "error.html", e2.status, error=detail(e2.message))
        return await run_in_threadpool(task_page, request, task, None, "team", 201, result=result, team=team.name)

    app.include_router(collection_router(db, settings))
    app.include_router(annotation_router(db, settings))
    return app
