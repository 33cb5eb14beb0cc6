"""Routes of the leaderboard: the task pages with their upload form, and the JSON API.

JSON API (a team's token as ``Authorization: Bearer TOKEN``; an organiser token for ``/api/admin``):

======  ========================================================  ===============================================
method  path                                                      what
======  ========================================================  ===============================================
GET     ``/api/me``                                               the team, its runs, its quota left per task
POST    ``/api/me/token``                                         a new token for the team (the one sent stops)
GET     ``/api/tasks``                                            every task (no hidden id: sizes only)
GET     ``/api/tasks/{task}``                                     one task
POST    ``/api/tasks/{task}/submissions``                         score a run (public half before close)
POST    ``/api/tasks/{task}/submissions/{submission_id}/choose``  the team's pick for the final ranking
GET     ``/api/tasks/{task}/leaderboard``                         the leaderboard (``?by=COLUMN&per=run&page=N``)
POST    ``/api/admin/tasks``                                      organiser token: create a task from a gold file
POST    ``/api/admin/tasks/{task}/close``                         organiser token: close it, final scores
======  ========================================================  ===============================================

Pages: ``/tasks/{task}`` (the leaderboard, sortable by any column, one row per team or per run, 100 rows a
page) and its upload form, posted to ``/tasks/{task}/submit`` with the team's token. Uploads are scored in the
app's scoring processes (:class:`.scoring_pool.Scorer`): no request waits for one.
"""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response

from dialeval.errors import DialevalError
from dialeval.service import csrf, teams
from dialeval.service.bearer import AdminRoute, AuthenticatedTeam, TeamRoute, Token, token_of
from dialeval.service.boundary import detail, one_file_part
from dialeval.service.config import Settings
from dialeval.service.db import Database
from dialeval.service.errors import ServiceError, status_of
from dialeval.service.leaderboard import board, submissions, tasks
from dialeval.service.leaderboard.deadline import parse_deadline
from dialeval.service.leaderboard.quota import DAILY_LIMIT, TOTAL_LIMIT
from dialeval.service.leaderboard.runs import SUBTASKS
from dialeval.service.leaderboard.scoring_pool import Scorer
from dialeval.service.pages import FORM_NONCE_MAX, FORM_NONCE_PATTERN, form_page, new_form_nonce
from dialeval.service.uploads import clean_filename, read_upload
from dialeval.service.urls import templates


