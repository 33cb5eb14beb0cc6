"""Comparing runs and measures: significance tests, effect sizes, intervals, rank agreement, correlation.

Every function takes plain arrays, returns a small typed result (statistic, p-value, interval, the
settings used), prints nothing, and takes an explicit ``seed`` (an int or a ``numpy.random.Generator``)
wherever it draws random numbers; the same seed gives the same answer at any thread count.

- :func:`randomized_tukey_hsd`, :func:`paired_randomization_test` (``randomization``)
- :func:`anova2`, :func:`effect_sizes` (``anova``), :func:`paired_t_test` (``ttest``)
- :func:`bootstrap_ci` (``bootstrap``)
- :func:`correlate`, :func:`kendall_tau`, :func:`rank_agreement` (``correlation``)
- :func:`compare_runs_matrix`, :func:`compare_measures` (``comparison``): everything above for a set of
  runs under one or several measures, as one report object.
"""

from __future__ import annotations

from dialeval.stats._common import Interval, ResamplingWarning
from dialeval.stats.anova import Anova2, anova2, effect_sizes
from dialeval.stats.bootstrap import BootstrapCI, bootstrap_ci
from dialeval.stats.comparison import (
    Comparison,
    MeasureComparison,
    PairRow,
    RankAgreement,
    RunRow,
    compare_measures,
    compare_runs_matrix,
    not_different_groups,
)
from dialeval.stats.correlation import METHODS, Correlation, correlate, kendall_tau, rank_agreement
from dialeval.stats.randomization import (
    PairedRandomization,
    TukeyHSD,
    paired_randomization_test,
    randomized_tukey_hsd,
)
from dialeval.stats.ttest import TTest, paired_t_test

__all__ = ["METHODS", "Anova2", "BootstrapCI", "Comparison", "Correlation", "Interval", "MeasureComparison", "PairRow",
           "PairedRandomization", "RankAgreement", "ResamplingWarning", "RunRow", "TTest", "TukeyHSD",
           "anova2", "bootstrap_ci", "compare_measures", "compare_runs_matrix", "correlate", "effect_sizes",
           "kendall_tau", "not_different_groups", "paired_randomization_test", "paired_t_test",
           "randomized_tukey_hsd", "rank_agreement"]
