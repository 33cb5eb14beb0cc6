"""The task registry: one declaration per task, read by the scorers, the models and the CLI."""

from __future__ import annotations

import pytest

from dialeval import scoring, tasks
from dialeval.errors import DialevalError
from dialeval.io.conture import impression_scale
from dialeval.io.dbdc import breakdown_scale
from dialeval.io.stc3 import NUGGET_SCALE, QUALITY_KEYS
from dialeval.io.wochat import validity_scale


def test_the_five_tasks_are_declared():
    assert set(tasks.TASKS) == {"stc3-dq", "stc3-nd", "dbdc-breakdown", "wochat-validity", "conture-impression"}
    assert tasks.TASKS["stc3-dq"].scales == QUALITY_KEYS
    assert set(tasks.TASKS["stc3-nd"].scales) == set(NUGGET_SCALE.values())
    assert tasks.TASKS["stc3-nd"].sender_weights == ("customer", "helpdesk")
    with pytest.raises(DialevalError, match=r"allowed are quality \(stc3-dq\), nugget \(stc3-nd\), dbdc-breakdown"):
        tasks.get("nope")
    assert tasks.get("quality") is tasks.get("stc3-dq") and tasks.KEYS[:2] == ("quality", "nugget")


def test_column_labels_come_from_the_declaration():
    assert tasks.get("quality").column_label("quality.nmd.A") == ("nmd", "NMD A")
    assert tasks.get("nugget").column_label("nugget.rnss") == ("rnss", "RNSS")
    assert tasks.get("dbdc-breakdown").column_label("breakdown/mse") == ("mse", "MSE")
    with pytest.raises(DialevalError, match="its columns are breakdown/jsd"):
        tasks.get("dbdc-breakdown").column_label("quality.nmd.A")


def test_scorers_read_the_registry():
    assert scoring.TASKS == {"quality": ("nmd", "rsnod"), "nugget": ("jsd", "rnss")}
    for scale in (breakdown_scale(), validity_scale(), impression_scale()):
        task, = tasks.tasks_for({scale.name: scale})
        assert task.measures == ("jsd", "mse", "nmd", "rsnod") and task.level == "turn"


def test_levels_of_compatible_tasks_map_from_good_to_bad():
    assert tasks.transfer_map("breakdown", "validity", validity_scale().levels) == {
        "O": "VALID", "T": "ACCEPTABLE", "X": "INVALID"}
    assert tasks.transfer_map("breakdown", "breakdown", ("O", "T", "X")) is None
    assert tasks.transfer_map("breakdown", "A", ("2", "1", "0", "-1", "-2")) is None
    assert tasks.turn_score_values("breakdown", ("O", "T", "X")) == (2.0, 1.0, 0.0)
    assert tasks.turn_score_values("overall impression", ("0", "1", "2")) == (0.0, 1.0, 2.0)


def test_columns_and_summary_paths_come_from_the_declaration():
    dq, nd = tasks.TASKS["stc3-dq"], tasks.TASKS["stc3-nd"]
    assert dq.columns() == [f"quality.{m}.{k}" for m in ("nmd", "rsnod") for k in QUALITY_KEYS]
    assert nd.columns() == ["nugget.jsd", "nugget.rnss"]
    assert dq.summary_path("nmd", "A") == ("quality", "nmd", "A") and nd.summary_path("jsd", "x") == ("nugget", "jsd")
    b = tasks.TASKS["dbdc-breakdown"]
    assert b.columns()[0] == "breakdown/jsd" and b.summary_path("jsd", "breakdown") == ("scales", "breakdown", "jsd")
