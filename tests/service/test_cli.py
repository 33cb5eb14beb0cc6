"""The organiser commands (dialeval admin ...), the matrix export, serve's checks and the command-line client."""

from __future__ import annotations

import json
import math

import pytest
from service_support import GOLD, RUN, FakeClock, LiveServer, dumps, make_run

import dialeval
from dialeval.cli.main import run as cli
from dialeval.io.stc3 import QUALITY_LEVELS
from dialeval.measures import nmd
from dialeval.service.app import create_app
from dialeval.service.config import Settings
from dialeval.service.db import Database


@pytest.fixture
def files(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_bytes(dumps(GOLD))
    runs = []
    for seed in (1, 2):
        p = tmp_path / f"run{seed}.json"
        p.write_bytes(dumps(make_run(GOLD, seed=seed)))
        runs.append(p)
    return gold, runs


def test_admin_create_submit_close_export(db_url, files, tmp_path, capsys):
    gold, (run1, run2) = files
    assert cli(["admin", "create-task", "dq", "--subtask", "quality", "--gold", str(gold), "--seed", "4",
                "--daily-limit", "3", "--database-url", db_url]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["public_dialogues"] == 10 and info["daily_limit"] == 3 and info["rank_by"] == "quality.nmd.A"
    assert cli(["admin", "create-task", "dq", "--subtask", "quality", "--gold", str(gold),
                "--database-url", db_url]) == 2
    assert "exists already" in capsys.readouterr().err
    assert cli(["admin", "create-team", "<team>", "--database-url", db_url]) == 0
    token = capsys.readouterr().out.strip()
    admin_token = None
    assert cli(["admin", "create-admin-token", "--database-url", db_url]) == 0
    admin_token = capsys.readouterr().out.strip()
    assert admin_token.startswith("da_")

    db = Database(db_url)
    app = create_app(Settings(database_url=db_url, clock=FakeClock()), db)
    try:
        with LiveServer(app) as server:
            for f in (run1, run2):
                assert cli(["submit", str(f), "--server", server.url, "--task", "dq", "--token", token,
                            "--format", "json"]) == 0
                assert json.loads(capsys.readouterr().out)["scored_on"]["half"] == "public"
            assert cli(["submit", str(run1), "--server", server.url, "--task", "dq", "--token", "bad"]) == 2
            assert "refused (401)" in capsys.readouterr().err
            assert cli(["leaderboard", "--server", server.url, "--task", "dq"]) == 0
            table = capsys.readouterr().out
            assert "public half: 10 of 20 dialogues; sorted by NMD A (lower is better" in table
            # written to a pipe (here captured), the table is up to 160 columns wide: a row is one line
            assert any("<team>" in line and "2026-03-01 12:00" in line for line in table.splitlines()), table
            assert cli(["leaderboard", "--server", server.url, "--task", "dq", "--format", "json", "--per", "run"]) == 0
            assert [r["team"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["<team>", "<team>"]
            assert cli(["me", "--server", server.url, "--token", token]) == 0
            assert "dq" in capsys.readouterr().out
            assert cli(["register", "newteam", "--server", server.url]) == 0
            assert capsys.readouterr().out.startswith("dt_")
            assert cli(["admin", "close-task", "dq", "--database-url", db_url]) == 0
            assert cli(["leaderboard", "--server", server.url, "--task", "dq", "--format", "json"]) == 0
            assert json.loads(capsys.readouterr().out)["final"] is True
            assert cli(["submit", str(run1), "--server", server.url, "--task", "dq", "--token", token]) == 2
            assert "refused (409)" in capsys.readouterr().err
    finally:
        db.dispose()

    out = tmp_path / "matrix"
    assert cli(["admin", "export-matrix", "dq", "--out", str(out), "--database-url", db_url]) == 0
    runs = (out / "runs.txt").read_text().split("\n")[:-1]
    assert runs == ["team-1", "team-2"]
    topics = (out / "topics.txt").read_text().split("\n")[:-1]
    assert topics == [g["id"] for g in GOLD]
    assert (out / "team-1.json").read_bytes() == run1.read_bytes()
    assert sorted(p.name for p in out.glob("*.json")) == ["team-1.json", "team-2.json"]  # DIR/*.json: runs only
    manifest = json.loads((out / "export.manifest").read_text())
    cols = manifest["columns"]
    assert sorted(p.name for p in out.glob("*.matrix")) == sorted(f"{c}.matrix" for c in cols)
    for c in cols:
        lines = (out / f"{c}.matrix").read_text().split("\n")[:-1]
        assert len(lines) == 20 and all(len(line.split(" ")) == 2 for line in lines)
        for j, f in enumerate((run1, run2)):
            want = dialeval.score(str(f), str(gold)).column(c)
            got = [float(line.split(" ")[j]) for line in lines]
            assert got == want.tolist()
    # One cell from the measure itself: NMD of dialogue 0, key A, run 1 (annotator counts as the gold).
    counts = [sum(str(a["quality"]["A"]) == lv for a in GOLD[0]["annotations"]) for lv in QUALITY_LEVELS]
    pred = [make_run(GOLD, seed=1)[0]["quality"]["A"][lv] for lv in QUALITY_LEVELS]
    first = float((out / "quality.nmd.A.matrix").read_text().split("\n")[0].split(" ")[0])
    assert math.isclose(first, nmd(pred, counts), rel_tol=1e-12)
    assert cli(["admin", "export-matrix", "dq", "--out", str(out), "--database-url", db_url]) == 2
    assert "earlier export" in capsys.readouterr().err


def test_admin_errors_are_one_line(sqlite_url, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "1", "turns": []}]')
    assert cli(["admin", "create-task", "x", "--subtask", "quality", "--gold", str(bad),
                "--database-url", sqlite_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "turns" in err
    assert cli(["admin", "create-task", "bad name!", "--subtask", "quality", "--gold", str(bad),
                "--database-url", sqlite_url]) == 2
    assert "task name 'bad name!' is not allowed" in capsys.readouterr().err
    assert cli(["admin", "close-task", "nope", "--database-url", sqlite_url]) == 2
    assert "no task named 'nope'" in capsys.readouterr().err
    assert cli(["admin", "list-tasks", "--database-url", "mysql://x@y/z"]) == 2
    assert "not supported" in capsys.readouterr().err
    assert cli(["serve", "--database-url", "sqlite://"]) == 2
    assert "in-memory" in capsys.readouterr().err
    assert cli(["serve", "--database-url", "postgresql://nobody@127.0.0.1:9/none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot open the database") and err.count("\n") == 1
    assert cli(["admin", "create-task", "x", "--subtask", "quality", "--gold", str(bad), "--deadline",
                "2026-01-01T00:00", "--database-url", sqlite_url]) == 2
    assert "no time zone" in capsys.readouterr().err


def test_a_database_that_cannot_be_this_services_is_one_line(tmp_path, capsys, monkeypatch):
    """Not an SQLite file (a gold file given by mistake), a schema from a newer dialeval, a PostgreSQL URL without
    a database (it used the user's default database and created the schema there), an empty URL (it fell back to
    the SQLite file here): each one line, exit 2, and nothing created."""
    import sqlite3

    gold = tmp_path / "gold.json"
    gold.write_text("[]")
    newer = tmp_path / "newer.sqlite"
    assert cli(["admin", "create-team", "t", "--database-url", f"sqlite:///{newer}"]) == 0
    with sqlite3.connect(newer) as c:
        c.execute("update alembic_version set version_num = '0099'")
    capsys.readouterr()
    for url, message in [(f"sqlite:///{gold}", "cannot open the database"),
                         (f"sqlite:///{newer}", "was written by a newer dialeval"),
                         ("postgresql://postgres@127.0.0.1:5432", "names no database; give one"),
                         ("", "the database URL is empty")]:
        assert cli(["admin", "list-tasks", "--database-url", url]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {message}") or message in err, err
        assert err.count("\n") == 1
    monkeypatch.setenv("DIALEVAL_DATABASE_URL", " ")
    monkeypatch.chdir(tmp_path)
    assert cli(["admin", "list-tasks"]) == 2 and "the database URL is empty" in capsys.readouterr().err
    assert gold.read_text() == "[]" and not (tmp_path / "dialeval-service.sqlite").exists()


def test_organiser_inputs_the_database_or_the_export_would_choke_on(sqlite_url, tmp_path, capsys):
    """An engine named by a common word ('you' became SYSTEM_NAME in every turn), an invitation label past its
    200 characters (cut silently), a seed past PostgreSQL's integer, an engine address past its column."""
    db = ["--database-url", sqlite_url]
    for argv, message in [
        (["admin", "create-collection", "c1", "--engine", "builtin:echo", "--engine-name", "you"],
         "engine name 'you' is not allowed: the exported chats replace"),
        (["admin", "create-collection", "c1", "--engine", "builtin:echo", "--engine-name", "I"],
         "engine name 'I' is not allowed"),
        (["admin", "invite-teams", "2", "--label", "x" * 201], "label has 201 characters; at most 200 are allowed"),
        (["admin", "create-collection", "c2", "--engine", "http://127.0.0.1:9/" + "p" * 1100],
         "allowed is a text of at most 1000 characters"),
    ]:
        assert cli([*argv, *db]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_a_task_whose_deadline_has_passed_is_created_with_a_warning(sqlite_url, capsys):
    from dialeval.cli.demo import demo_dir

    assert cli(["admin", "create-task", "late", "--subtask", "quality", "--gold", str(demo_dir() / "gold.json"),
                "--deadline", "2020-01-01T00:00Z", "--database-url", sqlite_url]) == 0
    assert "warning: task late: its deadline 2020-01-01T00:00:00+00:00 has passed already" in capsys.readouterr().err


def test_client_reports_an_unreachable_server(capsys, tmp_path):
    f = tmp_path / "r.json"
    f.write_bytes(dumps(RUN))
    assert cli(["submit", str(f), "--server", "http://127.0.0.1:9", "--task", "t", "--token", "x"]) == 2
    assert "cannot reach the service" in capsys.readouterr().err


def test_create_task_names_its_rank_by_option(sqlite_url, files, capsys):
    """A column --rank-by does not know is refused under the option's name, with the task's columns."""
    gold, _runs = files
    assert cli(["admin", "create-task", "dq", "--subtask", "quality", "--gold", str(gold), "--rank-by", "nosuch",
                "--database-url", sqlite_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --rank-by 'nosuch' is not allowed; allowed are quality.nmd.A, ") and \
        err.count("\n") == 1, err
