"""predict on an input whose file name is not UTF-8, and summarize's tables of ids with control characters."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir
from dialeval.cli.main import run
from dialeval.pipeline import path_text, predict_many
from dialeval.summarize import shard_files, summarize

LATIN1 = os.fsdecode(b"caf\xe9")   # 'caf\udce9': the byte 0xE9 of a Latin-1 file name is not UTF-8


@pytest.fixture(scope="module")
def prior_model(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    assert run(["train", str(demo_dir() / "gold.json"), "--model", "prior", "--out", str(folder / "m")]) == 0
    return folder / "m"


def test_path_text():
    assert path_text(f"in/{LATIN1}.json") == "in/caf\\xe9.json"
    assert path_text("in/ラン ✓.json") == "in/ラン ✓.json"


def test_predict_an_input_not_named_in_utf8(tmp_path, prior_model):
    src = tmp_path / "in" / f"{LATIN1}.json"
    src.parent.mkdir()
    shutil.copy(demo_dir() / "gold.json", src)
    out = tmp_path / "pred"
    manifest = predict_many([src], out, model=prior_model, progress=False)   # no orjson TypeError
    doc = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    entry = doc["shards"][0]
    assert entry["input"] == str(tmp_path / "in" / "caf\\xe9.json") and entry["output"] == "caf\\xe9.jsonl"
    assert doc["complete"] and manifest["totals"]["dialogues"] == 8
    assert (out / f"{LATIN1}.jsonl").is_file()   # the shard keeps the input's name on disk
    # the manifest's text finds the shard again: resume skips it, summarize and evaluate read it
    before = (out / f"{LATIN1}.jsonl").read_bytes()
    again = predict_many([src], out, model=prior_model, progress=False)
    assert again["totals"]["shards"] == 1 and (out / f"{LATIN1}.jsonl").read_bytes() == before
    assert shard_files(out) == [out / f"{LATIN1}.jsonl"]
    assert summarize(out)["dialogues"] == 8


def test_rejects_name_the_file_as_text(tmp_path, prior_model):
    records = json.loads((demo_dir() / "gold.json").read_text(encoding="utf-8"))
    records[1]["turns"] = "not a list"
    src = tmp_path / f"{LATIN1}.json"
    src.write_text(json.dumps(records), encoding="utf-8")
    predict_many([src], tmp_path / "pred", model=prior_model, progress=False)
    reject = json.loads((tmp_path / "pred" / "rejects" / f"{LATIN1}.jsonl").read_text(encoding="utf-8"))
    assert reject["file"] == str(tmp_path / "caf\\xe9.json")


def test_summarize_table_escapes_ids(tmp_path, capsys):
    zero = {"2": 0.0, "1": 0.0, "0": 1.0, "-1": 0.0, "-2": 0.0}
    q = {"A": zero, "S": zero, "E": zero}
    folder = tmp_path / "pred"
    folder.mkdir()
    rows = [{"id": "nl\nid", "meta": {"system": "sys\tA"}, "quality": q},
            {"id": "zw\u200bsp", "meta": {"system": "b"}, "quality": q}]
    (folder / "one.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert run(["summarize", str(folder), "--worst", "2"]) == 0
    text = capsys.readouterr().out
    worst = text[text.index("lowest expected S"):]
    assert "nl\\nid" in worst and "zw\\u200bsp" in worst and "sys\\tA" in worst
    assert "\u200b" not in text and "nl\nid" not in text
    # the JSON keeps the ids as they are
    assert run(["summarize", str(folder), "--format", "json"]) == 0
    assert {r["id"] for r in json.loads(capsys.readouterr().out)["worst"]} == {"nl\nid", "zw\u200bsp"}
