"""Outputs written through a link, into a pipe or a device: a probe found them replaced by a regular file (as
root, ``-o /dev/full`` destroyed the device node), and ``-o /dev/stdout`` printed nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from dialeval.io.atomic import atomic_path

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def test_a_link_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_path(link) as tmp:
        tmp.write_text("new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "made.txt")
    with atomic_path(dangling) as tmp:
        tmp.write_text("made")
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "made"


def test_a_named_pipe_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with atomic_path(fifo) as tmp:
        tmp.write_text("through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert not fifo.is_file() and fifo.exists()   # still a pipe


def test_gold_to_dev_stdout_prints_the_document(tmp_path):
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "src", "dialeval", "data", "demo", "gold.json")
    link = tmp_path / "so"
    link.symlink_to("/dev/stdout")
    r = subprocess.run([sys.executable, "-m", "dialeval", "gold", demo, "-o", str(link)], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip().startswith("{") and '"dialeval": "gold"' in r.stdout
    assert link.is_symlink()


def test_dev_stdout_redirected_to_a_file_is_appended_to_not_replaced(tmp_path):
    """``--per-dialogue /dev/stdout >> log.txt`` replaced log.txt (its link chain ends at a regular file, so the
    temporary file was renamed onto it), losing the earlier lines and the table printed after."""
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "src", "dialeval", "data", "demo")
    log = tmp_path / "log.txt"
    log.write_text("PREVIOUS LINE\n")
    with open(log, "a") as out:
        r = subprocess.run([sys.executable, "-m", "dialeval", "evaluate", os.path.join(demo, "run.json"),
                            os.path.join(demo, "gold.json"), "--per-dialogue", "/dev/stdout"], stdout=out,
                           stderr=subprocess.PIPE, text=True, check=False)
    assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.startswith("PREVIOUS LINE\nid,") and text.rstrip().endswith("}")   # the CSV, then the report


def test_a_loop_of_links_as_an_output_is_one_error(tmp_path, capsys):
    from dialeval.cli.main import run

    demo = os.path.join(os.path.dirname(__file__), "..", "..", "src", "dialeval", "data", "demo")
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    assert run(["evaluate", os.path.join(demo, "run.json"), os.path.join(demo, "gold.json"), "--per-dialogue",
                str(loop)]) == 2
    assert capsys.readouterr().err == f"error: --per-dialogue {loop} is a loop of symbolic links; give a file\n"


def test_a_reader_that_goes_away_from_dev_stdout_ends_the_run_quietly(tmp_path):
    """Written through /dev/stdout into a pipe whose reader left, the run said 'cannot write: Broken pipe' and
    exited 2; it ends as any broken pipe does (141, nothing said)."""
    corpus = tmp_path / "big.json"
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "src", "dialeval", "data", "demo", "gold.json")
    import json
    from pathlib import Path

    dialogues = json.loads(Path(demo).read_text(encoding="utf-8"))
    corpus.write_text(json.dumps([{**d, "id": f"{d['id']}-{i}"} for i in range(300) for d in dialogues]))
    r = subprocess.run(f"{sys.executable} -m dialeval gold {corpus} -o /dev/stdout | head -c 10 >/dev/null; "
                       "echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True, text=True,
                       check=False)
    assert r.stdout.split()[-1] == "141" and "Broken pipe" not in r.stderr, r.stderr
