"""Prediction on a Dask cluster: one task per input shard, the model loaded once per worker.

``scheduler="local"`` starts a ``dask.distributed`` LocalCluster of worker processes (one thread each: the
encoder's own threads share the cores); ``"tcp://HOST:8786"`` connects to a running scheduler, whose
workers must be able to read the input paths and write the output folder (a shared file system) and must
have this dialeval installed. A :class:`ModelPlugin` loads the model and warms the encoder when a worker
starts (and when one joins later), so tasks never load it. A task that fails is retried
(:data:`RETRIES`); the tasks of a worker that dies are rescheduled on the others by the scheduler. The
client writes the manifest as shards finish, so a run stopped half-way resumes where it was. Each shard is
computed by the same :func:`dialeval.pipeline.predict_shard` as in-process: the bytes are the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker

from dialeval import progress as _progress
from dialeval.errors import DialevalError, describe
from dialeval.threads import default_threads

PLUGIN = "dialeval-model"
TOPIC = "dialeval-progress"
CONNECT_TIMEOUT = "20s"
"""How long to wait for a scheduler at an address."""
RETRIES = 2
"""Times a failed shard task is tried again (a worker lost mid-task is handled by the scheduler)."""


class ModelPlugin(WorkerPlugin):
    """Loads the model (and the encoder's weights) once when a worker starts."""

    name = PLUGIN

    def __init__(self, model: str | None, threads: int | None = None) -> None:
        self.model = model
        self.threads = threads
        self.est = None

    def setup(self, worker) -> None:
        _malloc_for_numpy()
        if self.threads is not None:
            os.environ["DIALEVAL_THREADS"] = str(self.threads)
        from dialeval.models import encoders
        from dialeval.pipeline import load_estimator

        self.est = load_estimator(self.model)
        if getattr(self.est, "kind", None) == "neural":
            encoders.warm()


def _malloc_for_numpy() -> None:
    """Undo the effect of Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` on a worker (glibc only).

    Dask's nanny sets that variable so workers give memory back; it also turns off glibc's adaptive mmap
    threshold, so every temporary array of the network (1-2 MB) is mmapped and unmapped again, page by
    page: prediction took 2.3-2.8x the CPU of the same work in-process. Fixed thresholds of 32 MB (mmap) and
    64 MB (trim) make the temporaries come from the heap again; memory still goes back above 64 MB.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 64 * 2**20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass  # not glibc: nothing to undo


def _shard_task(src: str, out_dir: str, name: str, subtasks: tuple[str, ...], fail_fast: bool) -> dict:
    from dialeval.pipeline import predict_shard

    worker = get_worker()
    est = worker.plugins[PLUGIN].est
    return predict_shard(src, out_dir, name, est, subtasks, fail_fast=fail_fast,
                         advance=lambda n: worker.log_event(TOPIC, n))


def connect(scheduler: str, workers: int | None) -> tuple[Client, LocalCluster | None]:
    """A client of a new LocalCluster (``"local"``) or of the scheduler at a ``tcp://`` address."""
    if scheduler == "local":
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise DialevalError(f"--workers {workers!r} is not allowed; allowed are integers >= 1 (worker processes "
                                "of the LocalCluster; default: $DIALEVAL_THREADS, else one per CPU)")
        n = workers if workers is not None else default_threads()
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=40)
        return Client(cluster), cluster
    if workers is not None:
        raise DialevalError(f"--workers {workers} is only for --scheduler local; a running cluster has its own")
    if not scheduler.startswith(("tcp://", "tls://", "inproc://")):
        raise DialevalError(f"--scheduler {describe(scheduler)} is not allowed; allowed are local or a scheduler "
                            "address such as tcp://HOST:8786")
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT), None
    except OSError as e:
        raise DialevalError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None


def run_distributed(plan, scheduler: str, *, workers: int | None = None, fail_fast: bool = False,
                    progress: bool | None = None) -> None:
    """Predict ``plan.todo`` (a :class:`dialeval.pipeline.Plan`) on a Dask cluster, recording each shard as
    it finishes."""
    plan.write()
    if not plan.todo:
        return
    client, cluster = connect(scheduler, workers)
    try:
        threads = 1 if cluster is not None else None
        model = None if plan.model is None else str(plan.model)
        if model is not None and Path(model).exists():
            model = str(Path(model).resolve())  # the workers may run in another folder
        client.register_plugin(ModelPlugin(model, threads), name=PLUGIN)
        out = str(Path(plan.out).resolve())
        total = plan.total() if _progress.enabled(progress) else None
        with _progress.bar(f"predicting {len(plan.todo)} shard(s) on {scheduler}", total, progress=progress) as bar:
            client.subscribe_topic(TOPIC, lambda event: bar.advance(event[1]))
            futures = [client.submit(_shard_task, str(Path(src).resolve()), out, name, plan.subtasks, fail_fast,
                                     key=f"dialeval-shard-{i}-{name}", retries=RETRIES, pure=False)
                       for i, (src, name) in enumerate(plan.todo)]
            inputs = {name: str(src) for src, name in plan.todo}
            for fut in as_completed(futures):
                try:
                    entry = fut.result()
                except DialevalError:
                    client.cancel(futures)
                    raise
                entry["input"] = inputs[entry["output"]]
                plan.done(entry)
            client.unsubscribe_topic(TOPIC)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
