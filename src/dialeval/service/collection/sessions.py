"""The policy of a chat, as pure functions (no database, the clock passed in): roles, whose turn, limits, pairing.

Turn-taking is strict alternation. Human-machine: the participant (``USER``) speaks first, then the engine
(``SYSTEM``) answers each turn. Human-human: the first person to arrive is ``USER1`` and speaks first, then
``USER2``, and so on. A chat ends when a participant ends it or when it holds ``max_turns`` turns (all
speakers counted).

Human-human pairing: a person who finds nobody waiting waits; the next person takes the oldest waiting one
who is still there (seen within :data:`WAIT_ALIVE`). Who is waiting is kept in the database, and the service
claims a waiting row inside one locked transaction, so pairing is exact across worker processes.

Examples
--------
>>> next_speaker(False, ["USER", "SYSTEM"])
'USER'
>>> next_speaker(True, ["USER1"])
'USER2'
>>> dialogue_id("IRIS", 42)
'IRIS00042'
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from dialeval.errors import describe
from dialeval.io.wochat import name_pattern
from dialeval.service.errors import Conflict, Invalid
from dialeval.service.names import MARKS, mark_problem, shown_name

STATUSES = ("waiting", "active", "ended", "abandoned")
HUMAN = "human"
MAX_NUMBER = 99_999
MAX_CHATS_PER_CODE = 100
"""Chats one participant code may start in a collection: each takes a number of the collection's 100,000, so
one code cannot spend them all by starting and ending empty chats."""
MAX_UTTERANCE = 2000
MAX_TURNS_RANGE = (2, 1000)
WAIT_ALIVE = timedelta(seconds=30)
"""A waiting person not seen for this long is gone: nobody is paired with them."""

_ENGINE_NAME = re.compile(r"^[A-Za-z](?:[A-Za-z0-9.-]{0,30}[A-Za-z.-])?$")
MAX_PERSON = 40
_PERSON = re.compile(r"^[^\W_](?:[^\W_]|[ .'-]){0,38}(?<=[^\W_])$|^$")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidi embeddings, overrides and isolates: they reorder the text annotators see (``abc`` typed after U+202E
shows as ``cba``). The marks U+200E/U+200F/U+061C, which right-to-left writing uses, stay allowed."""


def roles(human_human: bool) -> tuple[str, str]:
    """The two WOCHAT speaker roles of a chat, the first speaker first."""
    return ("USER1", "USER2") if human_human else ("USER", "SYSTEM")


def next_speaker(human_human: bool, speakers: Sequence[str]) -> str:
    """Whose turn it is after ``speakers`` (the roles of the turns so far, in order): strict alternation."""
    first, second = roles(human_human)
    return first if len(speakers) % 2 == 0 else second


def check_turn(human_human: bool, status: str, speakers: Sequence[str], role: str, max_turns: int) -> None:
    """Refuse a turn by ``role`` that the policy does not allow now (:class:`Conflict`, 409)."""
    if status == "waiting":
        raise Conflict("nobody has joined this chat yet; wait until you are paired")
    if status != "active":
        raise Conflict(f"this chat is {status}; start a new one to chat again")
    if len(speakers) >= max_turns:
        raise Conflict(f"this chat has reached its limit of {max_turns} turns")
    expected = next_speaker(human_human, speakers)
    if expected != role:
        who = "the chat engine's reply" if expected == "SYSTEM" else "the other person's turn"
        raise Conflict(f"it is not your turn: waiting for {who}")


