"""Issue 16, item 4: a model recognises its own training dialogues (by content, from fingerprints, never the
text) and says so: a TrainingDataWarning in Python, one ``warning:`` line from ``dialeval predict``, and a
count in the pipeline's manifest."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import unicodedata
import warnings

import numpy as np
import pytest

import dialeval
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.models import leakage, load_model, shipped_folder
from dialeval.models.base import Estimator
from dialeval.models.baselines import Prior
from dialeval.models.data import TurnTable
from dialeval.models.leakage import TrainingDataWarning


def _reference(turns: list[tuple[str, str]]) -> int:
    """The fingerprint as the module docstring defines it, written out independently."""
    parts = []
    for sender, text in turns:
        text = " ".join(unicodedata.normalize("NFC", text).split())
        parts.append(sender + "\x1f" + text)
    digest = hashlib.sha256(b"dialeval-training-dialogue/1\x00" + "\x1e".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _fp(*dialogues: Dialogue) -> list[int]:
    return leakage.fingerprints(TurnTable.from_corpus(Corpus(list(dialogues), {}), senders=None)).tolist()


def test_fingerprint_is_the_documented_hash():
    turns = [("customer", "My order\tis  late. "), ("helpdesk", "Cafe\u0301 closed")]
    d = Dialogue("x", [Turn(s, [t]) for s, t in turns])
    assert _fp(d) == [_reference(turns)]
    assert _reference(turns) == _reference([("customer", "My order is late."), ("helpdesk", "Caf\u00e9 closed")])


@pytest.mark.parametrize(("other", "same"), [
    (Dialogue("renamed", [Turn("user", ["Hi there"]), Turn("system", ["Hello."])]), True),
    (Dialogue("a", [Turn("user", [" Hi\n there "]), Turn("system", ["Hello."])]), True),
    (Dialogue("a", [Turn("system", ["Hi there"]), Turn("system", ["Hello."])]), False),      # another sender
    (Dialogue("a", [Turn("user", ["Hi there"]), Turn("system", ["Hello!"])]), False),        # another text
    (Dialogue("a", [Turn("user", ["Hi there"])]), False),                                    # a turn fewer
    (Dialogue("a", [Turn("user", ["Hi"]), Turn("user", ["there"]), Turn("system", ["Hello."])]), False),
])
def test_what_counts_as_the_same_dialogue(other, same):
    base = Dialogue("a", [Turn("user", ["Hi there"]), Turn("system", ["Hello."])])
    assert (_fp(base) == _fp(other)) is same


def test_predicting_training_dialogues_warns_and_others_do_not(tiny, tmp_path):
    model = Prior("both").fit(tiny)
    assert model.training_fingerprints is not None and len(model.training_fingerprints) == len(tiny)
    with pytest.warns(TrainingDataWarning, match=rf"^{len(tiny)} of {len(tiny)} dialogue\(s\) were in the model's"):
        model.predict(tiny)
    first = tiny.subset([tiny.ids()[0]])
    assert model.in_training(first).ids == (tiny.ids()[0],)
    fresh = dialeval.read_corpus([{"id": "new", "turns": [{"sender": "customer", "utterances": ["Never seen."]},
                                                         {"sender": "helpdesk", "utterances": ["Indeed."]}]}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(fresh)                                           # no warning at all
        model.predict(tiny, check_training=False)
    assert model.in_training(fresh).count == 0


def test_fingerprints_are_saved_not_the_text(tiny, tmp_path):
    model = Prior("both").fit(tiny)
    folder = model.save(tmp_path / "m")
    meta = json.loads((folder / "model.json").read_text())
    assert meta["training_fingerprints"] == {"scheme": leakage.SCHEME, "count": len(tiny)}
    with np.load(folder / "arrays.npz") as z:
        stored = z[leakage.ARRAY]
    assert stored.dtype == np.uint64 and stored.tolist() == sorted(stored.tolist())
    raw = (folder / "arrays.npz").read_bytes() + (folder / "model.json").read_bytes()
    for d in tiny.dialogues:
        for t in d.turns:
            assert t.text.encode() not in raw
    loaded = Estimator.load(folder)
    assert np.array_equal(loaded.training_fingerprints, model.training_fingerprints)
    assert loaded.in_training(tiny).count == len(tiny)


def test_a_model_saved_without_fingerprints_checks_nothing(tiny, tmp_path):
    model = Prior("both").fit(tiny)
    model.training_fingerprints = None
    folder = model.save(tmp_path / "m")
    assert "training_fingerprints" not in json.loads((folder / "model.json").read_text())
    loaded = Estimator.load(folder)
    assert loaded.training_fingerprints is None and loaded.in_training(tiny).count == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded.predict(tiny)


def test_cli_warns_in_one_line_and_the_manifest_counts(tiny_gold, tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(tiny_gold), encoding="utf-8")
    model = Prior("both").fit(dialeval.read_corpus(tiny_gold)).save(tmp_path / "m")
    cmd = [sys.executable, "-m", "dialeval", "predict", str(gold), "--model", str(model)]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "run.json")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    n = len(tiny_gold)
    assert warned == [f"warning: {n} of {n} dialogue(s) were in the model's training data (e.g. "
                      f"{', '.join(d['id'] for d in tiny_gold[:3])}{', ...' if n > 3 else ''}); their predictions "
                      "are not a fair measure of the model"]
    # the streaming path: renamed copies of the training dialogues plus one new dialogue, in JSON Lines
    shard = tmp_path / "in" / "a.jsonl"
    shard.parent.mkdir()
    lines = [{"id": f"copy-{d['id']}", "turns": d["turns"]} for d in tiny_gold]
    lines.append({"id": "new", "turns": [{"sender": "customer", "utterances": ["Never seen."]}]})
    shard.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    done = subprocess.run([*cmd[:4], str(shard.parent), "--model", str(model), "--out", str(tmp_path / "pred")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "pred" / "manifest.json").read_text())
    assert manifest["totals"]["in_training"] == n and manifest["totals"]["dialogues"] == n + 1
    assert manifest["shards"][0]["in_training_examples"] == [f"copy-{d['id']}" for d in tiny_gold[:3]]
    assert sum(line.startswith(f"warning: {n} of {n + 1} dialogue(s)") for line in done.stderr.splitlines()) == 1


@pytest.mark.parametrize(("name", "parts"), [
    ("multi", [("stc3", "train_data_cn.json"), ("stc3", "train_data_en.json")]),
    ("opendomain-en", [("dbdc3", "en", "dev")]),
])
def test_shipped_models_know_their_training_dialogues(name, parts, shared_data):
    model = load_model(shipped_folder(name))
    meta = json.loads((shipped_folder(name) / "model.json").read_text())
    assert len(model.training_fingerprints) == meta["info"]["trained_on"]["dialogues"]
    for p in parts:
        corpus = dialeval.read_corpus(str(shared_data(*p)))
        assert model.in_training(corpus).count == len(corpus), p


def _renamed_copy(corpus: Corpus, old: str, new: str) -> Corpus:
    import dataclasses

    d = next(d for d in corpus.dialogues if d.id == old)
    return dataclasses.replace(corpus, dialogues=[*corpus.dialogues, dataclasses.replace(d, id=new)])


def test_repeated_training_dialogues_are_said_once_before_training(tiny, capsys, tmp_path):
    first = tiny.ids()[0]
    doubled = _renamed_copy(tiny, first, "copy-of-first")
    with pytest.warns(leakage.RepeatedDialoguesWarning,
                      match=rf"^1 of the {len(tiny) + 1} training dialogue\(s\) repeat another one's turns "
                            rf"\(ids {first} = copy-of-first\)"):
        Prior("both").fit(doubled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Prior("both").fit(tiny)                                      # no repeat: no warning
    with pytest.warns(leakage.RepeatedDialoguesWarning, match="held out in one fold and trained on in another"):
        from dialeval.models.cv import cross_validate
        cross_validate(doubled, "prior", folds=2)


def test_the_cli_says_a_repeat_once_in_one_line(tiny_gold_path, capsys, tmp_path):
    from dialeval.cli.main import run

    tiny_path = tiny_gold_path
    assert run(["cv", str(tiny_path), str(tiny_path), "--model", "prior", "--model", "uniform", "--folds", "2"]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    assert len(lines) == 1 and "repeat another one's turns" in lines[0] and "optimistic" in lines[0]
    assert run(["train", str(tiny_path), str(tiny_path), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    assert sum(x.startswith("warning:") for x in capsys.readouterr().err.splitlines()) == 1
