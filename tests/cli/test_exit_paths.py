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
    code = cli_main.run(["measures"])
    err = capsys.readouterr().err
    if stop is KeyboardInterrupt:
        assert (code, err) == (cli_main.INTERRUPTED, "error: interrupted\n")
    else:
        assert (code, err) == (cli_main.BROKEN_PIPE, "")


def test_a_reader_that_goes_away_ends_the_run_quietly():
    r = subprocess.run(f"{sys.executable} -m dialeval measures | true; echo $? ${{PIPESTATUS[0]}}", shell=True,
                       executable="/bin/bash", capture_output=True, text=True, check=False)
    assert r.stdout.split()[-1] == "141" and r.stderr == ""
