"""The one place where the bytes of a text input (JSON, JSONL, CSV, plain lists) become text.

Policy, the same for every reader:

- UTF-8, with or without a byte-order mark (spreadsheets and Windows editors write one): accepted;
- UTF-16 (little or big endian) with its byte-order mark: decoded;
- UTF-32, UTF-16 without a byte-order mark, or bytes that are not UTF-8: refused in one line saying what the
  file looks like and what to do (save it as UTF-8).

CSV files additionally get their delimiter sniffed (``,`` ``;`` tab ``|``; European spreadsheets write ``;``)
unless the caller gives one.
"""

from __future__ import annotations

import codecs
import csv

from dialeval.errors import DialevalError, quote

UTF8_BOM = codecs.BOM_UTF8
_UTF32 = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
_UTF16 = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
CSV_DELIMITERS = ",;\t|"


def utf16_without_bom(data: bytes) -> str:
    """``"utf-16-le"`` or ``"utf-16-be"`` for text with no byte-order mark whose first character is two bytes
    wide (one byte of it zero: ``<`` or a blank, as XML starts), else ``""``: the WOCHAT reader's rule, which
    format detection follows.

    >>> utf16_without_bom("<a/>".encode("utf-16-le")), utf16_without_bom(b"<a/>")
    ('utf-16-le', '')
    """
    if len(data) >= 2 and bool(data[0]) != bool(data[1]):
        return "utf-16-le" if data[0] else "utf-16-be"
    return ""


def utf8_bytes(data: bytes, file: str | None = None, *, partial: bool = False) -> bytes:
    """``data`` as UTF-8 bytes without a byte-order mark (UTF-16 with a BOM decoded), or a one-line error.

    The bytes are not validated as UTF-8 here (the JSON parser does that, with a byte position); only
    the encodings that need converting or refusing are looked at. ``partial``: ``data`` is the head of a
    file (a cut multi-byte character at its end is dropped, never an error).

    Examples
    --------
    >>> utf8_bytes(b"\\xef\\xbb\\xbf[1]"), utf8_bytes("[1]".encode("utf-16"))
    (b'[1]', b'[1]')
    """
    if data.startswith(_UTF32):
        raise DialevalError("the file is UTF-32 text; save it as UTF-8", file=file)
    for bom, codec in _UTF16:
        if data.startswith(bom):
            body = data[len(bom):]
            if partial:
                body = body[: len(body) // 2 * 2]
            try:
                return body.decode(codec, errors="replace" if partial else "strict").encode("utf-8")
            except UnicodeDecodeError as e:
                raise DialevalError(f"the file starts with a UTF-16 byte-order mark but is not valid UTF-16 "
                                    f"(byte {e.start + len(bom)}); save it as UTF-8", file=file) from None
    if data.startswith(UTF8_BOM):
        return data[len(UTF8_BOM):]
    if len(data) >= 4 and data[1:4:2] == b"\0\0" and data[0] and data[2]:
        raise DialevalError("the file looks like UTF-16 text without a byte-order mark; save it as UTF-8", file=file)
    return data


def is_utf16(head: bytes, file: str | None = None) -> bool:
    """Whether a text starting with ``head`` is UTF-16 with its byte-order mark (to decode before it is read as
    UTF-8 JSON); the policy's error for UTF-32 or UTF-16 without a byte-order mark, as :func:`utf8_bytes`.

    Examples
    --------
    >>> is_utf16("[1]".encode("utf-16")), is_utf16(b"\\xef\\xbb\\xbf[1]"), is_utf16(b"{}")
    (True, False, False)
    """
    return utf8_bytes(head[:4], file, partial=True) != head[:4].removeprefix(UTF8_BOM)


GZIP_MAGIC = b"\x1f\x8b"
"""How a gzip file starts."""
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
"""How a ZIP archive starts: its first member, or the end record of an empty archive."""
_PACKED = ((GZIP_MAGIC, "gzip-compressed", "uncompress"), *((m, "a ZIP archive", "unpack") for m in ZIP_MAGICS),
           (b"BZh", "bzip2-compressed", "uncompress"), (b"\xfd7zXZ\x00", "xz-compressed", "uncompress"))


def packed_note(data: bytes) -> str:
    """``"; it is gzip-compressed: ..."`` when ``data`` starts as a compressed file or an archive does (whose
    bytes are never UTF-8 text), else ``""``: said after "not UTF-8 text", so that the fix is plain.

    Examples
    --------
    >>> packed_note(b"\\x1f\\x8b\\x08\\x00"), packed_note(b"[{")
    ('; it is gzip-compressed: uncompress it first', '')
    """
    for magic, what, undo in _PACKED:
        if data[:len(magic)] == magic:
            return f"; it is {what}: {undo} it first"
    return ""


def decode_text(data: bytes, file: str | None = None) -> str:
    """The text of a file's bytes under the policy above; a one-line error for anything else.

    Examples
    --------
    >>> decode_text("id;score\\n".encode("utf-16")), decode_text(b"\\xef\\xbb\\xbfa")
    ('id;score\\n', 'a')
    """
    raw = utf8_bytes(data, file)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DialevalError(f"not UTF-8 text (byte {e.start}: {e.reason}){packed_note(data)}; save the file as UTF-8",
                            file=file) from None


def sniff_delimiter(text: str, file: str | None = None, delimiter: str | None = None) -> str:
    """The CSV delimiter: ``delimiter`` if given (one character), else sniffed from the header line.

    The header's most frequent of ``, ; tab |`` wins (a header has no quoted delimiters in practice);
    a header holding none of them is read with ``,`` (one column).

    Examples
    --------
    >>> sniff_delimiter("id;turn;score\\n1;0;0,5\\n"), sniff_delimiter("id,score\\n")
    (';', ',')
    """
    if delimiter is not None:
        if delimiter in ("\\t", "tab"):
            return "\t"
        if len(delimiter) != 1 or delimiter in "\"\r\n":
            raise DialevalError(f"delimiter {delimiter!r} is not allowed; allowed is one character such as "
                                "',', ';', '|' or 'tab'", file=file)
        return delimiter
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in CSV_DELIMITERS}
    best = max(counts, key=lambda d: (counts[d], -CSV_DELIMITERS.index(d)))
    return best if counts[best] else ","


