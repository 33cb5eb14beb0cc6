"""Issue 16: what a careful user needs to trust dialeval (one test or more per numbered item of the issue)."""

from __future__ import annotations

import codecs
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dialeval.cli.correlate as correlate_cli
from dialeval.cli.demo import demo_dir
from dialeval.cli.main import run as cli
from dialeval.io import jsonarray
from dialeval.io.jsonarray import iter_records, json_text
from dialeval.report.simulate import noisy_runs
from dialeval.report.tables import p_text

SRC = Path(__file__).resolve().parents[2] / "src"
DEMO_GOLD = demo_dir() / "gold.json"
DEMO_RUN = demo_dir() / "run.json"
ONLY = ["--dimension", "likeable", "--dimension", "consistent", "--level", "dialogue"]
DSTC9 = [{"context": "User: hi\nSystem: hello\n", "likeable": 3, "consistent": 1},
         {"context": "User: yo\nSystem: no\n", "likeable": 1, "consistent": 1},
         {"context": "User: a\nSystem: b\n", "likeable": 2, "consistent": 1}]


def _strict_json(text: str) -> object:
    def refuse(token: str) -> None:
        raise AssertionError(f"non-JSON constant {token} in the output")
    return json.loads(text, parse_constant=refuse)


def _no_nan_text(text: str) -> None:
    for word in ("NaN", "nan", "Infinity", "inf"):
        assert word not in text.replace("information", "").replace("informative", ""), text


# --- item 1: no NaN or Infinity in any output -------------------------------------------------------------

def test_json_text_is_strict_and_writes_null():
    assert json_text({"a": float("nan"), "b": [np.float64("inf"), 1.0]}, indent=None) == '{"a": null, "b": [null, 1.0]}'
    with pytest.raises(ValueError):
        json.dumps(float("nan"), allow_nan=False)  # the serialiser json_text uses refuses what slips through


