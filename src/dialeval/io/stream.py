"""Streaming dialogues from many shards: STC-3 JSON arrays, JSON Lines, gzip'ed files, folders and globs.

Nothing here loads a whole file: a JSON array is read by the incremental array reader of
:mod:`dialeval.io.jsonarray` (chunks of bytes split at the array's top-level commas by
:func:`~dialeval.io.jsonarray.array_parts`), one element parsed at a time, JSON Lines one line at a time,
and gzip is decompressed as it is read. Each dialogue is validated on its own, by the checks of the STC-3
reader (:mod:`dialeval.io.stc3`): one that fails becomes a :class:`Reject` (file, line, index, id and what
is wrong) and the others go on, unless ``fail_fast``.

Fields of a dialogue other than ``id``, ``turns`` and ``annotations`` are its metadata (``system``,
``day``, ``time``...): they are kept with it (``StreamedDialogue.meta``) and written next to its
prediction, so ``dialeval summarize --by FIELD`` can group by them.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import orjson

from dialeval.errors import DialevalError, describe
from dialeval.io._files import is_skipped
from dialeval.io.jsonarray import array_parts, check_streamable
from dialeval.io.stc3 import check_turns
from dialeval.io.text import GZIP_MAGIC, UTF8_BOM

CHUNK = 1024 * 1024
"""Bytes read at a time."""
SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")
"""File names a folder is searched for (other files in it are ignored)."""
_JSONL = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_WS = b" \t\r\n"


@dataclass(frozen=True)
class Reject:
    """A dialogue that failed validation, and where it is."""

    file: str
    line: int
    index: int
    id: str | None
    error: str

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "index": self.index, "id": self.id, "error": self.error}

    def __str__(self) -> str:
        where = f"{self.file}: line {self.line}: item {self.index}"
        return f"{where}: dialogue {self.id}: {self.error}" if self.id is not None else f"{where}: {self.error}"


@dataclass
class StreamedDialogue:
    """A valid dialogue: its id, turns (sender, utterances) and metadata, with its place in its file."""

    id: str
    turns: list[dict]
    meta: dict = field(default_factory=dict)
    line: int = 0
    index: int = 0

    def record(self) -> dict:
        """The dialogue as an STC-3 record (no annotations)."""
        return {"id": self.id, "turns": self.turns}


def expand_inputs(inputs: Iterable[str | os.PathLike]) -> list[Path]:
    """The shard files of ``inputs``: files as given, a folder's files with a known suffix (sorted), and a
    glob pattern's matches (sorted). Duplicates are dropped; an input that names nothing is an error.

    Raises
    ------
    DialevalError
        No inputs, a path that does not exist, or a folder or pattern with no shard in it.
    """
    files: list[Path] = []
    for raw in inputs:
        text = os.fspath(raw)
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.iterdir()   # the readers' rule: any case, hidden files left out
                           if p.is_file() and p.name.lower().endswith(SUFFIXES) and not is_skipped(Path(p.name)))
            if not found:
                raise DialevalError(f"no shard in this folder; allowed are files ending in {', '.join(SUFFIXES)}",
                                    file=text)
            files += found
        elif path.is_file():
            files.append(path)
        elif glob.has_magic(text):
            matches = [Path(p) for p in glob.glob(text, recursive=True)]
            found = sorted(p for p in matches if p.is_file())
            if not found:
                folders = sum(p.is_dir() for p in matches)
                raise DialevalError(f"the pattern {describe(text)} matches no file"
                                    + (f", only {folders} folder(s): give the folders themselves, or a pattern "
                                       "of their files" if folders else ""))
            files += found
        else:
            raise DialevalError("no such file, folder or pattern", file=text)
    if not files:
        raise DialevalError("no input: give files, folders or glob patterns of dialogues")
    return list(dict.fromkeys(files))


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed as it is read when it is gzip (by its magic bytes)."""
    fh = open(path, "rb")  # noqa: SIM115  (returned to the caller)
    if fh.read(2) == GZIP_MAGIC:
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    fh.seek(0)
    return fh


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (as stored: of the compressed bytes for a gzip file), read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def is_jsonl(path: Path, head: bytes) -> bool:
    """JSON Lines by suffix; otherwise by content: an array starts with ``[``, JSON Lines with ``{``."""
    if path.name.lower().endswith(_JSONL):
        return True
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(_WS)[:1] == b"{"


def _parse(data: bytes) -> object:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:  # for the standard library's message (NaN is then refused by validate: it is no dialogue field)
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise DialevalError(f"not UTF-8 text (byte {e.start} of the item)") from None
    except json.JSONDecodeError as e:
        raise DialevalError(f"not valid JSON: {e.msg} (column {e.colno} of the item)") from None
    except (RecursionError, ValueError):
        raise DialevalError("not valid JSON for dialeval (nested too deeply or a number too long)") from None