def csv_rows(data: bytes, file: str | None = None,
             delimiter: str | None = None) -> tuple[list[str], list[tuple[int, dict]], str]:
    """The header, the rows (each its line number in the file and its fields as a dict) and the delimiter of a
    CSV file's bytes: encoding and delimiter as above.

    Blank lines are skipped. Every other row must have as many fields as the header: a value past the header's
    columns would be dropped, and a missing one read as absent, so either is an error naming the line.

    Examples
    --------
    >>> csv_rows(b"\\xef\\xbb\\xbfid;score\\r\\na;0,5\\r\\n")
    (['id', 'score'], [(2, {'id': 'a', 'score': '0,5'})], ';')
    >>> csv_rows(b"id,score\\na,0.5,7\\n", "s.csv")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: s.csv: line 2 has 3 fields; the header has 2 (id, score)
    """
    text = decode_text(data, file)
    delim = sniff_delimiter(text, file, delimiter)
    reader = csv.reader(text.splitlines(), delimiter=delim)
    header: list[str] | None = None
    rows: list[tuple[int, dict]] = []
    try:
        for row in reader:
            if header is None:
                header = [c.strip() for c in row]   # a blank first line: no columns, which the caller refuses
                if not header:
                    break
            elif not row:
                continue
            elif len(row) != len(header):
                names = ", ".join(map(quote, header))
                raise DialevalError(f"line {reader.line_num} has {len(row)} field{'s' if len(row) != 1 else ''}; "
                                    f"the header has {len(header)} ({names})", file=file)
            else:
                rows.append((reader.line_num, dict(zip(header, row, strict=True))))
    except csv.Error as e:
        raise DialevalError(f"not valid CSV: {e}", file=file) from None
    return header or [], rows, delim
