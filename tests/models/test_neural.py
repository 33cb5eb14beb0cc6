"""The neural kind: the numpy forward pass equals PyTorch's, save/load and seeds reproduce, predictions score."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval.errors import DialevalError
from dialeval.models.base import Estimator
from dialeval.models.data import TurnTable
from dialeval.models.neural import Neural, forward_numpy
from dialeval.models.neural.inputs import padded
from dialeval.models.neural.torch_net import build_net

SMALL = {"hidden": 16, "epochs": 3, "ensemble": 2, "batch_size": 16}


@pytest.fixture(autouse=True, scope="module")
def _cache(tmp_path_factory: pytest.TempPathFactory):
    """Embeddings cached in a fresh folder for this module (set before the module's model is trained)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIALEVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def fitted(_cache, en60) -> Neural:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIALEVAL_THREADS", "1")  # members one after the other in this process
        return Neural(seed=3, progress=False, **SMALL).fit(en60)


def test_numpy_forward_equals_torch_on_ragged_batches():
    """An independent implementation (PyTorch's packed GRU) is the reference for the numpy pass."""
    import torch

    torch.manual_seed(0)
    net = build_net(12, 8, 0.0).eval()
    rng = np.random.default_rng(0)
    lengths = np.array([1, 4, 2, 5, 3])
    X = rng.normal(size=(5, 5, 12)).astype(np.float32)
    mask = np.arange(5)[None, :] < lengths[:, None]
    X[~mask] = 0
    with torch.no_grad():
        q, c, h = net(torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(lengths))
    w = {k: v.numpy() for k, v in net.state_dict().items()}
    out = forward_numpy(w, X, mask, ["heads.0", "heads.1"], 3)
    np.testing.assert_allclose(out["pooled"], torch.softmax(q, -1).numpy(), atol=1e-5)
    np.testing.assert_allclose(out["heads.0"][mask], torch.softmax(c, -1).numpy()[mask], atol=1e-5)
    np.testing.assert_allclose(out["heads.1"][mask], torch.softmax(h, -1).numpy()[mask], atol=1e-5)


def test_numpy_forward_equals_torch_with_a_panel():
    """Pooled heads of a 3-annotator panel (two scales of 4 and 3 levels), a turn head of a 2-annotator panel and
    one of the crowd: the numpy mean of the annotators' distributions equals PyTorch's."""
    import torch

    torch.manual_seed(1)
    net = build_net(12, 8, 0.0, pooled=(2, 4), pooled_widths=[4, 3], panel=3, turn_panels=(2, 1)).eval()
    rng = np.random.default_rng(1)
    lengths = np.array([2, 5, 1])
    X = rng.normal(size=(3, 5, 12)).astype(np.float32)
    mask = np.arange(5)[None, :] < lengths[:, None]
    X[~mask] = 0
    with torch.no_grad():
        q, c, h = net(torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(lengths))
    assert tuple(q.shape) == (3, 2, 3, 4) and tuple(c.shape) == (3, 5, 2, 4) and tuple(h.shape) == (3, 5, 3)
    w = {k: v.numpy() for k, v in net.state_dict().items()}
    out = forward_numpy(w, X, mask, ["heads.0", "heads.1"], 2, [4, 3], panel=3, turn_panels=[2, 1])
    np.testing.assert_allclose(out["pooled"], torch.softmax(q, -1).mean(2).numpy(), atol=1e-5)
    np.testing.assert_allclose(out["heads.0"][mask], torch.softmax(c, -1).mean(2).numpy()[mask], atol=1e-5)
    np.testing.assert_allclose(out["heads.1"][mask], torch.softmax(h, -1).numpy()[mask], atol=1e-5)
    assert np.all(out["pooled"][:, 1, 3] < 1e-12)  # the 3-level scale's 4th bin


def test_panel_heads_learn_each_annotator_unless_pooled(fitted, en60, tmp_path):
    """STC-3 lists its 19 annotators in one order: by default the quality and nugget heads predict each one's
    labels (saved as ``panel`` and ``turn_panels``, reloaded); ``annotators="pooled"``: the crowd's directly."""
    config, arrays = fitted._state()
    assert fitted.panel == config["panel"] == 19
    assert config["turn_panels"] == {"nugget_customer": 19, "nugget_helpdesk": 19}
    assert arrays["m0/qual_out.weight"].shape[0] == 3 * 5 * 19 and arrays["m0/cust.weight"].shape[0] == 4 * 19
    fitted.save(tmp_path / "m")
    loaded = Estimator.load(tmp_path / "m")
    assert loaded.panel == 19 and loaded.turn_panels == config["turn_panels"]
    pooled = Neural(seed=3, progress=False, annotators="pooled", **{**SMALL, "ensemble": 1}).fit(en60)
    assert pooled.panel == 1 and not pooled.turn_panels
    assert "panel" not in pooled._state()[0] and "turn_panels" not in pooled._state()[0]
    assert pooled.members[0]["qual_out.weight"].shape[0] == 3 * 5 and pooled.members[0]["cust.weight"].shape[0] == 4


def test_targets_follow_the_corpus_order_when_ids_repeat(en60):
    """Files trained on together share ids (STC-3's translations): row i holds dialogue i's own labels, each
    annotator's (the panel) and the crowd's."""
    import dataclasses

    from dialeval.corpus import Corpus
    from dialeval.models.turndata import scale_targets, scales_to_learn

    flipped = [dataclasses.replace(d, labels={**d.labels, "A": d.labels["A"][::-1]}) for d in en60.dialogues[:3]]
    joint = Corpus(en60.dialogues[:3] + flipped, en60.scales)
    assert len(set(joint.ids())) == 3
    got = scale_targets(joint, TurnTable.from_corpus(joint), scales_to_learn(joint, ("quality",)))["A"]
    levels = en60.scales["A"].levels
    assert got.rows.tolist() == list(range(6))
    for row, d in enumerate(joint.dialogues):
        assert got.panel[row].tolist() == [levels.index(v) for v in d.labels["A"]]


def test_targets_of_a_crowd_scale_follow_the_corpus_order_when_ids_repeat():
    """A dialogue-level scale outside STC-3's subtasks (DSTC9's ratings): rows by position, not by id."""
    from dialeval.corpus import Corpus, Dialogue, Scale, Turn
    from dialeval.models.turndata import labelled_scales_of, scale_targets

    s = Scale("r", ("1", "2", "3"), "ordinal", "dialogue")
    c = Corpus([Dialogue("x", [Turn("u", ["a"])], {"r": ["1"]}), Dialogue("x", [Turn("u", ["b"])]),
                Dialogue("x", [Turn("u", ["c"])], {"r": ["3", "3"]})], {"r": s})
    got = scale_targets(c, TurnTable.from_corpus(c, senders=None), labelled_scales_of(c))["r"]
    assert got.rows.tolist() == [0, 2]
    assert got.probs.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert got.panel is None  # no panel declared


def test_fit_predict_scores(fitted, en60, assert_valid):
    records = assert_valid(fitted, en60)
    assert len(records) == 60 and all("quality" in r and "nugget" in r for r in records)


def test_save_load_identical(fitted, en60, tmp_path):
    folder = fitted.save(tmp_path / "m")
    loaded = Estimator.load(folder)
    assert isinstance(loaded, Neural) and loaded.params == fitted.params
    for wa, wb in zip(fitted.members, loaded.members, strict=True):
        assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)
    table = TurnTable.from_corpus(en60)
    a, b = fitted.predict(table), loaded.predict(table)
    assert a.to_records(table) == b.to_records(table)  # the files written are identical
    np.testing.assert_allclose(a.customer, b.customer, rtol=0, atol=1e-12)