def iter_array(fh: BinaryIO, name: str) -> Iterator[tuple[int, bytes]]:
    """The elements of a JSON array read incrementally from ``fh``: ``(line, bytes)`` with the 1-based line
    on which each element starts. Only one chunk (plus one element) is held at a time.

    The array is read by :func:`~dialeval.io.jsonarray.array_parts` (in chunks of :data:`CHUNK` bytes);
    a missing value (``[,`` or ``,,`` or ``,]``) is yielded as empty bytes.

    Raises
    ------
    DialevalError
        The top level is not an array, or the array is not closed (a broken element is not an error here:
        its bytes are yielded and it is rejected when parsed).

    Examples
    --------
    >>> import io
    >>> list(iter_array(io.BytesIO(b'[{"id": "a,]"},\\n {"id": 2}]'), "x.json"))
    [(1, b'{"id": "a,]"}'), (2, b'{"id": 2}')]
    """
    parts = array_parts(fh, name, chunk=CHUNK, expected="an array of dialogues or JSON Lines")
    part = next(parts, None)
    while part is not None:
        data, line, start = part.data, part.line, 0
        if part.first and part.last and not part.commas.size and not data.strip(_WS):
            line += data.count(b"\n")  # `[]`: an empty array
        else:
            for cut in [*part.commas.tolist(), len(data)]:
                element = data[start:cut]
                body = element.lstrip(_WS)
                yield line + element.count(b"\n", 0, len(element) - len(body)), body.rstrip(_WS)
                line += element.count(b"\n")
                start = cut + 1
        try:
            part = parts.send(line - part.line)  # the part's line breaks, counted here: not counted again
        except StopIteration:
            return


