"""Routes of annotation projects: the join, annotate and organiser status pages, and the JSON API.

JSON API (the annotator's invitation code as ``Authorization: Bearer CODE``: browsers never send that header
by themselves, so the API needs no CSRF token; no cookie authenticates anything):

========  ==================================================  ==============================================
method    path                                                what
========  ==================================================  ==============================================
GET       ``/api/annotation/{name}``                          the project: scheme, controls, keys, guidelines
POST      ``/api/annotation/{name}/next``                     the open item, or the next one (``done`` if none)
GET       ``/api/annotation/{name}/assignments/{id}``         one of your items with your labels
POST      ``/api/annotation/{name}/assignments/{id}/labels``  save one label ``{turn, scale, value}`` (null clears)
POST      ``/api/annotation/{name}/assignments/{id}/submit``  finish the item (every required label given)
GET       ``/api/admin/annotation/{name}/status``             organiser token: progress and agreement
POST      ``/api/admin/annotation/{name}/exclude``            organiser token: exclude an annotator
========  ==================================================  ==============================================

Annotators see only their own labels: every assignment is looked up with the annotator's id, and another
annotator's (or another project's) is a 404. Pages: ``/annotate/{name}`` (join form with CSRF protection),
whose POST leads, by a redirect, to the annotate page at ``/annotate/{name}/join`` (``static/annotate.js``; no
inline script or style, for the strict CSP; the code kept for that page in a cookie under the project's path,
:func:`dialeval.service.pages.remember_code`, so a reload or Back opens it again; its Leave button posts to
``/annotate/{name}/leave``) and ``/annotate/{name}/status`` (organiser token in a CSRF-protected form; its
exclude form posts to ``/annotate/{name}/exclude`` with the token again).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import Field, StrictInt, StrictStr

from dialeval.service import csrf, teams
from dialeval.service.annotation import projects
from dialeval.service.annotation.guidelines import render, split_title
from dialeval.service.annotation.status import annotation_status
from dialeval.service.bearer import AdminRoute
from dialeval.service.boundary import RequestBody
from dialeval.service.config import Settings
from dialeval.service.db import Database
from dialeval.service.errors import ServiceError
from dialeval.service.pages import forget_code, form_page, remember_code, remembered_code
from dialeval.service.pages import leave as leave_page
from dialeval.service.urls import templates, under_root

bearer = HTTPBearer(auto_error=False, description="An annotator's invitation code for this project "
                                                  "(or an organiser token for /api/admin).")
Code = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
AssignmentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The assignment's id.")]


class LabelIn(RequestBody):
    turn: StrictInt = Field(description="The turn's position (0, 1, ...), or -1 for a dialogue-level scale.")
    scale: StrictStr = Field(max_length=64, description="The scale (a control of the scheme).")
    value: StrictStr | None = Field(max_length=64, description="A level of the scale; flags: yes/no; null clears.")


class ExcludeIn(RequestBody):
    annotator: StrictStr = Field(max_length=20, description="The annotator's id, e.g. A003.")


def _code(cred: HTTPAuthorizationCredentials | None) -> str | None:
    return cred.credentials if cred is not None else None


def annotation_router(db: Database, settings: Settings) -> APIRouter:
    """The annotation routes on ``db``, with the clock of ``settings``."""
    clock = settings.clock
    router = APIRouter()
    pages = templates(settings.public_url, docs=settings.docs)

    def who(name: str, cred) -> projects.Who:
        return projects.annotator(db, name, _code(cred), clock())

    def view(w: projects.Who, aid: int) -> dict:
        return projects.view(db, w, aid)

    # ---- JSON API -------------------------------------------------------------------------------
    @router.get("/api/annotation/{name}", tags=["annotation"])
    def info(name: str, cred: Code) -> dict:
        """The project: scheme with its controls and keys, k, hidden speakers, guidelines (Markdown and HTML)."""
        w = who(name, cred)
        return {**projects.project_info(w.project), "guidelines_html": str(render(w.project.guidelines)),
                "annotator": w.label, "progress": projects.progress(db, w)}

    @router.post("/api/annotation/{name}/next", tags=["annotation"])
    def next_item(name: str, cred: Code) -> dict:
        """Your open item, or a new one (fewest finished first); ``{"done": true}`` when none is left for you."""
        w = who(name, cred)
        asg = projects.next_assignment(db, w, clock())
        if asg is None:
            return {"done": True, "assignment": None, "progress": projects.progress(db, w)}
        return {"done": False, **view(w, asg.id)}

    @router.get("/api/annotation/{name}/assignments/{aid}", tags=["annotation"])
    def get_assignment(name: str, aid: AssignmentId, cred: Code) -> dict:
        """One of your items: the dialogue, what to label, your labels (never anyone else's)."""
        return view(who(name, cred), aid)

    @router.post("/api/annotation/{name}/assignments/{aid}/labels", tags=["annotation"])
    def save_label(name: str, aid: AssignmentId, body: LabelIn, cred: Code) -> dict:
        """Save one label as given (it replaces your earlier one on that turn and scale; null clears it).

        The answer says until when the item stays yours without another label (``expires_at``)."""
        w = who(name, cred)
        expires = projects.save_label(db, w, aid, body.turn, body.scale, body.value, clock())
        return {"saved": {"turn": body.turn, "scale": body.scale, "value": body.value},
                "expires_at": expires.isoformat()}

    @router.post("/api/annotation/{name}/assignments/{aid}/submit", tags=["annotation"])
    def submit(name: str, aid: AssignmentId, cred: Code) -> dict:
        """Finish the item (409 naming what is missing if a required label is not given)."""
        w = who(name, cred)
        asg = projects.submit(db, w, aid, clock())
        return {"assignment": asg.id, "state": asg.state, "progress": projects.progress(db, w)}

    admin = APIRouter(route_class=AdminRoute)  # the organiser token is checked before the body is read

    @admin.get("/api/admin/annotation/{name}/status", tags=["admin"])
    def status(name: str, cred: Code) -> dict:
        """Progress, time per item, Krippendorff's alpha per scale so far, annotators (organiser token)."""
        return annotation_status(db, name, clock())

    @admin.post("/api/admin/annotation/{name}/exclude", tags=["admin"])
    def exclude(name: str, body: ExcludeIn, cred: Code) -> dict:
        """Exclude an annotator: code refused from now on, their items back in the pool (organiser token)."""
        return projects.exclude_annotator(db, name, body.annotator, clock())

    router.include_router(admin)

    # ---- pages ----------------------------------------------------------------------------------
    def page(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
        return form_page(pages, request, template, status, **context)

    @router.get("/annotate/{name}", response_class=HTMLResponse, include_in_schema=False)
    def join_page(request: Request, name: str) -> HTMLResponse:
        """The join form; a person whose code this browser keeps (joined, not left) goes on to their page."""
        if remembered_code(request)[0]:
            return RedirectResponse(scope(request, name) + "/join", status_code=303)
        try:
            p = projects.get_project(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        return page(request, "annotation/join.html", project=projects.project_info(p))

    def scope(request: Request, name: str) -> str:
        return under_root(request, f"/annotate/{quote(name, safe='')}")

    @router.post("/annotate/{name}/join", response_class=HTMLResponse, include_in_schema=False,
                 name="annotation_join")
    def join(request: Request, name: str, code: str = Form(""),
             csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        """The join form: the code checked (the annotator registered at its first use), kept for the annotate
        page, and a redirect there (303: a reload or Back never sends the form again)."""
        try:
            p = projects.get_project(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        try:
            csrf.verify(request, csrf_token)
            projects.annotator(db, name, code.strip(), clock())
        except ServiceError as e:
            return page(request, "annotation/join.html", e.status, project=projects.project_info(p),
                        error=e.message)
        to = RedirectResponse(scope(request, p.name) + "/join", status_code=303)
        return remember_code(pages, request, to, scope(request, p.name), code.strip())

    @router.get("/annotate/{name}/join", response_class=HTMLResponse, include_in_schema=False)
    def annotate_page(request: Request, name: str) -> HTMLResponse:
        """The annotate page of the code kept by the join form; with none kept (a bookmark, another browser, the
        browser closed since), the project's join page, where the code is entered (never in a URL)."""
        code, _ = remembered_code(request)
        if not code:
            return RedirectResponse(scope(request, name), status_code=303)
        try:
            p = projects.get_project(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        info_ = projects.project_info(p)
        try:
            w = projects.annotator(db, name, code, clock())
        except ServiceError as e:  # excluded since, or the invitation revoked: the code is forgotten
            refused = page(request, "annotation/join.html", e.status, project=info_, error=e.message)
            return forget_code(pages, request, refused, scope(request, p.name))
        title, rest = split_title(p.guidelines)  # a "# Title" first line is the summary, not shown twice
        return page(request, "annotation/annotate.html", project=info_, code=code, annotator=w.label,
                    guidelines=render(rest), guidelines_title=title,
                    api=under_root(request, f"/api/annotation/{quote(p.name, safe='')}"))

    @router.post("/annotate/{name}/leave", include_in_schema=False, name="annotation_leave")
    def leave(request: Request, name: str, csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        """The annotate page's Leave button: the code forgotten by this browser, and the join page."""
        return leave_page(pages, request, csrf_token, scope(request, name))

    @router.get("/annotate/{name}/status", response_class=HTMLResponse, include_in_schema=False)
    def status_form(request: Request, name: str) -> HTMLResponse:
        """The organiser's token form of a project's status (a 404 page for a project that does not exist, as
        the join page)."""
        try:
            p = projects.get_project(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        return page(request, "annotation/status.html", name=p.name, st=None)

    @router.post("/annotate/{name}/status", response_class=HTMLResponse, include_in_schema=False,
                 name="annotation_status")
    def status_page(request: Request, name: str, token: str = Form(""),
                    csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        try:
            csrf.verify(request, csrf_token)
            teams.authenticate_admin(db, token.strip())
            st = annotation_status(db, name, clock())
        except ServiceError as e:
            return page(request, "annotation/status.html", e.status, name=name, st=None, error=e.message)
        return page(request, "annotation/status.html", name=name, st=st)

    @router.post("/annotate/{name}/exclude", response_class=HTMLResponse, include_in_schema=False,
                 name="annotation_exclude")
    def exclude_page(request: Request, name: str, token: str = Form(""), annotator: str = Form(""),
                     csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        """The status page's exclude form: the organiser token again (the page never holds it)."""
        try:
            csrf.verify(request, csrf_token)
            teams.authenticate_admin(db, token.strip())
            done = projects.exclude_annotator(db, name, annotator[:20], clock())
            st = annotation_status(db, name, clock())
        except ServiceError as e:
            return page(request, "annotation/status.html", e.status, name=name, st=None, error=e.message)
        return page(request, "annotation/status.html", name=name, st=st,
                    notice=f"{done['annotator']} excluded: {done['assignments_returned']} assignment(s) back in "
                           "the pool")

    return router
