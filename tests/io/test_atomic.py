"""The atomic writers: a lone surrogate (a JSON "\\ud800" escape reads as one) is written as its escape."""

from __future__ import annotations

import json

import numpy as np

from dialeval.io.atomic import write_matrix_csv, write_text
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
