"""The FastAPI application: the app factory, the routes the capabilities share, and each capability's router.

Shared here: team registration (``POST /api/teams`` and the home page's form), the organiser's team routes
(``/api/admin/teams``, ``/api/admin/invitations``), the home page (``/``: the tasks and the registration form),
the error answers, the upload limit and the security headers. The capabilities' routes come from their
packages: :func:`~dialeval.service.leaderboard.routes.leaderboard_router` (JSON API of tasks, submissions and
leaderboards; ``/tasks/NAME``), :func:`~dialeval.service.collection.routes.collection_router`,
:func:`~dialeval.service.annotation.routes.annotation_router`.

JSON API under ``/api`` (described at ``/docs`` and ``/openapi.json`` when ``Settings.docs`` is on).
Every response carries the security headers of :mod:`.security`; pages link with relative paths
(:mod:`.urls`); ``X-Forwarded-*`` is believed only from ``Settings.forwarded_allow_ips``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from dialeval import __version__
from dialeval.errors import DialevalError, quote
from dialeval.service import csrf, invitations, ratelimit, security, teams
from dialeval.service.annotation.routes import annotation_router
from dialeval.service.apidocs import OPENAPI_PATH, add_docs, use_markdown
from dialeval.service.bearer import AdminRoute, Token
from dialeval.service.boundary import HeadAsGet, RequestBody, detail, validation_errors
from dialeval.service.collection.routes import collection_router
from dialeval.service.config import Settings
from dialeval.service.db import Database, busy
from dialeval.service.errors import Conflict, ServiceError, status_of
from dialeval.service.leaderboard import tasks
from dialeval.service.leaderboard.routes import leaderboard_router
from dialeval.service.leaderboard.scoring_pool import Scorer, shutdown_pools
from dialeval.service.pages import FORM_NONCE_MAX, FORM_NONCE_PATTERN, form_page, new_form_nonce
from dialeval.service.uploads import BodyLimit
from dialeval.service.urls import templates

_HERE = files("dialeval.service")


class TeamIn(RequestBody):
    name: str = Field(description="Unique team name (1-100 characters; unique after NFKC and case folding; "
                                  "no invisible characters, no look-alike of a registered name).")
    affiliation: str = Field("", description="Optional affiliation (at most 200 characters).")
    invite: str = Field("", description="Invitation code (servers in 'invite' registration mode).")


class TeamOut(BaseModel):
    team: str
    token: str = Field(description="The team's secret token: shown once, never stored in clear.")
    approved: bool = Field(True, description="False: the team submits once an organiser approves it.")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The worker's shutdown (uvicorn stopping on SIGTERM or Ctrl-C) stops its scoring processes first: uvicorn
    then ends the process by the signal, before any :mod:`atexit` handler could (see
    :func:`~dialeval.service.leaderboard.scoring_pool.shutdown_pools`)."""
    try:
        yield
    finally:
        await run_in_threadpool(shutdown_pools)


