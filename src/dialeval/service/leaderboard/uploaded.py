"""Corpora and runs as organisers and teams upload them: one file, or a ZIP archive of a folder.

A task's gold may be any corpus dialeval reads (:mod:`dialeval.io.formats`), so it scores any declared task
(:mod:`dialeval.tasks`):

- STC-3/DialEval JSON is parsed in memory (the common case, and the fastest);
- any other corpus in one file (WOCHAT XML, ConTurE ``data.json``, a DSTC9 ``chatbot*.json``) is written
  under its own name into a private temporary folder and read with format detection;
- a corpus that is a folder (DBDC: one ``*.log.json`` per dialogue) comes as a ZIP archive, unpacked there
  with limits (:func:`unpack`): no absolute path, no ``..``, no link, at most :data:`MAX_MEMBERS` files and
  :data:`MAX_UNPACKED_BYTES` in all (counted while unpacking, not taken from the archive's own header).

A run for a task scored per turn may likewise be a ZIP of DBDC3 ``*.labels.json`` files. Messages name the
uploaded file (and the member inside an archive), never a path on the server.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TypeVar

from dialeval.errors import DialevalError, describe
from dialeval.io.jsonarray import parse_bytes
from dialeval.io.text import ZIP_MAGICS
from dialeval.scoring import PreparedGold, load_gold

MAX_MEMBERS = 20_000
"""Most files an uploaded archive may hold."""
MAX_UNPACKED_BYTES = 1 << 30
"""Most bytes an organiser's gold archive may unpack to (1 GiB)."""
RUN_UNPACKED_BYTES = 256 << 20
"""Most bytes a team's run archive may unpack to (256 MiB; DBDC3 eval's labels files take 1 MB)."""
MAX_RATIO = 100
"""An archive may unpack to at most this many times its own size (or :data:`SMALL_UNPACKED`, if more): JSON
compresses 5-20 times; a "zip bomb" 1000 times. Checked while unpacking, so a bomb stops early."""
SMALL_UNPACKED = 16 << 20
_COPY_CHUNK = 1 << 20
MAX_NAME_BYTES = 255
"""The longest file name (in UTF-8 bytes) most file systems take."""
UPLOAD_FORMATS = "upload the gold as one file, or a folder corpus as a ZIP of the folder, in a format dialeval reads"
"""How an organiser fixes a gold whose format detection cannot tell (the service has no ``--from``)."""

T = TypeVar("T")


def is_zip(data: bytes) -> bool:
    """Whether ``data`` starts as a ZIP archive does.

    Examples
    --------
    >>> is_zip(b"PK\\x03\\x04rest"), is_zip(b"[]")
    (True, False)
    """
    return data[:4] in ZIP_MAGICS


def _member_path(name: str, archive: str) -> PurePosixPath | None:
    """The relative path of an archive member, None for a folder (``.`` too: the archive's root) or macOS
    metadata; an error if unsafe."""
    if name.endswith("/") or name.startswith("__MACOSX/"):
        return None
    p = PurePosixPath(name)
    if not p.parts:
        return None
    if "\\" in name or "\x00" in name or p.is_absolute() or ".." in p.parts or (p.parts and ":" in p.parts[0]):
        raise DialevalError(f"archive member {describe(name)} is not allowed; allowed are relative paths without "
                            "'..', drive letters or backslashes", file=archive)
    return p


