"""One scorer for every task: each declared task is scored by the same engine, as its declaration says.

Golden values: a gold file scored as its own run is 0 on every measure (each measure is 0 on equal
distributions, MEASURES.md); a run missing a dialogue under ``strict`` scores each declared measure's upper
bound there (the registry's declared range); ND's sender weighting is checked against its closed form.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.scoring.test_evaluate import perfect_run

import dialeval
from dialeval import DialevalError
from dialeval.cli.main import run as cli
from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.distributions import gold_distributions
from dialeval.io.conture import impression_scale
from dialeval.io.dbdc import breakdown_scale
from dialeval.io.turnruns import run_document
from dialeval.io.wochat import validity_scale
from dialeval.scoring import load_gold, worst
from dialeval.tasks import TASKS


def _turn_corpus(scale, fmt: str) -> Corpus:
    a, b, c = scale.levels
    return Corpus([
        Dialogue("d1", [Turn("user", ["hi"]), Turn("system", ["yo"], {scale.name: [a, b, b]}),
                        Turn("user", ["so"]), Turn("system", ["ok"], {scale.name: [c, c, a]})]),
        Dialogue("d2", [Turn("user", ["hey"]), Turn("system", ["hm"], {scale.name: [a, a, a]})]),
    ], {scale.name: scale}, fmt)


TURN_TASKS = {"dbdc-breakdown": (breakdown_scale(), "dbdc"), "wochat-validity": (validity_scale(), "wochat"),
              "conture-impression": (impression_scale(), "conture")}


def test_every_declared_task_is_covered_here():
    assert set(TASKS) == {"stc3-dq", "stc3-nd"} | set(TURN_TASKS)


@pytest.mark.parametrize("name", sorted(TURN_TASKS))
def test_turn_task_gold_as_run_is_zero_in_its_declared_columns(name):
    scale, fmt = TURN_TASKS[name]
    corpus = _turn_corpus(scale, fmt)
    g = load_gold(corpus)
    assert [t.name for t in g.tasks] == [name]
    s = dialeval.score(run_document(gold_distributions(corpus)), g)
    assert s.columns == TASKS[name].columns()
    assert s.means() == dict.fromkeys(s.columns, 0.0)
    assert s.settings["tasks"][name]["measures"] == list(TASKS[name].measures)


def test_stc3_tasks_go_through_the_same_engine(tiny_gold):
    g = load_gold(tiny_gold)
    assert [t.name for t in g.tasks] == ["stc3-dq", "stc3-nd"]
    s = dialeval.score(perfect_run(tiny_gold), g)
    assert s.columns == TASKS["stc3-dq"].columns() + TASKS["stc3-nd"].columns()
    assert all(v == pytest.approx(0.0, abs=1e-12) for v in s.means().values())


def test_strict_missing_dialogue_is_the_declared_worst():
    scale, fmt = TURN_TASKS["dbdc-breakdown"]
    corpus = _turn_corpus(scale, fmt)
    run = [r for r in run_document(gold_distributions(corpus)) if r["id"] == "d1"]
    s = dialeval.score(run, corpus, strict=True)
    row = s.matrix[s.ids.index("d2")]
    assert row.tolist() == [worst(m, 3) for m in TASKS["dbdc-breakdown"].measures]
    assert worst("mse", 3) == pytest.approx(2 / 3)  # MSE's declared range [0, 2/L]


def test_nd_sender_weighting_closed_form(tiny_gold):
    # a run that is perfect on helpdesk turns and uniform on customer turns: per dialogue
    # alpha * mean_customer + (1 - alpha) * mean_helpdesk, or the one sender's mean.
    run = perfect_run(tiny_gold)
    g = load_gold(tiny_gold)
    for rec in run:
        rec.pop("quality", None)
    senders = {d["id"]: [t["sender"] for t in d["turns"]] for d in tiny_gold}
    for rec in run:
        for t, sender in enumerate(senders[rec["id"]]):
            if sender == "customer":
                rec["nugget"][t] = dict.fromkeys(rec["nugget"][t], 1.0)
    alpha = 0.3
    s = dialeval.score(run, g, alpha=alpha)
    cust = dialeval.score(run, g, alpha=1.0)  # customer turns only where a dialogue has both senders
    for i, did in enumerate(s.ids):
        kinds = set(senders[did])
        c = cust.column("nugget.jsd")[i]
        want = c if kinds == {"customer"} else (0.0 if kinds == {"helpdesk"} else alpha * c)
        assert s.column("nugget.jsd")[i] == pytest.approx(want, abs=1e-12)


def test_turn_average_is_refused_for_a_sender_weighted_task(tiny_gold, tiny_gold_path, tmp_path, capsys):
    with pytest.raises(DialevalError, match="average 'turn' is not allowed for task 'stc3-nd'"):
        dialeval.evaluate(perfect_run(tiny_gold), tiny_gold, average="turn")
    q_only = [{k: v for k, v in r.items() if k != "nugget"} for r in perfect_run(tiny_gold)]
    assert dialeval.evaluate(q_only, tiny_gold, average="turn")["settings"]["tasks"]["stc3-dq"]["average"] == "turn"
    run = tmp_path / "run.json"
    run.write_text(json.dumps(perfect_run(tiny_gold)), encoding="utf-8")
    assert cli(["evaluate", str(run), str(tiny_gold_path), "--average", "turn"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "stc3-nd" in err and len(err.strip().splitlines()) == 1


def test_an_undeclared_scale_gets_a_task_of_its_own():
    from dialeval.corpus import Scale

    s = Scale("likeable", ("1", "2", "3"), "ordinal", "dialogue")
    c = Corpus([Dialogue("d1", [Turn("user", ["a"])], {"likeable": ["1", "3"]})], {"likeable": s}, "dstc9")
    g = load_gold(c)
    (task,) = g.tasks
    assert task.name == "likeable" and task.level == "dialogue"
    out = dialeval.evaluate([{"id": "d1", "likeable": {"1": 1, "3": 1}}], g)
    assert out["scales"]["likeable"] == dict.fromkeys(("jsd", "mse", "nmd", "rsnod"), 0.0)
    assert np.isfinite(list(out["scales"]["likeable"].values())).all()


def test_compare_ranks_turn_level_runs_and_leaves_out_undefined_dialogues(tmp_path):
    from dialeval.report.runs import compare_runs

    b, v = breakdown_scale(), validity_scale()
    corpus = Corpus([
        Dialogue(f"d{i}", [Turn("user", ["hi"]), Turn("system", ["yo"], {"breakdown": ["O", "X", "X"],
                                                                          **({"validity": ["VALID"]} if i else {})})])
        for i in range(4)], {"breakdown": b, "validity": v}, "wochat")
    gold_run = run_document(gold_distributions(corpus))
    uniform = [{"id": r["id"], "turns": [{"turn": 1, **{k: dict.fromkeys(s.levels, 1) for k, s in
                                                          (("breakdown", b), ("validity", v)) if k in r["turns"][0]}}]}
               for r in gold_run]
    for name, run in (("gold", gold_run), ("uniform", uniform)):
        (tmp_path / f"{name}.json").write_text(json.dumps(run), encoding="utf-8")
    c = compare_runs([tmp_path / "gold.json", tmp_path / "uniform.json"], load_gold(corpus), B=50, seed=1,
                     progress=False)
    assert c.n == 3 and any("d0" in note and "left out" in note for note in c.notes)
    assert list(c.settings["scoring"]["tasks"]) == ["dbdc-breakdown", "wochat-validity"]


def test_gold_from_a_pipe_asks_for_its_format_and_is_read_with_it(tmp_path, tiny_gold):
    """load_gold('/dev/stdin') looked for '<' in the pipe, used it up and then said 'not valid JSON'; now it
    says to give the format, and with the format it reads the pipe once."""
    import os
    import threading

    fifo = tmp_path / "gold.pipe"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w", encoding="utf-8") as fh:
            json.dump(tiny_gold, fh)

    with pytest.raises(DialevalError, match="pipe or a device, which is read only once"):
        dialeval.load_gold(fifo)          # detection opens nothing: no writer needed
    t = threading.Thread(target=feed)
    t.start()
    g = dialeval.load_gold(fifo, format="stc3")
    t.join(10)
    assert g.subtasks == ("quality", "nugget")


def test_a_gold_document_given_as_gold_says_what_it_is(tmp_path, tiny_gold, capsys):
    """`dialeval gold`'s output given as gold was 'the top level is a JSON dict; expected an array of
    dialogues' (an end-to-end probe followed the README from `dialeval gold` to `dialeval evaluate`)."""
    src = tmp_path / "annotated.json"
    src.write_text(json.dumps(tiny_gold), encoding="utf-8")
    assert cli(["gold", str(src), "-o", str(tmp_path / "g.json")]) == 0
    with pytest.raises(DialevalError, match=r"is a gold distributions file written by `dialeval gold`.*give the "
                                            r"annotated corpus it was built from: .*annotated\.json"):
        dialeval.load_gold(tmp_path / "g.json")
    capsys.readouterr()
    assert cli(["evaluate", str(tmp_path / "g.json"), str(src)]) == 0   # as a run it is still read (perfect)
