"""dialeval.models: predict, train, load_model, detect_language."""

from __future__ import annotations

import json

import pytest

import dialeval
import dialeval.models as models
from dialeval.errors import DialevalError
from dialeval.models import detect_language, load_model, predict, train
from dialeval.models.baselines import Position, Prior


def _turn(text: str, sender: str = "customer") -> dict:
    return {"sender": sender, "utterances": [text]}


@pytest.mark.parametrize(("text", "lang"), [
    ("我的订单还没到，怎么回事？", "zh"),
    ("@中国移动 my 4G 网络 is down 3 天了", "zh"),
    ("My order has not arrived yet.", "en"),
    ("Order 12345, ref 中", "en"),  # one CJK character among 15: below the threshold
    ("", "en"),
])
def test_detect_language_by_hand(text, lang):
    assert detect_language([{"id": "1", "turns": [_turn(text)]}]) == lang


def test_detect_language_of_the_training_files(stc3_train_cn, stc3_train_en):
    cn = json.loads(stc3_train_cn.read_text(encoding="utf-8"))[:30]
    en = json.loads(stc3_train_en.read_text(encoding="utf-8"))[:30]
    assert (detect_language(cn), detect_language(en)) == ("zh", "en")


def test_train_save_predict_round_trip(en60, en60_path, tmp_path):
    model = train(en60_path, kind="position", seed=1, params={"min_turns": 2}, out=tmp_path / "m")
    assert isinstance(model, Position) and model.info["language"] == "en" and model.params["min_turns"] == 2
    assert (tmp_path / "m" / "model.json").is_file()
    out = tmp_path / "run.json"
    records = predict(en60, model=tmp_path / "m", out=out)
    assert json.loads(out.read_text()) == records
    assert records == predict(en60_path, model=model) == dialeval.predict(en60_path, model=str(tmp_path / "m"))
    assert dialeval.evaluate(records, en60)["dialogues"]["scored"] == 60


def test_predict_one_subtask(tiny_gold):
    model = train(tiny_gold, kind="prior")
    records = predict(tiny_gold, model=model, subtask="quality")
    assert all(set(r) == {"id", "quality"} for r in records)
    nug = predict(tiny_gold, model=model, subtask="nugget")
    assert [len(r["nugget"]) for r in nug] == [2, 3, 1]


def test_predict_needs_a_model_trained_for_the_subtask(tiny_gold):
    model = train(tiny_gold, kind="prior", subtask="quality")
    with pytest.raises(DialevalError, match="trained for quality only; it cannot predict nugget"):
        predict(tiny_gold, model=model)


def test_default_model_is_the_shipped_one_of_the_language(tiny_gold, tmp_path, monkeypatch):
    monkeypatch.setattr(models, "SHIPPED", tmp_path / "shipped")
    monkeypatch.setattr(models, "_SHIPPED_CACHE", {})
    with pytest.raises(DialevalError, match="no shipped default model for 'en'"):
        predict(tiny_gold)
    with pytest.raises(DialevalError, match="no shipped default model for 'zh'"):
        predict(tiny_gold, lang="zh")
    train(tiny_gold, kind="prior", out=tmp_path / "shipped" / "en")
    records = predict(tiny_gold)
    assert records == predict(tiny_gold, model="en")
    assert isinstance(load_model("en"), Prior) and load_model("en") is load_model("en")  # loaded once


@pytest.mark.parametrize(("model", "message"), [
    ("no/such/folder", "is neither a saved model folder nor one of zh, en"),
    ("linear", "'linear' is a model kind: train it first"),
    (3, "model must be a path, 'zh' or 'en' or an Estimator; received int"),
    (Prior(), "not fitted"),
])
def test_load_model_errors(model, message):
    with pytest.raises(DialevalError, match=message):
        load_model(model)


def test_folder_that_is_not_a_model(tmp_path):
    with pytest.raises(DialevalError, match="not a saved dialeval model"):
        load_model(tmp_path)


def test_bad_arguments(tiny_gold):
    with pytest.raises(DialevalError, match="lang 'fr' is not allowed; allowed are zh, en"):
        predict(tiny_gold, lang="fr")
    with pytest.raises(DialevalError, match="subtask 'dq' is not allowed"):
        predict(tiny_gold, model="en", subtask="dq")
    with pytest.raises(DialevalError, match="dialogues must be a path, a list of STC-3 records or a Corpus"):
        predict(42, model="en")
    with pytest.raises(DialevalError, match="model kind 'svm' is not known"):
        train(tiny_gold, kind="svm")


def test_train_does_not_save_into_a_folder_of_other_files(tiny, tmp_path):
    """out='/tmp' wrote model.json and arrays.npz among whatever was there (refused before the training); a
    folder with a saved model is still replaced."""
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(DialevalError, match="holds other files and no saved model"):
        train(tiny, kind="prior", out=busy)
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    train(tiny, kind="prior", out=tmp_path / "m")
    train(tiny, kind="prior", out=tmp_path / "m")   # replacing a saved model is allowed
    assert (tmp_path / "m" / "model.json").is_file()
