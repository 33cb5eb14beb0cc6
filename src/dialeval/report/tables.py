"""A :class:`~dialeval.stats.Comparison` as Markdown, CSV, LaTeX or JSON, each saying how it was made.

Every format carries the test, B, seed, alpha, interval level and methods and the dialeval version;
measure headers come from the measures registry (:mod:`dialeval.report.labels`). The formats are
declared once, in :data:`REPORT_FORMATS`; the CLI's choices come from there.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from dialeval.errors import DialevalError, describe, expect_instance
from dialeval.io.atomic import make_folder, write_text
from dialeval.report.display import display_text, displayed
from dialeval.report.labels import column_label, column_title, direction_text
from dialeval.stats.comparison import Comparison, MeasureComparison, group_label
from dialeval.tasks import weights_senders


@dataclass(frozen=True)
class ReportFormat:
    """One output format: ``render(comparison)`` gives ``{part: text}`` for each of ``parts`` ("" for a single
    file)."""

    name: str
    title: str
    extension: str
    render: Callable[[Comparison], dict[str, str]]
    parts: tuple[str, ...] = ("",)

    def file_names(self, stem: str = "comparison") -> list[str]:
        """The names :func:`write_report` gives this format's files."""
        return [f"{stem}{'-' + part if part else ''}{self.extension}" for part in self.parts]


# ---------------------------------------------------------------- shared pieces

def _num(v: float, digits: int = 4) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def _p(p: float, B: int) -> str:
    """A p-value for people: 0 means below the resolution 1/B."""
    if not math.isfinite(p):
        return "n/a"
    return f"< {1 / B:.4g}" if p == 0 else f"{p:.4f}"


def _pct(level: float) -> str:
    return f"{level * 100:g}%"


def settings_lines(c: Comparison, user: Callable[[object], str] = display_text) -> list[str]:
    """The settings of a comparison as sentences (the header of every format but JSON, which has them all).

    Each is one line: text from the user (the gold's path) goes through ``user``, by default
    :func:`~dialeval.report.display.display_text` (a newline in a path is written ``\\n``); a format passes
    its own escaping after it (Markdown: :func:`md_text`).
    """
    s = c.settings
    lines = [f"{len(c.runs)} runs, {c.n} dialogues; dialeval {s['dialeval_version']}",
             f"test: {s['test']} ({s['permutation']}), B = {s['B']}, seed = {s['seed']}, alpha = {s['alpha']}",
             *([f"p-value: {s['pvalue']}"] if "pvalue" in s else []),
             f"intervals of run means: {_pct(s['level'])} {s['interval']} (B = {s['B']})",
             f"effect size: {s['effect_size']}",
             f"groups: {s['groups']}",
             f"rank agreement: {s['agreement']}"]
    sc = s.get("scoring")
    if sc:
        tasks = sc.get("tasks") or {}
        weighted = not tasks or weights_senders(tasks)  # older reports name no task: say alpha
        lines.append(f"scoring: gold {user(sc['gold'])}; "
                     + (f"tasks {', '.join(tasks)}; " if tasks else "") + f"missing dialogues: {sc['missing']}; "
                     + (f"nugget alpha {sc['nugget_alpha']}; " if weighted else "")
                     + f"RSNOD variant {sc['rsnod_variant']}")
    return lines


def p_text(p: float | None) -> str:
    """A p-value from a distribution function: 4 decimals, scientific below 1e-4, bounded by double precision.

    Below 1e-16 (a float near 1 cannot hold a smaller complement) it prints ``< 1e-16``, never ``0``;
    undefined is ``n/a``.

    Examples
    --------
    >>> p_text(0.0), p_text(3e-7), p_text(0.04321), p_text(float("nan"))
    ('< 1e-16', '3.0e-07', '0.0432', 'n/a')
    """
    if p is None:
        return "n/a"
    if not math.isfinite(p):
        return "n/a"
    return f"{p:.4f}" if p >= 1e-4 else ("< 1e-16" if p < 1e-16 else f"{p:.1e}")


def _anova_line(mc: MeasureComparison) -> str:
    a = mc.anova
    p = p_text(a.pvalue)
    return (f"two-way ANOVA without replication: F({a.df_runs}, {a.df_E}) = {_num(a.F, 3)}, "
            f"p {p if p.startswith('<') else '= ' + p}, "
            f"V_E = {a.V_E:.6g}")


# ---------------------------------------------------------------- Markdown

