"""WOCHAT chat-session logs with turn-level subjective annotations (FORMATS.md §2): read and write XML.

One ``<dialogue id="IRIS00042">`` per session: ``<system_name>``/``<user_name>`` (human-machine) or
``<user1_name>``, ``<user2_name>``, ... (human-human), ``<timestamp>``, then ``<turn id="1">`` with
``<speaker>``, ``<utterance>`` and one ``<annotator id="...">`` per annotator holding empty tags: exactly one
of ``<VALID/>``, ``<ACCEPTABLE/>``, ``<INVALID/>`` (ordinal, in that order) and optionally ``<POSITIVE/>``,
``<NEGATIVE/>``, ``<OFFENSIVE/>``, ``<SWEARLANG/>``, ``<ISMACHINE/>``.

Rules checked on reading (each violation is a :class:`~dialeval.DialevalError` naming file, dialogue, turn):

- the dialogue id is a name (starting with a letter) followed by exactly 5 digits, ``00000``-``99999``;
- ``<speaker>`` is one of the roles declared by the ``*_name`` tags (``SYSTEM``, ``USER``, ``USER1``...);
- utterances contain no declared name (whole word, in any case and Unicode spelling: compared after NFC and
  case folding, :func:`name_pattern`): it must read ``SYSTEM_NAME`` etc. (``names="replace"`` replaces
  instead, ``names="keep"`` lets it be);
- each annotator gives exactly one of VALID / ACCEPTABLE / INVALID; annotator ids are unique per turn;
- other tags in a turn (timestamps, context, metadata) and in an annotator are kept in ``meta``.

The guidelines print the tags as ``</VALID>``; that spelling is not well-formed XML, but the reader accepts
it inside ``<annotator>`` (never in a comment or a CDATA section) and records each place in
``corpus.meta["notices"]``. Texts (utterances, speakers, names) are plain text: an element inside one is an
error, not a text cut short. The writer (:mod:`dialeval.io.wochat_writer`) always
emits ``<VALID/>``.

XML is parsed safely: entity declarations (a "billion laughs" file), external entities, a DOCTYPE's internal
subset (whose ``<!ATTLIST>`` could supply annotator ids) and network access are refused, and files over
``max_bytes`` are not read. A file with a DOCTYPE (any ``<!`` but a comment or CDATA) is parsed with
:mod:`defusedxml`, which refuses them explicitly; one without, which can declare nothing, with ElementTree's C
parser (:func:`parse_xml`). A file is decoded as XML says (:func:`xml_text`: byte-order mark,
else the declared encoding, else UTF-8) before anything reads it.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import DefusedXmlException, DTDForbidden
from defusedxml.ElementTree import DefusedXMLParser

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, describe
from dialeval.io._files import MAX_BYTES, as_path, files_in, read_bounded
from dialeval.io.text import utf16_without_bom

VALIDITY = "validity"
VALIDITY_TAGS = ("VALID", "ACCEPTABLE", "INVALID")
OPTIONAL_TAGS = ("POSITIVE", "NEGATIVE", "OFFENSIVE", "SWEARLANG", "ISMACHINE")
BINARY_LEVELS = ("no", "yes")
NAME_POLICIES = ("error", "replace", "keep")
ID_PATTERN = re.compile(r"^(?P<name>[^\W\d][\w.-]*?)(?<![0-9])(?P<number>[0-9]{5})$")
ID_RULE = "a chatbot name (or 'human') followed by a 5-digit number 00000-99999, e.g. 'IRIS00042'"
ROLES = r"SYSTEM|USER[0-9]*"
"""The WOCHAT speaker roles (a regular expression): SYSTEM, USER, USER1, USER2..."""
NAME_TAG_IN_TEXT = re.compile(rf"\b({ROLES})_NAME\b")
"""A speaker's name tag inside an utterance (``SYSTEM_NAME``, ``USER1_NAME``): the name replaced by its role."""
_NAME_TAG = re.compile(rf"^({ROLES.lower()})_name$")
_MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)"                                   # a comment (to the end if it is not closed)
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)"                        # a CDATA section
    r"|<\?.*?(?:\?>|\Z)"                                   # a processing instruction, the XML declaration
    r"|<!DOCTYPE[^\[>]*(?:\[.*?\][^>]*)?>"                 # a document type declaration
    r"|(?P<annotator></?annotator(?=[\s/>])(?:[^>\"']|\"[^\"]*\"|'[^']*')*>)"
    r"|<(?P<end>/?)\s*(?P<tag>" + "|".join(VALIDITY_TAGS + OPTIONAL_TAGS) + r")\s*(?P<empty>/?)>",
    re.DOTALL)
