"""Where commands write and what they read: no output destroys an input or another output, a path of the wrong
kind is a one-line error before any work, and inputs of another format are named as such (no shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir
from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.io.atomic import check_output_file, make_folder, output_format, write_text
from dialeval.io.detect import detect
from dialeval.models import Estimator


@pytest.fixture
def demo(tmp_path) -> Path:
    """The demo corpus's gold and run, copied to ``tmp_path``."""
    for name in ("gold.json", "run.json"):
        (tmp_path / name).write_bytes((demo_dir() / name).read_bytes())
    return tmp_path


def _dbdc(folder: Path) -> Path:
    """A one-dialogue DBDC log with two annotated system turns, in ``folder``."""
    folder.mkdir()
    ann = [{"annotator-id": f"a{i}", "breakdown": "OTX"[i % 3]} for i in range(5)]
    turns = [{"turn-index": i, "speaker": "US"[i % 2], "utterance": f"u{i}",
              **({"annotations": ann} if i % 2 else {})} for i in range(4)]
    (folder / "x_00001.log.json").write_text(json.dumps({"dialogue-id": "x_00001", "turns": turns}))
    return folder


def _err(capsys) -> str:
    e = capsys.readouterr().err
    assert e.startswith("error: ") and e.count("\n") == 1, e
    return e[len("error: "):-1]


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(demo, capsys):
    gold, before = demo / "gold.json", (demo / "gold.json").read_bytes()
    assert run(["gold", str(gold), "-o", str(gold)]) == 2
    assert _err(capsys) == (f"--out {gold} is also an input of this command ({gold}); writing it would overwrite "
                            "that input: give another path")
    assert run(["evaluate", str(demo / "run.json"), str(gold), "--per-dialogue", str(demo / "run.json")]) == 2
    assert "--per-dialogue" in _err(capsys)
    assert run(["corpus", "convert", str(gold), str(gold), "--to", "stc3"]) == 2
    assert _err(capsys).startswith(f"DST {gold} is also an input")
    assert gold.read_bytes() == before


def test_an_output_in_an_input_folder_or_holding_an_input_is_refused(demo, capsys):
    """A file of an input folder overwritten, a model written into a corpus folder, shards written over their
    own input: each refused before any work, the inputs kept byte for byte."""
    corpus = _dbdc(demo / "dbdc")
    log = corpus / "x_00001.log.json"
    before = log.read_bytes()
    model = demo / "m"
    assert run(["train", str(corpus), "--model", "prior", "--out", str(model)]) == 0
    capsys.readouterr()
    cases = [
        (["predict", str(corpus), "--model", str(model), "--out", str(log)],
         f"--out {log} is a file of the input folder {corpus}; writing it would overwrite that input: give another "
         "path"),
        (["predict", str(corpus), "--model", str(model), "--out", str(demo / "r.json"), "--scores", str(log)],
         f"--scores {log} is a file of the input folder {corpus}"),
        (["train", str(corpus), "--model", "prior", "--out", str(corpus)],
         f"--out {corpus} is the input folder; writing there would overwrite or add to that input"),
        (["predict", str(demo / "gold.json"), "--out", str(demo / "r.json"), "--scores", str(demo)],
         f"{demo}: is a folder; expected the name of a file to write"),
        (["predict", str(demo / "gold.json"), "--out", str(demo)],
         f"--out {demo} is the folder of the input {demo / 'gold.json'}; writing there could overwrite it"),
    ]
    for argv, message in cases:
        assert run(argv) == 2
        assert _err(capsys).startswith(message)
    assert sorted(p.name for p in corpus.iterdir()) == ["x_00001.log.json"] and log.read_bytes() == before
    assert not (demo / "r.json").exists()


def test_train_and_cv_check_their_outputs_before_the_work(demo, capsys):
    gold = str(demo / "gold.json")
    (demo / "afile").write_text("keep")
    for argv, message in [
        (["train", gold, "--model", "prior", "--out", str(demo / "afile")],
         f"{demo / 'afile'}: is a file; expected a folder for a model"),
        (["cv", gold, "--model", "prior", "--folds", "2", "--json-out", str(demo)],
         f"{demo}: is a folder; expected the name of a file to write"),
        (["cv", gold, "--model", "prior", "--folds", "2", "--runs-out", str(demo / "afile")],
         f"{demo / 'afile'}: is a file; expected a folder for the held-out runs"),
    ]:
        assert run(argv) == 2
        assert _err(capsys) == message
    assert (demo / "afile").read_text() == "keep"


