"""Routes of chat collection: the join and chat pages, the JSON API and the human-human WebSocket.

JSON API (the participant's invitation code as ``Authorization: Bearer CODE``; no cookie):

========  ===============================================  ================================================
method    path                                             what
========  ===============================================  ================================================
GET       ``/api/collections/{name}``                      the collection (kind, engine name, turn limit)
POST      ``/api/collections/{name}/sessions``             start a chat, or resume the open one
GET       ``/api/collections/{name}/sessions/{id}``        the chat and its turns (``?after=N``: newer only)
POST      ``/api/collections/{name}/sessions/{id}/turns``  send a turn; the engine's reply comes back too
POST      ``/api/collections/{name}/sessions/{id}/retry``  ask the engine again for a missing reply (409: ended)
POST      ``/api/collections/{name}/sessions/{id}/end``    end the chat
WS        ``/api/collections/{name}/ws``                   human-human: pairing and live turns
========  ===============================================  ================================================

A turn may carry ``position`` (the place it is to take: the client's last turn + 1); one whose place is taken
already (sent again after its answer was lost, or from a page that missed turns) is refused (409, nothing
stored), so a resend never stores a turn twice. A turn is stored before the engine is asked. If the engine
fails or times out the answer is 202 with the stored turn and ``engine_error``; ``retry`` asks again. Pages:
``/collections/{name}`` (join form, with CSRF protection) and the chat page it leads to (``static/chat.js``; no
inline script, so it runs under a strict CSP).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Depends, Form, Path, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import Field, StrictInt

from dialeval.errors import describe, suggest
from dialeval.service import csrf
from dialeval.service.boundary import RequestBody, close_reason, detail
from dialeval.service.collection import chats
from dialeval.service.config import Settings
from dialeval.service.db import Database
from dialeval.service.errors import Invalid, ServiceError
from dialeval.service.pages import forget_code, form_page, remember_code, remembered_code
from dialeval.service.pages import leave as leave_page
from dialeval.service.urls import templates, under_root

bearer = HTTPBearer(auto_error=False, description="A participant's invitation code for this collection.")
Code = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
SessionId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The chat's id.")]
After = Annotated[int, Query(ge=0, le=2**31 - 1, description="Only turns after this position (0: all).")]
WS_POLL_S = 0.25
WS_AUTH_TIMEOUT_S = 10.0
WS_MAX_BYTES = 16 * 1024
"""The largest WebSocket message read (an utterance of 2,000 characters, each escaped as \\uXXXX, fits); a
larger one closes the socket (1009) unparsed. ``dialeval serve`` gives Uvicorn the same bound, so a larger
frame is refused before it is buffered."""
WS_QUEUE = 16
"""Messages read ahead of the chat's handling at most: the socket's reader then waits (no memory without bound)."""
WS_RATE = (20, 1.0)
"""At most this many messages in this many seconds per socket; more closes it (1008): a person types slower."""
WS_TYPES = ("turn", "end", "ping")
"""The message types of a chat (after ``auth``)."""
WS_AUTH_LATE = 4408
"""The close code of a socket that sent no ``auth`` message within :data:`WS_AUTH_TIMEOUT_S` (as HTTP 408)."""


class StartIn(RequestBody):
    name: str = Field("", description="The participant's nickname (<user_name>), at most 40 characters.")


class TurnIn(RequestBody):
    utterance: str = Field(description="What the participant says (1-2000 characters).")
    position: StrictInt | None = Field(None, ge=1, le=2**31 - 1, description=(
        "Optional: the place this turn is to take (the last turn the client has + 1). When the chat already "
        "has a turn there (the same turn sent again after its answer was lost, or from another window) the "
        "answer is 409 and nothing is stored; read the chat (GET ...?after=N) and send again if still wanted. "
        "Without it the turn is not checked this way."))


def _code(cred: HTTPAuthorizationCredentials | None) -> str | None:
    return cred.credentials if cred is not None else None


def collection_router(db: Database, settings: Settings) -> APIRouter:
    """The collection routes on ``db``, with the clock of ``settings``."""
    clock = settings.clock
    router = APIRouter()
    pages = templates(settings.public_url, docs=settings.docs)
    live = _LiveSockets()

    def with_reply(c, inv, sid: int, after: int, known) -> JSONResponse:
        """Ask the engine (if a reply is awaited) after the turn :func:`chats.add_turn` stored (``known``: the
        session and its turns); 201 with the turns after ``after`` (the reply among them), 202 with
        ``engine_error`` when the engine failed."""
        sess, reply, error = chats.answer(db, c, inv, sid, clock, known)
        turns = [t for t in known[1] if t.position > after] + ([reply] if reply is not None else [])
        return JSONResponse(chats.session_state(c, sess, turns, inv, clock()), status_code=202 if error else 201)

    # ---- JSON API -------------------------------------------------------------------------------
    @router.get("/api/collections/{name}", tags=["collection"])
    def info(name: str, cred: Code) -> dict:
        """The collection: kind (human-machine or human-human), engine name, roles, turn limit."""
        c, _inv = chats.participant(db, name, _code(cred))
        return chats.collection_info(c)

    @router.post("/api/collections/{name}/sessions", status_code=201, tags=["collection"])
    def start(name: str, body: StartIn, cred: Code) -> dict:
        """Start a chat (or get back the open one). Human-human: ``status`` is ``waiting`` until paired."""
        c, inv = chats.participant(db, name, _code(cred))
        sess = chats.start_session(db, c, _code(cred), body.name, clock)  # read under the lock
        chats.warm(c)
        _s, turns = chats.get_session(db, c, inv, sess.id)
        return chats.session_state(c, sess, turns, inv, clock())

    @router.get("/api/collections/{name}/sessions/{sid}", tags=["collection"])
    def get(name: str, sid: SessionId, cred: Code, after: After = 0) -> dict:
        """The chat and its turns after position ``after`` (0: all)."""
        c, inv = chats.participant(db, name, _code(cred))
        sess, turns = chats.get_session(db, c, inv, sid, clock(), after=after)
        return chats.session_state(c, sess, turns, inv, clock())

    @router.post("/api/collections/{name}/sessions/{sid}/turns", status_code=201, tags=["collection"])
    def send(name: str, sid: SessionId, body: TurnIn, cred: Code) -> JSONResponse:
        """Send a turn. Human-machine: the engine's reply is in the answer's ``turns`` (201), or, when the
        engine failed, ``engine_error`` says why (202: the turn is saved; call ``retry``). With ``position``:
        409 (nothing stored) when the chat's next turn is not that one."""
        c = chats.get_collection(db, name)
        inv, sess, turns = chats.add_turn(db, c, _code(cred), sid, body.utterance, clock, body.position)
        return with_reply(c, inv, sid, turns[-1].position - 1, (sess, turns))

    @router.post("/api/collections/{name}/sessions/{sid}/retry", status_code=201, tags=["collection"])
    def retry(name: str, sid: SessionId, cred: Code, after: After = 0) -> JSONResponse:
        """Ask the engine again for the reply the chat waits for (turns after ``after`` come back): 201 with
        the reply (or with nothing new when the reply came meanwhile), 202 with ``engine_error`` when the
        engine failed again, 409 when the chat has ended or was abandoned (it waits for no reply)."""
        c, inv = chats.participant(db, name, _code(cred))
        sess, turns, error = chats.retry(db, c, inv, sid, clock, after)
        return JSONResponse(chats.session_state(c, sess, turns, inv, clock()), status_code=202 if error else 201)

    @router.post("/api/collections/{name}/sessions/{sid}/end", tags=["collection"])
    def end(name: str, sid: SessionId, cred: Code) -> dict:
        """End the chat (a chat also ends by itself at its turn limit)."""
        c, inv = chats.participant(db, name, _code(cred))
        sess = chats.end_session(db, c, inv, sid, clock)
        return chats.session_state(c, sess, [], inv, clock())

    # ---- WebSocket (human-human) ----------------------------------------------------------------
    @router.websocket("/api/collections/{name}/ws")
    async def ws(websocket: WebSocket, name: str) -> None:
        """Human-human chat: ``{"type":"auth","code","name"}`` first (or an Authorization header), then
        ``{"type":"turn","utterance"}`` (optional ``"position"``, as over HTTP) / ``{"type":"end"}``; the server
        sends ``state`` (first, so the page knows who is who before any turn), ``turn``, ``error``."""
        await websocket.accept()
        queue: asyncio.Queue = asyncio.Queue(maxsize=WS_QUEUE)

        async def reader() -> None:
            recent: collections.deque[float] = collections.deque()
            try:
                while True:
                    message = await websocket.receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    # a binary frame is queued as bytes: answered as a message that is not JSON text
                    text = message["text"] if message.get("text") is not None else message.get("bytes") or b""
                    # the reader never writes to the socket: the handler closes it when it comes to the refusal
                    # (the only writer, so nothing is sent on a socket closed meanwhile)
                    if len(text) > WS_MAX_BYTES:
                        await queue.put(_Refusal(1009, f"a message is at most {WS_MAX_BYTES} bytes"))
                        break
                    now = time.monotonic()
                    recent.append(now)
                    while recent and recent[0] <= now - WS_RATE[1]:
                        recent.popleft()
                    if len(recent) > WS_RATE[0]:
                        await queue.put(_Refusal(1008, f"more than {WS_RATE[0]} messages in {WS_RATE[1]:g} s"))
                        break
                    await queue.put(text)
            except Exception:  # whatever ends the reader ends the chat: no ghost participant
                pass
            finally:
                await queue.put(None)  # after what came before (the handler drains the queue; or cancels this)

        task = asyncio.create_task(reader())
        c = inv = sess = key = None
        try:
            auth = websocket.headers.get("authorization", "")
            code = auth[7:].strip() if auth[:7].lower() == "bearer " else None
            nickname = ""
            if code is None:
                code, nickname = await _auth(websocket, queue)
            c, inv = await run_in_threadpool(chats.participant, db, name, code)
            if not c.human_human:
                raise Invalid(f"collection {name} chats with an engine over HTTP (POST "
                              f"/api/collections/{name}/sessions, then .../turns); the WebSocket is for "
                              "human-human collections")
            key = live.opened(c.id, inv.id)
            start = functools.partial(chats.start_session, db, c, code, nickname, clock)  # read under the lock
            sess = await run_in_threadpool(live.start, key, start)
            await _relay(websocket, queue, c, inv, sess.id)
        except ServiceError as e:
            with contextlib.suppress(Exception):
                await websocket.send_json({"type": "error", "detail": detail(e.message), "status": e.status})
                await websocket.close(code=4000 + e.status, reason=close_reason(e.message))
        except _Closed as e:
            if e.refusal is not None:  # the reader refused a message: the socket closes with its code
                await _close(websocket, e.refusal.code, e.refusal.reason)
        except WebSocketDisconnect:
            pass
        finally:
            task.cancel()
            if key is not None:  # also when the handler is cancelled: the cleanup runs shielded
                with anyio.CancelScope(shield=True), contextlib.suppress(ServiceError):
                    leave = None if sess is None else lambda: _left(c, inv, sess.id)
                    await run_in_threadpool(live.closed, key, leave)

    def _left(c, inv, sid: int) -> None:
        """The participant's last socket closed: a waiting chat is abandoned; in an active one the person is
        marked away."""
        sess, _turns = chats.get_session(db, c, inv, sid)
        if sess.status == "waiting":
            chats.end_session(db, c, inv, sid, clock)
        elif sess.status == "active":
            chats.touch(db, c, inv, sid, None)

    async def _relay(websocket: WebSocket, queue: asyncio.Queue, c, inv, sid: int) -> None:
        seen, last_state, last_touch = 0, None, clock()
        while True:
            sess, turns = await run_in_threadpool(chats.get_session, db, c, inv, sid, None, seen)
            upto = turns[-1].position if turns else seen
            now = clock()
            state = chats.session_state(c, sess, [], inv, now)
            state["next"] = chats.sessions.next_speaker(c.human_human, ["?"] * upto)  # positions are 1..upto
            state.pop("turns")
            # the first state goes before any turn: the page knows which role is the participant's ("you")
            # when it shows their earlier turns (after a reload or a reconnect); later ones follow the turns
            if last_state is None:
                await websocket.send_json({"type": "state", "session": state})
                last_state = state
            for t in turns:
                await websocket.send_json({"type": "turn", "turn": chats.turn_info(t)})
                seen = t.position
            if state != last_state:
                await websocket.send_json({"type": "state", "session": state})
                last_state = state
            if sess.status not in ("waiting", "active"):
                await websocket.close()
                return
            if now - last_touch >= chats.TOUCH_EVERY:
                await run_in_threadpool(chats.touch, db, c, inv, sid, now)
                last_touch = now
            msg = await _next(queue, WS_POLL_S, wait_ok=True)
            if msg is None:
                continue
            try:
                await _handle(msg, c, inv, sid)
            except ServiceError as e:
                await websocket.send_json({"type": "error", "detail": detail(e.message), "status": e.status})

    async def _handle(msg: dict | _NotAnObject, c, inv, sid: int) -> None:
        """Act on one chat message (:class:`Invalid` for one of no allowed type)."""
        if isinstance(msg, _NotAnObject):
            raise Invalid(f"received {msg.got}, not a text message holding a JSON object; {_ALLOWED}")
        kind = msg.get("type")
        if kind == "turn":
            await run_in_threadpool(chats.add_turn, db, c, inv, sid, msg.get("utterance"), clock,
                                    msg.get("position"))
        elif kind == "end":
            await run_in_threadpool(chats.end_session, db, c, inv, sid, clock)
        elif kind != "ping":
            raise Invalid(f"unknown message type: {_type_of(msg)}{suggest(kind, WS_TYPES)}; {_ALLOWED}")

    # ---- pages ----------------------------------------------------------------------------------
    def page(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
        return form_page(pages, request, template, status, **context)

    @router.get("/collections/{name}", response_class=HTMLResponse, include_in_schema=False)
    def join_page(request: Request, name: str) -> HTMLResponse:
        """The join form; a person whose code this browser keeps (joined, not left) goes on to their page."""
        if remembered_code(request)[0]:
            return RedirectResponse(scope(request, name) + "/join", status_code=303)
        try:
            c = chats.get_collection(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        return page(request, "collection/join.html", collection=chats.collection_info(c))

    def scope(request: Request, name: str) -> str:
        return under_root(request, f"/collections/{quote(name, safe='')}")

    @router.post("/collections/{name}/join", response_class=HTMLResponse, include_in_schema=False,
                 name="collection_join")
    def join(request: Request, name: str, code: str = Form(""), nickname: str = Form(""),
             csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        """The join form: the code and the name checked, kept for the chat page, and a redirect there (303: a
        reload or Back never sends the form again)."""
        try:
            c = chats.get_collection(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        try:
            csrf.verify(request, csrf_token)
            chats.participant(db, name, code.strip())
            nickname = chats.sessions.check_person_name(nickname, None if c.human_human else c.engine_name)
        except ServiceError as e:
            # what was typed stays in the form (a refused nickname does not make the code be typed again)
            return page(request, "collection/join.html", e.status, collection=chats.collection_info(c),
                        error=e.message, form={"nickname": nickname, "code": code.strip()[:200]})
        to = RedirectResponse(scope(request, c.name) + "/join", status_code=303)
        return remember_code(pages, request, to, scope(request, c.name), code.strip(), nickname)

    @router.get("/collections/{name}/join", response_class=HTMLResponse, include_in_schema=False)
    def chat_page(request: Request, name: str) -> HTMLResponse:
        """The chat page of the code kept by the join form (the open chat goes on); with none kept (a bookmark,
        another browser, the browser closed since), the collection's join page (the code is never in a URL)."""
        code, nickname = remembered_code(request)
        if not code:
            return RedirectResponse(scope(request, name), status_code=303)
        try:
            c = chats.get_collection(db, name)
        except ServiceError as e:
            return page(request, "error.html", e.status, error=e.message)
        info_ = chats.collection_info(c)
        try:
            chats.participant(db, name, code)
            nickname = chats.sessions.check_person_name(nickname, None if c.human_human else c.engine_name)
        except ServiceError as e:  # the invitation revoked since: the code is forgotten
            refused = page(request, "collection/join.html", e.status, collection=info_, error=e.message)
            return forget_code(pages, request, refused, scope(request, c.name))
        return page(request, "collection/chat.html", collection=info_, code=code, nickname=nickname,
                    max_chars=chats.sessions.MAX_UTTERANCE,
                    api=under_root(request, f"/api/collections/{quote(c.name, safe='')}"))

    @router.post("/collections/{name}/leave", include_in_schema=False, name="collection_leave")
    def leave(request: Request, name: str, csrf_token: str = Form("", alias=csrf.FIELD)) -> HTMLResponse:
        """The chat page's Leave button: the code forgotten by this browser, and the join page (an open chat
        stays open: the code joins it again)."""
        return leave_page(pages, request, csrf_token, scope(request, name))

    return router


@dataclass(frozen=True)
class _Refusal:
    """What the socket's reader puts last in the queue when it stops reading a message it refuses (too large, too
    many): the close code and reason the handler closes the socket with."""

    code: int
    reason: str


class _Closed(Exception):
    """The socket is gone, or (``refusal``) is to be closed for a message the reader refused."""

    def __init__(self, refusal: _Refusal | None = None) -> None:
        super().__init__(refusal)
        self.refusal = refusal


class _TimedOut(_Closed):
    pass


_ALLOWED = "allowed are text messages holding a JSON object with type " + ", ".join(WS_TYPES)


@dataclass(frozen=True)
class _NotAnObject:
    """A message that is not a JSON object sent as text; ``got`` says what it is ("a binary frame")."""

    got: str


_JSON_KINDS = {list: "a JSON array", str: "a JSON string", int: "a JSON number", float: "a JSON number",
               bool: "JSON true/false", type(None): "JSON null"}


class _LiveSockets:
    """The participants' live WebSockets in this process, per (collection id, invitation id).

    A socket that closes gives the participant's chat up (``leave``) only when it was their last one: a page
    that reconnected before its old socket was noticed dead keeps its chat. Giving up and a new socket's start
    run under the participant's lock (one of :attr:`STRIPES` shared locks, so no memory is kept per person),
    in worker threads: a new socket either counts before the last one's check, or starts after its chat was
    given up. Thread locks, not asyncio ones: they hold whichever event loop a socket runs on."""

    STRIPES = 64

    def __init__(self) -> None:
        self._guard = threading.Lock()  # the counts only, never held over I/O (taken on the event loop too)
        self._count: collections.Counter[tuple[int, int]] = collections.Counter()
        self._stripes = [threading.Lock() for _ in range(self.STRIPES)]

    def opened(self, collection_id: int, invitation_id: int) -> tuple[int, int]:
        """Count a socket of this participant live (before its start); the key for :meth:`closed`."""
        key = (collection_id, invitation_id)
        with self._guard:
            self._count[key] += 1
        return key

    def start(self, key: tuple[int, int], start: Callable):
        """``start()`` under the participant's lock (in a worker thread)."""
        with self._stripes[hash(key) % self.STRIPES]:
            return start()

    def closed(self, key: tuple[int, int], leave: Callable[[], None] | None) -> None:
        """One socket of ``key`` is gone (in a worker thread): ``leave()`` when it was the last."""
        with self._stripes[hash(key) % self.STRIPES]:
            with self._guard:
                self._count[key] -= 1
                last = self._count[key] <= 0
                if last:
                    del self._count[key]
            if last and leave is not None:
                leave()


async def _auth(websocket: WebSocket, queue: asyncio.Queue) -> tuple[object, object]:
    """The code and nickname of the first message, ``{type: auth, code, name}``; closes the socket (4401 for
    another message, :data:`WS_AUTH_LATE` when none came in time) and raises :class:`_Closed` otherwise."""
    try:
        msg = await _next(queue, WS_AUTH_TIMEOUT_S)
    except _TimedOut:
        await _close(websocket, WS_AUTH_LATE, f"no {{type: auth, code}} message within {WS_AUTH_TIMEOUT_S:g} s")
        raise
    if isinstance(msg, _NotAnObject) or msg.get("type") != "auth":
        got = msg.got if isinstance(msg, _NotAnObject) else _type_of(msg)
        await _close(websocket, 4401, f"send {{type: auth, code}} first; got {got}")
        raise _Closed()
    return msg.get("code"), msg.get("name", "")


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    """Close with ``code`` and ``reason`` (cut to fit the frame); a socket already gone is left as it is."""
    with contextlib.suppress(Exception):
        await websocket.close(code=code, reason=close_reason(reason))


def _type_of(msg: dict) -> str:
    """A message's type as a refusal names it."""
    return "no type" if msg.get("type") is None else f"type {describe(msg['type'], 40)}"


async def _next(queue: asyncio.Queue, timeout: float, wait_ok: bool = False) -> dict | _NotAnObject | None:
    """The next message from the socket's reader (None on timeout if ``wait_ok``, else :class:`_TimedOut`);
    :class:`_Closed` when the socket is gone."""
    try:
        raw = await asyncio.wait_for(queue.get(), timeout)
    except TimeoutError:
        if wait_ok:
            return None
        raise _TimedOut() from None
    if raw is None or isinstance(raw, _Refusal):
        raise _Closed(raw)
    return _parse(raw)


def _parse(raw: str | bytes) -> dict | _NotAnObject:
    """A message as a JSON object, or what it is instead."""
    if isinstance(raw, bytes):
        return _NotAnObject("a binary frame")
    try:
        msg = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return _NotAnObject("text that is not JSON")
    return msg if isinstance(msg, dict) else _NotAnObject(_JSON_KINDS.get(type(msg), "not a JSON object"))
