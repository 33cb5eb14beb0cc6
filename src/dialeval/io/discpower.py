"""Discpower's files (Sakai's randomised Tukey HSD tool): run lists, topic-by-run matrices, result lines.

- run list: one run name per line (names without whitespace);
- matrix: one line per topic (dialogue), scores separated by whitespace, columns in run-list order;
- result: one line per pair of runs, ``runA runB |diff| p``, pairs in run-list order.

``write_matrices`` also writes ``topics.txt`` (one dialogue id per line, the row order) and names each
matrix after its score column (:func:`matrix_name`: ``quality.nmd.A.matrix``, ``breakdown.jsd.matrix``).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from dialeval.errors import DialevalError, describe, quote
from dialeval.io.atomic import make_folder, write_text
from dialeval.io.text import decode_text


def _lines(path: Path) -> list[str]:
    if not path.exists():
        raise DialevalError("no such file", file=str(path))
    if path.is_dir():
        raise DialevalError("is a folder; expected a text file", file=str(path))
    return decode_text(path.read_bytes(), str(path)).splitlines()


def check_run_names(names: Sequence[str], file: str | None = None) -> None:
    """Run names Discpower's space-separated lines can carry: non-empty, no whitespace, unique."""
    seen: set[str] = set()
    for i, name in enumerate(names, start=1):
        if not name or any(ch.isspace() for ch in name):
            raise DialevalError(f"run name {describe(name)} (run {i}) is empty or contains whitespace; Discpower "
                                "files separate fields by whitespace", file=file)
        if name in seen:
            raise DialevalError(f"run name {name!r} appears twice (run {i}); run names must be unique", file=file)
        seen.add(name)


_NOT_IN_A_LINE = {"Cc": "a control character", "Zl": "a line separator", "Zp": "a paragraph separator",
                  "Cs": "a lone surrogate (bytes that are not UTF-8)"}
"""Unicode categories a line of ``topics.txt`` cannot hold: they end a line for some readers (``\n``, ``\r``,
``\v``, U+2028...), or are invisible or invalid in a text file (NUL, BEL, a lone surrogate)."""


def check_topic_ids(ids: Sequence[str], file: str | None = None) -> None:
    r"""Dialogue ids ``topics.txt`` can hold one per line: no control character (newline, tab, NUL...), line or
    paragraph separator, or lone surrogate. A newline in an id made two lines of one id, and every row of the
    matrices after it was read against the wrong dialogue.

    Raises
    ------
    DialevalError
        Naming the id (escaped, :func:`dialeval.errors.quote`), its character and what ids are allowed.

    Examples
    --------
    >>> check_topic_ids(["d1", "café 2"])
    >>> try:
    ...     check_topic_ids(["d1", "a\nb"])
    ... except DialevalError as e:
    ...     print(str(e)[:58])
    dialogue a\nb: id holds a control character ('\n', U+000A)
    """
    for i in ids:
        for ch in str(i):
            what = _NOT_IN_A_LINE.get(unicodedata.category(ch))
            if what is not None:
                raise DialevalError(f"id holds {what} ({quote(repr(ch))}, U+{ord(ch):04X}); topics.txt has one "
                                    "dialogue id a line: allowed are ids of printable characters and spaces (no "
                                    "line break, tab or other control character)", file=file, dialogue=i)


def read_runlist(path: str | os.PathLike) -> list[str]:
    """Run names, one per line (surrounding whitespace and blank lines ignored)."""
    p = Path(path)
    names = [line.strip() for line in _lines(p) if line.strip()]
    if len(names) < 2:
        raise DialevalError(f"{len(names)} run name(s); a run list needs at least 2, one per line", file=str(p))
    check_run_names(names, str(p))
    return names


