"""STC-3/DialEval datasets: read into the corpus model, write back, nothing lost."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest

import dialeval
from dialeval import DialevalError
from dialeval.io.stc3 import read_stc3, stc3_scales, write_stc3
from dialeval.io.stc3_gold import build_gold


def test_corpus_model_of_the_tiny_gold(tiny_gold):
    c = read_stc3(tiny_gold)
    assert c.format == "stc3" and c.ids() == ["d1", "d2", "d3"] and c.is_annotated()
    assert c.scales["A"].kind == "ordinal" and c.scales["A"].levels == ("2", "1", "0", "-1", "-2")
    assert c.scales["nugget_customer"].kind == "nominal" and c.scales["nugget_customer"].sender == "customer"
    assert [s.name for s in c.scales_at("dialogue")] == ["A", "S", "E"]
    d2 = c.dialogues[1]
    assert d2.labels["A"] == ["2", "2"] and d2.labels["S"] == ["1", "2"]
    assert [t.sender for t in d2.turns] == ["customer", "helpdesk", "customer"]
    assert d2.turns[0].utterances == ["The app crashes.", ""] and d2.turns[0].text == "The app crashes."
    assert d2.turns[2].labels == {"nugget_customer": ["CNUG*", "CNaN"]}


def test_round_trip_tiny(tiny_gold, tmp_path):
    write_stc3(read_stc3(tiny_gold), tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == tiny_gold


def test_round_trip_real_english_training_file(stc3_train_en, tmp_path):
    original = orjson.loads(stc3_train_en.read_bytes())
    corpus = dialeval.read_corpus(stc3_train_en)
    assert len(corpus) == 1672 and corpus.source == str(stc3_train_en)
    write_stc3(corpus, tmp_path / "en.json")
    assert orjson.loads((tmp_path / "en.json").read_bytes()) == original


def test_real_training_counts(stc3_train_cn):
    g = build_gold(stc3_train_cn)
    assert len(g.ids) == 3700 and set(g.n_annotators.tolist()) == {19}
    for k in "ASE":
        np.testing.assert_allclose(g.quality[k].sum(axis=1), 1.0)
    assert len(g.cust) + len(g.help) == int(g.n_turns.sum())
    # 19 annotators: every probability is a multiple of 1/19.
    np.testing.assert_allclose(np.round(g.cust * 19), g.cust * 19, atol=1e-9)


def test_gold_from_corpus_equals_gold_from_records(tiny_gold):
    a, b = build_gold(tiny_gold), dialeval.load_gold(read_stc3(tiny_gold)).data
    for k in "ASE":
        np.testing.assert_array_equal(a.quality[k], b.quality[k])
    np.testing.assert_array_equal(a.cust, b.cust)
    np.testing.assert_array_equal(a.help, b.help)


def test_test_file_is_not_a_gold_file(tiny_gold):
    for d in tiny_gold:
        d.pop("annotations")
    assert not read_stc3(tiny_gold).is_annotated()
    with pytest.raises(DialevalError, match="dialogue d1: annotations: no annotations: a gold file needs"):
        build_gold(tiny_gold)


def test_scales_are_declared_once():
    s = stc3_scales()
    assert set(s) == {"A", "S", "E", "nugget_customer", "nugget_helpdesk"}
    assert s["nugget_helpdesk"].levels == ("HNUG", "HNUG*", "HNaN")


def _named(annotators: list) -> dict:
    return {"id": "d", "turns": [{"sender": "customer", "utterances": ["hi"]}],
            "annotations": [{"annotator": a, "quality": {"A": 1, "S": 0, "E": -1}, "nugget": ["CNUG0"]}
                            for a in annotators]}


def test_named_annotators_are_read_and_written_so_no_panel_is_assumed(tmp_path):
    """An annotation project's STC-3 export lost who labelled, and the reader took the j-th labels of every
    dialogue for one person's (a panel), mixing people in a model's per-annotator heads (a COLLECT.md probe)."""
    from dialeval.models.turndata import panel_of

    records = [{**_named(["A001", "A004"]), "id": "d1"}, {**_named(["A003", "A004"]), "id": "d2"}]
    corpus = read_stc3(records)
    assert [d.annotators for d in corpus] == [["A001", "A004"], ["A003", "A004"]]
    assert corpus.dialogues[0].turns[0].annotators == ["A001", "A004"]
    assert panel_of(corpus.scales["A"], corpus.dialogues) is None
    write_stc3(corpus, str(tmp_path / "back.json"))
    again = json.loads((tmp_path / "back.json").read_text(encoding="utf-8"))
    assert [a["annotator"] for a in again[1]["annotations"]] == ["A003", "A004"]
    unnamed = read_stc3([{k: v for k, v in records[0].items() if k != "annotations"}
                         | {"annotations": [{"quality": {"A": 1, "S": 0, "E": -1}, "nugget": ["CNUG0"]}] * 2}])
    assert unnamed.dialogues[0].annotators is None   # the official files: no names, a panel as before


@pytest.mark.parametrize("bad", [3, "", None])
def test_an_annotator_that_is_no_id_is_refused(bad):
    with pytest.raises(DialevalError, match=r"annotations\[0\]\.annotator: annotator .* is not allowed"):
        read_stc3([_named([bad, "A002"])])
