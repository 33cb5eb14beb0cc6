"""The organiser commands as an organiser types them: messages name the options typed (``--overlap``, not the
parameter ``overlap``), a negative count is a value out of range, exports never replace a file unasked,
``annotation-status`` stays short for a large k, and ``export-annotations`` suggests only its own options."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
import typer

sys.path.insert(0, str(Path(__file__).parent / "annotation"))
sys.path.insert(0, str(Path(__file__).parent / "collection"))
from annotation_support import Projects, annotate_all, chats_corpus
from collection_support import Chats

import dialeval
from dialeval.cli.main import app
from dialeval.cli.main import run as cli
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.stc3 import stc3_scales
from dialeval.service import invitations
from dialeval.service.annotation import projects
from dialeval.service.annotation.export import export_annotations
from dialeval.service.config import utcnow
from dialeval.service.errors import Invalid


def _error(capsys) -> str:
    """The one error line of the command just run (checked to be one line)."""
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.strip()


def _options(name: str) -> set[str]:
    """The options of ``dialeval admin NAME``, from its declaration."""
    admin = typer.main.get_command(app).commands["admin"]
    return {o for p in admin.commands[name].params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def _stc3_corpus(n: int = 3) -> Corpus:
    senders = ["customer", "helpdesk", "customer", "helpdesk"]
    return Corpus([Dialogue(f"d{i}", [Turn(s, [f"u{i}.{j}"]) for j, s in enumerate(senders)]) for i in range(n)],
                  stc3_scales(), "stc3")


@pytest.fixture
def chats_dir(tmp_path):
    from dialeval.io.wochat_writer import write_wochat

    write_wochat(chats_corpus(3), tmp_path / "chats")
    return tmp_path / "chats"


# ------------------------------------------------------------------------ 1. messages name the options typed


def test_a_refused_value_is_named_by_the_option_typed(sqlite_url, chats_dir, capsys):
    db = ["--database-url", sqlite_url]
    create = ["admin", "create-annotation", "a1", "--corpus", str(chats_dir), "--scheme", "wochat", *db]
    for argv, message in [
        ([*create, "--overlap", "0"], "error: --overlap 0 is not allowed; allowed are integers from 1 to 1000"),
        ([*create, "--overlap", "2", "--seed", "-5"], "error: --seed -5 is not allowed; allowed are integers "),
        ([*create, "--overlap", "2", "--assignment-timeout", "0"],
         "error: --assignment-timeout '0' is not allowed; allowed are durations from 10 seconds to 30 days"),
        ([*create, "--overlap", "2", "--assignment-timeout", "soon"], "error: --assignment-timeout 'soon' is not"),
        (["admin", "invite-teams", "2", "--label", "x" * 201, *db],
         "error: --label has 201 characters; at most 200 are allowed"),
    ]:
        assert cli(argv) == 2, argv
        assert _error(capsys).startswith(message)
    assert cli([*create, "--overlap", "2"]) == 0
    capsys.readouterr()
    assert cli(["admin", "invite", "a1", "--count", "0", *db]) == 2
    assert _error(capsys).startswith("error: --count 0 is not allowed; allowed are integers from 1 to 10000")
    assert cli(["admin", "invite", "a1", "--count", "1", "--label", "a\x00b", *db]) == 2
    assert _error(capsys).startswith("error: --label contains the invisible or control character U+0000")
    # a refusal that is not about one value passes as it was
    assert cli([*create, "--overlap", "2"]) == 2
    assert "is taken" in _error(capsys)


def test_python_callers_still_read_the_parameter_names(sqlite_url, chats_dir):
    pj = Projects(sqlite_url)
    try:
        corpus = dialeval.read_corpus(chats_dir)
        for kwargs, param, message in [
            ({"overlap": 0}, "overlap", "overlap 0 is not allowed; allowed are integers from 1 to 1000"),
            ({"overlap": 2, "timeout": "soon"}, "timeout", "timeout 'soon' is not allowed; allowed are durations"),
            ({"overlap": 2, "seed": -1}, "seed", "seed -1 is not allowed"),
            ({"overlap": 2, "guidelines": "x" * 200_001}, "guidelines", "guidelines has 200001 characters; at "
                                                                          "most 200000 are allowed"),
        ]:
            overlap = kwargs.pop("overlap")
            with pytest.raises(Invalid) as e:
                projects.create_project(pj.db, "p", corpus, "wochat", overlap, utcnow(), **kwargs)
            assert e.value.message.startswith(message) and e.value.param == param and e.value.status == 422
        with pytest.raises(Invalid, match=r"^count 0 is not allowed; allowed are integers from 1 to 10000$"):
            invitations.create_invitations(pj.db, "team", "", 0, utcnow())
        with pytest.raises(Invalid, match=r"^label has 201 characters; at most 200 are allowed$"):
            invitations.create_invitations(pj.db, "team", "", 1, utcnow(), label="x" * 201)
    finally:
        pj.close()


# ------------------------------------------------------------------------ 2. a negative count


def test_a_negative_count_is_a_value_out_of_range(sqlite_url, capsys):
    db = ["--database-url", sqlite_url]
    for count in ("-1", "-10000"):
        assert cli(["admin", "invite-teams", count, *db]) == 2
        assert _error(capsys) == f"error: COUNT {count} is not allowed; allowed are integers from 1 to 10000"
    assert cli(["admin", "invite-teams", *db, "-3"]) == 2  # after the options too
    assert _error(capsys).startswith("error: COUNT -3 is not allowed")
    assert cli(["admin", "invite-teams", "-1.5", *db]) == 2
    assert _error(capsys) == "error: COUNT: '-1.5' is not allowed; allowed are integers"
    # an option's value and a mistyped option read as before
    assert cli(["admin", "invite-teams", "2", "--label", "-1", *db]) == 0
    assert len(capsys.readouterr().out.split()) == 2
    assert cli(["admin", "invite-teams", "2", "--lable", "x", *db]) == 2
    assert "No such option: --lable" in _error(capsys)
    assert cli(["admin", "create-collection", "c1", "--engine", "builtin:echo", *db]) == 0
    capsys.readouterr()
    assert cli(["admin", "invite", "c1", "--count", "-1", *db]) == 2
    assert _error(capsys).startswith("error: --count -1 is not allowed; allowed are integers from 1 to 10000")


# ------------------------------------------------------------------------ 3. exports never replace a file unasked


def test_export_annotations_refuses_an_existing_file_unless_forced(sqlite_url, chats_dir, capsys):
    db = ["--database-url", sqlite_url]
    pj = Projects(sqlite_url)
    try:
        annotate_all(pj, pj.project("a1", chats_corpus(3), overlap=2, n_codes=2), "a1", random.Random(1))
    finally:
        pj.close()
    assert "--force" in _options("export-annotations")
    for to, name, extra in [("wochat", "x.xml", []),
                            ("stc3", "y.json", ["--drop-labels", "--senders", "user=customer,system=helpdesk"])]:
        out = chats_dir.parent / name
        out.write_text("keep me")
        argv = ["admin", "export-annotations", "a1", "--to", to, "--out", str(out), *extra, *db]
        assert cli(argv) == 2
        assert _error(capsys) == f"error: {out}: exists already; give another path, or --force to replace it"
        assert out.read_text() == "keep me"
        assert cli([*argv, "--force"]) == 0
        assert "wrote 3 dialogue(s)" in capsys.readouterr().err
        assert len(dialeval.read_corpus(out)) == 3
    # a new file needs no --force; an existing folder is refused as before, --force or not
    assert cli(["admin", "export-annotations", "a1", "--to", "wochat", "--out", str(chats_dir.parent / "z.xml"),
                *db]) == 0
    capsys.readouterr()
    assert cli(["admin", "export-annotations", "a1", "--to", "wochat", "--out", str(chats_dir), "--force", *db]) == 2
    assert "exists and is not empty" in _error(capsys)


def test_export_chats_refuses_an_existing_file_unless_forced(sqlite_url, tmp_path, capsys):
    db = ["--database-url", sqlite_url]
    ch = Chats(sqlite_url)
    try:
        code = ch.collection("c1", "builtin:echo", n_codes=1, engine_name="IRIS")[0]
        sid = ch.start(code, "Ann").json()["id"]
        assert ch.say(code, sid, "hello").status_code == 201
        ch.end(code, sid)
    finally:
        ch.close()
    out = tmp_path / "chats.xml"
    out.write_text("keep me")
    assert cli(["admin", "export-chats", "c1", "--out", str(out), *db]) == 2
    assert _error(capsys) == f"error: {out}: exists already; give another path, or --force to replace it"
    assert out.read_text() == "keep me"
    assert cli(["admin", "export-chats", "c1", "--out", str(out), "--force", *db]) == 0
    assert [d.id for d in dialeval.read_corpus(out)] == ["IRIS00000"]


# ------------------------------------------------------------------------ 4. annotation-status for a large k


def test_annotation_status_summarises_the_items_by_finished_annotations_for_a_large_k(sqlite_url, chats_dir,
                                                                                       capsys):
    db = ["--database-url", sqlite_url]

    def by_finished(name: str) -> str:
        assert cli(["admin", "annotation-status", name, *db]) == 0
        lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("items by finished annotations:")]
        assert len(lines) == 1
        return lines[0].removeprefix("items by finished annotations: ")

    for name, k in [("small", 2), ("ten", 10), ("large", 100), ("most", 1000)]:
        assert cli(["admin", "create-annotation", name, "--corpus", str(chats_dir), "--scheme", "wochat",
                    "--overlap", str(k), *db]) == 0
    assert by_finished("small") == "0: 3, 1: 0, 2: 0"  # as it always was
    assert by_finished("ten") == ", ".join(f"{n}: {3 if n == 0 else 0}" for n in range(11))
    assert by_finished("large") == "0: 3, 1-99: 0, 100: 0"
    assert by_finished("most") == "0: 3, 1-999: 0, 1000: 0"
    pj = Projects(sqlite_url)
    try:
        projects.create_project(pj.db, "some", chats_corpus(3), "wochat", 20, pj.clock(), seed=1)
        annotate_all(pj, invitations.create_invitations(pj.db, "annotation", "some", 3, pj.clock()), "some",
                     random.Random(1))
    finally:
        pj.close()
    assert by_finished("some") == "0: 0, 1-2: 0, 3-4: 3, 5-19: 0, 20: 0"
    assert cli(["admin", "annotation-status", "large", "--format", "json", *db]) == 0  # JSON: every count
    assert len(json.loads(capsys.readouterr().out)["items_by_finished"]) == 101


# ------------------------------------------------------------------------ 5. only the command's own options


def test_export_of_stc3_labels_to_wochat_suggests_only_options_the_command_has(sqlite_url, tmp_path, capsys):
    db = ["--database-url", sqlite_url]
    pj = Projects(sqlite_url)
    try:
        annotate_all(pj, pj.project("s1", _stc3_corpus(), scheme="stc3", overlap=2, n_codes=2), "s1", random.Random(1))
        with pytest.raises(Invalid) as e:  # in Python: the parameters export_annotations has
            export_annotations(pj.db, "s1", "wochat", tmp_path / "w.xml",
                               sender_map={"customer": "user", "helpdesk": "system"})
        assert "drop_labels=True" in e.value.message and "to='stc3'" in e.value.message
        assert "label_map" not in e.value.message and "scale=" not in e.value.message
    finally:
        pj.close()
    options = _options("export-annotations")
    for extra in ([], ["--senders", "customer=user,helpdesk=system"]):
        assert cli(["admin", "export-annotations", "s1", "--to", "wochat", "--out", str(tmp_path / "w"), *extra,
                    *db]) == 2
        err = _error(capsys)
        assert "WOCHAT XML" in err and "A, S, E, nugget_customer, nugget_helpdesk" in err
        suggested = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", err))
        assert suggested == {"--to", "--drop-labels"} and suggested <= options, err
        assert not (tmp_path / "w").exists()
    # what it suggests works
    assert cli(["admin", "export-annotations", "s1", "--to", "stc3", "--out", str(tmp_path / "s.json"), *db]) == 0
    assert len(dialeval.read_corpus(tmp_path / "s.json")) == 3
    assert cli(["admin", "export-annotations", "s1", "--to", "wochat", "--out", str(tmp_path / "w"), "--drop-labels",
                "--senders", "customer=user,helpdesk=system", *db]) == 0
    assert "dropped" in capsys.readouterr().err


def test_a_project_on_a_rated_corpus_says_its_own_labels_are_not_carried(sqlite_url, shared_data, tmp_path,
                                                                         capsys):
    """A ConTurE project's export lost the corpus's 11 dialogue ratings without a word, so `correlate` refused it
    (a probe of the collection and annotation chain): creating the project says which labels stay behind."""
    src = json.loads(shared_data("conture", "data.json").read_text(encoding="utf-8"))[:3]
    (tmp_path / "c.json").write_text(json.dumps(src), encoding="utf-8")
    assert cli(["admin", "create-annotation", "pd", "--corpus", str(tmp_path / "c.json"), "--scheme", "conture",
                "--overlap", "2", "--database-url", sqlite_url]) == 0
    err = capsys.readouterr().err
    turns = sum(1 for d in src for t in d["turns"] if t.get("overall impression") is not None)
    assert f"the corpus's own labels ({turns} on 'overall impression', " in err, err
    assert "'consistent'" in err and "its export holds those only" in err
    pj = Projects(sqlite_url)
    try:  # the export says it too, as its report's last line
        annotate_all(pj, invitations.create_invitations(pj.db, "annotation", "pd", 2, pj.clock()), "pd",
                     random.Random(1))
    finally:
        pj.close()
    assert cli(["admin", "export-annotations", "pd", "--to", "wochat", "--out", str(tmp_path / "x"),
                "--database-url", sqlite_url]) == 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"the corpus's own labels ({turns} on 'overall impression', ") and str(tmp_path) in last
