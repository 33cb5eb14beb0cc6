"""Export of a project through the existing writers: read_corpus gives back every annotator's labels as
given, and ``dialeval gold`` builds distributions from them; the admin commands of annotation."""

from __future__ import annotations

import json
import random

import pytest
from annotation_support import Projects, annotate_all, chats_corpus

import dialeval
from dialeval.cli.main import run as cli
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.stc3 import stc3_scales
from dialeval.service.annotation.export import export_annotations
from dialeval.service.annotation.schemes import DIALOGUE


def _read_back(corpus) -> dict:
    got: dict = {}
    for d in corpus:
        for u, unit in [(DIALOGUE, d), *enumerate(d.turns)]:
            for scale, labs in unit.labels.items():
                for aid, lab in zip(unit.annotators, labs, strict=True):
                    if lab is not None and lab != "no":
                        got.setdefault((d.id, aid), {})[(u, scale)] = lab
    return got


@pytest.mark.parametrize("scheme,to", [("wochat", "wochat"), ("dbdc", "dbdc"), ("dbdc", "wochat"),
                                       ("conture", "wochat")])
def test_export_round_trip_turn_schemes(sqlite_url, tmp_path, scheme, to):
    pj = Projects(sqlite_url)
    try:
        codes = pj.project("p1", chats_corpus(6), scheme=scheme, overlap=3, n_codes=4)
        given = annotate_all(pj, codes, "p1", random.Random(5))
        out = tmp_path / "out"
        export_annotations(pj.db, "p1", to, out)
        back = dialeval.read_corpus(out)
        got = _read_back(back)
        if (scheme, to) == ("wochat", "wochat") or (scheme, to) == ("dbdc", "dbdc"):
            assert got == given                                   # every label as given, every annotator
        else:                                                     # mapped onto VALID / ACCEPTABLE / INVALID
            assert set(got) == set(given)
        for d in back:
            for t in d.turns:
                if t.sender == "system":
                    assert len(t.annotators) == 3                 # k = 3 on every system turn
                else:
                    assert not t.labels
        gold = tmp_path / "gold.json"
        assert cli(["gold", str(out), "--out", str(gold)]) == 0
        assert json.loads(gold.read_text())
    finally:
        pj.close()


def test_export_round_trip_stc3(sqlite_url, tmp_path):
    senders = ["customer", "helpdesk", "customer", "helpdesk"]
    corpus = Corpus([Dialogue(f"d{i}", [Turn(s, [f"u{i}.{j}"]) for j, s in enumerate(senders)]) for i in range(4)],
                    stc3_scales(), "stc3")
    pj = Projects(sqlite_url)
    try:
        codes = pj.project("s1", corpus, scheme="stc3", overlap=2, n_codes=3)
        given = annotate_all(pj, codes, "s1", random.Random(1))
        export_annotations(pj.db, "s1", "stc3", tmp_path / "s.json")
        back = dialeval.read_corpus(tmp_path / "s.json")
        # STC-3 JSON keeps each annotator's labels together, and their ids in each annotation's "annotator"
        # (without them a reader took the j-th labels of every dialogue for one person's: a COLLECT.md probe)
        from dialeval.models.turndata import panel_of

        assert all(d.annotators is not None and len(set(d.annotators)) == 2 for d in back)
        assert all(t.annotators == d.annotators for d in back for t in d.turns)
        same = len({tuple(d.annotators) for d in back}) == 1   # a panel only if the same people did every item
        assert (panel_of(back.scales["A"], back.dialogues) is not None) == same
        want: dict = {}
        for (did, _aid), labels in given.items():
            want.setdefault(did, []).append(sorted(labels.items()))
        got: dict = {}
        for d in back:
            for a in range(len(d.labels["A"])):
                lab = {(DIALOGUE, k): d.labels[k][a] for k in "ASE"}
                for j, t in enumerate(d.turns):
                    lab[(j, f"nugget_{t.sender}")] = t.labels[f"nugget_{t.sender}"][a]
                got.setdefault(d.id, []).append(sorted(lab.items()))
        assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
        assert all(len(v) == 2 for v in got.values())
        assert cli(["gold", str(tmp_path / "s.json"), "--out", str(tmp_path / "g.json")]) == 0
    finally:
        pj.close()


