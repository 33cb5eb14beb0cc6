"""Team names: what a name may hold, when two names are the same, and when they only look the same; and the
plain names of tasks, chat collections and annotation projects (:data:`SLUG`).

- **Allowed characters**: letters, marks, digits, punctuation, symbols and plain spaces. Control and format
  characters (zero-width spaces and joiners, bidi overrides such as U+202E, soft hyphens), lone surrogates,
  private-use and unassigned code points are refused: they make names that look alike or reorder a page.
- **Same name** (:func:`name_key`): NFKC-normalised and case-folded, so ``TeamA``, ``teama`` and the
  full-width ``ＴｅａｍＡ`` are one name. The key is stored in a unique column.
- **Look-alike** (:func:`skeleton`): every character of the key is replaced by one representative of its
  class of confusable characters (Unicode's confusables, UTS #39, as shipped by the maintained
  ``confusable_homoglyphs`` package), so the Cyrillic ``TeamА`` or ``Team1`` beside ``Teaml`` share a skeleton
  with an existing name and are refused. Single characters only: ``rn`` against ``m`` is not caught.

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

from dialeval.errors import describe

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


def name_problem(name: str) -> str | None:
    """Why ``name`` (whitespace already collapsed) is not allowed, or None."""
    for c in name:
        cat = unicodedata.category(c)
        if cat in REFUSED_CATEGORIES or (cat == "Zs" and c != " "):
            label = unicodedata.name(c, REFUSED_CATEGORIES.get(cat, "space"))
            return (f"contains the invisible or control character U+{ord(c):04X} ({label}); letters, digits, "
                    "punctuation and spaces only")
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


def skeleton(name: str) -> str:
    """The look-alike key: each character mapped to its confusable class's representative, before and after
    :func:`name_key` (so ``TeamI`` meets ``Teaml`` through ``I``/``l``, and a Cyrillic ``а`` meets ``a``)."""
    classes = _classes()

    def mapped(text: str) -> str:
        return "".join(classes.get(c, c) for c in text)

    return mapped(name_key(mapped(unicodedata.normalize("NFKC", name))))
