"""DBDC3 labels files and DBDC logs: one labels file per dialogue of a run, and one rule for a dialogue id.

1. ``predict --to dbdc`` (:func:`dialeval.io.turnruns.write_dbdc_labels`) wrote no file for a dialogue of which
   the run predicts no turn (a log whose only system turn is the unlabelled greeting at position 0), so that
   ``evaluate`` counted the dialogue as missing from the run. Each dialogue now gets its file, ``"turns": []``.
2. The log reader took a blank ``"dialogue-id"`` (``"  "``) that the labels reader refuses, so a labels folder
   written from such logs was refused by ``evaluate``; both now refuse it, saying how many characters it had
   (the CLI's one-line error folds a run of spaces into one).
"""

from __future__ import annotations

import json
import re

import pytest

from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.io.dbdc import read_dbdc
from dialeval.io.turnruns import load_run_records, read_turn_run, write_dbdc_labels

DIST = {"O": 0.5, "T": 0.3, "X": 0.2}


def _ann(*labels: str) -> list[dict]:
    return [{"annotator-id": f"a{i}", "breakdown": lab} for i, lab in enumerate(labels)]


def _log(did: str, n_turns: int = 5) -> dict:
    """A DBDC log: the system's unlabelled greeting at 0, then user and labelled system turns by turns."""
    turns = [{"turn-index": 0, "speaker": "S", "utterance": "Hello.", "annotations": []}]
    for i in range(1, n_turns):
        user = i % 2 == 1
        turns.append({"turn-index": i, "speaker": "U" if user else "S", "utterance": f"line {i}",
                      "annotations": [] if user else _ann("O", "T", "X", "O")})
    return {"dialogue-id": did, "speaker-id": "", "group-id": "", "turns": turns}


def _write(folder, name: str, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc), encoding="utf-8")


# 1. a labels file for every dialogue of the run


def test_write_dbdc_labels_writes_a_file_for_a_dialogue_without_predicted_turns(tmp_path):
    records = [{"id": "a", "turns": [{"turn": 2, "breakdown": DIST}]}, {"id": "b", "turns": []}, {"id": "c"}]
    written = write_dbdc_labels(records, str(tmp_path / "run"))
    assert sorted(p.rsplit("/", 1)[-1] for p in written) == ["a.labels.json", "b.labels.json", "c.labels.json"]
    for did in ("b", "c"):
        assert json.loads((tmp_path / "run" / f"{did}.labels.json").read_text()) == {"dialogue-id": did, "turns": []}
    back, _ = load_run_records(str(tmp_path / "run"))
    assert sorted((r["id"], len(r["turns"])) for r in back) == [("a", 1), ("b", 0), ("c", 0)]


