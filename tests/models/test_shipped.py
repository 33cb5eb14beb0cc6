"""The shipped default models: present, small, documented, and they predict the demo corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dialeval
from dialeval.cli.demo import demo_dir
from dialeval.models import LANGUAGES, SHIPPED, load_model, predict, shipped_folder
from dialeval.models.neural import Neural

MAX_BYTES = 25_000_000  # the budget for every shipped model together (25 MB, decimal)


def test_every_language_has_a_shipped_neural_model_for_both_subtasks():
    for lang in LANGUAGES:
        model = load_model(lang)
        assert isinstance(model, Neural) and model.subtasks == ("quality", "nugget")
        card = shipped_folder(lang) / "MODEL_CARD.md"
        assert card.is_file(), card
        text = card.read_text(encoding="utf-8")
        for must in ("dialeval train", "--seed 0", "Cross-validation", "Intended use", "Licence"):
            assert must in text, (card, must)


def test_shipped_models_fit_the_size_budget():
    total = sum(p.stat().st_size for p in SHIPPED.rglob("*") if p.is_file())
    assert total <= MAX_BYTES, f"{total / 1e6:.2f} MB shipped"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_shipped_model_predicts_the_demo_corpus(lang, tmp_path):
    gold = demo_dir() / "gold.json"
    out = tmp_path / "run.json"
    records = predict(gold, lang=lang, out=out)
    assert json.loads(out.read_text(encoding="utf-8")) == records
    summary = dialeval.evaluate(str(out), str(gold))
    assert summary["dialogues"]["missing"] == 0 and set(summary) >= {"quality", "nugget"}
    for q in summary["quality"]["nmd"].values():
        assert 0 <= q <= 1


def test_predicting_with_the_shipped_model_does_not_import_scikit_learn():
    """Prediction applies the lexical TF-IDF from the model's arrays: a cold ``dialeval predict`` does not pay for
    importing scikit-learn (most of a second)."""
    import subprocess
    import sys

    code = ("import sys, dialeval.models as m; from dialeval.cli.demo import demo_dir; "
            "m.predict(demo_dir() / 'gold.json', lang='en'); print(sorted(k for k in sys.modules if "
            "k.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_lone_surrogates_in_texts_and_ids_are_predicted_and_written(tmp_path):
    """JSON's "\\ud800" escape reads as a lone surrogate, which is not a character: the tokenizer, UTF-8 and orjson
    refuse it. A turn holding one is read as U+FFFD; an id holding one is written back as the same escape."""
    from dialeval.models import encoders

    src = tmp_path / "dialogues.json"
    src.write_text('[{"id": "d\\udc00", "turns": [{"sender": "customer", "utterances": ["hi \\ud800 there", "x"]},'
                   ' {"sender": "helpdesk", "utterances": ["ok"]}]}]', encoding="ascii")
    out = tmp_path / "run.json"
    records = predict(src, lang="en", out=out)
    assert [r["id"] for r in records] == ["d\udc00"]
    assert '"d\\udc00"' in out.read_text(encoding="ascii")
    assert json.loads(out.read_text(encoding="ascii")) == records
    assert np.array_equal(encoders.embed(["hi \ud800 there"], cache=False, progress=False),
                          encoders.embed(["hi \ufffd there"], cache=False, progress=False))
