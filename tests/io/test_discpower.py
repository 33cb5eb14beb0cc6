"""Discpower's run-list and matrix files: reading, writing, and the result lines."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval import DialevalError
from dialeval.io.discpower import read_matrix, read_runlist, result_lines, write_matrices


def test_round_trip(tmp_path):
    X = np.random.default_rng(0).random((4, 3))
    files = write_matrices(tmp_path, ["a", "b", "c"], ["d1", "d2", "d3", "d4"], {"quality.nmd.A": X})
    assert [f.name for f in files] == ["runs.txt", "topics.txt", "quality.nmd.A.matrix"]
    assert read_runlist(tmp_path / "runs.txt") == ["a", "b", "c"]
    assert (tmp_path / "topics.txt").read_text().split() == ["d1", "d2", "d3", "d4"]
    assert np.array_equal(read_matrix(tmp_path / "quality.nmd.A.matrix", 3), X)  # full precision


def test_matrix_errors_name_file_and_line(tmp_path):
    p = tmp_path / "m.matrix"
    p.write_text("0.1 0.2\n0.3\n")
    with pytest.raises(DialevalError, match=r"m\.matrix: line 2 has 1 value\(s\); expected 2"):
        read_matrix(p, 2)
    p.write_text("0.1 0.2\n0.3 x\n")
    with pytest.raises(DialevalError, match="line 2: 'x' is not a number"):
        read_matrix(p, 2)
    p.write_text("0.1 nan\n0.3 0.2\n")
    with pytest.raises(DialevalError, match="line 1: values must be finite"):
        read_matrix(p, 2)


def test_runlist_errors(tmp_path):
    p = tmp_path / "runs.txt"
    p.write_text("a\n\nb c\n")
    with pytest.raises(DialevalError, match="contains whitespace"):
        read_runlist(p)
    p.write_text("a\na\n")
    with pytest.raises(DialevalError, match="'a' appears twice"):
        read_runlist(p)
    with pytest.raises(DialevalError, match="no such file"):
        read_runlist(tmp_path / "nope.txt")


def test_result_lines_in_runlist_order():
    p = np.array([[1, 0.5, 0.01], [0.5, 1, 0.2], [0.01, 0.2, 1]])
    lines = result_lines(["x", "y", "z"], np.array([0.3, 0.2, 0.5]), p)
    assert lines == ["x y 0.100000 0.500000", "x z 0.200000 0.010000", "y z 0.300000 0.200000"]