def unpack(data: bytes, archive: str, into: Path, *, max_members: int = MAX_MEMBERS,
           max_bytes: int = MAX_UNPACKED_BYTES) -> Path:
    """Unpack the ZIP archive ``data`` (uploaded as ``archive``) into the empty folder ``into``.

    Raises
    ------
    DialevalError
        When ``data`` is not a readable ZIP archive, a member is unsafe (absolute, ``..``, a link) or
        encrypted, or the archive holds more than ``max_members`` files or unpacks to more than ``max_bytes``
        or :data:`MAX_RATIO` times its size (whichever is less; never less than :data:`SMALL_UNPACKED`).
    """
    import io

    limit = min(max_bytes, max(MAX_RATIO * len(data), SMALL_UNPACKED))
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
        raise DialevalError(f"not a readable ZIP archive ({e})", file=archive) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > max_members:
            raise DialevalError(f"the archive holds {len(infos)} members; allowed are at most {max_members}",
                                file=archive)
        total = 0
        for info in infos:
            rel = _member_path(info.filename, archive)
            if rel is None:
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                raise DialevalError(f"archive member {describe(info.filename)} is a link; allowed are files",
                                    file=archive)
            target = into.joinpath(*rel.parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)  # OSError: a file of that name came first
                with zf.open(info) as src, open(target, "wb") as dst:
                    while chunk := src.read(_COPY_CHUNK):
                        total += len(chunk)
                        if total > limit:
                            raise DialevalError(f"the archive unpacks to more than {limit} bytes; allowed are at most "
                                                f"{limit} (the lesser of {max_bytes} and {MAX_RATIO} times the "
                                                f"archive's size, never less than {SMALL_UNPACKED})", file=archive)
                        dst.write(chunk)
            except DialevalError:
                raise
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError, zlib.error,
                    ValueError) as e:  # RuntimeError: an encrypted member; NotImplementedError: a compression
                _no_space(e)
                # an OSError's text names the server's scratch folder (e.g. a member under a name another member
                # took as a file): only its reason is shown
                why = (e.strerror or type(e).__name__) if isinstance(e, OSError) else e
                raise DialevalError(f"archive member {describe(info.filename)} cannot be read ({why})",
                                    file=archive) from None
    return into


def _no_space(e: BaseException) -> None:
    """A full disk is the server's trouble, not the upload's: 503 (try again later), not 422."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        from dialeval.service.errors import Unavailable

        raise Unavailable("the server has no room to read this upload now; it was not stored and does not count; "
                          "try again later") from None


@contextmanager
def _scratch() -> Iterator[Path]:
    """A private temporary folder (mode 0700), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="dialeval-upload-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _shown(text: str | None, root: Path, prefix: str) -> str | None:
    if text is None:
        return None
    return text.replace(str(root) + os.sep, prefix).replace(str(root), prefix.rstrip("/") or ".")


def _as_uploaded(call: Callable[[], T], root: Path, prefix: str, name: str) -> T:
    """``call()``, with every server path in its error replaced by the uploaded name (``prefix`` + member)."""
    try:
        return call()
    except DialevalError as e:
        raise DialevalError(_shown(e.message, root, prefix) or "", file=_shown(e.file, root, prefix) or name,
                            dialogue=e.dialogue, field=e.field) from None


def _saved(data: bytes, name: str, into: Path) -> tuple[Path, str]:
    """Write or unpack the upload ``data`` into ``into``: the path to read and how messages name the folder."""
    if is_zip(data):
        return unpack(data, name, into), name + "/"
    path = into / name
    try:
        path.write_bytes(data)
    except OSError as e:  # a name of 255 characters may be more bytes than the file system takes
        _no_space(e)
        raise DialevalError(f"the file's name cannot be used here ({e.strerror}); allowed are names of at most "
                            f"{MAX_NAME_BYTES} bytes in UTF-8", file=name) from None
    return path, ""


def gold_from_bytes(data: bytes, name: str) -> PreparedGold:
    """The prepared gold of an uploaded gold file or archive (see the module docstring).

    ``name`` is the upload's cleaned file name (:func:`dialeval.service.uploads.clean_filename`): it decides
    nothing but what messages call the file and, for a single file, what format detection sees.

    Raises
    ------
    DialevalError
        The reader's message, located in the uploaded file (or member of the archive).
    """
    from dialeval.scoring.gold import STC3, gold_format
    from dialeval.scoring.layouts import ItemLayout

    with _scratch() as root:
        path, prefix = _saved(data, name, root)
        fmt = _as_uploaded(lambda: gold_format(path, choose=UPLOAD_FORMATS), root, prefix, name)
        if fmt == STC3:  # parsed in memory, as it came
            return load_gold(parse_bytes(data, file=name))
        gold = _as_uploaded(lambda: load_gold(path, format=fmt), root, prefix, name)
    layout = gold.layout
    return PreparedGold(ItemLayout(layout.dists, name)) if isinstance(layout, ItemLayout) else gold


def run_records(data: bytes, name: str) -> list:
    """The records of an uploaded run: a JSON array, or a ZIP of DBDC3 ``*.labels.json`` files.

    Raises
    ------
    DialevalError
        When it is neither, with the reader's message located in the upload.
    """
    if not is_zip(data):
        return parse_bytes(data, file=name)
    from dialeval.io.turnruns import load_run_records

    with _scratch() as root:
        folder = unpack(data, name, root, max_bytes=RUN_UNPACKED_BYTES)
        return _as_uploaded(lambda: load_run_records(folder)[0], root, name + "/", name)
