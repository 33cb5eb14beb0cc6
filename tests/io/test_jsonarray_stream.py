"""The one incremental JSON array reader (jsonarray.array_parts): the streamed records of
jsonarray.iter_records and the raw elements of stream.iter_array come from it and agree at any chunk size."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest

from dialeval.errors import DialevalError
from dialeval.io import jsonarray, stream
from dialeval.io.jsonarray import array_parts, iter_records
from dialeval.io.stc3 import check_turns, read_stc3
from dialeval.io.stream import iter_array, iter_dialogues, validate

DLG = ('{"id": "d%d", "turns": [{"sender": "customer", "utterances": ["a,]\\"}[", "\\\\"]},\n'
       '  {"sender": "helpdesk", "utterances": ["\u00e9\u4e2d,"]}]}')
ARRAY = "[\n" + ",\n".join(DLG % i for i in range(5)) + "\n]\n"


def _streamed(path: Path, monkeypatch, chunk: int) -> list:
    monkeypatch.setattr(jsonarray, "STREAM_THRESHOLD", -1)
    monkeypatch.setattr(jsonarray, "CHUNK", chunk)
    return list(iter_records(str(path)))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 97, 1 << 20])
@pytest.mark.parametrize("prefix", [b"", codecs.BOM_UTF8, b" \n" * 40])
def test_both_readers_agree_at_every_chunk_size(tmp_path, monkeypatch, chunk, prefix):
    path = tmp_path / "a.json"
    path.write_bytes(prefix + ARRAY.encode())
    want = json.loads(ARRAY)
    assert _streamed(path, monkeypatch, chunk) == want
    monkeypatch.setattr(stream, "CHUNK", chunk)
    got = list(iter_array(io.BytesIO(path.read_bytes()), "a.json"))
    assert [json.loads(b) for _, b in got] == want
    lines = (prefix + ARRAY.encode()).split(b"\n")
    assert all(lines[line - 1].lstrip().startswith(b'{"id": "d') for line, _ in got)


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
@pytest.mark.parametrize(("data", "message"), [
    (b"[1, 2", "not valid JSON: the array is not closed (line 1)"),
    (b"[1]\n  x", "not valid JSON: extra data after the array"),
    (b"[1}, 2]", "not valid JSON: '}' where the array's ']' should be (line 1)"),
    (b"\n\n", "the top level is empty; expected an array of dialogues"),
    (codecs.BOM_UTF8 + b"  ", "the top level is empty; expected an array of dialogues"),
    (b'{"id": 1}', "the top level is not a JSON array; expected an array of dialogues"),
    (ARRAY.encode("utf-32"), "the file is UTF-32 text; save it as UTF-8"),
])
def test_file_level_errors_are_the_same_for_both_readers(tmp_path, monkeypatch, chunk, data, message):
    path = tmp_path / "x.json"
    path.write_bytes(data)
    with pytest.raises(DialevalError) as e:
        _streamed(path, monkeypatch, chunk)
    assert e.value.message == message
    monkeypatch.setattr(stream, "CHUNK", chunk)
    with pytest.raises(DialevalError) as e:
        list(iter_array(io.BytesIO(data), "x.json"))
    assert e.value.message == message.replace("array of dialogues", "array of dialogues or JSON Lines")


def test_streamed_utf16_is_decoded_whole_by_records_and_refused_by_the_stream_reader(tmp_path, monkeypatch):
    path = tmp_path / "u16.json"
    path.write_bytes(ARRAY.encode("utf-16"))
    assert _streamed(path, monkeypatch, 97) == json.loads(ARRAY)
    rejects: list = []
    assert list(iter_dialogues(path, rejects)) == []
    assert rejects[0].error == "the file: UTF-16 text is not read incrementally; save the file as UTF-8"


def test_missing_values_and_a_bad_byte_are_located(tmp_path, monkeypatch):
    path = tmp_path / "m.json"
    path.write_bytes(b"[1,\n ,\n 2]")
    with pytest.raises(DialevalError, match=r"not valid JSON: .* \(line 2\)"):  # wording by chunk, line not
        _streamed(path, monkeypatch, 3)
    assert list(iter_array(io.BytesIO(path.read_bytes()), "m.json")) == [(1, b"1"), (2, b""), (3, b"2")]
    assert list(iter_array(io.BytesIO(b"[ \n ]"), "m.json")) == []
    bad = b'[1,\n"\xff"]'
    path.write_bytes(bad)
    with pytest.raises(DialevalError) as whole:
        jsonarray.parse_bytes(bad)
    with pytest.raises(DialevalError) as e:
        _streamed(path, monkeypatch, 1 << 20)
    assert e.value.message == whole.value.message == "not UTF-8 text (byte 5); JSON files must be UTF-8"


def test_line_breaks_sent_back_are_not_counted_again():
    parts = array_parts(io.BytesIO(b"[1,\n2,\n\n3]"), "x", chunk=4)
    first = next(parts)
    assert (first.data, first.line) == (b"1", 1)
    assert parts.send(0).line == 1 + 0  # the caller said: no line break in b"1"
    with pytest.raises(DialevalError, match="chunk must be a positive integer"):
        next(array_parts(io.BytesIO(b"[]"), "x", chunk=0))


def test_stream_validate_and_the_stc3_reader_share_the_turn_check():
    dlg = {"id": "d1", "turns": [{"sender": "customer", "utterances": ["hi", 3]}]}
    with pytest.raises(DialevalError) as reader:
        read_stc3([dlg])
    with pytest.raises(DialevalError) as streamed:
        validate(dlg)
    want = "'utterances' must be a list of strings, received ['hi', 3]"
    assert reader.value.message == streamed.value.message == want
    assert reader.value.field == streamed.value.field == "turns[0].utterances"
    no_utterances = {"id": "d2", "turns": [{"sender": "helpdesk"}]}
    assert read_stc3([no_utterances]).dialogues[0].turns[0].utterances == []  # the reader: none said
    with pytest.raises(DialevalError, match="received None"):
        validate(no_utterances)  # a dialogue to predict must give them
    with pytest.raises(DialevalError, match="utterances='maybe' is not allowed"):
        check_turns(no_utterances, "d2", None, utterances="maybe")
