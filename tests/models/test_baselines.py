"""uniform, prior and position: closed-form predictions, valid distributions, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval.errors import DialevalError
from dialeval.models.base import Estimator
from dialeval.models.baselines import Position, Prior, Uniform
from dialeval.models.data import TurnTable

FLOOR = 1e-6


def floored(row: list[float]) -> np.ndarray:
    """The documented floor of every prediction: clip at 1e-6, renormalise."""
    a = np.clip(np.array(row, dtype=np.float64), FLOOR, None)
    return a / a.sum()


# Training means of the tiny corpus (tests/conftest.py TINY_GOLD), worked out by hand from its labels:
# A: d1 {1, 2}, d2 {2, 2}, d3 {-2, -2} -> bins (2, 1, 0, -1, -2): ((.5 + 1) / 3, .5 / 3, 0, 0, 1 / 3)
TINY_MEAN = {
    "A": [0.5, 1 / 6, 0.0, 0.0, 1 / 3],
    "S": [1 / 6, 1 / 6, 1 / 3, 1 / 6, 1 / 6],  # d1 {0, 0}, d2 {1, 2}, d3 {-1, -2}
    "E": [1 / 6, 1 / 3, 0.0, 1 / 6, 1 / 3],  # d1 {-1, 1}, d2 {1, 2}, d3 {-2, -2}
    # customer turns: d1 t0 CNUG0 x2, d2 t0 CNUG0 x2, d2 t2 {CNUG*, CNaN}, d3 t0 CNaN x2
    "customer": [0.5, 0.0, 0.125, 0.375],
    # helpdesk turns: d1 t1 {HNUG, HNaN}, d2 t1 HNUG* x2
    "helpdesk": [0.25, 0.5, 0.25],
}


def test_uniform_is_one_over_l(tiny):
    p = Uniform().fit(tiny).predict(tiny)
    for k in "ASE":
        assert np.array_equal(p.quality[k], np.full((3, 5), 0.2))
    assert np.array_equal(p.customer, np.full((4, 4), 0.25))
    assert np.array_equal(p.helpdesk, np.full((2, 3), 1 / 3))


def test_prior_is_the_training_mean(tiny):
    p = Prior().fit(tiny).predict(tiny)
    for k in "ASE":
        for row in p.quality[k]:
            np.testing.assert_allclose(row, floored(TINY_MEAN[k]), rtol=0, atol=1e-15)
    for row in p.customer:
        np.testing.assert_allclose(row, floored(TINY_MEAN["customer"]), rtol=0, atol=1e-15)
    for row in p.helpdesk:
        np.testing.assert_allclose(row, floored(TINY_MEAN["helpdesk"]), rtol=0, atol=1e-15)


def test_prior_on_real_data_matches_the_mean_of_the_annotations(en60_records, en60):
    """Closed form, from the raw JSON labels (not from the model's code path)."""
    levels = ["2", "1", "0", "-1", "-2"]
    s_mean = np.zeros(5)
    cust = {"CNUG0": 0.0, "CNUG": 0.0, "CNUG*": 0.0, "CNaN": 0.0}
    n_cust = 0
    for rec in en60_records:
        anns = rec["annotations"]
        for a in anns:
            s_mean[levels.index(str(a["quality"]["S"]))] += 1 / len(anns) / len(en60_records)
        for t, turn in enumerate(rec["turns"]):
            if turn["sender"] == "customer":
                n_cust += 1
                for a in anns:
                    cust[a["nugget"][t]] += 1 / len(anns)
    p = Prior().fit(en60).predict(en60)
    np.testing.assert_allclose(p.quality["S"][0], floored(s_mean.tolist()), rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.customer[-1], floored([v / n_cust for v in cust.values()]), rtol=0, atol=1e-12)


def test_position_means_per_key_and_fallback(tiny):
    p = Position(min_turns=1).fit(tiny).predict(tiny)
    # customer turns in flat order: d1 t0 (0, not last), d2 t0 (0, not last), d2 t2 (2, last), d3 t0 (0, last)
    expected = [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0, 1]]
    for row, want in zip(p.customer, expected, strict=True):
        np.testing.assert_allclose(row, floored(want), rtol=0, atol=1e-15)
    # helpdesk: d1 t1 (1, last) {HNUG, HNaN}; d2 t1 (1, not last) HNUG* x2
    np.testing.assert_allclose(p.helpdesk, [floored([0.5, 0, 0.5]), floored([0, 1, 0])], rtol=0, atol=1e-15)
    # quality is the prior
    np.testing.assert_allclose(p.quality["A"][0], floored(TINY_MEAN["A"]), rtol=0, atol=1e-15)

    q = Position(min_turns=2).fit(tiny).predict(tiny)  # only (customer, 0, not last) has 2 turns
    want = [[1, 0, 0, 0], [1, 0, 0, 0], TINY_MEAN["customer"], TINY_MEAN["customer"]]
    for row, w in zip(q.customer, want, strict=True):
        np.testing.assert_allclose(row, floored(w), rtol=0, atol=1e-15)
    for row in q.helpdesk:
        np.testing.assert_allclose(row, floored(TINY_MEAN["helpdesk"]), rtol=0, atol=1e-15)