"""What :func:`fix_guideline_tags` looks at: the annotation tags, the ``<annotator>`` tags around them, and the
parts of a file whose text is not markup (comments, CDATA, processing instructions, a DOCTYPE), passed over."""
_GUIDELINE_END = re.compile(r"</\s*(?:" + "|".join(VALIDITY_TAGS + OPTIONAL_TAGS) + r")\s*/?>")
"""An end tag of an annotation tag anywhere: without one, there is nothing to rewrite (the quick test)."""
_XML_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_NEWLINE = b"\n"
_XML_DECLARED = re.compile(rb"""^<\?xml\s[^>]*?\bencoding\s*=\s*["']([^"']*)["']""")
EDGE_LAYOUT = re.compile(r"^\s*\n\s*|\s*\n\s*$")
"""Blanks with a line break at either end of an element's text: the layout of a pretty-printed file."""
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
"""XML's ``xml:space`` attribute (``"preserve"``: every blank of the element's text is data, XML 1.0 §2.10)."""
DIALOGUE_KEYS = ("timestamp", "source_id")


def validity_scale() -> Scale:
    """VALID > ACCEPTABLE > INVALID, an ordinal turn scale."""
    return Scale(VALIDITY, VALIDITY_TAGS, "ordinal", "turn", None,
                 "WOCHAT: VALID (semantically and pragmatically valid), ACCEPTABLE (pragmatically acceptable), "
                 "INVALID (definitely invalid)")


def binary_scale(tag: str) -> Scale:
    """The per-annotator yes/no scale of an optional WOCHAT tag (``POSITIVE`` -> scale ``positive``)."""
    return Scale(tag.lower(), BINARY_LEVELS, "nominal", "turn", None, f"WOCHAT optional tag <{tag}/>: given or not")


def role_of(sender: str) -> str:
    """The WOCHAT speaker role of a corpus sender (``system`` -> ``SYSTEM``)."""
    return sender.upper()


def fold(text: str) -> str:
    """``text`` for caseless matching: NFC, case-folded, NFC again (``Straße`` and ``STRASSE``, ``Zoë`` precomposed
    and as ``e`` + a combining diaeresis, all fold alike).

    >>> fold("Straße") == fold("STRASSE"), fold("Zo\u00eb") == fold("Zoe\u0308")
    (True, True)
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def _joins(segment: str, ch: str) -> bool:
    """Whether NFC may combine ``ch`` with the ``segment`` before it (a combining mark, a Hangul jamo...)."""
    if unicodedata.combining(ch):
        return True
    nfc = unicodedata.normalize
    return nfc("NFC", segment + ch) != nfc("NFC", segment) + nfc("NFC", ch)


def _segments(text: str) -> list[tuple[int, int]]:
    """``text`` cut where NFC never joins the characters on either side (spans of ``text``)."""
    out, start = [], 0
    for i in range(1, len(text)):
        ch = text[i]
        if ch >= "\u0300" and _joins(text[start:i], ch):   # nothing below U+0300 joins what comes before it
            continue
        out.append((start, i))
        start = i
    out.append((start, len(text)))
    return out


@dataclass(frozen=True)
class NameMatch:
    """One occurrence of a name found by :class:`NamePattern` (as much of :class:`re.Match` as its callers use)."""

    string: str
    begin: int
    stop: int

    def group(self, index: int = 0) -> str:
        if index != 0:
            raise IndexError("no such group")
        return self.string[self.begin:self.stop]

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop

    def span(self) -> tuple[int, int]:
        return self.begin, self.stop


class NamePattern:
    """Whole-word occurrences of a declared speaker name, in any case and Unicode spelling (see
    :func:`name_pattern`); ``search``, ``fullmatch``, ``sub`` and ``subn`` as a compiled pattern has them."""

    def __init__(self, name: str) -> None:
        self.name = name
        # what the reader always matched: Python's case-insensitive regex (it takes 'ı' and 'İ' for 'i', 'ſ' for 's')
        self._raw = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", re.IGNORECASE)
        self._ascii = name.isascii()
        self._folded = re.compile(r"(?<!\w)" + re.escape(fold(name)) + r"(?!\w)", re.IGNORECASE)

    def __repr__(self) -> str:
        return f"NamePattern({self.name!r})"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The occurrences in ``text``, leftmost first, not overlapping: those of the name as written and those
        of its folded form (:func:`fold`) in the folded text, both only where they begin and end on characters
        NFC keeps apart (``Zoe`` is not in ``Zoe`` + a combining diaeresis)."""
        raw = [m.span() for m in self._raw.finditer(text)]
        if text.isascii():  # folding ASCII is lower-casing: the positions are those of ``text``
            return raw if self._ascii else _leftmost(raw + [m.span() for m in self._folded.finditer(text)])
        if not raw and self._folded.search(fold(text)) is None:
            return []  # the usual case, without cutting the text into segments
        segments = _segments(text)
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        parts, pos = [], 0
        for a, b in segments:
            part = fold(text[a:b])
            starts[pos] = a
            pos += len(part)
            ends[pos] = b
            parts.append(part)
        bounds = {a for a, _ in segments} | {len(text)}
        found = [(a, b) for a, b in raw if a in bounds and b in bounds]
        found += [(starts[m.start()], ends[m.end()]) for m in self._folded.finditer("".join(parts))
                  if m.start() in starts and m.end() in ends]
        return _leftmost(found)

    def search(self, text: str) -> NameMatch | None:
        found = self.spans(text)
        return NameMatch(text, *found[0]) if found else None

    def fullmatch(self, text: str) -> NameMatch | None:
        return NameMatch(text, 0, len(text)) if (0, len(text)) in self.spans(text) else None

    def subn(self, repl: str, text: str) -> tuple[str, int]:
        """``text`` with every occurrence replaced by ``repl`` (literal text), and how many there were."""
        found = self.spans(text)
        if not found:
            return text, 0
        out, last = [], 0
        for a, b in found:
            out += [text[last:a], repl]
            last = b
        out.append(text[last:])
        return "".join(out), len(found)

    def sub(self, repl: str, text: str) -> str:
        return self.subn(repl, text)[0]


