"""Folds by a stable hash of the id, and k-fold cross-validation scored by the project's scorer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dialeval
from dialeval.errors import DialevalError
from dialeval.models.cv import CVResult, cross_validate, fold_of, t_interval

# sha256 of the UTF-8 ids, from `printf '%s' ID | sha256sum` (not from the code under test).
DIGESTS = {
    "4358": "e4dcce8e6a465149a2b5bf617971ae1b0cc8c178afd88e015abed107dff53255",
    "d1": "8b53639f152c8fc6ef30802fde462ba0be9cf085f7580dc69efd72e002abbb35",
    "abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "对话1": "84054ae3855757caf844836522be4b3f772e659769a92ccd3e41acee1953b171",
}
# 16 = 1 (mod 3) and (mod 5): a hex number mod 3 or 5 is the sum of its hex digits mod 3 or 5.
EXPECTED = {"4358": (0, 0), "d1": (1, 0), "abc": (1, 0), "对话1": (0, 2)}  # (k = 3, k = 5)


@pytest.mark.parametrize("did", list(DIGESTS))
def test_fold_of_is_sha256_mod_k(did):
    digit_sum = sum(int(c, 16) for c in DIGESTS[did])
    assert (digit_sum % 3, digit_sum % 5) == EXPECTED[did]
    assert (fold_of(did, 3), fold_of(did, 5)) == EXPECTED[did]
    assert fold_of(did, 10) % 2 == int(DIGESTS[did][-1], 16) % 2  # mod 10 keeps the parity of the last digit
    assert fold_of(did, 10) % 5 == EXPECTED[did][1]


def test_folds_partition_and_do_not_depend_on_the_other_ids():
    ids = [str(i) for i in range(500)]
    folds = [fold_of(i, 5) for i in ids]
    assert set(folds) == {0, 1, 2, 3, 4}
    assert all(60 <= folds.count(f) <= 140 for f in range(5))
    assert [fold_of(i, 5) for i in reversed(ids)] == folds[::-1]


def test_fold_of_rejects_bad_k():
    with pytest.raises(DialevalError, match="folds = 0 is not allowed"):
        fold_of("x", 0)


def test_t_interval_by_hand():
    # mean 2, sd 1, n 3: half-width t(0.975, 2) / sqrt(3) with t(0.975, 2) = 4.302652729749464 (tables)
    lo, hi = t_interval([1.0, 2.0, 3.0])
    assert hi - 2 == pytest.approx(4.302652729749464 / 3**0.5, rel=1e-12) and lo + hi == pytest.approx(4)


def _hamilton(p: np.ndarray, digits: int = 6) -> list[float]:
    """``p`` in units of 10**-digits summing to 1 (Hamilton's largest remainder method): every value floored, then
    the units missing given one each to the largest remainders."""
    scale = 10 ** digits
    exact = [float(x) * scale for x in p]
    units = [math.floor(e) for e in exact]
    for i in sorted(range(len(p)), key=lambda i: exact[i] - units[i], reverse=True)[:scale - sum(units)]:
        units[i] += 1
    return [u / scale for u in units]


def _hand_prior_records(train: list[dict], test: list[dict]) -> list[dict]:
    """The prior's predictions, built straight from the JSON labels (the floor of 1e-6 applied)."""
    levels = ["2", "1", "0", "-1", "-2"]
    types = {"customer": ["CNUG0", "CNUG", "CNUG*", "CNaN"], "helpdesk": ["HNUG", "HNUG*", "HNaN"]}
    q = {k: np.zeros(5) for k in "ASE"}
    nug = {s: np.zeros(len(t)) for s, t in types.items()}
    n_turns = {"customer": 0, "helpdesk": 0}
    for rec in train:
        anns = rec["annotations"]
        for a in anns:
            for k in "ASE":
                q[k][levels.index(str(a["quality"][k]))] += 1 / len(anns) / len(train)
        for t, turn in enumerate(rec["turns"]):
            n_turns[turn["sender"]] += 1
            for a in anns:
                nug[turn["sender"]][types[turn["sender"]].index(a["nugget"][t])] += 1 / len(anns)

    def dist(v: np.ndarray, labels: list[str]) -> dict:
        v = np.clip(v, 1e-6, None)
        return dict(zip(labels, _hamilton(v / v.sum()), strict=True))

    out = []
    for rec in test:
        out.append({"id": rec["id"], "quality": {k: dist(q[k], levels) for k in "ASE"},
                    "nugget": [dist(nug[t["sender"]] / n_turns[t["sender"]], types[t["sender"]])
                               for t in rec["turns"]]})
    return out


def test_prior_cv_matches_scores_of_hand_made_predictions(en60_records, en60, tmp_path):
    r = cross_validate(en60, "prior", folds=3, out_dir=tmp_path)
    assert isinstance(r, CVResult)
    assert (r.k, r.kind, r.subtasks, r.n_dialogues) == (3, "prior", ("quality", "nugget"), 60)
    fold = [fold_of(rec["id"], 3) for rec in en60_records]
    assert r.sizes == [fold.count(f) for f in range(3)]
    for f in range(3):
        test = [rec for rec, g in zip(en60_records, fold, strict=True) if g == f]
        train = [rec for rec, g in zip(en60_records, fold, strict=True) if g != f]
        want = dialeval.evaluate(_hand_prior_records(train, test), test)
        assert r.folds[f]["quality.nmd.S"] == pytest.approx(want["quality"]["nmd"]["S"], abs=1e-9)
        assert r.folds[f]["nugget.rnss"] == pytest.approx(want["nugget"]["rnss"], abs=1e-9)
        run = json.loads((tmp_path / "cv-prior-folds" / f"fold-{f + 1}.json").read_text())
        assert [x["id"] for x in run] == [x["id"] for x in test]
    for col, values in r.flat():
        assert r.mean[col] == pytest.approx(np.mean(values))
        lo, hi = r.interval[col]
        assert lo < r.mean[col] < hi
    full = json.loads((tmp_path / "cv-prior.json").read_text())
    assert [x["id"] for x in full] == [x["id"] for x in en60_records]
    pooled = dialeval.evaluate(full, en60)
    assert r.pooled["nugget.jsd"] == pytest.approx(pooled["nugget"]["jsd"])
    report = json.loads(json.dumps(r.to_dict()))
    assert report["interval_method"].startswith("t-interval")
    assert report["scoring"] == pooled["settings"]   # the report says how it scored, and with which version
    assert report["scoring"]["dialeval_version"] == dialeval.__version__ and report["scoring"]["alpha"] == 0.5


def test_same_folds_for_every_kind_and_deterministic(en60):
    a = cross_validate(en60, "uniform", folds=4, subtask="nugget")
    b = cross_validate(en60, "position", folds=4, subtask="nugget", params={"min_turns": 2})
    c = cross_validate(en60, "position", folds=4, subtask="nugget", params={"min_turns": 2})
    assert a.sizes == b.sizes and a.columns == b.columns == ["nugget.jsd", "nugget.rnss"]
    assert b.folds == c.folds and b.params == {"min_turns": 2}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "nope"}, "model kind 'nope' is not known"),
    ({"kind": "prior", "folds": 1}, "folds = 1 is not allowed; allowed are integers >= 2"),
    ({"kind": "prior", "folds": 100}, r"fold\(s\) empty \(\d+, .*; use fewer folds"),
    ({"kind": "position", "params": {"min_turns": -1}}, "min_turns = -1 is not allowed"),
    ({"kind": "prior", "subtask": "all"}, "subtask 'all' is not allowed"),
])
def test_errors(en60, kwargs, message):
    with pytest.raises(DialevalError, match=message):
        cross_validate(en60, **kwargs)


