"""Scoring many runs into topic-by-run matrices: alignment, folders, names, and the missing-dialogue policies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialeval import DialevalError, load_gold, score
from dialeval.report import compare_runs, run_files, score_runs


def test_matrices_hold_each_runs_scores(stc3_folder, noises):
    m = score_runs([stc3_folder / "runs"], stc3_folder / "gold.json")
    assert m.runs == tuple(sorted(noises))
    assert len(m.ids) == 60 and m.values.shape == (60, 4, 8)
    gold = load_gold(str(stc3_folder / "gold.json"))
    for j, name in enumerate(m.runs):
        s = score(str(stc3_folder / "runs" / f"{name}.json"), gold)
        assert list(m.ids) == s.ids and list(m.columns) == s.columns
        assert np.array_equal(m.values[:, j, :], s.matrix)
    assert m.column("quality.nmd.A").shape == (60, 4)
    assert m.settings["missing"] == "error" and not m.notes


def test_noise_orders_the_runs(stc3_folder):
    c = compare_runs([stc3_folder / "runs"], stc3_folder / "gold.json", B=500, seed=1)
    for mc in c.measures:
        assert mc.runs[-1].run == "delta_run"  # the noisiest run is last under every measure
    assert c.settings["scoring"]["gold"].endswith("gold.json")
    assert c.settings["B"] == 500 and c.settings["seed"] == 1


def test_missing_dialogues_is_an_error_naming_run_and_ids(stc3_folder, json_writer):
    runs = stc3_folder / "runs"
    records = json.loads((runs / "beta_run.json").read_text())
    gone = [records[3]["id"], records[7]["id"]]
    json_writer(runs / "beta_run.json", [r for r in records if r["id"] not in gone])
    with pytest.raises(DialevalError) as e:
        score_runs([runs], stc3_folder / "gold.json")
    msg = str(e.value)
    assert "beta_run" in msg and all(i in msg for i in gone) and "missing 2 of the 60" in msg
    worst = score_runs([runs], stc3_folder / "gold.json", missing="worst")
    j = worst.runs.index("beta_run")
    rows = [worst.ids.index(i) for i in gone]
    # the worst value of each measure: 1, but sqrt(13/12) for RSNOD on 5 levels (reference.RSNOD_WORST_5)
    want = [(13 / 12) ** 0.5 if ".rsnod." in c else 1.0 for c in worst.columns]
    assert np.allclose(worst.values[rows, j, :], want, rtol=1e-15, atol=0) and len(worst.ids) == 60
    common = score_runs([runs], stc3_folder / "gold.json", missing="common")
    assert len(common.ids) == 58 and not set(gone) & set(common.ids)
    assert any("left out" in n for n in common.notes) and any("58 of 60" in n for n in common.notes)


def test_extra_dialogues_and_partial_columns_are_noted(stc3_folder, json_writer):
    runs = stc3_folder / "runs"
    records = json.loads((runs / "alpha_run.json").read_text())
    json_writer(runs / "alpha_run.json", [{k: v for k, v in r.items() if k != "nugget"} for r in records]
               + [{"id": "not-in-gold", "quality": records[0]["quality"]}])
    m = score_runs([runs], stc3_folder / "gold.json")
    assert all(c.startswith("quality.") for c in m.columns)
    assert any("not-in-gold" in n for n in m.notes)
    assert any("nugget.jsd" in n and "left out" in n for n in m.notes)


def test_run_files(stc3_folder, tmp_path, noises):
    runs = stc3_folder / "runs"
    assert [f.stem for f in run_files([runs])] == sorted(noises)
    (runs / "gold.json").write_text((stc3_folder / "gold.json").read_text())
    assert "gold" not in [f.stem for f in run_files([runs], exclude=runs / "gold.json")]
    other = tmp_path / "other"
    other.mkdir()
    (other / "alpha_run.json").write_text("[]")
    with pytest.raises(DialevalError, match="two runs are named 'alpha_run'"):
        run_files([runs, other / "alpha_run.json"])
    with pytest.raises(DialevalError, match="no such file or folder"):
        run_files([tmp_path / "nope.json"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DialevalError, match="holds no run file"):
        run_files([empty])


def test_needs_two_runs_and_valid_policy(stc3_folder):
    with pytest.raises(DialevalError, match="needs at least 2"):
        score_runs([stc3_folder / "runs" / "alpha_run.json"], stc3_folder / "gold.json")
    with pytest.raises(DialevalError, match="missing 'skip' is not allowed"):
        score_runs([stc3_folder / "runs"], stc3_folder / "gold.json", missing="skip")


def test_settings_checked_before_scoring(stc3_folder):
    with pytest.raises(DialevalError, match="alpha 0 is not allowed"):
        compare_runs([stc3_folder / "does-not-matter"], stc3_folder / "gold.json", alpha=0)
