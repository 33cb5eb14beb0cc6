"""A table of malformed inputs, each run through the real CLI in a subprocess (issue 16).

Every row: the files of a case, the command, and the first words of the error. Each must exit with status 2,
print exactly one line on stderr (``error: ...``), no traceback, and write nothing (no output file appears).
Rows run in parallel subprocesses with ``PYTHONPATH`` pointing at this checkout's ``src``.
"""

from __future__ import annotations

import codecs
import copy
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir

SRC = Path(__file__).resolve().parents[2] / "src"
DEMO_GOLD = json.loads((demo_dir() / "gold.json").read_text(encoding="utf-8"))
DEMO_RUN = json.loads((demo_dir() / "run.json").read_text(encoding="utf-8"))
DBDC_LOG = {"dialogue-id": "d1", "speaker-id": "", "group-id": "", "turns": [
    {"speaker": "U", "turn-index": 0, "utterance": "hi", "annotations": []},
    {"speaker": "S", "turn-index": 1, "utterance": "hello", "annotations": [
        {"annotator-id": "a", "breakdown": "O"}, {"annotator-id": "b", "breakdown": "X"}]}]}
DSTC9 = [{"context": "User: hi\nSystem: hello\n", "likeable": 3}, {"context": "User: yo\nSystem: no\n", "likeable": 1}]
GOLD = {"gold.json": DEMO_GOLD}


def run_with(change) -> list:
    r = copy.deepcopy(DEMO_RUN)
    change(r)
    return r


def _rename(rec: dict, old: str, new: str) -> None:
    rec[new] = rec.pop(old)


EV = ["evaluate", "{d}/run.json", "{d}/gold.json", "--per-dialogue", "{d}/out.csv"]
DB = ["evaluate", "{d}/run.json", "{d}/d1.log.json", "--per-dialogue", "{d}/out.csv"]
CORR = ["correlate", "{d}/chatbot1.json", "--scores", "{d}/scores.csv", "--plot", "{d}/out.png"]
SAMPLE = json.dumps(DEMO_RUN[:2]).encode()

