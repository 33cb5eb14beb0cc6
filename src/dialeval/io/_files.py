"""Small helpers the corpus readers share: paths, bounded reads, JSON documents with located errors."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from dialeval.errors import DialevalError
from dialeval.io.jsonarray import parse_json
from dialeval.io.text import utf8_bytes

MAX_BYTES = 256 * 1024 * 1024
"""Default size bound of one input file (XML or JSON document) read into memory at once."""


def as_path(source: object, what: str) -> Path:
    """``source`` as an existing :class:`~pathlib.Path`, or a located error."""
    if not isinstance(source, str | os.PathLike):
        raise DialevalError(f"{what}: expected a path, received {type(source).__name__}")
    path = Path(source)
    if not path.exists():
        raise DialevalError("no such file or folder", file=str(path))
    return path


def only_json_file(folder: Path) -> Path | None:
    """The one ``*.json`` file of ``folder`` (its sub-folders included, hidden files left out), or None when it
    holds none or several: a corpus published as one JSON file beside its licence and read-me (ConTurE's
    ``data.json``) is read from its folder as from the file."""
    found = [p for p in folder.rglob("*.json") if p.is_file() and not p.name.startswith(".")]
    return found[0] if len(found) == 1 else None


def read_bounded(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, refusing files larger than ``max_bytes`` before reading them."""
    if path.is_dir():
        raise DialevalError("is a folder; expected a file", file=str(path))
    size = path.stat().st_size
    if size > max_bytes:
        raise DialevalError(f"file of {size:,} bytes is larger than the limit of {max_bytes:,} bytes "
                            "(pass max_bytes= to read it anyway)", file=str(path))
    with path.open("rb") as fh:  # a pipe or a device has no size: read one byte past the limit at most
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DialevalError(f"more than the limit of {max_bytes:,} bytes (not a regular file, or one that "
                            "grew while read; pass max_bytes= to read more)", file=str(path))
    return data


def load_json_document(path: Path, max_bytes: int = MAX_BYTES) -> object:
    """Parse one JSON document (any top-level type) with errors naming the file; UTF-8 (BOM or not) or UTF-16."""
    data = utf8_bytes(read_bounded(path, max_bytes), str(path))
    if not data.strip():
        raise DialevalError("the file is empty; expected a JSON document", file=str(path))
    return parse_json(data, str(path))


def files_in(folder: Path, patterns: Iterable[str], what: str) -> list[Path]:
    """Files under ``folder`` (recursively) matching any of ``patterns``, sorted; an error if none."""
    found = sorted({p for pat in patterns for p in folder.rglob(pat) if p.is_file()})
    if not found:
        raise DialevalError(f"the folder holds no {what} (looked for " + ", ".join(patterns) + ")",
                            file=str(folder))
    return found


def require_dict(obj: object, what: str, *, file: str | None, dialogue: str | None = None,
                 field: str | None = None) -> dict:
    if not isinstance(obj, dict):
        raise DialevalError(f"{what} is a JSON {type(obj).__name__}; expected an object", file=file,
                            dialogue=dialogue, field=field)
    return obj


def require_str(obj: object, what: str, *, file: str | None, dialogue: str | None = None,
                field: str | None = None) -> str:
    if not isinstance(obj, str):
        raise DialevalError(f"{what} must be a string, received a JSON {type(obj).__name__}", file=file,
                            dialogue=dialogue, field=field)
    return obj
