"""Fixtures of the pipeline tests: a few real STC-3 test dialogues split into shards of every input kind."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def test_dialogues(shared_data) -> list[dict]:
    """The first 40 dialogues of test_data_en.json (fails, not skips, under CI when the data is missing)."""
    return json.loads(shared_data("stc3", "test_data_en.json").read_text(encoding="utf-8"))[:40]


def write_shards(folder: Path, dialogues: list[dict]) -> list[Path]:
    """Four shards of 10 dialogues: JSON Lines with metadata, a JSON array, gzip'ed JSON Lines, a gzip'ed array."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = [dialogues[i:i + 10] for i in range(0, 40, 10)]
    a = folder / "a.jsonl"
    a.write_text("".join(json.dumps({**d, "system": f"bot{i % 2}", "day": f"2026-11-0{1 + i % 3}"},
                                    ensure_ascii=False) + "\n" for i, d in enumerate(parts[0])), encoding="utf-8")
    b = folder / "b.json"
    b.write_text(json.dumps(parts[1], indent=1, ensure_ascii=False), encoding="utf-8")
    c = folder / "c.jsonl.gz"
    with gzip.open(c, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in parts[2])
    d = folder / "d.json.gz"
    with gzip.open(d, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(parts[3], ensure_ascii=False))
    return [a, b, c, d]


@pytest.fixture
def shards(tmp_path: Path, test_dialogues: list[dict]) -> list[Path]:
    return write_shards(tmp_path / "in", test_dialogues)


def outputs(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