def iter_lines(fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a JSON Lines stream as ``(line, bytes)``; a UTF-8 byte-order mark that starts the
    stream is dropped (:mod:`dialeval.io.text`'s policy)."""
    for n, raw in enumerate(fh, 1):
        body = (raw.removeprefix(UTF8_BOM) if n == 1 else raw).strip(_WS)
        if body:
            yield n, body


def iter_items(path: Path) -> Iterator[tuple[int, bytes]]:
    """The raw items of one file as ``(line, bytes)``: the lines of JSON Lines or the elements of a JSON array
    (:func:`is_jsonl` decides), gzip'ed or not; the file is open while the items are read.

    Raises
    ------
    DialevalError
        Naming the file: text that is not UTF-8 (:func:`~dialeval.io.jsonarray.check_streamable`), a gzip
        file cut short or damaged, a file that cannot be read; and the array reader's errors.
    """
    name = str(path)
    try:
        with open_binary(path) as fh:
            head = fh.peek(64)[:64] if hasattr(fh, "peek") else b""
            if is_jsonl(path, head):
                check_streamable(head, name)
                yield from iter_lines(fh)
            else:
                yield from iter_array(fh, name)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DialevalError(f"not readable: not a complete gzip file: {e} (the file is cut short or damaged; "
                            "allowed are whole gzip files: compress it again)", file=name) from None
    except OSError as e:
        raise DialevalError(f"not readable: {e.strerror or e}", file=name) from None


def validate(obj: object) -> StreamedDialogue:
    """One parsed item as a dialogue to predict; a :class:`DialevalError` (with the id when known) otherwise.

    Allowed: an object with ``id`` (a non-empty string or an integer) and ``turns``, a non-empty list of
    ``{"sender": "customer"|"helpdesk", "utterances": [str, ...]}``; any other field is metadata
    (``annotations`` are ignored). The turns are checked by the STC-3 reader's own check
    (:func:`~dialeval.io.stc3.check_turns`); here a turn must give its utterances (the reader of a whole
    dataset reads a turn without them as one with no utterance).
    The id is checked here, with messages that leave out the item's number (a :class:`Reject` gives it).
    """
    if not isinstance(obj, dict):
        raise DialevalError(f"the item is a JSON {type(obj).__name__}; expected an object with id and turns")
    did = obj.get("id")
    if did is None or did == "" or isinstance(did, bool) or not isinstance(did, str | int):
        raise DialevalError(f"id {describe(did)} is not allowed; allowed are non-empty strings", field="id")
    did = str(did)
    turns = check_turns(obj, did, None)[1]
    meta = {k: v for k, v in obj.items() if k not in ("id", "turns", "annotations")}
    return StreamedDialogue(did, turns, meta)


def iter_dialogues(path: str | os.PathLike, rejects: list[Reject] | None = None, *,
                   fail_fast: bool = False) -> Iterator[StreamedDialogue]:
    """The valid dialogues of one shard, in file order, read in bounded memory.

    Parameters
    ----------
    path : path
        A JSON array or JSON Lines file, gzip'ed or not.
    rejects : list, optional
        Every dialogue that fails validation (not JSON, not a dialogue, a repeated id) is appended here as a
        :class:`Reject` and skipped.
    fail_fast : bool
        Raise a :class:`DialevalError` at the first rejected dialogue instead.

    Raises
    ------
    DialevalError
        With ``fail_fast`` only. Otherwise a file that cannot be read on (not an array or JSON Lines, an
        array not closed, a damaged gzip) ends with one reject at line 0 for the file, after the dialogues
        read before the problem.
    """
    path = Path(path)
    name = str(path)
    mine: list[Reject] = [] if rejects is None else rejects
    before, good = len(mine), 0
    try:
        for d in _dialogues(path, name, mine, fail_fast):
            good += 1
            yield d
    except (DialevalError, OSError, EOFError) as e:
        # The file itself is unreadable past some point (not an array, an array not closed, a damaged
        # gzip): the dialogues before it were yielded; the rest of the file is one reject at line 0.
        if fail_fast:
            raise
        message = e.message if isinstance(e, DialevalError) else f"not readable ({type(e).__name__}: {e})"
        mine.append(Reject(name, 0, good + len(mine) - before, None, f"the file: {message}"))


def _dialogues(path: Path, name: str, rejects: list[Reject], fail_fast: bool) -> Iterator[StreamedDialogue]:
    seen: set[str] = set()
    for index, (line, data) in enumerate(iter_items(path)):
        did = None
        try:
            if not data:
                raise DialevalError("not valid JSON: a value is missing")
            obj = _parse(data)
            if isinstance(obj, dict) and isinstance(obj.get("id"), str | int):
                did = str(obj["id"])
            d = validate(obj)
            if d.id in seen:
                raise DialevalError("duplicate dialogue id in this shard", field="id")
            seen.add(d.id)
        except DialevalError as e:
            reject = Reject(name, line, index, did, f"{e.field}: {e.message}" if e.field else e.message)
            if fail_fast:
                raise DialevalError(f"line {line}: item {index}: {reject.error} (--fail-fast)", file=name,
                                    dialogue=did) from None
            rejects.append(reject)
            continue
        d.line, d.index = line, index
        yield d


def batched(items: Iterable[StreamedDialogue], size: int) -> Iterator[list[StreamedDialogue]]:
    """Consecutive lists of ``size`` items (the last may be shorter)."""
    chunk: list[StreamedDialogue] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def is_streamed(path: str | os.PathLike) -> bool:
    """Whether a command's input names JSON Lines, gzip or a glob (read here), not a file other readers know."""
    text = os.fspath(path)
    return text.lower().endswith((".jsonl", ".ndjson", ".gz")) or (glob.has_magic(text) and not Path(text).exists())


def read_records(inputs: Iterable[str | os.PathLike], origins: list[tuple[str, int]] | None = None) -> list:
    """Every parsed item of ``inputs`` (JSON arrays or JSON Lines, gzip'ed or not; folders, globs), in order.

    For inputs that are loaded whole anyway (a run or a gold to score); an item that is not JSON is an error
    naming its file and line. ``origins``: the file and line of each item are appended to it, for the
    messages of the reader the items go to (:func:`locate`).
    """
    out: list = []
    for path in expand_inputs(inputs):
        name = str(path)
        for line, data in iter_items(path):
            try:
                out.append(_parse(data) if data else _parse(b","))
            except DialevalError as e:
                raise DialevalError(f"line {line}: {e.message}", file=name) from None
            if origins is not None:
                origins.append((name, line))
    return out


def locate(error: DialevalError, records: list, origins: list[tuple[str, int]], source: str) -> DialevalError:
    """``error``, raised on items of :func:`read_records`, located: the file and line of the item of its
    dialogue (the first with that id), else ``source`` (what the user named: a file, folder or pattern).
    An error naming a file already is returned as it is."""
    if error.file:
        return error
    if error.dialogue is not None:
        for record, (file, line) in zip(records, origins, strict=False):
            if isinstance(record, dict) and str(record.get("id")) == error.dialogue:
                return DialevalError(f"{error.message} (line {line})", file=file, dialogue=error.dialogue,
                                     field=error.field)
    files = {file for file, _ in origins}
    return error.located(file=files.pop() if len(files) == 1 else source)
