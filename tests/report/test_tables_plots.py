"""Reports in every format describe themselves, take headers from the registry, and match the numbers."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from dialeval import DialevalError, __version__
from dialeval.measures import get as get_measure
from dialeval.report import REPORT_FORMATS, plot_means, report_text, write_report
from dialeval.report.tables import tex
from dialeval.stats import compare_measures

RUNS = ["sys_1", "sys|2", "sys#3"]


@pytest.fixture
def comparison():
    rng = np.random.default_rng(0)
    X = np.clip(rng.random((50, 1)) * 0.3 + rng.normal(0, 0.05, (50, 3)) + [0.1, 0.12, 0.4], 0, 1)
    return compare_measures({"quality.nmd.A": X, "nugget.jsd": X**2}, RUNS, B=400, seed=9, alpha=0.05)


def test_every_format_records_its_settings(comparison):
    for fmt in REPORT_FORMATS:
        text = report_text(comparison, fmt)
        for needle in ("randomised Tukey HSD", "400", "9", "0.05", __version__):
            assert needle in text, (fmt, needle)


def test_headers_come_from_the_registry(comparison):
    md = report_text(comparison, "md")
    assert f"NMD (A): {get_measure('nmd').title}; dialogue quality A, task accomplishment; lower is better" in md
    assert f"JSD: {get_measure('jsd').title}; nugget detection" in md
    assert "| NMD (A) | JSD |" in md


def test_markdown_numbers_and_escaping(comparison):
    md = report_text(comparison, "md")
    mc = comparison.measure("quality.nmd.A")
    best = mc.runs[0]
    assert f"| 1 | {best.run.replace('|', chr(92) + '|')} | {best.mean:.4f} |" in md
    assert "sys\\|2" in md and "sys|2 |" not in md.replace("sys\\|2", "")
    assert "< 0.0025" in md  # p = 0 is shown as below 1/B
    assert "| run | vs run | \\|diff\\| | p (Tukey HSD) | ES_E | p < 0.05 |" in md  # every row has 6 cells
    for line in md.splitlines():
        if line.startswith("| run | vs run"):
            assert line.replace("\\|", "").count("|") == 7


def test_json_is_the_whole_comparison(comparison):
    d = json.loads(report_text(comparison, "json"))
    assert d["settings"]["B"] == 400 and d["settings"]["seed"] == 9
    m = d["measures"][0]
    assert m["label"] == "NMD (A)" and m["lower_is_better"] is True
    mc = comparison.measure("quality.nmd.A")
    assert [r["run"] for r in m["runs"]] == [r.run for r in mc.runs]
    assert m["pairs"][0]["pvalue"] == mc.pairs[0].pvalue
    assert d["agreement"][0]["ci"]["method"].startswith("BCa bootstrap over dialogues")


def test_csv_tables(comparison, tmp_path):
    files = write_report(comparison, "csv", tmp_path)
    assert [f.name for f in files] == ["comparison-runs.csv", "comparison-pairs.csv", "comparison-groups.csv",
                                       "comparison-agreement.csv"]
    text = files[1].read_text()
    assert text.startswith("# ")
    rows = list(csv.DictReader(io.StringIO("".join(ln + "\n" for ln in text.splitlines() if not ln.startswith("#")))))
    assert len(rows) == 6  # 3 pairs x 2 measures
    mc = comparison.measure("quality.nmd.A")
    assert float(rows[0]["pvalue"]) == mc.pairs[0].pvalue and rows[0]["better"] == mc.pairs[0].better
    assert not list(tmp_path.glob(".*tmp"))


def test_latex_escapes_and_structure(comparison):
    t = report_text(comparison, "latex")
    assert "sys\\_1" in t and "sys\\#3" in t and "\\begin{longtable}" in t and "\\toprule" in t
    assert tex("50% of a_b & c") == "50\\% of a\\_b \\& c"


def test_unknown_format(comparison, tmp_path):
    with pytest.raises(DialevalError, match="report format 'docx' is not allowed; allowed are md, csv, latex, json"):
        write_report(comparison, "docx", tmp_path)


def test_plot_png_and_svg(comparison, tmp_path):
    paths = plot_means(comparison, tmp_path / "plots")
    assert [p.name for p in paths] == ["means.png", "means.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = paths[1].read_text()
    assert "<svg" in svg and "sys_1" in svg and "NMD (A)" in svg
    assert not list((tmp_path / "plots").glob(".*tmp"))