def check_position(position: object, n_turns: int) -> None:
    """Refuse a turn sent for ``position`` (1-based) when the chat's next turn is not that one (:class:`Conflict`,
    409): the same turn sent again after its answer was lost, or a turn from a page that missed some (another
    window). ``None``: the sender gave no position (no check). A position that is no whole number >= 1 is
    :class:`Invalid`.

    Examples
    --------
    >>> check_position(3, 2), check_position(None, 5)
    (None, None)
    >>> check_position(1, 2)
    Traceback (most recent call last):
    dialeval.service.errors.Conflict: this turn was sent as turn 1, but the chat has 2 turns already (the same \
message sent twice, or from another window?); nothing was stored: read the chat again, and send it once more if \
it is still wanted
    """
    if position is None:
        return
    if isinstance(position, bool) or not isinstance(position, int) or position < 1:
        raise Invalid(f"position must be a whole number of at least 1 (the turn's place in the chat), not "
                      f"{describe(position, 40)}")
    if position == n_turns + 1:
        return
    has = f"{n_turns} turn{'' if n_turns == 1 else 's'}"
    has = f"{has} already (the same message sent twice, or from another window?)" if position <= n_turns else \
        f"only {has}"
    raise Conflict(f"this turn was sent as turn {position}, but the chat has {has}; nothing was stored: read the "
                   "chat again, and send it once more if it is still wanted")


def limit_reached(n_turns: int, max_turns: int) -> bool:
    """True when a chat of ``n_turns`` turns must end."""
    return n_turns >= max_turns


def awaiting_reply(human_human: bool, status: str, speakers: Sequence[str], max_turns: int) -> bool:
    """True when a human-machine chat waits for the engine (its last turn is the participant's)."""
    return (not human_human and status == "active" and len(speakers) < max_turns
            and next_speaker(False, speakers) == "SYSTEM")


def check_retry(status: str, speakers: Sequence[str], max_turns: int, after: int) -> None:
    """Refuse a retry (ask the engine again) on a chat that is not going on (:class:`Conflict`, 409).

    A retry on an active chat is always answered, also when no reply is awaited (one arrived meanwhile, e.g.
    for an earlier retry): it adds nothing and returns the turns after ``after``, so sending it again is
    harmless. A chat that has ended (or was abandoned, or waits for a partner) waits for no reply, and a
    retry there is refused, with one exception that keeps a repeated retry harmless: the engine's reply
    ended the chat at its turn limit and ``after`` is the turn before it (the caller has not seen it: a
    retry sent again, or racing the one that got it); that reply comes back.

    >>> check_retry("active", ["USER"], 20, 1)
    >>> check_retry("ended", ["USER", "SYSTEM"], 2, 1)  # the reply that reached the limit, not seen yet
    >>> check_retry("ended", ["USER", "SYSTEM"], 20, 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.service.errors.Conflict: this chat is ended: it waits for no reply, so there is nothing to retry; ...
    """
    if status == "active":
        return
    if status == "waiting":
        raise Conflict("nobody has joined this chat yet: it waits for no reply, so there is nothing to retry")
    if (status == "ended" and limit_reached(len(speakers), max_turns) and speakers[-1] == "SYSTEM"
            and after == len(speakers) - 1):
        return
    raise Conflict(f"this chat is {status}: it waits for no reply, so there is nothing to retry; start a new one "
                   "to chat again")


def is_alive(seen_at: datetime | None, now: datetime, window: timedelta = WAIT_ALIVE) -> bool:
    """True when someone seen at ``seen_at`` counts as still there at ``now``."""
    return seen_at is not None and now - seen_at <= window


def check_chats_started(started: int, cap: int | None = None) -> None:
    """Refuse a new chat for a code that has started ``cap`` chats already (:class:`Conflict`, 409; default
    :data:`MAX_CHATS_PER_CODE`).

    >>> check_chats_started(99)
    >>> check_chats_started(100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.service.errors.Conflict: this code has started 100 chats, the most one code may start in a ...
    """
    cap = MAX_CHATS_PER_CODE if cap is None else cap
    if started >= cap:
        raise Conflict(f"this code has started {started} chats, the most one code may start in a collection; ask "
                       "the organisers for another code")


