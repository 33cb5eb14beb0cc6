"""Writing files so that nothing is ever half-written: a temporary file beside the target, renamed onto it.

Every writer of dialeval goes through here. If anything fails before the rename, the target is untouched
(an earlier version stays as it was) and the temporary file is removed.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix, so tools that read it, like matplotlib, still work),
    renamed onto ``path`` when the block ends without error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['out.txt'])
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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


def file_stem(dialogue_id: str) -> str:
    """A dialogue id as a file name's stem: each character other than a letter, digit, ``_``, ``.`` or ``-``
    (a slash, a space, NUL, a lone surrogate) made ``_``; ``..`` and ``.`` alone made ``_`` too.

    Examples
    --------
    >>> file_stem("1470624810"), file_stem("a/b c"), file_stem("..")
    ('1470624810', 'a_b_c', '_')
    """
    stem = _UNSAFE_IN_NAME.sub("_", dialogue_id)
    return "_" if stem in {"", ".", ".."} else stem
