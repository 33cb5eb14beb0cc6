"""Prediction on Dask: a LocalCluster of 2 worker processes writes the in-process bytes, also when a worker dies."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
from tests.pipeline.conftest import outputs, write_shards

from dialeval.errors import DialevalError
from dialeval.pipeline import predict_many


@pytest.fixture(scope="module")
def reference(tmp_path_factory, test_dialogues):
    """Five shards (one with a dialogue to reject) and their in-process prediction (empty cache)."""
    root = tmp_path_factory.mktemp("dist")
    shards = write_shards(root / "in", test_dialogues)
    bad = root / "in" / "e.jsonl"
    bad.write_text(json.dumps(test_dialogues[0]) + "\n" + json.dumps({"id": "no-turns"}) + "\n", encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    try:
        manifest = predict_many([*shards, bad], root / "in-process")
    finally:
        mp.undo()
    return root, [*shards, bad], manifest


def test_local_cluster_equals_in_process_byte_for_byte(reference, tmp_path, monkeypatch):
    root, inputs, local = reference
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))  # the workers start with an empty cache too
    dist = predict_many(inputs, tmp_path / "dask", scheduler="local", workers=2)
    assert dist == local
    assert outputs(tmp_path / "dask") == outputs(root / "in-process")
    assert dist["totals"] == {"shards": 5, "dialogues": 41, "rejected": 1, "in_training": 0}
    assert "no-turns" in (tmp_path / "dask" / "rejects" / "e.jsonl").read_text()
    # a second run on the cluster has nothing to do (resume) and starts no cluster
    assert predict_many(inputs, tmp_path / "dask", scheduler="local", workers=2) == dist


def test_a_worker_killed_mid_run_has_its_shards_retried(reference, tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    root, inputs, local = reference
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))  # warm: the point here is the lost worker
    out = tmp_path / "dask"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as cluster, Client(cluster) as client:
        pids = sorted(client.run(os.getpid).values())
        done: dict = {}
        run = threading.Thread(target=lambda: done.setdefault(
            "manifest", predict_many(inputs, out, scheduler=cluster.scheduler_address)))
        run.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.is_alive():  # kill a worker as soon as one shard is written
            try:
                if json.loads((out / "manifest.json").read_text())["shards"]:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.01)
        os.kill(pids[0], signal.SIGKILL)
        run.join(180)
        lost = [t.key for t in cluster.scheduler.transition_log if "-shard-" in str(t.key)
                and t.start == "processing" and t.finish == "released" and "worker" in t.stimulus_id]
    assert lost, "no shard was running on the killed worker"  # it was: and it was run again elsewhere
    assert done["manifest"] == local
    assert outputs(out) == outputs(root / "in-process")


def test_scheduler_errors(reference, tmp_path, monkeypatch):
    from dialeval import distributed

    _, inputs, _ = reference
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(DialevalError, match="allowed are local or a scheduler address"):
        predict_many(inputs[:1], tmp_path / "o", scheduler="localhost")
    with pytest.raises(DialevalError, match="only for --scheduler local"):
        predict_many(inputs[:1], tmp_path / "o", scheduler="tcp://127.0.0.1:1", workers=2)
    with pytest.raises(DialevalError, match=r"^cannot reach a Dask scheduler at tcp://127\.0\.0\.1:1: "):
        predict_many(inputs[:1], tmp_path / "o", scheduler="tcp://127.0.0.1:1")


# ------------------------------------------------------------- what a probe of Dask's failure modes found

@pytest.fixture
def threads_cluster():
    """A LocalCluster of two worker threads in this process (so a test can patch what the tasks call)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=":0",
                      silence_logs=50) as cluster, Client(cluster) as client:
        yield cluster, client


def test_a_run_leaves_no_plugin_and_runs_never_share_one(reference, tmp_path, threads_cluster, monkeypatch):
    """Each run's model plugin and task keys are its own (a second client's model replaced the first's on every
    worker, and same-named shards of another run were taken for done), and the plugin goes when the run ends."""
    from dialeval import distributed

    root, inputs, _ = reference
    cluster, client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    names = []
    run_name = distributed.run_name
    monkeypatch.setattr(distributed, "run_name", lambda: names.append(run_name()) or names[-1])
    assert predict_many(inputs[:2], tmp_path / "a", scheduler=cluster.scheduler_address)["complete"]
    assert predict_many(inputs[:2], tmp_path / "b", scheduler=cluster.scheduler_address)["complete"]
    assert len(set(names)) == 2 and all(n.startswith("dialeval-model-") for n in names)
    plugins = client.run(lambda dask_worker: sorted(dask_worker.plugins))
    assert not any(p.startswith("dialeval") for ps in plugins.values() for p in ps)


