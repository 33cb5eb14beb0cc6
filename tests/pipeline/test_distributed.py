"""Prediction on Dask: a LocalCluster of 2 worker processes writes the in-process bytes, also when a worker dies."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import socket
import sys
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
    with pytest.raises(DialevalError, match=r"--scheduler 'tcp:// :8799' is not allowed: it needs a host"):
        predict_many(inputs[:1], tmp_path / "o", scheduler="tcp:// :8799")


def test_a_refused_port_and_a_host_that_does_not_resolve_are_said_at_once(reference, tmp_path):
    """Both waited the full 20 s; the unknown host was said to give "no answer within 20s"."""
    _, inputs, _ = reference
    start = time.monotonic()
    with pytest.raises(DialevalError, match=r"^cannot reach a Dask scheduler at tcp://127\.0\.0\.1:1: connection "
                                            r"refused: nothing listens on port 1 of 127\.0\.0\.1 \(is the scheduler "
                                            "running, and is this its port, usually 8786\\?\\)$"):
        predict_many(inputs[:1], tmp_path / "o", scheduler="tcp://127.0.0.1:1")
    with pytest.raises(DialevalError, match=r"^cannot reach a Dask scheduler at tcp://nonexistent\.invalid:8786: the "
                                            r"host nonexistent\.invalid does not resolve \(.+\); give the scheduler's "
                                            "host name or IP address$"):
        predict_many(inputs[:1], tmp_path / "o", scheduler="tcp://nonexistent.invalid:8786")
    assert time.monotonic() - start < 8   # the model is checked first; the addresses are not waited on
    assert not (tmp_path / "o").exists()


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
    from dialeval import distributed
    from dialeval.errors import DialevalWarning

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    monkeypatch.setattr(distributed, "NO_WORKER_TIMEOUT", 1.0)
    monkeypatch.setattr(distributed, "POLL", 0.1)
    started, release = _stuck_shards(monkeypatch)
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


# ------------------------------------------------- what a probe against `dask scheduler` + `dask worker` found

def _stuck_shards(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Shards that hang until released, then fail: ``(started, release)``, set when the first starts and to
    release them."""
    import dialeval.pipeline

    started, release = threading.Event(), threading.Event()

    def stuck(*args, **kwargs):
        started.set()
        release.wait(30)
        raise RuntimeError("released")

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", stuck)
    return started, release


def _dialeval_plugins(cluster, client) -> list[str]:
    """The dialeval plugins the scheduler holds (and hands every worker that joins) and the workers hold."""
    held = [p for p in cluster.scheduler.worker_plugins if p.startswith("dialeval")]
    plugins = client.run(lambda dask_worker: sorted(dask_worker.plugins))
    return held + [p for ps in plugins.values() for p in ps if p.startswith("dialeval")]


def test_a_run_whose_workers_fail_to_load_the_model_leaves_no_plugin(reference, tmp_path, threads_cluster,
                                                                     monkeypatch):
    """The plugin stayed registered for good when its registration failed: every worker that joined later loaded
    every such run's model."""
    from dialeval import distributed

    _, inputs, _ = reference
    cluster, client = threads_cluster

    def other_version(self, worker):
        raise DialevalError(f"a worker ({worker.address}) runs dialeval 9.9.9, this client 0.1.0; install the "
                            "same version on every worker")

    monkeypatch.setattr(distributed.ModelPlugin, "_load", other_version)
    with pytest.raises(DialevalError, match=r"^the workers cannot load the model: a worker \(tcp://.+\) runs "
                                            r"dialeval 9\.9\.9, this client 0\.1\.0; install the same version"):
        predict_many(inputs[:1], tmp_path / "v", scheduler=cluster.scheduler_address)
    assert _dialeval_plugins(cluster, client) == []
    assert not (tmp_path / "v").exists()


def test_a_worker_of_another_version_that_joins_mid_run_stops_it_with_the_version_error(reference, tmp_path,
                                                                                        monkeypatch):
    """Its plugin's setup failed (Dask only logs it), it took a shard and the run ended with "AttributeError:
    'NoneType' object has no attribute 'predict'"."""
    from distributed import Client, LocalCluster

    import dialeval.pipeline
    from dialeval import distributed

    root, inputs, _ = reference
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    started, release = threading.Event(), threading.Event()
    real = dialeval.pipeline.predict_shard

    def first_waits(*args, **kwargs):
        if not started.is_set():
            started.set()
            release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", first_waits)
    caught: dict = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=":0", silence_logs=50) as cluster, Client(cluster) as client:
        def run():
            try:
                predict_many(inputs[:2], tmp_path / "mid", scheduler=cluster.scheduler_address)
            except DialevalError as e:
                caught["error"] = str(e)

        thread = threading.Thread(target=run)
        thread.start()
        try:
            assert started.wait(30)        # the one worker is busy: the second shard waits for a worker

            def other_version(self, worker):
                raise DialevalError(f"a worker ({worker.address}) runs dialeval 9.9.9, this client 0.1.0; install "
                                    "the same version on every worker")

            monkeypatch.setattr(distributed.ModelPlugin, "_load", other_version)
            cluster.scale(2)               # ... and a worker of another version joins
            thread.join(30)
        finally:
            release.set()
        assert not thread.is_alive()
        assert re.fullmatch(r"the workers cannot load the model: a worker \(tcp://127\.0\.0\.1:\d+\) runs dialeval "
                            r"9\.9\.9, this client 0\.1\.0; install the same version on every worker", caught["error"])
        assert _dialeval_plugins(cluster, client) == []


