"""Run names, paths and notes as every report format shows them: one cleaning, before each format's escaping.

A run's name is its file name (``Path.stem``) and a report quotes the gold's path and notes naming dialogue ids:
text that came from a file system or a user and may hold bytes that are not UTF-8 (Python keeps them as lone
surrogates, ``'caf\\udce9'``, which no UTF-8 file can hold) or control characters (a newline in a path ended a
comment line of the LaTeX, CSV and Markdown reports). :func:`display_text` turns such text into printable
text; :func:`displayed` applies it to a whole :class:`~dialeval.stats.Comparison`, so that the Markdown, CSV,
LaTeX and JSON reports and the plots show one and the same name for a run.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace

from dialeval.stats.comparison import Comparison

_FS_ESCAPES = ("\udc80", "\udcff")
"""The lone surrogates Python's ``surrogateescape`` uses for the undecodable bytes 0x80..0xFF of a file name."""


def _escape(ch: str) -> str:
    return ch.encode("unicode_escape", "backslashreplace").decode("ascii")


def display_text(text: object) -> str:
    r"""Text from a file system or a user (a run name, a path, a note) as a report shows it: printable, one line.

    1. Bytes of a file name that were not decoded (lone surrogates U+DC80..U+DCFF from ``surrogateescape``: a
       name not in UTF-8, or any non-ASCII name under a C locale with Python's UTF-8 mode off) are decoded as
       UTF-8 where they are UTF-8, and shown as ``\xNN`` escapes where they are not (``caf\xe9``). Escapes keep
       two different names different, where U+FFFD would make them one.
    2. Every character Python does not count as printable (:meth:`str.isprintable`: control characters such as
       a newline or NUL, format characters such as a zero-width space, other lone surrogates) is written as its
       escape (``\n``, ``\x00``, ``\u200b``, ``\udc00``), as error messages write them
       (:func:`dialeval.errors.quote`).

    The result is valid UTF-8 on one line; each format escapes its own specials after this (``md_text``,
    ``tex``, CSV quoting, JSON). Applying it twice changes nothing more.

    Parameters
    ----------
    text : str, bytes or os.PathLike
        The text; a bytes path is decoded as the file system does (:func:`os.fsdecode`).

    Returns
    -------
    str

    Examples
    --------
    >>> display_text("caf\udce9"), display_text("\udce3\udc83\udca9\udce3\udc83\udcb3"), display_text("a\nb\x00")
    ('caf\\xe9', 'ラン', 'a\\nb\\x00')
    >>> display_text(b"caf\xe9.json"), display_text("zero\u200bwidth"), display_text("Zoë ✓")
    ('caf\\xe9.json', 'zero\\u200bwidth', 'Zoë ✓')
    """
    if isinstance(text, bytes | os.PathLike):
        text = os.fsdecode(text)
    text = str(text)
    if text.isprintable():
        return text
    if any(_FS_ESCAPES[0] <= ch <= _FS_ESCAPES[1] for ch in text):
        with contextlib.suppress(UnicodeEncodeError):  # other lone surrogates besides: each is escaped below
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def _clean(value: object) -> tuple[object, bool]:
    """``value`` with every string in it (nested dicts, lists, tuples) through :func:`display_text`; whether any
    changed."""
    if isinstance(value, str):
        shown = display_text(value)
        return shown, shown != value
    if isinstance(value, dict):
        items = [(_clean(k), _clean(v)) for k, v in value.items()]
        if any(k[1] or v[1] for k, v in items):
            return {k[0]: v[0] for k, v in items}, True
        return value, False
    if isinstance(value, list | tuple):
        items = [_clean(v) for v in value]
        if any(changed for _, changed in items):
            return type(value)(v for v, _ in items), True
        return value, False
    return value, False


def displayed(c: Comparison) -> Comparison:
    r"""The comparison with its run names, notes and settings (the gold's path...) through :func:`display_text`.

    Every report format and the plots render this, so they show each run under the same name; a comparison
    whose text is printable already is returned as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from dialeval.stats import compare_measures
    >>> c = compare_measures({"m": np.array([[0.1, 0.5], [0.2, 0.6], [0.3, 0.4]])}, ["caf\udce9", "b"], B=100)
    >>> d = displayed(c)
    >>> d.runs, d.measures[0].runs[0].run, displayed(d) is d
    (('caf\\xe9', 'b'), 'caf\\xe9', True)
    """
    names = {r: display_text(r) for r in c.runs}
    notes, notes_changed = _clean(tuple(c.notes))
    settings, settings_changed = _clean(c.settings)
    if not notes_changed and not settings_changed and all(k == v for k, v in names.items()):
        return c
    measures = tuple(replace(mc, runs=tuple(replace(r, run=names.get(r.run, r.run)) for r in mc.runs),
                             pairs=tuple(replace(p, better=names.get(p.better, p.better),
                                                 worse=names.get(p.worse, p.worse)) for p in mc.pairs),
                             groups=tuple(tuple(names.get(r, r) for r in g) for g in mc.groups))
                     for mc in c.measures)
    return replace(c, runs=tuple(names[r] for r in c.runs), measures=measures, notes=notes, settings=settings)