def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|")


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!])")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def md_text(text: object) -> str:
    r"""User text (a run name, a note quoting one) as Markdown shows it literally: its specials backslash-escaped
    (no emphasis, code, link or HTML from a name), a line break as a space (a table row stays one line).

    >>> md_text("*a*_<b>|x\n")
    '\\*a\\*\\_\\<b\\>\\|x '
    """
    return _MD_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(text)))


def _md_table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """A Markdown table: the header's ``|`` escaped; the cells are Markdown already (user text and labels through
    :func:`md_text`; numbers, intervals and group letters hold no ``|``)."""
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render_markdown(c: Comparison) -> dict[str, str]:
    c = displayed(c)
    B, lvl = c.settings["B"], _pct(c.settings["level"])
    out = [f"# Comparison of {len(c.runs)} runs", ""]
    out += [f"- {line}" for line in settings_lines(c, lambda t: md_text(display_text(t)))]
    name = {r: md_text(r) for r in c.runs}   # each run's name escaped once (400 runs: 80,000 pairs a measure)
    for mc in c.measures:
        out += ["", f"## {column_title(mc.name)}; {direction_text(mc.name)}", ""]
        out += _md_table(["rank", "run", "mean", f"{lvl} CI", "group"],
                         [[str(r.rank), name[r.run], _num(r.mean), f"[{_num(r.ci.low)}, {_num(r.ci.high)}]",
                           r.groups]
                          for r in mc.runs], "rlrrl")
        out += ["", _anova_line(mc) + ".", "",
                f"Groups not significantly different at alpha = {mc.alpha} (runs sharing a letter):", ""]
        out += [f"- {group_label(i)}: " + ", ".join(name[r] for r in g) for i, g in enumerate(mc.groups)]
        out += ["", f"All pairs ({column_label(mc.name)}), better-ranked run first:", ""]
        out += _md_table(["run", "vs run", "|diff|", "p (Tukey HSD)", "ES_E", f"p < {mc.alpha}"],
                         [[name[p.better], name[p.worse], _num(p.abs_diff), _p(p.pvalue, B),
                           _num(p.effect_size, 3),
                           "yes" if p.significant else "no"] for p in mc.pairs], "llrrrl")
    if c.agreement:
        out += ["", "## Agreement of the measures' rankings", "",
                f"Kendall's tau-b between the run means of two measures (both oriented best first); "
                f"{lvl} interval: {c.agreement[0].tau.ci.method}, B = {B}; p: Kendall's test of tau = 0 "
                f"over the {len(c.runs)} runs (exact without ties up to 33 runs, else normal; as scipy's "
                "kendalltau).", ""]
        out += _md_table(["measure", "measure", "tau", f"{lvl} CI", "p"],
                         [[md_text(column_label(a.first)), md_text(column_label(a.second)), _num(a.tau.statistic, 3),
                           f"[{_num(a.tau.ci.low, 3)}, {_num(a.tau.ci.high, 3)}]", p_text(a.tau.pvalue)]
                          for a in c.agreement], "llrrr")
    fig = c.settings.get("figure")
    if fig:
        out += ["", "## Figure", "", f"![Run means per measure]({fig['files'][0]})", "", fig["caption"]]
    if c.notes:
        out += ["", "## Notes", ""] + [f"- {md_text(n)}" for n in c.notes]
    return {"": "\n".join(out) + "\n"}


# ---------------------------------------------------------------- CSV

def _csv(header: list[str], rows: list[list[object]], comments: list[str]) -> str:
    buf = io.StringIO()
    for line in comments:
        buf.write(f"# {line}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([["" if isinstance(v, float) and not math.isfinite(v) else v for v in r] for r in rows])
    return buf.getvalue()


def render_csv(c: Comparison) -> dict[str, str]:
    """Four tables (runs, pairs, groups: one row per run of a group, agreement), each with the settings and
    the notes as ``#`` comment lines."""
    c = displayed(c)
    com = settings_lines(c) + [f"note: {n}" for n in c.notes]
    runs = [[mc.name, column_label(mc.name), r.rank, r.run, r.mean, r.ci.low, r.ci.high, r.ci.level, r.groups]
            for mc in c.measures for r in mc.runs]
    pairs = [[mc.name, p.better, p.worse, p.abs_diff, p.pvalue, p.effect_size, p.significant]
             for mc in c.measures for p in mc.pairs]
    groups = [[mc.name, group_label(i), run] for mc in c.measures for i, g in enumerate(mc.groups) for run in g]
    agreement = [[a.first, a.second, a.tau.statistic, a.tau.ci.low, a.tau.ci.high, a.tau.ci.level, a.tau.pvalue,
                  a.tau.n] for a in c.agreement]
    return {
        "runs": _csv(["measure", "label", "rank", "run", "mean", "ci_low", "ci_high", "level", "groups"], runs, com),
        "pairs": _csv(["measure", "better", "worse", "abs_diff", "pvalue", "effect_size", "significant"], pairs,
                      com),
        "groups": _csv(["measure", "group", "run"], groups, com),
        "agreement": _csv(["first", "second", "tau", "ci_low", "ci_high", "level", "pvalue", "runs"], agreement,
                          com),
    }


# ---------------------------------------------------------------- LaTeX

_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
        ">": r"\textgreater{}", "|": r"\textbar{}", '"': r"\textquotedbl{}"}
