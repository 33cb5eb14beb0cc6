"""`dialeval evaluate` on good and bad input: one `error: FILE: dialogue ID: field: what` line, exit 2."""

from __future__ import annotations

import copy
import csv
import json
import re
import subprocess
import sys

import pytest

from dialeval.cli.main import run as cli

GOOD_Q = {"2": 0.5, "1": 0.5}
GOOD_RUN = [
    {"id": "d1", "quality": {"A": GOOD_Q, "S": GOOD_Q, "E": GOOD_Q},
     "nugget": [{"CNUG0": 1.0}, {"HNUG": 0.5, "HNaN": 0.5}]},
    {"id": "d2", "quality": {"A": GOOD_Q, "S": GOOD_Q, "E": GOOD_Q},
     "nugget": [{"CNUG0": 1.0}, {"HNUG*": 1.0}, {"CNUG*": 0.5, "CNaN": 0.5}]},
    {"id": "d3", "quality": {"A": GOOD_Q, "S": GOOD_Q, "E": GOOD_Q}, "nugget": [{"CNaN": 1.0}]},
]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path, name: str, content: object, *, raw: bool = False) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if raw else json.dumps(content), encoding="utf-8")
    return str(path)


def bad_run(change) -> list:
    r = copy.deepcopy(GOOD_RUN)
    change(r)
    return r


def test_good_run_json_and_table(tmp_path, capsys, tiny_gold_path):
    run = write(tmp_path, "run.json", GOOD_RUN)
    rc, out, err = run_cli(capsys, "evaluate", run, str(tiny_gold_path))
    assert rc == 0 and err == ""
    result = json.loads(out)
    assert set(result) == {"quality", "nugget", "dialogues", "settings"}
    assert set(result["quality"]) == {"nmd", "rsnod"} and set(result["quality"]["nmd"]) == {"A", "S", "E"}
    rc, out, _ = run_cli(capsys, "evaluate", run, str(tiny_gold_path), "--format", "table", "--display", "neglog2")
    assert rc == 0 and "NMD" in out and "RSNOD" in out and "-log2" in out and "3 scored" in out


def test_per_dialogue_file(tmp_path, capsys, tiny_gold_path):
    run = write(tmp_path, "run.json", GOOD_RUN[:2])
    pd = tmp_path / "per.csv"
    rc, _, err = run_cli(capsys, "evaluate", run, str(tiny_gold_path), "--strict", "--per-dialogue", str(pd))
    assert rc == 0 and "missing" not in err  # strict mode scores missing dialogues, no warning
    rows = list(csv.DictReader(pd.open(encoding="utf-8")))
    assert [r["id"] for r in rows] == ["d1", "d2", "d3"] and rows[2]["nugget.jsd"] == "1.0"


def test_extra_id_is_a_warning(tmp_path, capsys, tiny_gold_path):
    extra = dict(copy.deepcopy(GOOD_RUN[0]), id="zz9")
    run = write(tmp_path, "run.json", [*GOOD_RUN, extra])
    rc, out, err = run_cli(capsys, "evaluate", run, str(tiny_gold_path))
    assert rc == 0 and json.loads(out)["dialogues"] == {"scored": 3, "missing": 0, "extra": 1}
    assert err.startswith("warning: ") and "1 dialogue(s) not in the gold" in err and "zz9" in err


def _set(path, value):
    def change(r):
        node = r
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


