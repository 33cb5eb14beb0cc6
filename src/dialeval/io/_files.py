"""Small helpers the corpus readers share: paths, bounded reads, JSON documents with located errors."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from dialeval.errors import DialevalError, describe
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
    """The one ``*.json`` file of ``folder`` (its sub-folders included; names matched and files skipped as
    :func:`listed_files` does), or None when it holds none or several: a corpus published as one JSON file
    beside its licence and read-me (ConTurE's ``data.json``) is read from its folder as from the file."""
    found = [p for p in listed_files(folder) if name_matches(p.name, "*.json")]
    if len(found) != 1:
        return None
    check_resolvable(found)
    return found[0]


SKIPPED_FOLDERS = ("__MACOSX",)
"""Folders whose files are never read (macOS archive metadata: ``__MACOSX/._x.log.json`` is not JSON)."""


def is_skipped(relative: Path) -> bool:
    """Whether a path inside a corpus folder (relative to it) is left out: a hidden file or a file inside a
    hidden folder (a name starting with ``.``: ``.backup/``, macOS ``._x.json``), or one in ``__MACOSX``.

    >>> is_skipped(Path(".backup/d.log.json")), is_skipped(Path("__MACOSX/x.xml")), is_skipped(Path("a/d.xml"))
    (True, True, False)
    """
    return any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts)


def name_matches(name: str, pattern: str) -> bool:
    """Whether a file name matches a pattern such as ``*.log.json``, ignoring case (``D_1.LOG.JSON`` and
    ``Chatbot2.json`` are files of their kind, on every system).

    >>> name_matches("D_00002.LOG.JSON", "*.log.json"), name_matches("Chatbot2.json", "chatbot*.json")
    (True, True)
    """
    return fnmatch.fnmatchcase(name.lower(), pattern.lower())


def listed_files(folder: Path) -> list[Path]:
    """The files under ``folder`` (recursively, symbolic links to folders not followed), sorted, leaving out
    what :func:`is_skipped` says; symbolic links whose target cannot be read are listed too, so that the
    caller reports them (:func:`check_resolvable`) instead of skipping them in silence. The one listing of a
    corpus folder: format detection counts these files, the readers read them."""
    return sorted(p for p in folder.rglob("*")
                  if not is_skipped(p.relative_to(folder)) and (p.is_file() or (p.is_symlink() and not p.exists())))


def check_resolvable(files: Iterable[Path]) -> None:
    """An error naming the first of ``files`` that is a symbolic link whose target cannot be read."""
    for p in files:
        if p.is_symlink() and not p.is_file():
            try:
                target = str(p.readlink())
            except OSError:
                target = "?"
            raise DialevalError(f"is a symbolic link to {target!r}, which cannot be read (no such file, or a "
                                "loop of links); restore its target or remove the link", file=str(p))


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
    """Files under ``folder`` (recursively, as :func:`listed_files` lists them) whose name matches any of
    ``patterns`` ignoring case, sorted; an error if none, or if one is a link that cannot be followed."""
    patterns = list(patterns)
    found = [p for p in listed_files(folder) if any(name_matches(p.name, pat) for pat in patterns)]
    if not found:
        raise DialevalError(f"the folder holds no {what} (looked for " + ", ".join(patterns) + ")",
                            file=str(folder))
    check_resolvable(found)
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


def require_list(obj: object, what: str, allowed: str, *, file: str | None, dialogue: str | None = None,
                 field: str | None = None) -> list:
    """``obj`` if it is a JSON array, else the located error saying what was received and what is ``allowed``.

    A key given as ``null`` is refused like any other value that is not a list: it is not a key left out, which
    the readers take for "none given" (the caller decides that before calling).

    >>> require_list(None, "'annotations'", "a list of annotation objects", file="d.json", field="annotations")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: d.json: annotations: 'annotations' must be a list, received None; allowed is a \
list of annotation objects
    """
    if not isinstance(obj, list):
        raise DialevalError(f"{what} must be a list, received {describe(obj)}; allowed is {allowed}", file=file,
                            dialogue=dialogue, field=field)
    return obj