LATEX_NEEDS = "% needs \\usepackage{booktabs,longtable} and \\usepackage[T1]{fontenc}"


def tex(text: object) -> str:
    r"""Text escaped for LaTeX: its ten specials, and ``< > | "`` (which the default OT1 font encoding prints as
    other glyphs); a line break as a space.

    >>> print(tex('a_b & <c> "d"'))
    a\_b \& \textless{}c\textgreater{} \textquotedbl{}d\textquotedbl{}
    """
    return "".join(_TEX.get(ch, ch) for ch in _LINE_BREAKS.sub(" ", str(text)))


def render_latex(c: Comparison) -> dict[str, str]:
    """Tables for a paper: needs ``\\usepackage{booktabs,longtable}`` and ``\\usepackage[T1]{fontenc}``."""
    c = displayed(c)
    s = c.settings
    B, lvl = s["B"], tex(_pct(s["level"]))
    how = (f"randomised Tukey HSD, $B = {B}$, seed {s['seed']}, $\\alpha = {s['alpha']}$; "
           f"dialeval {tex(s['dialeval_version'])}")
    out = ["% " + line for line in settings_lines(c)] + ["% note: " + n for n in c.notes]  # one line each: displayed
    out += [LATEX_NEEDS + (" (and XeLaTeX or LuaLaTeX with a font for the run names' scripts)"
                           if any(ord(ch) > 0x24F for r in c.runs for ch in r) else ""), ""]
    name = {r: tex(r) for r in c.runs}   # each run's name escaped once, not once a pair and measure
    for mc in c.measures:
        title = tex(column_title(mc.name))
        out += ["\\begin{table}[htbp]", "\\centering",
                f"\\caption{{{title}; {direction_text(mc.name)}: run means with {lvl} intervals "
                f"({tex(s['interval'])}); runs sharing a letter are not significantly different ({how}).}}",
                "\\begin{tabular}{rlrrl}", "\\toprule", f"Rank & Run & Mean & {lvl} CI & Group \\\\", "\\midrule"]
        out += [f"{r.rank} & {name[r.run]} & {_num(r.mean)} & [{_num(r.ci.low)}, {_num(r.ci.high)}] & {r.groups} \\\\"
                for r in mc.runs]
        out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", "",
                "\\begin{longtable}{llrrr}",
                f"\\caption{{{title}: all pairs, better-ranked run first; $p$ from the {how}; "
                f"ES$_E$ = $|\\bar{{x}}_i - \\bar{{x}}_j| / \\sqrt{{V_E}}$; $^{{*}}$: $p < \\alpha$.}} \\\\",
                "\\toprule", "Run & vs run & $|\\mathrm{diff}|$ & $p$ & ES$_E$ \\\\", "\\midrule", "\\endfirsthead",
                "\\toprule", "Run & vs run & $|\\mathrm{diff}|$ & $p$ & ES$_E$ \\\\", "\\midrule", "\\endhead"]
        out += [f"{name[p.better]} & {name[p.worse]} & {_num(p.abs_diff)} & "
                f"{'$' + tex(_p(p.pvalue, B)) + '$' if p.pvalue == 0 else _p(p.pvalue, B)}"
                f"{'$^{*}$' if p.significant else ''} & {_num(p.effect_size, 3)} \\\\" for p in mc.pairs]
        out += ["\\bottomrule", "\\end{longtable}", ""]
    if c.agreement:
        out += ["\\begin{table}[htbp]", "\\centering",
                f"\\caption{{Kendall's $\\tau_b$ between the measures' run rankings; {lvl} interval: "
                f"{tex(c.agreement[0].tau.ci.method)}, $B = {B}$, seed {s['seed']}; dialeval "
                f"{tex(s['dialeval_version'])}.}}",
                "\\begin{tabular}{llrrr}", "\\toprule", f"Measure & Measure & $\\tau_b$ & {lvl} CI & $p$ \\\\",
                "\\midrule"]
        out += [f"{tex(column_label(a.first))} & {tex(column_label(a.second))} & {_num(a.tau.statistic, 3)} & "
                f"[{_num(a.tau.ci.low, 3)}, {_num(a.tau.ci.high, 3)}] & {tex(p_text(a.tau.pvalue))} \\\\"
                for a in c.agreement]
        out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    fig = c.settings.get("figure")
    if fig:
        stem = fig["files"][0].rsplit(".", 1)[0]
        out += ["% the figure needs \\usepackage{graphicx}", "\\begin{figure}[htbp]", "\\centering",
                f"\\includegraphics[width=\\textwidth]{{{tex(stem)}}}", f"\\caption{{{tex(fig['caption'])}}}",
                "\\end{figure}", ""]
    return {"": "\n".join(out)}


