"""Models of turn-level scales (DBDC breakdown, WOCHAT validity, ConTurE impression) on small real samples.

Samples: a few DBDC3 English dev dialogues copied to a temporary folder, and the same dialogues written as
WOCHAT XML (O, T, X -> VALID, ACCEPTABLE, INVALID) by dialeval's own writer.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import dialeval
from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.models import load_model, predict, train
from dialeval.models.base import Estimator
from dialeval.models.cv import cross_validate, fold_of
from dialeval.models.transfer import turn_scores
from dialeval.scoring import score

SMALL_NEURAL = {"hidden": 16, "epochs": 2, "ensemble": 1, "batch_size": 4}


@pytest.fixture(scope="module")
def dbdc_sample(shared_data, tmp_path_factory) -> Path:
    """12 dialogues of DBDC3 English dev (6 IRIS, 6 CIC) in a temporary folder."""
    out = tmp_path_factory.mktemp("dbdc") / "sample"
    for folder in ("IRIS_100", "CIC_115"):
        src = shared_data("dbdc3", "en", "dev", folder)
        (out / folder).mkdir(parents=True)
        for f in sorted(src.glob("*.log.json"))[:6]:
            shutil.copy(f, out / folder / f.name)
    return out


@pytest.fixture(scope="module")
def wochat_sample(dbdc_sample, tmp_path_factory) -> Path:
    from dialeval.io.wochat_writer import write_wochat

    out = tmp_path_factory.mktemp("wochat") / "xml"
    write_wochat(dialeval.read_corpus(dbdc_sample), out)
    return out


@pytest.fixture
def tiny(tiny_gold):
    return dialeval.read_corpus(tiny_gold)


def _labelled_keys(corpus, scale):
    return {(d.id, t) for d in corpus.dialogues for t, turn in enumerate(d.turns) if turn.labels.get(scale)}


@pytest.mark.parametrize("kind,params", [("uniform", {}), ("prior", {}), ("position", {}),
                                         ("linear", {"max_features": 2000}), ("neural", SMALL_NEURAL)])
def test_dbdc_train_predict_is_scored(dbdc_sample, tmp_path, kind, params):
    model = train(dbdc_sample, kind=kind, params=params, out=tmp_path / "m")
    assert list(model.scales) == ["breakdown"] and model.scales["breakdown"].senders == ("system",)
    records = predict(dbdc_sample, model=tmp_path / "m", out=tmp_path / "run.json")
    gold = dialeval.read_corpus(dbdc_sample)
    predicted = {(r["id"], t["turn"]) for r in records for t in r["turns"]}
    assert _labelled_keys(gold, "breakdown") <= predicted
    assert model.scales["breakdown"].first == 1 and not any(t == 0 for _, t in predicted)  # DBDC's opener
    for r in records:
        for t in r["turns"]:
            p = t["breakdown"]
            assert list(p) == ["O", "T", "X"] and abs(sum(p.values()) - 1) < 1e-5
            assert t["labels"]["breakdown"] == max(p, key=p.get)
    s = score(tmp_path / "run.json", dbdc_sample).summary()
    assert s["items"]["breakdown"]["scored"] == len(_labelled_keys(gold, "breakdown"))
    assert 0 <= s["scales"]["breakdown"]["jsd"] < 0.2
    again = predict(dbdc_sample, model=Estimator.load(tmp_path / "m"))
    assert again == records  # a saved model predicts what the fitted one did


def test_dbdc_prior_is_the_training_mean(dbdc_sample):
    """Golden value from a closed form: the mean of the annotators' shares over the labelled turns."""
    corpus = dialeval.read_corpus(dbdc_sample)
    shares = []
    for d in corpus.dialogues:
        for t in d.turns:
            labels = [x for x in t.labels.get("breakdown", []) if x is not None]
            if labels:
                shares.append([labels.count(lv) / len(labels) for lv in "OTX"])
    records = predict(dbdc_sample, model=train(corpus, kind="prior"))
    first = records[0]["turns"][0]["breakdown"]
    np.testing.assert_allclose([first[lv] for lv in "OTX"], np.mean(shares, axis=0), atol=2e-6)


def test_wochat_validity_train_predict(wochat_sample, tmp_path):
    model = train(wochat_sample, kind="linear", params={"max_features": 2000})
    assert "validity" in model.scales
    records = predict(wochat_sample, model=model, out=tmp_path / "run.json")
    assert all(list(t["validity"]) == ["VALID", "ACCEPTABLE", "INVALID"] for r in records for t in r["turns"])
    s = score(tmp_path / "run.json", wochat_sample).summary()
    assert set(s["scales"]["validity"]) == {"jsd", "mse", "nmd", "rsnod"}


