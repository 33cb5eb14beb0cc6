"""``min_share``, the parameter every kind takes: bins below it emptied (half an annotator's share with "auto")."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dialeval.errors import DialevalError
from dialeval.models.base import Estimator, kind_class, sparsify
from dialeval.models.baselines import Prior

# The tiny corpus's training means (tests/models/test_baselines.py's TINY_MEAN, worked out by hand), each item
# labelled by 2 annotators, so "auto" empties the bins below 1 / (2 * 2) = 0.25 and rescales the rest.
TINY_AUTO = {
    "A": [0.5 / (5 / 6), 0.0, 0.0, 0.0, (1 / 3) / (5 / 6)],  # 1/6 and the two empty bins go
    "S": [0.0, 0.0, 1.0, 0.0, 0.0],  # only 1/3 is >= 0.25
    "E": [0.0, 0.5, 0.0, 0.0, 0.5],
    "customer": [0.5 / 0.875, 0.0, 0.0, 0.375 / 0.875],
    "helpdesk": [0.25, 0.5, 0.25],  # 0.25 itself is kept
}


def test_sparsify_by_hand():
    p = np.array([[0.01, 0.49, 0.5], [0.2, 0.3, 0.5], [0.3, 0.3, 0.4]])
    out = sparsify(p, 0.35)
    np.testing.assert_allclose(out, [[0, 0.49 / 0.99, 0.5 / 0.99], [0, 0, 1], [0, 0, 1]], rtol=0, atol=1e-16)
    np.testing.assert_allclose(sparsify(p, 0.05)[0], [0, 0.49 / 0.99, 0.5 / 0.99], rtol=0, atol=1e-16)
    assert sparsify(p, 0.0) is p  # off: the same array


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 5)), elements=st.floats(1e-6, 1.0)),
       st.floats(0.0, 0.49))
def test_sparsify_properties(raw, share):
    p = raw / raw.sum(axis=1, keepdims=True)
    out = sparsify(p, share)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(out[(p < share) & (p < p.max(axis=1, keepdims=True))] == 0)  # below the share and not the top
    kept = out > 0
    assert np.all(kept[p == p.max(axis=1, keepdims=True)])  # a row's largest bin is always kept
    for r in range(len(p)):  # the kept bins keep their ratios
        k = kept[r]
        np.testing.assert_allclose(out[r, k], p[r, k] / p[r, k].sum(), rtol=1e-12, atol=0)


def test_auto_empties_bins_below_half_a_vote(tiny, tmp_path):
    model = Prior(min_share="auto").fit(tiny)
    assert model.shares == dict.fromkeys(("A", "S", "E", "nugget_customer", "nugget_helpdesk"), 0.25)
    p = model.predict(tiny)
    for k in "ASE":
        for row in p.quality[k]:
            np.testing.assert_allclose(row, TINY_AUTO[k], rtol=0, atol=1e-6)  # the 1e-6 floor, then emptied
            assert np.all(row[np.array(TINY_AUTO[k]) == 0] == 0)  # exactly 0: the measures see an empty bin
    np.testing.assert_allclose(p.customer, np.tile(TINY_AUTO["customer"], (4, 1)), rtol=0, atol=1e-6)
    np.testing.assert_allclose(p.helpdesk, np.tile(TINY_AUTO["helpdesk"], (2, 1)), rtol=0, atol=1e-6)
    model.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["params"]["min_share"] == "auto" and meta["min_shares"]["A"] == 0.25
    again = Estimator.load(tmp_path / "m").predict(tiny)
    for k in "ASE":
        assert np.array_equal(again.quality[k], p.quality[k])
    assert np.array_equal(again.customer, p.customer)


def test_a_number_and_the_default(tiny):
    plain = Prior().fit(tiny)
    assert plain.params["min_share"] == 0.0 and plain.shares == dict.fromkeys(plain.learnt, 0.0)
    fixed = Prior(min_share=0.2).fit(tiny).predict(tiny)
    np.testing.assert_allclose(fixed.quality["S"][0], sparsify(plain.predict(tiny).quality["S"][:1], 0.2)[0],
                               rtol=0, atol=0)


def test_models_saved_before_min_share_load_unchanged(tiny, tmp_path):
    model = Prior().fit(tiny)
    model.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "min_shares" not in meta
    del meta["params"]["min_share"]  # as a model saved before the parameter existed
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    old = Estimator.load(tmp_path / "m")
    assert old.shares == dict.fromkeys(old.learnt, 0.0)
    assert np.array_equal(old.predict(tiny).quality["A"], model.predict(tiny).quality["A"])


@pytest.mark.parametrize("kind", ["uniform", "prior", "linear", "neural"])
@pytest.mark.parametrize("value", [0.5, -0.1, float("nan"), "half", True])
def test_every_kind_checks_it(kind, value):
    with pytest.raises(DialevalError, match=rf"{kind}: min_share = .* is not allowed; allowed are 'auto' \(half "
                                            r"an annotator's share.*numbers 0 <= min_share < 0.5"):
        kind_class(kind)(min_share=value)


def test_a_saved_model_with_auto_but_no_shares_is_an_error(tiny, tmp_path):
    Prior(min_share="auto").fit(tiny).save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    del meta["min_shares"]
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match="lists no min_shares per scale"):
        Estimator.load(tmp_path / "m")
    meta["min_shares"] = {"A": "auto"}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match=r"min_shares\['A'\] = 'auto' is not allowed; allowed are numbers"):
        Estimator.load(tmp_path / "m")
    meta["min_shares"] = {"A": 0.7}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match=r"min_shares\['A'\]: min_share = 0.7 is not allowed"):
        Estimator.load(tmp_path / "m")
    meta["min_shares"] = {"Z": 0.1}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match=r"min_shares .* is not allowed; allowed is an object of the model's "
                                            r"scales \(A, S, E, nugget_customer, "
                                            r"nugget_helpdesk\) to numbers"):
        Estimator.load(tmp_path / "m")


def test_cli_train_with_auto_and_a_bad_value(tiny_gold, tmp_path, capsys):
    from dialeval.cli.main import run

    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(tiny_gold), encoding="utf-8")
    assert run(["train", str(gold), "--out", str(tmp_path / "m"), "--model", "prior", "--param", "min_share=auto"]) == 0
    assert json.loads((tmp_path / "m" / "model.json").read_text())["min_shares"]["A"] == 0.25
    capsys.readouterr()
    assert run(["train", str(gold), "--out", str(tmp_path / "bad"), "--model", "prior", "--param",
                "min_share=0.7"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: prior: min_share = 0.7 is not allowed; allowed are 'auto'")
    assert not (tmp_path / "bad").exists()
