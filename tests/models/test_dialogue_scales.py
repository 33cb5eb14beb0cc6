"""Dialogue-level scales outside STC-3 (DSTC9's ratings of whole dialogues, also in ConTurE): every model kind
learns them from the corpus model, predicts one distribution per dialogue, and the run scores.

Golden values are computed straight from the annotators' labels (the prior is their mean distribution over the
rated dialogues) or from the loss's definition on the labelled pairs, never from the code under test.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter

import numpy as np
import pytest

import dialeval
from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.models.base import Estimator
from dialeval.models.baselines import Prior
from dialeval.models.linear import Linear
from dialeval.models.neural import Neural, forward_numpy
from dialeval.models.neural.numpy_net import bins_mask
from dialeval.models.neural.torch_net import build_net, quality_loss
from dialeval.models.transfer import plan
from dialeval.models.turndata import labelled_scales_of

UNRATED = ("chatbot2-186", "error recovery")
"""A real DSTC9 dialogue with no rating on one dimension."""
SMALL = {"hidden": 16, "epochs": 2, "ensemble": 2, "batch_size": 8}


pytestmark = pytest.mark.usefixtures("_cache")  # a fresh embedding cache, one thread (conftest)


@pytest.fixture(scope="module")
def dstc9_dir(shared_data, tmp_path_factory):
    """One real DSTC9 file (chatbot2: 200 dialogues, one of them unrated on ``error recovery``) as a corpus."""
    folder = tmp_path_factory.mktemp("dstc9")
    shutil.copy(shared_data("dstc9", "chatbot2.json"), folder / "chatbot2.json")
    return folder


@pytest.fixture(scope="module")
def dstc9(dstc9_dir):
    return dialeval.read_corpus(dstc9_dir)


@pytest.fixture(scope="module")
def dstc9_short(dstc9):
    """24 short dialogues with the unrated one: quick to embed."""
    ids = [d.id for d in dstc9.dialogues if len(d.turns) <= 12][:23]
    return dstc9.subset(sorted({*ids, UNRATED[0]}, key=dstc9.ids().index))


def _label_mean(corpus, scale: str) -> np.ndarray:
    """The mean over rated dialogues of each dialogue's label distribution, counted from the labels."""
    levels = corpus.scales[scale].levels
    rows = []
    for d in corpus.dialogues:
        labels = [v for v in d.labels.get(scale, []) if v is not None]
        if labels:
            c = Counter(labels)
            rows.append([c[lv] / len(labels) for lv in levels])
    return np.mean(rows, axis=0)


def test_dialogue_scales_are_learnt(dstc9):
    scales = labelled_scales_of(dstc9)
    assert list(scales) == list(dstc9.scales)
    assert {s.level for s in scales.values()} == {"dialogue"} and all(s.senders == () for s in scales.values())


def test_prior_is_the_mean_over_rated_dialogues(dstc9):
    model = Prior().fit(dstc9)
    pred = model.predict(dstc9, check_training=False)
    for name, scale in dstc9.scales.items():
        rows, probs = pred.turns[name]
        assert rows.tolist() == list(range(len(dstc9))) and probs.shape == (len(dstc9), len(scale.levels))
        expected = np.clip(_label_mean(dstc9, name), 1e-6, None)
        np.testing.assert_allclose(probs[0], expected / expected.sum(), rtol=0, atol=1e-12)


def test_run_has_dialogue_scales_beside_id_and_scores(dstc9, tmp_path):
    model = Prior().fit(dstc9)
    loaded = Estimator.load(model.save(tmp_path / "m"))
    assert loaded.learnt == model.learnt
    records = dialeval.models.run_records(dstc9, loaded, check_training=False)
    assert len(records) == len(dstc9) and all(r["turns"] == [] for r in records)
    first = records[0]
    assert next(iter(first)) == "id" and list(first)[-1] == "turns"
    assert set(first["human (overall)"]) == {"1", "2", "3", "4", "5"}
    scores = dialeval.evaluate(records, dstc9)
    assert set(scores["scales"]) == set(dstc9.scales)
    assert {"jsd", "nmd", "rsnod"} <= set(scores["scales"]["likeable"])


def test_linear_fits_dialogue_scales(dstc9_short):
    model = Linear(max_features=2000).fit(dstc9_short)
    pred = model.predict(dstc9_short, check_training=False)
    assert set(pred.turns) == set(dstc9_short.scales)
    assert pred.turns["consistent"][1].shape == (len(dstc9_short), 2)


def test_pooled_heads_of_different_widths_match_torch():
    """Scales of 2, 3 and 5 levels share the pooled head: numpy equals PyTorch, bins past a width get 0."""
    import torch

    torch.manual_seed(0)
    widths = [2, 3, 5]
    net = build_net(12, 8, 0.0, (), (3, 5), widths).eval()
    rng = np.random.default_rng(1)
    lengths = np.array([1, 4, 3])
    X = rng.normal(size=(3, 4, 12)).astype(np.float32)
    mask = np.arange(4)[None, :] < lengths[:, None]
    X[~mask] = 0
    with torch.no_grad():
        (q,) = net(torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(lengths))
    w = {k: v.numpy() for k, v in net.state_dict().items()}
    out = forward_numpy(w, X, mask, [], 3, widths)["pooled"]
    np.testing.assert_allclose(out, torch.softmax(q, -1).numpy(), atol=1e-5)
    assert np.all(out[:, 0, 2:] == 0) and np.all(out[:, 1, 3:] == 0) and np.all(out[:, 2] > 0)
    np.testing.assert_allclose(out.sum(-1), 1, atol=1e-12)
    assert np.array_equal(bins_mask([2, 3], 3) < 0, [[False, False, True], [False, False, False]])


