"""Krippendorff's alpha: a closed form, the textbook example, and an independent slow reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dialeval import DialevalError
from dialeval.agreement import krippendorff_alpha, scale_agreement
from dialeval.corpus import Corpus, Dialogue, Scale, Turn

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 coders, 12 units, values 1-5,
# missing marked None. The paper gives alpha = 0.743 (nominal) and 0.815 (ordinal).
CODERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _counts(coders, L=5):
    n = np.zeros((len(coders[0]), L), dtype=int)
    for row in coders:
        for u, v in enumerate(row):
            if v is not None:
                n[u, v - 1] += 1
    return n


def slow_alpha(coders, kind, L=5):
    """Pairwise definition: D_o over all ordered pairs of values within units weighted 1/(m_u - 1), D_e over
    all ordered pairs of pairable values; ordinal distance from the marginal frequencies."""
    units = [[r[u] for r in coders if r[u] is not None] for u in range(len(coders[0]))]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    freq = {c: values.count(c) for c in range(1, L + 1)}

    def delta(c, k):
        if kind == "nominal":
            return float(c != k)
        lo, hi = min(c, k), max(c, k)
        return (sum(freq[g] for g in range(lo, hi + 1)) - (freq[c] + freq[k]) / 2) ** 2

    d_o = sum(delta(a, b) / (len(u) - 1) for u in units for a, b in itertools.permutations(u, 2)) / n
    d_e = sum(delta(a, b) for a, b in itertools.permutations(values, 2)) / (n * (n - 1))
    return 1 - d_o / d_e


def test_closed_form():
    # (a, a), (a, b), (b, b): o_ab = o_ba = 1, n_a = n_b = 3, alpha = 1 - 5 * 2 / 18 = 4/9
    assert krippendorff_alpha([[2, 0], [1, 1], [0, 2]]) == pytest.approx(4 / 9)
    assert krippendorff_alpha([[3, 0], [0, 3]], "ordinal") == pytest.approx(1.0)


def test_textbook_example():
    n = _counts(CODERS)
    assert round(krippendorff_alpha(n, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(n, "ordinal"), 3) == 0.815


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5).flatmap(lambda L: st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, L)), min_size=6, max_size=6), min_size=2, max_size=4)
    .map(lambda c: (L, c))))
def test_against_slow_reference(lc):
    L, coders = lc
    n = _counts(coders, L)
    for kind in ("nominal", "ordinal"):
        got = krippendorff_alpha(n, kind)
        try:
            want = slow_alpha(coders, kind, L)
        except ZeroDivisionError:
            want = float("nan")
        if np.isnan(want):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(want, abs=1e-9)


def test_undefined_and_bad_input():
    assert np.isnan(krippendorff_alpha([[1, 0], [0, 1]]))  # no unit with 2 labels
    assert np.isnan(krippendorff_alpha([[2, 0], [3, 0]]))  # one level only
    with pytest.raises(DialevalError, match="kind 'interval' is not allowed"):
        krippendorff_alpha([[1, 1]], "interval")
    s = Scale("q", ("a", "b"), "nominal", "turn")
    c = Corpus([Dialogue("d", [Turn("x", ["u"], {"q": ["a"]})])], {"q": s})
    ag = scale_agreement(c, "q")
    assert np.isnan(ag.alpha) and ag.units == 0 and "alpha is undefined" in ag.note
