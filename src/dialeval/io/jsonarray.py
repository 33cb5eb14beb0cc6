"""Reading JSON arrays of records from a path or from already-parsed lists, with bounded memory.

Small files are parsed at once with orjson; large ones are streamed element by element, so that a
100 MB run never needs its size many times over in Python objects.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterator
from pathlib import Path

import orjson

from dialeval.errors import DialevalError

STREAM_THRESHOLD = 16 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024
_WS = " \t\r\n"

Source = str | os.PathLike | list | tuple


def source_name(source: object) -> str | None:
    """The file name to put in messages, or None for in-memory input."""
    return str(source) if isinstance(source, str | os.PathLike) else None


def _check_file(path: Path) -> None:
    if not path.exists():
        raise DialevalError("no such file", file=str(path))
    if path.is_dir():
        raise DialevalError("is a folder; expected a JSON file", file=str(path))


def iter_records(source: Source, *, what: str = "file") -> Iterator[object]:
    """Yield the elements of a JSON array given as a path or as a list already parsed.

    Raises
    ------
    DialevalError
        If the file is missing, not UTF-8, not JSON, or its top level is not an array.
    """
    if isinstance(source, list | tuple):
        return iter(source)
    if not isinstance(source, str | os.PathLike):
        raise DialevalError(f"{what}: expected a path or a list of records, received {type(source).__name__}")
    path = Path(source)
    _check_file(path)
    if path.stat().st_size <= STREAM_THRESHOLD:
        return iter(_load_small(path))
    return _stream(path)


def load_records(source: Source, *, what: str = "file") -> list:
    """All elements of a JSON array (path or list) as a list."""
    if isinstance(source, list):
        return source
    return list(iter_records(source, what=what))


def _load_small(path: Path) -> list:
    return parse_bytes(path.read_bytes(), file=str(path))


def parse_bytes(data: bytes, *, file: str | None = None) -> list:
    """The elements of a JSON array given as bytes (e.g. an uploaded file named ``file``)."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as u:
            raise DialevalError(f"not UTF-8 text (byte {u.start}); JSON files must be UTF-8",
                                file=file) from None
        raise DialevalError(f"not valid JSON: {e}", file=file) from None
    if not isinstance(obj, list):
        raise DialevalError(f"the top level is a JSON {type(obj).__name__}; expected an array of "
                            "dialogues", file=file)
    return obj


def _stream(path: Path) -> Iterator[object]:
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    name = str(path)
    with path.open("rb") as fh:
        buf, pos, eof, consumed = "", 0, False, 0

        def more() -> bool:
            nonlocal buf, pos, eof, consumed
            if eof:
                return False
            raw = fh.read(_CHUNK)
            try:
                text = utf8.decode(raw, final=not raw)
            except UnicodeDecodeError as u:
                raise DialevalError(f"not UTF-8 text (near byte {consumed + u.start}); JSON files must be "
                                    "UTF-8", file=name) from None
            consumed += len(raw)
            buf = buf[pos:] + text
            pos = 0
            if not raw:
                eof = True
            return True

        def skip_ws() -> str:
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in _WS:
                    pos += 1
                if pos < len(buf):
                    return buf[pos]
                if not more():
                    return ""

        if skip_ws() != "[":
            raise DialevalError("the top level is not a JSON array; expected an array of dialogues", file=name)
        pos += 1
        first = True
        while True:
            c = skip_ws()
            if c == "]":
                pos += 1
                break
            if c == "":
                raise DialevalError("not valid JSON: the array is not closed", file=name)
            if not first:
                if c != ",":
                    raise DialevalError(f"not valid JSON: expected ',' or ']' in the array, found {c!r}",
                                        file=name)
                pos += 1
                skip_ws()
            first = False
            while True:
                try:
                    obj, end = decoder.raw_decode(buf, pos)
                except json.JSONDecodeError as e:
                    if more():
                        continue
                    raise DialevalError(f"not valid JSON: {e.msg}", file=name) from None
                if end >= len(buf) and not isinstance(obj, dict | list) and more():
                    continue  # a number may go on in the next chunk
                break
            pos = end
            yield obj
        if skip_ws() != "":
            raise DialevalError("not valid JSON: extra data after the array", file=name)


def dump_json(obj: object, path: str | os.PathLike, *, indent: bool = True) -> None:
    """Write JSON atomically (a temporary file renamed into place): nothing half-written on failure."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    data = orjson.dumps(obj, option=(orjson.OPT_INDENT_2 if indent else 0) | orjson.OPT_SERIALIZE_NUMPY)
    tmp.write_bytes(data + b"\n")
    os.replace(tmp, path)