def _leftmost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, the longest of those starting together kept, overlaps of a kept span dropped."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(set(spans), key=lambda s: (s[0], -s[1])):
        if not out or a >= out[-1][1]:
            out.append((a, b))
    return out


def name_pattern(name: str) -> NamePattern:
    """Whole-word occurrences of a declared speaker name, in any case and Unicode spelling.

    Text and name are compared after NFC and case folding (:func:`fold`): ``Zoë`` is found in ``hi Zoë!``
    whether either writes ``ë`` as one character or as ``e`` + a combining diaeresis, ``Straße`` in
    ``STRASSE``; what Python's case-insensitive regex matches is found too (``İris`` in ``iris``). A name
    is a whole word: not inside a longer word, nor followed by a combining mark.

    Examples
    --------
    >>> p = name_pattern("Zo\u00eb")
    >>> p.sub("SYSTEM_NAME", "hi Zoe\u0308! ZO\u00cb? Zoey"), name_pattern("Straße").subn("X", "STRASSE strasse")
    ('hi SYSTEM_NAME! SYSTEM_NAME? Zoey', ('X X', 2))
    >>> name_pattern("Zoe").search("Zoe\u0308") is None, name_pattern("STRASSE").search("die Straße").group(0)
    (True, 'Straße')
    """
    return NamePattern(name)


# ---------------------------------------------------------------------------------------------- reading


def xml_text(data: bytes, file: str | None = None) -> str:
    """The text of an XML file's bytes, decoded as XML says (XML 1.0 appendix F): by its byte-order mark (UTF-8,
    UTF-16), as UTF-16 when it starts with ``<`` or ``<?`` in two-byte characters, else by the encoding its
    declaration names (``<?xml version="1.0" encoding="ISO-8859-1"?>``), UTF-8 when it names none.

    One decoding for every WOCHAT file, before anything looks at its text (the guidelines' ``</VALID>``
    spelling is read alike in UTF-8 and UTF-16); the parser is then given the text, not the bytes.

    Examples
    --------
    >>> xml_text('<?xml version="1.0" encoding="UTF-16"?><a>é</a>'.encode("utf-16"))[-8:]
    '<a>é</a>'
    >>> xml_text(b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\\xe9</a>')[-8:]
    '<a>é</a>'
    """
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) or data.startswith((b"\0\0\0<", b"<\0\0\0")):
        raise DialevalError("the file is UTF-32 text, which XML parsers do not read; allowed are UTF-8, UTF-16 "
                            "and the encodings an XML declaration may name: save it as UTF-8", file=file)
    bom, codec = next(((b, c) for b, c in _XML_BOMS if data.startswith(b)), (b"", ""))
    if not codec:
        codec = utf16_without_bom(data)
    if not codec:
        m = _XML_DECLARED.match(data)
        codec = m.group(1).decode("ascii", "replace") if m else "utf-8"
        if re.fullmatch(r"(?i)utf-?(16|32)(-?[lb]e)?|ucs-?[24]", codec):
            raise DialevalError(f"the XML declaration names the encoding {codec!r}, but the file is not {codec} text "
                                "(it has no byte-order mark and its characters are one byte wide); allowed is the "
                                "file's true encoding: correct the declaration", file=file)
    if not bom and not _text_encoding(codec):
        raise DialevalError(f"the XML declaration names the encoding {describe(codec)}, which is not known as a text "
                            "encoding; allowed are UTF-8, UTF-16 and the character sets XML names (ISO-8859-1, "
                            "Shift_JIS...)", file=file)
    try:
        return data[len(bom):].decode(codec)
    except UnicodeDecodeError as e:
        at = e.start + len(bom)
        line = "" if codec.startswith("utf-16") else f", line {data.count(_NEWLINE, 0, at) + 1}"
        raise DialevalError(f"not {codec} text ({e.reason} at byte {at}{line}); allowed is text in the "
                            "encoding of its XML declaration (UTF-8 when it names none): save the file as UTF-8 "
                            "or declare its encoding", file=file) from None


