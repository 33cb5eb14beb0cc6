"""Writing files so that nothing is ever half-written: a temporary file beside the target, renamed onto it.

Every writer of dialeval goes through here. If anything fails before the rename, the target is untouched
(an earlier version stays as it was) and the temporary file is removed.
"""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from dialeval.errors import DialevalError, quote


def check_output_file(path: str | os.PathLike) -> Path:
    """``path`` as a :class:`~pathlib.Path` that a file can be written to: not a folder, and not under a file
    (a missing folder is left to the writer's own error). Called before long work, so that a wrong name is
    refused before the work, and by :func:`atomic_path`.

    Raises
    ------
    DialevalError
        ``path`` is an existing folder, or one of its parents is a file.
    """
    path = Path(path)
    if path.is_dir():
        raise DialevalError("is a folder; expected the name of a file to write", file=str(path))
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise DialevalError(f"cannot write here: {parent} is a file, not a folder", file=str(path))
            break
    return path


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix, so tools that read it, like matplotlib, still work),
    renamed onto ``path`` when the block ends without error.

    A symbolic link is followed: its target is replaced (beside the target), the link stays. A path that is not a
    regular file (a named pipe, ``/dev/stdout``, ``/dev/null``) is written through once the block ends, from a
    temporary file elsewhere: a rename would replace the pipe or the device itself with a file.

    Raises
    ------
    DialevalError
        ``path`` is a folder, or under a file; or the temporary file or the rename fails (a missing folder,
        no permission, a full disk), named by ``path``, not by the temporary file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['out.txt'])
    """
    path = check_output_file(path)
    device = _device_on_the_way(path)
    if device is not None or (path.exists() and not path.is_file()):   # a pipe, a device: written through
        fd, name = tempfile.mkstemp(prefix="dialeval-", suffix=path.suffix)
        os.close(fd)
        tmp = Path(name)
        with _finished_by(tmp, path, lambda: _copy(tmp, path, _descriptor(device))):
            yield tmp
        return
    if path.is_symlink():
        path = check_output_file(os.path.realpath(path))
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    with _finished_by(tmp, path, lambda: _replace(tmp, path)):
        yield tmp


def _replace(tmp: Path, path: Path) -> None:
    """``tmp`` renamed onto ``path``, with the permissions of the file it replaces (a private gold stays private:
    the temporary file was made with the umask's)."""
    if path.is_file():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


@contextmanager
def _finished_by(tmp: Path, path: Path, finish: Callable[[], None]) -> Iterator[None]:
    """Run the block, then ``finish()``, which puts the temporary file ``tmp`` in place at ``path``; an error of
    either file is a :class:`DialevalError` naming ``path`` (the temporary file's name is ours, not the user's),
    and ``tmp`` is removed in any case."""
    try:
        yield
        finish()
    except BrokenPipeError:   # the reader of a pipe went away: the command ends quietly (cli.main.BROKEN_PIPE)
        raise
    except OSError as e:   # an error of another file (an input the block reads) is the caller's to say
        if e.filename is not None and os.fspath(e.filename) not in (str(tmp), str(path)):
            raise
        raise DialevalError(f"cannot write: {e.strerror or e}", file=str(path)) from None
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


DEVICE_FOLDERS = ("/dev/", "/proc/")
"""Paths under these folders, or links through them, are devices and descriptors (``/dev/stdout``,
``/dev/fd/1``, ``/proc/self/fd/1``): written through, never replaced, even where they lead to a regular file
(a shell's ``> log.txt``: renaming onto it would replace the user's file, and lose what else is written to it)."""


def _device_on_the_way(path: Path) -> Path | None:
    """The first of ``path`` and the links on the way to its target under :data:`DEVICE_FOLDERS`, or None."""
    hop = Path(os.path.abspath(path))
    for _ in range(40):   # the kernel's own limit of links followed
        if str(hop).startswith(DEVICE_FOLDERS):
            return hop
        if not hop.is_symlink():
            return None
        try:
            hop = Path(os.path.abspath(hop.parent / os.readlink(hop)))
        except OSError:
            return None
    return None


_NAMED_DESCRIPTORS = {"/dev/stdout": 1, "/dev/stderr": 2}


def _descriptor(device: Path | None) -> int | None:
    """The open file descriptor of this process that ``device`` names (``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N``), else None. Written to as it is: opening the name again would truncate a file the shell
    redirected it to (``>> log.txt``) and write from another offset than the process's own writes."""
    if device is None:
        return None
    text = str(device)
    if text in _NAMED_DESCRIPTORS:
        return _NAMED_DESCRIPTORS[text]
    for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
        if text.startswith(prefix) and text[len(prefix):].isdigit():
            return int(text[len(prefix):])
    return None


def _copy(src: Path, dst: Path, descriptor: int | None = None) -> None:
    """The bytes of ``src`` written to ``dst``, or to the open ``descriptor`` (after what Python's own streams
    hold for it, so the order of the output is kept)."""
    if descriptor is None:
        with open(src, "rb") as a, open(dst, "wb") as b:
            shutil.copyfileobj(a, b)
        return
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    with open(src, "rb") as a, os.fdopen(os.dup(descriptor), "wb") as b:
        shutil.copyfileobj(a, b)


def check_output_folder(path: str | os.PathLike, what: str = "the output") -> Path:
    """``path`` as a :class:`~pathlib.Path` a folder can be made at or written into, checked before the work
    that writes there (nothing is created); ``what`` names what it is for in the error (``the report``).

    Raises
    ------
    DialevalError
        ``path``, or a parent of it, is a file.
    """
    folder = Path(path)
    for p in (folder, *folder.parents):
        if p.exists():
            if not p.is_dir():
                raise DialevalError(f"is a file; expected a folder for {what}" if p == folder else
                                    f"cannot write here: {p} is a file, not a folder", file=str(folder))
            break
    return folder


def make_folder(path: str | os.PathLike, what: str = "the output") -> Path:
    """Create the folder ``path`` (and its parents) if it is not there; ``what`` names what it is for in the
    error (``the report``).

    Raises
    ------
    DialevalError
        ``path``, or a parent of it, is a file; or the folder cannot be created (no permission).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> make_folder(pathlib.Path(tempfile.mkdtemp()) / "a" / "b").is_dir()
    True
    """
    folder = check_output_folder(path, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DialevalError(f"cannot create the folder for {what}: {e.strerror}", file=str(folder)) from None
    return folder


def output_format(path: str | os.PathLike, allowed: Sequence[str], what: str = "plot") -> str:
    """The format ``path``'s suffix names (lower case, no dot), one of ``allowed``: checked before the work
    that writes it, so that a wrong name costs nothing.

    Raises
    ------
    DialevalError
        A suffix not in ``allowed``, named with the allowed ones.

    Examples
    --------
    >>> output_format("fig.SVG", ("png", "svg"))
    'svg'
    """
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in allowed:
        received = f"suffix '{Path(path).suffix}'" if Path(path).suffix else "no suffix"
        raise DialevalError(f"{what} format: {received} is not allowed; allowed are "
                            + ", ".join(f".{a}" for a in allowed), file=str(path))
    return fmt


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically. A lone surrogate (not a character: a JSON ``"\\udc00"``
    escape reads as one, e.g. into a dialogue id), which UTF-8 cannot carry, is written as that escape."""
    write_bytes(path, text.encode("utf-8", "backslashreplace"))


def write_matrix_csv(path: str | os.PathLike, ids: Sequence[str], columns: Sequence[str], matrix: np.ndarray,
                     *, id_header: str = "id") -> None:
    """One row per item (its id, then one value per column), atomically; NaN or infinity is an empty cell.

    Values are written with ``repr`` so that they read back to the same float, to the last digit; a lone
    surrogate in an id as its escape (:func:`write_text`).
    """
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8", errors="backslashreplace") as fh:
        w = csv.writer(fh)
        w.writerow([id_header, *columns])
        for i, row in zip(ids, matrix.tolist(), strict=True):
            w.writerow([i, *(repr(x) if math.isfinite(x) else "" for x in row)])


_UNSAFE_IN_NAME = re.compile(r"[^\w.-]")


def claim_file_name(taken: dict[str, str], dialogue_id: str, suffix: str, *, file: str | None = None) -> str:
    """The file name of ``dialogue_id`` in a folder of one file per dialogue (:func:`file_stem` + ``suffix``),
    recorded in ``taken`` (name -> id); an error naming both ids when another dialogue has it already.

    >>> taken = {}
    >>> claim_file_name(taken, "a/b", ".log.json")
    'a_b.log.json'
    >>> claim_file_name(taken, "a_b", ".log.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: dialogue a_b: dialogue ids 'a/b' and 'a_b' both give the file name 'a_b.log.json' ...
    """
    name = file_stem(dialogue_id) + suffix
    if name in taken:
        raise DialevalError(f"dialogue ids {quote(taken[name])!r} and {quote(dialogue_id)!r} both give the file name "
                            f"{name!r} (characters other than letters, digits, '_', '.' and '-' become '_'); rename "
                            "one", file=file, dialogue=dialogue_id)
    taken[name] = dialogue_id
    return name


def file_stem(dialogue_id: str) -> str:
    """A dialogue id as a file name's stem: each character other than a letter, digit, ``_``, ``.`` or ``-``
    (a slash, a space, NUL, a lone surrogate) made ``_``; a leading ``.`` made ``_`` too, so that no file is
    hidden (the readers leave hidden files out: an id ``.x`` was written, then never read back).

    Examples
    --------
    >>> file_stem("1470624810"), file_stem("a/b c"), file_stem(".."), file_stem(".hidden")
    ('1470624810', 'a_b_c', '_', '_hidden')
    """
    stem = _UNSAFE_IN_NAME.sub("_", dialogue_id)
    if stem in {"", ".", ".."}:
        return "_"
    return "_" + stem[1:] if stem.startswith(".") else stem
