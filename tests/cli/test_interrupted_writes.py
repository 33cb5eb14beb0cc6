"""Outputs that a failed or stopped command must not leave mixed, and inputs an output must not destroy (a probe of
interrupted writes): compare's report is moved into place whole; Discpower files never pair new matrices with an
earlier runs.txt, nor keep an earlier set's matrices; compare refuses a report folder that holds an input run;
demo --out does not overwrite the user's files; cv --runs-out leaves no fold of an earlier split; Ctrl-C while the
command modules load is 'error: interrupted', exit 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dialeval.cli import compare as compare_cli
from dialeval.cli.main import run
from dialeval.io.discpower import write_matrices


def _compare(demo_runs, *extra: str) -> list[str]:
    runs = [str(demo_runs / "runs" / f"r{i}.json") for i in (1, 2, 3)]
    return ["compare", *runs, "--gold", str(demo_runs / "gold.json"), "-B", "50", *extra]


def test_a_report_that_fails_while_written_leaves_the_earlier_one_whole(demo_runs, monkeypatch, capsys):
    out = demo_runs / "rep"
    assert run(_compare(demo_runs, "--out", str(out), "-f", "md", "-f", "json", "--plot", "--seed", "1")) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def stopped(*args, **kwargs):  # Ctrl-C while the plot is drawn, after the Markdown and JSON are written
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_cli, "plot_means", stopped)
    assert run(_compare(demo_runs, "--out", str(out), "-f", "md", "-f", "json", "--plot", "--seed", "2")) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no staging folder left, nothing changed
    monkeypatch.undo()
    assert run(_compare(demo_runs, "--out", str(out), "-f", "md", "-f", "json", "--plot", "--seed", "2")) == 0
    assert json.loads((out / "comparison.json").read_text())["settings"]["seed"] == 2
    assert sorted(p.name for p in out.iterdir()) == sorted(before)


def test_compare_refuses_a_report_folder_holding_an_input_run(demo_runs, capsys):
    runs = demo_runs / "runs"
    (runs / "comparison.json").write_bytes((runs / "r3.json").read_bytes())
    argv = ["compare", str(runs / "r1.json"), str(runs / "r2.json"), str(runs / "comparison.json"), "--gold",
            str(demo_runs / "gold.json"), "-B", "50"]
    for fmt in ("md", "json"):  # md would remove it as an earlier report's file, json overwrite it
        assert run([*argv, "--out", str(runs), "-f", fmt]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {runs} holds the input {runs / 'comparison.json'}") and \
            err.count("\n") == 1
        assert (runs / "comparison.json").read_bytes() == (runs / "r3.json").read_bytes()


def test_discpower_files_of_an_earlier_set_are_not_mixed_with_new_ones(tmp_path):
    import numpy as np

    out = tmp_path / "mat"
    write_matrices(out, ["a", "b"], ["d1"], {"quality.nmd.A": np.zeros((1, 2)), "nugget.jsd": np.zeros((1, 2))})
    write_matrices(out, ["c", "d"], ["d1"], {"quality.nmd.A": np.ones((1, 2))})
    assert sorted(p.name for p in out.iterdir()) == ["quality.nmd.A.matrix", "runs.txt", "topics.txt"]
    assert (out / "runs.txt").read_text() == "c\nd\n"

    def full(path, text):  # the disk fills while the matrices are written
        if str(path).endswith(".matrix"):
            raise OSError(28, "No space left on device")
        path.write_text(text)

    import dialeval.io.discpower as discpower

    real = discpower.write_text
    discpower.write_text = full
    try:
        with pytest.raises(OSError):
            write_matrices(out, ["e", "f"], ["d1"], {"quality.nmd.A": np.ones((1, 2))})
    finally:
        discpower.write_text = real
    assert not (out / "runs.txt").exists()  # no runs.txt to read the earlier matrices against new names


def test_demo_out_keeps_the_users_files(tmp_path, capsys):
    mine = tmp_path / "proj"
    mine.mkdir()
    (mine / "gold.json").write_text("[]")
    assert run(["demo", "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --out {mine} holds gold.json of its own (not the demo's); nothing was copied: give a " \
                  "new or empty folder\n"
    assert (mine / "gold.json").read_text() == "[]" and sorted(p.name for p in mine.iterdir()) == ["gold.json"]
    fresh = tmp_path / "fresh"
    assert run(["demo", "--out", str(fresh)]) == 0
    assert run(["demo", "--out", str(fresh)]) == 0  # its own files again: the same bytes, nothing lost


def test_cv_runs_out_leaves_no_fold_of_an_earlier_split(tmp_path, capsys):
    from dialeval.cli.demo import demo_dir

    out = tmp_path / "cvr"
    base = ["cv", str(demo_dir() / "gold.json"), "--model", "prior", "--runs-out", str(out)]
    assert run([*base, "--folds", "3"]) == 0
    assert sorted(p.name for p in (out / "cv-prior-folds").iterdir()) == ["fold-1.json", "fold-2.json", "fold-3.json"]
    assert run([*base, "--folds", "2"]) == 0
    assert sorted(p.name for p in (out / "cv-prior-folds").iterdir()) == ["fold-1.json", "fold-2.json"]


def test_ctrl_c_while_the_commands_load_is_one_line(tmp_path):
    """The entry point imports the command modules inside its own handler (a probe got a KeyboardInterrupt
    traceback and death by signal in 4 of 8 tries between 0.2 and 2.5 s)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    slow_import = ("import sys, time\n"
                   "import dialeval.cli.entry as e\n"
                   "class Slow:  # the command modules take 30 s to load: the signal arrives meanwhile\n"
                   "    def find_spec(self, name, path=None, target=None):\n"
                   "        if name == 'dialeval.cli.main':\n"
                   "            time.sleep(30)\n"
                   "sys.meta_path.insert(0, Slow())\n"
                   "print('ready', flush=True)\n"
                   "e.main()\n")
    proc = subprocess.Popen([sys.executable, "-c", slow_import, "--version"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (130, "error: interrupted\n"), err


def test_a_folder_writer_names_its_folder_on_a_full_disk_and_writes_through_a_link(tmp_path, monkeypatch):
    from pathlib import Path

    from dialeval.errors import DialevalError
    from dialeval.io.writers import write_folder

    real = Path.write_bytes

    def full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(DialevalError, match="cannot write: No space left on device") as e:
        write_folder(tmp_path / "out", [("a.json", b"{}")])
    assert e.value.file == str(tmp_path / "out") and sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.setattr(Path, "write_bytes", real)
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")  # was "error: link: Not a directory" after the work
    write_folder(tmp_path / "link", [("a.json", b"{}")])
    assert (tmp_path / "link").is_symlink() and (tmp_path / "empty" / "a.json").read_bytes() == b"{}"
