"""Command-line problems a probe found, one test or more each: a folder --out of predict that is not ours or holds
another run, --folds beyond the dialogues, a --max-upload-mb that is not a size, --deadline forms, read-only admin
commands creating a database, an unused --delimiter, and the messages of folders given for files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.cli.demo import demo_dir
from dialeval.cli.main import run as cli
from dialeval.errors import DialevalError
from dialeval.service.leaderboard.deadline import parse_deadline as _parse_deadline

DEMO_GOLD = demo_dir() / "gold.json"   # 8 annotated STC-3 dialogues


def _error(capsys) -> str:
    """The one error line of the command just run (checked to be one line, without a traceback)."""
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if not x.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# 1. predict DIR --out FOLDER ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Two instant models of the demo corpus: prior and uniform."""
    from dialeval.models import train

    root = tmp_path_factory.mktemp("models")
    for kind in ("prior", "uniform"):
        train(str(DEMO_GOLD), kind=kind, out=root / kind)
    return {kind: root / kind for kind in ("prior", "uniform")}


@pytest.fixture
def shards(tmp_path, monkeypatch) -> Path:
    """In the test's folder (the cwd): shards/a.jsonl and shards/b.json, four demo dialogues each."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIALEVAL_PROGRESS", "0")
    dialogues = json.loads(DEMO_GOLD.read_text(encoding="utf-8"))
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "a.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dialogues[:4]), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps(dialogues[4:]), encoding="utf-8")
    return Path("shards")


def _predict(shards: Path, out: str, model: Path, *more: str) -> int:
    return cli(["predict", str(shards), "--model", str(model), "--out", out, *more])


def test_a_folder_of_other_files_is_refused_and_left_as_it_was(shards, models, capsys):
    Path("mine").mkdir()
    Path("mine", "a.jsonl").write_text("precious", encoding="utf-8")   # the name of a shard predict would write
    assert _predict(shards, "mine", models["prior"]) == 2
    message = _error(capsys)
    assert message.startswith("error: --out mine is a folder that is not empty (a.jsonl) and holds no manifest.json")
    assert "give a new or empty folder, e.g. mine-2" in message
    assert _files(Path("mine")) == {"a.jsonl": b"precious"}


def test_a_manifest_that_is_not_ours_is_refused(shards, models, capsys):
    Path("o").mkdir()
    Path("o", "manifest.json").write_text('{"mine": true}', encoding="utf-8")
    assert _predict(shards, "o", models["prior"]) == 2
    assert "--out o holds a manifest.json that is not the manifest of a `dialeval predict`" in _error(capsys)
    assert _files(Path("o")) == {"manifest.json": b'{"mine": true}'}


def test_an_empty_out_is_refused_not_taken_as_the_current_folder(shards, models, capsys):
    before = _files(Path("."))
    assert _predict(shards, "", models["prior"]) == 2
    assert _error(capsys).startswith("error: --out '' is empty")
    assert _files(Path(".")) == before
    from dialeval.pipeline import predict_many

    with pytest.raises(DialevalError, match="--out '' is empty"):
        predict_many(shards, "", model=models["prior"])


def test_another_run_into_the_same_folder_is_refused_naming_the_difference(shards, models, capsys):
    assert _predict(shards, "o", models["prior"]) == 0
    capsys.readouterr()
    first = _files(Path("o"))
    assert sorted(first) == ["a.jsonl", "b.jsonl", "manifest.json"]
    assert _predict(shards, "o", models["prior"], "--subtask", "quality") == 2
    message = _error(capsys)
    assert "--out o holds the shards of another run: it predicted subtasks quality+nugget, this run quality" in message
    assert "give a new or empty folder, e.g. o-2" in message
    assert _predict(shards, "o", models["uniform"]) == 2
    assert f"it was predicted by the model {models['prior']}, this run by {models['uniform']}" in _error(capsys)
    other = Path("other")   # another input of the same name as an earlier one
    other.mkdir()
    (other / "a.jsonl").write_text((shards / "b.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert _predict(other, "o", models["prior"]) == 2
    assert "its a.jsonl is the prediction of shards/a.jsonl, not of other/a.jsonl" in _error(capsys)
    assert _files(Path("o")) == first
    # the same run resumes as before
    assert _predict(shards, "o", models["prior"]) == 0
    assert "wrote 0 shard(s) to o (2 already done, skipped)" in capsys.readouterr().err
    assert _files(Path("o")) == first


def test_the_same_model_by_another_path_resumes(shards, models, tmp_path, capsys):
    """The manifest named the model by the path given: the same model's files given as an absolute path (or from
    another folder) were "another run" and refused."""
    import os

    assert _predict(shards, "pred", Path(os.path.relpath(models["prior"], tmp_path))) == 0
    before = _files(Path("pred"))
    capsys.readouterr()
    assert _predict(shards, "pred", models["prior"].resolve()) == 0
    assert "wrote 0 shard(s) to pred (2 already done" in capsys.readouterr().err
    after = _files(Path("pred"))
    assert {k: v for k, v in after.items() if k != "manifest.json"} == \
        {k: v for k, v in before.items() if k != "manifest.json"}


def test_shards_in_capitals_and_hidden_files_follow_the_readers_rule(shards, models, capsys):
    """A folder's DAY3.JSONL was never read (the suffix was matched case by case), and a hidden .x.jsonl was."""
    (shards / "DAY3.JSONL").write_text((shards / "a.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (shards / ".backup.jsonl").write_text("not json\n", encoding="utf-8")
    assert _predict(shards, "pred", models["prior"]) == 0
    assert sorted(p.name for p in Path("pred").glob("*.jsonl")) == ["DAY3.jsonl", "a.jsonl", "b.jsonl"]


def test_an_empty_folder_is_used(shards, models):
    Path("empty").mkdir()
    assert _predict(shards, "empty", models["prior"]) == 0
    assert sorted(_files(Path("empty"))) == ["a.jsonl", "b.jsonl", "manifest.json"]


# 2. cv --folds beyond the dialogues -----------------------------------------------------------------------------

@pytest.mark.parametrize("folds", ["99999999999999999999", "9"])
def test_more_folds_than_dialogues_is_refused_before_any_fold(folds, tmp_path, capsys):
    assert cli(["cv", str(DEMO_GOLD), "--model", "prior", "--folds", folds,
                "--runs-out", str(tmp_path / "runs")]) == 2
    assert f"--folds {folds} is more than the 8 dialogue(s) of the corpus" in (message := _error(capsys))
    assert "allowed are 2 to 8" in message and str(DEMO_GOLD) in message
    assert not (tmp_path / "runs").exists()


def test_too_few_folds_names_the_option(capsys):
    assert cli(["cv", str(DEMO_GOLD), "--model", "prior", "--folds", "1"]) == 2
    assert _error(capsys) == "error: --folds 1 is not allowed; allowed are integers >= 2"


def test_folds_of_any_size_are_told_apart_without_building_them():
    from dialeval.models.cv import cross_validate

    with pytest.raises(DialevalError, match=r"100000000000000000000 folds of 8 dialogue\(s\) leave "
                                            r"99999999999999999992 fold\(s\) empty"):
        cross_validate(str(DEMO_GOLD), "prior", folds=10**20)


# 3. serve --max-upload-mb ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-inf", "0", "4097"])
def test_an_upload_limit_that_is_not_a_size_is_one_line(value, tmp_path, capsys):
    db = tmp_path / "sub" / "s.db"
    assert cli(["serve", "--max-upload-mb", value, "--database-url", f"sqlite:///{db}"]) == 2
    message = _error(capsys)
    assert message.startswith("error: --max-upload-mb ") and "allowed are numbers of megabytes from 0.001 to 4096" \
        in message
    assert not (tmp_path / "sub").exists()   # refused before the database is opened


def test_the_upload_limit_bounds():
    from dialeval.cli.serve import MAX_UPLOAD_MB, upload_limit

    assert upload_limit(MAX_UPLOAD_MB) == MAX_UPLOAD_MB * 1048576 and upload_limit(0.001) == 1048
    assert upload_limit(None) is None


# 4. admin create-task --deadline --------------------------------------------------------------------------------

SUGGESTED = re.compile(r"\d{4}-\d{2}-\d{2}[^\s,;)]*")


@pytest.mark.parametrize(("text", "utc"), [
    ("2030-01-01Z", "2030-01-01T00:00:00+00:00"),
    ("2030-01-01+09:00", "2029-12-31T15:00:00+00:00"),
    ("2030-01-01-05:00", "2030-01-01T05:00:00+00:00"),
    ("2030-01-01T12:30Z", "2030-01-01T12:30:00+00:00"),
    ("2030-01-01 12:30+09:00", "2030-01-01T03:30:00+00:00"),
])
def test_deadlines_with_a_zone_are_accepted(text, utc):
    from datetime import UTC

    assert _parse_deadline(text).astimezone(UTC).isoformat() == utc


@pytest.mark.parametrize("text", ["2030-01-01", "2030-01-01T10:00", "2030-01-01 10:00:05", "20300101",
                                  "2030-01-01T10", "2030-01-01x10:00", "tomorrow", "2030-13-01Z", ""])
def test_every_deadline_a_message_suggests_is_accepted(text):
    with pytest.raises(DialevalError) as e:
        _parse_deadline(text)
    message = str(e.value)
    assert message.startswith(f"--deadline {text!r} ")
    suggested = SUGGESTED.findall(message.removeprefix(f"--deadline {text!r}"))
    assert suggested
    for s in suggested:
        assert _parse_deadline(s).tzinfo is not None, s


def test_a_deadline_without_zone_is_refused_before_the_database_is_created(tmp_path, capsys):
    db = tmp_path / "new" / "s.db"
    assert cli(["admin", "create-task", "t", "--subtask", "quality", "--gold", str(DEMO_GOLD),
                "--deadline", "2030-01-01", "--database-url", f"sqlite:///{db}"]) == 2
    assert _error(capsys) == ("error: --deadline '2030-01-01' has no time zone; add one, e.g. 2030-01-01T00:00Z (UTC) "
                              "or 2030-01-01T00:00+09:00")
    assert not (tmp_path / "new").exists()


# 5. read-only admin commands do not create a database -----------------------------------------------------------

@pytest.mark.parametrize("command", [["list-tasks"], ["list-teams"], ["approve-team", "x"], ["close-task", "x"],
                                     ["export-matrix", "x", "--out", "m"], ["annotation-status", "x"],
                                     ["exclude-annotator", "x", "A001"],
                                     ["export-annotations", "x", "--out", "a", "--to", "stc3"],
                                     ["invite", "x"], ["export-chats", "x", "--out", "c"],
                                     ["collection-status", "x"]])
def test_a_missing_sqlite_file_is_named_not_created(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "nodir" / "x.db"
    assert cli(["admin", *command, "--database-url", f"sqlite:///{db}"]) == 2
    assert _error(capsys).startswith(f"error: the SQLite database {db} (database URL sqlite:///{db}) does not exist")
    assert list(tmp_path.iterdir()) == []


def test_the_default_database_is_not_created_by_a_listing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DIALEVAL_DATABASE_URL", raising=False)
    assert cli(["admin", "list-teams"]) == 2
    assert "the SQLite database dialeval-service.sqlite (database URL sqlite:///dialeval-service.sqlite) does " \
           "not exist" in _error(capsys)
    assert list(tmp_path.iterdir()) == []
    # a command that adds to the database creates it, and the listing then reads it
    assert cli(["admin", "create-team", "t1"]) == 0
    capsys.readouterr()
    assert cli(["admin", "list-teams"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["t1"]


def test_a_folder_for_the_sqlite_file_is_named(tmp_path, capsys):
    assert cli(["admin", "list-tasks", "--database-url", f"sqlite:///{tmp_path}"]) == 2
    assert f"the SQLite database {tmp_path} (database URL sqlite:///{tmp_path}) is a folder" in _error(capsys)


def test_postgresql_is_not_affected():
    from dialeval.service.db import Database

    db = Database("postgresql+psycopg://u@localhost:1/d", migrate=False, create=False)   # never connects
    assert not db.is_sqlite
    db.dispose()


# 6. correlate --delimiter ---------------------------------------------------------------------------------------

def test_a_bad_delimiter_is_refused_without_scores(capsys):
    assert cli(["correlate", str(DEMO_GOLD), "--delimiter", "ab"]) == 2
    assert _error(capsys).startswith("error: delimiter 'ab' is not allowed; allowed is one character")


# 7. folders given for files, unreadable guidelines -------------------------------------------------------------

def test_a_gold_folder_is_named_a_folder(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert cli(["admin", "create-task", "t", "--subtask", "quality", "--gold", str(tmp_path),
                "--database-url", f"sqlite:///{db}"]) == 2
    assert _error(capsys).startswith(f"error: --gold {tmp_path} is a folder; give one gold file, or a ZIP")
    assert not db.exists()


def test_submitting_a_folder_is_named_a_folder(tmp_path, capsys):
    assert cli(["submit", str(tmp_path), "--server", "http://127.0.0.1:9", "--task", "t", "--token", "x"]) == 2
    assert _error(capsys).startswith(f"error: {tmp_path}: is a folder; give a run file (JSON), or a ZIP")


def test_missing_guidelines_are_one_plain_line(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert cli(["admin", "create-annotation", "p", "--corpus", str(DEMO_GOLD), "--scheme", "stc3", "--overlap", "1",
                "--guidelines", str(tmp_path / "nope.md"), "--database-url", f"sqlite:///{db}"]) == 2
    message = _error(capsys)
    assert message == f"error: --guidelines {tmp_path / 'nope.md'}: cannot read it (no such file or directory); " \
                      "give a Markdown file"
    assert "Errno" not in message and not db.exists()


# 7. FROM=TO pairs ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "message"), [
    ("", "--senders: empty; give FROM=TO pairs, e.g. user=customer,system=helpdesk"),
    ("user=customer,user=helpdesk", "--senders: 'user' is given twice (user=customer, user=helpdesk); give each "
                                    "name once"),
    ("user=", "--senders: 'user=' is not FROM=TO (e.g. user=customer,system=helpdesk)"),
])
def test_sender_maps_are_checked(value, message, tmp_path, capsys):
    demo = demo_dir() / "gold.json"
    assert cli(["corpus", "convert", str(demo), str(tmp_path / "x.json"), "--to", "stc3", "--senders", value]) == 2
    assert message in _error(capsys)


@pytest.mark.parametrize(("option", "message"), [
    (["--public-fraction", "0"], "--public-fraction 0.0 is not allowed; allowed are numbers in (0, 1]"),
    (["--seed", "-1"], "--seed -1 is not allowed; allowed are integers from 0 to "),
    (["--daily-limit", "0"], "--daily-limit 0 is not allowed; allowed are integers from 1 to "),
    (["--total-limit", "0"], "--total-limit 0 is not allowed; allowed are integers from 1 to "),
])
def test_create_task_names_the_option_of_a_refused_value(option, message, tmp_path, capsys):
    """It said 'public fraction 0.0', 'daily limit 0': the library's names, not the options."""
    gold = demo_dir() / "gold.json"
    assert cli(["admin", "create-task", "t1", "--subtask", "quality", "--gold", str(gold), *option,
                "--database-url", f"sqlite:///{tmp_path / 'db.sqlite'}"]) == 2
    assert _error(capsys).startswith(f"error: {message}")