_ENC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")
"""XML's EncName: the form of an encoding's name in a declaration."""
NOT_CHARACTER_SETS = frozenset({"unicode-escape", "raw-unicode-escape", "utf-7", "punycode", "idna", "undefined",
                                "unicode-internal", "mbcs", "oem"})
"""Python codecs that decode bytes to text but are no character set: escapes (``\\u00e9`` read as ``é``, ``\\x3c``
as ``<``, so text could turn into markup), UTF-7, IDNA, Punycode, or a codec that always fails."""


def _text_encoding(name: str) -> bool:
    """Whether ``name``, from a declaration, is an XML EncName that Python decodes as a character set."""
    if not _ENC_NAME.fullmatch(name):
        return False
    try:
        info = codecs.lookup(name)
    except LookupError:
        return False
    return getattr(info, "_is_text_encoding", True) and info.name not in NOT_CHARACTER_SETS


def fix_guideline_tags(text: str) -> tuple[str, list[tuple[int, str]]]:
    """Rewrite the guidelines' ``</VALID>`` spelling (an end tag with no start) as ``<VALID/>`` inside
    ``<annotator>`` elements, the only place annotation tags belong.

    A ``</VALID>`` that closes an open ``<VALID>`` is left alone, and so is any text that is not markup:
    comments, CDATA sections, processing instructions and a DOCTYPE (an utterance may show the tag). Returns
    the new text and the (line, tag) of every rewrite.

    Examples
    --------
    >>> fix_guideline_tags("<annotator id='a'>\\n</VALID> </POSITIVE></annotator>")
    ("<annotator id='a'>\\n<VALID/> <POSITIVE/></annotator>", [(2, 'VALID'), (2, 'POSITIVE')])
    >>> fix_guideline_tags("<utterance><![CDATA[</VALID>]]></utterance><!-- </VALID> -->")[1]
    []
    """
    if not _GUIDELINE_END.search(text):
        return text, []
    out, fixes, stack = [], [], []
    inside = 0
    last, line, line_pos = 0, 1, 0
    for m in _MARKUP.finditer(text):
        if m.group("annotator"):
            if m.group(0).startswith("</"):
                inside = max(inside - 1, 0)
            elif not m.group(0).endswith("/>"):
                inside += 1
                stack = []
            continue
        tag = m.group("tag")
        if not tag or not inside:
            continue  # a comment, CDATA, PI or DOCTYPE passed over; a tag outside an annotator left to the parser
        if not m.group("end"):
            if not m.group("empty"):
                stack.append(tag)
            continue
        if not m.group("empty") and stack and stack[-1] == tag:
            stack.pop()
            continue
        line += text.count("\n", line_pos, m.start())
        line_pos = m.start()
        out.append(text[last:m.start()])
        out.append(f"<{tag}/>")
        last = m.end()
        fixes.append((line, tag))
    if not fixes:
        return text, []
    out.append(text[last:])
    return "".join(out), fixes


class _InternalSubset(DTDForbidden):
    """A DOCTYPE with declarations of its own (``<!DOCTYPE d [...]>``), and the line where it starts."""

    def __init__(self, name: str, sysid: str | None, pubid: str | None, line: int) -> None:
        super().__init__(name, sysid, pubid)
        self.line = line


class _Parser(DefusedXMLParser):
    """defusedxml's parser (no entity declarations, no external entities, no network) refusing, too, a DTD's
    internal subset: its ``<!ATTLIST>`` declarations would supply attribute values (an annotator's id) and
    defaults that the file does not show. A bare ``<!DOCTYPE dialogue>`` (or one naming an external DTD, which
    is never loaded) is harmless and allowed. The refusal comes at the subset's end, so that an entity
    declaration in it is refused as such first."""

    def __init__(self) -> None:
        super().__init__(target=ET.TreeBuilder())
        self._subset: tuple | None = None
        self.parser.StartDoctypeDeclHandler = self._start_doctype
        self.parser.EndDoctypeDeclHandler = self._end_doctype

    def _start_doctype(self, name: str, sysid: str | None, pubid: str | None, has_internal_subset: int) -> None:
        if has_internal_subset:
            self._subset = (name, sysid, pubid, self.parser.CurrentLineNumber)

    def _end_doctype(self) -> None:
        if self._subset is not None:
            raise _InternalSubset(*self._subset)


