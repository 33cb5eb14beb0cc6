"""DSTC9 interactive-evaluation ratings (FORMATS.md §5): read.

``chatbot{1..11}.json``: a JSON array of ratings, one per rater and dialogue::

    {"context": "User: hola\\nSystem: hola. ...\\n", "human (overall)": 4, "consistent": 1, "likeable": 3, ...}

Ratings with the same ``context`` are one dialogue; its id is ``<file stem>-<n>`` (``chatbot3-017``: the 17th
distinct context of ``chatbot3.json``, counting from 0) and ``meta["system"]`` is the file stem. The context is
split into turns at lines starting ``User:`` or ``System:`` (other lines continue the previous turn). Each
dimension is a dialogue-level ordinal scale; ``"N/A"`` is a missing rating (``None``), not a zero, as is a
dimension a rating leaves out; ``null`` is refused (:func:`rating_label`).
"""

from __future__ import annotations

import re
from pathlib import Path

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, describe
from dialeval.io._files import MAX_BYTES, as_path, files_in, load_json_document, require_dict

# name: (levels low to high, what it asks)
DIMENSIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "consistent": (("0", "1"), "the system is consistent (0 no, 1 yes)"),
    "likeable": (("1", "2", "3"), "the system is likeable"),
    "diverse": (("1", "2", "3"), "the system's responses are diverse"),
    "informative": (("1", "2", "3"), "the system is informative"),
    "coherent": (("1", "2", "3"), "the system is coherent"),
    "human (overall)": (("1", "2", "3", "4", "5"), "overall impression of the system (1-5)"),
    "understanding": (("1", "2", "3"), "the system understands the user"),
    "flexible": (("1", "2", "3"), "the system is flexible"),
    "topic depth": (("1", "2", "3"), "the system discusses topics in depth"),
    "error recovery": (("1", "2", "3"), "the system recovers from errors"),
    "inquisitive": (("1", "2", "3"), "the system is inquisitive"),
}
"""The 11 dialogue-level dimensions shared by DSTC9 and ConTurE, in the order of the ConTurE README."""
MISSING = "N/A"
FILE_PATTERN = "chatbot*.json"
_PREFIX = re.compile(r"^(User|System): ?")
_ROLE = {"User": "user", "System": "system"}


def dimension_scales() -> dict[str, Scale]:
    """One dialogue-level ordinal scale per rated dimension, levels from low to high."""
    return {name: Scale(name, levels, "ordinal", "dialogue", None, what, tuple(float(x) for x in levels))
            for name, (levels, what) in DIMENSIONS.items()}


def level_of(value: object, levels: tuple[str, ...]) -> str | None:
    """The level of ``levels`` (integer labels) that a JSON number equals, or None (``1.0`` is level ``"1"``;
    a bool, a string, NaN, an infinity or a fraction is none).

    >>> level_of(1.0, ("0", "1", "2")), level_of(float("nan"), ("0", "1")), level_of(True, ("0", "1"))
    ('1', None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return next((level for level in levels if value == int(level)), None)


def rating_label(value: object, dim: str, *, file: str | None, dialogue: str | None, field: str) -> str | None:
    """A rater's value on ``dim`` as a level label; ``"N/A"`` gives None (missing). The readers pass ``"N/A"`` for
    a dimension a rating leaves out.

    ``null`` is refused with the other values off the dimension's levels: the DSTC9 and ConTurE files say a
    missing rating with ``"N/A"`` only (none of their 75,000 values is null), so a null is not read as one.

    >>> [rating_label(v, "likeable", file=None, dialogue=None, field="likeable") for v in ("N/A", 3)]
    [None, '3']
    >>> rating_label(None, "likeable", file="data.json", dialogue="7", field="dialog_ratings[0].likeable")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: data.json: dialogue 7: dialog_ratings[0].likeable: rating None is not allowed \