def leaderboard_router(db: Database, settings: Settings, scorer: Scorer) -> APIRouter:
    """The leaderboard routes on ``db``, with the clock and upload limit of ``settings``; uploads are scored by
    ``scorer`` (the app's scoring processes)."""
    clock = settings.clock
    router = APIRouter()
    pages = templates(settings.public_url, docs=settings.docs)

    # ---- JSON API -------------------------------------------------------------------------------
    @router.get("/api/me", tags=["teams"])
    def me(cred: Token) -> dict:
        """The token's team, its submissions and its remaining quota per task."""
        return submissions.me(db, teams.authenticate(db, token_of(cred)), clock())

    @router.post("/api/me/token", tags=["teams"])
    def new_token(cred: Token) -> dict:
        """Replace the team's token (a leaked one): the answer holds the new token, shown this once; the token
        sent stops working at once."""
        team, token = teams.new_team_token(db, teams.authenticate(db, token_of(cred)).name, token=token_of(cred))
        return {"team": team.name, "token": token}

    @router.get("/api/tasks", tags=["tasks"])
    def list_tasks() -> list[dict]:
        """Every task: what it scores, score columns, sizes of the test set and of its public half, quotas."""
        return [tasks.task_info(t) for t in tasks.list_tasks(db)]

    @router.get("/api/tasks/{task}", tags=["tasks"])
    def get_task(task: str) -> dict:
        return tasks.task_info(tasks.get_task(db, task))

    async def score_and_store(team, task: str, file: UploadFile, on_leaderboard: bool,
                              form_nonce: str | None = None) -> dict:
        """Read, score (in a scoring process: no request waits for it) and store an upload.

        At most ``scorer.slots`` uploads per worker are read and scored at once; the others wait here
        holding no thread and no parsed run. A page form sent again (``form_nonce`` known) is answered with
        the run it sent the first time, neither scored nor counted again.
        """
        if form_nonce:  # before the quota: a reload after the day's last run shows that run, not a 429
            earlier = await run_in_threadpool(
                lambda: submissions.sent_before(db, team, tasks.get_task(db, task), form_nonce, clock()))
            if earlier is not None:
                return earlier
        async with scorer.slot():
            t = await run_in_threadpool(submissions.before_scoring, db, team, task, clock)
            data = await run_in_threadpool(read_upload, file.file, settings.max_upload_bytes)
            filename = clean_filename(file.filename, "run.json")
            result = await scorer.score(t, data, filename)
        return await run_in_threadpool(lambda: submissions.store(db, team, t, data, filename, result, clock,
                                                                 on_leaderboard=on_leaderboard,
                                                                 form_nonce=form_nonce))

    uploads = APIRouter(route_class=TeamRoute)  # the team's token is checked before the body is read

    @uploads.post("/api/tasks/{task}/submissions", status_code=201, tags=["submissions"],
                  dependencies=[Depends(one_file_part)])
    async def submit(task: str, cred: Token, team: AuthenticatedTeam,
                     file: UploadFile = File(..., description="The run file (JSON)."),
                     leaderboard: bool = Form(True, description="false: keep this run off the leaderboard.")
                     ) -> dict:
        """Score a run: scores on the public half only before close; the quota left after it.

        401 bad token (whatever the body holds), 403 team awaiting approval, 404 unknown task, 409 closed,
        413 too large, 422 invalid run (the scorer's message; it does not count), 429 quota spent
        (``Retry-After`` when the daily quota renews), 503 the scoring process failed (it does not count).
        """
        return await score_and_store(team, task, file, leaderboard)

    router.include_router(uploads)

    @router.post("/api/tasks/{task}/submissions/{submission_id}/choose", tags=["submissions"])
    def choose(task: str, submission_id: int, cred: Token) -> dict:
        """Pick the run that represents the team in the final ranking (default: its latest run)."""
        return submissions.choose(db, teams.authenticate(db, token_of(cred)), task, submission_id)

    @router.get("/api/tasks/{task}/leaderboard", tags=["tasks"])
    def leaderboard(task: str, by: str | None = Query(None, description="Sort column, e.g. quality.nmd.A."),
                    per: str = Query("team", description="'team' (best run of each) or 'run'."),
                    page: str | None = Query(None, description="Only the rows of this page (from 1), with a "
                                             "'page' object: number, pages, per_page, rows. Default: every row."),
                    per_page: str | None = Query(None, description=f"Rows of a page (1 to {board.MAX_ROWS_PER_PAGE}; "
                                                 f"default {board.ROWS_PER_PAGE}).")) -> Response:
        """Leaderboard rows: public-half means before close, final means on 100% after."""
        if page is None and per_page is None:
            return Response(board.leaderboard_json(db, task, by=by, per=per), media_type="application/json")
        shown = board.board_page(board.leaderboard(db, task, by=by, per=per), page or "1", per_page)
        return Response(orjson.dumps(shown), media_type="application/json")

    admin = APIRouter(route_class=AdminRoute)  # the organiser token is checked before the body is read

    @admin.post("/api/admin/tasks", status_code=201, tags=["admin"], dependencies=[Depends(one_file_part)])
    def admin_create_task(cred: Token, name: str = Form(...),
                          subtask: str = Form(..., description=" | ".join(SUBTASKS)),
                          gold: UploadFile = File(..., description="Gold with annotations: any corpus dialeval "
                                                  "reads, in one file or a ZIP of its folder (DBDC)."),
                          public_fraction: float = Form(0.5),
                          seed: int | None = Form(None, description="Only for a reproducible split (tests); "
                                                  "default: drawn from a secret the server keeps."),
                          daily_limit: int = Form(DAILY_LIMIT), total_limit: int = Form(TOTAL_LIMIT),
                          deadline: str | None = Form(None, description="ISO date and time with a time zone after "
                                                      "which runs are refused, e.g. 2030-01-01T12:00+09:00."),
                          rank_by: str | None = Form(None, description="Column picking a team's best run (default: "
                                                     "the first column of the task's main measure).")) -> dict:
        """Create a task from a gold file (organiser token)."""
        due = parse_deadline(deadline, "deadline")
        data = read_upload(gold.file, settings.max_upload_bytes)
        t = tasks.create_task(db, name, subtask, data, gold.filename or "gold.json", clock(),
                              public_fraction=public_fraction, seed=seed, daily_limit=daily_limit,
                              total_limit=total_limit, deadline=due, rank_by=rank_by or None)
        return tasks.task_info(t)

    @admin.post("/api/admin/tasks/{task}/close", tags=["admin"])
    def admin_close_task(task: str, cred: Token) -> dict:
        """Close a task: final scores on 100% of the test set (organiser token)."""
        return tasks.task_info(tasks.close_task(db, task, clock()))

    router.include_router(admin)

    # ---- pages ----------------------------------------------------------------------------------
    def page(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        return pages.TemplateResponse(request, name, context, status_code=status)

    def task_page(request: Request, task: str, by: str | None, per: str, status: int = 200, page_number: str = "1",
                  **context):
        shown = board.board_page(board.leaderboard(db, task, by=by, per=per), page_number)
        return form_page(pages, request, "leaderboard/task.html", status, board=shown, task=shown["task"],
                         form_nonce=new_form_nonce(), **context)

    @router.get("/tasks/{task}", response_class=HTMLResponse, include_in_schema=False)
    def task_view(request: Request, task: str, by: str | None = None, per: str = "team",
                  page_number: str = Query("1", alias="page")) -> HTMLResponse:
        try:
            return task_page(request, task, by, per, page_number=page_number)
        except (ServiceError, DialevalError) as e:
            status = status_of(e)
            return page(request, "error.html", status, error=detail(str(e)))

    @router.post("/tasks/{task}/submit", response_class=HTMLResponse, include_in_schema=False,
                 dependencies=[Depends(one_file_part)])
    async def submit_page(request: Request, task: str, token: str = Form(""), file: UploadFile | None = File(None),
                          leaderboard: str | None = Form(None), csrf_token: str = Form("", alias=csrf.FIELD),
                          form_nonce: str = Form("", max_length=FORM_NONCE_MAX, pattern=FORM_NONCE_PATTERN)
                          ) -> HTMLResponse:
        """The task page's upload form (its CSRF token checked first: another site cannot make a visitor's browser
        send runs, even with a token it knows)."""
        try:
            csrf.verify(request, csrf_token)
            if file is None or not file.filename:
                raise DialevalError("no file chosen; choose a run file (JSON) to upload")
            team = await run_in_threadpool(teams.authenticate, db, token.strip())
            result = await score_and_store(team, task, file, leaderboard is not None, form_nonce.strip() or None)
        except (ServiceError, DialevalError) as e:
            status = status_of(e)
            try:
                return await run_in_threadpool(task_page, request, task, None, "team", status,
                                               upload_error=detail(str(e)))  # shown beside the form
            except ServiceError as e2:
                return page(request, "error.html", e2.status, error=detail(e2.message))
        status = 200 if result.get("repeated") else 201
        return await run_in_threadpool(task_page, request, task, None, "team", status, result=result, team=team.name)

    return router