@pytest.mark.parametrize("records,predicts", [
    ([{"id": "a", "turns": [{"turn": 1, "validity": {"VALID": 1.0}}]}, {"id": "b", "turns": []}], "'validity'"),
    ([{"id": "a", "likeable": {"1": 0.5, "2": 0.5}}], "no turn-level scale"),
    ([], "no turn-level scale"),
])
def test_a_run_of_other_scales_only_is_still_refused(tmp_path, records, predicts):
    message = f"the run predicts no turn on scale 'breakdown' (it predicts {predicts}); --to dbdc writes"
    with pytest.raises(DialevalError, match=re.escape(message)):
        write_dbdc_labels(records, str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_predict_to_dbdc_then_evaluate_finds_every_dialogue(tmp_path, capsys):
    logs = tmp_path / "logs"
    _write(logs, "d1.log.json", _log("d1"))
    one_turn = _log("greeting_only")
    one_turn["turns"] = one_turn["turns"][:1]  # only the system's unlabelled greeting
    _write(logs, "greeting_only.log.json", one_turn)
    assert run(["train", str(logs), "--model", "prior", "--out", str(tmp_path / "m")]) == 0
    labels = tmp_path / "labels"
    capsys.readouterr()
    assert run(["predict", str(logs), "--model", str(tmp_path / "m"), "--out", str(labels), "--to", "dbdc"]) == 0
    assert f"wrote 2 DBDC3 labels file(s) to {labels}" in capsys.readouterr().err
    assert sorted(p.name for p in labels.iterdir()) == ["d1.labels.json", "greeting_only.labels.json"]
    assert json.loads((labels / "greeting_only.labels.json").read_text()) == {
        "dialogue-id": "greeting_only", "turns": []}
    # against a gold in which that dialogue has labelled turns (2 and 4): present, its turns missing
    gold = tmp_path / "gold"
    _write(gold, "d1.log.json", _log("d1"))
    _write(gold, "greeting_only.log.json", _log("greeting_only"))
    assert run(["evaluate", str(labels), str(gold), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["dialogues"] == {"scored": 2, "missing": 0, "extra": 0}
    assert summary["items"]["breakdown"] == {"scored": 2, "missing": 2}
    assert "missing from the run" not in err


def test_the_labels_reader_takes_an_empty_turns_list(tmp_path):
    import dialeval

    _write(tmp_path / "gold", "d1.log.json", _log("d1"))
    _write(tmp_path / "gold", "d2.log.json", _log("d2"))
    _write(tmp_path / "run", "d1.labels.json", {"dialogue-id": "d1", "turns": []})
    _write(tmp_path / "run", "d2.labels.json", {"dialogue-id": "d2", "turns": [
        {"turn-index": 2, "labels": [{"breakdown": "O", "prob-O": 0.5, "prob-T": 0.3, "prob-X": 0.2}]}]})
    gold = dialeval.read_corpus(tmp_path / "gold")
    from dialeval.distributions import gold_distributions

    r = read_turn_run(str(tmp_path / "run"), gold_distributions(gold))
    assert sorted(r.dialogue_ids) == ["d1", "d2"] and r.extra_dialogues == []
    assert len(r.rows["breakdown"]) == 1


# 2. one rule for a DBDC dialogue id


BLANK = [("", "''"), ("  ", "'  ' (2 characters, all whitespace"), (" \t\n", "' \\t\\n' (3 characters, all whitespace"),
         ("\u3000", "'\\u3000' (1 character, all whitespace")]


@pytest.mark.parametrize("did,shown", BLANK)
def test_both_readers_refuse_a_blank_dialogue_id_with_the_same_message(tmp_path, did, shown):
    log = _log(did)
    _write(tmp_path / "logs", "x.log.json", log)
    _write(tmp_path / "run", "x.labels.json", {"dialogue-id": did, "turns": []})
    said = "dialogue-id: 'dialogue-id' must be a non-empty string, received " + shown
    with pytest.raises(DialevalError) as e:
        read_dbdc(tmp_path / "logs")
    assert str(e.value).startswith(f"{tmp_path / 'logs' / 'x.log.json'}: {said}"), str(e.value)
    with pytest.raises(DialevalError) as e:
        load_run_records(str(tmp_path / "run"))
    assert str(e.value).startswith(f"{tmp_path / 'run' / 'x.labels.json'}: {said}"), str(e.value)


def test_an_id_with_spaces_around_a_character_is_kept_by_both_readers(tmp_path):
    _write(tmp_path / "logs", "x.log.json", _log(" d 1 "))
    _write(tmp_path / "run", "x.labels.json", {"dialogue-id": " d 1 ", "turns": []})
    assert [d.id for d in read_dbdc(tmp_path / "logs")] == [" d 1 "]
    assert [r["id"] for r in load_run_records(str(tmp_path / "run"))[0]] == [" d 1 "]


def test_the_cli_error_for_a_blank_id_shows_it_as_it_is_and_says_how_long_it_was(tmp_path, capsys):
    """The CLI's one-line error folded the id's two spaces into one (it folded every run of spaces, not only line
    breaks)."""
    _write(tmp_path / "logs", "x.log.json", _log("  "))
    assert run(["corpus", "stats", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "x.log.json: dialogue-id: 'dialogue-id' must be a non-empty string, received '  ' (2 characters, " \
           "all whitespace; an id needs a character other than whitespace)" in err