def test_seeded_training_reproducible(fitted, en60):
    again = Neural(seed=3, progress=False, **SMALL).fit(en60)
    other = Neural(seed=4, progress=False, **SMALL).fit(en60)
    for wa, wb in zip(fitted.members, again.members, strict=True):  # training is bit-reproducible
        assert all(np.array_equal(wa[k], wb[k]) for k in wa)
    table = TurnTable.from_corpus(en60)
    assert again.predict(table).to_records(table) == fitted.predict(table).to_records(table)
    assert not np.allclose(other.predict(table).customer, fitted.predict(table).customer)


def test_same_members_in_parallel_processes(fitted, en60, monkeypatch):
    monkeypatch.setenv("DIALEVAL_THREADS", "2")  # the two members train in two spawned processes
    parallel = Neural(seed=3, progress=False, **SMALL).fit(en60)
    for wa, wb in zip(fitted.members, parallel.members, strict=True):
        assert all(np.array_equal(wa[k], wb[k]) for k in wa)


def test_one_subtask(en60, tiny, assert_valid):
    m = Neural(subtask="nugget", progress=False, **SMALL).fit(en60)
    pred = m.predict(tiny)
    assert pred.quality is None and pred.customer is not None
    assert_valid(m, tiny)


def test_padding_layout(tiny):
    table = TurnTable.from_corpus(tiny)
    X, mask = padded(table, np.ones((len(table.texts), 2), dtype=np.float32))
    assert mask.tolist() == [[True, True, False], [True, True, True], [True, False, False]]
    assert X[~mask].sum() == 0


