"""Plots of a comparison: run means with their intervals, one panel per measure, as PNG and SVG.

Drawn on a bare matplotlib ``Figure`` (the Agg canvas; pyplot and the global backend are not touched),
so it works on a server with no display. The figure carries no caption: :func:`figure_caption` gives it, and
the reports put it under the figure (Markdown, LaTeX, JSON).

Layout is computed, not searched for: panels are placed on a grid of ``columns`` columns with margins sized
from the longest tick label, so drawing 40 runs x 8 measures takes a fraction of a second (matplotlib's
constrained layout measured every tick label several times: 14 s for that figure). SVG text is written as
text, not as glyph outlines.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError, DialevalWarning
from dialeval.io.atomic import atomic_path, make_folder
from dialeval.report.display import displayed
from dialeval.report.labels import column_label, direction_text, match_columns
from dialeval.report.tables import check_stem
from dialeval.stats.comparison import Comparison, MeasureComparison

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_FORMATS = ("png", "svg")
DEFAULT_COLUMNS = 3
_PANEL_W = 3.0      # inches of plotting area per panel
_ROW_H = 0.19       # inches per run
_FONT = 7.5         # points, tick labels
_CHAR_W = 0.58      # average character width in ems (DejaVu Sans)


def select_measures(c: Comparison, measures: Sequence[str] | None) -> list[MeasureComparison]:
    """The measures of ``c`` named by ``measures`` (all when None; see :func:`~dialeval.report.labels.match_columns`).

    Examples
    --------
    >>> import numpy as np
    >>> from dialeval.stats import compare_measures
    >>> X = np.random.default_rng(0).random((10, 2))
    >>> c = compare_measures({"quality.nmd.A": X, "quality.nmd.S": X, "nugget.jsd": X}, ["a", "b"], B=100)
    >>> [m.name for m in select_measures(c, ["jsd", "nmd.S"])]
    ['quality.nmd.S', 'nugget.jsd']
    """
    names = set(match_columns([mc.name for mc in c.measures], measures))
    return [mc for mc in c.measures if mc.name in names]


def check_columns(columns: int) -> int:
    """``columns`` (panels per row) if it is a whole number from 1 to 12, else an error."""
    if isinstance(columns, bool) or not isinstance(columns, int) or not 1 <= columns <= 12:
        raise DialevalError(f"columns {columns!r} is not allowed; allowed are whole numbers from 1 to 12")
    return columns


MAX_LABEL = 40
"""Characters of a run's name a plot shows (a longer one is cut with "..."; the report's tables show it whole)."""


def plot_label(name: str) -> str:
    r"""A run's name as a plot's row label: one line, at most :data:`MAX_LABEL` characters.

    >>> plot_label("a\nb"), plot_label("x" * 50)[-5:]
    ('a b', 'xx...')
    """
    text = " ".join(str(name).split())
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 3] + "..."


def means_figure(c: Comparison, *, measures: Sequence[str] | None = None,
                 columns: int = DEFAULT_COLUMNS) -> Figure:
    """One panel per measure: each run's mean (dot) and interval (bar), best run at the top.

    Tick labels carry the run's group letters (one style for the whole comparison): runs sharing a letter are
    not significantly different. ``columns`` panels per row (fewer when there are fewer measures).
    """
    from matplotlib.figure import Figure  # imported here: matplotlib loads only when a plot is drawn
    from matplotlib.transforms import blended_transform_factory

    chosen = select_measures(displayed(c), measures)  # run names as the reports show them
    ncols = min(len(chosen), check_columns(columns))
    nrows = math.ceil(len(chosen) / ncols)
    m = len(c.runs)
    labels = {mc.name: [f"{plot_label(r.run)}  ({r.groups})" for r in mc.runs] for mc in chosen}
    longest = max(len(t) for ts in labels.values() for t in ts)
    label_w = longest * _FONT * _CHAR_W / 72 + 0.15
    top_pad, bottom_pad, gap_h = 0.32, 0.48, 0.25  # title above, x label below a panel, space between rows
    panel_h = max(1.4, _ROW_H * m + 0.2)
    cell_w, cell_h = label_w + _PANEL_W + 0.2, top_pad + panel_h + bottom_pad + gap_h
    W, H = ncols * cell_w + 0.1, nrows * cell_h + 0.1
    fig = Figure(figsize=(W, H))
    y = np.arange(m)
    for k, mc in enumerate(chosen):
        row, col = divmod(k, ncols)
        left = col * cell_w + label_w + 0.05
        bottom = H - 0.05 - row * cell_h - top_pad - panel_h
        ax = fig.add_axes((left / W, bottom / H, _PANEL_W / W, panel_h / H))
        means = np.array([r.mean for r in mc.runs])
        lo = np.array([r.ci.low for r in mc.runs])
        hi = np.array([r.ci.high for r in mc.runs])
        ax.errorbar(means, y, xerr=np.vstack([means - lo, hi - means]), fmt="o", markersize=3.0, capsize=2.0,
                    linewidth=0.9, color="#1f4e79", ecolor="#6a8fb5")
        # Run labels as plain texts beside the rows rather than tick labels: no Tick machinery to lay out.
        ax.set_yticks([])
        at = blended_transform_factory(ax.transAxes, ax.transData)
        for yi, text in zip(y.tolist(), labels[mc.name], strict=True):
            ax.text(-0.02, yi, text, transform=at, ha="right", va="center", fontsize=_FONT)
        ax.set_ylim(m - 0.5, -0.5)  # best at the top
        ax.set_title(column_label(mc.name), fontsize=9.5, loc="left", y=1.0, pad=4)
        ax.set_xlabel(f"mean ({direction_text(mc.name)})", fontsize=7.5)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    return fig


def figure_caption(c: Comparison, *, measures: Sequence[str] | None = None) -> str:
    """The caption of :func:`means_figure`, for the report (the image itself has none)."""
    s = c.settings
    chosen = select_measures(c, measures)
    return (f"Means of {len(c.runs)} runs over {c.n} dialogues with {s['level'] * 100:g}% intervals "
            f"({s['interval']}), one panel per measure ({', '.join(column_label(mc.name) for mc in chosen)}), "
            f"best run at the top. Letters after a run's name: groups of runs not significantly different "
            f"({s['test']}, B = {s['B']}, seed {s['seed']}, alpha {s['alpha']}). dialeval {s['dialeval_version']}.")


def plot_means(c: Comparison, out_dir: str | os.PathLike, stem: str = "means", *, measures: Sequence[str] | None = None,
               columns: int = DEFAULT_COLUMNS, progress: bool | None = None) -> list[Path]:
    """Write :func:`means_figure` as ``out_dir/stem.png`` and ``out_dir/stem.svg`` (atomically); return the paths.

    ``progress``: a bar on stderr (None: on a terminal, for 10 runs or more).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from dialeval.stats import compare_measures
    >>> from dialeval.report import plot_means
    >>> c = compare_measures({"quality.nmd.A": np.random.default_rng(0).random((20, 3))}, ["a", "b", "c"], B=200)
    >>> [p.name for p in plot_means(c, tempfile.mkdtemp())]
    ['means.png', 'means.svg']
    """
    import matplotlib

    check_stem(stem)
    fig = means_figure(c, measures=measures, columns=columns)  # checks the arguments before anything is written
    out = make_folder(out_dir, "the plots")
    with _progress.bar(f"plotting {len(fig.axes)} panel(s)", len(PLOT_FORMATS),
                       progress=progress if progress is not None else (None if len(c.runs) >= 10 else False)) as bar, \
            matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "dialeval"}):
        written, lacking = [], False
        for fmt in PLOT_FORMATS:
            path = out / f"{stem}.{fmt}"
            with atomic_path(path) as tmp, warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                fig.savefig(tmp, format=fmt, dpi=150, metadata={"Date": None} if fmt == "svg" else None,
                            **({"pil_kwargs": {"compress_level": 3}} if fmt == "png" else {}))
            lacking |= _tell_other_warnings(said)
            written.append(path)
            bar.advance()
    if lacking:
        warnings.warn(f"the plot's font ({matplotlib.rcParams['font.family'][0]}) lacks some characters of the run "
                      "names, drawn as boxes in the plot; the report's tables show them", DialevalWarning,
                      stacklevel=2)
    return written


def _tell_other_warnings(said: list) -> bool:
    """Whether matplotlib warned of a glyph its font lacks (said once, by the caller, in dialeval's words); the
    other warnings of ``said`` are shown as they came."""
    lacking = False
    for w in said:
        if issubclass(w.category, UserWarning) and str(w.message).startswith("Glyph ") and "missing" in str(w.message):
            lacking = True
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return lacking
