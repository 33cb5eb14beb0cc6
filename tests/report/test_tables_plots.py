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
from dialeval.report.tables import md_text, render_csv, tex
from dialeval.stats import compare_measures

RUNS = ["sys_1", "sys|2", "sys#3"]


@pytest.fixture
def comparison():
    rng = np.random.default_rng(0)
    X = np.clip(rng.random((50, 1)) * 0.3 + rng.normal(0, 0.05, (50, 3)) + [0.1, 0.12, 0.4], 0, 1)
    return compare_measures({"quality.nmd.A": X, "nugget.jsd": X**2}, RUNS, B=400, seed=9, alpha=0.05)


@pytest.fixture
def comparison_of():
    """``comparison_of(names, B=..., separated=False)``: two measures over 40 dialogues; ``separated``: runs
    far apart (every pair differs at any B)."""
    def make(names: list[str], *, B: int, separated: bool = False):
        rng = np.random.default_rng(1)
        m = len(names)
        X = rng.random((40, m)) * (0.01 if separated else 0.3) + np.linspace(0, 0.6 if separated else 0.1, m)
        return compare_measures({"quality.nmd.A": X, "nugget.jsd": X**2}, names, B=B, seed=2, alpha=0.05)
    return make


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
    assert f"| 1 | {md_text(best.run)} | {best.mean:.4f} |" in md
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


def test_user_text_is_literal_in_every_format(comparison_of):
    """Run names with Markdown, LaTeX and CSV specials, a line break, a space: shown as written in Markdown,
    escaped in LaTeX, one CSV row per run of a group; the notes in every format. The line break is shown as
    the escape ``\\n`` in every format (:func:`dialeval.report.display.display_text`), one name everywhere."""
    import csv
    import io

    names = ["*star*_x_", "<b>h<i>", "a & b % $1 #2 \\ {c} ~^", "new\nline", "with space", '"q" | p']
    shown = [n.replace("\n", "\\n") for n in names]
    c = comparison_of(names, B=10)
    md = report_text(c, "md")
    for n in shown:
        assert md_text(n) in md
    assert "<b>" not in md.replace("\\<b\\>", "") and "*star*" not in md.replace("\\*star\\*", "")
    assert not any(line.startswith("line") for line in md.splitlines())   # a line break does not split a row
    tex_text = report_text(c, "latex")
    for n in shown:
        assert tex(n) in tex_text
    assert "\\textless{}b\\textgreater{}" in tex_text and "[T1]{fontenc}" in tex_text
    assert "% note: B = 10" in tex_text and "& $p$ \\\\" in tex_text
    groups = render_csv(c)["groups"]
    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in groups.splitlines() if not ln.startswith("#")))))
    assert rows[0] == ["measure", "group", "run"] and {r[2] for r in rows[1:]} == set(shown)
    assert "# note: B = 10" in groups


def test_a_b_too_small_for_alpha_calls_nothing_significant(comparison_of):
    c = comparison_of(["a", "b", "c"], B=10, separated=True)
    assert all(not p.significant for mc in c.measures for p in mc.pairs)
    assert all(len(mc.groups) == 1 for mc in c.measures)
    assert any("no pair is called significant" in n for n in c.notes)
    c = comparison_of(["a", "b", "c"], B=20, separated=True)   # 1/B = alpha: p = 0 says p < alpha
    assert any(p.significant for mc in c.measures for p in mc.pairs)

