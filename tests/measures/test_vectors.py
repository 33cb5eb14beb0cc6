"""The test vectors of MEASURES.md (rounded to 4 places there) and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dialeval import measures, reference

T = 1 / 3
# p, q (gold), NMD, RNSS, JSD, NOD, SNOD, RSNOD, RSNOD (2018 variant): MEASURES.md, "Test vectors".
SPEC_TABLE = [
    ((0, 0, 1), (1, 0, 0), 1, 1, 1, 1, 1, 1, 1),
    ((0, 1, 0), (1, 0, 0), 0.5, 1, 1, 0.5, 0.5, 0.7071, 0.9129),
    ((1, 0, 0), (T, T, T), 0.5, 0.5774, 0.4591, 0.3148, 0.2407, 0.4907, 0.5611),
    ((2 / 3, 1 / 3, 0), (T, T, T), 0.3333, 0.3333, 0.2075, 0.1111, 0.1111, 0.3333, 0.3333),
]
COLUMNS = [("nmd", "paper"), ("rnss", "paper"), ("jsd", "paper"), ("nod", "paper"), ("snod", "paper"),
           ("rsnod", "paper"), ("rsnod", "2018")]


@pytest.mark.parametrize("row", SPEC_TABLE, ids=[f"row{i + 1}" for i in range(len(SPEC_TABLE))])
@pytest.mark.parametrize("impl", ["dialeval", "reference"])
def test_spec_table(row, impl):
    p, q, *expected = row
    for (name, variant), want in zip(COLUMNS, expected, strict=True):
        if impl == "dialeval":
            fn = getattr(measures, name)
            got = fn(p, q, variant=variant) if variant != "paper" else fn(p, q)
        else:
            fn = reference.MEASURES[name]
            got = fn(list(p), list(q), variant) if variant != "paper" else fn(list(p), list(q))
        assert round(got, 4) == pytest.approx(want, abs=1e-12), (name, variant)


def test_spec_table_as_one_batch():
    p = np.array([r[0] for r in SPEC_TABLE], dtype=float)
    q = np.array([r[1] for r in SPEC_TABLE], dtype=float)
    for col, (name, variant) in enumerate(COLUMNS):
        got = getattr(measures, name)(p, q, variant=variant) if variant != "paper" else getattr(measures, name)(p, q)
        assert got.shape == (len(SPEC_TABLE),)
        np.testing.assert_allclose(np.round(got, 4), [r[2 + col] for r in SPEC_TABLE], atol=1e-12)


def test_sakai_2017_figure_3():
    # Sakai (EVIA 2017), Fig. 3: RNSS 0.5774 / 0.3333 and JSD 0.4591 / 0.2075.
    assert round(measures.rnss([1, 0, 0], [T, T, T]), 4) == 0.5774
    assert round(measures.jsd([1, 0, 0], [T, T, T]), 4) == 0.4591
    assert round(measures.rnss([2 / 3, 1 / 3, 0], [T, T, T]), 4) == 0.3333
    assert round(measures.jsd([2 / 3, 1 / 3, 0], [T, T, T]), 4) == 0.2075


def test_closed_forms():
    # JSD of (1, 0) vs (1/2, 1/2): m = (3/4, 1/4); (log2(4/3) + (1/2)log2(2/3) + (1/2)log2(2)) / 2.
    want = (math.log2(4 / 3) + 0.5 * math.log2(2 / 3) + 0.5 * math.log2(2)) / 2
    assert measures.jsd([1, 0], [0.5, 0.5]) == pytest.approx(want, abs=1e-15)
    # NMD of one-hot ends of L levels = 1; of adjacent levels = 1/(L-1).
    for L in (2, 3, 5, 9):
        e = np.eye(L)
        assert measures.nmd(e[0], e[-1]) == pytest.approx(1.0)
        assert measures.nmd(e[0], e[1]) == pytest.approx(1 / (L - 1))
    # One-hot at two ends: DW at gold's bin 0 = (L-1)*1 (bin L-1), OD = L-1, NOD = 1.
    assert measures.od([0, 0, 0, 0, 1], [1, 0, 0, 0, 0]) == pytest.approx(4.0)
    assert measures.nod([0, 0, 0, 0, 1], [1, 0, 0, 0, 0]) == pytest.approx(1.0)
    # NVD of disjoint supports = 1; RNSS of disjoint one-hots = 1.
    assert measures.nvd([1, 0, 0], [0, 0.5, 0.5]) == pytest.approx(1.0)
    assert measures.rnss([1, 0, 0], [0, 1, 0]) == pytest.approx(1.0)


def test_unnormalised_input_is_normalised():
    assert measures.rsnod([0, 2, 0], [5, 0, 0]) == pytest.approx(measures.rsnod([0, 1, 0], [1, 0, 0]))
    assert measures.jsd([19, 0, 0], [1, 1, 1]) == pytest.approx(0.4591, abs=5e-5)


@given(st.lists(st.integers(0, 30), min_size=2, max_size=9).filter(lambda c: sum(c) > 0))
def test_counts_over_their_total_score_exactly_zero_against_themselves(counts):
    """Gold-like rows (counts / n) kept as given: every measure of a distribution against itself is exactly 0,
    not a few ulps, although the row's float sum may be 0.9999999999999999."""
    p = np.array(counts, dtype=float) / sum(counts)
    for name in measures.MEASURES:
        assert measures.MEASURES[name](p, p.copy()) == 0.0, name