def test_undefined_correlations_are_null_and_na(tmp_path, capsys):
    corpus = tmp_path / "chatbot1.json"
    corpus.write_text(json.dumps(DSTC9), encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\nchatbot1-000,1\nchatbot1-001,2\nchatbot1-002,3\n", encoding="utf-8")
    args = ["correlate", str(corpus), "--scores", str(scores), *ONLY, "-B", "50"]  # 'consistent' is constant
    assert cli([*args, "--format", "json"]) == 0
    out = capsys.readouterr().out
    rows = _strict_json(out)["rows"]
    assert any(r["statistic"] is None for r in rows if r["dimension"] == "consistent")
    assert cli(args) == 0
    table = capsys.readouterr().out
    assert "n/a" in table
    _no_nan_text(table)


def test_neglog2_of_a_zero_mean_is_not_infinity(tmp_path, capsys):
    from rich.console import Console

    from dialeval.cli.evaluate import summary_table

    console = Console(width=80, record=True, file=io.StringIO())
    console.print(summary_table({"quality": {"nmd": {"A": 0.0, "S": 0.25}}, "nugget": {"jsd": float("nan")}}, "t",
                                "neglog2"))
    out = console.export_text()
    assert "n/a (mean 0)" in out and "2.000000" in out and "n/a" in out
    _no_nan_text(out)
    run = tmp_path / "run.json"
    run.write_text(json.dumps(noisy_runs(str(DEMO_GOLD), {"exact": 0.0}, seed=0)["exact"]), encoding="utf-8")
    assert cli(["evaluate", str(run), str(DEMO_GOLD), "--per-dialogue", str(tmp_path / "p.csv")]) == 0
    _strict_json(capsys.readouterr().out)
    _no_nan_text((tmp_path / "p.csv").read_text(encoding="utf-8"))


def test_no_dialogue_in_common_names_both_sides(tmp_path, capsys):
    run = json.loads(DEMO_RUN.read_text(encoding="utf-8"))
    for i, r in enumerate(run):
        r["id"] = f"test-{i:03d}-" + "x" * 40
    p = tmp_path / "run.json"
    p.write_text(json.dumps(run), encoding="utf-8")
    assert cli(["evaluate", str(p), str(DEMO_GOLD), "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    msg = err.split(": ", 2)[2]
    assert msg.startswith("0 of 8 run ids are in the gold; run ids: test-000-")
    run_part, gold_part = msg.split("; run ids: ")[1].split("; gold ids: ")
    assert len(run_part) <= 110 and run_part.endswith("...") and gold_part.startswith("demo-001, demo-002")


# --- item 2 and 3 are rows of tests/cli/test_malformed_inputs.py; the non-swap case here -------------------

def test_gold_as_run_of_another_corpus_is_not_a_swap(tmp_path, capsys):
    log = {"dialogue-id": "d1", "speaker-id": "", "group-id": "", "turns": [
        {"speaker": "U", "turn-index": 0, "utterance": "hi", "annotations": []},
        {"speaker": "S", "turn-index": 1, "utterance": "a", "annotations": [{"breakdown": "O"}]}]}
    (tmp_path / "d1.log.json").write_text(json.dumps(log), encoding="utf-8")
    assert cli(["gold", str(tmp_path / "d1.log.json"), "-o", str(tmp_path / "g.json")]) == 0
    capsys.readouterr()
    assert cli(["evaluate", str(tmp_path / "g.json"), str(tmp_path / "d1.log.json")]) == 0


# --- item 6: encodings and CSV delimiters -------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom"])
def test_run_encodings_give_the_same_scores(tmp_path, capsys, encoding):
    text = DEMO_RUN.read_text(encoding="utf-8")
    data = {"utf-16-le-bom": codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
            "utf-16-be-bom": codecs.BOM_UTF16_BE + text.encode("utf-16-be")}.get(encoding) or text.encode(encoding)
    p = tmp_path / "run.json"
    p.write_bytes(data)
    assert cli(["evaluate", str(DEMO_RUN), str(DEMO_GOLD)]) == 0
    ref = capsys.readouterr().out
    assert cli(["evaluate", str(p), str(DEMO_GOLD)]) == 0
    assert capsys.readouterr().out == ref.replace(json.dumps(str(DEMO_RUN)), json.dumps(str(p)))  # named as given


def test_gold_with_bom_and_streamed_utf16(tmp_path, monkeypatch):
    text = DEMO_GOLD.read_text(encoding="utf-8")
    p = tmp_path / "gold.json"
    p.write_bytes(codecs.BOM_UTF8 + text.encode())
    assert len(list(iter_records(str(p)))) == 8
    monkeypatch.setattr(jsonarray, "STREAM_THRESHOLD", 10)  # the streaming path
    p.write_bytes(text.encode("utf-16"))
    assert [r["id"] for r in iter_records(str(p))] == [r["id"] for r in json.loads(text)]


@pytest.mark.parametrize(("content", "extra"), [
    ("\ufeffid;score\r\n{0}0;0,5\r\n{0}1;1,5\r\n{0}2;2\r\n", []),    # European spreadsheet: BOM, ';', 0,5
    ("id\tscore\n{0}0\t0.5\n{0}1\t1.5\n{0}2\t2\n", []),                # tab, sniffed
    ("id|score\n{0}0|0.5\n{0}1|1.5\n{0}2|2\n", ["--delimiter", "|"]),  # given
])
def test_scores_csv_dialects(tmp_path, capsys, content, extra):
    corpus = tmp_path / "chatbot1.json"
    corpus.write_text(json.dumps(DSTC9), encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_bytes(content.format("chatbot1-00").encode("utf-8"))
    assert cli(["correlate", str(corpus), "--scores", str(scores), "--format", "json", "-B", "20", *ONLY,
                *extra]) == 0
    rows = _strict_json(capsys.readouterr().out)["rows"]
    likeable = next(r for r in rows if r["dimension"] == "likeable" and r["method"] == "pearson")
    assert likeable["n"] == 3 and likeable["statistic"] == pytest.approx(np.corrcoef([.5, 1.5, 2], [3, 1, 2])[0, 1])


# --- item 7: one name for the format override ---------------------------------------------------------------

def test_format_override_is_from_everywhere(capsys):
    for command in (["predict"], ["gold"], ["correlate"], ["corpus", "stats"], ["corpus", "convert"]):
        assert cli([*command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "--from" in text, command
        assert "--lang" not in text and "--input-format" not in text


# --- item 10: compare --plot ----------------------------------------------------------------------------------

def test_compare_plot_measures_columns_caption(demo_runs, capsys):
    out = demo_runs / "report"
    assert cli(["compare", str(demo_runs / "runs"), "--gold", str(demo_runs / "gold.json"), "--out", str(out),
                "-f", "md", "-f", "json", "-f", "latex", "--plot", "--measures", "nmd", "--measures", "JSD",
                "--columns", "2", "-B", "200"]) == 0
    capsys.readouterr()
    md = (out / "comparison.md").read_text(encoding="utf-8")
    assert "## Figure" in md and "![Run means per measure](means.png)" in md and "B = 200" in md
    assert "## RSNOD" not in md and "## NMD (A)" in md and "## JSD" in md
    assert "\\includegraphics" in (out / "comparison.tex").read_text(encoding="utf-8")
    assert _strict_json((out / "comparison.json").read_text(encoding="utf-8"))["settings"]["figure"]["caption"]
    assert (out / "means.png").stat().st_size > 0 and (out / "means.svg").stat().st_size > 0
    assert "<text" in (out / "means.svg").read_text(encoding="utf-8")  # text as text, not outlines


def test_figure_layout_and_no_caption_inside():
    from dialeval.report.plots import means_figure
    from dialeval.stats import compare_measures

    rng = np.random.default_rng(0)
    mats = {f"quality.nmd.{k}": rng.random((20, 4)) for k in "ASE"} | {"nugget.jsd": rng.random((20, 4))}
    c = compare_measures(mats, ["a", "b", "c", "d"], B=100)
    fig = means_figure(c, columns=2)
    assert len(fig.axes) == 4 and fig._suptitle is None
    lefts = sorted({round(ax.get_position().x0, 3) for ax in fig.axes})
    assert len(lefts) == 2  # two columns of panels
    assert len(means_figure(c, measures=["nmd.A"]).axes) == 1


def test_one_group_letter_style_in_every_panel():
    from dialeval.stats import compare_measures

    rng = np.random.default_rng(1)
    m, n = 30, 8000
    far = np.arange(m) * 1.0 + rng.normal(0, 0.01, (n, m))  # every run its own group: 30 groups (z, aa, ab, ...)
    chain = np.arange(m) * 0.01 + rng.normal(0, 0.3, (n, m))  # overlapping groups
    c = compare_measures({"far": far, "chain": chain}, [f"r{i:02d}" for i in range(m)], B=200, seed=0)
    assert len(c.measure("far").groups) == 30
    multi = [r.groups for r in c.measure("chain").runs if len(r.groups.replace(",", "")) > 1]
    assert multi and all("," in g for g in multi)


def test_correlate_plot_title_names_the_corpus(tmp_path, monkeypatch, capsys):
    titles = []
    monkeypatch.setattr(correlate_cli, "plot_correlations", lambda table, path, title="": titles.append(title))
    corpus = tmp_path / "chatbot1.json"
    corpus.write_text(json.dumps(DSTC9), encoding="utf-8")
    assert cli(["correlate", str(corpus), "--against", "likeable", "--dimension", "consistent", "--level",
                "dialogue", "--plot", str(tmp_path / "c.png"), "-B", "20"]) == 0
    assert titles == ["DSTC9: 3 dialogues"]


# --- item 11: 80 columns, tiny p-values -----------------------------------------------------------------------

def test_tables_fit_80_columns_and_tiny_p(capsys, monkeypatch):
    from dialeval.cli._common import tables

    monkeypatch.setattr(tables, "width", 80)  # a terminal of 80 columns (a pipe gets 160: test_corpus_commands)
    assert p_text(0.0) == "< 1e-16" and p_text(1e-300) == "< 1e-16" and p_text(2e-16) == "2.0e-16"
    assert cli(["evaluate", str(DEMO_RUN), str(DEMO_GOLD), "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80
    assert "JSD: Jensen-Shannon divergence" in out and out.count("Jensen-Shannon") == 1
    assert cli(["corpus", "stats", str(DEMO_GOLD)]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80 and "nugget_customer" in out


# --- item 12: correlate's bootstrap shows progress ------------------------------------------------------------

def test_correlate_bootstrap_progress(tmp_path):
    corpus = tmp_path / "chatbot1.json"
    corpus.write_text(json.dumps(DSTC9), encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\nchatbot1-000,1\nchatbot1-001,2\nchatbot1-002,3\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(SRC), DIALEVAL_PROGRESS="1")
    proc = subprocess.run([sys.executable, "-m", "dialeval", "correlate", str(corpus), "--scores", str(scores),
                           *ONLY, "-B", "30"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "bootstrap (B = 30)" in proc.stderr and "2/2" in proc.stderr, proc.stderr
