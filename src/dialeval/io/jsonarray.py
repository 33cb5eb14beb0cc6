"""Reading JSON arrays of records from a path or from already-parsed lists, fast and in bounded memory.

Small files are parsed at once with orjson. Larger ones are streamed: each chunk of bytes is scanned with
numpy for the array's top-level commas (outside strings, at bracket depth 0), and every run of complete
elements is handed to orjson in one call, so a 100 MB file is parsed at orjson's speed while only a chunk's
worth of Python objects is alive at a time. The scan (:func:`array_parts`) is the one incremental array
reader of dialeval: :func:`dialeval.io.stream.iter_array` splits the same parts into single elements.

Where orjson refuses a text, the standard library parses it instead, for two reasons: Python's ``json``
module writes ``NaN`` and ``Infinity``, which are not JSON but which a user deserves a precise message about
(the readers reject them as values, with their location); and the standard library says on which line a
syntax error is.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import orjson

from dialeval.errors import DialevalError
from dialeval.io.atomic import write_bytes
from dialeval.io.text import is_utf16, packed_note, utf8_bytes

STREAM_THRESHOLD = 4 * 1024 * 1024
"""Files larger than this (bytes) are streamed."""
CHUNK = 1024 * 1024
UTF16_MAX_BYTES = 256 * 1024 * 1024
"""UTF-16 text is decoded whole (not streamed): larger files are refused with a hint to save them as UTF-8."""
_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"

Source = str | os.PathLike | list | tuple


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while millions of acyclic objects are made.

    Parsed JSON holds no reference cycles, but every new dict and list counts towards the collector's
    thresholds: on a 45 MB dataset, collections triggered during parsing take over twice as long as the parse
    itself. The collector's previous state is restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def source_name(source: object) -> str | None:
    """The file name to put in messages, or None for in-memory input."""
    return str(source) if isinstance(source, str | os.PathLike) else None


def check_source(source: object, *, what: str = "file") -> None:
    """Raise a located error now if ``source`` is neither a list of records nor the path of a readable file."""
    if isinstance(source, list | tuple):
        return
    if not isinstance(source, str | os.PathLike):
        raise DialevalError(f"{what}: expected a path or a list of records, received {type(source).__name__}")
    path = Path(source)
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
    check_source(source, what=what)
    if isinstance(source, list | tuple):
        return iter(source)
    path = Path(source)
    if path.stat().st_size <= STREAM_THRESHOLD:
        return iter(_load_small(path))
    return _stream(path)


def load_records(source: Source, *, what: str = "file") -> list:
    """All elements of a JSON array (path or list) as a list."""
    if isinstance(source, list):
        return source
    return list(iter_records(source, what=what))


def parse_json(data: bytes, name: str | None, byte_offset: int = 0, line_offset: int = 0, *,
               column: bool = True) -> object:
    """Parse a JSON document's bytes with orjson, or with the standard library where orjson refuses.

    The standard library accepts ``NaN`` and ``Infinity`` (which the readers then reject as values, with
    their location) and says on which line a syntax error is; a located error if the bytes are not UTF-8.
    ``byte_offset`` and ``line_offset`` place a streamed part in its file; ``column=False`` leaves the column
    out of a syntax error (a streamed part starts mid-line: its columns are not the file's, its lines are).
    """
    try:
        with gc_paused():
            return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as u:
        note = packed_note(data) if byte_offset == 0 else ""
        raise DialevalError(f"not UTF-8 text (byte {byte_offset + u.start}){note}; JSON files must be UTF-8",
                            file=name) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {line_offset + e.lineno}" + (f", column {e.colno}" if column else "")
        raise DialevalError(f"not valid JSON: {e.msg} ({where})", file=name) from None
    except RecursionError:
        raise DialevalError("not valid JSON for dialeval: nested too deeply", file=name) from None
    except ValueError:  # an integer literal longer than Python converts (sys.get_int_max_str_digits)
        raise DialevalError(f"not valid JSON for dialeval: a number has more than {sys.get_int_max_str_digits()} "
                            "digits", file=name) from None


def _load_small(path: Path) -> list:
    return parse_bytes(path.read_bytes(), file=str(path))


def parse_bytes(data: bytes, *, file: str | None = None) -> list:
    """The elements of a JSON array given as bytes (a file read whole, an uploaded run named ``file``)."""
    data = utf8_bytes(data, file)
    if not data.strip(_WS):
        raise DialevalError("the file is empty; expected an array of dialogues", file=file)
    obj = parse_json(data, file)
    if not isinstance(obj, list):
        raise DialevalError(f"the top level is a JSON {type(obj).__name__}; expected an array of "
                            "dialogues", file=file)
    return obj


_OPEN, _CLOSE, _COMMA, _QUOTE, _BACKSLASH = 1, 2, 3, 4, 5
_CLASS = np.zeros(256, dtype=np.int8)
_CLASS[[ord("["), ord("{")]] = _OPEN
_CLASS[[ord("]"), ord("}")]] = _CLOSE
_CLASS[ord(",")], _CLASS[ord('"')], _CLASS[ord("\\")] = _COMMA, _QUOTE, _BACKSLASH


_CLOSE_ARRAY = ord("]")


def top_level_structure(buf: bytes, depth: int = 0, in_string: bool = False) -> tuple[np.ndarray, int, int, bool]:
    """Positions of the top-level commas of ``buf`` and of the ``]`` that closes the array (-1 if none), and
    the scan's state at the end of ``buf``: the bracket depth and whether it is inside a string.

    ``buf`` starts inside a JSON array in the state ``depth``, ``in_string`` (the default: just after ``[``
    or after a top-level comma), and not right after a backslash. A ``"`` opens or closes a string unless an
    odd number of backslashes precedes it; brackets and braces outside strings change the depth. Multi-byte
    UTF-8 sequences never contain ASCII bytes, so the scan works on bytes: one table lookup classifies every
    byte, the rest works on the few special ones. A scan can go on where another ended by passing its state
    on (:func:`array_parts` scans each byte once so), provided ``buf`` was not cut after a backslash.

    Examples
    --------
    >>> top_level_structure(b' {"a": [1, 2]}, "x,\\\\"]", 3] ')
    (array([14, 23]), 26, -1, False)
    >>> top_level_structure(b' {"a": [1, "x')
    (array([], dtype=int64), -1, 2, True)
    """
    a = np.frombuffer(buf, dtype=np.uint8)
    classes = np.take(_CLASS, a)
    pos = np.flatnonzero(classes != 0)
    cls = classes[pos]
    quote = cls == _QUOTE
    backslashes = pos[cls == _BACKSLASH]
    if backslashes.size:
        # A quote right after a run of backslashes is escaped when the run is odd.
        q = np.flatnonzero(quote)
        after = q[(pos[q] > 0) & (a[np.maximum(pos[q] - 1, 0)] == 92)]
        if after.size:
            run_start = backslashes[np.r_[True, np.diff(backslashes) != 1]]
            last = pos[after] - 1  # the backslash just before each such quote
            start = run_start[np.searchsorted(run_start, last, side="right") - 1]
            quote[after[(last - start + 1) % 2 == 1]] = False
    quotes_before = np.cumsum(quote, dtype=np.int64) - quote
    outside = (quotes_before & 1) == int(in_string)
    structural = outside & (cls <= _COMMA)
    c, p = cls[structural], pos[structural]
    steps = (c == _OPEN).astype(np.int64) - (c == _CLOSE)
    levels = depth + np.cumsum(steps)
    commas = p[(c == _COMMA) & (levels == 0)]
    closed = p[levels < 0]
    quotes = int(quotes_before[-1] + quote[-1]) if quote.size else 0
    return (commas, int(closed[0]) if closed.size else -1, int(levels[-1]) if levels.size else depth,
            bool((quotes + in_string) & 1))


class ArrayPart(NamedTuple):
    """A run of complete elements of a JSON array, as :func:`array_parts` reads it.

    ``data`` holds the elements' bytes, separated by the top-level commas at ``commas`` (positions in
    ``data``): one element more than there are commas, each possibly blank (a missing value). ``line`` is the
    1-based line of ``data[0]`` in the file, ``offset`` its 0-based byte position (after a UTF-8 byte-order
    mark); ``first``: ``data`` starts just after the array's ``[``; ``last``: it ends at the array's ``]``.
    """

    data: bytes
    commas: np.ndarray
    line: int
    offset: int
    first: bool
    last: bool


def read_head(fh: BinaryIO, chunk: int = CHUNK) -> bytes:
    """The first bytes of ``fh``: a chunk, and more until at least 4 bytes (enough to tell the encoding,
    :func:`~dialeval.io.text.utf8_bytes`) and something other than a UTF-8 byte-order mark and white space
    are read (or the input ends)."""
    buf = fh.read(chunk)
    while (len(buf) < 4 or not buf.removeprefix(_BOM).lstrip(_WS)) and (more := fh.read(chunk)):
        buf += more
    return buf


def check_streamable(head: bytes, name: str | None) -> None:
    """Refuse, in the text policy's terms (:mod:`dialeval.io.text`), a file starting with ``head`` that cannot
    be read incrementally as UTF-8: UTF-16 (decoded whole by the readers that load a file whole), UTF-32."""
    if is_utf16(head, name):
        raise DialevalError("UTF-16 text is not read incrementally; save the file as UTF-8", file=name)


def array_parts(fh: BinaryIO, name: str | None, *, head: bytes | None = None, chunk: int = CHUNK,
                expected: str = "an array of dialogues") -> Generator[ArrayPart, int | None, None]:
    """The elements of the JSON array read incrementally from ``fh``, as runs of complete elements.

    Each chunk read is scanned once (:func:`top_level_structure`) and everything up to its last top-level
    comma (or the closing ``]``) is yielded as one :class:`ArrayPart`; only the bytes of one chunk plus one
    element are held at a time. The elements themselves are not parsed or checked here. A caller that counts
    the line breaks of a part's ``data`` anyway may send their number back (``parts.send(n)`` in place of
    ``next``), and they are not counted again here.

    Parameters
    ----------
    fh : binary file
        Read from its current position (after ``head``, when given).
    name : str or None
        The file name for messages.
    head : bytes, optional
        Bytes the caller has already read from ``fh`` (:func:`read_head`); read here when None.
    chunk : int
        Bytes read at a time (a positive integer).
    expected : str
        What the file should hold, for the message when its top level is not an array.

    Raises
    ------
    DialevalError
        ``chunk`` is not a positive integer; the text is UTF-16 or UTF-32 (read whole elsewhere, or refused);
        the top level is empty or not an array; the array is not closed (or closed by ``}``); data follow it.

    Examples
    --------
    >>> import io
    >>> [(p.data, p.commas.tolist(), p.line, p.first, p.last)
    ...  for p in array_parts(io.BytesIO(b'[1,\\n"a,]", 2]'), "x.json", chunk=4)]
    [(b'1', [], 1, True, False), (b'\\n"a,]"', [], 1, False, False), (b' 2', [], 2, False, True)]
    """
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise DialevalError(f"chunk must be a positive integer, received {chunk!r}")
    buf = read_head(fh, chunk) if head is None else head
    check_streamable(buf, name)
    buf = buf.removeprefix(_BOM)
    start = len(buf) - len(buf.lstrip(_WS))
    if not buf[start:].startswith(b"["):
        what = "empty" if start == len(buf) else "not a JSON array"
        raise DialevalError(f"the top level is {what}; expected {expected}", file=name)
    offset, line, buf = start + 1, 1 + buf.count(b"\n", 0, start), buf[start + 1:]
    first = True
    # ``held``: bytes of the current run scanned already (the scan's state ``depth``, ``in_string`` is at their
    # end) with no top-level comma in them; ``buf``: the bytes to scan next. Every byte is scanned once, so a
    # record many chunks long costs no more than many short ones.
    held: list[bytes] = []
    depth, in_string = 0, False
    while True:
        commas, end, depth, in_string = top_level_structure(buf, depth, in_string)
        if end >= 0 or commas.size:
            if held:
                size = sum(map(len, held))
                commas, end = commas + size, end + size if end >= 0 else end
                buf, held = b"".join([*held, buf]), []
            if end >= 0 and buf[end] != _CLOSE_ARRAY:  # a `}` at depth 0: the array was never closed
                line_end = line + buf.count(b"\n", 0, end)
                raise DialevalError(f"not valid JSON: '}}' where the array's ']' should be (line {line_end})",
                                    file=name)
            cut = end if end >= 0 else int(commas[-1])
            newlines = yield ArrayPart(buf[:cut], commas[commas < cut], line, offset, first, end >= 0)
            line += buf.count(b"\n", 0, cut) if newlines is None else newlines
            offset += cut + 1
            buf = buf[cut + 1:]  # scanned already: the state at its end is the scan's
            first = False
            if end >= 0:
                while not buf.strip(_WS) and (buf := fh.read(chunk)):
                    pass
                if buf:
                    raise DialevalError("not valid JSON: extra data after the array", file=name)
                return
        # Trailing backslashes are scanned again with the next chunk (one escapes the byte after it).
        scanned = len(buf.rstrip(b"\\"))
        if scanned:
            held.append(buf[:scanned])
            buf = buf[scanned:]
        more = fh.read(chunk)
        if not more:
            last = line + sum(h.count(b"\n") for h in held) + buf.count(b"\n")
            raise DialevalError(f"not valid JSON: the array is not closed (line {last})", file=name)
        buf += more


def _stream(path: Path) -> Iterator[object]:
    name = str(path)
    with path.open("rb") as fh:
        head = read_head(fh, CHUNK)
        if is_utf16(head, name):  # decode it whole
            if path.stat().st_size > UTF16_MAX_BYTES:
                raise DialevalError(f"a UTF-16 file of {path.stat().st_size:,} bytes is decoded in memory and may be "
                                    f"at most {UTF16_MAX_BYTES:,} bytes; save it as UTF-8 (read in bounded memory)",
                                    file=name)
            yield from parse_bytes(head + fh.read(), file=name)
            return
        for part in array_parts(fh, name, head=head, chunk=CHUNK):
            if not part.data.strip(_WS) and not (part.first and part.last):  # `[]` is an empty array
                line = part.line + part.data.count(b"\n")
                raise DialevalError(f"not valid JSON: a value is missing before {']' if part.last else ','!r} "
                                    f"(line {line})", file=name)
            # The `[` put before the part stands for the byte before it in the file.
            yield from parse_json(b"[" + part.data + b"]", name, part.offset - 1, part.line - 1,  # type: ignore[misc]
                                  column=False)


UNDEFINED_POLICY = ("An undefined value (NaN, or an infinity from a division by zero) is never written: it is null in "
                    "JSON, an empty cell in CSV and 'n/a' in tables and reports.")
"""What every dialeval writer does with a value that is not a finite number (see :func:`finite`)."""


def finite(obj: object) -> object:
    """``obj`` with every non-finite float (NaN, +-inf) replaced by None; numpy scalars and arrays as lists.

    Examples
    --------
    >>> finite({"a": float("nan"), "b": [1.5, float("inf")], "c": np.float64(2.0)})
    {'a': None, 'b': [1.5, None], 'c': 2.0}
    """
    if isinstance(obj, float | np.floating):
        return float(obj) if np.isfinite(obj) else None
    if isinstance(obj, np.integer | np.bool_):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return finite(obj.tolist())
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def json_text(obj: object, *, indent: int | None = 2) -> str:
    """JSON text with undefined values as null (:func:`finite`), serialised strictly: a NaN or infinity that
    slipped through raises ``ValueError`` instead of being written as the non-JSON ``NaN``.

    Examples
    --------
    >>> json_text({"jsd": float("nan"), "n": 3}, indent=None)
    '{"jsd": null, "n": 3}'

    Text other than ASCII is written as it is, except a lone surrogate (JSON's ``"\\ud800"`` escape reads as one,
    and UTF-8 cannot carry it): then the text is written with escapes, and reads back the same.
    """
    obj = finite(obj)
    text = json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, indent=indent, ensure_ascii=True, allow_nan=False)
    return text


def dump_json(obj: object, path: str | os.PathLike, *, indent: bool = True) -> None:
    """Write JSON atomically (a temporary file renamed into place): nothing half-written on failure.

    orjson writes a NaN or an infinity as null, never as the non-JSON ``NaN`` (:data:`UNDEFINED_POLICY`). A
    string holding a lone surrogate (a JSON ``"\\ud800"`` escape reads as one, e.g. in a dialogue id), which
    orjson refuses, is written as that escape by :func:`json_text`: it reads back the same.
    """
    try:
        data = orjson.dumps(obj, option=(orjson.OPT_INDENT_2 if indent else 0) | orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError:
        data = json_text(obj, indent=2 if indent else None).encode()
    write_bytes(path, data + b"\n")