_DECLARATION = re.compile(r"<!(?!--|\[CDATA\[)")
"""A ``<!`` that opens neither a comment nor a CDATA section: a DOCTYPE (or a stray declaration such as
``<!ENTITY``). A text without one has no DTD, so it can declare no entity, refer to no external entity and give
no attribute default: :func:`parse_xml` reads it with the C parser; any other text goes to :class:`_Parser`.
A plain search, blind to context: a ``<!DOCTYPE`` written inside a comment or CDATA section also sends the text
to :class:`_Parser` (slower, same result), never the other way round."""


def parse_xml(data: str | bytes, file: str | None) -> ET.Element:
    """Parse XML safely: no entity declarations, no external entities, no DTD internal subset, no network.
    Bytes are decoded first (:func:`xml_text`).

    Entities and a DTD can only be declared in a DOCTYPE, so a text whose only ``<!`` open comments and CDATA
    sections (:data:`_DECLARATION`; every file the WOCHAT writer makes) is parsed by ElementTree's C parser,
    elements built in C with no Python call per tag (several times faster); a text with a DOCTYPE, or any other
    ``<!``, by :class:`_Parser`, which refuses entity declarations, external entities and an internal subset
    explicitly. Both are expat with the same C tree builder: the same tree and the same errors for the same
    text (``tests/io/test_wochat_speed_equivalence.py``)."""
    text = xml_text(data, file) if isinstance(data, bytes) else data
    parser = ET.XMLParser(target=ET.TreeBuilder()) if _DECLARATION.search(text) is None else _Parser()
    try:
        parser.feed(text)
        return parser.close()
    except _InternalSubset as e:
        raise DialevalError(f"a DOCTYPE with declarations (<!DOCTYPE {e.name} [...]>, line {e.line}) is not allowed: "
                            "its declarations could give attributes, such as annotator ids, values the file does "
                            f"not show; remove the [...] part (a bare <!DOCTYPE {e.name}> is allowed)",
                            file=file) from None
    except DefusedXmlException as e:
        raise DialevalError(f"refused unsafe XML ({type(e).__name__}: {e}); entity declarations, external "
                            "entities and DTD tricks such as 'billion laughs' are not allowed", file=file) from None
    except ET.ParseError as e:
        line, col = getattr(e, "position", (0, 0))  # expat's column counts from 0: stated from 1, once
        raise DialevalError(f"not well-formed XML at line {line}, column {col + 1}: {_EXPAT_AT.sub('', str(e))}",
                            file=file) from None


_EXPAT_AT = re.compile(r":? ?line \d+, column \d+$")
"""The position expat appends to its message (column from 0), left out: the message states it from 1."""


@dataclass
class _ReadState:
    file: str
    names: str
    notices: list[str]
    used_optional: set[str] = field(default_factory=set)