def test_admin_commands(db_url, tmp_path, capsys):
    db = ["--database-url", db_url]
    corpus_dir = tmp_path / "chats"
    from dialeval.io.wochat_writer import write_wochat
    write_wochat(chats_corpus(3), corpus_dir)
    (tmp_path / "g.md").write_text("# Judge each system turn\n- **VALID**: fine")
    assert cli(["admin", "create-annotation", "a1", "--corpus", str(corpus_dir), "--scheme", "wochat",
                "--overlap", "2", "--guidelines", str(tmp_path / "g.md"), "--assignment-timeout", "20m", *db]) == 0
    assert "annotation project a1: 3 items" in capsys.readouterr().err
    assert cli(["admin", "create-annotation", "a2", "--corpus", str(corpus_dir), "--scheme", "wochat",
                "--overlap", "2", "--assignment-timeout", "soon", *db]) == 2
    assert "--assignment-timeout 'soon' is not allowed" in capsys.readouterr().err
    assert cli(["admin", "create-annotation", "a2", "--scheme", "dbdc", "--overlap", "2", *db]) == 2
    assert "exactly one of --corpus PATH or --collection NAME" in capsys.readouterr().err
    assert cli(["admin", "create-annotation", "a1", "--corpus", str(corpus_dir), "--scheme", "wochat",
                "--overlap", "2", *db]) == 2
    assert "is taken" in capsys.readouterr().err
    assert cli(["admin", "invite", "a1", "--count", "2", *db]) == 0
    codes = capsys.readouterr().out.split()
    assert len(codes) == 2 and all(c.startswith("dai_") for c in codes)
    assert cli(["admin", "export-annotations", "a1", "--to", "wochat", "--out", str(tmp_path / "x"), *db]) == 2
    assert "no finished annotation yet" in capsys.readouterr().err
    pj = Projects(db_url)
    try:
        annotate_all(pj, codes, "a1", random.Random(2))
    finally:
        pj.close()
    assert cli(["admin", "annotation-status", "a1", "--format", "json", *db]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["complete_items"] == 3 and [a["finished"] for a in st["annotators"]] == [3, 3]
    assert cli(["admin", "annotation-status", "a1", *db]) == 0
    assert "Krippendorff's alpha so far" in capsys.readouterr().out
    assert cli(["admin", "export-annotations", "a1", "--to", "wochat", "--out", str(tmp_path / "x"), *db]) == 0
    back = dialeval.read_corpus(tmp_path / "x")
    assert all(t.annotators == ["A001", "A002"] for d in back for t in d.turns if t.sender == "system")
    assert cli(["admin", "export-annotations", "a1", "--to", "stc3", "--out", str(tmp_path / "y.json"), *db]) == 2
    assert "STC-3 senders are customer and helpdesk" in capsys.readouterr().err
    # The sender map the message asks for, and the labels STC-3 cannot hold dropped only when asked
    stc3 = ["admin", "export-annotations", "a1", "--to", "stc3", "--out", str(tmp_path / "y.json"),
            "--senders", "user=customer,system=helpdesk", *db]
    assert cli(stc3) == 2 and "--drop-labels" in capsys.readouterr().err
    assert cli([*stc3, "--drop-labels"]) == 0 and "dropped" in capsys.readouterr().err
    assert len(dialeval.read_corpus(tmp_path / "y.json")) == 3
    assert cli(["admin", "exclude-annotator", "a1", "A002", *db]) == 0
    assert "3 assignment(s) back" in capsys.readouterr().err
    assert cli(["admin", "exclude-annotator", "a1", "A009", *db]) == 2
