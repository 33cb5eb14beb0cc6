"""Property table of the measures (as scikit-learn's test_common does) and property-based tests.

Every registered measure must be classified below; the registry's declarations must agree with the table,
and the measures must behave as the table says on random distributions.
"""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dialeval import DialevalError, measures, reference
from dialeval.measures import MEASURES

# name: (scale, symmetric, upper bound of the range (c_L: the supremum of NOD, c_bound below), has the 2018 variant)
PROPERTIES = {
    "nvd": ("nominal", True, "1", False),
    "rnss": ("nominal", True, "1", False),
    "jsd": ("nominal", True, "1", False),
    "mse": ("nominal", True, "2/L", False),
    "nmd": ("ordinal", True, "1", False),
    "od": ("ordinal", False, "c_L (L-1)", True),
    "nod": ("ordinal", False, "c_L", True),
    "sod": ("ordinal", True, "c_L (L-1)", True),
    "snod": ("ordinal", True, "c_L", True),
    "rnod": ("ordinal", False, "sqrt(c_L)", True),
    "rsnod": ("ordinal", True, "sqrt(c_L)", True),
}


@functools.cache
def c_bound(L: int) -> Fraction:
    """The supremum of NOD on L bins, by brute force over every support B of the gold, its main bin m and the
    prediction's bin k (in the limit of slivers of mass, DW_i -> |i - k| + |i - m|): an independent slow
    reference of od_bound (which searches the same limits its own way)."""
    best = Fraction(0)
    for r in range(1, L + 1):
        for B in itertools.combinations(range(L), r):
            w = [Fraction(sum(abs(i - j) for i in B), len(B)) for j in range(L)]
            best = max(best, max(w[m] + w[k] for m in B for k in range(L) if k != m))
    return best / (L - 1)
ALL = sorted(PROPERTIES)
SYMMETRIC = [m for m in ALL if PROPERTIES[m][1]]
ASYMMETRIC = [m for m in ALL if not PROPERTIES[m][1]]
NOMINAL = [m for m in ALL if PROPERTIES[m][0] == "nominal"]
VARIANTS = [(m, v) for m in ALL for v in (("paper", "2018") if PROPERTIES[m][3] else ("paper",))]


def call(name: str, p, q, variant: str = "paper"):
    fn = getattr(measures, name)
    return fn(p, q, variant=variant) if PROPERTIES[name][3] else fn(p, q)


def upper(name: str, L: int, variant: str = "paper") -> float:
    c = float(c_bound(L)) if variant == "paper" else 1.0
    return {"1": 1.0, "2/L": 2.0 / L, "c_L": c, "c_L (L-1)": c * (L - 1), "sqrt(c_L)": c ** 0.5}[PROPERTIES[name][2]]


@pytest.mark.parametrize("L", range(2, 10))
def test_the_order_aware_bound_is_the_brute_force_supremum_and_is_approached(L):
    """od_bound(L) is the brute force's c_L (1 up to 4 bins, 13/12 for 5); a pair of distributions with slivers
    of mass on the far bins approaches it, and the 2018 variant stays at most 1."""
    from dialeval.measures.ordinal import od_bound

    assert od_bound(L) == float(c_bound(L)) and od_bound(L, "2018") == 1.0
    assert c_bound(5) == Fraction(13, 12) and c_bound(4) == 1
    if L == 5:
        e = 1e-9
        gold, pred = [e, e, 0, 1 - 2 * e, 0], [e, e, 0, 0, 1 - 2 * e]
        assert measures.snod(pred, gold) == pytest.approx(13 / 12, abs=1e-8)
        assert measures.nod(pred, gold) == pytest.approx(13 / 12, abs=1e-8)
        assert measures.rsnod(pred, gold) > 1.04  # above 1: a missing item scored 1.0 would not be the worst


def test_every_measure_is_classified():
    assert set(MEASURES) == set(PROPERTIES), "classify every registered measure in PROPERTIES"
    assert set(reference.MEASURES) == set(PROPERTIES), "every measure needs a slow reference"


@pytest.mark.parametrize("name", ALL)
def test_registry_declarations_match_the_table(name):
    m = MEASURES[name]
    scale, symmetric, up, has_variant = PROPERTIES[name]
    assert (m.scale, m.symmetric, m.range, m.has_variant) == (scale, symmetric, ("0", up), has_variant)
    assert m.formula and m.citation and m.title and "lower is better" in m.direction
    fn = getattr(measures, name)
    assert fn.__name__ == name and m.formula in fn.__doc__ and "Examples" in fn.__doc__


