"""The probe's commands, through the CLI: ``gold`` and ``corpus stats`` refuse ``"annotations": null`` (they read the
dialogue as unlabelled and went on) and warn about ``"annotations": []`` beside annotated dialogues; DBDC, ConTurE
and DSTC9 nulls are refused; ``correlate --scores`` refuses a CSV row longer or shorter than its header (its extra
values were dropped); ``evaluate`` blames a null subtask's own dialogue. Each error is one line, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli.main import run as cli


def write_json(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def one_error(capsys) -> str:
    """The one line on stderr (no warning, no traceback), without its ``error: `` prefix."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err[len("error: "):].rstrip("\n")


@pytest.mark.parametrize("command", [["gold"], ["corpus", "stats"]])
def test_null_stc3_annotations_stop_gold_and_stats(tmp_path, tiny_gold, capsys, command):
    tiny_gold[0]["annotations"] = None
    p = write_json(tmp_path / "g.json", tiny_gold)
    out = tmp_path / "out.json"
    assert cli([*command, str(p), *(["-o", str(out)] if command == ["gold"] else [])]) == 2
    assert one_error(capsys) == (f"{p}: dialogue d1: annotations: 'annotations' must be a list, received None; "
                                 "allowed is a list with one annotation object per annotator ([], or no "
                                 "'annotations' key, for an unlabelled dialogue)")
    assert not out.exists()


