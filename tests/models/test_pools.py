"""Annotator pools (``--param pools=balance``): the pools read from annotator ids, the balanced training
distributions (closed forms), and the parameter through every model kind."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dialeval
from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError
from dialeval.models import train
from dialeval.models.base import Estimator, kind_class
from dialeval.models.data import TurnTable
from dialeval.models.pools import POOLS, annotator_pools, balance_pools
from dialeval.models.turndata import labelled_scales_of, scale_targets


def test_pools_are_connected_components_of_shared_items():
    # a-b share an item, b-d another: one pool {a, b, d}; c-e: another; items without ids: a third
    pools = annotator_pools([["a", "b"], ["c"], ["b", "d"], None, ["d"], ["e", "c"], [], [None, "a"]])
    assert pools.tolist() == [0, 1, 0, 2, 0, 1, 2, 0]


def test_one_panel_is_one_pool():
    assert annotator_pools([["p1", "p2", "p3"]] * 4).tolist() == [0, 0, 0, 0]
    assert annotator_pools([None, None]).tolist() == [0, 0]


def test_two_identical_items_per_pool_become_the_corpus_mean():
    """Closed form: a pool whose items all have one distribution is given the corpus's mean exactly."""
    p = np.array([[0.6, 0.3, 0.1], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.2, 0.3, 0.5]])
    q = balance_pools(p, np.array([0, 0, 1, 1]))
    np.testing.assert_allclose(q, np.tile([0.4, 0.3, 0.3], (4, 1)), rtol=0, atol=1e-12)