def test_cv_runs_of_files_of_one_name_go_to_their_own_folders(demo, capsys):
    for sub in ("a", "b"):
        (demo / sub).mkdir()
        (demo / sub / "tr.json").write_bytes((demo / "gold.json").read_bytes())
    out = demo / "cvs"
    assert run(["cv", str(demo / "a" / "tr.json"), str(demo / "b" / "tr.json"), "--model", "prior", "--folds", "2",
                "--runs-out", str(out), "--format", "json"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["tr-1", "tr-2"]
    assert capsys.readouterr().err.endswith(f"dialeval compare {out / 'tr-1'} --gold {demo / 'a' / 'tr.json'}; "
                                            f"dialeval compare {out / 'tr-2'} --gold {demo / 'b' / 'tr.json'})\n")


def test_two_outputs_of_one_path_are_refused(demo, capsys):
    corpus = _dbdc(demo / "dbdc")
    out = demo / "y.json"
    assert run(["predict", str(corpus), "--out", str(out), "--scores", str(out)]) == 2
    assert _err(capsys) == f"--scores {out} is also given as --out; each output needs its own path"
    assert not out.exists()
    assert run(["predict", str(corpus), "--out", str(out), "--scores", str(demo / "s.csv")]) == 2
    assert _err(capsys) == f"{demo / 's.csv'}: --scores format: suffix '.csv' is not allowed; allowed are .json"
    assert not out.exists()   # refused before predicting: no half of the output is left


@pytest.mark.parametrize("argv,message", [
    (["demo", "--out", "{f}"], "{f}: is a file; expected a folder for the demo files (--out)"),
    (["gold", "{gold}", "-o", "{f}/x.json"], "{f}/x.json: cannot write here: {f} is a file, not a folder"),
    (["gold", "{gold}", "-o", "{d}"], "{d}: is a folder; expected the name of a file to write"),
    (["evaluate", "{run}", "{gold}", "--per-dialogue", "{f}/x.csv"],
     "{f}/x.csv: cannot write here: {f} is a file, not a folder"),
    (["compare", "{run}", "{run2}", "--gold", "{gold}", "--out", "{f}", "-B", "20"],
     "{f}: is a file; expected a folder for the report"),
])
def test_a_path_of_the_wrong_kind_is_a_one_line_error(demo, capsys, argv, message):
    names = {"f": str(demo / "afile"), "d": str(demo), "gold": str(demo / "gold.json"), "run": str(demo / "run.json"),
             "run2": str(demo / "run2.json")}
    (demo / "run2.json").write_bytes((demo / "run.json").read_bytes())
    (demo / "afile").write_text("keep")
    assert run([a.format(**names) for a in argv]) == 2
    assert _err(capsys) == message.format(**names)
    assert (demo / "afile").read_text() == "keep"


def test_atomic_writing_names_the_target_not_its_temporary_file(tmp_path):
    with pytest.raises(DialevalError) as e:
        write_text(tmp_path / "no" / "such" / "x.json", "{}")
    assert str(e.value) == f"{tmp_path / 'no' / 'such' / 'x.json'}: cannot write: No such file or directory"
    assert check_output_file(tmp_path / "new.json") == tmp_path / "new.json"
    assert make_folder(tmp_path / "a" / "b").is_dir()
    assert output_format("x.PDF", ("png", "pdf")) == "pdf"
    with pytest.raises(DialevalError, match=r"plot format: no suffix is not allowed; allowed are \.png"):
        output_format("x", ("png",))


def test_a_plot_of_an_unknown_format_is_refused_before_the_work(tmp_path, capsys):
    assert run(["correlate", str(tmp_path), "--plot", str(tmp_path / "x.txt")]) == 2
    assert _err(capsys) == f"{tmp_path / 'x.txt'}: plot format: suffix '.txt' is not allowed; allowed are .png, " \
                           ".svg, .pdf"


def test_the_stc3_gold_document_is_a_perfect_run(demo, capsys):
    gold = demo / "gold.json"
    assert run(["gold", str(gold), "-o", str(demo / "g.json")]) == 0
    doc = json.loads((demo / "g.json").read_text())
    (demo / "dialogues.json").write_text(json.dumps(doc["dialogues"]))
    capsys.readouterr()
    for as_run in (demo / "g.json", demo / "dialogues.json"):
        assert run(["evaluate", str(as_run), str(gold)]) == 0
        s = json.loads(capsys.readouterr().out)
        values = [*s["quality"]["nmd"].values(), *s["quality"]["rsnod"].values(), s["nugget"]["jsd"],
                  s["nugget"]["rnss"]]
        assert len(values) == 8 and max(values) < 1e-12


def test_per_item_turns_out_of_order_are_an_error_for_stc3(demo, capsys):
    gold = demo / "gold.json"
    assert run(["gold", str(gold), "-o", str(demo / "g.json")]) == 0
    doc = json.loads((demo / "g.json").read_text())
    doc["dialogues"][0]["turns"].reverse()
    (demo / "g.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert run(["evaluate", str(demo / "g.json"), str(gold)]) == 2
    assert "an STC-3 run predicts every turn, numbered 0, 1, 2, ... in order" in _err(capsys)


def test_swapped_compare_arguments_are_named(demo, capsys):
    (demo / "gold2.json").write_bytes((demo / "gold.json").read_bytes())
    assert run(["compare", str(demo / "gold.json"), str(demo / "gold2.json"), "--gold", str(demo / "run.json")]) == 2
    assert _err(capsys).endswith("the order is `dialeval compare RUN... --gold GOLD`")


def test_a_damaged_model_folder_is_a_one_line_error(tmp_path, demo):
    from dialeval.models import train

    model = train(str(_dbdc(tmp_path / "dbdc")), kind="prior")
    folder = model.save(tmp_path / "m")
    (folder / "arrays.npz").write_bytes(b"not a zip")
    with pytest.raises(DialevalError) as e:
        Estimator.load(folder)
    assert str(e.value).startswith(f"{folder}: the saved model is damaged, or model.json and arrays.npz are not "
                                   "of one model (")


def test_detection_of_an_empty_file_says_so(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("")
    with pytest.raises(DialevalError) as e:
        detect(p)
    assert str(e.value) == f"{p}: the file is empty; expected a corpus of one of stc3, wochat, dbdc, conture, dstc9"


def test_gold_and_correlate_refuse_a_corpus_without_what_they_need(tmp_path, capsys):
    corpus = _dbdc(tmp_path / "dbdc")
    assert run(["correlate", str(corpus), "--scores", str(tmp_path / "s.json")]) == 2
    assert _err(capsys) == (f"{corpus}: the corpus has no dialogue-level human ratings to correlate with (its "
                            "scales: breakdown, turn level); correlate takes ConTurE, DSTC9 or another rated corpus")
    assert run(["gold", str(corpus), "--min-labels", "6"]) == 2
    assert _err(capsys) == f"{corpus}: no item has --min-labels 6 labels or more"
    test = tmp_path / "test.json"
    test.write_text(json.dumps([{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}]}]))
    assert run(["gold", str(test)]) == 2
    assert _err(capsys) == f"{test}: the corpus has no labels to build a gold from (is it a test file?)"


def test_predict_names_a_missing_model_folder_once_and_rightly(tmp_path, capsys):
    corpus = _dbdc(tmp_path / "dbdc")
    for name in ("en", "linear"):
        assert run(["predict", str(corpus), "--model", name, "--out", str(tmp_path / "r.json")]) == 2
        e = _err(capsys)
        assert e.startswith(f"--model {name}: no such model folder; give a folder saved by `dialeval train`, or "
                            "leave --model out for the shipped default")
        assert ("is a model kind" in e) == (name == "linear")


def test_evaluate_train_and_cv_take_the_format(demo, tmp_path, capsys):
    gold = demo / "gold.json"
    plain = demo / "gold.txt"
    plain.write_bytes(gold.read_bytes())
    assert run(["evaluate", str(demo / "run.json"), str(gold), "--from", "stc3"]) == 0
    assert run(["evaluate", str(demo / "run.json"), str(gold)]) == 0
    out = capsys.readouterr().out.split("\n}\n")
    assert json.loads(out[0] + "}") == json.loads(out[1] + "}")
    assert run(["train", str(plain), "--model", "prior", "--from", "stc3", "--out", str(tmp_path / "m")]) == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["info"]["command"].endswith("--from stc3")
    assert run(["cv", str(plain), "--model", "prior", "--folds", "2", "--from", "stc3", "--format", "json"]) == 0


def test_the_measures_of_any_task_are_matched_by_name():
    from dialeval.report.labels import column_title, match_columns

    cols = ["breakdown/jsd", "breakdown/nmd"]
    assert match_columns(cols, ["nmd"]) == ["breakdown/nmd"]
    assert match_columns(cols, ["JSD (breakdown)", "nmd.breakdown"]) == cols
    assert column_title("breakdown/jsd") == "JSD (breakdown): Jensen-Shannon divergence (bits); scale breakdown"
    with pytest.raises(DialevalError) as e:
        match_columns(cols, ["rnss"])
    assert str(e.value) == ("measure(s) 'rnss' not among the score columns; allowed are breakdown/jsd, "
                            "breakdown/nmd, or a measure alone (e.g. jsd)")


def test_the_evaluate_table_shows_item_counts_only_where_the_summary_has_them(demo, tmp_path, capsys):
    assert run(["evaluate", str(demo / "run.json"), str(demo / "gold.json"), "--format", "table"]) == 0
    stc3 = capsys.readouterr().out
    assert "mean" in stc3 and "items scored" not in stc3   # STC-3: dialogues counted under the table
    corpus = _dbdc(tmp_path / "dbdc")
    assert run(["gold", str(corpus), "-o", str(tmp_path / "g.json")]) == 0
    assert run(["evaluate", str(tmp_path / "g.json"), str(corpus), "--format", "table"]) == 0
    assert "items scored" in capsys.readouterr().out


def test_options_that_would_be_ignored_are_refused(tmp_path, capsys):
    corpus = _dbdc(tmp_path / "dbdc")
    out = str(tmp_path / "m")
    assert run(["train", str(corpus), "--model", "prior", "--subtask", "nugget", "--out", out]) == 2
    assert _err(capsys).startswith("--subtask nugget applies to STC-3 dialogues (DQ and ND)")
    assert run(["train", str(corpus), "--model", "prior", "--param", "linear.C=2", "--out", out]) == 2
    assert _err(capsys) == "--param linear.C applies to kind linear, which this command does not run (--model prior)"
    assert run(["cv", str(corpus), "--model", "prior", "--param", "a=1", "--param", "a=2"]) == 2
    assert _err(capsys) == "--param a is given twice (1 and 2); give each parameter once"
    assert not (tmp_path / "m").exists()