def test_empty_stc3_annotations_beside_annotated_ones_are_said_by_gold(tmp_path, tiny_gold, capsys):
    """3 dialogues, d2 with []: the gold has 2 dialogues (d1, d3) and says why not 3, in one warning."""
    tiny_gold[1]["annotations"] = []
    p = write_json(tmp_path / "g.json", tiny_gold)
    out = tmp_path / "out.json"
    assert cli(["gold", str(p), "-o", str(out), "--scale", "A"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {p}: 1 dialogue(s) have an empty 'annotations' list ([]) while other dialogues are annotated: "
        "read as unlabelled, they are left out of the gold: d2",
        f"wrote {out}: A: 2 dialogue-level item(s)"]
    assert cli(["corpus", "stats", str(p)]) == 0
    assert capsys.readouterr().err.startswith(f"warning: {p}: 1 dialogue(s) have an empty 'annotations' list")


def test_null_dbdc_annotations_stop_gold(tmp_path, capsys):
    log = {"dialogue-id": "d1", "turns": [
        {"turn-index": 0, "speaker": "U", "utterance": "hi", "annotations": []},
        {"turn-index": 1, "speaker": "S", "utterance": "hello", "annotations": None},
        {"turn-index": 2, "speaker": "S", "utterance": "bye",
         "annotations": [{"annotator-id": "a", "breakdown": "O"}]}]}
    p = write_json(tmp_path / "set" / "d1.log.json", log)
    assert cli(["gold", str(tmp_path / "set"), "-o", str(tmp_path / "out.json")]) == 2
    assert one_error(capsys).startswith(f"{p}: dialogue d1: turns[1].annotations: 'annotations' must be a list, "
                                        "received None; allowed is a list of annotation objects")


def test_null_conture_and_dstc9_ratings_stop_gold(tmp_path, capsys):
    conture = [{"dialog_id": 0, "turns": [{"user": "User: hi", "chatbot": "Chatbot: hey", "overall impression": 1}],
                "dialog_ratings": [{"likeable": None}]}]
    p = write_json(tmp_path / "c" / "data.json", conture)
    assert cli(["gold", str(p), "--from", "conture"]) == 2
    assert one_error(capsys) == (f"{p}: dialogue 0: dialog_ratings[0].likeable: rating None is not allowed on "
                                 "'likeable'; allowed are 1, 2, 3 or 'N/A'")
    p = write_json(tmp_path / "d" / "chatbot1.json",
                   [{"context": "User: hi\nSystem: hello\n", "human (overall)": None}])
    assert cli(["gold", str(p), "--from", "dstc9"]) == 2
    assert one_error(capsys) == (f"{p}: dialogue chatbot1-000: [0].human (overall): rating None is not allowed on "
                                 "'human (overall)'; allowed are 1, 2, 3, 4, 5 or 'N/A'")


@pytest.mark.parametrize("cut,message", [
    (None, "line 2 has 3 fields; the header has 2 (id, score)"),
    (3, "line 4 has 1 field; the header has 2 (id, score)"),
])
def test_correlate_refuses_a_csv_row_longer_or_shorter_than_its_header(tmp_path, capsys, cut, message):
    """Six rated dialogues; the scores' rows hold a third value (dropped before), or row 3 lacks its score."""
    corpus = write_json(tmp_path / "chatbot1.json", [
        {"context": f"User: hi {i}\nSystem: hello\n", "likeable": 1 + i % 3} for i in range(6)])
    rows = [f"chatbot1-{i:03d},{i / 10},{i}" if cut is None else f"chatbot1-{i:03d},{i / 10}" for i in range(6)]
    if cut is not None:
        rows[cut - 1] = rows[cut - 1].split(",")[0]
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert cli(["correlate", str(corpus), "--scores", str(scores), "--dimension", "likeable", "-B", "50"]) == 2
    assert one_error(capsys) == f"{scores}: {message}"


def test_evaluate_blames_the_null_subtask_of_the_first_dialogue(tmp_path, tiny_gold, capsys):
    run = [{"id": d["id"], "quality": {k: {"2": 1} for k in "ASE"},
            "nugget": [{"CNaN": 1} if t["sender"] == "customer" else {"HNaN": 1} for t in d["turns"]]}
           for d in tiny_gold]
    run[0]["nugget"] = None
    gold = write_json(tmp_path / "gold.json", tiny_gold)
    rp = write_json(tmp_path / "run.json", run)
    assert cli(["evaluate", str(rp), str(gold)]) == 2
    assert one_error(capsys) == (f"{rp}: dialogue d1: nugget: nugget None is not allowed; allowed is a list with one "
                                 "distribution per turn, or no 'nugget' key in any dialogue of a run without that "
                                 "subtask")


def test_correlate_names_a_csv_rows_own_line_after_a_blank_line(tmp_path, capsys):
    """Blank lines are skipped but counted: the bad score on the file's line 4 is said to be on line 4 (the rows
    were numbered from 2 as if no line were blank)."""
    corpus = write_json(tmp_path / "chatbot1.json", [
        {"context": f"User: hi {i}\nSystem: hello\n", "likeable": 1 + i % 3} for i in range(6)])
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\nchatbot1-000,0.1\n\nchatbot1-001,abc\n", encoding="utf-8")
    assert cli(["correlate", str(corpus), "--scores", str(scores), "--dimension", "likeable", "-B", "50"]) == 2
    assert "line 4" in one_error(capsys)


def test_a_compressed_run_not_named_so_is_said_to_be_compressed(tmp_path, tiny_gold, capsys):
    """A gzip'd run named .json: "not UTF-8 text (byte 1)" said nothing of why; now it says it is gzip-compressed."""
    import gzip

    gold = write_json(tmp_path / "gold.json", tiny_gold)
    run = tmp_path / "run.json"
    run.write_bytes(gzip.compress(b"[]"))
    assert cli(["evaluate", str(run), str(gold)]) == 2
    assert "not UTF-8 text (byte 1); it is gzip-compressed: uncompress it first" in one_error(capsys)


def test_evaluates_json_report_names_the_run_and_the_gold(tmp_path, tiny_gold, capsys):
    """``evaluate --format json`` named neither file (its table's title does); its settings now do."""
    gold = write_json(tmp_path / "gold.json", tiny_gold)
    run = write_json(tmp_path / "run.json", [
        {"id": d["id"], "quality": {k: {"2": 1} for k in "ASE"},
         "nugget": [{"CNaN": 1} if t["sender"] == "customer" else {"HNaN": 1} for t in d["turns"]]}
        for d in tiny_gold])
    assert cli(["evaluate", str(run), str(gold), "--format", "json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert settings["run"] == str(run) and settings["gold"] == str(gold) and "dialeval_version" in settings