def test_two_levels_closed_form_weights():
    """Two levels, pool {(0.8, 0.2), (0.6, 0.4)} taken to mean (0.5, 0.5): p' = w p / (w p + 1 - p) with one
    relative weight w per pool; p'_1 + p'_2 = 1 gives w^2 p1 p2 = (1 - p1)(1 - p2), w = sqrt(0.2 * 0.4 / (0.8 *
    0.6)) = 1/sqrt(6). The other pool is the mirror image."""
    p = np.array([[0.8, 0.2], [0.6, 0.4], [0.4, 0.6], [0.2, 0.8]])
    q = balance_pools(p, np.array([0, 0, 1, 1]))
    w = 1 / np.sqrt(6)
    expected = np.array([0.8 * w / (0.8 * w + 0.2), 0.6 * w / (0.6 * w + 0.4)])
    np.testing.assert_allclose(q[:2, 0], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(q[2:, 0], 1 - expected[::-1], rtol=0, atol=1e-12)  # the mirror pool


def test_one_pool_is_unchanged_and_input_is_not_modified():
    p = np.array([[0.7, 0.3], [0.1, 0.9]])
    before = p.copy()
    assert np.array_equal(balance_pools(p, np.array([3, 3])), p)
    balance_pools(p, np.array([0, 1]))
    assert np.array_equal(p, before)


def test_a_level_a_pool_never_used_stays_empty():
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    q = balance_pools(p, np.array([0, 0, 1, 1]))
    assert np.all(q[:2, 2] == 0)
    m = p.mean(axis=0)
    np.testing.assert_allclose(q[:2].mean(axis=0)[:2], m[:2] / m[:2].sum(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(q[2:].mean(axis=0), m, rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.integers(2, 5))
def test_balanced_pools_share_the_corpus_mean_and_keep_the_order(seed, n_pools, levels):
    rng = np.random.default_rng(seed)
    pools = np.repeat(np.arange(n_pools), 6)
    p = rng.dirichlet(np.ones(levels), size=len(pools))
    q = balance_pools(p, pools)
    np.testing.assert_allclose(q.sum(axis=1), 1, rtol=0, atol=1e-12)
    m = p.mean(axis=0)
    for g in range(n_pools):
        np.testing.assert_allclose(q[pools == g].mean(axis=0), m, rtol=0, atol=1e-9)
        # one weight per level and pool: the ratio of two levels changes by the same factor for every item
        r = (q[pools == g, 0] / q[pools == g, 1]) / (p[pools == g, 0] / p[pools == g, 1])
        np.testing.assert_allclose(r, r[0], rtol=1e-9)


@pytest.mark.parametrize("bad", [{"probs": np.ones(3), "pools": np.zeros(3)},
                                 {"probs": np.ones((3, 2)) / 2, "pools": np.zeros(2)}])
def test_balance_pools_says_what_shapes_are_allowed(bad):
    with pytest.raises(DialevalError, match="allowed are probs"):
        balance_pools(bad["probs"], bad["pools"])


@pytest.mark.parametrize("kwargs,match", [({"tol": -1}, "tol = -1 is not allowed"),
                                          ({"max_iter": 0.5}, "max_iter = 0.5 is not allowed; allowed are integers")])
def test_tolerance_and_iterations_are_checked(kwargs, match):
    with pytest.raises(DialevalError, match=match):
        balance_pools(np.ones((2, 2)) / 2, np.array([0, 1]), **kwargs)


@pytest.mark.parametrize("row,why", [([0.0, 0.0], "all-zero distribution; at least one bin must be positive"),
                                     ([1.5, -0.5], "value -0.5 is not allowed; allowed are finite numbers >= 0"),
                                     ([np.nan, 1.0], "value nan is not allowed; allowed are finite numbers >= 0"),
                                     ([0.3, 0.3], "sums to 0.6; allowed are distributions summing to 1")])
def test_rows_must_be_distributions(row, why):
    with pytest.raises(DialevalError, match=r"row 1 of probs, \[.*\][,:] " + re.escape(why)):
        balance_pools(np.array([[0.5, 0.5], row]), np.array([0, 1]))


def _two_pool_corpus() -> Corpus:
    """Two pools of two annotators each, two dialogues per pool, one labelled turn each; pool X says 'bad'
    more often than pool Y on the same turns (its means: X (0.5, 0.5), Y (0.75, 0.25))."""
    scale = Scale("q", ("good", "bad"), "ordinal", "turn")

    def dialogue(i: str, text: str, labels: list[str], who: list[str]) -> Dialogue:
        return Dialogue(i, [Turn("user", ["hi"]), Turn("system", [text], {"q": labels}, who)])

    return Corpus([dialogue("x1", "fine thanks", ["good", "bad"], ["a", "b"]),
                   dialogue("x2", "what?", ["good", "bad"], ["b", "a"]),
                   dialogue("y1", "fine thanks", ["good", "good"], ["c", "d"]),
                   dialogue("y2", "what?", ["good", "bad"], ["d", "c"])], {"q": scale})


def test_targets_are_balanced_only_when_asked():
    c = _two_pool_corpus()
    table = TurnTable.from_corpus(c, senders=None)
    kept = scale_targets(c, table, labelled_scales_of(c))["q"]
    assert kept.probs.tolist() == [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]
    bal = scale_targets(c, table, labelled_scales_of(c), balance=True)["q"]
    # closed form: the corpus's mean is (0.625, 0.375); pool X's two equal items become it; in pool Y the
    # item (1, 0) stays, so the other becomes (0.25, 0.75) for the pool's mean to be (0.625, 0.375)
    np.testing.assert_allclose(bal.probs, [[0.625, 0.375], [0.625, 0.375], [1.0, 0.0], [0.25, 0.75]],
                               rtol=0, atol=1e-10)
    assert np.array_equal(bal.votes, kept.votes) and np.array_equal(bal.rows, kept.rows)


@pytest.mark.filterwarnings("ignore::dialeval.models.leakage.RepeatedDialoguesWarning")  # made-up copies
@pytest.mark.parametrize("kind", ["uniform", "prior", "position", "linear"])
def test_every_kind_takes_pools_and_saves_it(kind, tmp_path):
    model = train(_two_pool_corpus(), kind=kind, params={"pools": "balance"}, out=tmp_path / "m")
    assert Estimator.load(tmp_path / "m").params["pools"] == "balance" == model.params["pools"]


@pytest.mark.filterwarnings("ignore::dialeval.models.leakage.RepeatedDialoguesWarning")  # made-up copies
def test_prior_is_unchanged_by_balancing():
    """Balancing keeps the corpus's mean, which is what the prior predicts."""
    c = _two_pool_corpus()
    keep = kind_class("prior")(progress=False).fit(c).predict(c).turns["q"][1]
    bal = kind_class("prior")(progress=False, pools="balance").fit(c).predict(c).turns["q"][1]
    np.testing.assert_allclose(bal, keep, rtol=0, atol=1e-12)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_pools_says_what_is_allowed(bad):
    with pytest.raises(DialevalError, match="pools = .* is not allowed; allowed are " + ", ".join(POOLS)):
        kind_class("linear")(pools=bad)


def test_dbdc3_dev_has_two_pools_that_share_no_one(shared_data, tmp_path):
    """The module's example, from the raw files: CIC and YI are labelled by one pool, IRIS and TickTock by
    another (a few dialogues of each, copied)."""
    for folder in ("CIC_115", "IRIS_100", "TKTK_100", "YI_100"):
        (tmp_path / folder).mkdir()
        for f in sorted(shared_data("dbdc3", "en", "dev", folder).glob("*.log.json"))[:15]:
            shutil.copy(f, tmp_path / folder / f.name)
    corpus = dialeval.read_corpus(tmp_path)
    items = [(d.id, t) for d in corpus.dialogues for t in d.turns if t.labels.get("breakdown")]
    pools = annotator_pools([t.annotators for _, t in items])
    by_bot: dict[str, set[int]] = {}
    for (i, _), g in zip(items, pools.tolist(), strict=True):
        by_bot.setdefault(i[:2].upper(), set()).add(g)  # CIC0003, iris_00014, ticktock_00003, YI0001
    assert {k: len(v) for k, v in by_bot.items()} == {"CI": 1, "IR": 1, "TI": 1, "YI": 1}
    assert by_bot["CI"] == by_bot["YI"] and by_bot["IR"] == by_bot["TI"] and by_bot["CI"] != by_bot["IR"]