class _Proxy:
    """A TCP relay to ``address`` (host:port) on a free local port; :meth:`cut` closes it and every connection
    through it: for its clients the scheduler is gone, while the cluster behind goes on (and closes quickly)."""

    def __init__(self, address: str) -> None:
        host, port = address.removeprefix("tcp://").rsplit(":", 1)
        self.upstream = (host, int(port))
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
                up = socket.create_connection(self.upstream)
            except OSError:
                return
            self.sockets += [conn, up]
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)   # wakes the accept(): the port refuses from now on
        self.server.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def test_a_lost_scheduler_is_one_error_line_without_dask_s_log(reference, tmp_path, threads_cluster, monkeypatch,
                                                                capfd):
    """Dask's client printed `distributed.client - ERROR - Failed to reconnect...` before dialeval's line."""
    from dialeval import distributed
    from dialeval.cli.main import run as cli

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", "1s")   # the client's time to reconnect
    started, release = _stuck_shards(monkeypatch)
    proxy = _Proxy(cluster.scheduler_address)
    capfd.readouterr()
    for name in ("distributed", "distributed.client"):   # as in `dialeval predict` (pytest's are others)
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        monkeypatch.setattr(logging.getLogger(name), "handlers", [handler])
        monkeypatch.setattr(logging.getLogger(name), "propagate", False)

    def lose_the_scheduler():
        if started.wait(30):
            proxy.cut()

    threading.Thread(target=lose_the_scheduler, daemon=True).start()
    try:
        code = cli(["predict", *map(str, inputs[:2]), "--out", str(tmp_path / "lost"), "--scheduler",
                    f"tcp://127.0.0.1:{proxy.port}"])
    finally:
        release.set()
        proxy.cut()
    err = capfd.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "the Dask cluster failed while predicting it" in err
    assert logging.getLogger("distributed.client").level == logging.WARNING   # restored


@pytest.mark.parametrize("stop", ["fail-fast", "ctrl-c"])
def test_a_stopped_run_leaves_no_task_writing_into_out(reference, tmp_path, threads_cluster, monkeypatch, stop):
    """Shards of tasks still running when the command had returned landed in --out seconds later, not in the
    manifest; the shards not started are not started at all."""
    import dialeval.pipeline
    from dialeval import distributed

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    real = dialeval.pipeline.predict_shard
    running, stopped, finished = threading.Event(), threading.Event(), threading.Event()
    calls = []

    def shard(src, *args, **kwargs):
        calls.append(os.path.basename(src))
        if src.endswith("a.jsonl"):                 # runs on until the command has returned
            running.set()
            stopped.wait(30)
            try:
                return real(src, *args, **kwargs)
            finally:
                finished.set()
        running.wait(30)
        if stop == "fail-fast":
            raise DialevalError("line 1: not a dialogue", file=src)
        stopped.wait(30)
        return real(src, *args, **kwargs)

    monkeypatch.setattr(dialeval.pipeline, "predict_shard", shard)
    if stop == "ctrl-c":
        look = distributed.WorkerWatch.look

        def interrupted(self, count, now):
            if running.is_set() and len(calls) == 2:
                raise KeyboardInterrupt
            look(self, count, now)

        monkeypatch.setattr(distributed.WorkerWatch, "look", interrupted)
    out = tmp_path / "stopped"
    with pytest.raises(DialevalError if stop == "fail-fast" else KeyboardInterrupt):
        predict_many(inputs, out, scheduler=cluster.scheduler_address, fail_fast=True)
    stopped.set()
    assert finished.wait(30)
    time.sleep(0.5)                                # the task discards its shard, and ends
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]
    assert json.loads((out / "manifest.json").read_text())["shards"] == []
    if stop == "ctrl-c":   # two workers: the three other shards were cancelled (a refusal frees its worker first)
        assert sorted(calls) == ["a.jsonl", "b.json"]


def test_a_worker_that_cannot_read_an_input_says_so_and_not_to_resume(reference, tmp_path, threads_cluster,
                                                                       monkeypatch):
    """It said "the Dask cluster failed while predicting it (FileNotFoundError: ...); run the command again to
    resume": running it again cannot help."""
    from distributed import get_worker

    import dialeval.pipeline

    root, inputs, _ = reference
    cluster, _client = threads_cluster
    monkeypatch.setenv("DIALEVAL_CACHE", str(root / "cache-ref"))
    real = dialeval.pipeline.sha256_file

    def not_on_the_workers(path):
        try:
            get_worker()
        except ValueError:   # the client: it sees the file
            return real(path)
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr(dialeval.pipeline, "sha256_file", not_on_the_workers)
    src = inputs[0]
    with pytest.raises(DialevalError) as caught:
        predict_many([src], tmp_path / "r", scheduler=cluster.scheduler_address)
    assert str(caught.value) == (
        f"{src}: a Dask worker (on 127.0.0.1) cannot read this input (FileNotFoundError: No such file or "
        f"directory); the workers read the inputs at the client's paths ({src.resolve()}): they need the same files "
        "at the same paths (a shared file system)")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["manifest.json"]
