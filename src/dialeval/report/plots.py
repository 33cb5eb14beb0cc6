"""Plots of a comparison: run means with their intervals, one panel per measure, as PNG and SVG.

Drawn on a bare matplotlib ``Figure`` (the Agg canvas; pyplot and the global backend are not touched),
so it works on a server with no display.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dialeval import progress as _progress
from dialeval.io.atomic import atomic_path
from dialeval.report.labels import column_label, direction_text
from dialeval.stats.comparison import Comparison

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_FORMATS = ("png", "svg")
_NCOLS = 3


def means_figure(c: Comparison) -> Figure:
    """One panel per measure: each run's mean (dot) and interval (bar), best run at the top.

    Tick labels carry the run's group letters: runs sharing a letter are not significantly different.
    """
    from matplotlib.figure import Figure  # imported here: matplotlib loads only when a plot is drawn

    k, m = len(c.measures), len(c.runs)
    ncols = min(k, _NCOLS)
    nrows = math.ceil(k / ncols)
    panel_h = max(2.4, 0.2 * m + 1.3)
    fig = Figure(figsize=(4.6 * ncols, panel_h * nrows + 0.8), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    s = c.settings
    for ax, mc in zip(axes.flat, c.measures, strict=False):
        means = np.array([r.mean for r in mc.runs])
        lo = np.array([r.ci.low for r in mc.runs])
        hi = np.array([r.ci.high for r in mc.runs])
        y = np.arange(len(mc.runs))
        ax.errorbar(means, y, xerr=np.vstack([means - lo, hi - means]), fmt="o", markersize=3.5, capsize=2.5,
                    linewidth=1.0, color="#1f4e79", ecolor="#6a8fb5")
        ax.set_yticks(y, [f"{r.run}  ({r.groups})" for r in mc.runs], fontsize=7 if m > 20 else 8)
        ax.set_ylim(len(mc.runs) - 0.5, -0.5)  # best at the top
        ax.set_title(column_label(mc.name), fontsize=10, loc="left")
        ax.set_xlabel(f"mean over {c.n} dialogues ({direction_text(mc.name)})", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.flat[k:]:
        ax.set_visible(False)
    fig.suptitle(f"{m} runs: means with {s['level'] * 100:g}% intervals ({s['interval']}); letters: groups not "
                 f"significantly different ({s['test']}, B = {s['B']}, seed {s['seed']}, alpha {s['alpha']}); "
                 f"dialeval {s['dialeval_version']}", fontsize=8, wrap=True)
    return fig


def plot_means(c: Comparison, out_dir: str | os.PathLike, stem: str = "means", *,
               progress: bool | None = None) -> list[Path]:
    """Write :func:`means_figure` as ``out_dir/stem.png`` and ``out_dir/stem.svg`` (atomically); return the paths.

    ``progress``: a bar on stderr (None: on a terminal, for 10 runs or more, which take a second or more).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from dialeval.stats import compare_measures
    >>> from dialeval.report import plot_means
    >>> c = compare_measures({"quality.nmd.A": np.random.default_rng(0).random((20, 3))}, ["a", "b", "c"], B=200)
    >>> [p.name for p in plot_means(c, tempfile.mkdtemp())]
    ['means.png', 'means.svg']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with _progress.bar(f"plotting {len(c.measures)} panel(s)", len(PLOT_FORMATS) + 1,
                       progress=progress if progress is not None else (None if len(c.runs) >= 10 else False)) as bar:
        fig = means_figure(c)
        fig.draw_without_rendering()  # lay out once, then keep it for every format
        fig.set_layout_engine("none")
        bar.advance()
        written = []
        for fmt in PLOT_FORMATS:
            path = out / f"{stem}.{fmt}"
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=fmt, dpi=150, metadata={"Date": None} if fmt == "svg" else None)
            written.append(path)
            bar.advance()
    return written
