"""How a run ends when it is stopped: Ctrl-C says so (it exited 130 in silence: typer returns the code without
raising), and a reader that goes away (``dialeval measures | head -1``) ends it quietly with 141, not with 1,
which means a failed check."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dialeval.cli import main as cli_main


@pytest.mark.parametrize("stop", [KeyboardInterrupt, lambda: SystemExit(1)])
def test_ctrl_c_and_a_broken_pipe_end_the_run_as_said(monkeypatch, capsys, stop):
    import dialeval.cli.measures as measures_cli

    def stopped(*args, **kwargs):
        raise stop()

    monkeypatch.setattr(measures_cli.out, "print", stopped)
    monkeypatch.setattr(cli_main, "_broken_pipe", lambda: cli_main.BROKEN_PIPE)   # keep the test's stdout
    monkeypatch.setattr(cli_main, "_stdout_muted", lambda: True)   # as rich and click leave it on a broken pipe
    code = cli_main.run(["measures"])
    err = capsys.readouterr().err
    if stop is KeyboardInterrupt:
        assert (code, err) == (cli_main.INTERRUPTED, "error: interrupted\n")
    else:
        assert (code, err) == (cli_main.BROKEN_PIPE, "")


def test_an_exit_1_that_is_not_a_broken_pipe_is_not_hidden(monkeypatch):
    import dialeval.cli.measures as measures_cli

    def exits(*args, **kwargs):
        raise SystemExit(1)

    monkeypatch.setattr(measures_cli.out, "print", exits)
    with pytest.raises(SystemExit):
        cli_main.run(["measures"])


def test_a_reader_that_goes_away_ends_the_run_quietly():
    r = subprocess.run(f"{sys.executable} -m dialeval measures | true; echo $? ${{PIPESTATUS[0]}}", shell=True,
                       executable="/bin/bash", capture_output=True, text=True, check=False)
    assert r.stdout.split()[-1] == "141" and r.stderr == ""


def test_refused_values_are_named_by_the_option_typed(tmp_path, capsys):
    """The library names a value as its parameter ("alpha 2.0", "B = 0", "min_labels 0"); the command line said
    it so, ambiguous in compare, which has --alpha and --nugget-alpha. An option is checked even where the
    input does not use it (--dbdc-threshold 2 with an STC-3 gold was ignored)."""
    from dialeval.cli.demo import demo_dir
    from dialeval.cli.main import run

    d = demo_dir()
    gold, demo_run = str(d / "gold.json"), str(d / "run.json")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for f in (a, b):
        f.write_bytes((d / "run.json").read_bytes())
    runs2 = [str(a), str(b), "--gold", gold]
    cases = [
        (["compare", *runs2, "--nugget-alpha", "2"],
         "error: --nugget-alpha 2.0 is not allowed; allowed are numbers in [0, 1]"),
        (["compare", *runs2, "--alpha", "2"],
         "error: --alpha 2.0 is not allowed; allowed are significance levels in (0, 1), e.g. 0.05"),
        (["compare", *runs2, "--level", "1"],
         "error: --level 1.0 is not allowed; allowed are numbers in (0, 1), e.g. 0.95"),
        (["compare", *runs2, "--seed", "-1"],
         "error: --seed -1 is not allowed; allowed are integers in [0, 2**64)"),
        (["evaluate", demo_run, gold, "--dbdc-threshold", "2"],
         "error: --dbdc-threshold 2.0 is not allowed; allowed are numbers in [0, 1]"),
        (["gold", gold, "--min-labels", "0"], "error: --min-labels 0 is not allowed; allowed are integers >= 1"),
    ]
    for argv, message in cases:
        assert run(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1, (argv, err)
    matrix, runs = tmp_path / "m.txt", tmp_path / "runs.txt"
    matrix.write_text("0.1 0.2\n0.3 0.1\n0.2 0.2\n")
    runs.write_text("a\nb\n")
    assert run(["stats", "tukey", str(matrix), "--runs", str(runs), "-B", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: -B 0 is not allowed; allowed are integers 1 to 10,000,000")
