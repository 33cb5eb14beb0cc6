"""Recognise a model's own training dialogues among the dialogues it is asked to predict.

A model scored on the dialogues it was trained on looks excellent and means nothing. At :meth:`fit
<dialeval.models.base.Estimator.fit>` a model keeps one 64-bit fingerprint per training dialogue, never the
text; :meth:`~dialeval.models.base.Estimator.predict` compares the input's fingerprints with them and warns
(:class:`TrainingDataWarning`), and ``dialeval predict`` prints one ``warning:`` line and counts the matches in
its manifest (``in_training``).

The fingerprint of a dialogue is the first 8 bytes (big-endian) of

    sha256("dialeval-training-dialogue/1" NUL  s_1 US t_1 RS s_2 US t_2 RS ... s_n US t_n)

over its turns in order, where ``s_i`` is the sender and ``t_i`` the turn's text in Unicode NFC with every run of
whitespace made one space and the ends stripped (US, RS: the ASCII unit and record separators). The id is not
part of it: a training dialogue renamed is still recognised, and the same text under two ids is one dialogue.
Two different dialogues share a fingerprint with probability 2**-64 per pair (for 10**4 training and 10**7
input dialogues, about 5e-9 false matches expected in all).

>>> from dialeval.corpus import Corpus, Dialogue, Turn
>>> a = Corpus([Dialogue("a", [Turn("user", ["Hi  there"]), Turn("system", ["Hello."])])], {})
>>> b = Corpus([Dialogue("renamed", [Turn("user", [" Hi there "]), Turn("system", ["Hello."])])], {})
>>> from dialeval.models.data import TurnTable
>>> fp = lambda c: fingerprints(TurnTable.from_corpus(c, senders=None))
>>> bool(fp(a)[0] == fp(b)[0])
True
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import warnings
from dataclasses import dataclass

import numpy as np

from dialeval.errors import DialevalError, DialevalWarning

SCHEME = "sha256-64/1"
"""Name of the fingerprint definition above, stored with the fingerprints (a model with another is not checked)."""

ARRAY = "training_fingerprints"
"""Name of the sorted ``uint64`` fingerprints in a saved model's ``arrays.npz``."""

_DOMAIN = b"dialeval-training-dialogue/1\x00"
_SPACE = re.compile(r"\s+")
EXAMPLES = 3
"""How many matching ids a warning names."""


class TrainingDataWarning(DialevalWarning):
    """Some input dialogues were in the model's training data: their predictions measure memory, not skill."""


class RepeatedDialoguesWarning(DialevalWarning):
    """Some training dialogues are there more than once (the same turns, under one id or several): each copy is
    trained on, and in cross-validation copies under different ids can sit on both sides of a fold."""


def canonical_turn(sender: str, text: str) -> str:
    """``sender`` US the text in NFC with whitespace runs made one space and the ends stripped."""
    return f"{sender}\x1f{_SPACE.sub(' ', unicodedata.normalize('NFC', text)).strip()}"


def fingerprints(table) -> np.ndarray:
    """One ``uint64`` fingerprint per dialogue of a :class:`~dialeval.models.data.TurnTable`, in its order."""
    senders = table.senders or tuple("customer" if c else "helpdesk" for c in table.is_customer.tolist())
    out = np.empty(table.n_dialogues, dtype=np.uint64)
    for i in range(table.n_dialogues):
        lo, hi = int(table.start[i]), int(table.start[i + 1])
        body = "\x1e".join(canonical_turn(senders[t], table.texts[t]) for t in range(lo, hi))
        # surrogatepass: a lone surrogate (JSON's "\ud800" escape reads as one) hashes as its own bytes
        out[i] = int.from_bytes(hashlib.sha256(_DOMAIN + body.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    return out


def repeated(ids: list[str] | tuple[str, ...], prints: np.ndarray) -> list[tuple[str, ...]]:
    """The ids of each group of dialogues sharing a fingerprint (the same turns), in the order of ``ids``.

    >>> repeated(["a", "b", "c", "d"], np.array([7, 8, 7, 7], dtype=np.uint64))
    [('a', 'c', 'd')]
    """
    groups: dict[int, list[str]] = {}
    for i, fp in zip(ids, prints.tolist(), strict=True):
        groups.setdefault(fp, []).append(i)
    return [tuple(g) for g in groups.values() if len(g) > 1]


def repeated_message(groups: list[tuple[str, ...]], total: int, cv: bool = False) -> str:
    """One line for :class:`RepeatedDialoguesWarning`: how many of ``total`` dialogues repeat, a few examples."""
    copies = sum(len(g) - 1 for g in groups)
    shown = "; ".join(" = ".join(g[:3]) + (" = ..." if len(g) > 3 else "") for g in groups[:EXAMPLES])
    more = "; ..." if len(groups) > EXAMPLES else ""
    text = (f"{copies} of the {total} training dialogue(s) repeat another one's turns (ids {shown}{more}); every "
            "copy with labels is trained on, so these dialogues weigh more")
    if cv:
        text += ("; copies under different ids can be held out in one fold and trained on in another, which makes "
                 "the cross-validated scores optimistic")
    return text


def warn_repeats(ids: list[str] | tuple[str, ...], prints: np.ndarray, *, cv: bool = False,
                 stacklevel: int = 1) -> None:
    """One :class:`RepeatedDialoguesWarning` if some dialogues share a fingerprint (:func:`repeated`,
    :func:`repeated_message`); ``stacklevel`` as :func:`warnings.warn` takes it, counted from the caller."""
    groups = repeated(ids, prints)
    if groups:
        warnings.warn(repeated_message(groups, len(ids), cv=cv), RepeatedDialoguesWarning, stacklevel=stacklevel + 1)


def check_stored(values: np.ndarray, where: str) -> np.ndarray:
    """A saved model's fingerprints as a sorted unique ``uint64`` array (an error names ``where``)."""
    a = np.asarray(values)
    if a.ndim != 1 or a.dtype != np.uint64:
        raise DialevalError(f"{ARRAY} has shape {a.shape} and dtype {a.dtype}; allowed is a 1-d uint64 array",
                            file=where)
    return np.unique(a)


@dataclass(frozen=True)
class Overlap:
    """Which input dialogues were in the training data: ``ids`` in input order, out of ``total``."""

    ids: tuple[str, ...]
    total: int

    @property
    def count(self) -> int:
        return len(self.ids)

    def message(self) -> str:
        """One line: ``N of M dialogue(s) were in the model's training data (e.g. ...)``."""
        return message(self.count, self.total, self.ids)


def message(count: int, total: int, examples: tuple[str, ...] | list[str]) -> str:
    """The warning for ``count`` of ``total`` input dialogues in the training data, naming a few ``examples``."""
    shown = list(examples[:EXAMPLES])
    more = ", ..." if count > len(shown) else ""
    return (f"{count} of {total} dialogue(s) were in the model's training data (e.g. {', '.join(shown)}{more}); "
            "their predictions are not a fair measure of the model")


def overlap(known: np.ndarray | None, table) -> Overlap:
    """The dialogues of ``table`` whose fingerprint is in ``known`` (sorted; None: nothing is known)."""
    if known is None or not len(known) or not table.n_dialogues:
        return Overlap((), table.n_dialogues)
    hit = np.isin(fingerprints(table), known, assume_unique=False)
    return Overlap(tuple(table.ids[i] for i in np.flatnonzero(hit).tolist()), table.n_dialogues)
