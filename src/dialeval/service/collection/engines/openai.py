"""OpenAI-compatible chat completions (llama.cpp server, vLLM, Ollama, text-generation-inference, hosted APIs).

``openai:http://HOST:PORT/v1`` with a model name: ``POST {base}/chat/completions`` with
``{"model": M, "messages": [{"role": "user"|"assistant", "content": ...}], "stream": false}``; the reply is
``choices[0].message.content``. The key, if the engine needs one, is read from ``$DIALEVAL_ENGINE_API_KEY``
at each call (never stored in the database).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dialeval.corpus import Dialogue
from dialeval.errors import DialevalError
from dialeval.service.collection.engines import EngineError
from dialeval.service.collection.engines.http import check_url, post_json, reply_text

API_KEY_ENV = "DIALEVAL_ENGINE_API_KEY"
_ROLE = {"user": "user", "system": "assistant"}


def messages(dialogue: Dialogue) -> list[dict]:
    """The dialogue as chat-completion messages (the participant is ``user``, the engine ``assistant``)."""
    return [{"role": _ROLE.get(t.sender, "user"), "content": t.text} for t in dialogue.turns]


@dataclass(frozen=True)
class OpenAIEngine:
    base: str
    model: str
    timeout_s: float

    def reply(self, dialogue: Dialogue) -> str:
        what = f"the chat engine (model {self.model!r})"
        key = os.environ.get(API_KEY_ENV)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        data = post_json(self.base + "/chat/completions",
                         {"model": self.model, "messages": messages(dialogue), "stream": False},
                         self.timeout_s, what, headers)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise EngineError(f"{what} answered JSON without choices[0].message.content") from None
        return reply_text(content, what)


def make(spec: str, *, model: str = "", timeout_s: float) -> OpenAIEngine:
    if not model or not isinstance(model, str) or len(model) > 200:
        raise DialevalError(f"engine spec {spec!r} needs a model name (--engine-model), e.g. llama3")
    return OpenAIEngine(check_url(spec.split(":", 1)[1], spec), model, timeout_s)