def read_wochat(source: str | Path, *, names: str = "error", max_bytes: int = MAX_BYTES) -> Corpus:
    """Read WOCHAT XML (a file with one ``<dialogue>`` or a root holding several, or a folder of ``*.xml``).

    Parameters
    ----------
    source : path
    names : {'error', 'replace', 'keep'}, default 'error'
        What to do with a declared speaker name found in an utterance (the guidelines require its tag,
        e.g. ``SYSTEM_NAME``): raise, replace it by the tag (noted in ``meta["notices"]``), or keep it.
    max_bytes : int
        Size limit of one file (checked before parsing).

    Returns
    -------
    Corpus
        ``format="wochat"``; scale ``validity`` (VALID, ACCEPTABLE, INVALID; ordinal, turn level) and one
        yes/no scale per optional tag used anywhere in the corpus (an annotator who does not give the tag
        counts as "no"). Senders are the roles in lower case (``system``, ``user``, ``user1``...).
        ``dialogue.meta`` keeps ``names`` (role -> declared name), ``timestamp``, ``source_id`` and other
        tags; ``turn.meta`` keeps the turn ``id`` and any extra tags; ``corpus.meta["notices"]`` lists
        where the reader accepted ``</VALID>`` or replaced a name.

    Raises
    ------
    DialevalError
        Unsafe or malformed XML, or any rule of the module docstring broken; the message names the file,
        the dialogue id and the turn.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.xml"
    >>> _ = p.write_text('''<dialogue id="IRIS00001"><system_name>IRIS</system_name><user_name>Ann</user_name>
    ...   <turn id="1"><speaker>USER</speaker><utterance>hi SYSTEM_NAME</utterance></turn>
    ...   <turn id="2"><speaker>SYSTEM</speaker><utterance>hello</utterance>
    ...     <annotator id="a1"></VALID></annotator><annotator id="a2"><INVALID/></annotator></turn>
    ... </dialogue>''')
    >>> c = read_wochat(p)
    >>> c.dialogues[0].turns[1].labels, c.dialogues[0].turns[1].annotators
    ({'validity': ['VALID', 'INVALID']}, ['a1', 'a2'])
    >>> c.meta["notices"][0].endswith("read </VALID> as <VALID/> (the guidelines' spelling)")
    True
    """
    if not isinstance(names, str) or names not in NAME_POLICIES:
        raise DialevalError(f"names policy {describe(names)} is not allowed; allowed are " + ", ".join(NAME_POLICIES))
    path = as_path(source, "WOCHAT XML")
    files = files_in(path, ["*.xml"], "WOCHAT XML files") if path.is_dir() else [path]
    notices: list[str] = []
    dialogues: list[Dialogue] = []
    seen: dict[str, str] = {}
    used: set[str] = set()
    for f in files:
        st = _ReadState(str(f), names, notices)
        with _cycle_collector_paused():
            _read_file(f, max_bytes, st, seen, dialogues)
        used |= st.used_optional
    scales = {VALIDITY: validity_scale()}
    for tag in OPTIONAL_TAGS:
        if tag in used:
            scales[tag.lower()] = binary_scale(tag)
    _fill_binary(dialogues, [t for t in OPTIONAL_TAGS if t in used])
    return Corpus(dialogues, scales, "wochat", str(path), meta={"notices": notices})


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector (``gc``) while one file is read, if it runs.

    Reading a file makes thousands of elements that live only until the file is read, and the corpus' objects;
    no reference cycles. With the collector on, its collections pass those elements on to the older generations
    and so trigger full collections, each walking every object of the corpus read so far: they cost more than
    the reading itself (60 % of the time for 400 DBDC3 files). Reference counting frees everything as before;
    the collector resumes after the file (and after an error). A caller (or thread) that finds it already off
    leaves it as it is, so it is on again once whoever turned it off is done."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _read_file(f: Path, max_bytes: int, st: _ReadState, seen: dict[str, str], dialogues: list[Dialogue]) -> None:
    """The dialogues of one file, appended to ``dialogues`` (``seen``: dialogue id -> file, across files). Its
    tree lives only during this call."""
    text, fixes = fix_guideline_tags(xml_text(read_bounded(f, max_bytes), str(f)))
    root = parse_xml(text, str(f))
    del text
    st.notices.extend(f"{f}:{line}: read </{tag}> as <{tag}/> (the guidelines' spelling)" for line, tag in fixes)
    elems = [root] if root.tag == "dialogue" else list(root.iter("dialogue"))
    if not elems:
        raise DialevalError(f"no <dialogue> element (the root is <{root.tag}>)", file=str(f))
    for el in elems:
        dlg = _read_dialogue(el, st)
        if dlg.id in seen:
            raise DialevalError(f"dialogue id met twice (also in {seen[dlg.id]})", file=str(f), dialogue=dlg.id)
        seen[dlg.id] = str(f)
        dialogues.append(dlg)


def _fill_binary(dialogues: list[Dialogue], tags: list[str]) -> None:
    """Turn each annotated turn's per-annotator optional tags into yes/no labels."""
    for d in dialogues:
        for t in d.turns:
            given = t.meta.pop("_optional", None)
            if given is None:
                continue
            for tag in tags:
                t.labels[tag.lower()] = ["yes" if tag in g else "no" for g in given]


def _text(el: ET.Element) -> str:
    """An utterance's text: line breaks at its ends (and the blanks around them) are the file's layout and
    dropped, unless the element says ``xml:space="preserve"`` (as the WOCHAT writer does for such a text).
    The element holds text only (:func:`_plain_text`)."""
    return (el.text or "") if el.get(XML_SPACE) == "preserve" else EDGE_LAYOUT.sub("", el.text or "")


def _plain_text(el: ET.Element, *, file: str, dialogue: str, field: str) -> ET.Element:
    """``el`` if it holds text only; an error naming its first child element otherwise (``<utterance>hello
    <b>big</b> world</utterance>`` would lose every word after ``<b>``: WOCHAT texts are plain text)."""
    if len(el):
        raise DialevalError(f"<{el.tag}> holds element <{el[0].tag}>; allowed is text only (write a '<' of the "
                            "text as &lt;)", file=file, dialogue=dialogue, field=field)
    return el