# Strategies: distributions over L bins, non-negative, not all zero (unnormalised on purpose).
def _dist(L: int):
    return arrays(np.float64, L, elements=st.floats(0, 100, allow_nan=False)).filter(lambda a: a.sum() > 1e-6)


def _with_zeros(L: int):
    # Many real gold distributions have empty bins: draw some exact zeros often.
    return arrays(np.float64, L, elements=st.sampled_from([0.0, 0.0, 1.0, 2.0, 5.0, 19.0, 0.25])).filter(
        lambda a: a.sum() > 0)


pair = st.integers(2, 7).flatmap(lambda L: st.tuples(st.one_of(_dist(L), _with_zeros(L)),
                                                       st.one_of(_dist(L), _with_zeros(L))))
batch = st.tuples(st.integers(1, 6), st.integers(2, 6)).flatmap(
    lambda nl: st.tuples(st.lists(_with_zeros(nl[1]), min_size=nl[0], max_size=nl[0]),
                         st.lists(_dist(nl[1]), min_size=nl[0], max_size=nl[0])))


@settings(max_examples=200, deadline=None)
@given(pair)
@pytest.mark.parametrize("name,variant", VARIANTS)
def test_range_identity_and_reference(name, variant, pq):
    p, q = pq
    L = len(p)
    v = call(name, p, q, variant)
    assert isinstance(v, float)
    assert -1e-12 <= v <= upper(name, L, variant) + 1e-12
    assert call(name, p, p, variant) == pytest.approx(0.0, abs=1e-12)
    ref = reference.MEASURES[name]
    want = ref(list(p), list(q), variant) if PROPERTIES[name][3] else ref(list(p), list(q))
    assert v == pytest.approx(want, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pair)
