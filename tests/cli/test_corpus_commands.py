"""The corpus commands on the real data (read in place) and on small files: stats, convert, gold, evaluate
(non-STC-3 gold), correlate; user errors are one line and exit status 2."""

from __future__ import annotations

import json

import pytest

from dialeval.cli.main import run
from dialeval.io import read_corpus


def test_corpus_stats_json(shared_data, capsys):
    assert run(["corpus", "stats", str(shared_data("dbdc3", "en", "eval", "IRIS_50")), "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["dialogues"], st["turns"], st["annotated_turns"]) == (50, 1000, 500)
    b = st["scales"]["breakdown"]
    assert b["annotators_per_item"] == {"min": 30, "median": 30, "max": 30}
    assert b["label_counts"] == {"O": 5176, "T": 4398, "X": 5426}
    assert -1 <= b["agreement"]["alpha"] <= 1 and b["agreement"]["measure"] == "Krippendorff's alpha (ordinal)"


def test_corpus_stats_table_conture(shared_data, capsys):
    assert run(["corpus", "stats", str(shared_data("conture", "data.json"))]) == 0
    text = capsys.readouterr().out
    assert "overall impression" in text and "1066" in text and "alpha is undefined" in text
    # written to a pipe (here captured), the table is up to 160 columns wide and its cells do not wrap (the scale's
    # name and its label counts were folded over several lines at 80 columns)
    [row] = [line for line in text.splitlines() if line.lstrip().startswith("overall impression")]
    assert "0:" in row and "1:" in row and "2:" in row, text


def test_convert_round_trip_and_mapping_stated(shared_data, tmp_path, capsys):
    src = shared_data("dbdc3", "en", "eval", "TKTK_50")
    assert run(["corpus", "convert", str(src), str(tmp_path / "w"), "--to", "wochat"]) == 0
    err = capsys.readouterr().err
    assert "O -> VALID, T -> ACCEPTABLE, X -> INVALID" in err and "tt_001 -> tt_00001" in err
    back = read_corpus(tmp_path / "w")
    assert len(back) == 50 and sum(len(d.turns) for d in back) == 1000
    assert run(["corpus", "convert", str(tmp_path / "w"), str(tmp_path / "s.json"), "--to", "stc3"]) == 2
    assert "give a sender map" in capsys.readouterr().err
    assert run(["corpus", "convert", str(tmp_path / "w"), str(tmp_path / "s.json"), "--to", "stc3",
                "--senders", "user=customer,system=helpdesk", "--drop-labels"]) == 0
    assert "dropped (not representable): labels of scale(s) validity" in capsys.readouterr().err
    s = read_corpus(tmp_path / "s.json")
    assert s.format == "stc3" and len(s) == 50 and s.dialogues[0].turns[0].sender == "customer"


def test_convert_stc3_to_stc3_keeps_labels(tmp_path, capsys):
    rec = [{"id": "1", "turns": [{"sender": "customer", "utterances": ["a"]},
                                 {"sender": "helpdesk", "utterances": ["b"]}],
            "annotations": [{"quality": {"A": 1, "S": 0, "E": -1}, "nugget": ["CNUG0", "HNUG*"]}]}]
    (tmp_path / "in.json").write_text(json.dumps(rec))
    assert run(["corpus", "convert", str(tmp_path / "in.json"), str(tmp_path / "out.json"), "--to", "stc3"]) == 0
    assert json.loads((tmp_path / "out.json").read_text()) == rec


def test_convert_stc3_to_wochat_with_a_sender_map(tmp_path, capsys):
    """STC-3's customer and helpdesk have no WOCHAT role: a one-line error asks for the map (the writer once
    crashed on them), and with --senders the corpus is written and reads back with the mapped senders."""
    rec = [{"id": "7", "turns": [{"sender": "customer", "utterances": ["a"]},
                                 {"sender": "helpdesk", "utterances": ["b"]}],
            "annotations": [{"quality": {"A": 1, "S": 0, "E": -1}, "nugget": ["CNUG0", "HNUG*"]}]}]
    (tmp_path / "in.json").write_text(json.dumps(rec))
    argv = ["corpus", "convert", str(tmp_path / "in.json"), str(tmp_path / "w"), "--to", "wochat", "--drop-labels"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the corpus has customer, helpdesk: give a sender map (--senders " in err
    assert run([*argv, "--senders", "customer=user,helpdesk=system"]) == 0
    assert "senders mapped: customer -> user, helpdesk -> system" in capsys.readouterr().err
    (d,) = read_corpus(tmp_path / "w")
    assert [t.sender for t in d.turns] == ["user", "system"] and d.meta["source_id"] == "7"


def test_gold_then_evaluate(shared_data, tmp_path, capsys):
    gold = shared_data("dbdc3", "en", "dev", "TKTK_100")
    assert run(["gold", str(gold), "-o", str(tmp_path / "g.json")]) == 0
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["dialeval"] == "gold" and sum(len(d["turns"]) for d in doc["dialogues"]) == 1000
    # a uniform run in the dialeval layout
    r = [{"id": d["id"], "turns": [{"turn": t["turn"], "breakdown": {"O": 1, "T": 1, "X": 1}} for t in d["turns"]]}
         for d in doc["dialogues"]]
    (tmp_path / "run.json").write_text(json.dumps(r))
    capsys.readouterr()
    assert run(["evaluate", str(tmp_path / "run.json"), str(gold), "--per-dialogue", str(tmp_path / "pd.csv")]) == 0
    summ = json.loads(capsys.readouterr().out)
    assert set(summ["scales"]["breakdown"]) == {"jsd", "mse", "nmd", "rsnod"}
    assert summ["dialogues"] == {"scored": 100, "missing": 0, "extra": 0}
    header = (tmp_path / "pd.csv").read_text().splitlines()[0]
    assert header == "id,breakdown/jsd,breakdown/mse,breakdown/nmd,breakdown/rsnod"
    assert run(["evaluate", str(tmp_path / "g.json"), str(gold), "--format", "table", "--average", "turn"]) == 0
    assert "0.000000" in capsys.readouterr().out


def test_correlate_commands(shared_data, tmp_path, capsys):
    assert run(["correlate", str(shared_data("conture", "data.json")), "-B", "100", "--format", "json",
                "--dimension", "likeable", "--plot", str(tmp_path / "c.png")]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [(r["dimension"], r["method"], r["n"]) for r in res["rows"]] == [("likeable", "pearson", 119),
                                                                            ("likeable", "spearman", 119)]
    assert res["settings"]["B"] == 100 and (tmp_path / "c.png").stat().st_size > 1000
    assert run(["correlate", str(shared_data("dstc9")), "--against", "human (overall)", "--dimension", "coherent",
                "-B", "50"]) == 0
    out = capsys.readouterr().out
    assert "system" in out and "11 systems" in out and "2200 dialogues" in out
    assert run(["correlate", str(shared_data("dstc9")), "-B", "50"]) == 2
    assert "give the automatic side" in capsys.readouterr().err


def test_correlate_model_scores_at_system_level(shared_data, tmp_path, capsys):
    c = read_corpus(shared_data("dstc9"))
    lines = ["id,turn,score"] + [f"{d.id},{t},{len(turn.text)}" for d in c for t, turn in enumerate(d.turns)
                                 if turn.sender == "system"]
    (tmp_path / "len.csv").write_text("\n".join(lines) + "\n")
    assert run(["correlate", str(shared_data("dstc9")), "--scores", str(tmp_path / "len.csv"), "--dimension",
                "human (overall)", "--method", "kendall", "-B", "50", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["level"], r["method"], r["n"]) for r in rows] == [("dialogue", "kendall", 2200),
                                                                 ("system", "kendall", 11)]


@pytest.mark.parametrize("argv,needle", [
    (["corpus", "stats", "/nonexistent/x.json"], "no such file or folder"),
    (["corpus", "convert", "/nonexistent", "/tmp/x.xml", "--to", "dstc9"],
     "error: --to: 'dstc9' is not allowed; allowed are stc3, wochat, dbdc\n"),
    (["cv", "/nonexistent.json", "--model", "forest"],
     "error: --model: 'forest' is not allowed; allowed are uniform, prior, position, linear, neural\n"),
])
def test_user_errors_are_one_line(argv, needle, capsys):
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1


def test_a_refused_senders_error_suggests_a_map_of_the_corpus_own_senders(tmp_path, capsys):
    """A human-human chat (user1, user2) to STC-3 suggested '--senders user=customer,system=helpdesk', a map that
    renames nothing in it (a probe of the collection and annotation chain); the suggestion is its own senders'."""
    from dialeval.corpus import Corpus, Dialogue, Turn
    from dialeval.io.wochat_writer import write_wochat

    chat = Corpus([Dialogue("human00000", [Turn("user1", ["hi"]), Turn("user2", ["hello"]),
                                           Turn("user1", ["bye"])])], {}, "wochat", "made up")
    write_wochat(chat, tmp_path / "hh")
    argv = ["corpus", "convert", str(tmp_path / "hh"), str(tmp_path / "s.json"), "--to", "stc3"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "(--senders user1=customer,user2=helpdesk)" in err, err
    assert run([*argv, "--senders", "user1=customer,user2=helpdesk"]) == 0
    assert [t.sender for t in read_corpus(tmp_path / "s.json").dialogues[0].turns] == ["customer", "helpdesk",
                                                                                        "customer"]
