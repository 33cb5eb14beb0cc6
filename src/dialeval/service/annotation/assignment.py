"""The policy of assignment, as pure functions (the clock and the seed are passed in).

- **Overlap k**: an item has k slots; a live assignment (active or finished) holds one. An item is offered
  only while it has a free slot, and never to an annotator who had it before (finished, active or expired).
- **Even filling**: the next item is the one with the fewest finished assignments, then the fewest live
  ones, then the lowest tie-break number (a random order drawn once from the project's stored seed).
- **Hidden speakers**: the numbers of ``Speaker 1/2`` in an item are drawn once from the same seed
  (:func:`speaker_order`), not from the order of the turns.
- **Expiry**: an active assignment whose time limit passed (``timeout`` after it was given or after its
  last saved label) goes back to the pool: its slot is freed. An annotator who comes back to it may
  take it again while a slot is free.

:mod:`.projects` applies these rules inside one locked transaction per decision, so that they hold when
many annotators ask at once, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from dialeval.errors import describe

STATES = ("active", "finished", "expired", "excluded")
LIVE = ("active", "finished")
DEFAULT_TIMEOUT = "30m"
TIMEOUT_RANGE_S = (10.0, 30 * 86400.0)
_DURATION = re.compile(r"^\s*(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m)?\s*(?:(\d+)\s*s)?\s*$")


def parse_duration(text: str | int | float) -> float:
    """Seconds of a duration such as ``30m``, ``1h30m``, ``90s``, ``2d`` (or a number of seconds).

    Raises
    ------
    ValueError
        Not a duration, or outside 10 seconds to 30 days.

    Examples
    --------
    >>> parse_duration("30m"), parse_duration("1h30m"), parse_duration(45)
    (1800.0, 5400.0, 45.0)
    """
    if isinstance(text, bool):
        raise ValueError(f"duration {describe(text)} is not allowed; use e.g. 30m, 1h, 90s")
    if isinstance(text, int | float):
        seconds = float(text)
    else:
        m = _DURATION.match(str(text)) if str(text).strip() else None
        if m is None or not any(m.groups()):
            raise ValueError(f"duration {describe(text)} is not allowed; use e.g. 30m, 1h, 1h30m, 90s, 2d")
        d, h, mi, s = (int(g or 0) for g in m.groups())
        seconds = float(((d * 24 + h) * 60 + mi) * 60 + s)
    lo, hi = TIMEOUT_RANGE_S
    if not lo <= seconds <= hi:
        raise ValueError(f"duration {describe(text)} is not allowed; allowed are 10 seconds to 30 days")
    return seconds


@dataclass(frozen=True)
class Candidate:
    """An item as the chooser sees it."""

    item_id: int
    finished: int
    live: int
    tie: int


def pick(candidates: Iterable[Candidate], k: int, had: set[int]) -> int | None:
    """The item to give next: a free slot, not had by this annotator, fewest finished, fewest live, tie.

    Examples
    --------
    >>> cs = [Candidate(1, 1, 1, 5), Candidate(2, 0, 1, 9), Candidate(3, 0, 0, 7), Candidate(4, 0, 0, 3)]
    >>> pick(cs, 3, had={4}), pick(cs, 1, had={3, 4}), pick(cs, 3, had={1, 2, 3, 4})
    (3, None, None)
    """
    best = None
    for c in candidates:
        if c.live >= k or c.item_id in had:
            continue
        key = (c.finished, c.live, c.tie, c.item_id)
        if best is None or key < best[0]:
            best = (key, c.item_id)
    return None if best is None else best[1]


def free_slot(taken: Iterable[int], k: int) -> int | None:
    """The lowest of the slots ``0..k-1`` not taken (None when all are).

    >>> free_slot([0, 2], 3), free_slot([0, 1, 2], 3)
    (1, None)
    """
    used = set(taken)
    return next((i for i in range(k) if i not in used), None)


def is_expired(expires_at: datetime, now: datetime) -> bool:
    """True once the time limit has passed."""
    return expires_at <= now


def deadline(now: datetime, timeout_s: float) -> datetime:
    """When an assignment given (or last labelled) at ``now`` expires."""
    return now + timedelta(seconds=timeout_s)


def tie_order(seed: int, n: int) -> list[int]:
    """A random permutation of ``0..n-1`` from ``seed``: the tie-break number of each item, stored once.

    >>> sorted(tie_order(7, 5)) == list(range(5)), tie_order(7, 5) == tie_order(7, 5)
    (True, True)
    """
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def speaker_order(seed: int, position: int, senders: Iterable[str]) -> list[str]:
    """The distinct ``senders`` of the item at ``position`` in the order their hidden names number them: the
    first is ``Speaker 1``. Drawn at random from the project's stored ``seed`` and the item's position, so every
    annotator sees the same numbering of an item, at every reload, while across items the numbers say nothing of
    the roles (who speaks first, e.g. the participant of a human-machine chat, is ``Speaker 2`` as often as not).

    Examples
    --------
    >>> speaker_order(7, 0, ["user", "system", "user"]) == speaker_order(7, 0, ["user", "system"])
    True
    >>> sorted(speaker_order(7, 0, ["user", "system"]))
    ['system', 'user']
    >>> {tuple(speaker_order(7, i, ["user", "system"])) for i in range(20)} == {("user", "system"),
    ...                                                                          ("system", "user")}
    True
    """
    order = sorted(set(senders))  # the draw depends on who speaks, not on who speaks first
    random.Random(f"speakers {seed} {position}").shuffle(order)
    return order


def annotator_id(number: int) -> str:
    """The id of an annotator in exports and status: ``A001``, ``A002``...

    >>> annotator_id(7)
    'A007'
    """
    return f"A{number:03d}"
