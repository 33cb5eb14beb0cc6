"""Boundaries of training and loading: ``min_share="auto"`` with one annotator per item, the seed's range,
upper bounds of size parameters, and saved models whose files do not make one model (arrays of other shapes,
not finite, a model.json nested too deeply): one-line errors naming what is wrong, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import dialeval
from dialeval.errors import DialevalError
from dialeval.models.base import Estimator, kind_class, resolve_min_share
from dialeval.models.baselines import Position, Prior
from dialeval.models.cv import cross_validate
from dialeval.models.linear import Linear
from dialeval.models.neural import Neural

TINY = {"hidden": 4, "epochs": 1, "ensemble": 1, "batch_size": 4}


def _cli(argv: list[str], capsys) -> tuple[int, list[str]]:
    from dialeval.cli.main import run

    capsys.readouterr()
    rc = run(argv)
    return rc, capsys.readouterr().err.strip().splitlines()


# -- 1. min_share="auto" ---------------------------------------------------------------------------------------
def test_auto_is_half_a_vote_from_two_annotators_and_off_with_one():
    # 1/(2n) by hand: n = 2 -> 0.25, n = 3 -> 1/6; the median item has one annotator -> 0 (nothing emptied)
    assert resolve_min_share("auto", np.array([2, 2, 2])) == 0.25
    assert resolve_min_share("auto", np.array([3, 3, 1])) == 1 / 6
    assert resolve_min_share("auto", np.array([1, 1, 1])) == 0.0
    assert resolve_min_share("auto", np.array([1, 1, 30])) == 0.0
    assert resolve_min_share("auto", np.array([], dtype=np.int64)) == 0.0


@pytest.fixture
def one_annotator(tiny_gold) -> list[dict]:
    """The tiny corpus with its first annotator only: one label per item."""
    return [{**d, "annotations": d["annotations"][:1]} for d in tiny_gold]


def test_auto_with_one_annotator_saves_a_model_that_loads_and_predicts_as_without(one_annotator, tmp_path):
    corpus = dialeval.read_corpus(one_annotator)
    auto = Prior(min_share="auto").fit(corpus)
    assert auto.shares == dict.fromkeys(auto.learnt, 0.0)
    auto.save(tmp_path / "m")
    loaded = Estimator.load(tmp_path / "m")
    plain = Prior().fit(corpus).predict(corpus)
    got = loaded.predict(corpus)
    for k in "ASE":
        assert np.array_equal(got.quality[k], plain.quality[k])
    assert np.array_equal(got.customer, plain.customer) and np.array_equal(got.helpdesk, plain.helpdesk)


def test_cv_scores_what_train_delivers(one_annotator):
    corpus = dialeval.read_corpus(one_annotator)
    auto = cross_validate(corpus, "prior", folds=2, params={"min_share": "auto"}, progress=False)
    off = cross_validate(corpus, "prior", folds=2, params={"min_share": 0.0}, progress=False)
    assert auto.folds == off.folds


def test_a_model_saved_with_auto_resolved_to_one_half_loads_with_nothing_emptied(one_annotator, tmp_path):
    corpus = dialeval.read_corpus(one_annotator)
    Prior(min_share="auto").fit(corpus).save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["min_shares"] = {"A": 0.5, "S": 0.5}  # as the earlier rule saved it: 1/(2 x 1)
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert Estimator.load(tmp_path / "m").shares["A"] == 0.0
    meta["params"]["min_share"] = 0.1  # a number was never resolved to 0.5: still refused
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match=r"min_shares\['A'\]: min_share = 0.5 is not allowed"):
        Estimator.load(tmp_path / "m")


def test_cli_train_then_predict_with_auto_on_conture(shared_data, tmp_path, capsys):
    records = json.loads(shared_data("conture", "data.json").read_text(encoding="utf-8"))[:8]
    data = tmp_path / "conture8.json"
    data.write_text(json.dumps(records), encoding="utf-8")
    rc, _ = _cli(["train", str(data), "--model", "prior", "--param", "min_share=auto", "--out", str(tmp_path / "m")],
                 capsys)
    assert rc == 0
    assert json.loads((tmp_path / "m" / "model.json").read_text())["min_shares"]["overall impression"] == 0.0
    rc, err = _cli(["predict", str(data), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.json")], capsys)
    assert rc == 0, err


# -- 2. the seed -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["uniform", "prior", "position", "linear", "neural"])
@pytest.mark.parametrize("seed", [2**32, 2**64 - 1, -1, 1.0, True])
def test_seed_bound(kind, seed):
    with pytest.raises(DialevalError, match=r"^seed .* is not allowed; allowed are integers 0\.\.4294967295"):
        kind_class(kind)(seed=seed, **({"ensemble": 1} if kind == "neural" else {}))


def test_the_largest_seed_trains_a_linear_model(tiny):
    assert Linear(seed=2**32 - 1, max_iter=5).fit(tiny).fitted


def test_neural_members_seeds_stay_in_range():
    assert Neural(seed=2**32 - 2, ensemble=2).seed == 2**32 - 2  # members: seeds 2**32-2 and 2**32-1
    with pytest.raises(DialevalError, match=r"^seed 4294967295 is not allowed; allowed are integers "
                                            r"0\.\.4294967294 \(the 2 members of the ensemble use seeds "
                                            r"seed\.\.seed\+1\)"):
        Neural(seed=2**32 - 1, ensemble=2)


@pytest.mark.parametrize(("kind", "seed", "top"), [("linear", "4294967296", "4294967295"),
                                                   ("neural", "18446744073709551615", "4294967294")])
def test_cli_seed_out_of_range_is_one_line(kind, seed, top, tiny_gold_path, tmp_path, capsys):
    rc, err = _cli(["train", str(tiny_gold_path), "--model", kind, "--seed", seed, "--param", "ensemble=2",
                    "--out", str(tmp_path / "m")] if kind == "neural" else
                   ["train", str(tiny_gold_path), "--model", kind, "--seed", seed, "--out", str(tmp_path / "m")],
                   capsys)
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"error: seed {seed} is not allowed; allowed are integers 0..{top}")
    assert not (tmp_path / "m").exists()


# -- 4. upper bounds of size parameters ------------------------------------------------------------------------
@pytest.mark.parametrize(("cls", "name", "top", "allowed"), [
    (Neural, "hidden", 1024, "integers >= 1 and <= 1024"), (Neural, "batch_size", 1024, "integers >= 1 and <= 1024"),
    (Neural, "epochs", 1000, "integers >= 1 and <= 1000"), (Neural, "ensemble", 64, "integers >= 1 and <= 64"),
    (Linear, "max_features", 10**7, "integers >= 1 and <= 1e+07"),
    (Linear, "max_iter", 10**6, "integers >= 1 and <= 1e+06"),
    (Position, "max_position", 10**6, "integers >= 0 and <= 1e+06"),
    (Position, "min_turns", 10**9, "integers >= 1 and <= 1e+09"),
])
def test_size_parameters_have_upper_bounds(cls, name, top, allowed):
    assert cls(**{name: top}).params[name] == top  # the bound itself is allowed
    for bad in (top + 1, 10**30):
        with pytest.raises(DialevalError) as e:
            cls(**{name: bad})
        assert str(e.value).startswith(f"{cls.kind}: parameter {name} = {bad!r} is not allowed; allowed are "
                                       f"{allowed}")


def test_cli_huge_hidden_is_one_line(tiny_gold_path, tmp_path, capsys):
    rc, err = _cli(["train", str(tiny_gold_path), "--model", "neural", "--param", "hidden=1000000000",
                    "--out", str(tmp_path / "m")], capsys)
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("error: neural: parameter hidden = 1000000000 is not allowed; allowed are integers >= 1 "
                             "and <= 1024")


# -- 3. and 5. damaged saved models ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dbdc(shared_data, tmp_path_factory) -> dialeval.Corpus:
    folder = tmp_path_factory.mktemp("dbdc")
    for f in sorted(shared_data("dbdc3", "en", "dev", "IRIS_100").glob("*.log.json"))[:3]:
        shutil.copy(f, folder / f.name)
    return dialeval.read_corpus(folder)


@pytest.fixture(scope="module")
def saved(_cache, dbdc, en60_records, tmp_path_factory) -> dict[str, Path]:
    """Tiny neural models: the whole-dialogue network on STC-3 (5 dialogues; a lexical part), the causal network
    on DBDC at hidden 4 and at hidden 8."""
    root = tmp_path_factory.mktemp("models")
    stc = dialeval.read_corpus(en60_records[:5])
    return {"stc": Neural(progress=False, **TINY).fit(stc).save(root / "stc"),
            "dbdc4": Neural(progress=False, **TINY).fit(dbdc).save(root / "dbdc4"),
            "dbdc8": Neural(progress=False, **{**TINY, "hidden": 8}).fit(dbdc).save(root / "dbdc8")}


def _copy(src: Path, dst: Path, arrays_from: Path | None = None, edit=None) -> Path:
    """A copy of the model ``src`` with the arrays of ``arrays_from`` or edited by ``edit``, and model.json without
    the arrays' SHA-256 (as models saved before it was recorded): the kinds' own checks of the arrays are what
    these tests are about (with it, every such copy is refused by the hash first)."""
    shutil.copytree(src, dst)
    if arrays_from is not None:
        shutil.copy(arrays_from / "arrays.npz", dst / "arrays.npz")
    if edit is not None:
        with np.load(dst / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        edit(arrays)
        np.savez(dst / "arrays.npz", **arrays)
    if arrays_from is not None or edit is not None:
        meta = json.loads((dst / "model.json").read_text())
        assert meta.pop("arrays_sha256", None) is not None
        (dst / "model.json").write_text(json.dumps(meta))
    return dst


def _damaged(folder: Path, detail: str) -> None:
    with pytest.raises(DialevalError) as e:
        Estimator.load(folder)
    assert e.value.file == str(folder)
    assert e.value.message.startswith("the saved model is damaged, or model.json and arrays.npz are not of one model")
    assert detail in e.value.message, e.value.message


def test_undamaged_models_load(saved):
    for folder in saved.values():
        assert Estimator.load(folder).fitted


def test_arrays_of_another_corpus(saved, tmp_path):
    # DBDC's causal network reads 512 (sentence) + 12 (position) + 2 (senders) + 3 (similarities) = 529 columns
    folder = _copy(saved["dbdc4"], tmp_path / "m", arrays_from=saved["stc"])
    _damaged(folder, "array 'm0/proj.weight' has shape (4, ")
    _damaged(folder, "imply (4, 529)")


def test_arrays_of_another_hidden_size(saved, tmp_path):
    folder = _copy(saved["dbdc8"], tmp_path / "m", arrays_from=saved["dbdc4"])
    _damaged(folder, "array 'm0/proj.weight' has shape (4, 529); model.json's parameters and configuration imply "
                     "(8, 529)")


def test_a_shrunk_array_that_would_broadcast(saved, tmp_path):
    folder = _copy(saved["dbdc4"], tmp_path / "m", edit=lambda a: a.update(feat_mean=a["feat_mean"][:1]))
    _damaged(folder, "array 'feat_mean' has shape (1,); model.json's parameters and configuration imply (12,)")
    folder = _copy(saved["stc"], tmp_path / "s", edit=lambda a: a.update({"m0/top.d1.scale": a["m0/top.d1.scale"][:1]}))
    _damaged(folder, "array 'm0/top.d1.scale' has shape (1,)")
    folder = _copy(saved["stc"], tmp_path / "l", edit=lambda a: a.update({"lexical/std": a["lexical/std"][:1]}))
    _damaged(folder, "array 'lexical/std' has shape (1,)")


def test_a_missing_array(saved, tmp_path):
    folder = _copy(saved["stc"], tmp_path / "m", edit=lambda a: a.pop("m0/qual_out.bias"))
    _damaged(folder, "arrays.npz has no array 'm0/qual_out.bias'")


@pytest.mark.parametrize("key", ["m0/qual_out.weight", "feat_std", "lexical/components"])
def test_arrays_that_are_not_finite(saved, tmp_path, key):
    def poison(a):
        a[key] = np.full_like(a[key], np.nan)

    _damaged(_copy(saved["stc"], tmp_path / "m", edit=poison), f"array {key!r} holds values that are not finite")


def test_cli_predict_with_a_damaged_model_is_one_line(saved, dbdc, tmp_path, capsys):
    folder = _copy(saved["dbdc8"], tmp_path / "m", arrays_from=saved["dbdc4"])
    rc, err = _cli(["predict", str(dbdc.source), "--model", str(folder), "--out", str(tmp_path / "r.json")], capsys)
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"error: {folder}: the saved model is damaged") and "'m0/proj.weight'" in err[0]


def test_a_model_json_nested_too_deeply(tiny, tiny_gold_path, tmp_path, capsys):
    folder = Prior().fit(tiny).save(tmp_path / "m")
    (folder / "model.json").write_text("[" * 100000, encoding="utf-8")
    with pytest.raises(DialevalError) as e:
        Estimator.load(folder)
    assert e.value.file == str(folder / "model.json")
    assert e.value.message.startswith("the saved model is damaged") and "nests its values too deeply" in e.value.message
    rc, err = _cli(["predict", str(tiny_gold_path), "--model", str(folder), "--out", str(tmp_path / "r.json")],
                   capsys)
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: ")


def test_linear_arrays_that_do_not_agree(dbdc, tmp_path):
    # DBDC's turn head reads the turn's TF-IDF, its two predecessors' (3 x V columns), then the scaler's D columns
    src = Linear(max_iter=5, progress=False).fit(dbdc).save(tmp_path / "lin")
    with np.load(src / "arrays.npz") as z:
        V, D = len(z["turn_terms"]), len(z["turn_mean"])
    assert Estimator.load(src).fitted
    narrow = _copy(src, tmp_path / "w", edit=lambda a: a.update({"turn/breakdown_W": a["turn/breakdown_W"][:, :5]}))
    _damaged(narrow, f"array 'turn/breakdown_W' has shape (3, 5); the scale's 3 levels and the turn features' "
                     f"{3 * V + D} columns imply (3, {3 * V + D})")
    _damaged(_copy(src, tmp_path / "m", edit=lambda a: a.update(turn_mean=a["turn_mean"][:1])),
             f"array 'turn_std' has shape ({D},); the other arrays imply (1,)")
    _damaged(_copy(src, tmp_path / "n", edit=lambda a: a["turn_idf"].fill(np.nan)),
             "array 'turn_idf' holds values that are not finite")


def test_a_stacked_linear_model_beside_dialogue_level_scales_loads(_cache, shared_data, tmp_path):
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    conture = conture.subset(conture.ids()[:6])
    model = Neural(progress=False, stack_linear=0.3, **TINY).fit(conture)
    loaded = Estimator.load(model.save(tmp_path / "m"))
    a, b = model.predict(conture, check_training=False), loaded.predict(conture, check_training=False)
    assert a.turns.keys() == b.turns.keys() == set(model.learnt)
    for k in a.turns:  # (rows, distributions) of each scale, the turn-level one with the stacked linear model's
        assert np.array_equal(a.turns[k][0], b.turns[k][0]) and np.allclose(a.turns[k][1], b.turns[k][1])


def test_compressed_arrays_that_were_corrupted_are_a_damaged_model(saved, tmp_path):
    """Bytes flipped inside a compressed array (not where the CRC is checked first) were a zlib.error
    traceback. Found by a models probe."""
    import zipfile

    folder = shutil.copytree(saved["dbdc4"], tmp_path / "m")
    buf = bytearray((folder / "arrays.npz").read_bytes())
    with zipfile.ZipFile(folder / "arrays.npz") as z:
        info = max(z.infolist(), key=lambda i: i.compress_size)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 10
    buf[start:start + 16] = bytes(b ^ 255 for b in buf[start:start + 16])
    (folder / "arrays.npz").write_bytes(bytes(buf))
    with pytest.raises(DialevalError, match="the saved model is damaged"):
        Estimator.load(folder)


def test_a_save_interrupted_between_its_two_files_is_refused_not_loaded_as_a_hybrid(tiny_gold, tmp_path):
    """A probe killed ``train --out m`` over an earlier model after arrays.npz was replaced and before model.json:
    the folder loaded without a word, new arrays read with the earlier model's settings. model.json now records
    the SHA-256 of the arrays it was saved with."""
    corpus = dialeval.read_corpus(tiny_gold)
    Prior(seed=0).fit(corpus).save(tmp_path / "m")
    earlier_meta = (tmp_path / "m" / "model.json").read_bytes()
    Prior(seed=7).fit(dialeval.read_corpus(tiny_gold[:2])).save(tmp_path / "m")
    assert Estimator.load(tmp_path / "m").seed == 7
    (tmp_path / "m" / "model.json").write_bytes(earlier_meta)  # what the kill left: new arrays, earlier meta
    with pytest.raises(DialevalError, match=r"arrays\.npz is not the file model\.json was saved with"):
        Estimator.load(tmp_path / "m")
    meta = json.loads(earlier_meta)
    del meta["arrays_sha256"]  # a model saved before the check: loaded as before
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert Estimator.load(tmp_path / "m").seed == 0
