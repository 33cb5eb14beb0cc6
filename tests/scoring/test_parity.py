"""dialeval.evaluate against the independent plain-Python reference, on the real STC-3 training data."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

import dialeval
from dialeval import reference
from dialeval.io.stc3 import NUGGET_TYPES, QUALITY_KEYS, QUALITY_LEVELS


def _flat(result: dict) -> dict[str, float]:
    out = {}
    for sub in ("quality", "nugget"):
        for m, v in result.get(sub, {}).items():
            out.update({f"{sub}.{m}.{k}": x for k, x in v.items()} if isinstance(v, dict) else {f"{sub}.{m}": v})
    return out


def assert_same(got: dict, want: dict) -> None:
    g, w = _flat(got), _flat(want)
    assert g.keys() == w.keys()
    for k in g:
        assert g[k] == pytest.approx(w[k], abs=1e-9, rel=0), k
    assert got["dialogues"] == want["dialogues"]


def prior_run(gold: list[dict]) -> list[dict]:
    """The training mean of the annotators' distributions, the same for every dialogue (a baseline run)."""
    q = {k: np.zeros(5) for k in QUALITY_KEYS}
    nug = {s: np.zeros(len(t)) for s, t in NUGGET_TYPES.items()}
    for d in gold:
        for a in d["annotations"]:
            for k in QUALITY_KEYS:
                q[k][QUALITY_LEVELS.index(str(a["quality"][k]))] += 1
            for t, label in zip(d["turns"], a["nugget"], strict=True):
                nug[t["sender"]][NUGGET_TYPES[t["sender"]].index(label)] += 1
    qd = {k: dict(zip(QUALITY_LEVELS, (v / v.sum()).tolist(), strict=True)) for k, v in q.items()}
    nd = {s: dict(zip(NUGGET_TYPES[s], (v / v.sum()).tolist(), strict=True)) for s, v in nug.items()}
    return [{"id": d["id"], "quality": qd, "nugget": [nd[t["sender"]] for t in d["turns"]]} for d in gold]


def noisy_run(gold: list[dict], seed: int) -> list[dict]:
    """Dirichlet predictions with empty bins, shuffled, a tenth of the dialogues left out, two extra ids."""
    rng = np.random.default_rng(seed)

    def dist(levels):
        v = rng.dirichlet(np.full(len(levels), 0.7))
        v[rng.random(len(levels)) < 0.2] = 0.0
        if v.sum() == 0:
            v[0] = 1.0
        return {b: float(x) for b, x in zip(levels, v, strict=True) if x > 0 or rng.random() < 0.5}

    run = [{"id": d["id"], "quality": {k: dist(QUALITY_LEVELS) for k in QUALITY_KEYS},
            "nugget": [dist(NUGGET_TYPES[t["sender"]]) for t in d["turns"]]}
           for d in gold if rng.random() > 0.1]
    run += [{"id": "not-in-gold-1", "quality": run[0]["quality"], "nugget": []},
            {"id": "not-in-gold-2", "quality": run[0]["quality"], "nugget": []}]
    return [run[i] for i in rng.permutation(len(run))]


@pytest.fixture(scope="module")
def train_cn(request):
    path = request.getfixturevalue("stc3_train_cn")
    return orjson.loads(path.read_bytes())


def test_prior_run_on_training_data(train_cn):
    run = prior_run(train_cn)
    assert_same(dialeval.evaluate(run, train_cn), reference.evaluate(run, train_cn))


@pytest.mark.parametrize("alpha,strict,variant", [(0.5, False, "paper"), (0.3, True, "paper"),
                                                  (1.0, False, "2018"), (0.0, True, "2018")])
def test_noisy_run_with_missing_and_extra(train_cn, alpha, strict, variant):
    run = noisy_run(train_cn, seed=int(alpha * 10) + strict)
    got = dialeval.evaluate(run, train_cn, alpha=alpha, strict=strict, rsnod_variant=variant)
    assert_same(got, reference.evaluate(run, train_cn, alpha=alpha, strict=strict, rsnod_variant=variant))
    assert got["dialogues"]["extra"] == 2 and got["dialogues"]["missing"] > 0


def test_files_and_prepared_gold_agree(train_cn, stc3_train_en, tmp_path):
    en = orjson.loads(stc3_train_en.read_bytes())
    run = noisy_run(en, seed=7)
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(run))
    prepared = dialeval.load_gold(stc3_train_en)
    assert_same(dialeval.evaluate(str(path), prepared), reference.evaluate(run, en))
    # English files share ids and annotations with the Chinese ones.
    assert_same(dialeval.evaluate(run, train_cn), reference.evaluate(run, train_cn))