on 'likeable'; allowed are 1, 2, 3 or 'N/A'
    """
    if isinstance(value, str) and value == MISSING:
        return None
    levels = DIMENSIONS[dim][0]
    label = level_of(value, levels)
    if label is None:
        raise DialevalError(f"rating {describe(value)} is not allowed on {dim!r}; allowed are "
                            + ", ".join(levels) + f" or {MISSING!r}", file=file, dialogue=dialogue, field=field)
    return label


def split_context(context: str, *, file: str | None = None, dialogue: str | None = None) -> list[Turn]:
    """Turns of a ``User: ...\\nSystem: ...`` context; lines without a prefix continue the turn before.

    Examples
    --------
    >>> [(t.sender, t.utterances) for t in split_context("User: hi\\nSystem: hello\\nthere\\n")]
    [('user', ['hi']), ('system', ['hello\\nthere'])]
    """
    turns: list[Turn] = []
    for n, line in enumerate(context.rstrip("\n").split("\n")):
        m = _PREFIX.match(line)
        if m:
            turns.append(Turn(_ROLE[m.group(1)], [line[m.end():]]))
        elif turns:
            turns[-1].utterances[0] += "\n" + line
        else:
            raise DialevalError(f"line {n + 1} of the context starts with neither 'User:' nor 'System:': "
                                f"{describe(line)}", file=file, dialogue=dialogue, field="context")
    if not turns:
        raise DialevalError("empty context", file=file, dialogue=dialogue, field="context")
    return turns


def read_dstc9(source: str | Path, *, max_bytes: int = MAX_BYTES) -> Corpus:
    """Read DSTC9 interactive-evaluation ratings: one ``chatbot*.json`` file or a folder of them.

    Returns
    -------
    Corpus
        ``format="dstc9"``; one dialogue per distinct context with the raters' labels on the 11 dimensions
        (``dimension_scales()``); ``meta["system"]`` names the chatbot (the file stem).

    Raises
    ------
    DialevalError
        Not a JSON array of objects, a rating without ``context``, an unknown dimension, or a value that is
        not a level of its dimension (nor ``"N/A"``; ``null`` included).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "chatbot1.json"
    >>> r = {"context": "User: hi\\nSystem: hello\\n", "consistent": 1, "human (overall)": 4}
    >>> _ = p.write_text(json.dumps([r, dict(r, consistent="N/A")]))
    >>> c = read_dstc9(p)
    >>> c.ids(), c.dialogues[0].labels["consistent"], c.dialogues[0].meta["system"]
    (['chatbot1-000'], ['1', None], 'chatbot1')
    """
    path = as_path(source, "DSTC9 ratings")
    files = sorted(files_in(path, [FILE_PATTERN], "DSTC9 rating files"), key=_chatbot_order) \
        if path.is_dir() else [path]
    dialogues: list[Dialogue] = []
    seen: dict[str, str] = {}
    for f in files:
        for dlg in _read_file(f, max_bytes):
            if dlg.id in seen:  # chatbot1.json in two subfolders: the same ids, one file's ratings would be lost
                raise DialevalError(f"dialogue id met twice (also in {seen[dlg.id]}); a dialogue's id is its "
                                    "file's name and its number there, so rating files need different names",
                                    file=str(f), dialogue=dlg.id)
            seen[dlg.id] = str(f)
            dialogues.append(dlg)
    return Corpus(dialogues, dimension_scales(), "dstc9", str(path), "en")


def _chatbot_order(p: Path) -> tuple:
    m = re.search(r"(\d+)$", p.stem)
    return (p.parent.as_posix(), int(m.group(1)) if m else -1, p.name)


def _read_file(f: Path, max_bytes: int) -> list[Dialogue]:
    file = str(f)
    data = load_json_document(f, max_bytes)
    if not isinstance(data, list):
        raise DialevalError(f"the top level is a JSON {type(data).__name__}; expected an array of ratings",
                            file=file)
    system = f.stem
    by_context: dict[str, Dialogue] = {}
    for i, raw in enumerate(data):
        rec = require_dict(raw, f"rating {i}", file=file, field=f"[{i}]")
        ctx = rec.get("context")
        if not isinstance(ctx, str):
            raise DialevalError(f"rating {i} has no 'context' string", file=file, field=f"[{i}].context")
        dlg = by_context.get(ctx)
        if dlg is None:
            did = f"{system}-{len(by_context):03d}"
            dlg = Dialogue(did, split_context(ctx, file=file, dialogue=did),
                           labels={d: [] for d in DIMENSIONS}, meta={"system": system})
            by_context[ctx] = dlg
        for k in rec:
            if k != "context" and k not in DIMENSIONS:
                raise DialevalError(f"unknown dimension {k!r}; allowed are " + ", ".join(DIMENSIONS), file=file,
                                    dialogue=dlg.id, field=f"[{i}].{k}")
        for d in DIMENSIONS:
            dlg.labels[d].append(rating_label(rec.get(d, MISSING), d, file=file, dialogue=dlg.id,
                                              field=f"[{i}].{d}"))
    return list(by_context.values())
