"""The one check that a run and its gold share dialogues, with the message both scorers give."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from dialeval.errors import DialevalError, quote

ID_LIST_CHARS = 100
"""Each list of ids in the message is cut to about this many characters."""


def id_sample(ids: Sequence[str], limit: int = ID_LIST_CHARS) -> str:
    """The first ids, comma-separated, cut to about ``limit`` characters (``...`` when cut).

    Examples
    --------
    >>> id_sample(["a", "b", "c"]), id_sample([str(i) * 30 for i in range(9)], 70)
    ('a, b, c', '000000000000000000000000000000, 111111111111111111111111111111...')

    Control characters are escaped as in every message (:func:`dialeval.errors.quote`):

    >>> id_sample(["a\\nb", "c"])
    'a\\\\nb, c'
    """
    out: list[str] = []
    used = 0
    for i in ids:
        i = quote(i, limit)  # a newline or a NUL in an id does not break the one-line message
        if len(i) > limit:
            i = i[: limit - 3] + "..."
        if out and used + len(i) + 2 > limit:
            return ", ".join(out) + "..."
        out.append(i)
        used += len(i) + 2
    return ", ".join(out)


NORMALISATION_PAIRS = 3
"""The normalisation note shows at most this many pairs of ids."""


def _form(text: str) -> str:
    """The Unicode normalisation form ``text`` is in: ``NFC``, ``NFD`` or ``neither NFC nor NFD``."""
    for form in ("NFC", "NFD"):
        if unicodedata.is_normalized(form, text):
            return form
    return "neither NFC nor NFD"


def normalisation_note(unmatched: Iterable[str], other: Iterable[str], *, sides: tuple[str, str] = ("run", "gold"),
                       limit: int = NORMALISATION_PAIRS) -> str:
    """Say which unmatched ids equal ids of the other file only after Unicode normalisation (NFC), or ``""``.

    Ids are matched exactly, as the official scripts compare them (as Python strings): ``café`` written with a
    precomposed ``é`` (NFC) and with ``e`` + a combining accent (NFD) look the same but do not match. This note
    makes that cause visible: it shows up to ``limit`` such pairs with their characters escaped (``ascii``) and
    the form each side is in.

    Parameters
    ----------
    unmatched : iterable of str
        The ids of one side that matched nothing (``sides[0]``: a run's extra ids).
    other : iterable of str
        The ids of the other side they are compared with (``sides[1]``: the gold's ids, or its missing ids).
    sides : (str, str), default ('run', 'gold')
        How the message names the two sides.
    limit : int, default 3
        Pairs shown.

    Returns
    -------
    str
        ``"; N run id(s) differ from gold ids only in Unicode normalisation ..."``, or ``""`` when there is none.

    Examples
    --------
    >>> normalisation_note(["cafe\\u0301", "x"], ["caf\\xe9", "y"])[:64]
    '; 1 run id(s) differ from gold ids only in Unicode normalisation'
    >>> print(normalisation_note(["cafe\\u0301"], ["caf\\xe9"]).split("accent): ")[1].split(";")[0])
    run 'cafe\\u0301' (NFD) vs gold 'caf\\xe9' (NFC)
    >>> normalisation_note(["a"], ["b"])
    ''
    """
    unmatched = [u for u in unmatched if isinstance(u, str) and not u.isascii()]
    if not unmatched:
        return ""
    by_nfc: dict[str, str] = {}
    for o in other:
        if isinstance(o, str) and not o.isascii():
            by_nfc.setdefault(unicodedata.normalize("NFC", o), o)
    pairs = [(u, o) for u in unmatched
             if (o := by_nfc.get(unicodedata.normalize("NFC", u))) is not None and o != u]
    if not pairs:
        return ""
    shown = ", ".join(f"{sides[0]} {u!a} ({_form(u)}) vs {sides[1]} {o!a} ({_form(o)})"
                      for u, o in pairs[:limit])
    more = f" (+{len(pairs) - limit} more)" if len(pairs) > limit else ""
    return (f"; {len(pairs)} {sides[0]} id(s) differ from {sides[1]} ids only in Unicode normalisation (NFC vs "
            f"NFD: an é as one character or as e + a combining accent): {shown}{more}; ids are matched exactly, as "
            "the official scripts do: write both files in one form (NFC)")


def check_common(run_ids: Sequence[str], gold_ids: Sequence[str], n_common: int, file: str | None) -> None:
    """Raise when no dialogue of the run is in the gold (a test-set run against a training file, say).

    Examples
    --------
    >>> check_common(["t1", "t2"], ["g1"], 0, "run.json")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: run.json: 0 of 2 run ids are in the gold; run ids: t1, t2; gold ids: g1

    Ids that differ only in their Unicode normalisation (see :func:`normalisation_note`) are named as such.
    """
    if n_common == 0:
        raise DialevalError(f"0 of {len(run_ids)} run ids are in the gold; run ids: {id_sample(run_ids)}; "
                            f"gold ids: {id_sample(gold_ids)}{normalisation_note(run_ids, gold_ids)}", file=file)
