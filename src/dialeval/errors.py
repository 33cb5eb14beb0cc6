"""The one exception type of dialeval, carrying where the problem is.

Every reader, measure and scorer raises :class:`DialevalError` (a ``ValueError``) for bad input. Its
message reads ``FILE: dialogue ID: field: what is wrong`` with the parts that are known; the CLI prints
it as one ``error: ...`` line and exits 2, the service returns it as a 422.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Sequence

QUOTE_LIMIT = 100
"""User values quoted in messages are cut to about this many characters (a 10 MB id is not echoed whole)."""


class DialevalError(ValueError):
    """Bad input, with its location.

    Parameters
    ----------
    message : str
        What is wrong: what was received and what is allowed.
    file : str, optional
        The file the input came from.
    dialogue : str, optional
        The dialogue id.
    field : str, optional
        The field inside the dialogue (``quality.A``, ``nugget[2]``, ``turns[1].sender``...).

    Examples
    --------
    >>> str(DialevalError("unknown bin 'X'", file="run.json", dialogue="42", field="nugget[0]"))
    "run.json: dialogue 42: nugget[0]: unknown bin 'X'"
    """

    def __init__(self, message: str, *, file: str | None = None, dialogue: str | None = None,
                 field: str | None = None) -> None:
        self.message = message
        self.file = file
        self.dialogue = dialogue
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.dialogue is not None:
            parts.append(f"dialogue {quote(self.dialogue)}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)

    def located(self, *, file: str | None = None, dialogue: str | None = None,
                field: str | None = None) -> DialevalError:
        """Return a copy with missing location parts filled in (existing parts win)."""
        return DialevalError(self.message, file=self.file or file,
                             dialogue=self.dialogue if self.dialogue is not None else dialogue,
                             field=self.field or field)


def refused(what: str, value: object, allowed: str) -> DialevalError:
    """The error for one refused value: ``{what} {value} is not allowed; allowed are {allowed}``.

    It keeps ``what`` (how the library names the value: ``B =``, ``alpha``) and ``detail`` (the rest), so that a
    caller that knows the value by another name says it again under that name: the command line, under the
    option its user typed (:func:`dialeval.cli._common.named_as_options`: ``-B 0 is not allowed; ...``).

    Examples
    --------
    >>> e = refused("B =", 0, "integers >= 1")
    >>> str(e), e.what, e.detail
    ('B = 0 is not allowed; allowed are integers >= 1', 'B =', '0 is not allowed; allowed are integers >= 1')
    """
    detail = f"{describe(value)} is not allowed; allowed are {allowed}"
    e = DialevalError(f"{what} {detail}")
    e.what, e.detail = what, detail
    return e


def expect_instance(value: object, cls: type, what: str, hint: str = "") -> object:
    """``value`` if it is a ``cls``, else the error saying what was received (a function given ``None`` where it
    takes a model or a comparison raised an AttributeError deep inside).

    >>> expect_instance(3, str, "name")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: name must be a str; received 3
    """
    if not isinstance(value, cls):
        name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
        raise DialevalError(f"{what} must be a {name}; received {describe(value)}{hint}")
    return value


class DialevalWarning(UserWarning):
    """Something about the input or the settings the user should know that does not stop the work (a model
    predicting its own training dialogues, too few resamples for the level asked). The CLI prints each as one
    ``warning: ...`` line on stderr; in Python, :mod:`warnings` filters select them by this category."""


def first_few(items: Sequence, limit: int = 5, *, total: int | None = None,
              show: Callable[[object], str] | None = None) -> str:
    """The first ``limit`` of ``items`` as a message lists them (each through ``show``, :func:`quote` by default)
    and how many more there are (of ``total``, ``len(items)`` by default).

    Examples
    --------
    >>> first_few(["d1", "d2", "d3"], 2), first_few([1, 2], total=9), first_few([])
    ('d1, d2 (+1 more)', '1, 2 (+7 more)', '')
    """
    first = items[:limit]
    more = (len(items) if total is None else total) - len(first)
    return ", ".join((show or quote)(i) for i in first) + (f" (+{more} more)" if more > 0 else "")


def quote(text: object, limit: int = QUOTE_LIMIT) -> str:
    """A user's string as it may appear in a message: non-printable characters escaped, cut to ``limit``.

    Control characters, lone surrogates and other non-printable characters are written as escapes
    (``\\x00``, ``\\ud800``), so a message is always printable UTF-8; a long value keeps its first
    ``limit`` characters and says how long it was.

    Examples
    --------
    >>> quote("d1"), quote("a\\x00b"), quote("x" * 300)[-28:]
    ('d1', 'a\\\\x00b', '... (300 characters in all)')
    """
    text = str(text)
    head = text[:limit]
    if not head.isprintable():
        head = "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                       for c in head)
    return head if len(text) <= limit else f"{head}... ({len(text)} characters in all)"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, QUOTE_LIMIT, QUOTE_LIMIT, QUOTE_LIMIT
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 6


def describe(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A short repr of a received value for error messages (any size or depth; cut to about ``limit``).

    Examples
    --------
    >>> describe("abc"), describe([[[[1]]]]), len(describe("x" * 10**6)) <= 100
    ("'abc'", '[[[[...]]]]', True)
    """
    try:
        text = _REPR.repr(value)
    except (RecursionError, ValueError):  # e.g. an int of more digits than Python prints
        text = f"<{type(value).__name__}>"
    text = quote(text, limit) if not text.isprintable() else text
    return text if len(text) <= limit else text[: limit - 3] + "..."


def suggest(name: object, allowed: object) -> str:
    """``"; did you mean 'x'?"`` naming the allowed name closest to ``name`` (difflib), or ``""``.

    Examples
    --------
    >>> suggest("quaility", ["id", "quality", "nugget"]), suggest("x", ["O", "T", "X"]), suggest("zzz", ["id"])
    ("; did you mean 'quality'?", "; did you mean 'X'?", '')
    """
    import difflib

    same = [str(a) for a in allowed if str(a).lower() == str(name).lower()]  # type: ignore[attr-defined]
    if same:
        return f"; did you mean {same[0]!r}?"
    close = difflib.get_close_matches(str(name), [str(a) for a in allowed], n=1, cutoff=0.6)  # type: ignore[attr-defined]
    return f"; did you mean {close[0]!r}?" if close else ""
