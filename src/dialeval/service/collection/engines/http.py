"""The plain JSON engine protocol: ``POST URL {"dialogue_id", "turns": [{"speaker", "utterance"}]}`` answered
by ``{"utterance": "..."}`` (COLLECT.md).

Every engine exchange over HTTP (this protocol and :mod:`.openai`) is :func:`post_json`:

- the collection's timeout is ONE deadline for the whole exchange (connecting, sending, the headers and the
  body): an engine that drips its answer a byte at a time is cut at the deadline like one that says nothing
  (httpx's own timeouts hold per read, so a drip would never trip them);
- at most :data:`MAX_BODY_BYTES` of an answer are read: a larger one is refused, never read whole;
- a failed answer (not HTTP 200) is told to participants by its status only; its body, which may hold a
  traceback or a secret of the engine, goes to the server's log (:data:`log`) for the organisers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from dialeval.corpus import Dialogue
from dialeval.errors import DialevalError
from dialeval.service.collection.engines import EngineError, history

MAX_BODY_BYTES = 64 * 1024
"""The largest engine answer read (bytes of the body). A reply is cut to
:data:`dialeval.service.collection.sessions.MAX_UTTERANCE` (2000) characters anyway, which JSON holds in at most
24,000 bytes (a character outside the BMP written as two ``\\uXXXX`` escapes); the rest is room for the
protocol's envelope (an OpenAI-compatible answer's ids, usage and finish reason)."""
MAX_LOGGED = 500
"""Characters of a failed answer's body written to the server's log."""
log = logging.getLogger(__name__)

_runner_state: tuple[int, asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None
_runner_lock = threading.Lock()


def _runner() -> tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]:
    """The process's engine loop (asyncio in a daemon thread) and its one HTTP client, made at the first call,
    and again in a forked child (which inherits neither the thread nor usable connections).

    Every engine call runs on this loop, so its connections are kept open and reused by every call, and a call
    past its deadline is cancelled there, its connection closed."""
    global _runner_state
    with _runner_lock:
        if _runner_state is None or _runner_state[0] != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="dialeval-engine-calls", daemon=True).start()
            client = asyncio.run_coroutine_threadsafe(_new_client(), loop).result()
            _runner_state = (os.getpid(), loop, client)
        return _runner_state[1], _runner_state[2]


async def _new_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(limits=httpx.Limits(max_connections=100, max_keepalive_connections=20))


def check_url(url: str, spec: str) -> str:
    """An http(s) URL with a host, else a :class:`DialevalError` naming the spec."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DialevalError(f"engine spec {spec!r}: {url!r} is not an http:// or https:// URL with a host")
    return url.rstrip("/")


def post_json(url: str, body: dict, timeout_s: float, what: str, headers: dict | None = None) -> object:
    """POST ``body`` and return the decoded JSON answer; every failure is one :class:`EngineError`.

    The exchange ends within ``timeout_s`` seconds in all (one deadline, whatever the engine sends meanwhile),
    reads at most :data:`MAX_BODY_BYTES` of the answer, and tells only the HTTP status of a failed one (its
    body is logged, see :func:`_log_failure`)."""
    loop, client = _runner()
    call = asyncio.run_coroutine_threadsafe(_exchange(client, url, body, timeout_s, what, headers or {}), loop)
    try:
        status, raw = call.result(timeout=timeout_s)
    except (TimeoutError, httpx.TimeoutException):
        call.cancel()  # the exchange stops on the loop and its connection is closed
        raise EngineError(f"{what} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as e:
        raise EngineError(f"{what} cannot be reached ({type(e).__name__})") from None
    if status != 200:
        _log_failure(what, url, status, raw)
        raise EngineError(f"{what} answered HTTP {status} ({httpx.codes.get_reason_phrase(status) or 'an error'}); "
                          "the organisers find its details in the server's log")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise EngineError(f"{what} answered something that is not JSON") from None


async def _exchange(client: httpx.AsyncClient, url: str, body: dict, timeout_s: float, what: str,
                    headers: dict) -> tuple[int, bytes]:
    """Send the request; the answer's status and body (only its first :data:`MAX_LOGGED` bytes when it failed).

    The body is asked for uncompressed (``Accept-Encoding: identity``), so the bytes counted are the bytes
    kept."""
    async with client.stream("POST", url, json=body, timeout=timeout_s,
                             headers={"Accept-Encoding": "identity", **headers}) as r:
        if r.status_code != 200:
            return r.status_code, (await _head(r, MAX_LOGGED))[0]
        return r.status_code, await _capped_body(r, what)


async def _capped_body(r: httpx.Response, what: str) -> bytes:
    """The whole body of ``r``; one of more than :data:`MAX_BODY_BYTES` is refused (:class:`EngineError`) as
    soon as its ``Content-Length`` announces it or that many bytes have arrived."""
    declared = r.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise EngineError(_too_large(what, f"of {int(declared)} bytes (its Content-Length)"))
    body, more = await _head(r, MAX_BODY_BYTES)
    if more:
        raise EngineError(_too_large(what, f"of more than {MAX_BODY_BYTES} bytes"))
    return body


def _too_large(what: str, received: str) -> str:
    return (f"{what} answered a body {received}; at most {MAX_BODY_BYTES} bytes ({MAX_BODY_BYTES // 1024} KiB) "
            "are allowed for a reply")


async def _head(r: httpx.Response, n: int) -> tuple[bytes, bool]:
    """The first ``n`` bytes of the body of ``r``, and whether it has more (read no further than the chunk that
    passes ``n``)."""
    chunks, size = [], 0
    async for chunk in r.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > n:
            break
    return b"".join(chunks)[:n], size > n


def _log_failure(what: str, url: str, status: int, raw: bytes) -> None:
    """Log a failed answer for the organisers: the engine's address (without user, password or query), the
    status and the first :data:`MAX_LOGGED` characters of its body on one line."""
    parts = urlsplit(url)
    where = f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"
    text = " ".join(raw.decode("utf-8", "replace").split())[:MAX_LOGGED]
    log.warning("%s at %s answered HTTP %d; its body begins: %s", what, where, status, text)


def reply_text(value: object, what: str) -> str:
    """The utterance an engine answered, outer blanks removed; anything else is an :class:`EngineError`.

    It is made storable (cut to the participant's limit, control characters removed) by
    :func:`dialeval.service.collection.sessions.usable_reply`, the one rule for every engine."""
    if not isinstance(value, str) or not value.strip():
        raise EngineError(f"{what} answered no utterance (expected a non-empty string)")
    return value.strip()


@dataclass(frozen=True)
class HttpEngine:
    url: str
    timeout_s: float

    def reply(self, dialogue: Dialogue) -> str:
        what = "the chat engine"
        data = post_json(self.url, {"dialogue_id": dialogue.id, "turns": history(dialogue)}, self.timeout_s, what)
        return reply_text(data.get("utterance") if isinstance(data, dict) else None, what)


def make(spec: str, *, model: str = "", timeout_s: float) -> HttpEngine:
    return HttpEngine(check_url(spec, spec), timeout_s)