def dialogue_id(engine_name: str, number: int) -> str:
    """The WOCHAT dialogue id: engine name (or ``human``) and the session's 5-digit number."""
    if not 0 <= number <= MAX_NUMBER:
        raise Conflict(f"the collection is full: WOCHAT ids hold 5 digits (numbers 0 to {MAX_NUMBER})")
    return f"{engine_name}{number:05d}"


def check_engine_name(name: str) -> str:
    """A name usable as ``<system_name>`` and as the id stem (a letter first, no final digit, no ``_``)."""
    if not isinstance(name, str) or not _ENGINE_NAME.match(name) or name.lower() == HUMAN:
        raise Invalid(f"engine name {name!r} is not allowed; use 1-32 letters, digits, '.' or '-', starting with a "
                      "letter and not ending in a digit (it starts every dialogue id, e.g. IRIS00042), "
                      f"and not {HUMAN!r}")
    if (len(name) == 1 and _matches_any(name, string.ascii_letters)) or _common_words_only(name):
        raise Invalid(f"engine name {name!r} is not allowed: the exported chats replace the engine's name wherever "
                      "it stands as a word (SYSTEM_NAME), and it is a common word or a single letter; use a name")
    return name


def check_person_name(name: object, engine: str | None = None) -> str:
    """A participant's nickname (``<user_name>``), NFC-normalised: 0-40 letters (with their combining marks,
    as :func:`dialeval.service.names.mark_problem` allows them), digits, spaces, ``.`` ``'`` ``-``.

    Underscores are refused so that no name can ever occur inside a tag such as ``USER_NAME``. A name made only
    of common words (:data:`COMMON_WORDS`: "you", "I", "the", "you too", "thank you") or of one Latin letter is
    refused too: the export replaces a name wherever it stands as a word, in every turn of the chat
    (:func:`dialeval.service.collection.export.replace_names`), and "you" would become ``USER_NAME`` throughout.
    For the same reason the ``engine``'s name is refused (any case): "I am iris too" was exported as "I am
    SYSTEM_NAME too".
    """
    if not isinstance(name, str):
        raise Invalid(f"nickname {describe(name)} is not text")
    name = unicodedata.normalize("NFC", " ".join(name.split()))
    problem = mark_problem(name)
    if problem:
        raise Invalid(f"nickname {problem}")
    bare = "".join(c for c in name if unicodedata.category(c) not in MARKS)  # a letter's accents and vowel signs
    if len(name) > MAX_PERSON or not _PERSON.match(bare):
        raise Invalid(f"nickname {shown_name(name, 60)} is not allowed; use at most {MAX_PERSON} characters: letters "
                      "(with their accents or vowel signs), digits, spaces, '.', \"'\" or '-', starting and ending "
                      "with a letter or digit (or leave it empty)")
    if name and engine and name.casefold() == unicodedata.normalize("NFC", engine).casefold():
        raise Invalid(f"nickname {name!r} is not allowed: it is the name of the chat system you talk to, and the "
                      "exported chats tell the two apart by name; use another name, or leave it empty")
    if name and ((len(name) == 1 and _matches_any(name, string.ascii_letters)) or _common_words_only(name)):
        raise Invalid(f"nickname {name!r} is not allowed: the exported chats replace your name wherever it stands "
                      "as a word, and it is a common word or a single letter; use a name, or leave it empty")
    return name


COMMON_WORDS = frozenset({
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "each",
    "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
    "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
    "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "yes", "yeah", "ok", "okay",
    "hi", "hello", "hey", "bye", "thanks", "thank", "please", "sorry", "well", "oh", "good", "great", "nice", "fine",
    "sure", "maybe",
})
"""Words a nickname may not consist of only: English function words and the commonest chat words. The export
replaces a participant's name wherever it stands as a word (:func:`check_person_name`)."""


def _common_words_only(name: str) -> bool:
    return all(_matches_any(w, COMMON_WORDS) for w in re.split(r"[ .'-]+", name) if w)


