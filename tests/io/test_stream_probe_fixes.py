"""Reader bugs a fuzzing probe found, each fixed here with its test: a UTF-8 byte-order mark or UTF-16 text at
the start of JSON Lines, a gzip file cut short or damaged, errors on JSON Lines / gzip / glob / predict-folder
runs and gold that named no file, a record longer than many chunks scanned again after every chunk, and a
pipe whose start format detection used up before its reader could read it."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir
from dialeval.cli.main import run as cli
from dialeval.errors import DialevalError
from dialeval.io import jsonarray
from dialeval.io.detect import check_not_swapped, detect
from dialeval.io.jsonarray import array_parts, iter_records, top_level_structure
from dialeval.io.stream import iter_dialogues, iter_items, read_records

GOLD = json.loads((demo_dir() / "gold.json").read_text(encoding="utf-8"))
RUN = json.loads((demo_dir() / "run.json").read_text(encoding="utf-8"))
SRC = Path(__file__).resolve().parents[2] / "src"


def jsonl(records: list) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode() + b"\n"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# 1. A UTF-8 byte-order mark starts JSON Lines: accepted (text.py's policy); UTF-16 and UTF-32: the policy's
#    message, naming the file.

@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_bom_before_the_first_json_line_is_accepted(tmp_path, suffix):
    data = codecs.BOM_UTF8 + jsonl(RUN)
    path = tmp_path / f"run{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    assert read_records([path]) == RUN
    assert [line for line, _ in iter_items(path)] == list(range(1, len(RUN) + 1))


def test_a_bom_before_a_json_lines_dialogue_is_no_reject(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + b"  " + jsonl([{"id": d["id"], "turns": d["turns"]} for d in GOLD]))
    rejects: list = []
    assert [d.id for d in iter_dialogues(path, rejects)] == [d["id"] for d in GOLD]
    assert rejects == []


def test_predict_reads_the_first_dialogue_after_a_bom(tmp_path, capsys):
    path = tmp_path / "p_bom.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + jsonl([{"id": d["id"], "turns": d["turns"]} for d in GOLD[:3]]))
    rc, _, err = run_cli(capsys, "predict", str(path), "--out", str(tmp_path / "pout"))
    assert rc == 0, err
    assert "0 rejected" in err
    assert not [p for p in (tmp_path / "pout").rglob("*") if "reject" in p.name and p.stat().st_size]


def test_evaluate_scores_bom_json_lines_run_and_gold(tmp_path, capsys):
    (tmp_path / "run.jsonl").write_bytes(codecs.BOM_UTF8 + jsonl(RUN))
    (tmp_path / "gold.jsonl").write_bytes(codecs.BOM_UTF8 + jsonl(GOLD))
    rc, out, err = run_cli(capsys, "evaluate", str(tmp_path / "run.jsonl"), str(tmp_path / "gold.jsonl"))
    assert rc == 0, err
    rc, want, _ = run_cli(capsys, "evaluate", str(demo_dir() / "run.json"), str(demo_dir() / "gold.json"))
    assert json.loads(out)["quality"] == json.loads(want)["quality"]


@pytest.mark.parametrize(("data", "message"), [
    (jsonl(RUN).decode().encode("utf-16"), "UTF-16 text is not read incrementally; save the file as UTF-8"),
    (jsonl(RUN).decode().encode("utf-16-le"), "the file looks like UTF-16 text without a byte-order mark; save "
                                              "it as UTF-8"),
    (jsonl(RUN).decode().encode("utf-32"), "the file is UTF-32 text; save it as UTF-8"),
], ids=["utf-16", "utf-16-no-bom", "utf-32"])
def test_json_lines_in_other_encodings_get_the_text_policy_message(tmp_path, capsys, data, message):
    path = tmp_path / "run.jsonl"
    path.write_bytes(data)
    with pytest.raises(DialevalError) as e:
        read_records([path])
    assert (e.value.message, e.value.file) == (message, str(path))
    rejects: list = []
    assert list(iter_dialogues(path, rejects)) == []
    assert [(r.line, r.error) for r in rejects] == [(0, f"the file: {message}")]
    rc, _, err = run_cli(capsys, "evaluate", str(path), str(demo_dir() / "gold.json"))
    assert rc == 2 and one_error_line(err) == f"error: {path}: {message}"


# 2. A gzip file cut short or damaged: a located error, not click's "aborted" or a bare CRC message.

def _damaged(tmp_path: Path, how: str, records: list) -> Path:
    data = bytearray(gzip.compress(json.dumps(records).encode()))
    if how == "truncated":
        data = data[: len(data) // 2]
    else:  # the CRC-32 in the trailer, one bit off
        data[-8] ^= 1
    path = tmp_path / f"{how}.json.gz"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(("how", "detail"), [("truncated", "Compressed file ended before the end-of-stream"),
                                             ("crc", "CRC check failed")])
def test_a_damaged_gzip_file_is_a_located_error(tmp_path, capsys, how, detail):
    path = _damaged(tmp_path, how, RUN)
    with pytest.raises(DialevalError) as e:
        read_records([path])
    assert e.value.file == str(path)
    assert e.value.message.startswith(f"not readable: not a complete gzip file: {detail}")
    rc, _, err = run_cli(capsys, "evaluate", str(path), str(demo_dir() / "gold.json"))
    assert rc == 2 and one_error_line(err).startswith(f"error: {path}: {e.value.message[:60]}")
    rc, _, err = run_cli(capsys, "evaluate", str(demo_dir() / "run.json"), str(_damaged(tmp_path, how, GOLD)))
    assert rc == 2 and "not a complete gzip file" in one_error_line(err) and f"{how}.json.gz" in err


def test_a_damaged_gzip_shard_is_one_reject_naming_the_problem(tmp_path):
    path = _damaged(tmp_path, "truncated", [{"id": d["id"], "turns": d["turns"]} for d in GOLD])
    rejects: list = []
    list(iter_dialogues(path, rejects))
    assert rejects[-1].line == 0 and rejects[-1].error.startswith("the file: not readable: not a complete gzip file: ")
    with pytest.raises(DialevalError, match="not a complete gzip file") as e:
        list(iter_dialogues(path, fail_fast=True))
    assert e.value.file == str(path)


# 3. Errors on the records of a JSON Lines, gzip, glob or predict-folder run or gold name the file and line.

def _bad_run() -> list:
    run = json.loads(json.dumps(RUN))
    run[2]["qualty"] = run[2].pop("quality")
    return run


def test_a_json_lines_run_error_names_its_file_and_line(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n" + jsonl(_bad_run()))
    rc, _, err = run_cli(capsys, "evaluate", str(path), str(demo_dir() / "gold.json"))
    line = one_error_line(err)
    assert rc == 2 and line.startswith(f"error: {path}: dialogue {RUN[2]['id']}: unknown key 'qualty'")
    assert line.endswith("(line 4)")


def test_a_gzip_run_error_names_its_file(tmp_path, capsys):
    path = tmp_path / "run.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_bad_run()).encode()))
    rc, _, err = run_cli(capsys, "evaluate", str(path), str(demo_dir() / "gold.json"))
    assert rc == 2 and one_error_line(err).startswith(f"error: {path}: dialogue {RUN[2]['id']}: unknown key")


def test_a_glob_run_error_names_the_shard_it_is_in(tmp_path, capsys):
    run = _bad_run()
    (tmp_path / "a.jsonl").write_bytes(jsonl(run[:2]))
    (tmp_path / "b.jsonl").write_bytes(jsonl(run[2:]))
    rc, _, err = run_cli(capsys, "evaluate", str(tmp_path / "*.jsonl"), str(demo_dir() / "gold.json"))
    line = one_error_line(err)
    assert rc == 2 and line.startswith(f"error: {tmp_path / 'b.jsonl'}: dialogue {RUN[2]['id']}: ")
    assert line.endswith("(line 1)")


def test_a_predict_folder_run_error_names_its_shard(tmp_path, capsys):
    folder = tmp_path / "pout"
    folder.mkdir()
    (folder / "part-0.jsonl").write_bytes(jsonl(_bad_run()))
    rc, _, err = run_cli(capsys, "evaluate", str(folder), str(demo_dir() / "gold.json"))
    assert rc == 2 and one_error_line(err).startswith(f"error: {folder / 'part-0.jsonl'}: dialogue ")


def test_an_error_with_no_dialogue_names_the_file(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    path.write_bytes(jsonl([RUN[0], 5]))
    rc, _, err = run_cli(capsys, "evaluate", str(path), str(demo_dir() / "gold.json"))
    assert rc == 2 and one_error_line(err).startswith(f"error: {path}: ")


def test_a_json_lines_gold_error_names_its_file_and_line(tmp_path, capsys):
    gold = json.loads(json.dumps(GOLD))
    gold[3]["annotations"][0]["quality"]["Q"] = 1
    path = tmp_path / "gold.jsonl"
    path.write_bytes(jsonl(gold))
    rc, _, err = run_cli(capsys, "evaluate", str(demo_dir() / "run.json"), str(path))
    line = one_error_line(err)
    assert rc == 2 and line.startswith(f"error: {path}: dialogue {GOLD[3]['id']}: annotations[0].quality: ")
    assert line.endswith("(line 4)")


# 4. A record longer than many chunks is scanned once: the array reader is linear in the file's size.

def _scanned(monkeypatch) -> list[int]:
    sizes: list[int] = []

    def counting(buf: bytes, *state):
        sizes.append(len(buf))
        return top_level_structure(buf, *state)

    monkeypatch.setattr(jsonarray, "top_level_structure", counting)
    return sizes


@pytest.mark.parametrize("tail", ["", "\\\\", '\\"'])
def test_a_long_record_is_scanned_once(monkeypatch, tail):
    record = {"id": "big", "turns": [{"sender": "customer", "utterances": ['a,]}{"\\' + tail] * 3}] * 4000,
              "x": "y"}
    data = json.dumps([record, {"id": "b"}, record]).encode()
    sizes = _scanned(monkeypatch)
    parts = list(array_parts(io.BytesIO(data), "x.json", chunk=997))
    assert sum(sizes) <= len(data) + 2 * len(sizes)  # re-scanned at most a byte or two of backslashes per chunk
    elements = [e for p in parts for e in json.loads(b"[" + p.data + b"]")]
    assert elements == [record, {"id": "b"}, record]


def test_a_25_mb_record_is_read_with_each_byte_scanned_once(tmp_path, monkeypatch):
    record = {"id": "big", "turns": [{"sender": "helpdesk", "utterances": ["\u4e2d,\\\"]" * 40]}] * 60_000}
    path = tmp_path / "big.json"
    path.write_bytes(json.dumps([record]).encode())
    assert path.stat().st_size > 20 * 1024 * 1024
    sizes = _scanned(monkeypatch)
    assert list(iter_records(path)) == [record]
    assert sum(sizes) <= path.stat().st_size + 2 * len(sizes)


# 5. A pipe is read once: detection refuses it (naming it, and what to do) instead of using up its start.

def test_detection_refuses_a_pipe_without_reading_it(tmp_path):
    fifo = tmp_path / "gold.fifo"
    os.mkfifo(fifo)  # opening it would block: the check comes first
    with pytest.raises(DialevalError) as e:
        detect(fifo)
    assert e.value.file == str(fifo)
    assert "not a regular file" in e.value.message and "save it to a file" in e.value.message
    assert "--from" in e.value.message
    check_not_swapped(fifo, Path(demo_dir() / "gold.json"))  # no swap check on a pipe: returns, reads nothing
    check_not_swapped(Path(demo_dir() / "gold.json"), fifo)


def _cli_with_stdin(*args: str, data: bytes) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "dialeval", *args], input=data, capture_output=True, env=env,
                          check=False, timeout=120)


def test_a_piped_gold_is_refused_clearly_or_read_once_with_from(tmp_path):
    data = (demo_dir() / "gold.json").read_bytes()
    proc = _cli_with_stdin("gold", "/dev/stdin", data=data)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and one_error_line(err).startswith("error: /dev/stdin: is not a regular file")
    assert "the file is empty" not in err
    proc = _cli_with_stdin("gold", "/dev/stdin", "--from", "stc3", data=data)
    assert proc.returncode == 0, proc.stderr
    proc = _cli_with_stdin("evaluate", str(demo_dir() / "run.json"), "/dev/stdin", data=data)
    assert proc.returncode == 2 and "is not a regular file" in one_error_line(proc.stderr.decode())
    proc = _cli_with_stdin("evaluate", str(demo_dir() / "run.json"), "/dev/stdin", "--from", "stc3", data=data)
    assert proc.returncode == 0, proc.stderr
    assert "quality" in json.loads(proc.stdout)
