"""Chat engines behind one call, ``reply(dialogue) -> utterance``, chosen by the scheme of a spec.

=============  ==========================================  ===============================================
scheme         spec                                        module
=============  ==========================================  ===============================================
``openai``     ``openai:http://HOST:PORT/v1`` + a model    :mod:`.openai` (OpenAI-compatible chat completions)
``http``       ``http://HOST/PATH`` (or ``https://``)      :mod:`.http` (plain JSON: turns in, utterance out)
``builtin``    ``builtin:echo``, ``builtin:retrieval[:F]``  :mod:`.builtin` (offline, inside dialeval)
=============  ==========================================  ===============================================

``dialogue`` is a :class:`dialeval.corpus.Dialogue` (its id, and turns with sender ``user``/``system``).
An engine that fails or is too slow raises :class:`EngineError` with a message for the participant; the
participant's turn is already stored by then, and the page offers to ask again. Over HTTP the collection's
timeout is one deadline for the whole exchange and an answer's size is capped (:mod:`.http`). A reply is made
storable by :func:`dialeval.service.collection.sessions.usable_reply` (cut to the participant's limit, control
characters removed), never refused for its length or characters.

Examples
--------
>>> from dialeval.corpus import Dialogue, Turn
>>> make_engine("builtin:echo").reply(Dialogue("bot00000", [Turn("user", ["hi there"])]))
'You said: hi there'
>>> sorted(SCHEMES)
['builtin', 'http', 'https', 'openai']
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from dialeval.corpus import Dialogue
from dialeval.errors import DialevalError, describe

DEFAULT_TIMEOUT_S = 30.0


class EngineError(Exception):
    """The engine gave no usable reply (timeout, refused connection, bad answer): a message for people."""


class Engine(Protocol):
    def reply(self, dialogue: Dialogue) -> str: ...


@dataclass(frozen=True)
class Scheme:
    name: str
    module: str
    what: str


SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("openai", "dialeval.service.collection.engines.openai",
           "openai:http://HOST:PORT/v1 with --engine-model (OpenAI-compatible /chat/completions)"),
    Scheme("http", "dialeval.service.collection.engines.http", "http://HOST/PATH (plain JSON protocol)"),
    Scheme("https", "dialeval.service.collection.engines.http", "https://HOST/PATH (plain JSON protocol)"),
    Scheme("builtin", "dialeval.service.collection.engines.builtin",
           "builtin:echo or builtin:retrieval[:CORPUS_FILE] (offline)"),
)}
"""Every engine scheme, declared once: the part of the spec before the first ':'."""


def _scheme(spec: str) -> Scheme:
    if not isinstance(spec, str) or ":" not in spec:
        raise DialevalError(f"engine spec {spec!r} is not allowed; allowed are " + "; ".join(
            s.what for s in SCHEMES.values() if s.name != "https"))
    name = spec.split(":", 1)[0].lower()
    if not isinstance(name, str) or name not in SCHEMES:
        raise DialevalError(f"engine scheme {name!r} (in {spec!r}) is not allowed; allowed are " + "; ".join(
            s.what for s in SCHEMES.values() if s.name != "https"))
    return SCHEMES[name]


MAX_TIMEOUT_S = 600.0
"""The longest wait for an engine's reply a collection may set (seconds)."""


def timeout_problem(timeout_s: object) -> str | None:
    """What is wrong with an engine timeout, to follow its name in a message; None when it is allowed.

    >>> timeout_problem(30), timeout_problem(0)
    (None, '0 is not allowed; allowed are 0 < seconds <= 600')
    """
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s <= MAX_TIMEOUT_S:
        return f"{describe(timeout_s)} is not allowed; allowed are 0 < seconds <= {MAX_TIMEOUT_S:g}"
    return None


def make_engine(spec: str, model: str = "", timeout_s: float = DEFAULT_TIMEOUT_S) -> Engine:
    """The engine of ``spec`` (checked: a bad spec, model or timeout is a :class:`DialevalError`)."""
    if problem := timeout_problem(timeout_s):
        raise DialevalError(f"engine timeout {problem}")
    module = importlib.import_module(_scheme(spec).module)
    return module.make(spec, model=model, timeout_s=float(timeout_s))


def default_name(spec: str) -> str:
    """The engine name used when none is given: the builtin engine's name, else ``bot``."""
    if _scheme(spec).name == "builtin":
        return spec.split(":")[1] or "bot"
    return "bot"


def history(dialogue: Dialogue) -> list[dict]:
    """The turns as ``[{"speaker": "USER"|"SYSTEM", "utterance": ...}]`` (the plain JSON protocol's shape)."""
    return [{"speaker": t.sender.upper(), "utterance": t.text} for t in dialogue.turns]
