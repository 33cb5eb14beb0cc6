"""Comparing runs and measures: significance tests, effect sizes, intervals, rank agreement, correlation.

Every function takes plain arrays, returns a small typed result (statistic, p-value, interval, the
settings used), prints nothing, and takes an explicit ``seed`` (an int or a ``numpy.random.Generator``)
wherever it draws random numbers.
"""

from __future__ import annotations

from dialeval.stats._common import Interval
from dialeval.stats.bootstrap import BootstrapCI, bootstrap_ci
from dialeval.stats.correlation import METHODS, Correlation, correlate, kendall_tau

__all__ = ["METHODS", "BootstrapCI", "Correlation", "Interval", "bootstrap_ci", "correlate", "kendall_tau"]
