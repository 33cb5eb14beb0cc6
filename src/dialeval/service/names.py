"""Team names: what a name may hold, when two names are the same, and when they only look the same; and the
plain names of tasks, chat collections and annotation projects (:data:`SLUG`).

- **Allowed characters**: letters, marks, digits, punctuation, symbols and plain spaces. Control and format
  characters (zero-width spaces and joiners, bidi overrides such as U+202E, soft hyphens), lone surrogates,
  private-use and unassigned code points are refused: they make names that look alike or reorder a page. So
  are Unicode's default-ignorable code points (:data:`DEFAULT_IGNORABLE`: the Hangul fillers, variation
  selectors, the combining grapheme joiner, ..., though Unicode files some as letters or marks) and symbols
  drawn blank (:data:`BLANK_SYMBOLS`, such as U+2800 BRAILLE PATTERN BLANK): ``Vic2989`` followed by any of them
  is drawn as ``Vic2989`` (:func:`invisible`).
- **Combining marks** (:func:`mark_problem`): a name is stored NFC-normalised; accents, vowel signs and
  viramas are letters' own (``Nguyễn``, ``Zoë``, ``हिन्दी``, typed composed or decomposed), but a name may not
  start with a mark, nor stack more than :data:`MAX_STACKED_MARKS` nonspacing or enclosing marks in a row
  on one character (``a`` and fifty U+0301 draw a tall smear over the leaderboard's rows).
- **Same name** (:func:`name_key`): NFKC-normalised and case-folded, so ``TeamA``, ``teama`` and the
  full-width ``ＴｅａｍＡ`` are one name. The key is stored in a unique column.
- **Look-alike** (:func:`skeleton`): invisible characters (:func:`invisible`) dropped, every character of the
  key is replaced by one representative of its class of confusable characters (Unicode's confusables, UTS #39,
  as shipped by the maintained ``confusable_homoglyphs`` package), so the Cyrillic ``TeamА`` or ``Team1``
  beside ``Teaml`` share a skeleton with an existing name and are refused. Single characters only: ``rn``
  against ``m`` is not caught.

Examples
--------
>>> name_key("ＴｅａｍＡ"), skeleton("TeamА") == skeleton("teama")
('teama', True)
>>> name_problem("Team\\u200bA")
'contains the invisible or control character U+200B (ZERO WIDTH SPACE); letters, digits, punctuation and spaces only'
"""

from __future__ import annotations

import functools
import re
import unicodedata

from dialeval.errors import QUOTE_LIMIT, describe

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""The name of a task, a chat collection or an annotation project: 1-64 characters of ``A-Z a-z 0-9 . _ -``,
starting with a letter or digit (it appears in URLs and file names)."""
SLUG_RULE = "1-64 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)"


def is_slug(name: object) -> bool:
    """Whether ``name`` can name a task, a collection or a project (:data:`SLUG`). A name that cannot is never
    looked up: PostgreSQL refuses NUL in a query's text (a 500), and no row can match it anyway."""
    return isinstance(name, str) and SLUG.fullmatch(name) is not None


def check_slug(name: object, what: str, error: type[Exception]) -> str:
    """``name`` if :func:`is_slug`; else ``error`` saying what was received and what is allowed.

    >>> check_slug("dq-2026", "task", ValueError)
    'dq-2026'
    """
    if not is_slug(name):
        raise error(f"{what} name {describe(name)} is not allowed; allowed are {SLUG_RULE}")
    return name  # type: ignore[return-value]

REFUSED_CATEGORIES = {"Cc": "control", "Cf": "format", "Cs": "surrogate", "Co": "private-use", "Cn": "unassigned",
                      "Zl": "line separator", "Zp": "paragraph separator"}
"""Unicode general categories a name may not hold (Cf: zero-width characters, bidi controls, ...)."""


DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                     (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Unicode's Default_Ignorable_Code_Point ranges (first, last), from DerivedCoreProperties.txt (the same list
from Unicode 14.0, the stdlib's, to 16.0; ``unicodedata`` has no such property): code points a renderer draws
as nothing when it cannot show them. Most are format characters (Cf) already, but the Hangul fillers (U+115F,
U+1160, U+3164, U+FFA0) are letters (Lo) and the variation selectors, U+034F COMBINING GRAPHEME JOINER and the
Khmer inherent vowels are marks (Mn): without this list ``Vic2989`` + U+3164 registers beside ``Vic2989``."""
BLANK_SYMBOLS = frozenset({"\u2800", "\U0001D159"})
"""Symbols (So) drawn as blank space, not default-ignorable: U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL
SYMBOL NULL NOTEHEAD."""


def invisible(c: str) -> bool:
    """Whether the character ``c`` is default-ignorable (:data:`DEFAULT_IGNORABLE`) or a blank symbol
    (:data:`BLANK_SYMBOLS`): drawn as nothing, or as blank space.

    >>> invisible("\u3164"), invisible("\ufe0f"), invisible("\u2800"), invisible("a"), invisible("\u0301")
    (True, True, True, False, False)
    """
    cp = ord(c)
    return c in BLANK_SYMBOLS or any(first <= cp <= last for first, last in DEFAULT_IGNORABLE)


def _refused(c: str) -> bool:
    cat = unicodedata.category(c)
    return cat in REFUSED_CATEGORIES or (cat == "Zs" and c != " ") or invisible(c)


def character(c: str) -> str:
    """``c`` as a message names it: code point and Unicode name (or its kind, for an unnamed one)."""
    return f"U+{ord(c):04X} ({unicodedata.name(c, REFUSED_CATEGORIES.get(unicodedata.category(c), 'unnamed'))})"


def invisible_problem(name: str) -> str | None:
    """Why ``name`` is not allowed for an invisible character (:func:`invisible`), or None.

    >>> invisible_problem("Vic2989\u3164")
    'contains the invisible character U+3164 (HANGUL FILLER); letters, digits, punctuation and spaces only'
    """
    for c in name:
        if invisible(c):
            return f"contains the invisible character {character(c)}; letters, digits, punctuation and spaces only"
    return None


def name_problem(name: str) -> str | None:
    """Why ``name`` (whitespace already collapsed) is not allowed, or None: a character of
    :data:`REFUSED_CATEGORIES`, a space other than U+0020, or an invisible character (:func:`invisible`)."""
    for c in name:
        if _refused(c):
            return (f"contains the invisible or control character {character(c)}; letters, digits, "
                    "punctuation and spaces only")
        if c == "\ufffd":  # a form's bytes that were not UTF-8 (%ff%fe) arrive as U+FFFD
            return (f"contains {character(c)}, which stands for bytes that were not UTF-8 text; send the name "
                    "as UTF-8")
    return None


MAX_STACKED_MARKS = 3
"""Nonspacing or enclosing marks (Unicode Mn, Me) a name may hold in a row, after NFC. Real writing stacks
up to three on one letter: Vietnamese typed decomposed (``e`` U+0302 U+0303), Thai (a vowel and a tone mark),
Hebrew with full pointing (``שַּׁ``: patah, dagesh, shin dot), Tibetan (``སྒྲོ``: two subjoined letters and a
vowel). Spacing marks (Mc, such as most Devanagari vowel signs) take room beside their letter, not above it,
and end a run."""
STACKING = frozenset({"Mn", "Me"})
MARKS = frozenset({"Mn", "Mc", "Me"})


def shown_name(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message, every combining mark, invisible and non-printable character written as an escape
    (a message must not draw the smear it refuses), cut to about ``limit`` characters.

    >>> print(shown_name("a\\u0301\\u0301b"))
    'a\\u0301\\u0301b'
    """
    out, size = [], 0
    for c in text:
        if unicodedata.category(c) in MARKS or not c.isprintable() or invisible(c):
            c = c.encode("unicode_escape", "backslashreplace").decode("ascii")
        size += len(c)
        if size > limit:  # cut between characters, never inside an escape
            return "'" + "".join(out) + f"...' ({len(text)} characters in all)"
        out.append(c)
    return "'" + "".join(out) + "'"


def mark_problem(name: str) -> str | None:
    """Why the combining marks of ``name`` (NFC-normalised already) are not allowed, or None.

    A name may not start with a combining mark (it has no letter to sit on and draws over whatever the page
    shows before it), nor hold more than :data:`MAX_STACKED_MARKS` nonspacing or enclosing marks in a row, nor
    any invisible character (:func:`invisible_problem`: variation selectors and U+034F are marks that draw
    nothing; the Hangul fillers are letters that draw nothing). The nicknames of chat participants are checked
    with this function alone (``collection.sessions.check_person_name``), so it refuses them too.

    >>> mark_problem(unicodedata.normalize("NFC", "Nguye\\u0302\\u0303n")), mark_problem("हिन्दी")
    (None, None)
    >>> print(mark_problem("a" + "\\u0301" * 5))  # doctest: +ELLIPSIS
    'a\\u0301\\u0301\\u0301\\u0301\\u0301' has 5 combining marks in a row (U+0301 COMBINING ACUTE ACCENT) at ...
    """
    invisible_char = invisible_problem(name)
    if invisible_char:
        return f"{shown_name(name)} {invisible_char}"
    if name and unicodedata.category(name[0]) in MARKS:
        c = name[0]
        return (f"{shown_name(name)} starts with the combining mark U+{ord(c):04X} ({unicodedata.name(c, 'mark')}),"
                " which has no letter to sit on; a mark may only follow a letter or digit")
    run = 0
    for i, c in enumerate(name):
        run = run + 1 if unicodedata.category(c) in STACKING else 0
        if run > MAX_STACKED_MARKS:
            start = i - run + 1
            end = start
            while end < len(name) and unicodedata.category(name[end]) in STACKING:
                end += 1
            kinds = ", ".join(f"U+{ord(m):04X} {unicodedata.name(m, 'mark')}" for m in dict.fromkeys(name[start:end]))
            return (f"{shown_name(name)} has {end - start} combining marks in a row ({kinds}) at character "
                    f"{start + 1}; at most {MAX_STACKED_MARKS} in a row are allowed on one letter (accents and vowel "
                    "signs as in 'Nguyễn', 'Zoë' or 'हिन्दी' are fine)")
    return None


def name_key(name: str) -> str:
    """The name as uniqueness sees it: NFKC, case-folded, NFKC again (case folding can denormalise)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


@functools.cache
def _classes() -> dict[str, str]:
    """Each confusable character -> the representative (smallest code point) of its class."""
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    for char, glyphs in confusables_data.items():
        for g in glyphs:
            other = g["c"].strip("\u200e\u200f")  # the data wraps right-to-left glyphs in direction marks
            if len(char) == 1 and len(other) == 1:
                a, b = find(char), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {c: find(c) for c in parent}


def visible(text: str) -> str:
    """``text`` without its invisible characters (:func:`invisible`), its spaces collapsed again.

    >>> visible("name \u3164"), visible("Vic\u034f2989\ufe0f")
    ('name', 'Vic2989')
    """
    return " ".join("".join(c for c in text if not invisible(c)).split())


def skeleton(name: str) -> str:
    """The look-alike key: invisible characters dropped (:func:`visible`), each character mapped to its
    confusable class's representative, before and after :func:`name_key` (so ``TeamI`` meets ``Teaml``
    through ``I``/``l``, a Cyrillic ``а`` meets ``a``, and ``Vic2989`` + U+3164 meets ``Vic2989``).

    >>> skeleton("Vic2989\u3164") == skeleton("\u3164Vic2989") == skeleton("vic2989")
    True
    """
    classes = _classes()

    def mapped(text: str) -> str:
        return visible("".join(classes.get(c, c) for c in text))

    return mapped(name_key(mapped(unicodedata.normalize("NFKC", name))))