def read_matrix(path: str | os.PathLike, runs: int | None = None) -> np.ndarray:
    """The topic-by-run matrix: one line per topic, ``runs`` numbers each (blank lines before and after the
    topics ignored).

    Raises
    ------
    DialevalError
        Naming the file and line, if a value is not a finite number, a line has the wrong count, or a blank line
        stands between two topics' lines (each line is a topic: a line left out shifts every later topic).
    """
    p = Path(path)
    rows: list[list[float]] = []
    width = runs
    blank = None  # the first blank line after a topic's
    for lineno, line in enumerate(_lines(p), start=1):
        fields = line.split()
        if not fields:
            if rows and blank is None:
                blank = lineno
            continue
        if blank is not None:
            raise DialevalError(f"line {blank} is blank between topic lines (topics {len(rows)} and "
                                f"{len(rows) + 1}); each line is one topic, in the order of the topic list: a "
                                "topic left out shifts every later one; remove the blank line or fill in the topic",
                                file=str(p))
        if width is None:
            width = len(fields)
        if len(fields) != width:
            sep = next((c for c in ",;|" if c in line), None)
            raise DialevalError(f"line {lineno} has {len(fields)} value(s); expected {width} (one per run in the "
                                "run list), separated by blanks" + (f" (this line uses {sep!r}: Discpower's matrices "
                                                                   "are separated by spaces)" if sep else ""),
                                file=str(p))
        try:
            values = [float(v) for v in fields]
        except ValueError:
            bad = next(v for v in fields if not _is_float(v))
            raise DialevalError(f"line {lineno}: {bad!r} is not a number", file=str(p)) from None
        if not all(np.isfinite(values)):
            raise DialevalError(f"line {lineno}: values must be finite numbers", file=str(p))
        rows.append(values)
    if len(rows) < 2:
        raise DialevalError(f"{len(rows)} topic line(s); a matrix needs at least 2", file=str(p))
    return np.array(rows)


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def result_lines(runs: Sequence[str], means: np.ndarray, pvalues: np.ndarray) -> list[str]:
    """Discpower's output: ``runA runB |diff| p`` for every pair i < j in run-list order.

    >>> import numpy as np
    >>> result_lines(["a", "b"], np.array([0.5, 0.25]), np.array([[1, 0.0312], [0.0312, 1]]))
    ['a b 0.250000 0.031200']
    """
    out = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            out.append(f"{runs[i]} {runs[j]} {abs(means[i] - means[j]):.6f} {pvalues[i, j]:.6f}")
    return out


def matrix_name(column: str) -> str:
    """The file name of a score column's matrix: ``<column>.matrix``, with ``/`` and whitespace as ``.`` and ``_``.

    Examples
    --------
    >>> matrix_name("quality.nmd.A"), matrix_name("overall impression/jsd")
    ('quality.nmd.A.matrix', 'overall_impression.jsd.matrix')
    """
    return "_".join(column.replace("/", ".").replace("\\", ".").split()) + ".matrix"


def write_matrices(out_dir: str | os.PathLike, runs: Sequence[str], ids: Sequence[str],
                   matrices: Mapping[str, np.ndarray]) -> list[Path]:
    """Write ``runs.txt``, ``topics.txt`` and one ``<column>.matrix`` (n x m, full precision) per column.

    Into a folder of earlier Discpower files: their ``runs.txt`` is removed first and the new one written last,
    so a write that fails or is stopped halfway leaves no ``runs.txt`` to read new matrices against earlier run
    names; ``*.matrix`` files of the earlier set that this one does not write are removed (a matrix of another
    set of runs, read against these run names, would be mislabelled without a word). Returns the written paths.

    Raises
    ------
    DialevalError
        Before anything is written: a run name Discpower cannot carry (:func:`check_run_names`), a dialogue id
        that is not one line of text (:func:`check_topic_ids`), or a matrix of the wrong shape.
    """
    check_run_names(runs)
    check_topic_ids(ids)
    out = make_folder(out_dir, "the Discpower files")
    written = []
    files = {"runs.txt": "".join(f"{r}\n" for r in runs), "topics.txt": "".join(f"{i}\n" for i in ids)}
    for name, X in matrices.items():
        if X.shape != (len(ids), len(runs)):
            raise DialevalError(f"matrix {name!r} has shape {X.shape}; expected ({len(ids)}, {len(runs)})")
        files[matrix_name(name)] = "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in X)
    marker = files.pop("runs.txt")
    (out / "runs.txt").unlink(missing_ok=True)
    for fname, text in files.items():
        write_text(out / fname, text)
        written.append(out / fname)
    write_text(out / "runs.txt", marker)
    written.insert(0, out / "runs.txt")
    for stale in sorted(set(out.glob("*.matrix")) - set(written)):
        stale.unlink()
    return written
