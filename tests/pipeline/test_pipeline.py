"""predict --out DIR: one shard per input, manifest, rejects, deterministic bytes, resume after a kill."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.pipeline.conftest import outputs

import dialeval
from dialeval.errors import DialevalError
from dialeval.pipeline import predict_many

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_shards_manifest_and_metadata(shards, tmp_path, monkeypatch, test_dialogues):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    manifest = dialeval.predict_many(shards, out)
    assert sorted(outputs(out)) == ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "manifest.json"]
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert manifest["totals"] == {"shards": 4, "dialogues": 40, "rejected": 0, "in_training": 0}
    assert manifest["complete"]
    assert manifest["model"]["name"] == "shipped" and manifest["dialeval_version"] == dialeval.__version__
    for src, entry in zip(shards, manifest["shards"], strict=True):
        assert entry["input"] == str(src) and entry["sha256"] == _sha(src)
        assert entry["output_sha256"] == _sha(out / entry["output"]) and entry["dialogues"] == 10
    lines = [json.loads(x) for name in ("a", "b", "c", "d") for x in (out / f"{name}.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == [str(d["id"]) for d in test_dialogues]
    assert lines[0]["meta"] == {"system": "bot0", "day": "2026-11-01"} and "meta" not in lines[10]
    # the same numbers as dialeval.predict on the whole corpus (to the 6 digits written)
    whole = {r["id"]: r for r in dialeval.predict(test_dialogues)}
    for r in lines:
        w = whole[r["id"]]
        for k in "ASE":
            assert r["quality"][k] == pytest.approx(w["quality"][k], abs=2e-6)
        assert len(r["nugget"]) == len(w["nugget"])


def test_bytes_do_not_depend_on_cache_or_threads(shards, tmp_path, monkeypatch):
    from dialeval.models import encoders

    runs = []
    # cold, warm, cold, and cold with a memory cache of 7 embeddings (most are forgotten and embedded again)
    for i, (cache, threads, entries) in enumerate([("c1", "1", None), ("c1", "2", None), ("c2", "2", None),
                                                   ("c3", "2", 7)]):
        monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / cache))
        monkeypatch.setenv("DIALEVAL_THREADS", threads)
        if entries:
            monkeypatch.setattr(encoders, "MEMORY_ENTRIES", entries)
        predict_many(shards[:2], tmp_path / f"out{i}")
        runs.append(outputs(tmp_path / f"out{i}"))
    assert runs[0] == runs[1] == runs[2] == runs[3]
    assert all(len(c.mem) <= 7 for c in encoders._CACHES.values() if "c3" in str(c.folder))


def test_a_bad_dialogue_is_rejected_and_other_shards_complete(shards, tmp_path, monkeypatch, test_dialogues):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    bad = shards[0].parent / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(test_dialogues[0]),
                              json.dumps({"id": "broken-7", "turns": [{"sender": "agent", "utterances": ["hi"]}]}),
                              json.dumps(test_dialogues[1])]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    manifest = predict_many([bad, *shards[1:3]], out)
    assert manifest["totals"] == {"shards": 3, "dialogues": 22, "rejected": 1, "in_training": 0}
    entry = manifest["shards"][0]
    assert (entry["dialogues"], entry["rejected"], entry["rejects"]) == (2, 1, "rejects/bad.jsonl")
    rejects = [json.loads(x) for x in (out / "rejects" / "bad.jsonl").read_text().splitlines()]
    assert rejects == [{"file": str(bad), "line": 2, "index": 1, "id": "broken-7",
                        "error": "turns[0].sender: sender 'agent' is not allowed; allowed are customer, helpdesk"}]
    assert len((out / "b.jsonl").read_text().splitlines()) == 10
    with pytest.raises(DialevalError, match=r"bad\.jsonl: dialogue broken-7: line 2"):
        predict_many([bad], tmp_path / "out2", fail_fast=True)


def test_cli_predict_folder_and_errors(shards, tmp_path, monkeypatch, capsys):
    from dialeval.cli.main import run

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    assert run(["predict", str(shards[0].parent / "*.jsonl*"), "--out", str(tmp_path / "o")]) == 0
    assert sorted(outputs(tmp_path / "o")) == ["a.jsonl", "c.jsonl", "manifest.json"]
    assert run(["predict", str(shards[0].parent / "*.jsonl*"), "--out", str(tmp_path / "o")]) == 0
    assert "wrote 0 shard(s) to" in (e := capsys.readouterr().err) and "(2 already done, skipped)" in e
    (tmp_path / "o" / "a.jsonl").unlink()    # predicted again, to the same bytes: not "already done"
    assert run(["predict", str(shards[0].parent / "*.jsonl*"), "--out", str(tmp_path / "o")]) == 0
    assert "wrote 1 shard(s) to" in (e := capsys.readouterr().err) and "(1 already done, skipped)" in e
    conture = tmp_path / "conture"   # another corpus among the shards: refused whole, not rejected one by one
    conture.mkdir()
    (conture / "data.json").write_text(json.dumps([{"dialog_id": 1, "turns": [{"user": "a", "chatbot": "b"}]}]))
    for bad, what in ((conture / "data.json", "file"), (conture, "folder")):
        assert run(["predict", str(bad), str(shards[0]), "--out", str(tmp_path / "o4")]) == 2
        assert capsys.readouterr().err == (
            f"error: {bad}: is a ConTurE {what}, not STC-3 dialogues, and several inputs, a folder --out or "
            "--scheduler stream STC-3 shards only: predict it alone, in this process, e.g. `dialeval predict "
            f"{bad} --out run.json`\n")
    assert not (tmp_path / "o4").exists()
    assert run(["predict", str(shards[0]), "--out", str(tmp_path / "o2"), "--workers", "2"]) == 2
    assert "--workers 2 needs --scheduler local" in capsys.readouterr().err
    assert run(["predict", str(shards[0]), "--out", str(tmp_path / "o3"), "--scheduler", "udp://x"]) == 2
    assert "allowed are local or a scheduler address" in capsys.readouterr().err


def test_resume_after_a_kill_writes_every_shard_once(tmp_path, monkeypatch, test_dialogues):
    folder = tmp_path / "in"
    folder.mkdir()
    n = 8
    for i in range(n):  # 8 shards of 3 dialogues
        (folder / f"s{i:02d}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in test_dialogues[3 * i:3 * i + 3]))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": SRC, "DIALEVAL_CACHE": str(tmp_path / "cache"), "DIALEVAL_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "dialeval", "predict", str(folder), "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(json.loads((out / "manifest.json").read_text())["shards"]) >= 3:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = {e["output"]: e for e in json.loads((out / "manifest.json").read_text())["shards"]}
    assert 0 < len(done) < n, f"the run was not killed half-way ({len(done)} of {n} shards done)"
    stamps = {name: (out / name).stat().st_ino for name in done}
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert f"wrote {n - len(done)} shard(s)" in rerun.stderr and f"({len(done)} already done, skipped)" in rerun.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["totals"]["dialogues"] == 3 * n
    assert {name: (out / name).stat().st_ino for name in done} == stamps  # finished shards were not rewritten
    assert not [p for p in out.iterdir() if p.name.startswith(".") or p.name.endswith(".tmp")]  # no leftovers
    # and the result is what one uninterrupted run writes
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    predict_many([str(folder)], tmp_path / "fresh")
    assert outputs(out) == outputs(tmp_path / "fresh")