BAD_RUNS = [
    ("not JSON", b'[{"id": "d1",', r"run\.json: not valid JSON: .* \(line 1, column \d+\)"),
    ("not UTF-8", b'[{"id": "d\xff1"}]', r"run\.json: not UTF-8 text \(byte 10\); JSON files must be UTF-8"),
    ("not a list", {"id": "d1"}, r"run\.json: the top level is a JSON dict; expected an array of dialogues"),
    ("empty file", b"", r"run\.json: the file is empty"),
    ("no dialogue", [], r"run\.json: the run holds no dialogue"),
    ("item not an object", [GOOD_RUN[0], 42], r"run\.json: item 1 is a JSON int; expected an object"),
    ("no id", bad_run(lambda r: r[1].pop("id")), r"run\.json: id: item 1 has no 'id'"),
    ("duplicate id", bad_run(lambda r: r.append(copy.deepcopy(r[0]))),
     r"run\.json: dialogue d1: id: duplicate dialogue id"),
    ("wrong number of nuggets", bad_run(lambda r: r[1]["nugget"].pop()),
     r"run\.json: dialogue d2: nugget: wrong number of nugget entries: 2 for 3 turns"),
    ("nugget of the other sender", bad_run(_set([1, "nugget", 1], {"CNUG": 1.0})),
     r"run\.json: dialogue d2: nugget\[1\]: unknown bin name 'CNUG' \(a customer type; this turn's sender is "
     r"helpdesk\); allowed are HNUG, HNUG\*, HNaN"),
    ("unknown quality bin", bad_run(_set([2, "quality", "S"], {"3": 1.0})),
     r"run\.json: dialogue d3: quality\.S: unknown bin name '3'; allowed are 2, 1, 0, -1, -2"),
    ("negative", bad_run(_set([0, "quality", "A", "2"], -0.1)),
     r"run\.json: dialogue d1: quality\.A\.2: value -0\.1 is not allowed; allowed are finite numbers >= 0"),
    ("negative, every bin given",
     bad_run(_set([1, "quality", "S"], {"2": 0.5, "1": 0.5, "0": 0, "-1": -1e-9, "-2": 0})),
     r"run\.json: dialogue d2: quality\.S\.-1: value -1e-09 is not allowed; allowed are finite numbers >= 0"),
    ("NaN", b'[{"id": "d1", "quality": {"A": {"2": NaN}, "S": {"2": 1}, "E": {"2": 1}}}]',
     r"run\.json: dialogue d1: quality\.A\.2: value nan is not allowed"),
    ("infinite", b'[{"id": "d1", "nugget": [{"CNUG0": Infinity}, {"HNUG": 1}]}]',
     r"run\.json: dialogue d1: nugget\[0\]\.CNUG0: value inf is not allowed"),
    ("all zero", bad_run(_set([1, "nugget", 2], {"CNUG0": 0, "CNaN": 0.0})),
     r"run\.json: dialogue d2: nugget\[2\]: all-zero distribution; at least one bin must be positive"),
    ("quality key", bad_run(_set([0, "quality", "X"], GOOD_Q)),
     r"run\.json: dialogue d1: quality: quality key 'X' is not allowed; allowed are A, S, E"),
    ("missing quality key", bad_run(lambda r: r[2]["quality"].pop("E")),
     r"run\.json: dialogue d3: quality: quality key E is missing"),
    ("value not a number", bad_run(_set([0, "quality", "A", "1"], "0.5")),
     r"run\.json: dialogue d1: quality\.A\.1: value '0\.5' is not a number"),
    ("boolean value", bad_run(_set([0, "nugget", 0], {"CNUG0": True})),
     r"run\.json: dialogue d1: nugget\[0\]\.CNUG0: value True is not a number"),
    ("distribution not an object", bad_run(_set([0, "nugget", 0], [0.5, 0.5])),
     r"run\.json: dialogue d1: nugget\[0\]: expected an object of bin: probability"),
    ("subtasks differ", bad_run(lambda r: r[2].pop("nugget")),
     r"run\.json: dialogue d3: this dialogue gives quality but the first dialogue of the run gives quality and "
     r"nugget"),
]


@pytest.mark.parametrize("content,pattern", [(c, p) for _, c, p in BAD_RUNS], ids=[n for n, _, _ in BAD_RUNS])
def test_bad_run(tmp_path, capsys, tiny_gold_path, content, pattern):
    run = write(tmp_path, "run.json", content)
    rc, out, err = run_cli(capsys, "evaluate", run, str(tiny_gold_path))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert re.search(pattern, err), err


def _gold_change(change):
    def make(gold):
        change(gold)
        return gold
    return make


BAD_GOLDS = [
    ("inconsistent annotation lengths", _gold_change(lambda g: g[1]["annotations"][1]["nugget"].pop()),
     r"gold\.json: dialogue d2: annotations\[1\]\.nugget: inconsistent annotation lengths: 2 nugget labels for 3 "
     r"turns"),
    ("rating out of scale", _gold_change(lambda g: g[0]["annotations"][0]["quality"].update(A=3)),
     r"gold\.json: dialogue d1: annotations\[0\]\.quality\.A: rating 3 is not allowed; allowed are 2, 1, 0, -1, -2"),
    ("nugget of the other sender", _gold_change(lambda g: g[0]["annotations"][1]["nugget"].__setitem__(1, "CNUG")),
     r"gold\.json: dialogue d1: annotations\[1\]\.nugget\[1\]: nugget type 'CNUG' \(a customer type\) is not "
     r"allowed for a helpdesk turn"),
    ("no annotations", _gold_change(lambda g: g[2].pop("annotations")),
     r"gold\.json: dialogue d3: annotations: no annotations: a gold file needs every annotator's labels"),
    ("bad sender", _gold_change(lambda g: g[1]["turns"][0].update(sender="agent")),
     r"gold\.json: dialogue d2: turns\[0\]\.sender: sender 'agent' is not allowed; allowed are customer, helpdesk"),
    ("duplicate id", _gold_change(lambda g: g.append(copy.deepcopy(g[0]))),
     r"gold\.json: dialogue d1: id: duplicate dialogue id"),
]


