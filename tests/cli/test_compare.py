"""``dialeval compare`` and ``dialeval stats tukey`` end to end."""

from __future__ import annotations

import json

import numpy as np

from dialeval.cli.main import run
from dialeval.io.discpower import read_matrix
from dialeval.stats import randomized_tukey_hsd


def test_markdown_to_stdout(demo_runs, capsys):
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "-B", "300"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Comparison of 3 runs") and "B = 300, seed = 0, alpha = 0.05" in out
    assert "## NMD (A)" in out and "## Agreement of the measures' rankings" in out


def test_every_format_plot_and_matrices(demo_runs, capsys):
    out_dir, mat = demo_runs / "report", demo_runs / "matrices"
    argv = ["compare", str(demo_runs / "runs" / "r1.json"), str(demo_runs / "runs" / "r2.json"),
            str(demo_runs / "runs" / "r3.json"), "--gold", str(demo_runs / "gold.json"), "--out", str(out_dir),
            "--plot", "--matrix-out", str(mat), "-B", "400", "--seed", "5", "--alpha", "0.1"]
    for f in ("md", "csv", "latex", "json"):
        argv += ["--format", f]
    assert run(argv) == 0
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == ["comparison-agreement.csv", "comparison-groups.csv", "comparison-pairs.csv",
                     "comparison-runs.csv", "comparison.json", "comparison.md", "comparison.tex", "means.png",
                     "means.svg"]
    report = json.loads((out_dir / "comparison.json").read_text())
    assert (report["settings"]["B"], report["settings"]["seed"], report["settings"]["alpha"]) == (400, 5, 0.1)
    assert (mat / "runs.txt").read_text().split() == ["r1", "r2", "r3"]
    assert len((mat / "topics.txt").read_text().split()) == 8
    X = read_matrix(mat / "quality.nmd.A.matrix", 3)
    p = randomized_tukey_hsd(X, B=400, seed=5).pvalues
    m = next(m for m in report["measures"] if m["name"] == "quality.nmd.A")
    runs = ["r1", "r2", "r3"]
    for pair in m["pairs"]:
        assert pair["pvalue"] == p[runs.index(pair["better"]), runs.index(pair["worse"])]


def test_stats_tukey_reads_matrix_out(demo_runs, capsys):
    mat = demo_runs / "m"
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "--matrix-out",
                str(mat), "-B", "50"]) == 0
    capsys.readouterr()
    assert run(["stats", "tukey", "--runs", str(mat / "runs.txt"), str(mat / "nugget.jsd.matrix"), "-B", "700",
                "--seed", "2"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    X = read_matrix(mat / "nugget.jsd.matrix", 3)
    r = randomized_tukey_hsd(X, B=700, seed=2)
    assert lines[0].split()[:2] == ["r1", "r2"] and len(lines) == 3
    a, b, diff, p = lines[1].split()
    assert (a, b) == ("r1", "r3")
    assert float(diff) == round(abs(r.means[0] - r.means[2]), 6) and float(p) == round(r.pvalues[0, 2], 6)
    assert "B = 700, seed = 2" in captured.err


def test_missing_dialogue_is_one_line_error(demo_runs, capsys):
    path = demo_runs / "runs" / "r2.json"
    records = json.loads(path.read_text())
    path.write_text(json.dumps(records[1:]))
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "-B", "50"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ")
    assert "r2.json" in err and "run 'r2' is missing 1 of the 8 gold dialogues: demo-001" in err
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "-B", "50",
                "--missing", "common"]) == 0
    captured = capsys.readouterr()
    assert "warning: run 'r2' lacks 1 gold dialogue(s), left out" in captured.err
    assert "compared on the 7 of 8 gold dialogues" in captured.out


def test_usage_errors(demo_runs, capsys):
    base = ["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json")]
    assert run([*base, "-f", "md", "-f", "json"]) == 2
    assert "need --out DIR" in capsys.readouterr().err
    assert run([*base, "--plot"]) == 2
    assert "--plot writes means.png" in capsys.readouterr().err
    assert run([*base, "-B", "0"]) == 2
    assert "-B 0 is not allowed" in capsys.readouterr().err
    assert run([*base, "--format", "docx"]) == 2
    assert "docx" in capsys.readouterr().err
    bad = demo_runs / "bad.matrix"
    bad.write_text("0.1 0.2 0.3\n0.1 0.2\n")
    (demo_runs / "runs.txt").write_text("a\nb\nc\n")
    assert run(["stats", "tukey", "--runs", str(demo_runs / "runs.txt"), str(bad)]) == 2
    assert "bad.matrix: line 2 has 2 value(s); expected 3" in capsys.readouterr().err
    assert np.isfinite(1.0)


def test_from_reads_the_gold_in_the_named_format(demo_runs, capsys):
    """--from, as evaluate/train take it: the gold read as that format, and named by its path in the report."""
    gold = demo_runs / "gold.json"
    argv = ["compare", str(demo_runs / "runs"), "--gold", str(gold), "-B", "50", "--format", "json"]
    assert run([*argv, "--from", "stc3"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["scoring"]["gold"] == str(gold)
    assert run([*argv, "--from", "dbdc"]) == 2
    message = capsys.readouterr().err
    assert message.startswith("error: ") and len(message.strip().splitlines()) == 1 and "gold.json" in message


def test_a_report_written_again_leaves_no_file_of_the_earlier_one(demo_runs, capsys):
    out_dir = demo_runs / "report"
    base = ["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "--out", str(out_dir)]
    assert run([*base, "-B", "60", "--seed", "1", "-f", "md", "-f", "csv", "-f", "json", "--plot"]) == 0
    (out_dir / "notes.md").write_text("mine")
    capsys.readouterr()
    assert run([*base, "-B", "20", "-f", "md"]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["comparison.md", "notes.md"]
    assert "removed 7 file(s) of an earlier report" in capsys.readouterr().err


def test_options_are_checked_before_anything_is_written(demo_runs, capsys):
    mat = demo_runs / "mat"
    argv = ["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "-B", "20"]
    assert run([*argv, "--matrix-out", str(mat), "--measures", "bogus"]) == 2
    assert not mat.exists() and "bogus" in capsys.readouterr().err
    assert run([*argv, "--columns", "5"]) == 2
    assert "--columns 5 sets the panels per row of --plot" in capsys.readouterr().err


def test_too_few_resamples_is_one_warning_line_per_rule(demo_runs, capsys):
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "-B", "5"]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: B = 5")]
    assert len(lines) == 2, lines   # the interval's rule and alpha's, each said once
    assert "use B >= 40" in lines[0] + lines[1] and "use B >= 20" in lines[0] + lines[1]


def test_an_empty_measures_option_and_a_comma_matrix_are_explained(demo_runs, tmp_path, capsys):
    assert run(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "--measures", ""]) == 2
    assert "measures [''] name no measure" in capsys.readouterr().err
    (tmp_path / "m.txt").write_text("0.1,0.2\n0.3,0.4\n")
    (tmp_path / "r.txt").write_text("a\nb\n")
    assert run(["stats", "tukey", str(tmp_path / "m.txt"), "--runs", str(tmp_path / "r.txt")]) == 2
    assert "separated by blanks (this line uses ','" in capsys.readouterr().err