def test_unannotated_corpus_is_an_error(tiny_gold):
    for rec in tiny_gold:
        del rec["annotations"]
    with pytest.raises(DialevalError, match="no annotations"):
        cross_validate(tiny_gold, "prior", folds=2)


def test_subtask_without_annotations_is_an_error(tiny_gold):
    for rec in tiny_gold:
        for a in rec["annotations"]:
            del a["nugget"]
    with pytest.raises(DialevalError, match="no nugget annotations to cross-validate on"):
        cross_validate(tiny_gold, "prior", folds=2)
    assert cross_validate(tiny_gold, "prior", folds=2, subtask="quality").columns[0] == "quality.nmd.A"


def _synthetic(n: int = 20, text: str = "x") -> list[dict]:
    t = lambda s: {"sender": s, "utterances": [text]}  # noqa: E731
    return [{"id": str(i), "turns": [t("customer"), t("helpdesk")], "annotations": [
        {"quality": {"A": i % 3 - 1, "S": i % 5 - 2, "E": 1}, "nugget": ["CNUG0" if i % 2 else "CNaN", "HNaN"]}]}
        for i in range(n)]


@pytest.mark.filterwarnings("ignore::dialeval.models.leakage.RepeatedDialoguesWarning")  # made-up copies
def test_several_files_trained_together_scored_apart():
    """Two copies of one file: the prior's training mean is unchanged, so both results equal the single file's."""
    from dialeval.models.cv import cross_validate_many

    recs = _synthetic()
    single = cross_validate(recs, "prior", folds=4)
    both = cross_validate_many([recs, _synthetic(text="y")], "prior", folds=4)
    assert isinstance(both, list) and len(both) == 2
    for r in both:
        assert r.sizes == single.sizes and r.columns == single.columns
        for c in single.columns:
            assert r.mean[c] == pytest.approx(single.mean[c], abs=1e-12)
    assert len(cross_validate_many([recs], "prior", folds=4)) == 1  # always a list