@pytest.mark.parametrize("change,pattern", [(c, p) for _, c, p in BAD_GOLDS], ids=[n for n, _, _ in BAD_GOLDS])
def test_bad_gold(tmp_path, capsys, tiny_gold, change, pattern):
    gold = write(tmp_path, "gold.json", change(tiny_gold))
    run = write(tmp_path, "run.json", GOOD_RUN)
    rc, out, err = run_cli(capsys, "evaluate", run, gold)
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert re.search(pattern, err), err


@pytest.mark.parametrize("args,pattern", [
    (["evaluate"], r"error: Missing argument 'SUBMISSION'|error: Missing argument 'submission'"),
    (["evaluate", "nope.json", "gold.json"], r"error: .*nope\.json: no such file|error: .*gold\.json: no such file"),
    (["evaluate", "RUN", "GOLD", "--format", "xml"], r"error: --format: 'xml' is not allowed; allowed are json, tab"),
    (["evaluate", "RUN", "GOLD", "--alpha", "2"], r"error: --alpha 2\.0 is not allowed; allowed are numbers in \[0, 1"),
    (["evaluate", "RUN", "GOLD", "--rsnod-variant", "2017"], r"error: --rsnod-variant: '2017' is not allowed; allowed"),
    (["evaluate", "RUN", "GOLD", "--alpha", "zz"], r"error: --alpha: 'zz' is not allowed; allowed are numbers$"),
    (["evaluate", "RUN", "GOLD", "--format", "it's"], r"""error: --format: "it's" is not allowed; allowed are json"""),
    (["evaluate", "RUN", "GOLD", "--format", "x" * 500], r"error: --format: 'x{50,}\.\.\. \(502 characters in all\)"),
    (["no-such-command"], r"error: No such command 'no-such-command'"),
])
def test_usage_errors(tmp_path, capsys, tiny_gold_path, args, pattern):
    run = write(tmp_path, "run.json", GOOD_RUN)
    args = [run if a == "RUN" else str(tiny_gold_path) if a == "GOLD" else a for a in args]
    rc, _, err = run_cli(capsys, *args)
    assert rc == 2 and err.count("\n") == 1 and re.search(pattern, err), err


def test_the_installed_command_prints_no_traceback(tmp_path, tiny_gold_path):
    run = write(tmp_path, "run.json", b"[1, 2")
    proc = subprocess.run([sys.executable, "-m", "dialeval", "evaluate", run, str(tiny_gold_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    proc = subprocess.run([sys.executable, "-m", "dialeval", "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "evaluate" in proc.stdout


def test_turns_left_out_of_dialogues_the_run_has_are_a_warning(tmp_path, capsys):
    """A turn-level run that leaves out some turns of a dialogue it predicts is told so (its mean would otherwise
    silently skip them); --strict scores them as the worst value, without the warning."""
    log = {"dialogue-id": "x_00001", "turns": [
        {"turn-index": i, "speaker": "US"[i % 2], "utterance": f"u{i}",
         "annotations": [{"annotator-id": "a", "breakdown": "O"}] if i % 2 else []} for i in range(6)]}
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "x_00001.log.json").write_text(json.dumps(log))
    run = write(tmp_path, "run.json", [{"id": "x_00001", "turns": [{"turn": 1, "breakdown": {"O": 1}}]}])
    rc, out, err = run_cli(capsys, "evaluate", run, str(gold))
    assert rc == 0 and json.loads(out)["items"]["breakdown"] == {"scored": 1, "missing": 2}
    assert err == (f"warning: {run}: gold items missing from dialogues the run predicts were not scored: 2 of "
                   "breakdown (use --strict to score them as the worst value)\n")
    rc, _, err = run_cli(capsys, "evaluate", run, str(gold), "--strict")
    assert rc == 0 and err == ""


def test_swapped_arguments_in_the_python_api(tmp_path, tiny_gold_path):
    import dialeval
    from dialeval import DialevalError

    run = write(tmp_path, "run.json", GOOD_RUN)
    with pytest.raises(DialevalError, match=r"the arguments look swapped: .* the order is `evaluate\(run, gold\)`"):
        dialeval.evaluate(str(tiny_gold_path), run)
