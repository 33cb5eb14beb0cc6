"""Hand-made turn features shared by the model kinds: sender, position and length.

Every feature is computed from the :class:`~dialeval.models.data.TurnTable` alone, so training and
prediction see the same columns in the same order (:data:`POSITION_FEATURES` names them).
"""

from __future__ import annotations

import numpy as np

from dialeval.models.data import TurnTable

POSITION_FEATURES = ("customer", "first", "last", "second", "second_last", "relative_position",
                     "log_turns", "log_chars", "empty", "question", "log_position", "turns_left")


def position_features(table: TurnTable) -> np.ndarray:
    """``len(table.texts) × len(POSITION_FEATURES)`` float32: sender, position flags, length and shape.

    ``relative_position`` is ``position / (turns - 1)`` (0 for a one-turn dialogue); lengths are
    ``log1p`` of characters and turns; ``question`` is 1 when the text holds a question mark.
    """
    pos = table.position.astype(np.float64)
    n = table.n_turns[table.dialogue].astype(np.float64)
    chars = np.fromiter(map(len, table.texts), dtype=np.float64, count=len(table.texts))
    question = np.fromiter((("?" in t) or ("？" in t) for t in table.texts), dtype=np.float64,
                           count=len(table.texts))
    cols = [table.is_customer.astype(np.float64), pos == 0, pos == n - 1, pos == 1, pos == n - 2,
            np.where(n > 1, pos / np.maximum(n - 1, 1), 0.0), np.log1p(n), np.log1p(chars), chars == 0,
            question, np.log1p(pos), np.log1p(n - 1 - pos)]
    return np.stack([np.asarray(c, dtype=np.float64) for c in cols], axis=1).astype(np.float32)


def sender_onehot(table: TurnTable, senders: tuple[str, ...]) -> np.ndarray:
    """``len(table.texts) × len(senders)`` float32: 1 where the turn's sender is that one of ``senders`` (the
    training corpus's senders, sorted; a sender not among them is all zeros)."""
    who = np.asarray(table.senders, dtype=object)
    if not senders:
        return np.zeros((len(who), 0), dtype=np.float32)
    return np.column_stack([who == s for s in senders]).astype(np.float32)