@pytest.mark.parametrize(("param", "value"), [("hidden", 0), ("dropout", 1.0), ("epochs", "5"), ("lr", -1),
                                            ("input_dropout", 1.0), ("input_dropout", -0.1), ("input_dropout", True),
                                            ("annotators", "each"), ("annotators", 19), ("finetune", -0.1),
                                            ("finetune", 1.5), ("finetune", True), ("finetune", "0.02")])
def test_bad_parameters(param, value):
    with pytest.raises(DialevalError, match=param):
        Neural(**{param: value})


def test_input_dropout_acts_in_training_only(en60):
    """Input dropout changes what training learns, each setting reproducibly; a trained network's forward in
    evaluation mode is deterministic (prediction never drops inputs)."""
    import torch

    def weights(rate: float) -> np.ndarray:
        m = Neural(seed=1, progress=False, **{**SMALL, "ensemble": 1, "epochs": 1, "input_dropout": rate}).fit(en60)
        return m.members[0]["proj.weight"]

    assert np.array_equal(weights(0.0), weights(0.0))
    assert np.array_equal(weights(0.5), weights(0.5))
    assert not np.array_equal(weights(0.0), weights(0.5))
    net = build_net(6, 4, 0.3, input_dropout=0.5).eval()
    X, mask = torch.ones((2, 3, 6)), torch.ones((2, 3), dtype=torch.bool)
    lengths = torch.tensor([3, 3])
    a, b = net(X, mask, lengths), net(X, mask, lengths)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_stack_linear_is_refused_on_stc3_rather_than_ignored(tiny):
    with pytest.raises(DialevalError, match=r"stack_linear = 0.5 applies to turn-level scales .* only"):
        Neural(stack_linear=0.5, epochs=1, ensemble=1).fit(tiny)


def test_ragged_batches_equal_the_padded_array(en60):
    """Batches drawn from the unpadded training arrays hold what the fully padded array holds at [idx, :T]."""
    import torch

    from dialeval.models.neural.inputs import ragged
    from dialeval.models.neural.training import batch_X

    table = TurnTable.from_corpus(en60)
    feats = np.random.default_rng(0).normal(size=(len(table.texts), 6))
    X, mask = padded(table, feats)
    t = {k: torch.from_numpy(v) for k, v in ragged(table, feats).items()}
    assert np.array_equal(t["mask"].numpy(), mask)
    for idx in ([0], [5, 2, 59], list(range(60))[::-1]):
        T = int(table.n_turns[idx].max())
        got = batch_X(t, torch.tensor(idx), T).numpy()
        assert got.dtype == X.dtype and np.array_equal(got, X[idx, :T])


def test_lexical_vectors_have_unit_variance_on_the_training_turns(en60):
    from dialeval.models.neural.inputs import Lexical

    texts = TurnTable.from_corpus(en60).texts
    lex = Lexical.fit(texts, 16, seed=0)
    Z = lex.transform(texts)
    assert Z.shape == (len(texts), 16) and Z.dtype == np.float32
    np.testing.assert_allclose(Z.std(axis=0), 1, atol=1e-4)
    assert np.array_equal(lex.components, lex.components.astype(np.float16).astype(np.float64))  # as saved
    assert Lexical.fit(["a"], 16, seed=0) is None and Lexical.fit(["", ""], 16, seed=0) is None  # nothing to keep
    assert len(Lexical.fit(["ab cd", "cd ef", "ef gh"], 16, seed=0).components) == 2  # at most turns - 1


def test_lexical_part_is_saved_and_off_when_zero(fitted, en60, tmp_path):
    import json

    folder = fitted.save(tmp_path / "m")
    config = json.loads((folder / "model.json").read_text())["config"]
    assert config["lexical"]["dims"] == fitted.params["lexical"] == 128
    with np.load(folder / "arrays.npz") as z:
        assert z["lexical/components"].dtype == np.float16 and z["lexical/components"].shape[0] == 128
    plain = Neural(seed=3, progress=False, lexical=0, **{**SMALL, "ensemble": 1}).fit(en60)
    assert plain.lexical is None and "lexical" not in plain._state()[0]
    assert fitted.members[0]["proj.weight"].shape[1] == plain.members[0]["proj.weight"].shape[1] + 128