def tag_text(el: ET.Element) -> str:
    """A tag's text (an id, a name, a kept tag's value): blanks at its ends are layout and dropped, unless the
    element says ``xml:space="preserve"`` (as the WOCHAT writer does for a text with blanks at its ends)."""
    return (el.text or "") if el.get(XML_SPACE) == "preserve" else (el.text or "").strip()


def _as_tag(el: ET.Element, *, file: str, dialogue: str) -> dict:
    """An extra element kept as data: tag, attributes (but ``xml:space``, which only says how its text was
    written), text (as :func:`tag_text` reads it) and (if nested) its XML.

    Called for every extra element (two per annotator in a converted DBDC file), so it reads the element once:
    the attributes are the element's own dict (made for it when asked for; the tree is dropped after reading),
    copied only to leave ``xml:space`` out."""
    attrib = el.attrib
    if XML_SPACE in attrib:
        attrib = {k: v for k, v in attrib.items() if k != XML_SPACE}
    out: dict = {"tag": el.tag, "attrib": attrib, "text": tag_text(el)}
    if len(el):
        try:
            out["xml"] = ET.tostring(el, encoding="unicode").strip()
        except RecursionError:  # the serialiser recurses once per level; the parser does not
            raise DialevalError(f"<{el.tag}> is nested too deeply to keep", file=file, dialogue=dialogue,
                                field=el.tag) from None
    return out


def _read_dialogue(el: ET.Element, st: _ReadState) -> Dialogue:
    file = st.file
    did = el.get("id")
    if not did:
        raise DialevalError("<dialogue> has no id attribute", file=file)
    if not ID_PATTERN.match(did):
        raise DialevalError(f"dialogue id {did!r} does not follow the WOCHAT pattern: {ID_RULE}", file=file,
                            dialogue=did, field="id")
    names: dict[str, str] = {}
    meta: dict = {}
    extra: list[dict] = []
    turn_elems: list[ET.Element] = []
    for child in el:
        m = _NAME_TAG.match(child.tag)
        if m:
            role = m.group(1).upper()
            if role in names:
                raise DialevalError(f"<{child.tag}> is declared twice", file=file, dialogue=did, field=child.tag)
            names[role] = (_plain_text(child, file=file, dialogue=did, field=child.tag).text or "").strip()
        elif child.tag == "turn":
            turn_elems.append(child)
        elif child.tag in DIALOGUE_KEYS and not len(child):
            meta[child.tag] = tag_text(child)
        else:
            extra.append(_as_tag(child, file=file, dialogue=did))
    if not turn_elems:
        raise DialevalError("the dialogue has no <turn>", file=file, dialogue=did)
    patterns = {role: name_pattern(n) for role, n in names.items() if n}
    turns, prev_id = [], None
    for te in turn_elems:
        turn = _read_turn(te, did, names, patterns, st)
        tid = turn.meta["id"]
        if prev_id is not None and tid <= prev_id:
            raise DialevalError(f"turn id {tid} comes after turn id {prev_id}; turn ids must increase",
                                file=file, dialogue=did, field=f"turn {tid}")
        prev_id = tid
        turns.append(turn)
    meta["names"] = names
    if extra:
        meta["tags"] = extra
    return Dialogue(did, turns, meta=meta)


def _read_turn(te: ET.Element, did: str, names: dict[str, str], patterns: dict[str, NamePattern],
               st: _ReadState) -> Turn:
    file = st.file
    raw_id = te.get("id")
    if raw_id is None or not re.fullmatch(r"\s*[0-9]{1,9}\s*", raw_id):
        raise DialevalError(f"turn id {describe(raw_id)} is not allowed; a turn needs id=\"N\", N = 0, 1, 2, ...",
                            file=file, dialogue=did, field="turn")
    tid = int(raw_id)
    where = f"turn {tid}"
    speaker = utterance = None
    annotators: list[ET.Element] = []
    extra: list[dict] = []
    for child in te:
        if child.tag == "speaker":
            if speaker is not None:
                raise DialevalError("two <speaker> tags", file=file, dialogue=did, field=where)
            speaker = (_plain_text(child, file=file, dialogue=did, field=f"{where}.speaker").text or "").strip()
        elif child.tag == "utterance":
            if utterance is not None:
                raise DialevalError("two <utterance> tags", file=file, dialogue=did, field=where)
            utterance = _text(_plain_text(child, file=file, dialogue=did, field=f"{where}.utterance"))
        elif child.tag == "annotator":
            annotators.append(child)
        else:
            extra.append(_as_tag(child, file=file, dialogue=did))
    if speaker is None:
        raise DialevalError("the turn has no <speaker>", file=file, dialogue=did, field=where)
    if utterance is None:
        raise DialevalError("the turn has no <utterance>", file=file, dialogue=did, field=where)
    if speaker not in names:
        declared = ", ".join(names) or "(none: add <system_name>/<user_name> or <user1_name>, <user2_name>...)"
        raise DialevalError(f"speaker {speaker!r} is not declared; declared roles are {declared}", file=file,
                            dialogue=did, field=f"{where}.speaker")
    utterance = _check_names(utterance, names, patterns, did, where, st)
    turn = Turn(speaker.lower(), [utterance], meta={"id": tid})
    if extra:
        turn.meta["tags"] = extra
    if annotators:
        _read_annotators(annotators, turn, did, where, st)
    return turn


