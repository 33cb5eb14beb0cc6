"""Tell the format of a corpus path from its name and first bytes, and say why when that is not possible.

Each format has one test here returning ``None`` (it fits) or the reason it does not; :func:`detect` returns
the only format that fits, and otherwise raises an error listing every reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.errors import DialevalError
from dialeval.io._files import as_path, listed_files, name_matches, only_json_file
from dialeval.io.formats import FORMATS
from dialeval.io.text import utf8_bytes, utf16_without_bom

HEAD_BYTES = 1024 * 1024


@dataclass
class Probe:
    """What detection looks at: the path, its kind, the first bytes, the first JSON record's keys."""

    path: Path
    is_dir: bool
    files: dict[str, int] = field(default_factory=dict)   # folder: how many files of each kind
    head: str = ""
    first: object = None       # the first JSON value: the object itself, or the first element of an array
    top: str = ""              # the first character of a file ("[", "{", "<")


KINDS = ("*.log.json", "chatbot*.json", "*.xml", "*.json")
"""The kinds of file a folder's files are counted by (the first that matches, ignoring case), else ``other``."""


def _kind(p: Path) -> str:
    return next((k for k in KINDS if name_matches(p.name, k)), "other")


def rereadable(path: Path) -> bool:
    """Whether ``path`` is a folder or a regular file: one that can be read more than once (detection reads the
    start of a file, then its reader reads it again). A pipe (``/dev/stdin``, ``<(...)``) cannot."""
    return path.is_dir() or path.is_file()