@pytest.mark.parametrize("name", SYMMETRIC)
def test_symmetric(name, pq):
    p, q = pq
    assert call(name, p, q) == pytest.approx(call(name, q, p), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("name", ASYMMETRIC)
def test_asymmetric_has_a_counterexample(name):
    p, q = [1, 0, 0], [1 / 3, 1 / 3, 1 / 3]
    assert call(name, p, q) != pytest.approx(call(name, q, p))


@settings(max_examples=100, deadline=None)
@given(pair, st.randoms(use_true_random=False))
@pytest.mark.parametrize("name", NOMINAL)
def test_nominal_measures_ignore_bin_order(name, pq, rnd):
    p, q = pq
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    assert call(name, p[perm], q[perm]) == pytest.approx(call(name, p, q), rel=1e-12, abs=1e-14)


def test_nmd_depends_on_bin_order():
    p, q = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    perm = [1, 0, 2]  # swap the first two bins: the same "distance" for nominal measures
    assert measures.nmd(p, q) == pytest.approx(0.5)
    assert measures.nmd(p[[0, 2, 1]], q[[0, 2, 1]]) == pytest.approx(1.0)
    assert measures.nvd(p[perm], q[perm]) == measures.nvd(p, q)


@settings(max_examples=100, deadline=None)
@given(batch)
@pytest.mark.parametrize("name,variant", VARIANTS)
def test_batch_equals_row_by_row(name, variant, pq):
    P, Q = np.array(pq[0]), np.array(pq[1])
    got = call(name, P, Q, variant)
    assert isinstance(got, np.ndarray) and got.shape == (len(P),)
    rows = [call(name, p, q, variant) for p, q in zip(P, Q, strict=True)]
    np.testing.assert_allclose(got, rows, rtol=1e-13, atol=1e-15)


# Boundary checks: what was received, what is allowed.
@pytest.mark.parametrize("pred,gold,message", [
    ([0.5, 0.5], [1, 0, 0], "same shape"),
    ([1], [1], "at least 2 bins"),
    ([float("nan"), 1], [1, 0], "NaN or infinite"),
    ([float("inf"), 1], [1, 0], "NaN or infinite"),
    ([-0.1, 1.1], [1, 0], "negative value"),
    ([0, 0], [1, 0], "all zero"),
    ([[[1, 0]]], [[[1, 0]]], "3 dimensions"),
    (["a", "b"], [1, 0], "expected numbers"),
])
@pytest.mark.parametrize("name", ALL)
def test_bad_input_is_explained(name, pred, gold, message):
    with pytest.raises(DialevalError, match=message):
        call(name, pred, gold)


def test_variant_is_checked():
    with pytest.raises(DialevalError, match="allowed are 'paper', '2018'"):
        measures.rsnod([1, 0], [0, 1], variant="2019")
    with pytest.raises(TypeError):
        measures.jsd([1, 0], [0, 1], variant="2018")  # nominal measures take no variant at all


def test_lookup_by_name_and_alias():
    assert measures.get("JSD") is MEASURES["jsd"]
    assert measures.get("jensen-shannon") is MEASURES["jsd"]
    with pytest.raises(DialevalError, match="allowed are nvd, rnss, jsd"):
        measures.get("ndcg")
    assert measures.names("nominal") == ["nvd", "rnss", "jsd", "mse"]


@pytest.mark.parametrize("pred,message", [
    ([[1, 0], [1]], "pred: rows of different lengths"),
    (["0.5", "0.5"], "pred: expected numbers, received an array of <U3"),
    ([True, False], "pred: expected numbers, received an array of bool"),
    ([2**2000, 1], "pred: expected numbers"),
])
def test_values_that_are_not_numbers_are_refused_as_the_run_files_refuse_them(pred, message):
    gold = [[1, 0], [0, 1]] if isinstance(pred[0], list) else [1, 0]
    with pytest.raises(DialevalError, match=message):
        measures.nmd(pred, gold)


def test_jsd_of_the_smallest_subnormal_is_tiny_not_one():
    """(1, 5e-324) against (1, 0): the mean's bin, 5e-324 / 2, underflows to 0; the kernel read that as
    disjoint distributions (JSD 1.0). Found by hypothesis; the terms are a log2(2a / (a + b)) now."""
    assert measures.jsd([1, 0], [1, 5e-324]) < 1e-300
    assert reference.jsd([1, 0], [1, 5e-324]) < 1e-300


def test_a_plugin_measure_is_found_by_any_case_and_its_declaration_is_checked(monkeypatch):
    """register() kept names as given while get() lower-cases: "MyNVD" was registered and then "unknown", in an
    error listing it; a scale or range upper end nothing could use was accepted."""
    import dataclasses

    from dialeval.measures import registry

    monkeypatch.setattr(registry, "MEASURES", dict(registry.MEASURES))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    mine = dataclasses.replace(MEASURES["nvd"], name="MyNVD", aliases=("My-Alias",))
    stored = registry.register(mine)
    assert stored.name == "mynvd" and stored.aliases == ("my-alias",)
    assert registry.get("MyNVD") is stored and registry.get("MY-ALIAS") is stored
    with pytest.raises(DialevalError, match="measure name 'mynvd' is already registered"):
        registry.register(mine)
    with pytest.raises(DialevalError, match="scale 'ordinal-ish' is not allowed; allowed are ordinal, nominal"):
        registry.register(dataclasses.replace(mine, name="a", aliases=(), scale="ordinal-ish"))
    with pytest.raises(DialevalError, match=r"range upper end 'log2\(L\)' is not allowed; allowed are '1', 'L-1'"):
        registry.register(dataclasses.replace(mine, name="b", aliases=(), range=("0", "log2(L)")))
    with pytest.raises(DialevalError, match=r"register\(\) takes a Measure; received"):
        registry.register("nvd")


def test_the_direction_is_one_flag_that_every_reader_follows():
    """The text was parsed in two places, one case-sensitively: "Lower is better" sorted the leaderboard the
    wrong way while reports read it right."""
    import dataclasses

    from dialeval.report.labels import lower_is_better
    from dialeval.service.leaderboard.board import column_info

    assert all(m.lower_is_better and m.direction.startswith("lower is better") for m in MEASURES.values())
    assert dataclasses.replace(MEASURES["nmd"], lower_is_better=False).direction == "higher is better"
    assert lower_is_better("quality.nmd.A") and column_info("quality.nmd.A", "quality")["lower_is_better"]


@pytest.mark.parametrize(("L", "variant", "message"), [
    (1, "paper", "L = 1 is not allowed; allowed are integers >= 2"),
    (5.0, "paper", "L = 5.0 is not allowed"),
    ([5], "paper", r"L = \[5\] is not allowed"),
    (5, "2019", "variant '2019' is not allowed; allowed are 'paper', '2018'"),
])
def test_od_bound_checks_its_input(L, variant, message):
    from dialeval.measures.ordinal import od_bound

    with pytest.raises(DialevalError, match=message):
        od_bound(L, variant)