def _matches_any(word: str, texts: Iterable[str]) -> bool:
    """Whether the export's own pattern of ``word`` (:func:`dialeval.io.wochat.name_pattern`, case-insensitive)
    matches one of ``texts`` whole: so a nickname is judged as the export will replace it ("ı" and "İ" match "i"
    and "I" there, "ſ" matches "s", the Kelvin sign "k")."""
    pattern = name_pattern(word)
    return any(pattern.fullmatch(t) for t in texts)


def clean_utterance(text: object) -> str:
    """An utterance as stored: line ends made ``\\n``, outer blanks removed; empty, too long, control
    characters (which XML cannot carry) and bidi overrides (:data:`_BIDI_CONTROL`) are refused
    (:class:`Invalid`, 422)."""
    if not isinstance(text, str):
        raise Invalid(f"utterance {describe(text)} is not text")
    text = _line_ends(text).strip()
    if _unreadable(text):
        raise Invalid("the utterance is empty (or invisible characters only); write something")
    if len(text) > MAX_UTTERANCE:
        raise Invalid(f"the utterance has {len(text)} characters; at most {MAX_UTTERANCE} are allowed")
    if _CTRL.search(text):
        raise Invalid("the utterance holds a control character or a lone surrogate, which XML cannot carry; "
                      "remove it")
    if problem := bidi_problem(text):
        raise Invalid(f"the utterance {problem}")
    return text


def usable_reply(text: object) -> str:
    r"""A chat engine's reply made into an utterance :func:`clean_utterance` allows, instead of refused: the
    engine cannot "remove it" as a participant can, and the same reply would be refused at every retry.

    What :func:`clean_utterance` refuses is removed (control characters and lone surrogates, :data:`_CTRL`;
    bidi embeddings, overrides and isolates, :data:`_BIDI_CONTROL`), line ends are made ``\n`` (tabs and
    newlines stay, as in a participant's turn), and the text is cut to :data:`MAX_UTTERANCE` characters.
    A reply that is not text, or has nothing readable left, is refused (:class:`Invalid`).

    >>> usable_reply(" a\x00b\u202ec\r\nd\te ")
    'abc\nd\te'
    >>> len(usable_reply("x" * 3000)) == MAX_UTTERANCE
    True
    """
    if not isinstance(text, str):
        raise Invalid(f"the reply {describe(text)} is not text")
    text = _BIDI_CONTROL.sub("", _CTRL.sub("", _line_ends(text))).strip()[:MAX_UTTERANCE].rstrip()
    if _unreadable(text):
        raise Invalid("the reply is empty (or invisible characters only) once control characters and bidi "
                      "controls are removed")
    return clean_utterance(text)


def _line_ends(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _unreadable(text: str) -> bool:
    """Blanks only, or invisible format characters only (U+200B, U+FEFF...): nothing an annotator can read."""
    return not text or all(c.isspace() or unicodedata.category(c) == "Cf" for c in text)


def bidi_problem(text: str, *, where: bool = False) -> str | None:
    r"""What is wrong with a text shown to annotators that holds a bidi embedding, override or isolate
    (:data:`_BIDI_CONTROL`: they reorder what annotators see), to follow the text's name in a message; None
    when it holds none. ``where``: name the line and column of the first (for a long text such as guidelines).

    The one rule of utterances (:func:`clean_utterance`) and of an annotation project's guidelines.

    Examples
    --------
    >>> bidi_problem("abc \u200f ok") is None
    True
    >>> bidi_problem("a\nb\u202ec", where=True).split(", which")[0]
    'holds the bidi control U+202E (RIGHT-TO-LEFT OVERRIDE) at line 2, column 2'
    """
    m = _BIDI_CONTROL.search(text)
    if m is None:
        return None
    c = m.group()
    at = ""
    if where:
        line = text.count("\n", 0, m.start()) + 1
        column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        at = f" at line {line}, column {column}"
    return (f"holds the bidi control U+{ord(c):04X} ({unicodedata.name(c)}){at}, which reorders what annotators "
            "see; remove it (the marks U+200E and U+200F are allowed)")
