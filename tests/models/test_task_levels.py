"""Property: for every declared task with a real corpus, a fitted prior predicts exactly that task's scales (and
the corpus's scales that no task declares, such as ConTurE's DSTC9 ratings), one distribution per item of the
task's declared level (dialogue, block of the scale's sender, labelled turn)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import dialeval
from dialeval.models.baselines import Prior
from dialeval.models.data import Predicted
from dialeval.tasks import TASKS, task_of_scale


@pytest.fixture(scope="module")
def corpora(shared_data, stc3_train_en, tmp_path_factory) -> dict:
    """A small real corpus per declared task (DBDC3 dev for breakdown, its WOCHAT rendering for validity)."""
    from dialeval.io.wochat_writer import write_wochat

    stc3 = dialeval.read_corpus(json.loads(stc3_train_en.read_text(encoding="utf-8"))[:30])
    dbdc_dir = tmp_path_factory.mktemp("dbdc")
    src = shared_data("dbdc3", "en", "dev", "IRIS_100")
    for f in sorted(src.glob("*.log.json"))[:5]:
        shutil.copy(f, dbdc_dir / f.name)
    dbdc = dialeval.read_corpus(dbdc_dir)
    wochat_dir = tmp_path_factory.mktemp("wochat") / "xml"
    write_wochat(dbdc, wochat_dir)
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    wochat = dialeval.read_corpus(wochat_dir)
    return {"stc3-dq": stc3, "stc3-nd": stc3, "dbdc-breakdown": dbdc, "wochat-validity": wochat,
            "conture-impression": conture.subset(conture.ids()[:8])}


def _predicted_scales(pred: Predicted) -> set[str]:
    """Every scale of the prediction, whichever view holds it."""
    out = set(pred.quality or {}) | set(pred.turns or {})
    return out | {f"nugget_{s}" for s in ("customer", "helpdesk") if getattr(pred, s) is not None}


@pytest.mark.parametrize("name", list(TASKS))
def test_prior_predicts_the_tasks_scales_at_the_declared_level(name, corpora):
    task, corpus = TASKS[name], corpora[name]
    model = Prior(task.subtask or "both").fit(corpus)
    pred = model.predict(corpus, check_training=False)
    undeclared = {n for n in corpus.scales if task_of_scale(n) is None}
    assert _predicted_scales(pred) == set(task.scales) | undeclared
    for name in undeclared:  # a rating of the whole dialogue, for every dialogue
        assert corpus.scales[name].level == "dialogue" and pred.turns[name][1].shape[0] == len(corpus)
    senders = [t.sender for d in corpus.dialogues for t in d.turns]
    for scale in task.scales:
        width = len(corpus.scales[scale].levels)
        if task.level == "dialogue":
            assert pred.quality[scale].shape == (len(corpus), width)
        elif task.level == "block":  # every utterance block of the scale's sender
            sender = corpus.scales[scale].sender
            assert getattr(pred, sender).shape == (sum(s == sender for s in senders), width)
        else:  # every labelled turn, and turns of the labelled senders only
            rows, probs = pred.turns[scale]
            keys = {(d.id, t) for d in corpus.dialogues for t, turn in enumerate(d.turns)
                    if any(v is not None for v in turn.labels.get(scale, []))}
            start = np.cumsum([0] + [len(d.turns) for d in corpus.dialogues])
            flat = {int(start[i]) + t for i, d in enumerate(corpus.dialogues) for t in range(len(d.turns))
                    if (d.id, t) in keys}
            labelled_senders = {senders[r] for r in flat}
            assert flat <= set(rows.tolist()) and {senders[r] for r in rows.tolist()} == labelled_senders
            assert probs.shape == (len(rows), width)