def test_dbdc_model_transfers_to_wochat_and_conture(dbdc_sample, wochat_sample, tmp_path, shared_data):
    model = train(dbdc_sample, kind="prior")
    model.means = {"breakdown": np.array([0.5, 0.3, 0.2])}  # a known distribution
    rec = predict(wochat_sample, model=model)
    t = rec[0]["turns"][0]
    assert t["validity"] == {"VALID": 0.5, "ACCEPTABLE": 0.3, "INVALID": 0.2}
    # ConTurE's 0/1/2 is worst .. best: O -> 2, T -> 1, X -> 0; the turn score is the expected value
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    rec = predict(conture.subset(conture.ids()[:3]), model=model)
    t = rec[0]["turns"][0]
    assert t["overall impression"] == {"0": 0.2, "1": 0.3, "2": 0.5}
    assert turn_scores(rec)[0]["turns"][0]["score"] == pytest.approx(0.5 * 2 + 0.3 * 1)


def test_unknown_turn_scale_is_a_one_line_error(dbdc_sample, tiny):
    model = train(dbdc_sample, kind="prior")
    with pytest.raises(DialevalError) as e:
        predict(tiny, model=model)
    msg = str(e.value)
    assert "\n" not in msg and "nugget_customer" in msg and "breakdown" in msg
    stc3_model = train(tiny, kind="prior")
    with pytest.raises(DialevalError) as e:
        predict(dbdc_sample, model=stc3_model)
    assert "\n" not in str(e.value) and "'breakdown'" in str(e.value)


