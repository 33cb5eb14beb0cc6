"""Streaming readers: JSON arrays read incrementally, JSON Lines, gzip, folders and globs; rejects located."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from dialeval.errors import DialevalError
from dialeval.io import stream
from dialeval.io.stream import expand_inputs, iter_array, iter_dialogues


def test_every_input_kind_gives_the_same_dialogues(shards, test_dialogues):
    got = [d for s in shards for d in iter_dialogues(s)]
    assert [d.id for d in got] == [str(d["id"]) for d in test_dialogues]
    assert [d.turns for d in got] == [[{"sender": t["sender"], "utterances": t["utterances"]} for t in d["turns"]]
                                      for d in test_dialogues]
    assert got[0].meta == {"system": "bot0", "day": "2026-11-01"} and got[10].meta == {}


def test_incremental_array_reader_across_many_chunks(monkeypatch, shards, test_dialogues):
    monkeypatch.setattr(stream, "CHUNK", 97)  # every element spans several chunks
    got = list(iter_dialogues(shards[1]))
    assert [d.id for d in got] == [str(d["id"]) for d in test_dialogues[10:20]]
    text = shards[1].read_text(encoding="utf-8").splitlines()
    for d in got:  # the reported line is the one the element opens on
        assert text[d.line - 1].strip() == "{"
        assert f'"{d.id}"' in "".join(text[d.line - 1:d.line + 2])


def test_array_reader_strings_with_brackets_and_lines():
    data = b'[\n {"id": "a,]}", "x": "\\"]"},\n\n {"id": 2},\n {}\n]\n'
    assert [(line, json.loads(b)) for line, b in iter_array(io.BytesIO(data), "x")] == [
        (2, {"id": "a,]}", "x": '"]'}), (4, {"id": 2}), (5, {})]
    assert list(iter_array(io.BytesIO(b" [ ] "), "x")) == []
    with pytest.raises(DialevalError, match="not closed"):
        list(iter_array(io.BytesIO(b'[{"id": 1},'), "x"))
    with pytest.raises(DialevalError, match="not a JSON array"):
        list(iter_array(io.BytesIO(b'"text"'), "x"))


def test_bad_dialogues_are_rejected_with_file_line_and_id(tmp_path: Path, test_dialogues):
    good = test_dialogues[:3]
    lines = [json.dumps(good[0]), "{not json", json.dumps({"id": "x1", "turns": [{"sender": "bot"}]}),
             json.dumps(good[1]), json.dumps(good[1]), "", json.dumps([1, 2]), json.dumps(good[2])]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejects: list = []
    got = [d.id for d in iter_dialogues(path, rejects)]
    assert got == [str(good[0]["id"]), str(good[1]["id"]), str(good[2]["id"])]
    assert [(r.file, r.line, r.id) for r in rejects] == [
        (str(path), 2, None), (str(path), 3, "x1"), (str(path), 5, str(good[1]["id"])), (str(path), 7, None)]
    assert "not valid JSON" in rejects[0].error
    assert "turns[0].sender" in rejects[1].error and "'bot'" in rejects[1].error
    assert "duplicate" in rejects[2].error
    assert "JSON list" in rejects[3].error
    with pytest.raises(DialevalError, match=r"bad\.jsonl: line 2: item 1: not valid JSON.*--fail-fast"):
        list(iter_dialogues(path, fail_fast=True))


def test_bad_element_of_an_array_is_rejected_not_fatal(tmp_path: Path):
    path = tmp_path / "arr.json.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b'[{"id": "a", "turns": [{"sender": "customer", "utterances": ["hi"]}]},\n'
                 b' {"id": "b", "turns": [1 2]},\n'
                 b' {"id": "c", "turns": []}]')
    rejects: list = []
    assert [d.id for d in iter_dialogues(path, rejects)] == ["a"]
    assert [(r.line, r.index, r.id) for r in rejects] == [(2, 1, None), (3, 2, "c")]


def test_folders_and_globs(shards, tmp_path: Path):
    folder = shards[0].parent
    (folder / "notes.txt").write_text("ignored")
    assert expand_inputs([folder]) == sorted(shards)
    assert expand_inputs([str(folder / "*.jsonl*")]) == [shards[0], shards[2]]
    assert expand_inputs([shards[1], str(folder / "*.json"), folder]) == [shards[1], *sorted(set(shards) - {shards[1]})]
    with pytest.raises(DialevalError, match="matches no file"):
        expand_inputs([str(folder / "*.csv")])
    with pytest.raises(DialevalError, match="no such file"):
        expand_inputs([tmp_path / "missing.json"])


def test_a_file_unreadable_midway_keeps_what_came_before(tmp_path: Path):
    ok = '{"id": "a", "turns": [{"sender": "customer", "utterances": ["hi"]}]}'
    truncated = tmp_path / "cut.json"
    truncated.write_text(f"[{ok},\n {ok.replace('a', 'b', 1)},\n {{\"id\": \"c\"", encoding="utf-8")
    rejects: list = []
    assert [d.id for d in iter_dialogues(truncated, rejects)] == ["a", "b"]
    assert [(r.line, r.index, r.id) for r in rejects] == [(0, 2, None)]
    assert rejects[0].error == "the file: not valid JSON: the array is not closed (line 3)"
    damaged = tmp_path / "bad.jsonl.gz"
    damaged.write_bytes(gzip.compress((ok + "\n").encode() * 50)[:-30])
    rejects = []
    assert len(list(iter_dialogues(damaged, rejects))) <= 50 and rejects[0].error.startswith("the file: not readable")
    with pytest.raises(DialevalError, match="not closed"):
        list(iter_dialogues(truncated, fail_fast=True))
