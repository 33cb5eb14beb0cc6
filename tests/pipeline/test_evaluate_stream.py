"""dialeval evaluate reads a predict --out folder, JSON Lines and gzip'ed runs and golds."""

from __future__ import annotations

import gzip
import json

from dialeval.cli.main import run
from dialeval.pipeline import predict_many


def test_evaluate_a_prediction_folder_and_jsonl_gold(tmp_path, monkeypatch, shared_data, capsys):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    gold = json.loads(shared_data("stc3", "train_data_en.json").read_text(encoding="utf-8"))[:30]
    gold_json = tmp_path / "gold.json"
    gold_json.write_text(json.dumps(gold), encoding="utf-8")
    shards = tmp_path / "in"
    shards.mkdir()
    for i in range(3):
        (shards / f"s{i}.jsonl").write_text("".join(json.dumps({**d, "system": "x"}) + "\n"
                                                    for d in gold[10 * i:10 * i + 10]), encoding="utf-8")
    predict_many(shards, tmp_path / "pred")
    lines = [x for i in range(3) for x in (tmp_path / "pred" / f"s{i}.jsonl").read_text().splitlines()]
    run_json = tmp_path / "run.json"
    run_json.write_text(json.dumps([{k: v for k, v in json.loads(x).items() if k != "meta"} for x in lines]))
    gold_gz = tmp_path / "gold.jsonl.gz"
    with gzip.open(gold_gz, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in gold)

    def summary(*args: str) -> dict:
        assert run(["evaluate", *args]) == 0
        got = json.loads(capsys.readouterr().out)
        assert (got["settings"].pop("run"), got["settings"].pop("gold")) == args  # named as given
        return got

    expected = summary(str(run_json), str(gold_json))
    assert expected["dialogues"]["scored"] == 30
    assert summary(str(tmp_path / "pred"), str(gold_json)) == expected
    assert summary(str(tmp_path / "pred" / "s*.jsonl"), str(gold_gz)) == expected
    assert summary(str(run_json), str(gold_gz)) == expected
