"""ConTurE, turn-level open-domain evaluation from DSTC9 (FORMATS.md §4): read.

A JSON array of dialogs::

    {"dialog_id": 0,
     "turns": [{"user": "User: ...", "chatbot": "Chatbot: ...", "overall impression": 0|1|2}, ...],
     "dialog_ratings": [{"consistent": 1, "likeable": 3, ..., "inquisitive": "N/A"}, ... one per rater]}

Each ConTurE turn (a user utterance and the chatbot's response) becomes two turns, ``user`` then ``system``
(the ``User:``/``Chatbot:`` prefixes are dropped). The system turn carries the scale ``overall impression``
(0 dislike, 1 kind of like, 2 like) with ONE label: ConTurE ships the consolidated score (majority of three
workers, ties broken by an expert), not each worker's, so its gold distributions are one-hot and its
agreement cannot be computed. The dialog ratings are the DSTC9 dimensions (see :mod:`dialeval.io.dstc9`),
``"N/A"`` (or a dimension a rating leaves out) kept as missing; ``null``, a rating value or ``dialog_ratings``
itself, is refused (the published file has none: its 12 missing ratings are all ``"N/A"``).
"""

from __future__ import annotations

from pathlib import Path

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, describe
from dialeval.io._files import (
    MAX_BYTES,
    as_path,
    load_json_document,
    only_json_file,
    require_dict,
    require_list,
    require_str,
)
from dialeval.io.dstc9 import DIMENSIONS, MISSING, dimension_scales, level_of, rating_label

TURN_SCALE = "overall impression"
TURN_LEVELS = ("0", "1", "2")
CONSOLIDATED = "consolidated"
"""The annotator id of ConTurE's single consolidated turn label."""
_PREFIXES = {"user": "User: ", "chatbot": "Chatbot: "}


def impression_scale() -> Scale:
    """ConTurE's turn scale: 0 dislike, 1 kind of like, 2 like (ordinal), on system turns."""
    return Scale(TURN_SCALE, TURN_LEVELS, "ordinal", "turn", "system",
                 "overall impression of the chatbot's response: 0 dislike, 1 kind of like, 2 like "
                 "(one consolidated label: majority of 3 workers, ties broken by an expert)", (0.0, 1.0, 2.0))


def _strip(text: str, key: str) -> str:
    prefix = _PREFIXES[key]
    return text[len(prefix):] if text.startswith(prefix) else text


def read_conture(source: str | Path, *, max_bytes: int = MAX_BYTES) -> Corpus:
    """Read the ConTurE ``data.json`` into a Corpus: the file, or its folder as published (no other ``*.json``
    file in it).

    Returns
    -------
    Corpus
        ``format="conture"``; scales ``overall impression`` (turn level) and the 11 DSTC9 dimensions
        (dialogue level).

    Raises
    ------
    DialevalError
        Not an array of dialogs, a dialog id met twice, a turn without ``user``/``chatbot`` text, an
        impression other than 0/1/2, or a rating off its dimension's levels (``"N/A"`` is allowed, ``null`` is
        not).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "data.json"
    >>> d = {"dialog_id": 7, "turns": [{"user": "User: hi", "chatbot": "Chatbot: hey", "overall impression": 2}],
    ...      "dialog_ratings": [{"likeable": 3}, {"likeable": "N/A"}]}
    >>> _ = p.write_text(json.dumps([d]))
    >>> c = read_conture(p)
    >>> [(t.sender, t.text, t.labels) for t in c.dialogues[0].turns]
    [('user', 'hi', {}), ('system', 'hey', {'overall impression': ['2']})]
    >>> c.dialogues[0].labels["likeable"]
    ['3', None]
    """
    path = as_path(source, "ConTurE data")
    if path.is_dir():
        inner = only_json_file(path)
        if inner is None:
            raise DialevalError("is a folder, and ConTurE is one JSON file: give data.json, or a folder holding "
                                "it and no other *.json file", file=str(path))
        path = inner
    file = str(path)
    data = load_json_document(path, max_bytes)
    if not isinstance(data, list):
        raise DialevalError(f"the top level is a JSON {type(data).__name__}; expected an array of dialogs",
                            file=file)
    dialogues, seen = [], set()
    for i, raw in enumerate(data):
        rec = require_dict(raw, f"item {i}", file=file, field=f"[{i}]")
        if "dialog_id" not in rec:
            raise DialevalError(f"item {i} has no 'dialog_id'", file=file, field="dialog_id")
        raw_id = rec["dialog_id"]
        if isinstance(raw_id, bool) or not isinstance(raw_id, int | str) or not str(raw_id).strip():
            raise DialevalError(f"dialog id {describe(raw_id)} is not allowed; allowed are a number or a "
                                "non-blank string", file=file, field=f"[{i}].dialog_id")
        did = str(raw_id)
        if did in seen:
            raise DialevalError("dialog id met twice", file=file, dialogue=did, field="dialog_id")
        seen.add(did)
        dialogues.append(_read_dialog(rec, did, file))
    scales = {TURN_SCALE: impression_scale(), **dimension_scales()}
    return Corpus(dialogues, scales, "conture", file, "en")


def _read_dialog(rec: dict, did: str, file: str) -> Dialogue:
    turns_raw = rec.get("turns")
    if not isinstance(turns_raw, list) or not turns_raw:
        raise DialevalError(f"'turns' must be a non-empty list, received {describe(turns_raw)}", file=file,
                            dialogue=did, field="turns")
    turns: list[Turn] = []
    for t, raw in enumerate(turns_raw):
        where = f"turns[{t}]"
        pair = require_dict(raw, where, file=file, dialogue=did, field=where)
        user = require_str(pair.get("user"), "'user'", file=file, dialogue=did, field=f"{where}.user")
        bot = require_str(pair.get("chatbot"), "'chatbot'", file=file, dialogue=did, field=f"{where}.chatbot")
        score = pair.get(TURN_SCALE)
        label = level_of(score, TURN_LEVELS)
        if label is None:
            raise DialevalError(f"overall impression {describe(score)} is not allowed; allowed are "
                                + ", ".join(TURN_LEVELS), file=file, dialogue=did, field=f"{where}.{TURN_SCALE}")
        turns.append(Turn("user", [_strip(user, "user")], meta={"pair": t}))
        turns.append(Turn("system", [_strip(bot, "chatbot")], labels={TURN_SCALE: [label]},
                          annotators=[CONSOLIDATED], meta={"pair": t}))
    ratings = require_list(rec.get("dialog_ratings", []), "'dialog_ratings'", "a list of rating objects, one per "
                           "rater ([], or no 'dialog_ratings' key, for a dialog nobody rated)", file=file,
                           dialogue=did, field="dialog_ratings")
    labels: dict[str, list[str | None]] = {d: [] for d in DIMENSIONS}
    for r, raw in enumerate(ratings):
        where = f"dialog_ratings[{r}]"
        rating = require_dict(raw, where, file=file, dialogue=did, field=where)
        for k in rating:
            if k not in DIMENSIONS:
                raise DialevalError(f"unknown dimension {k!r}; allowed are " + ", ".join(DIMENSIONS), file=file,
                                    dialogue=did, field=f"{where}.{k}")
        for d in DIMENSIONS:
            labels[d].append(rating_label(rating.get(d, MISSING), d, file=file, dialogue=did,
                                          field=f"{where}.{d}"))
    meta = {k: v for k, v in rec.items() if k not in ("dialog_id", "turns", "dialog_ratings")}
    return Dialogue(did, turns, labels=labels if ratings else {}, meta=meta)
