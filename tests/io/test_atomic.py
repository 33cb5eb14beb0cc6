"""The atomic writers: a lone surrogate (a JSON "\\ud800" escape reads as one) is written as its escape."""

from __future__ import annotations

import json

import numpy as np

from dialeval.io.atomic import atomic_path, write_matrix_csv, write_text
from dialeval.io.jsonarray import dump_json, json_text


def test_text_csv_and_json_writers_take_a_lone_surrogate(tmp_path):
    write_text(tmp_path / "a.txt", "id d\udc00\n")
    assert (tmp_path / "a.txt").read_bytes() == b"id d\\udc00\n"
    write_matrix_csv(tmp_path / "m.csv", ["d\udc00", "e"], ["x"], np.array([[0.5], [np.nan]]))
    assert (tmp_path / "m.csv").read_text(encoding="utf-8").splitlines() == ["id,x", "d\\udc00,0.5", "e,"]
    assert json_text({"id": "d\udc00", "é": 1}, indent=None) == '{"id": "d\\udc00", "\\u00e9": 1}'
    assert json_text({"é": 1}, indent=None) == '{"é": 1}'  # other text as it is
    dump_json([{"id": "d\udc00", "p": np.float64(0.25)}], tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text(encoding="ascii")) == [{"id": "d\udc00", "p": 0.25}]


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    """A private gold written again stays private (a probe found 600 widened to 644 by the temporary file)."""
    import os
    import stat

    target = tmp_path / "gold.json"
    target.write_text("old")
    os.chmod(target, 0o600)
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh.json"
    with atomic_path(fresh) as tmp:
        tmp.write_text("x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask  # a new file: as open() makes it