def test_every_parameter_has_a_rule():
    """Each of the kind's own parameters is declared once in PARAMS, and the defaults pass their rules."""
    from dialeval.models.neural.model import PARAMS

    assert set(PARAMS) == set(Neural.defaults)
    assert all(Neural().params[k] == v for k, v in Neural.defaults.items())


@pytest.mark.parametrize(("name", "bad", "allowed"), [
    ("hidden", 0, "integers >= 1"), ("epochs", 2.5, "integers >= 1"), ("batch_size", True, "integers >= 1"),
    ("ensemble", "8", "integers >= 1"), ("lr", -0.1, "numbers > 0 and < 1000"),
    ("weight_decay", float("nan"), "numbers >= 0 and < 1000"), ("ordinal_weight", 1e3, "numbers >= 0 and < 1000"),
    ("dropout", 1, "numbers >= 0 and < 1"), ("input_dropout", -0.2, "numbers >= 0 and < 1"),
    ("utterances", "max", "mean, none"), ("annotators", 19, "panel, pooled"),
    ("lexical", 2000, "integers >= 0 and <= 1024 (dimensions"), ("finetune", 2, "numbers >= 0 and <= 1 (the top"),
    ("stack_linear", 1.0, "numbers >= 0 and < 1"), ("stack_linear_C", 0, "numbers > 0 and < 1e+06"),
])
def test_each_parameter_is_checked_with_what_is_allowed(name, bad, allowed):
    with pytest.raises(DialevalError) as e:
        Neural(**{name: bad})
    assert str(e.value).startswith(f"neural: parameter {name} = {bad!r} is not allowed; allowed are {allowed}")


@pytest.mark.parametrize("bad", [-1, True, 1.5, 2000])
def test_lexical_parameter_is_checked(bad):
    with pytest.raises(DialevalError, match=r"lexical = .* is not allowed; allowed are integers >= 0 and <= 1024"):
        Neural(lexical=bad)


def test_numpy_forward_equals_torch_with_a_fine_tuned_top():
    """A member with its own copy of the encoder's top network reads the turn vectors' last 512 columns (the top
    inputs) and replaces their first 512 with its output: numpy and PyTorch agree, and the copy is used (a
    changed copy changes the output)."""
    import torch

    from dialeval.models import encoders

    base = encoders.top_weights()
    rng = np.random.default_rng(2)
    changed = {k: v + rng.normal(scale=0.05, size=v.shape).astype(np.float32) for k, v in base.items()}
    torch.manual_seed(2)
    net = build_net(512 + 12, 8, 0.0, top=changed).eval()
    lengths = np.array([3, 1, 4])
    X = rng.normal(size=(3, 4, 512 + 12 + 512)).astype(np.float32)
    mask = np.arange(4)[None, :] < lengths[:, None]
    X[~mask] = 0
    with torch.no_grad():
        q, c, h = net(torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(lengths))
    w = {k: v.numpy().astype(np.float64) for k, v in net.state_dict().items()}
    assert {f"top.{k}" for k in encoders.TOP_LAYERS} <= set(w)
    out = forward_numpy(w, X.astype(np.float64), mask, ["heads.0", "heads.1"], 3)
    np.testing.assert_allclose(out["pooled"], torch.softmax(q, -1).numpy(), atol=1e-5)
    np.testing.assert_allclose(out["heads.0"][mask], torch.softmax(c, -1).numpy()[mask], atol=1e-5)
    np.testing.assert_allclose(out["heads.1"][mask], torch.softmax(h, -1).numpy()[mask], atol=1e-5)
    frozen = forward_numpy(w | {f"top.{k}": v.astype(np.float64) for k, v in base.items()}, X.astype(np.float64),
                           mask, ["heads.0", "heads.1"], 3)
    assert not np.allclose(frozen["pooled"], out["pooled"], atol=1e-4)


