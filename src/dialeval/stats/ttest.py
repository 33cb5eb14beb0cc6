"""The paired t-test of two runs over the same dialogues."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from dialeval.errors import DialevalError
from dialeval.stats._common import Interval, as_vector, check_level, check_policy, rounding_bound, unit_scaled

CONSTANT_POLICIES = ("nan", "raise")


@dataclass(frozen=True)
class TTest:
    """Result of :func:`paired_t_test`: t, degrees of freedom, two-sided p, and the mean difference's interval.

    ``variance`` is the sample variance of the differences ``V = s_d^2`` (divisor n - 1) and
    ``effect_size`` the standardised mean difference ``ES = d. / sqrt(V)`` (Sakai 2018, Ch. 2), signed like
    ``mean_diff``; ``margin`` is the interval's half-width ``t_{df, (1+level)/2} sqrt(V / n)``.
    """

    statistic: float
    df: int
    pvalue: float
    mean_diff: float
    ci: Interval
    n: int
    variance: float = float("nan")
    effect_size: float = float("nan")
    margin: float = float("nan")

    def to_dict(self) -> dict:
        return asdict(self)


def paired_t_test(x: object, y: object, *, level: float = 0.95,
                  on_constant: Literal["nan", "raise"] = "nan") -> TTest:
    """Paired t-test of ``mean(x) = mean(y)`` over n paired scores.

    With ``d_i = x_i - y_i``, mean ``d.`` and sample standard deviation ``s_d``:

        t = d. / (s_d / sqrt(n)),  df = n - 1,  p = 2 P(T_df >= |t|),
        interval: d. +- t_{df, (1+level)/2} s_d / sqrt(n),
        effect size: ES = d. / sqrt(V),  V = s_d^2 (the variance of the differences),

    as Sakai's *Laboratory Experiments in Information Retrieval* (2018, Ch. 2 and 5) reports a paired test.

    Parameters
    ----------
    x, y : sequences of float, same length n >= 2
    level : float in (0, 1), default 0.95
    on_constant : {'nan', 'raise'}, default 'nan'
        When every difference is the same (``s_d = 0``, up to the rounding of ``x - y``: ``[.7, .3, .2]`` against
        ``[.6, .2, .1]``) t is undefined: NaN t and p (the interval is the point ``d.``), or raise
        :class:`~dialeval.DialevalError`.

    Examples
    --------
    >>> from dialeval.stats import paired_t_test
    >>> r = paired_t_test([.7, .3, .2, .6, .4], [.5, .1, .0, .2, .4])
    >>> round(r.statistic, 3), r.df, round(r.pvalue, 3), round(r.effect_size, 3), round(r.variance, 3)
    (3.162, 4, 0.034, 1.414, 0.02)
    """
    # scipy.special, not scipy.stats (0.9 s to import): t.sf(x) is stdtr(df, -x), t.ppf is stdtrit, bit for bit
    from scipy.special import stdtr, stdtrit
    a, b = as_vector(x, "x"), as_vector(y, "y")
    if a.size != b.size:
        raise DialevalError(f"x has {a.size} values and y {b.size}; a paired test needs them to pair up one to one")
    level = check_level(level)
    check_policy("on_constant", on_constant, CONSTANT_POLICIES)
    n = a.size
    if n < 2:
        raise DialevalError(f"{n} pair(s); a paired t-test needs at least 2")
    both, e = unit_scaled(np.concatenate([a, b]))  # tiny values: computed where their squares cannot underflow
    a, b = both[:n], both[n:]
    d = a - b
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    df = n - 1
    method = "t interval"
    if not sd > rounding_bound(np.concatenate([a, b])):  # equal differences, up to the rounding of x - y
        if on_constant == "raise":
            raise DialevalError(f"all {n} differences equal {mean!r}; the paired t statistic is undefined")
        nan = float("nan")
        mean = float(np.ldexp(mean, e))
        return TTest(nan, df, nan, mean, Interval(mean, mean, level, method), n, 0.0, nan, 0.0)
    se = sd / np.sqrt(n)
    t = mean / se
    p = float(2.0 * stdtr(df, -abs(t)))
    half = float(stdtrit(df, (1.0 + level) / 2.0) * se)
    effect = mean / sd
    mean, half, variance = (float(np.ldexp(v, k * e)) for v, k in ((mean, 1), (half, 1), (sd * sd, 2)))
    return TTest(float(t), df, p, mean, Interval(mean - half, mean + half, level, method), n, variance, effect,
                 half)
