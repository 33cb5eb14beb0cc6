"""Engines that run offline inside dialeval (demos, tests, benchmarks).

- ``builtin:echo``: answers ``You said: <the last utterance>`` at once.
- ``builtin:retrieval`` or ``builtin:retrieval:CORPUS``: answers with the reply that follows the corpus turn
  closest to the participant's last utterance (cosine of TF-IDF over character 2-4-grams, so it works for
  any language). ``CORPUS`` is any file ``dialeval.read_corpus`` reads (an STC-3 or DBDC file, WOCHAT XML);
  replies are the turns of the engine's side (``system`` or ``helpdesk``) that follow another sender's turn.
  Without ``CORPUS`` a tiny sample shipped with dialeval is used, so the demo needs nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from dialeval.corpus import Dialogue
from dialeval.errors import DialevalError
from dialeval.service.collection.engines import EngineError

NAMES = ("echo", "retrieval")
RESPONDERS = ("system", "helpdesk")
SAMPLE = "retrieval-sample.xml"


def sample_path() -> Path:
    """The shipped sample corpus of ``builtin:retrieval``."""
    return Path(str(files("dialeval.service.collection") / "data" / SAMPLE))


def _last_text(dialogue: Dialogue) -> str:
    if not dialogue.turns:
        raise EngineError("there is nothing to answer yet")
    return dialogue.turns[-1].text


@dataclass(frozen=True)
class EchoEngine:
    def reply(self, dialogue: Dialogue) -> str:
        return f"You said: {_last_text(dialogue)}"


@dataclass
class RetrievalIndex:
    """Context turns and the replies that follow them, with a TF-IDF matrix of the contexts."""

    contexts: list[str]
    replies: list[str]
    vectorizer: object = field(repr=False)
    matrix: object = field(repr=False)

    def best(self, text: str, avoid: str | None = None) -> str:
        scores = (self.matrix @ self.vectorizer.transform([text]).T).toarray().ravel()
        order = scores.argsort(kind="stable")[::-1]
        for i in order[:2]:
            if self.replies[i] != avoid:
                return self.replies[i]
        return self.replies[order[0]]


@lru_cache(maxsize=8)
def load_index(path: str) -> RetrievalIndex:
    """Read ``path`` with ``read_corpus`` and index its (context, reply) pairs (cached per process)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    import dialeval

    corpus = dialeval.read_corpus(path)
    senders = {t.sender for d in corpus for t in d.turns}
    responders = set(RESPONDERS) & senders or senders
    contexts, replies = [], []
    for d in corpus:
        for prev, t in zip(d.turns, d.turns[1:], strict=False):
            if t.sender in responders and prev.sender != t.sender and prev.text.strip() and t.text.strip():
                contexts.append(prev.text)
                replies.append(t.text)
    if not contexts:
        raise DialevalError("the corpus has no turn answered by another sender's turn; builtin:retrieval needs "
                            "(context, reply) pairs", file=path)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True, sublinear_tf=True)
    return RetrievalIndex(contexts, replies, vec, vec.fit_transform(contexts))


@dataclass(frozen=True)
class RetrievalEngine:
    path: str

    def reply(self, dialogue: Dialogue) -> str:
        previous = next((t.text for t in reversed(dialogue.turns) if t.sender == "system"), None)
        return load_index(self.path).best(_last_text(dialogue), avoid=previous)


def make(spec: str, *, model: str = "", timeout_s: float):
    parts = spec.split(":", 2)
    name = parts[1] if len(parts) > 1 else ""
    if name == "echo" and len(parts) == 2:
        return EchoEngine()
    if name == "retrieval":
        path = Path(parts[2]).expanduser().resolve() if len(parts) == 3 and parts[2] else sample_path()
        if not path.exists():
            raise DialevalError(f"engine spec {spec!r}: no such corpus file", file=str(path))
        load_index(str(path))  # read and check it now, not at the first chat
        return RetrievalEngine(str(path))
    raise DialevalError(f"builtin engine {spec!r} is not allowed; allowed are builtin:echo, builtin:retrieval, "
                        "builtin:retrieval:CORPUS_FILE")
