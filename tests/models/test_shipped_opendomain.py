"""The shipped English open-domain model: documented, fast to load, and it predicts WOCHAT, ConTurE and DBDC
corpora out of the box (no --model)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import dialeval
from dialeval.cli.main import run
from dialeval.models import OPEN_DOMAIN, load_model, predict, shipped_folder
from dialeval.models.neural import Neural

SRC = Path(dialeval.__file__).resolve().parents[1]


def test_open_domain_model_is_a_documented_breakdown_model():
    model = load_model(OPEN_DOMAIN)
    assert isinstance(model, Neural) and list(model.scales) == ["breakdown"]
    assert model.scales["breakdown"].levels == ("O", "T", "X")
    assert model.params["pools"] == "balance"  # DBDC3 dev's two annotator pools balanced (its model card)
    text = (shipped_folder(OPEN_DOMAIN) / "MODEL_CARD.md").read_text(encoding="utf-8")
    for must in ("dialeval train", "--seed 0", "--param pools=balance", "DBDC3", "ConTurE", "DSTC9", "Intended use",
                 "Licence"):
        assert must in text, must


def test_open_domain_model_loads_in_a_fresh_process_within_3_seconds():
    code = ("import time; t = time.perf_counter(); from dialeval.models import load_model; "
            "load_model('open'); print(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert float(done.stdout.strip()) <= 3.0


def test_wochat_xml_out_of_the_box(shared_data, tmp_path):
    from dialeval.io.wochat_writer import write_wochat

    src = shared_data("dbdc3", "en", "eval", "IRIS_50")
    sample = tmp_path / "dbdc"
    sample.mkdir()
    for f in sorted(src.glob("*.log.json"))[:3]:
        shutil.copy(f, sample / f.name)
    xml = tmp_path / "xml"
    write_wochat(dialeval.read_corpus(sample), xml)
    one = sorted(xml.glob("*.xml"))[0]
    out = tmp_path / "run.json"
    assert run(["predict", str(one), "--out", str(out)]) == 0
    records = json.loads(out.read_text())
    assert records and all("validity" in t for t in records[0]["turns"])
    s = dialeval.score(out, one).summary()
    assert s["items"]["validity"]["scored"] > 0


def test_conture_out_of_the_box_and_correlate(shared_data, tmp_path):
    conture = dialeval.read_corpus(shared_data("conture", "data.json"))
    small = conture.subset(conture.ids()[:4])
    records = predict(small)
    assert all(set(t) == {"turn", "overall impression", "labels"} for r in records for t in r["turns"])
    path = tmp_path / "scores.json"
    assert run(["predict", str(shared_data("conture", "data.json")), "--out", str(tmp_path / "run.json"),
                "--scores", str(path)]) == 0
    scores = json.loads(path.read_text())
    assert len(scores) == 119 and sum(len(r["turns"]) for r in scores) >= 1066
    assert run(["correlate", str(shared_data("conture", "data.json")), "--scores", str(path), "-B", "20",
                "--format", "json"]) == 0