def test_cli_unknown_scale_error(dbdc_sample, tiny_gold, tmp_path, capsys):
    assert run(["train", str(dbdc_sample), "--out", str(tmp_path / "m"), "--model", "prior"]) == 0
    capsys.readouterr()
    p = tmp_path / "stc3.json"
    p.write_text(json.dumps(tiny_gold))
    assert run(["predict", str(p), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1 and "nugget_customer" in err


def test_cli_folder_out_for_a_one_file_run_is_refused(dbdc_sample, tmp_path, capsys):
    """``--out DIR/`` (a folder, by its slash) for what is one run file: refused before any work, naming a file."""
    assert run(["train", str(dbdc_sample), "--out", str(tmp_path / "m"), "--model", "prior"]) == 0
    capsys.readouterr()
    out = f"{tmp_path / 'run'}/"
    assert run(["predict", str(dbdc_sample), "--model", str(tmp_path / "m"), "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --out {out} ends in / (a folder)") and len(err.splitlines()) == 1
    assert err.endswith(f"{tmp_path / 'run' / dbdc_sample.stem}.json") and not (tmp_path / "run").exists()


def test_cli_to_dbdc_and_scores(dbdc_sample, tmp_path):
    m = tmp_path / "m"
    assert run(["train", str(dbdc_sample), "--out", str(m), "--model", "linear", "--param",
                "max_features=2000"]) == 0
    out = tmp_path / "labels"
    assert run(["predict", str(dbdc_sample), "--model", str(m), "--out", str(out), "--to", "dbdc",
                "--scores", str(tmp_path / "scores.json")]) == 0
    files = sorted(out.glob("*.labels.json"))
    assert len(files) == 12
    doc = json.loads(files[0].read_text())
    lab = doc["turns"][0]["labels"][0]
    assert set(lab) == {"breakdown", "prob-O", "prob-T", "prob-X"}
    assert lab["breakdown"] == max("OTX", key=lambda lv: lab[f"prob-{lv}"])
    s = score(out, dbdc_sample).summary()  # DBDC3's own layout is read back and scored
    assert s["items"]["breakdown"]["scored"] > 0
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert all(0 <= t["score"] <= 2 for r in scores for t in r["turns"])


def test_cv_never_splits_a_dialogue(dbdc_sample, monkeypatch, tmp_path):
    seen: list[set[str]] = []
    fit = Estimator.fit

    def spy(self, corpus):
        seen.append(set(corpus.ids()))
        return fit(self, corpus)

    monkeypatch.setattr(Estimator, "fit", spy)
    r = cross_validate(dbdc_sample, "prior", folds=3, out_dir=tmp_path)
    ids = dialeval.read_corpus(dbdc_sample).ids()
    assert len(seen) == 3 and r.columns[0] == "breakdown/jsd"
    for f, train_ids in enumerate(seen):
        held = json.loads((tmp_path / "cv-prior-folds" / f"fold-{f + 1}.json").read_text())
        held_ids = {h["id"] for h in held}
        assert held_ids == {i for i in ids if fold_of(i, 3) == f}
        assert not held_ids & train_ids and held_ids | train_ids == set(ids)
    assert all(np.isfinite(v) for v in r.mean.values())


def test_cli_cv_json_is_strict(dbdc_sample, capsys):
    assert run(["cv", str(dbdc_sample), "--folds", "2", "--model", "prior", "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["results"][0]["columns"][0] == "breakdown/jsd"


def test_cv_fmt_never_prints_nan():
    from dialeval.cli.models import _fmt, _half

    assert _fmt(float("nan")) == "n/a" and _half((float("nan"), float("nan"))) == "n/a"


# ------------------------------------------------------------------ what a probe of odd inputs found (models)

def test_train_on_files_of_other_formats_learns_every_files_scales(dbdc_sample, shared_data, tmp_path, capsys):
    """DBDC then ConTurE: both files' scales (it kept the first file's only, dropping ConTurE's labels)."""
    conture = shared_data("conture", "data.json")
    assert run(["train", str(dbdc_sample), str(conture), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    scales = json.loads((tmp_path / "m" / "model.json").read_text())["scales"]
    assert "breakdown" in scales and "overall impression" in scales
    assert "dialogues, to" in capsys.readouterr().err


def test_balancing_pools_of_one_annotator_an_item_leaves_them_as_they_are():
    from dialeval.models.pools import balance_pools

    one_hot = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no overflow on the way
        out = balance_pools(one_hot, np.array([0, 0, 1, 1]))
    assert np.array_equal(out, one_hot)


def test_a_model_of_every_senders_labels_predicts_dbdc_on_system_turns_only(dbdc_sample, tmp_path):
    """WOCHAT's validity labels users' turns too; DBDC's breakdown scale is the system's: predictions for DBDC
    (and its --to dbdc files) hold system turns only."""
    from dialeval.io.dbdc import read_dbdc
    from dialeval.io.wochat_writer import write_wochat

    corpus = read_dbdc(dbdc_sample)
    for d in corpus:
        for t in d.turns:
            if t.sender == "user":
                t.labels["breakdown"], t.annotators = ["X", "X"], ["u1", "u2"]
    write_wochat(corpus, tmp_path / "w.xml")
    assert run(["train", str(tmp_path / "w.xml"), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    assert run(["predict", str(dbdc_sample), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "lab"),
                "--to", "dbdc"]) == 0
    speakers = {}
    for log in dbdc_sample.rglob("*.log.json"):
        speakers |= {(log.name.split(".")[0], t["turn-index"]): t["speaker"]
                     for t in json.loads(log.read_text())["turns"]}
    written = [(f.name.split(".")[0], t["turn-index"]) for f in (tmp_path / "lab").glob("*.labels.json")
               for t in json.loads(f.read_text())["turns"]]
    assert written and {speakers[k] for k in written} == {"S"}


@pytest.mark.parametrize("edit, message", [
    (lambda a: a.__setitem__("turn/breakdown", np.array([0.5, 0.5])), "has shape (2,)"),
    (lambda a: a.__setitem__("turn/breakdown", np.array([-0.5, 1.0, 0.5])), "rows that are not distributions"),
])
def test_a_damaged_prior_is_refused_at_load(dbdc_sample, tmp_path, edit, message):
    assert run(["train", str(dbdc_sample), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    with np.load(tmp_path / "m" / "arrays.npz") as z:
        arrays = {k: z[k] for k in z.files}
    edit(arrays)
    np.savez(tmp_path / "m" / "arrays.npz", **arrays)
    with pytest.raises(DialevalError, match=r"arrays\.npz is not the file model\.json was saved with"):
        load_model(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    del meta["arrays_sha256"]  # as a model saved before the hash was recorded: the prior's own checks
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.raises(DialevalError, match=re.escape(message)):
        load_model(tmp_path / "m")


def test_predict_to_dbdc_refuses_a_folder_holding_an_earlier_run(dbdc_sample, tmp_path, capsys):
    assert run(["train", str(dbdc_sample), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    argv = ["predict", str(dbdc_sample), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "lab"), "--to",
            "dbdc"]
    assert run(argv) == 0
    before = sorted(p.name for p in (tmp_path / "lab").iterdir())
    capsys.readouterr()
    assert run(argv) == 2
    assert "the output folder exists and is not empty" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "lab").iterdir()) == before


def test_parameters_given_as_text_or_a_zero_learning_rate_are_refused(dbdc_sample):
    with pytest.raises(DialevalError, match="params 'C=1' are not allowed; allowed is a dict"):
        train(dbdc_sample, kind="linear", params="C=1")
    with pytest.raises(DialevalError, match="parameter lr = 0 is not allowed; allowed are numbers > 0"):
        train(dbdc_sample, kind="neural", params={"lr": 0})


def test_cv_of_several_files_lays_each_files_table_out_by_its_own_width(dbdc_sample, shared_data, capsys):
    """DBDC (4 scores) beside ConTurE (52): ConTurE's tables a row per score, as when it is cross-validated alone
    (they were laid out as DBDC's, 52 columns cut to nothing)."""
    conture = shared_data("conture", "data.json")
    assert run(["cv", str(dbdc_sample), str(conture), "--model", "prior", "--folds", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("│ overall impression JSD") for line in lines)
    assert any("breakdown JSD" in line and line.startswith("┃ fold") for line in lines)


def test_a_turn_model_predicts_a_corpus_with_no_turn_scale(dbdc_sample, shared_data, tmp_path):
    """DSTC9 has dialogue ratings only: a DBDC-trained model predicts its own scale on every system turn (the
    benchmark's DSTC9 system-level figure; a KeyError after sender filtering was added, found by the benchmark)."""
    assert run(["train", str(dbdc_sample), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    dstc9 = shared_data("dstc9", "chatbot1.json")
    assert run(["predict", str(dstc9), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.json")]) == 0
    records = json.loads((tmp_path / "r.json").read_text())
    assert records and all("breakdown" in t for r in records for t in r["turns"])


def test_a_model_of_dialogues_the_system_opens_predicts_the_first_turn_of_those_the_user_opens(shared_data, tmp_path):
    """Trained on CIC dialogues the system opens (its greeting at 0 unlabelled, the first label at 2), a model
    skipped the system's first turn, at 1, of every IRIS dialogue (which the user opens): 50 of 500 labelled
    turns missing from the run, without a word. Found by a models probe."""
    train_dir = tmp_path / "cic"
    train_dir.mkdir()
    src = shared_data("dbdc3", "en", "dev", "CIC_115")
    opened_by_system = [f for f in sorted(src.glob("*.log.json"))
                        if json.loads(f.read_text(encoding="utf-8"))["turns"][0]["speaker"] == "S"][:4]
    for f in opened_by_system:
        shutil.copy(f, train_dir / f.name)
    model = train(train_dir, kind="prior")
    assert model.scales["breakdown"].first == 1
    iris = shared_data("dbdc3", "en", "eval", "IRIS_50")
    gold = dialeval.read_corpus(iris)
    run_items = {(r["id"], t["turn"]) for r in predict(iris, model) for t in r["turns"]}
    assert _labelled_keys(gold, "breakdown") <= run_items


def test_a_model_saved_by_an_older_dialeval_predicts_the_labelled_turns_before_its_first(shared_data):
    """A model saved by an older dialeval kept the earliest labelled position of its training (2 on dialogues
    the system opens) and left the first system turn of IRIS dialogues out of the run (a warning said so since
    a probe found it); labelled turns of the senders a model knows are now predicted wherever they are."""
    from dataclasses import replace

    model = train(shared_data("dbdc3", "en", "dev", "CIC_115"), kind="prior")
    model.learnt["breakdown"] = replace(model.learnt["breakdown"], first=2)
    iris = shared_data("dbdc3", "en", "eval", "IRIS_50")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dialeval.DialevalWarning)
        run_items = {(r["id"], t["turn"]) for r in predict(iris, model) for t in r["turns"]}
    assert _labelled_keys(dialeval.read_corpus(iris), "breakdown") <= run_items


def _system_opens(shared_data, tmp_path: Path, name: str, edit) -> Path:
    """A folder holding one CIC log that is not in the sample (the system's greeting at 0, unlabelled), edited by
    ``edit``."""
    log = shared_data("dbdc3", "en", "dev", "CIC_115", "CIC0135.log.json")
    d = json.loads(log.read_text(encoding="utf-8"))
    assert d["turns"][0]["speaker"] == "S" and not d["turns"][0]["annotations"] and d["turns"][2]["annotations"]
    d["dialogue-id"] = name
    edit(d)
    out = tmp_path / name
    out.mkdir()
    (out / f"{name}.log.json").write_text(json.dumps(d), encoding="utf-8")
    return out


@pytest.mark.parametrize("kind", ["prior", "linear"])
def test_a_labelled_system_turn_at_position_0_is_predicted(dbdc_sample, shared_data, tmp_path, kind):
    """A model of DBDC (first predicted position 1: the greeting at 0 is never labelled there) left a labelled
    system turn at 0 out of the run, and warned that the model was 'saved by an older dialeval' (a probe)."""
    model = train(dbdc_sample, kind=kind, params={"max_features": 2000} if kind == "linear" else {})
    assert model.scales["breakdown"].first == 1

    def label_the_greeting(d):
        d["turns"][0]["annotations"] = d["turns"][2]["annotations"]

    logs = _system_opens(shared_data, tmp_path, "opened", label_the_greeting)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dialeval.DialevalWarning)
        [rec] = predict(logs, model)
    log = json.loads(next(logs.glob("*.log.json")).read_text(encoding="utf-8"))
    assert [t["turn"] for t in rec["turns"]] == [i for i, t in enumerate(log["turns"]) if t["speaker"] == "S"]


def test_a_dialogue_of_one_system_turn_is_predicted_when_labelled_and_else_the_error_says_why(dbdc_sample,
                                                                                               shared_data, tmp_path):
    """A labelled one-turn dialogue was refused with 'the model predicts turns of sender(s) system; the corpus has
    none (its senders: system)', which contradicts itself (a probe)."""
    model = train(dbdc_sample, kind="prior")

    def only_the_greeting(labelled):
        def edit(d):
            if labelled:
                d["turns"][0]["annotations"] = d["turns"][2]["annotations"]
            d["turns"] = d["turns"][:1]
        return edit

    [rec] = predict(_system_opens(shared_data, tmp_path, "one", only_the_greeting(True)), model)
    assert [t["turn"] for t in rec["turns"]] == [0]
    with pytest.raises(DialevalError, match=r"from position 1 on .*the corpus's turns of system are all before "
                                            r"position 1 and unlabelled"):
        predict(_system_opens(shared_data, tmp_path, "greeting", only_the_greeting(False)), model)


def test_predict_makes_the_folder_of_its_run_file(dbdc_sample, tmp_path, capsys):
    """`predict --out new/` suggested `new/NAME.json`, which then failed: 'cannot write: No such file or
    directory' (an end-to-end probe)."""
    assert run(["train", str(dbdc_sample), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    out = tmp_path / "new" / "deeper" / "run.json"
    assert run(["predict", str(dbdc_sample), "--model", str(tmp_path / "m"), "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))
    capsys.readouterr()


def test_predict_makes_the_folder_of_its_scores_file_before_writing_anything(dbdc_sample, tmp_path, capsys):
    """`predict --scores new/dir/s.json` wrote the run, then failed: 'cannot write: No such file or directory'
    (a probe); its folders are made, as --out's are."""
    assert run(["train", str(dbdc_sample), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    scores = tmp_path / "new" / "dir" / "s.json"
    assert run(["predict", str(dbdc_sample), "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.json"),
                "--scores", str(scores)]) == 0
    assert json.loads(scores.read_text(encoding="utf-8")) and (tmp_path / "r.json").is_file()
    capsys.readouterr()


def test_a_chat_between_people_is_refused_without_warnings_that_blame_the_model_s_age(wochat_sample):
    """A model of the system's turns on a human-human chat (user1, user2) warned once per scale to 'train it
    again' (a model saved by an older dialeval) before the error that named the real cause."""
    from dialeval.corpus import Corpus, Dialogue, Turn

    corpus = dialeval.read_corpus(wochat_sample)
    model = train(corpus, kind="prior")
    people = Corpus([Dialogue(d.id, [Turn("user1" if t.sender == "user" else "user2", t.utterances, t.labels)
                                     for t in d.turns]) for d in corpus.dialogues],
                    {n: _any_sender(s) for n, s in corpus.scales.items()}, corpus.format, "people.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dialeval.DialevalWarning)
        with pytest.raises(DialevalError, match="the model predicts turns of sender"):
            predict(people, model)


def _any_sender(scale):
    from dataclasses import replace

    return replace(scale, sender=None) if scale.level == "turn" else scale


def test_to_dbdc_on_a_corpus_of_other_turn_scales_is_refused_before_predicting(wochat_sample, tmp_path, capsys,
                                                                               monkeypatch):
    """`predict X.xml --to dbdc` ran the whole prediction, then refused: the run holds WOCHAT's validity scale, not
    DBDC's breakdown (a probe). The corpus's own turn scales tell it before the work."""
    import dialeval.models

    def never(*a, **k):
        raise AssertionError("predicted before refusing")

    monkeypatch.setattr(dialeval.models, "predict", never)
    assert run(["predict", str(wochat_sample), "--to", "dbdc", "--out", str(tmp_path / "lab")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "--to dbdc writes DBDC3's O/T/X breakdown scale only, and the run would hold this corpus's turn-level " \
           "scale(s) 'validity'" in err
    assert not (tmp_path / "lab").exists()