# (name, files, command, first words of the message after "error: " with "{d}/" removed)
ROWS: list[tuple[str, dict, list[str], str]] = [
    ("empty run", {**GOLD, "run.json": b""}, EV, "run.json: the file is empty"),
    ("blank run", {**GOLD, "run.json": b"  \n"}, EV, "run.json: the file is empty"),
    ("not JSON", {**GOLD, "run.json": b"[{"}, EV, "run.json: not valid JSON"),
    ("trailing garbage", {**GOLD, "run.json": SAMPLE + b" x"}, EV, "run.json: not valid JSON"),
    ("top-level object", {**GOLD, "run.json": {"a": 1}}, EV, "run.json: the top level is a JSON dict"),
    ("array of numbers", {**GOLD, "run.json": [1, 2]}, EV, "run.json: item 0 is a JSON int"),
    ("empty array", {**GOLD, "run.json": []}, EV, "run.json: the run holds no dialogue"),
    ("no subtask", {**GOLD, "run.json": [{"id": "demo-001"}]}, EV,
     "run.json: dialogue demo-001: neither 'quality' nor 'nugget'"),
    ("typo key in the first record", {**GOLD, "run.json": run_with(lambda r: _rename(r[0], "quality", "quaility"))},
     EV, "run.json: dialogue demo-001: unknown key 'quaility'; did you mean 'quality'?"),
    ("typo key in the fourth record", {**GOLD, "run.json": run_with(lambda r: _rename(r[3], "quality", "quaility"))},
     EV, "run.json: dialogue demo-004: unknown key 'quaility'; did you mean 'quality'?"),
    ("typo nugget key", {**GOLD, "run.json": run_with(lambda r: _rename(r[1], "nugget", "nuggets"))},
     EV, "run.json: dialogue demo-002: unknown key 'nuggets'; did you mean 'nugget'?"),
    ("unknown quality key", {**GOLD, "run.json": run_with(lambda r: _rename(r[0]["quality"], "S", "X"))}, EV,
     "run.json: dialogue demo-001: quality: quality key 'X' is not allowed"),
    ("unknown quality bin", {**GOLD, "run.json": run_with(lambda r: _rename(r[0]["quality"]["A"], "2", "3"))}, EV,
     "run.json: dialogue demo-001: quality.A: unknown bin name '3'"),
    ("negative probability", {**GOLD, "run.json": run_with(lambda r: r[0]["quality"]["A"].update({"2": -1}))}, EV,
     "run.json: dialogue demo-001: quality.A.2: value -1.0 is not allowed"),
    ("NaN probability", {**GOLD, "run.json": json.dumps(run_with(
        lambda r: r[0]["quality"]["A"].update({"2": float("nan")}))).encode()}, EV,
     "run.json: dialogue demo-001: quality.A.2: value nan is not allowed"),
    ("string probability", {**GOLD, "run.json": run_with(lambda r: r[0]["quality"]["A"].update({"2": "0.5"}))}, EV,
     "run.json: dialogue demo-001: quality.A.2: value '0.5' is not a number"),
    ("all-zero distribution", {**GOLD, "run.json": run_with(
        lambda r: r[0]["quality"].update({"A": {"2": 0, "1": 0}}))}, EV,
     "run.json: dialogue demo-001: quality.A: all-zero distribution"),
    ("duplicate id", {**GOLD, "run.json": run_with(lambda r: r[1].update(id="demo-001"))}, EV,
     "run.json: dialogue demo-001: id: duplicate dialogue id"),
    ("id is a list", {**GOLD, "run.json": run_with(lambda r: r[1].update(id=["x"]))}, EV,
     "run.json: id: item 1: id ['x'] must be a string"),
    ("record without id", {**GOLD, "run.json": run_with(lambda r: r[1].pop("id"))}, EV,
     "run.json: id: item 1 has no 'id'"),
    ("subtasks differ", {**GOLD, "run.json": run_with(lambda r: r[2].pop("quality"))}, EV,
     "run.json: dialogue demo-003: this dialogue gives nugget but the first dialogue"),
    ("nugget not a list", {**GOLD, "run.json": run_with(lambda r: r[0].update(nugget={"CNUG0": 1}))}, EV,
     "run.json: dialogue demo-001: nugget: expected a list with one entry per turn"),
    ("too few nugget entries", {**GOLD, "run.json": run_with(lambda r: r[0]["nugget"].pop())}, EV,
     "run.json: dialogue demo-001: nugget: wrong number of nugget entries"),
    ("helpdesk type on a customer turn", {**GOLD, "run.json": run_with(
        lambda r: r[0]["nugget"].__setitem__(0, {"HNUG": 1}))}, EV,
     "run.json: dialogue demo-001: nugget[0]: unknown bin name 'HNUG' (a helpdesk type"),
    ("no dialogue in common", {**GOLD, "run.json": run_with(
        lambda r: [x.update(id="test-" + x["id"]) for x in r])}, EV,
     "run.json: 0 of 8 run ids are in the gold; run ids: test-demo-001, test-demo-002"),
    ("arguments swapped", {**GOLD, "run.json": DEMO_RUN}, ["evaluate", "{d}/gold.json", "{d}/run.json"],
     "the arguments look swapped: gold.json holds annotated dialogues"),
    ("UTF-16 without BOM", {**GOLD, "run.json": json.dumps(DEMO_RUN).encode("utf-16-le")}, EV,
     "run.json: the file looks like UTF-16 text without a byte-order mark"),
    ("UTF-32", {**GOLD, "run.json": json.dumps(DEMO_RUN).encode("utf-32")}, EV, "run.json: the file is UTF-32 text"),
    ("Latin-1", {**GOLD, "run.json": '[{"id": "d\u00e9mo"}]'.encode("latin-1")}, EV, "run.json: not UTF-8 text"),
    ("missing run file", GOLD, EV, "run.json: no such file"),
    ("run is a folder", {**GOLD, "run.json/x.json": DEMO_RUN}, EV, "run.json: is a folder; expected a JSON file"),
    ("alpha out of range", {**GOLD, "run.json": DEMO_RUN}, [*EV, "--alpha", "2"], "--alpha 2.0 is not allowed"),
    ("DBDC: misspelt scale", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdwn": {"O": 1}}]}]}, DB,
     "run.json: dialogue d1: turns[0].breakdwn: scale 'breakdwn' is not in the gold; did you mean 'breakdown'?"),
    ("DBDC: turn as a string", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": "1", "breakdown": {"O": 1}}]}]}, DB,
     "run.json: dialogue d1: turns[0].turn: 'turn' '1' is not allowed"),
    ("DBDC: unknown level", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdown": {"B": 1}}]}]}, DB,
     "run.json: dialogue d1: turns[0].breakdown: unknown bin name 'B'"),
    ("DBDC: no dialogue in common", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "zz", "turns": [{"turn": 1, "breakdown": {"O": 1}}]}]}, DB,
     "run.json: 0 of 1 run ids are in the gold; run ids: zz; gold ids: d1"),
    ("DBDC: gold and run swapped", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 1}}]}]}, ["evaluate", "{d}/d1.log.json", "{d}/run.json"],
     "the arguments look swapped"),
    ("DBDC: hard labels not an object", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 1}, "labels": "X"}]}]}, DB,
     "run.json: dialogue d1: turns[0].labels: 'labels' must be an object scale: level"),
    ("DBDC: unknown hard label", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 1}, "labels": {"breakdown": "x"}}]}]}, DB,
     "run.json: dialogue d1: turns[0].labels.breakdown: hard label 'x' is not allowed; did you mean 'X'?"),
    ("DBDC: threshold out of range", {"d1.log.json": DBDC_LOG, "run.json": [
        {"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 1}}]}]}, [*DB, "--dbdc-threshold", "2"],
     "--dbdc-threshold 2.0 is not allowed; allowed are numbers in [0, 1]"),
    ("compare: --columns 0", {**GOLD, "a.json": DEMO_RUN, "b.json": DEMO_RUN},
     ["compare", "{d}/a.json", "{d}/b.json", "--gold", "{d}/gold.json", "--out", "{d}/report", "--plot",
      "--columns", "0"], "columns 0 is not allowed"),
    ("compare: unknown --measures", {**GOLD, "a.json": DEMO_RUN, "b.json": DEMO_RUN},
     ["compare", "{d}/a.json", "{d}/b.json", "--gold", "{d}/gold.json", "--out", "{d}/report", "--measures",
      "nmdd"], "measure(s) 'nmdd' not among the score columns"),
    ("scores CSV: wrong columns", {"chatbot1.json": DSTC9, "scores.csv": b"dialogue;value\n0;1\n"}, CORR,
     "scores.csv: the CSV's columns are 'dialogue', 'value'; expected id and score"),
    ("scores CSV: not a number", {"chatbot1.json": DSTC9, "scores.csv": b"id,score\n0,abc\n"}, CORR,
     "scores.csv: dialogue 0: line 2: score 'abc' is not a finite number"),
    ("scores CSV: UTF-32", {"chatbot1.json": DSTC9, "scores.csv": "id,score\n0,1\n".encode("utf-32")}, CORR,
     "scores.csv: the file is UTF-32 text"),
    ("scores CSV: bad --delimiter", {"chatbot1.json": DSTC9, "scores.csv": b"id,score\n0,1\n"},
     [*CORR, "--delimiter", "ab"], "scores.csv: delimiter 'ab' is not allowed"),
    ("scores CSV: UTF-16 BOM but odd bytes", {"chatbot1.json": DSTC9, "scores.csv": codecs.BOM_UTF16_LE + b"i\0d"},
     CORR, "scores.csv: the file starts with a UTF-16 byte-order mark but is not valid UTF-16"),
    ("compare: two formats to stdout", {**GOLD, "a.json": DEMO_RUN, "b.json": DEMO_RUN},
     ["compare", "{d}/a.json", "{d}/b.json", "--gold", "{d}/gold.json", "-f", "md", "-f", "json"],
     "2 formats (md, json) need --out DIR"),
    ("compare: a run with a typo", {**GOLD, "a.json": DEMO_RUN, "b.json": run_with(
        lambda r: _rename(r[5], "nugget", "nugget "))},
     ["compare", "{d}/a.json", "{d}/b.json", "--gold", "{d}/gold.json", "--out", "{d}/report"],
     "b.json: dialogue demo-006: unknown key 'nugget '; did you mean 'nugget'?"),
    ("compare: no dialogue in common", {**GOLD, "a.json": DEMO_RUN, "b.json": run_with(
        lambda r: [x.update(id="t" + x["id"]) for x in r])},
     ["compare", "{d}/a.json", "{d}/b.json", "--gold", "{d}/gold.json", "--out", "{d}/report"],
     "b.json: 0 of 8 run ids are in the gold"),
    ("stats tukey: one run", {"runs.txt": b"a\n", "m.matrix": b"1\n"},
     ["stats", "tukey", "--runs", "{d}/runs.txt", "{d}/m.matrix"], "runs.txt: 1 run name(s)"),
    ("stats tukey: a blank line between topics", {"runs.txt": b"a\nb\n", "m.matrix": b"1 2\n\n3 4\n5 6\n\n"},
     ["stats", "tukey", "--runs", "{d}/runs.txt", "{d}/m.matrix"],
     "m.matrix: line 2 is blank between topic lines (topics 1 and 2)"),
    ("gold: no such corpus", {}, ["gold", "{d}/nothing", "-o", "{d}/out.json"], "nothing: no such file or folder"),
    ("corpus stats: UTF-16 without BOM", {"c.json": json.dumps(DEMO_GOLD).encode("utf-16-le")},
     ["corpus", "stats", "{d}/c.json"], "c.json: the file looks like UTF-16 text without a byte-order mark"),
    ("predict: --model zh", {**GOLD}, ["predict", "{d}/gold.json", "--out", "{d}/out.json", "--model", "zh"],
     "--model zh: no such model folder"),
]


def _materialise(root: Path, files: dict) -> None:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())


def _run(case: tuple, root: Path) -> tuple:
    _name, files, cmd, _ = case
    d = root / f"case{ROWS.index(case):02d}"
    d.mkdir()
    _materialise(d, files)
    before = sorted(p.relative_to(d) for p in d.rglob("*"))
    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="80")
    proc = subprocess.run([sys.executable, "-m", "dialeval", *(a.replace("{d}", str(d)) for a in cmd)],
                          capture_output=True, text=True, env=env, timeout=120)
    after = sorted(p.relative_to(d) for p in d.rglob("*"))
    return proc, str(d) + "/", before, after


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("malformed")
    with ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(lambda c: _run(c, root), ROWS))
    return {c[0]: o for c, o in zip(ROWS, outs, strict=True)}


def test_the_table_is_large_enough():
    assert len(ROWS) >= 40 and len({r[0] for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("case", ROWS, ids=[r[0] for r in ROWS])
def test_malformed_input(case, results):
    name, _, _, expected = case
    proc, prefix, before, after = results[name]
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("error: ")
    message = lines[0].removeprefix("error: ").replace(prefix, "")
    assert message.startswith(expected), message
    assert after == before, f"files appeared: {sorted(set(after) - set(before))}"
    assert proc.stdout == ""