def probe(path: Path) -> Probe:
    if path.exists() and not rereadable(path):  # a pipe: reading its start here would take it from its reader
        raise DialevalError("is not a regular file but a pipe or a device, which is read only once: detecting its "
                            f"format would use it up; save it to a file first, or for a corpus {CHOOSE}",
                            file=str(path))
    if path.is_dir():
        counts: dict[str, int] = {}
        for p in listed_files(path):   # the readers' own listing: the files they would read
            k = _kind(p)
            counts[k] = counts.get(k, 0) + 1
        return Probe(path, True, counts)
    with path.open("rb") as fh:
        raw = fh.read(HEAD_BYTES)
    wide = utf16_without_bom(raw)   # XML in UTF-16 without a byte-order mark, as the WOCHAT reader reads it
    head = raw[:len(raw) // 2 * 2].decode(wide, errors="replace") if wide else ""
    if not head.lstrip(" \t\r\n").startswith("<"):
        head = utf8_bytes(raw, str(path), partial=True).decode("utf-8", errors="replace")
    head = head.lstrip("\ufeff \t\r\n")
    pr = Probe(path, False, head=head, top=head[:1])
    if pr.top in "[{" and pr.top:
        dec = json.JSONDecoder()
        start = 1 if pr.top == "[" else 0
        body = head[start:].lstrip()
        try:
            pr.first, _ = dec.raw_decode(body) if body and not body.startswith("]") else (None, 0)
        except (RecursionError, ValueError):  # ValueError: JSONDecodeError, or an int too long to convert
            pr.first = None  # the first record is longer than the head, nested too deeply, or not JSON
    return pr


def _keys(pr: Probe) -> set[str]:
    return set(pr.first) if isinstance(pr.first, dict) else set()


def _needs_file(pr: Probe, what: str) -> str | None:
    return f"is a folder; {what}" if pr.is_dir else None


def _stc3(pr: Probe) -> str | None:
    if (r := _needs_file(pr, "STC-3 data is one JSON file")) is not None:
        return r
    if pr.top != "[":
        return "not a JSON array"
    k = _keys(pr)
    turns = pr.first.get("turns") if isinstance(pr.first, dict) else None
    if {"id", "turns"} <= k and isinstance(turns, list) and turns and isinstance(turns[0], dict) \
            and "sender" in turns[0]:
        return None
    if pr.first is None and '"sender"' in pr.head and '"utterances"' in pr.head:
        return None
    return "the first record has no 'id' and 'turns' with a 'sender'"


def _conture(pr: Probe) -> str | None:
    if pr.is_dir:  # as published: data.json beside its licence
        one = pr.files.get("*.json") == 1 and not pr.files.get("*.log.json") and not pr.files.get("chatbot*.json")
        inner = only_json_file(pr.path) if one else None   # the folder's files are counted already: no walk
        if inner is None:
            return "is a folder; ConTurE is one JSON file, or a folder holding no other *.json file"
        r = _conture(probe(inner))
        return None if r is None else f"the folder's one JSON file {inner.name}: {r}"
    if pr.top != "[":
        return "not a JSON array"
    if {"dialog_id", "turns"} <= _keys(pr) or (pr.first is None and '"dialog_id"' in pr.head):
        return None
    return "the first record has no 'dialog_id' and 'turns'"


def _dstc9(pr: Probe) -> str | None:
    if pr.is_dir:
        return None if pr.files.get("chatbot*.json") else "the folder holds no chatbot*.json file"
    if pr.top != "[":
        return "not a JSON array"
    if "context" in _keys(pr) or (pr.first is None and '"context"' in pr.head):
        return None
    return "the first record has no 'context'"


def _dbdc(pr: Probe) -> str | None:
    if pr.is_dir:
        return None if pr.files.get("*.log.json") else "the folder holds no *.log.json file"
    if pr.top != "{":
        return "not a JSON object"
    if {"dialogue-id", "turns"} <= _keys(pr) or (pr.first is None and '"dialogue-id"' in pr.head):
        return None
    return "the object has no 'dialogue-id' and 'turns'"


def _wochat(pr: Probe) -> str | None:
    if pr.is_dir:
        return None if pr.files.get("*.xml") else "the folder holds no *.xml file"
    if pr.top != "<":
        return "does not start with '<' (not XML)"
    return None if "<dialogue" in pr.head else "XML without a <dialogue> element in its first megabyte"


TESTS: dict[str, Callable[[Probe], str | None]] = {
    "stc3": _stc3, "wochat": _wochat, "dbdc": _dbdc, "conture": _conture, "dstc9": _dstc9}


CHOOSE = "give the format (--from on the command line, format= in Python)"
"""How a user of the CLI or the library names the format when detection cannot tell (the default hint)."""


def detect(path: str | Path, *, choose: str = CHOOSE) -> str:
    """The format of ``path`` (a file or folder), among :data:`dialeval.io.formats.FORMATS`.

    ``choose`` says how the caller's user names the format instead (the service, which has no such option,
    says what to upload); the error ends with it and the formats.

    Raises
    ------
    DialevalError
        When no format fits or several do, with each format's reason, and ``choose``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "data.json"
    >>> _ = p.write_text(json.dumps([{"dialog_id": 0, "turns": []}]))
    >>> detect(p)
    'conture'
    """
    p = as_path(path, "corpus")
    if p.is_file() and p.stat().st_size == 0:
        raise DialevalError("the file is empty; expected a corpus of one of " + ", ".join(FORMATS), file=str(p))
    pr = probe(p)
    if not pr.is_dir and pr.top == "[" and pr.head.lstrip().lstrip("\ufeff")[1:].lstrip().startswith("]"):
        raise DialevalError("the file is an empty JSON array: it holds no dialogues", file=str(p))
    reasons = {name: test(pr) for name, test in TESTS.items()}
    fits = [n for n, r in reasons.items() if r is None]
    if len(fits) == 1:
        return fits[0]
    hint = f"; {choose}, one of " + ", ".join(FORMATS)
    if fits:
        raise DialevalError("cannot tell the format: it could be any of " + ", ".join(fits)
                            + (f" (the folder holds {_describe_files(pr)})" if pr.is_dir else "") + hint, file=str(p))
    why = "; ".join(f"not {n}: {r}" for n, r in reasons.items())
    raise DialevalError(f"cannot tell the format ({why})" + hint, file=str(p))


def _describe_files(pr: Probe) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(pr.files.items()))


def _format_of(path: Path) -> str | None:
    try:
        return detect(path)
    except DialevalError:
        return None


def check_not_swapped(submission: Path, gold: Path, usage: str = "dialeval evaluate RUN GOLD") -> None:
    """Refuse ``evaluate GOLD RUN``: the first file holds annotated dialogues and the second no corpus at all.

    A gold-as-run check (``evaluate gold.json gold.json``) is not a swap: both files are corpora.
    """
    if not rereadable(submission) or not rereadable(gold):  # missing, or a pipe (not to be used up here)
        return
    first = _format_of(submission)
    if first is None or _format_of(gold) is not None:
        return
    if first in ("stc3", "dbdc") and not submission.is_dir() and '"annotations"' not in probe(submission).head:
        return  # dialogues without labels (a test set, a DBDC3 labels file): not a gold
    raise DialevalError(f"the arguments look swapped: {submission} holds annotated dialogues (a {first} gold) and "
                        f"{gold} does not; the order is `{usage}`")
