"""The plain JSON engine protocol: ``POST URL {"dialogue_id", "turns": [{"speaker", "utterance"}]}`` answered
by ``{"utterance": "..."}`` (COLLECT.md)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from dialeval.corpus import Dialogue
from dialeval.errors import DialevalError
from dialeval.service.collection.engines import EngineError, history

MAX_REPLY = 4000
_client: httpx.Client | None = None
_client_lock = threading.Lock()


def client() -> httpx.Client:
    """One HTTP client per process (its connections are kept open and reused by every engine call)."""
    global _client
    with _client_lock:
        if _client is None:
            _client = httpx.Client(limits=httpx.Limits(max_connections=100, max_keepalive_connections=20))
        return _client


def check_url(url: str, spec: str) -> str:
    """An http(s) URL with a host, else a :class:`DialevalError` naming the spec."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DialevalError(f"engine spec {spec!r}: {url!r} is not an http:// or https:// URL with a host")
    return url.rstrip("/")


def post_json(url: str, body: dict, timeout_s: float, what: str, headers: dict | None = None) -> object:
    """POST ``body`` and return the decoded JSON answer; every failure is one :class:`EngineError`."""
    try:
        r = client().post(url, json=body, timeout=timeout_s, headers=headers or {})
    except httpx.TimeoutException:
        raise EngineError(f"{what} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as e:
        raise EngineError(f"{what} cannot be reached ({type(e).__name__})") from None
    if r.status_code != 200:
        raise EngineError(f"{what} answered HTTP {r.status_code}: {' '.join(r.text.split())[:200]}")
    try:
        return r.json()
    except ValueError:
        raise EngineError(f"{what} answered something that is not JSON") from None


def reply_text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EngineError(f"{what} answered no utterance (expected a non-empty string)")
    return value.strip()[:MAX_REPLY]


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
