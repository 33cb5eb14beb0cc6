"""predict --out DIR refuses, before writing anything, what it cannot do: a model that cannot predict what was
asked, a damaged model, a scheduler address that is not one, a scheduler that does not answer or has no worker;
it starts no more local workers than shards; its rejects name a shard the same way in-process and on Dask."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from tests.pipeline.conftest import outputs

import dialeval
from dialeval import distributed
from dialeval.errors import DialevalError, DialevalWarning
from dialeval.models import train
from dialeval.pipeline import load_estimator, predict_many, predict_shard

SUBTASKS = ("quality", "nugget")


@pytest.fixture(scope="module")
def models(tmp_path_factory, shared_data) -> dict[str, Path]:
    """Prior models (no encoder: instant): of both subtasks, of quality only, of DBDC's breakdown; a damaged one."""
    root = tmp_path_factory.mktemp("models")
    stc3 = json.loads(shared_data("stc3", "train_data_en.json").read_text(encoding="utf-8"))[:30]
    train(stc3, kind="prior", out=root / "both")
    train(stc3, kind="prior", subtask="quality", out=root / "quality")
    dbdc = root / "dbdc-train"
    dbdc.mkdir()
    for f in sorted(shared_data("dbdc3", "en", "dev", "IRIS_100").glob("*.log.json"))[:6]:
        shutil.copy(f, dbdc / f.name)
    train(dbdc, kind="prior", out=root / "dbdc")
    shutil.copytree(root / "both", root / "damaged")
    data = (root / "both" / "arrays.npz").read_bytes()
    (root / "damaged" / "arrays.npz").write_bytes(data[:len(data) // 2])
    return {name: root / name for name in ("both", "quality", "dbdc", "damaged")}


@pytest.fixture
def rj(tmp_path, test_dialogues, monkeypatch) -> Path:
    """In the test's folder (the cwd): rj/a.json (3 dialogues, an array) and rj/b.jsonl (a dialogue, one without
    turns, a line that is not JSON, a dialogue)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "rj").mkdir()
    (tmp_path / "rj" / "a.json").write_text(json.dumps(test_dialogues[:3]), encoding="utf-8")
    (tmp_path / "rj" / "b.jsonl").write_text(json.dumps(test_dialogues[3]) + "\n"
                                             + json.dumps({"id": "bad1", "turns": []}) + "\nnot json\n"
                                             + json.dumps(test_dialogues[4]) + "\n", encoding="utf-8")
    return Path("rj")


@pytest.fixture
def no_cluster(monkeypatch):
    """Any attempt to start or reach a cluster fails the test (the checks come first)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a cluster was started before the checks")

    monkeypatch.setattr(distributed, "connect", refuse)


# 1. the model/corpus checks of the single-file path, before any shard is written ----------------------------

@pytest.mark.parametrize("scheduler", [None, "local"])
@pytest.mark.parametrize("model,subtask", [("dbdc", "both"), ("quality", "nugget"), ("quality", "both")])
def test_a_model_that_cannot_predict_what_is_asked_is_refused_first(models, rj, no_cluster, model, subtask,
                                                                    scheduler):
    with pytest.raises(DialevalError) as single:  # the single-file path on the first shard
        dialeval.predict(str(rj / "a.json"), model=models[model], subtask=subtask)
    with pytest.raises(DialevalError) as many:
        predict_many(rj, "out", model=models[model], subtask=subtask, scheduler=scheduler)
    assert many.value.message == single.value.message
    assert many.value.file == str(rj / "a.json")
    assert not Path("out").exists()


def test_a_quality_model_writes_quality_and_its_manifest_says_so(models, rj):
    manifest = predict_many(rj, "out", model=models["quality"], subtask="quality")
    assert manifest["subtasks"] == ["quality"]
    lines = [json.loads(x) for name in ("a", "b") for x in Path("out", f"{name}.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and all(set(r) == {"id", "quality"} for r in lines)


# 3. a damaged model: one error, nothing written ----------------------------------------------------------------

@pytest.mark.parametrize("scheduler", [None, "local"])
def test_a_damaged_model_fails_before_anything_is_written(models, rj, no_cluster, scheduler):
    with pytest.raises(DialevalError, match="damaged"):
        predict_many(rj, "new", model=models["damaged"], scheduler=scheduler)
    assert not Path("new").exists()
    # an earlier run's folder is left exactly as it was
    predict_many(rj, "old", model=models["both"])
    Path("rj", "a.json").write_text(Path("rj", "a.json").read_text() + " ")  # a shard to do again
    before = outputs(Path("old"))
    with pytest.raises(DialevalError, match="damaged"):
        predict_many(rj, "old", model=models["damaged"], scheduler=scheduler)
    assert outputs(Path("old")) == before


# 2. scheduler addresses: checked up front, every failure one error within the timeout ---------------------------

@pytest.mark.parametrize("address", ["tcp://", "tcp://host", "tcp://:8786", "tcp://host:0", "tcp://host:65536",
                                     "tcp://host:port", "tcp://host:8786/x", "inproc://x", "tls://host:8786",
                                     "http://host:8786", "host:8786", "", "tcp:// :8799",
                                     "tcp://a host:8786"])
def test_a_scheduler_address_that_is_not_one_is_refused(rj, no_cluster, address):
    with pytest.raises(DialevalError, match=r"is not allowed.*allowed are local or a scheduler address tcp://HOST:PORT"):
        predict_many(rj, "out", scheduler=address)
    assert not Path("out").exists()


def _server(reply: bytes | None) -> tuple[socket.socket, int]:
    """A listening socket on a free port: with ``reply``, every connection gets those bytes and is closed;
    without, connections are never accepted (the port is open and stays silent)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    if reply is not None:
        def serve() -> None:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


@pytest.mark.parametrize("kind", ["silent", "http", "closed"])
def test_no_scheduler_at_the_address_is_one_error_within_the_timeout(models, rj, monkeypatch, kind):
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", "1s")
    srv, port = _server({"silent": None, "closed": None,
                         "http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"}[kind])
    if kind == "closed":
        srv.close()
    try:
        start = time.monotonic()
        with pytest.raises(DialevalError, match=f"^cannot reach a Dask scheduler at tcp://127.0.0.1:{port}: "):
            predict_many(rj, "out", model=models["both"], scheduler=f"tcp://127.0.0.1:{port}")
        assert time.monotonic() - start < 10
    finally:
        srv.close()
    assert not Path("out").exists()


def test_a_scheduler_without_workers_is_an_error_within_the_timeout(models, rj, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", "1s")
    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=":0",
                      silence_logs=50) as cluster:
        start = time.monotonic()
        with pytest.raises(DialevalError, match="has no worker: none joined within 1s; start some with `dask worker"):
            predict_many(rj, "out", model=models["both"], scheduler=cluster.scheduler_address)
        assert time.monotonic() - start < 10
    assert not Path("out").exists()


# 4. --workers: bounded, and at most one per shard -------------------------------------------------------------

TOO_MANY = distributed.MAX_WORKERS_PER_CPU * (os.cpu_count() or 1) + 1


@pytest.mark.parametrize("workers", [0, -1, True, 2.0, "2", TOO_MANY])
def test_local_workers_out_of_bounds_are_refused(rj, no_cluster, workers):
    with pytest.raises(DialevalError, match=r"--workers .* is not allowed; allowed are integers 1 to \d+"):
        predict_many(rj, "out", scheduler="local", workers=workers)
    assert not Path("out").exists()


def test_local_workers_are_capped_at_the_shards_and_a_worker_failure_is_one_error(models, rj, monkeypatch, capfd):
    """3 workers asked, 2 shards: 2 started, said in one line. The workers fail to load a damaged model the client
    was made to accept: one error, none of the workers' log lines, nothing written."""
    import dialeval.pipeline

    started = {}
    real = distributed.LocalCluster

    def spy(*args, **kwargs):
        started["n_workers"] = kwargs["n_workers"]
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", spy)
    monkeypatch.setattr(dialeval.pipeline, "load_estimator", lambda model: None)
    monkeypatch.setattr(dialeval.pipeline, "check_model", lambda *args: None)
    with pytest.raises(DialevalError, match=r"^the workers cannot load the model: .*damaged"), \
            pytest.warns(DialevalWarning, match=r"^--workers 3: starting 2, one per shard to predict$") as said:
        predict_many(rj, "out", model=models["damaged"], scheduler="local", workers=3)
    assert started == {"n_workers": 2} and len(said) == 1
    assert capfd.readouterr().err == ""
    assert not Path("out").exists()


# 5. rejects (and errors) name a shard as given, in-process and on Dask -------------------------------------------

def test_rejects_are_the_same_bytes_on_a_local_cluster(models, rj):
    inproc = predict_many(rj, "in", model=models["both"])
    dask = predict_many(rj, "dask", model=models["both"], scheduler="local", workers=1)
    assert dask == inproc
    assert outputs(Path("dask")) == outputs(Path("in"))
    rejects = [json.loads(x) for x in Path("dask", "rejects", "b.jsonl").read_text().splitlines()]
    assert [(r["file"], r["line"], r["id"]) for r in rejects] == [("rj/b.jsonl", 2, "bad1"), ("rj/b.jsonl", 3, None)]


def test_fail_fast_names_the_shard_by_its_label(models, rj, tmp_path):
    est = load_estimator(models["both"])
    with pytest.raises(DialevalError) as e:
        predict_shard((tmp_path / "rj" / "b.jsonl").resolve(), tmp_path, "b.jsonl", est, SUBTASKS, fail_fast=True,
                      label="rj/b.jsonl")
    assert str(e.value).startswith("rj/b.jsonl: dialogue bad1: line 2: item 1: ")