def test_a_fine_tuned_top_is_kept_as_an_int8_change_within_half_a_step():
    from dialeval.models import encoders
    from dialeval.models.neural.numpy_net import pack_top, unpack_top

    base = encoders.top_weights()
    rng = np.random.default_rng(3)
    tuned = {k: v + rng.normal(scale=1e-3, size=v.shape).astype(np.float32) for k, v in base.items()}
    tuned["d1"] = base["d1"].copy()  # an unchanged layer: a zero change, the wheel's weights exactly
    packed = pack_top(tuned)
    assert all(packed[f"top.{k}.delta"].dtype == np.int8 and packed[f"top.{k}.scale"].dtype == np.float16
               for k in encoders.TOP_LAYERS)
    assert not packed["top.d1.delta"].any()
    rebuilt = unpack_top(packed)
    for k in encoders.TOP_LAYERS:
        step = packed[f"top.{k}.scale"].astype(np.float64)
        err = np.abs(rebuilt[f"top.{k}"] - tuned[k].astype(np.float64))
        assert np.all(err <= step / 2 * (1 + 1e-2) + 1e-12), k  # rounding to the nearest step (scale in float16)
    assert np.array_equal(rebuilt["top.d1"], base["d1"].astype(np.float64))
    plain = {"proj.weight": np.ones(2)}
    assert unpack_top(plain) is plain  # no top network: unchanged


def test_fine_tuned_members_save_small_load_identical_and_train_alike_in_processes(en60, tmp_path, monkeypatch):
    """``finetune`` > 0: each member trains its own copy of the encoder's top network (its weights move), saved as
    int8 changes (no float copy of the weights in the file); the loaded model predicts the same; members trained
    in two processes are the same bits as in one."""
    import json

    from dialeval.models import encoders

    params = {**SMALL, "finetune": 0.5}
    model = Neural(seed=5, progress=False, **params).fit(en60)
    assert model.finetune and all(not np.array_equal(m["top.d3"], encoders.top_weights()["d3"].astype(np.float64))
                                  for m in model.members)
    folder = model.save(tmp_path / "m")
    assert json.loads((folder / "model.json").read_text())["config"]["finetune"] is True
    with np.load(folder / "arrays.npz") as z:
        assert z["m0/top.d0.delta"].dtype == np.int8 and "m0/top.d0" not in z.files
    loaded = Estimator.load(folder)
    table = TurnTable.from_corpus(en60)
    assert loaded.predict(table).to_records(table) == model.predict(table).to_records(table)
    monkeypatch.setenv("DIALEVAL_THREADS", "2")
    parallel = Neural(seed=5, progress=False, **params).fit(en60)
    for wa, wb in zip(model.members, parallel.members, strict=True):
        assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)
    frozen = Neural(seed=5, progress=False, **{**SMALL, "finetune": 0}).fit(en60)
    assert not frozen.finetune and not any(k.startswith("top.") for k in frozen.members[0])


@pytest.mark.parametrize("tuned", [False, True])
def test_causal_network_numpy_forward_equals_torch(tuned):
    """The causal network of turn-level scales (DBDC, WOCHAT, ConTurE): the numpy pass equals PyTorch's on ragged
    batches, with and without the member's own copy of the encoder's top network (which it then reads from the
    turn vectors' last 512 columns); and a turn's probabilities never depend on later turns."""
    import torch

    from dialeval.models import encoders
    from dialeval.models.neural import forward_turns_numpy
    from dialeval.models.neural.torch_net import build_turn_net

    rng = np.random.default_rng(4)
    top = None
    if tuned:
        top = {k: v + rng.normal(scale=0.05, size=v.shape).astype(np.float32)
               for k, v in encoders.top_weights().items()}
    d = 512 + 7
    torch.manual_seed(4)
    net = build_turn_net(d, 8, 0.0, [("breakdown", 3, True), ("other", 2, False)], top).eval()
    lengths = np.array([2, 5, 1])
    X = rng.normal(size=(3, 5, d + (512 if tuned else 0))).astype(np.float32)
    mask = np.arange(5)[None, :] < lengths[:, None]
    X[~mask] = 0
    with torch.no_grad():
        a, b = net(torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(lengths))
    w = {k.replace("heads.0", "head.breakdown").replace("heads.1", "head.other"): v.numpy().astype(np.float64)
         for k, v in net.state_dict().items()}
    assert tuned == ("top.d0" in w)
    out = forward_turns_numpy(w, X.astype(np.float64), mask, ["breakdown", "other"])
    np.testing.assert_allclose(out["breakdown"][mask], torch.softmax(a, -1).numpy()[mask], atol=1e-5)
    np.testing.assert_allclose(out["other"][mask], torch.softmax(b, -1).numpy()[mask], atol=1e-5)
    cut = forward_turns_numpy(w, X[:, :2].astype(np.float64), mask[:, :2], ["breakdown"])
    np.testing.assert_allclose(cut["breakdown"][mask[:, :2]], out["breakdown"][:, :2][mask[:, :2]], atol=1e-12)
