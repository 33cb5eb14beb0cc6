"""Two-way ANOVA without replication (dialogues x runs) and the effect size ES_E of each pair of runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from dialeval.errors import DialevalError
from dialeval.stats._common import as_matrix, check_level, check_policy, tie_tolerance, unit_scaled

ZERO_ERROR_POLICIES = ("nan", "raise")


@dataclass(frozen=True, eq=False)
class Anova2:
    """Result of :func:`anova2`: sums of squares ``S_*``, degrees of freedom ``df_*``, mean squares ``V_*``.

    ``F``/``pvalue`` test the run factor, ``F_dialogues``/``pvalue_dialogues`` the dialogue factor.
    ``moe`` is the margin of error of each run mean at ``level``, ``t_{df_E, (1+level)/2} sqrt(V_E / n)``
    (Sakai 2018, Ch. 3 and 5: the interval of run j is ``run_means[j] +- moe``); NaN when ``V_E = 0``
    under ``on_zero_error='nan'``.
    """

    n: int
    m: int
    grand_mean: float
    run_means: np.ndarray
    S_runs: float
    S_dialogues: float
    S_E: float
    S_total: float
    df_runs: int
    df_dialogues: int
    df_E: int
    V_runs: float
    V_dialogues: float
    V_E: float
    F: float
    pvalue: float
    F_dialogues: float
    pvalue_dialogues: float
    moe: float = float("nan")
    level: float = 0.95

    def to_dict(self) -> dict:
        d = asdict(self)
        d["run_means"] = self.run_means.tolist()
        return d


def _zero_error(V_E: float, on_zero_error: str) -> bool:
    check_policy("on_zero_error", on_zero_error, ZERO_ERROR_POLICIES)
    if V_E > 0:
        return False
    if on_zero_error == "raise":
        raise DialevalError("the residual variance V_E is 0 (every score is a dialogue effect plus a run effect); "
                            "F and ES_E are undefined")
    return True


def anova2(X: object, *, on_zero_error: Literal["nan", "raise"] = "nan", level: float = 0.95) -> Anova2:
    """Two-way ANOVA without replication of an n x m matrix (dialogues x runs).

    With grand mean ``x..``, run means ``x.j`` and dialogue means ``xi.``:

        S_runs = n sum_j (x.j - x..)^2,   S_dialogues = m sum_i (xi. - x..)^2,
        S_E = sum_ij (x_ij - xi. - x.j + x..)^2,   V_E = S_E / ((m - 1)(n - 1)),
        F = (S_runs / (m - 1)) / V_E  with p from F(m - 1, (m - 1)(n - 1)),
        MOE = t_{(m - 1)(n - 1), (1 + level)/2} sqrt(V_E / n)  (margin of error of each run mean).

    Parameters
    ----------
    X : array_like, shape (n, m)
        n >= 2 dialogues x m >= 2 runs, finite.
    on_zero_error : {'nan', 'raise'}, default 'nan'
        When ``V_E = 0`` the F statistics are undefined: NaN, or raise :class:`~dialeval.DialevalError`.
        Residuals all within ``tie_tolerance(X)`` of 0 (rounding) count as ``S_E = 0``.
    level : float in (0, 1), default 0.95
        Confidence level of the margin of error ``moe``.

    Examples
    --------
    >>> from dialeval.stats import anova2
    >>> r = anova2([[1.0, 0.5], [0.6, 0.2], [0.9, 0.1]])
    >>> round(r.S_E, 4), r.df_E, round(r.V_E, 4)
    (0.0433, 2, 0.0217)
    """
    # scipy.special, not scipy.stats (0.9 s to import): t.ppf is stdtrit and f.sf is fdtrc, bit for bit
    from scipy.special import fdtrc, stdtrit
    arr, e = unit_scaled(as_matrix(X))   # tiny values: computed at a scale where their squares cannot underflow
    level = check_level(level)
    n, m = arr.shape
    grand = float(arr.mean())
    run_means = arr.mean(axis=0)
    dlg_means = arr.mean(axis=1)
    resid = arr - dlg_means[:, None] - run_means[None, :] + grand
    s_e = float((resid**2).sum())
    if s_e <= arr.size * np.float64(tie_tolerance(arr)) ** 2:  # residuals within rounding of 0: additive data
        s_e = 0.0
    S_E = s_e
    S_runs = float(n * ((run_means - grand) ** 2).sum())
    S_dlg = float(m * ((dlg_means - grand) ** 2).sum())
    df_r, df_d, df_e = m - 1, n - 1, (m - 1) * (n - 1)
    V_E = S_E / df_e
    V_r, V_d = S_runs / df_r, S_dlg / df_d
    if _zero_error(V_E, on_zero_error):
        F = F_d = p = p_d = moe = float("nan")
    else:
        moe = float(stdtrit(df_e, (1.0 + level) / 2.0) * np.sqrt(V_E / n))
        F, F_d = V_r / V_E, V_d / V_E
        p, p_d = float(fdtrc(df_r, df_e, F)), float(fdtrc(df_d, df_e, F_d))
    S_total = float(((arr - grand) ** 2).sum())
    if e:   # back to the data's units (F, p and the effect sizes have none)
        grand, run_means, moe = float(np.ldexp(grand, e)), np.ldexp(run_means, e), float(np.ldexp(moe, e))
        S_runs, S_dlg, S_E, S_total, V_r, V_d, V_E = (float(np.ldexp(v, 2 * e))
                                                       for v in (S_runs, S_dlg, S_E, S_total, V_r, V_d, V_E))
    run_means.setflags(write=False)
    return Anova2(n, m, grand, run_means, S_runs, S_dlg, S_E, S_total, df_r, df_d, df_e,
                  V_r, V_d, V_E, F, p, F_d, p_d, moe, level)


def effect_sizes(X: object, *, on_zero_error: Literal["nan", "raise"] = "nan") -> np.ndarray:
    """Effect size of every pair of runs: ``ES_E(i, j) = (x.i - x.j) / sqrt(V_E)``, an m x m array.

    ``V_E`` is the residual mean square of :func:`anova2`. Antisymmetric, 0 on the diagonal; unbounded,
    positive where run i has the larger mean. When ``V_E = 0`` the off-diagonal values are NaN
    (``on_zero_error='nan'``) or an error is raised (``'raise'``).

    Examples
    --------
    >>> from dialeval.stats import effect_sizes
    >>> es = effect_sizes([[1.0, 0.5], [0.6, 0.2], [0.9, 0.1]])
    >>> round(float(es[0, 1]), 3), float(es[0, 0])
    (3.85, 0.0)
    """
    r = anova2(unit_scaled(as_matrix(X))[0], on_zero_error=on_zero_error)  # no units: V_E of tiny data can't underflow
    diff = r.run_means[:, None] - r.run_means[None, :]
    if not r.V_E > 0:
        es = np.full_like(diff, np.nan)
        np.fill_diagonal(es, 0.0)
        return es
    return diff / np.sqrt(r.V_E)