def test_position_clips_positions(tiny):
    """max_position=0: every customer turn of position >= 0 shares a key with its is_last flag."""
    p = Position(min_turns=1, max_position=0).fit(tiny).predict(tiny)
    # (0, last) now holds d2 t2 {CNUG*, CNaN} and d3 t0 CNaN x2
    np.testing.assert_allclose(p.customer[2], floored([0, 0, 0.25, 0.75]), rtol=0, atol=1e-15)
    np.testing.assert_allclose(p.customer[3], p.customer[2], rtol=0, atol=0)


@pytest.mark.parametrize("cls", [Uniform, Prior, Position])
@pytest.mark.parametrize("subtask", ["both", "quality", "nugget"])
def test_valid_and_save_load_identical(cls, subtask, en60, tiny, tmp_path, assert_valid):
    model = cls(subtask).fit(en60)
    records = assert_valid(model, en60)
    assert_valid(model, tiny)  # unseen dialogues
    loaded = Estimator.load(model.save(tmp_path / "m"))
    assert type(loaded) is cls and loaded.subtasks == model.subtasks and loaded.params == model.params
    assert loaded.predict(en60).to_records(TurnTable.from_corpus(en60)) == records


def test_parameters_are_checked():
    with pytest.raises(DialevalError, match=r"min_turns = 0 is not allowed; allowed are integers >= 1"):
        Position(min_turns=0)
    with pytest.raises(DialevalError, match="max_position = 'x' is not allowed"):
        Position(max_position="x")
    with pytest.raises(DialevalError, match="unknown parameter"):
        Prior(C=1)


def test_predict_before_fit_is_an_error(tiny):
    with pytest.raises(DialevalError, match="not fitted"):
        Prior().predict(tiny)


def test_training_on_a_subtask_with_an_unlabelled_item_names_the_dialogue(tiny):
    """Every dialogue (and every turn of a block's sender) must be labelled to learn a subtask: the error says
    which dialogue is not, and what is missing."""
    import dataclasses

    from dialeval.corpus import Corpus

    d0, d1, *rest = tiny.dialogues
    no_quality = Corpus([d0, dataclasses.replace(d1, labels={}), *rest], tiny.scales)
    with pytest.raises(DialevalError, match=rf"1 dialogue\(s\) have no quality annotations, e.g. \['{d1.id}'\]"):
        Prior("quality").fit(no_quality)
    turns = [dataclasses.replace(t, labels={}) if t.sender == "helpdesk" else t for t in d1.turns]
    no_nugget = Corpus([d0, dataclasses.replace(d1, turns=turns), *rest], tiny.scales)
    with pytest.raises(DialevalError, match=rf"1 dialogue\(s\) have helpdesk turns without nugget annotations, "
                                            rf"e.g. \['{d1.id}'\]"):
        Prior("nugget").fit(no_nugget)


def test_a_model_of_stc3_subtasks_refuses_a_sender_its_scales_do_not_label(tiny):
    """Every turn is an item of its sender's nugget scale: another sender is refused, located, naming the
    senders the subtasks' declared scales label."""
    import dataclasses

    from dialeval.corpus import Corpus

    model = Prior().fit(tiny)
    d0, *rest = tiny.dialogues
    odd = Corpus([dataclasses.replace(d0, turns=[dataclasses.replace(d0.turns[0], sender="agent"), *d0.turns[1:]]),
                  *rest], tiny.scales)
    with pytest.raises(DialevalError, match=r"turns\[0\]\.sender: sender 'agent' is not allowed; allowed are "
                                            r"customer, helpdesk"):
        model.predict(odd)
    assert TurnTable.from_corpus(odd, senders=None).senders[0] == "agent"  # any sender, when none is required
