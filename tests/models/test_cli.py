"""dialeval predict, train and cv end to end (through dialeval.cli.main.run)."""

from __future__ import annotations

import json

import pytest

import dialeval
from dialeval.cli.main import run
from dialeval.cli.models import Kind
from dialeval.models.base import KINDS


def test_train_then_predict(en60_path, tmp_path, capsys):
    model_dir, out = tmp_path / "model", tmp_path / "run.json"
    assert run(["train", str(en60_path), "--out", str(model_dir), "--model", "linear", "--seed", "2",
                "--param", "max_features=3000", "--param", "analyzer=char"]) == 0
    meta = json.loads((model_dir / "model.json").read_text())
    assert meta["kind"] == "linear" and meta["seed"] == 2
    assert meta["params"]["max_features"] == 3000 and meta["params"]["analyzer"] == "char"
    assert meta["info"]["command"].startswith(f"dialeval train {en60_path} --out {model_dir} --model linear")
    assert "saved a linear model of subtasks quality, nugget (seed 2)" in capsys.readouterr().err
    assert run(["predict", str(en60_path), "--out", str(out), "--model", str(model_dir), "--subtask", "nugget"]) == 0
    records = json.loads(out.read_text())
    assert len(records) == 60 and "quality" not in records[0]
    assert dialeval.evaluate(records, str(en60_path))["nugget"]["jsd"] < 0.2


def test_cv_table_md_json_and_runs(en60_path, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert run(["cv", str(en60_path), "--folds", "3", "--model", "prior", "--model", "position", "--runs-out",
                str(runs)]) == 0
    out = capsys.readouterr().out
    assert "prior: 3-fold CV on en60.json" in out and "position: 3-fold CV" in out and "Summary" in out
    for head in ("NMD A", "RSNOD E", "JSD", "RNSS", "95% CI", "mean"):
        assert head in out
    assert sorted(p.name for p in runs.iterdir()) == ["cv-position-folds", "cv-position.json", "cv-prior-folds",
                                                      "cv-prior.json"]
    assert run(["compare", str(runs), "--gold", str(en60_path), "-B", "50"]) == 0
    capsys.readouterr()

    assert run(["cv", str(en60_path), "--folds", "3", "--model", "uniform", "--format", "json",
                "--subtask", "quality"]) == 0
    doc = json.loads(capsys.readouterr().out)
    r = doc["results"][0]
    assert r["kind"] == "uniform" and r["k"] == 3 and len(r["folds"]) == 3 and r["columns"][0] == "quality.nmd.A"
    assert r["mean"]["quality.nmd.A"] == pytest.approx(sum(f["quality.nmd.A"] for f in r["folds"]) / 3)

    assert run(["cv", str(en60_path), "--folds", "3", "--model", "uniform", "--format", "md", "--json-out",
                str(tmp_path / "cv.json")]) == 0
    md = capsys.readouterr().out
    assert "| fold | n | seconds | NMD A |" in md and "| mean | 60 |" in md
    saved = json.loads((tmp_path / "cv.json").read_text())["results"][0]
    assert saved["kind"] == "uniform" and saved["subtasks"] == ["quality", "nugget"] and len(saved["columns"]) == 8
    assert saved["folds"][0]["quality.nmd.A"] == r["folds"][0]["quality.nmd.A"]


def test_scoped_parameters(en60_path, capsys):
    assert run(["cv", str(en60_path), "--folds", "2", "--model", "prior", "--model", "position", "--param",
                "position.min_turns=1000", "--format", "json"]) == 0
    prior, position = json.loads(capsys.readouterr().out)["results"]
    assert prior["params"] == {} and position["params"] == {"min_turns": 1000}
    assert position["folds"] == prior["folds"]  # every key is too rare: the position model falls back to the prior
    assert run(["cv", str(en60_path), "--folds", "2", "--model", "prior", "--model", "position", "--param",
                "min_turns=2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: prior: unknown parameter(s) min_turns")


def test_kind_choices_come_from_the_registry(en60_path, tmp_path, capsys):
    assert [k.value for k in Kind] == list(KINDS)
    assert run(["train", str(en60_path), "--out", str(tmp_path / "m"), "--model", "svm"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --model: 'svm' is not allowed; allowed are {', '.join(KINDS)}\n"


@pytest.mark.parametrize("argv", [
    ["predict", "{data}", "--out", "{tmp}/r.json", "--model", "{tmp}/missing-model"],
    ["train", "{data}", "--out", "{tmp}/m", "--model", "position", "--param", "min_turns=0"],
    ["train", "{data}", "--out", "{tmp}/m", "--model", "prior", "--param", "oops"],
    ["train", "{data}", "--out", "{tmp}/m", "--model", "svm"],
    ["cv", "{data}", "--folds", "1", "--model", "prior"],
    ["predict", "{tmp}/no-such.json", "--out", "{tmp}/r.json", "--model", "en"],
])
def test_errors_are_one_line_and_exit_2(argv, en60_path, tmp_path, capsys):
    args = [a.format(data=en60_path, tmp=tmp_path) for a in argv]
    assert run(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "m").exists()


def test_train_and_cv_on_several_files(en60_records, tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(en60_records[:30]), encoding="utf-8")
    b.write_text(json.dumps(en60_records[30:]), encoding="utf-8")
    assert run(["train", str(a), str(b), "--out", str(tmp_path / "m"), "--model", "prior"]) == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["info"]["trained_on"]["dialogues"] == 60 and meta["info"]["command"].startswith(
        f"dialeval train {a} {b} --out")
    capsys.readouterr()
    assert run(["cv", str(a), str(b), "--folds", "3", "--model", "prior", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == [str(a), str(b)]
    assert [r["n_dialogues"] for r in doc["results"]] == [30, 30]
    assert all(r["trained_on"] == [str(a), str(b)] for r in doc["results"])
    assert run(["cv", str(a), str(b), "--folds", "3", "--model", "prior"]) == 0
    out = capsys.readouterr().out
    assert "each fold trained on a.json + b.json" in out and "Summary: 3-fold CV on b.json" in out