def test_a_refused_input_is_not_retried_and_a_cluster_failure_is_one_line(reference, tmp_path, threads_cluster,
                                                                          monkeypatch):
    import dialeval.pipeline

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    calls = []

    def refused(src, *args, **kwargs):
        calls.append(src)
        raise DialevalError("line 6: not a dialogue", file=str(src))

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", refused)
    with pytest.raises(DialevalError, match="line 6: not a dialogue"):
        predict_many(inputs[:1], tmp_path / "r", scheduler=cluster.scheduler_address, fail_fast=True)
    assert len(calls) == 1   # tried once: it was tried 1 + RETRIES times

    def crash(*args, **kwargs):
        raise RuntimeError("worker lost its disk")

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", crash)
    with pytest.raises(DialevalError, match=r"the Dask cluster failed while predicting it \(RuntimeError: worker "
                                            r"lost its disk\); the shards finished are recorded: run the command "
                                            "again to resume"):
        predict_many(inputs[:1], tmp_path / "c", scheduler=cluster.scheduler_address)


def test_a_worker_of_another_dialeval_version_is_refused():
    from types import SimpleNamespace

    from dialeval.distributed import ModelPlugin

    with pytest.raises(DialevalError, match=r"runs dialeval .+, this client 0\.0\.0; install the same version"):
        ModelPlugin(None, None, "0.0.0").setup(SimpleNamespace(address="tcp://w:1"))



def test_the_watch_warns_when_the_last_worker_goes_and_stops_the_run_after_its_limit():
    """Dask waits for a worker forever: the run warned of nothing and never ended when every worker had died."""
    from dialeval.distributed import WorkerWatch
    from dialeval.errors import DialevalWarning

    watch = WorkerWatch("tcp://10.0.0.5:8786", 60)
    watch.update(2, now=0.0)
    with pytest.warns(DialevalWarning, match=r"^the Dask cluster at tcp://10\.0\.0\.5:8786 has no worker left .+ "
                                             r"waiting up to 60 s for one \(`dask worker tcp://10\.0\.0\.5:8786`"):
        watch.update(0, now=10.0)
    watch.update(0, now=69.9)                     # within the limit: still waiting
    with pytest.warns(DialevalWarning, match="has 1 worker.s. again; predicting goes on"):
        watch.update(1, now=70.0)
    with pytest.warns(DialevalWarning, match="no worker left"):
        watch.update(0, now=100.0)                # the limit counts from the last time none was left
    with pytest.raises(DialevalError, match=r"^the Dask cluster at tcp://10\.0\.0\.5:8786 has had no worker for 60 "
                                            r"s; the shards finished are recorded: start workers and run the command "
                                            "again to resume$"):
        watch.update(0, now=160.0)
    local = WorkerWatch("local", 5)
    with pytest.warns(DialevalWarning, match=r"^the local Dask cluster has no worker left .+ for one$"):
        local.update(0, now=0.0)
    calls = []
    local.look(lambda: calls.append(1) or 0, now=0.0)
    local.look(lambda: calls.append(1) or 0, now=0.5)  # asked at most once a POLL
    assert calls == [1]


def test_a_run_whose_workers_all_leave_stops_with_one_error(reference, tmp_path, threads_cluster, monkeypatch):
    import dialeval.pipeline
    from dialeval import distributed
    from dialeval.errors import DialevalWarning

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    monkeypatch.setattr(distributed, "NO_WORKER_TIMEOUT", 1.0)
    monkeypatch.setattr(distributed, "POLL", 0.1)
    started, release = threading.Event(), threading.Event()

    def stuck(*args, **kwargs):
        started.set()
        release.wait(30)
        raise RuntimeError("released")

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", stuck)
    caught: dict = {}

    def run():
        try:
            with pytest.warns(DialevalWarning, match="no worker left"):
                predict_many(inputs[:2], tmp_path / "gone", scheduler=cluster.scheduler_address)
        except DialevalError as e:
            caught["error"] = str(e)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert started.wait(30)
        cluster.scale(0)
        thread.join(30)
    finally:
        release.set()
    assert not thread.is_alive()
    assert caught["error"].endswith("has had no worker for 1 s; the shards finished are recorded: start workers "
                                    "and run the command again to resume")