def _check_names(text: str, names: dict[str, str], patterns: dict[str, NamePattern], did: str, where: str,
                 st: _ReadState) -> str:
    if st.names == "keep":
        return text
    for role, pat in patterns.items():
        m = pat.search(text)
        if m is None:
            continue
        tag = f"{role.lower()}_name"
        if st.names == "error":
            found = repr(m.group(0))
            if unicodedata.normalize("NFC", m.group(0)) != m.group(0):  # looks like the name, coded otherwise
                found += f" (written {m.group(0)!a}: compared after NFC and case folding)"
            raise DialevalError(f"the utterance contains the {role} name {found} declared in <{tag}>; "
                                f"WOCHAT utterances must read {role}_NAME instead (names='replace', --wochat-names "
                                "replace on the command line, replaces it)",
                                file=st.file, dialogue=did, field=f"{where}.utterance")
        text, n = pat.subn(f"{role}_NAME", text)
        st.notices.append(f"{st.file}: dialogue {did}: {where}: replaced {n} occurrence(s) of the {role} name "
                          f"by {role}_NAME")
    return text


_ANNOTATION_TAGS = frozenset(VALIDITY_TAGS + OPTIONAL_TAGS)
_VALIDITY_SET = frozenset(VALIDITY_TAGS)
_ALLOWED = ", ".join(f"<{t}/>" for t in VALIDITY_TAGS)
_NO_OPTIONAL: frozenset[str] = frozenset()
"""The optional tags of an annotator who gives none (shared: ``turn.meta["_optional"]`` is only read by
:func:`_fill_binary`, which removes it)."""


def _read_annotators(elems: list[ET.Element], turn: Turn, did: str, where: str, st: _ReadState) -> None:
    file = st.file
    labels: list[str | None] = []
    ids: list[str] = []
    seen: set[str] = set()
    optional: list[set[str] | frozenset[str]] = []
    extras: list[list[dict]] = []
    any_extra = False
    for el in elems:
        aid = el.get("id")
        if not aid:
            raise DialevalError("an <annotator> has no id attribute", file=file, dialogue=did, field=where)
        if aid in seen:
            raise DialevalError(f"annotator {aid!r} appears twice in this turn", file=file, dialogue=did,
                                field=where)
        given: list[str] = []
        opt: set[str] | None = None
        extra: list[dict] = []
        for child in el:
            tag = child.tag
            if tag in _ANNOTATION_TAGS:
                text = child.text
                if (text and text.strip()) or len(child):
                    raise DialevalError(f"annotator {aid!r}: <{tag}> must be an empty tag, <{tag}/>",
                                        file=file, dialogue=did, field=where)
                if tag in _VALIDITY_SET:
                    given.append(tag)
                elif opt is None:
                    opt = {tag}
                elif tag in opt:
                    raise DialevalError(f"annotator {aid!r} gives <{tag}/> twice", file=file,
                                        dialogue=did, field=where)
                else:
                    opt.add(tag)
            else:
                attrib = child.attrib
                if XML_SPACE in attrib or len(child):
                    extra.append(_as_tag(child, file=file, dialogue=did))
                else:  # _as_tag's result for the common case (<comment/>, <ungrammatical-sentence/>), inline
                    text = child.text
                    extra.append({"tag": tag, "attrib": attrib, "text": text.strip() if text else ""})
        if len(given) != 1:
            if not given:
                raise DialevalError(f"annotator {aid!r} gives none of {_ALLOWED}; exactly one is required",
                                    file=file, dialogue=did, field=where)
            raise DialevalError(f"annotator {aid!r} gives " + " and ".join(f"<{t}/>" for t in given)
                                + f"; exactly one of {_ALLOWED} is allowed", file=file, dialogue=did, field=where)
        labels.append(given[0])
        ids.append(aid)
        seen.add(aid)
        if opt is None:
            optional.append(_NO_OPTIONAL)
        else:
            optional.append(opt)
            st.used_optional |= opt
        extras.append(extra)
        if extra:
            any_extra = True
    turn.labels[VALIDITY] = labels
    turn.annotators = ids
    turn.meta["_optional"] = optional
    if any_extra:
        turn.meta["annotator_tags"] = extras
