"""Run names and paths that are not printable UTF-8 (a file name in Latin-1, a newline in a path) in every report
format: one display text (``display_text``), never a traceback, never a line broken out of a comment."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from dialeval.report import compare_runs, report_text, run_files, write_report
from dialeval.report.display import display_text, displayed
from dialeval.report.tables import md_text, tex
from dialeval.stats import compare_measures

LATIN1 = os.fsdecode(b"caf\xe9")   # 'caf\udce9' on a UTF-8 file system: the byte 0xE9 is not UTF-8


@pytest.mark.parametrize("text, shown", [
    (LATIN1, "caf\\xe9"),
    (os.fsdecode("ラン ✓".encode()), "ラン ✓"),   # UTF-8 bytes decoded under another locale: read as UTF-8
    (b"caf\xe9.json", "caf\\xe9.json"),
    ("gold\n\\input{x}%.json", "gold\\n\\input{x}%.json"),
    ("a\tb\x00c\u200bd", "a\\tb\\x00c\\u200bd"),
    ("lone \ud800", "lone \\ud800"),
    ("Zoë ✓ 中文", "Zoë ✓ 中文"),
])
def test_display_text(text, shown):
    assert display_text(text) == shown
    assert display_text(shown) == shown   # a second pass changes nothing
    shown.encode("utf-8")   # always valid UTF-8


def test_two_undecodable_names_stay_two():
    assert display_text(os.fsdecode(b"caf\xe9")) != display_text(os.fsdecode(b"caf\xe8"))


def _comparison(names):
    rng = np.random.default_rng(0)
    return compare_measures({"m": rng.random((6, len(names)))}, names, B=100, seed=1,
                            notes=[f"note naming {names[0]}"])


@pytest.mark.parametrize("fmt", ["md", "csv", "latex", "json"])
def test_every_format_shows_one_name(fmt, tmp_path):
    c = _comparison([LATIN1, "b", "new\nline"])
    text = report_text(c, fmt)   # no UnicodeEncodeError / orjson TypeError
    text.encode("utf-8")
    # the display text 'caf\xe9', then the format's own escaping of its backslash
    shown = {"md": md_text, "latex": tex, "csv": str, "json": lambda t: json.dumps(t)[1:-1]}[fmt]
    assert shown("caf\\xe9") in text and "\udce9" not in text and "new\nline" not in text
    if fmt == "json":
        d = json.loads(text)
        assert d["runs"] == ["caf\\xe9", "b", "new\\nline"] and d["notes"] == ["note naming caf\\xe9"]
    paths = write_report(c, fmt, tmp_path)
    assert all(p.read_text(encoding="utf-8") for p in paths)


def test_displayed_is_the_same_comparison_when_nothing_to_clean():
    c = _comparison(["a", "b"])
    assert displayed(c) is c


def test_a_newline_in_the_gold_path_stays_in_the_comment(tmp_path):
    c = _comparison(["a", "b"])
    c = type(c)(**{**vars(c), "settings": {**c.settings, "scoring": {
        "gold": "odd dir/gold\n\\input{x}%é.json", "missing": "error", "nugget_alpha": 0.5,
        "rsnod_variant": "paper", "tasks": {}}}})
    for fmt, comment in (("latex", "%"), ("csv", "#"), ("md", "-")):
        text = report_text(c, fmt)
        assert not any(line.startswith("\\input") for line in text.splitlines()), fmt
        line = next(line for line in text.splitlines() if "scoring: gold" in line)
        assert line.startswith(comment), (fmt, line)
    md = report_text(c, "md")
    assert "scoring: gold odd dir/gold\\\\n\\\\input{x}%é.json;" in md   # display text, then Markdown escaping
    assert "% scoring: gold odd dir/gold\\n\\input{x}%é.json;" in report_text(c, "latex")


def test_compare_runs_with_a_run_file_not_in_utf8(stc3_folder, tmp_path):
    runs = tmp_path / "r"
    runs.mkdir()
    src = sorted((stc3_folder / "runs").glob("*.json"))
    shutil.copy(src[0], runs / "a.json")
    shutil.copy(src[1], runs / f"{LATIN1}.json")
    assert [f.name for f in run_files([runs])] == ["a.json", f"{LATIN1}.json"]
    c = compare_runs([runs], stc3_folder / "gold.json", B=100, seed=1)
    assert c.runs == ("a", "caf\\xe9")
    assert c.settings["scoring"]["runs"][1] == str(runs / "caf\\xe9.json")
    assert json.loads(report_text(c, "json"))["runs"] == ["a", "caf\\xe9"]
    assert "| caf\\\\xe9 |" in report_text(c, "md") and "caf\\textbackslash{}xe9" in report_text(c, "latex")


def test_two_runs_with_one_display_name_are_refused(tmp_path):
    from dialeval.errors import DialevalError

    for name in (LATIN1, "caf\\xe9"):   # the second is literally backslash, x, e, 9
        (tmp_path / f"{name}.json").write_text("[]")
    with pytest.raises(DialevalError, match=r"two runs are named 'caf\\xe9'"):
        run_files([tmp_path])


def test_run_names_are_printable_for_the_plots(tmp_path):
    from dialeval.report import plot_means

    paths = plot_means(_comparison([LATIN1, "b"]), tmp_path)
    assert "caf\\xe9" in Path(paths[1]).read_text(encoding="utf-8")