@pytest.mark.filterwarnings("ignore::dialeval.models.leakage.RepeatedDialoguesWarning")  # made-up copies
def test_several_files_never_train_on_a_held_out_id(monkeypatch):
    """Each fold's model sees no dialogue of that fold from any file (the files share ids: translations)."""
    from dialeval.models import baselines
    from dialeval.models.cv import cross_validate_many

    seen: list[set[str]] = []
    fit = baselines.Prior.fit

    def spy(self, corpus):
        seen.append(set(corpus.ids()))
        return fit(self, corpus)

    monkeypatch.setattr(baselines.Prior, "fit", spy)
    cross_validate_many([_synthetic(), _synthetic(text="y")], "prior", folds=4)
    for f, ids in enumerate(seen):
        assert ids and all(fold_of(i, 4) != f for i in ids)


def test_read_dialogues_joins_files_and_records_languages(tmp_path):
    from dialeval.models import read_dialogues

    zh = [{"id": "1", "turns": [{"sender": "customer", "utterances": ["我的订单还没有到"]}]}]
    en = [{"id": "1", "turns": [{"sender": "customer", "utterances": ["My order has not arrived"]}]}]
    paths = []
    for name, recs in (("zh.json", zh), ("en.json", en)):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    corpus = read_dialogues(paths)
    assert len(corpus) == 2 and corpus.language == "zh+en" and "zh.json + " in corpus.source


@pytest.mark.parametrize(("n", "k"), [(2, 2), (6, 5)])
def test_empty_folds_named_are_among_the_k(en60_records, n, k):
    """2 folds of 2 dialogues named empty folds 2, 3, ... 11. Found by a models probe."""
    from dialeval.models.cv import folds_of

    records = next(r for r in _subsets(en60_records, n) if len({fold_of(x["id"], k) for x in r}) < k)
    present = {fold_of(x["id"], k) + 1 for x in records}
    with pytest.raises(DialevalError) as e:
        folds_of(dialeval.read_corpus(records), k)
    listed = {int(v) for v in e.value.message.split("empty (")[1].split(")")[0].split(", ")}
    assert listed == set(range(1, k + 1)) - present


def _subsets(records, n):
    return (records[i:i + n] for i in range(len(records) - n + 1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=7).filter(lambda xs: sum(xs) > 1e-3),
       st.sampled_from([0.0, 0.03]))
def test_a_run_files_probabilities_sum_to_one_in_their_digits(xs, floor):
    """Each predicted distribution is written in units of 1e-6 that add up to exactly 1e6 (plain rounding of
    three thirds gives 0.999999): equal to Hamilton's largest remainder method, within one unit of the
    probability, a zero kept zero."""
    from dialeval.models.data import rounded

    p = np.asarray(xs) / sum(xs)
    p[p < floor] = 0
    p = p / p.sum()
    levels = tuple(f"L{i}" for i in range(len(p)))
    got = list(rounded(levels, p).values())
    assert sum(round(v * 1e6) for v in got) == 10**6
    assert got == pytest.approx(_hamilton(p), abs=1.5e-6)
    assert all(abs(g - x) <= 1e-6 + 1e-12 for g, x in zip(got, p, strict=True))
    assert all(g == 0 for g, x in zip(got, p, strict=True) if x == 0)
