"""linear: soft-label logistic regression on TF-IDF character n-grams; fit, predict, save/load, seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import dialeval
from dialeval.errors import DialevalError
from dialeval.models.base import Estimator
from dialeval.models.baselines import Prior
from dialeval.models.data import TurnTable
from dialeval.models.linear import ANALYZERS, Linear, _clean, _neighbours, _SoftLR, _Tfidf


@pytest.fixture(scope="module")
def fitted(en60):
    return Linear(seed=3).fit(en60)


def test_valid_distributions_on_real_and_unseen_dialogues(fitted, en60, tiny, assert_valid):
    assert_valid(fitted, en60)
    assert_valid(fitted, tiny)


def test_save_load_identical(fitted, en60, tmp_path):
    folder = fitted.save(tmp_path / "linear")
    meta = json.loads((folder / "model.json").read_text())
    assert meta["kind"] == "linear" and meta["params"]["C"] == 8.0
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:  # no object arrays anywhere
        assert all(z[k].dtype != object for k in z.files)
    loaded = Estimator.load(folder)
    a, b = fitted.predict(en60), loaded.predict(en60)
    for k in "ASE":
        assert np.array_equal(a.quality[k], b.quality[k])
    assert np.array_equal(a.customer, b.customer) and np.array_equal(a.helpdesk, b.helpdesk)


def test_seeded_fit_is_reproducible(fitted, en60):
    again = Linear(seed=3).fit(en60).predict(en60)
    first = fitted.predict(en60)
    assert np.array_equal(first.customer, again.customer) and np.array_equal(first.quality["E"], again.quality["E"])


def test_learns_more_than_the_prior_in_sample(fitted, en60):
    table = TurnTable.from_corpus(en60)
    lin = dialeval.evaluate(fitted.predict(en60).to_records(table), en60)
    pri = dialeval.evaluate(Prior().fit(en60).predict(en60).to_records(table), en60)
    assert lin["nugget"]["jsd"] < pri["nugget"]["jsd"]
    assert lin["quality"]["nmd"]["A"] < pri["quality"]["nmd"]["A"]


def test_class_never_seen_keeps_a_small_positive_probability(tiny, assert_valid):
    """No tiny turn is CNUG: its probability is the floor, and the other bins carry the rest."""
    model = Linear(subtask="nugget").fit(tiny)
    p = model.predict(tiny)
    assert np.all(p.customer[:, 1] > 0) and np.all(p.customer[:, 1] < 1e-5)
    assert_valid(model, tiny)


def test_soft_labels_not_majority_labels():
    """Identical items labelled 70/30 by annotators: the fit recovers about 0.7/0.3, not 1/0."""
    X = sp.csr_matrix(np.ones((10, 1)))
    P = np.tile([0.7, 0.3, 0.0], (10, 1))
    p = _SoftLR.fit(X, P, C=1e4, max_iter=500, seed=0).predict(X)
    np.testing.assert_allclose(p[0], [0.7, 0.3, 0.0], atol=2e-3)


def test_one_class_only_predicts_it():
    X = sp.csr_matrix(np.eye(3))
    p = _SoftLR.fit(X, np.tile([0.0, 1.0], (3, 1)), C=1.0, max_iter=10, seed=0).predict(X)
    assert np.all(p[:, 1] > 0.99) and np.all(p[:, 0] > 0)


def test_neighbours_are_the_adjacent_turns_of_the_same_dialogue(tiny):
    table = TurnTable.from_corpus(tiny)  # turns: d1 (0, 1), d2 (2, 3, 4), d3 (5)
    M = sp.csr_matrix(np.arange(1, 7, dtype=float)[:, None])
    prev, nxt = _neighbours(table, M)
    assert prev.toarray().ravel().tolist() == [0, 1, 0, 3, 4, 0]
    assert nxt.toarray().ravel().tolist() == [2, 0, 4, 5, 0, 0]


@pytest.mark.parametrize("subtask", ["quality", "nugget"])
def test_one_subtask(subtask, en60, assert_valid):
    model = Linear(subtask, max_features=2000, context_weight=0).fit(en60)
    assert model.subtasks == (subtask,)
    assert_valid(model, en60)


@pytest.mark.filterwarnings("ignore::dialeval.models.leakage.RepeatedDialoguesWarning")  # made-up copies
def test_chinese_text_and_char_analyzer(assert_valid):
    t = lambda s, u: {"sender": s, "utterances": [u]}  # noqa: E731
    data = [{"id": str(i),
             "turns": [t("customer", "我的宽带坏了" if i % 2 else "话费多扣了"), t("helpdesk", "您好，已处理")],
             "annotations": [{"quality": {"A": i % 2, "S": 0, "E": 1},
                              "nugget": ["CNUG0", "HNUG" if i % 2 else "HNaN"]}]} for i in range(8)]
    corpus = dialeval.read_corpus(data)
    assert_valid(Linear(analyzer="char", ngram_max=2).fit(corpus), corpus)


@pytest.mark.parametrize(("params", "message"), [
    ({"C": 0}, r"C = 0 is not allowed; allowed are numbers >= 1e-09"),
    ({"analyzer": "word"}, r"analyzer = 'word' is not allowed; allowed are char_wb, char"),
    ({"ngram_max": 2.5}, r"ngram_max = 2.5 is not allowed; allowed are integers >= 1 and <= 6"),
    ({"max_features": True}, r"max_features = True is not allowed"),
    ({"alpha": 1}, r"unknown parameter\(s\) alpha"),
])
def test_bad_parameters(params, message):
    with pytest.raises(DialevalError, match=message):
        Linear(**params)


# -- the TF-IDF transform from stored arrays against scikit-learn's (the independent reference) ---------------

_TEXT = st.text(alphabet="abAB  cC\t\n\u3000\u2028\x1c\x85\x00\ud800İẞǅ我的宽带xyz.,!", max_size=40)


def _sklearn_rows(tfidf, texts):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer=tfidf.analyzer, ngram_range=(1, tfidf.ngram_max), sublinear_tf=True,
                          vocabulary={t: i for i, t in enumerate(tfidf.terms.tolist())}, dtype=np.float64)
    vec.idf_ = tfidf.idf
    return vec.transform(_clean(texts)).tocsr()


@settings(max_examples=60, deadline=None)
@given(fit=st.lists(_TEXT, min_size=1, max_size=12), apply=st.lists(_TEXT, max_size=12),
       analyzer=st.sampled_from(ANALYZERS), ngram_max=st.integers(1, 4))
def test_tfidf_transform_is_scikit_learns_to_the_last_bit(fit, apply, analyzer, ngram_max):
    """The same n-grams (lowercasing that lengthens a text, every kind of whitespace, NUL, CJK, words shorter
    than n), the same counts, idf and norms, bit for bit; n-grams of 4 go through scikit-learn itself."""
    if not any(t.strip() for t in _clean(fit)):  # as the fitter sees them (a NUL is a space): no n-gram at all
        fit = [*fit, "a"]
    tfidf, _ = _Tfidf.fit(fit, analyzer, ngram_max, max_features=50)
    texts = fit + apply
    ours, ref = tfidf.transform(texts), _sklearn_rows(tfidf, texts)
    assert ours.shape == ref.shape == (len(texts), len(tfidf.terms))
    assert np.array_equal(ours.indptr, ref.indptr) and np.array_equal(ours.indices, ref.indices)
    assert np.array_equal(ours.data, ref.data)


def test_tfidf_transform_on_real_turns_is_scikit_learns(en60):
    texts = TurnTable.from_corpus(en60).texts
    for analyzer in ANALYZERS:
        tfidf, fitted = _Tfidf.fit(texts[:200], analyzer, 3, max_features=3000)
        ours, ref = tfidf.transform(texts), _sklearn_rows(tfidf, texts)
        assert ours.nnz > 10 * len(texts)
        assert (ours != ref).nnz == 0 and np.array_equal(ours.data, ref.data)
        # as fit_transform gave them, to rounding: it sums a row's squares in another order (columns unsorted)
        again = tfidf.transform(texts[:200])
        assert np.array_equal(again.indices, fitted.sorted_indices().indices)
        np.testing.assert_allclose(again.data, fitted.sorted_indices().data, rtol=1e-14, atol=0)


@pytest.mark.parametrize("texts", [[], [""], ["  ", "\t"], ["\x00"]])
def test_tfidf_transform_of_no_n_gram_at_all(texts):
    tfidf, _ = _Tfidf.fit(["ab c"], "char_wb", 3, max_features=50)
    X = tfidf.transform(texts)
    assert X.shape == (len(texts), len(tfidf.terms)) and X.nnz == 0


def test_a_term_no_text_can_produce_never_matches():
    """A term of a loaded model longer than the coded n-grams (or empty) cannot alias a shorter one."""
    tfidf = _Tfidf("char", 3, np.array(["abcd", "", "ab"]), np.ones(3))
    assert tfidf.transform(["abc"]).toarray().tolist() == [[0.0, 0.0, 1.0]]