def create_app(settings: Settings | None = None, database: Database | None = None) -> FastAPI:
    """The service's ASGI application on ``settings.database_url`` (migrated to the newest schema)."""
    settings = settings or Settings()
    mode = teams.check_mode(settings.registration)
    db = database or Database(settings.database_url)
    clock = settings.clock
    app = FastAPI(title="dialeval evaluation service", version=__version__,
                  description="Score runs of STC-3/DialEval-style tasks on hidden gold: teams, quotas, a public "
                              "half before close and 100% after, a leaderboard.",
                  docs_url=None, redoc_url=None, openapi_url=OPENAPI_PATH if settings.docs else None,
                  redirect_slashes=False,  # Starlette's redirect would build its Location from the Host header
                  lifespan=_lifespan)
    use_markdown(app)  # the routes' docstrings are reStructuredText; OpenAPI descriptions are Markdown
    app.state.db, app.state.settings = db, settings
    pages = templates(settings.public_url, docs=settings.docs)

    def _is_page(request: Request) -> bool:
        """A refusal on a page's form (a route outside ``/api/``) is answered with a page, not JSON."""
        return request.scope.get("type") == "http" and not request.url.path.startswith(("/api/", OPENAPI_PATH))

    def _error_page(request: Request, message: str, status: int, headers: dict | None = None) -> HTMLResponse:
        r = pages.TemplateResponse(request, "error.html", {"error": message}, status_code=status)
        r.headers.update(headers or {})
        return r

    def _too_large_page(request: Request, message: str) -> HTMLResponse | None:
        """The 413 of a body over its limit on a page's address (a run on the task page's form, a registration
        form): the error page, as every other refusal there; None (JSON) for the API and static files."""
        if _is_page(request) and not request.url.path.startswith("/static/"):
            return _error_page(request, detail(message), 413)
        return None

    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes, error_page=_too_large_page)
    app.add_middleware(HeadAsGet)
    if settings.forwarded_allow_ips:  # Uvicorn's own rule, inside the app: the rate limit sees its result
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.forwarded_allow_ips)
    security.secure(app, https=settings.public_url.startswith("https://"))
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    if settings.docs:
        add_docs(app, pages)

    @app.exception_handler(ServiceError)
    def _service_error(request: Request, e: ServiceError) -> JSONResponse | HTMLResponse:
        if _is_page(request):
            return _error_page(request, detail(e.message), e.status, e.headers)
        return JSONResponse({"detail": detail(e.message)}, status_code=e.status, headers=e.headers)

    @app.exception_handler(HTTPException)
    def _http_error(request: Request, e: HTTPException) -> JSONResponse | HTMLResponse:
        """Starlette's own refusals (no such path, a method the path does not take): a page for a page's
        address, with a link home; JSON for the API and static files, as before."""
        if _is_page(request) and not request.url.path.startswith("/static/"):
            message = {404: "there is no page at this address",
                       405: "this address is not opened directly; go back to the page that sends its form"}
            return _error_page(request, message.get(e.status_code, str(e.detail)), e.status_code, e.headers)
        return JSONResponse({"detail": e.detail}, status_code=e.status_code, headers=e.headers)

    @app.exception_handler(DialevalError)
    def _bad_input(_request: Request, e: DialevalError) -> JSONResponse:
        return JSONResponse({"detail": detail(str(e))}, status_code=422)

    @app.exception_handler(OperationalError)
    def _database_busy(request: Request, e: OperationalError) -> JSONResponse:
        if not busy(e):
            raise e  # a fault of the server: 500, logged
        return _service_error(request, Conflict("the database was busy with other requests; try again",
                                                headers={"Retry-After": "1"}))

    @app.exception_handler(RequestValidationError)
    def _bad_request(request: Request, e: RequestValidationError) -> JSONResponse | HTMLResponse:
        items = validation_errors(e)
        if _is_page(request):
            fields = ", ".join(dict.fromkeys(".".join(map(str, i["loc"][1:] or i["loc"])) for i in items[:3]))
            return _error_page(request, f"the form was not sent as this page sends it (field {fields}); send "
                               "it from the page", 422)
        return JSONResponse({"detail": items}, status_code=422)

    def client_of(request: Request) -> str:
        """The client's address: the connection's peer, or what a trusted proxy forwarded (never a header
        of an untrusted client: see ``Settings.forwarded_allow_ips``)."""
        return request.client.host if request.client else "unknown"

    def register_any(request: Request, name: object, affiliation: object, invite: str | None,
                     form_nonce: str | None = None):
        """The one registration path of the API and the page: rate limit, then the server's mode."""
        ratelimit.record_attempt(db, client_of(request), clock())
        return teams.register_team(db, name, affiliation, clock(), mode=mode, invite=invite or None,
                                   form_nonce=form_nonce)

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

    # The leaderboard's routes sit between team registration and the organiser's team routes, where they have
    # always been: /openapi.json and /docs list the operations in the order of the routes.
    scorer = Scorer(db, settings.scoring_processes)  # this worker's scoring processes
    app.state.scorer = scorer
    app.include_router(leaderboard_router(db, settings, scorer))

    admin = APIRouter(route_class=AdminRoute)  # the organiser token is checked before the body is read

    @admin.get("/api/admin/teams", tags=["admin"])
    def admin_list_teams(cred: Token) -> list[dict]:
        """Every team and whether it is approved (organiser token)."""
        return teams.list_teams(db)

    @admin.post("/api/admin/teams/approve", tags=["admin"])
    def admin_approve_team(cred: Token, name: str = Form(..., max_length=teams.MAX_NAME)) -> dict:
        """Approve a team (``approve`` registration mode): it may submit from now on (organiser token)."""
        team = teams.approve_team(db, name, clock())
        return {"team": team.name, "approved": True}

    @admin.post("/api/admin/invitations", status_code=201, tags=["admin"])
    def admin_invite_teams(cred: Token, count: int = Form(1, ge=1, le=invitations.MAX_COUNT)) -> dict:
        """Make single-use team invitation codes (``invite`` mode), shown this once (organiser token)."""
        return {"codes": invitations.create_invitations(db, "team", "", count, clock())}

    app.include_router(admin)

    # ---- pages ----------------------------------------------------------------------------------
    def page(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        return pages.TemplateResponse(request, name, context, status_code=status)

    def home(request: Request, status: int = 200, **context) -> HTMLResponse:
        """The home page: the tasks and the registration form (a new form each time)."""
        return form_page(pages, request, "index.html", status, registration=mode, form_nonce=new_form_nonce(),
                         tasks=[tasks.task_info(t) for t in tasks.list_tasks(db)], **context)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        return home(request)

    @app.post("/register", response_class=HTMLResponse, include_in_schema=False)
    def register_page(request: Request, name: str = Form(""), affiliation: str = Form(""),
                      invite: str = Form(""), csrf_token: str = Form("", alias=csrf.FIELD),
                      form_nonce: str = Form("", max_length=FORM_NONCE_MAX, pattern=FORM_NONCE_PATTERN)
                      ) -> HTMLResponse:
        """The registration form (its CSRF token checked first: another site cannot register teams from a
        visitor's browser, nor spend the visitor's address's registration quota). The same form sent again (a
        reload of the page with the token) says which team it registered, instead of "the name is taken"."""
        try:
            csrf.verify(request, csrf_token)
            earlier = teams.registered_by_form(db, form_nonce.strip())
            if earlier is not None:
                return page(request, "registered.html", 200, team=earlier.name, token=None,
                            approved=earlier.approved_at is not None)
            team, token = register_any(request, name, affiliation, invite.strip(), form_nonce.strip() or None)
        except (ServiceError, DialevalError) as e:
            status = status_of(e)
            r = home(request, status, error=detail(str(e)), form={"name": quote(name, teams.MAX_NAME)})
            r.headers.update(getattr(e, "headers", {}))  # Retry-After past the rate limit, as the API sends
            return r
        return page(request, "registered.html", 201 if token else 200, team=team.name, token=token,
                    approved=team.approved_at is not None)

    app.include_router(collection_router(db, settings))
    app.include_router(annotation_router(db, settings))
    return app