# ---------------------------------------------------------------- JSON

def comparison_dict(c: Comparison) -> dict:
    """The whole comparison as plain data, with each measure's label, title and direction from the registry; run
    names, notes and settings as the other formats show them (:func:`~dialeval.report.display.displayed`)."""
    d = displayed(c).to_dict()
    for m in d["measures"]:
        m.update(label=column_label(m["name"]), title=column_title(m["name"]))
    return d


def render_json(c: Comparison) -> dict[str, str]:
    data = orjson.dumps(comparison_dict(c), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
    return {"": data.decode() + "\n"}


REPORT_FORMATS: dict[str, ReportFormat] = {f.name: f for f in (
    ReportFormat("md", "Markdown", ".md", render_markdown),
    ReportFormat("csv", "CSV (one file per table)", ".csv", render_csv, ("runs", "pairs", "groups", "agreement")),
    ReportFormat("latex", "LaTeX (booktabs, longtable)", ".tex", render_latex),
    ReportFormat("json", "JSON", ".json", render_json),
)}
"""The report formats, in the order the CLI lists them."""


def get_format(name: str) -> ReportFormat:
    if not isinstance(name, str) or name not in REPORT_FORMATS:
        raise DialevalError(f"report format {name!r} is not allowed; allowed are " + ", ".join(REPORT_FORMATS))
    return REPORT_FORMATS[name]


def report_text(c: Comparison, fmt: str) -> str:
    """The report as one text (the CSV tables one after another, each after a ``# table: NAME`` line)."""
    expect_instance(c, Comparison, "the comparison", "; make one with dialeval.compare_runs or compare_measures")
    parts = get_format(fmt).render(c)
    if list(parts) == [""]:
        return parts[""]
    return "\n".join(f"# table: {name}\n{text}" for name, text in parts.items())


def check_stem(stem: object) -> str:
    """A report's or plot's file stem: a plain file name (no folder, not empty), so that it is written in its
    ``out_dir`` and nowhere else.

    >>> check_stem("comparison")
    'comparison'
    """
    if not isinstance(stem, str) or not stem.strip() or stem in (".", "..") or Path(stem).name != stem \
            or "\\" in stem or "\0" in stem:
        raise DialevalError(f"stem {describe(stem)} is not allowed; allowed is a plain file name without folders, "
                            "e.g. 'comparison'")
    return stem


def write_report(c: Comparison, fmt: str, out_dir: str | os.PathLike, stem: str = "comparison") -> list[Path]:
    """Write the report in ``fmt`` under ``out_dir`` (created if needed); returns the files written.

    One file ``stem.<ext>``; CSV writes one file a table: ``stem-runs.csv``, ``stem-pairs.csv``,
    ``stem-groups.csv``, ``stem-agreement.csv``.
    """
    expect_instance(c, Comparison, "the comparison", "; make one with dialeval.compare_runs or compare_measures")
    f = get_format(fmt)
    check_stem(stem)
    out = make_folder(out_dir, "the report")
    written = []
    for part, text in f.render(c).items():
        if part not in f.parts:
            raise DialevalError(f"report format {f.name!r} rendered the undeclared part {part!r}")
        path = out / f.file_names(stem)[f.parts.index(part)]
        write_text(path, text)
        written.append(path)
    return written