def test_masked_loss_is_the_mean_over_rated_pairs():
    import torch

    rng = np.random.default_rng(2)
    logits = torch.from_numpy(rng.normal(size=(4, 2, 3)))
    target = torch.from_numpy(rng.dirichlet(np.ones(3), size=(4, 2)))
    mask = torch.tensor([[True, False], [True, True], [False, True], [True, True]])
    w = 0.7
    terms = []
    for i, k in zip(*np.nonzero(mask.numpy()), strict=True):
        p = torch.softmax(logits[i, k], -1).numpy()
        q = target[i, k].numpy()
        terms.append(-(q * np.log(p)).sum() + w * ((np.cumsum(p) - np.cumsum(q)) ** 2).sum())
    assert float(quality_loss(logits, target, w, mask)) == pytest.approx(np.mean(terms), rel=1e-12)
    full = torch.ones_like(mask)
    assert float(quality_loss(logits, target, w, full)) == pytest.approx(float(quality_loss(logits, target, w)),
                                                                          rel=1e-12)


def test_neural_on_dialogue_scales_of_different_widths(dstc9_short, tmp_path):
    model = Neural(progress=False, **SMALL).fit(dstc9_short)
    assert model.context == "dialogue" and not model.dialogue_members
    pred = model.predict(dstc9_short, check_training=False)
    for name, scale in dstc9_short.scales.items():
        probs = pred.turns[name][1]
        assert probs.shape == (len(dstc9_short), len(scale.levels))
        np.testing.assert_allclose(probs.sum(1), 1, atol=1e-12)
    again = Estimator.load(model.save(tmp_path / "m")).predict(dstc9_short, check_training=False)
    for name in dstc9_short.scales:
        np.testing.assert_allclose(again.turns[name][1], pred.turns[name][1], rtol=0, atol=1e-12)


def test_unrated_dialogue_is_left_out_of_training(dstc9_short):
    """The network trains on the rated (dialogue, scale) pairs only: the mask, not a zero target."""
    model = Neural(progress=False, **SMALL)
    captured = {}

    def keep(table, y, scales):
        captured["y"] = y
        return Neural._fit_whole(model, table, y, scales)

    model._fit_whole = keep
    model.fit(dstc9_short)
    rows = captured["y"][UNRATED[1]].rows
    assert len(rows) == len(dstc9_short) - 1
    assert dstc9_short.ids().index(UNRATED[0]) not in rows.tolist()


def test_conture_turn_and_dialogue_scales_in_one_neural_model(shared_data, tmp_path):
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    corpus = conture.subset(conture.ids()[:12])
    model = Neural(progress=False, **SMALL).fit(corpus)
    assert model.context == "past" and len(model.dialogue_members) == SMALL["ensemble"]
    records = dialeval.models.run_records(corpus, model, check_training=False)
    assert "likeable" in records[0] and "overall impression" in records[0]["turns"][0]
    loaded = Estimator.load(model.save(tmp_path / "m"))
    assert dialeval.models.run_records(corpus, loaded, check_training=False) == records
    scores = dialeval.evaluate(records, corpus)
    assert "human (overall)" in scores["scales"] and "overall impression" in scores["scales"]


def test_a_dialogue_scale_model_on_other_corpora(dstc9, shared_data):
    model = Prior().fit(dstc9)
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    assert set(plan(conture, model)) == set(dstc9.scales)  # its ratings; ConTurE's turn scale is not one of them
    dbdc = dialeval.read_corpus(shared_data("dbdc3", "en", "eval", "IRIS_50"))
    with pytest.raises(DialevalError, match=r"'breakdown'.*knows none of them"):
        plan(dbdc, model)


def test_cv_folds_score_dialogue_scales(dstc9):
    from dialeval.models.cv import cross_validate

    result = cross_validate(dstc9, "prior", folds=3, progress=False)
    assert any(c.startswith("human (overall)/") for c in result.columns)
    assert sum(result.sizes) == len(dstc9)


def test_cli_train_predict_evaluate(dstc9_dir, tmp_path, capsys):
    assert run(["train", str(dstc9_dir), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    assert "scales consistent, likeable" in capsys.readouterr().err
    assert run(["predict", str(dstc9_dir), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "run.json")]) == 0
    assert "scales consistent, likeable" in capsys.readouterr().err
    assert run(["evaluate", str(tmp_path / "run.json"), str(dstc9_dir), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "likeable" in json.loads(captured.out)["scales"]
    assert f"{UNRATED[0]}:{UNRATED[1]}" in captured.err  # predicted, no rating: said, not scored


def test_cli_turn_scores_of_a_ratings_model_is_a_one_line_error(dstc9_dir, tmp_path, capsys):
    assert run(["train", str(dstc9_dir), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    code = run(["predict", str(dstc9_dir), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "run.json"),
                "--scores", str(tmp_path / "scores.json")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "scores.json").exists()
    assert not (tmp_path / "run.json").exists()  # refused before anything is written
    line = next(x for x in err.splitlines() if x.startswith("error:"))
    assert "no turn-level scale ordered from good to bad" in line and "human (overall)" in line


def test_cli_cv_prints_many_scales_as_a_row_each(dstc9_dir, capsys):
    """44 score columns (11 ratings x 4 measures): the table is transposed, a row per scale and measure."""
    assert run(["cv", str(dstc9_dir), "--model", "prior", "--model", "uniform", "--folds", "3",
                "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "| fold | 1 | 2 | 3 | mean | 95% CI |" in out.replace("  ", " ")
    assert "| model | prior | uniform |" in out.replace("  ", " ")
    rows = [x for x in out.splitlines() if x.startswith("| human (overall) NMD")]
    assert len(rows) == 3  # prior's table, uniform's, the summary
    assert "mean column are totals" in out
