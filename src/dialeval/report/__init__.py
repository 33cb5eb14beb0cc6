"""Reports of comparisons of runs: scoring many runs into topic-by-run matrices, tables and plots.

- :func:`compare_runs` (``runs``): score run files against gold and compare them under every measure and
  key; :func:`score_runs` and :func:`compare_scored` are its two steps.
- :func:`write_report`, :func:`report_text` (``tables``): Markdown, CSV, LaTeX, JSON (:data:`REPORT_FORMATS`).
- :func:`plot_means` (``plots``): run means with intervals, one panel per measure, PNG and SVG.
- ``labels``: names of score columns from the measures registry.
"""

from __future__ import annotations

from dialeval.report.plots import PLOT_FORMATS, plot_means
from dialeval.report.runs import MISSING_POLICIES, RunMatrix, compare_runs, compare_scored, run_files, score_runs
from dialeval.report.tables import REPORT_FORMATS, comparison_dict, report_text, write_report

__all__ = ["MISSING_POLICIES", "PLOT_FORMATS", "REPORT_FORMATS", "RunMatrix", "compare_runs", "compare_scored",
           "comparison_dict", "plot_means", "report_text", "run_files", "score_runs", "write_report"]
