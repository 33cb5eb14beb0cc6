"""Prediction on a Dask cluster: one task per input shard, the model loaded once per worker.

``scheduler="local"`` starts a ``dask.distributed`` LocalCluster of worker processes (one thread each: the
encoder's own threads share the cores); ``"tcp://HOST:8786"`` connects to a running scheduler, whose
workers must be able to read the input paths and write the output folder (a shared file system) and must
have this dialeval installed. A :class:`ModelPlugin` loads the model and warms the encoder when a worker
starts (and when one joins later), so tasks never load it. A task that fails is retried
(:data:`RETRIES`); the tasks of a worker that dies are rescheduled on the others by the scheduler; a
cluster left with no worker at all is waited on for :data:`NO_WORKER_TIMEOUT` seconds (with a warning),
then the run stops with an error. The client writes the manifest as shards finish, so a run stopped
half-way resumes where it was; a run that stops (an error, ``--fail-fast``, Ctrl-C) cancels the shards not
started, and the tasks still running discard theirs (:func:`_shard_task`). Dask's own log lines are silenced
while a run lasts: a failure is one :class:`~dialeval.errors.DialevalError`. Each shard is computed by the same
:func:`dialeval.pipeline.predict_shard` as in-process: the bytes are the same.

Before anything is written the client checks, each within :data:`CONNECT_TIMEOUT`: the address
(``local`` or ``tcp://HOST:PORT``; at once, that its host resolves and its port does not refuse a connection),
that the model loads and can predict what was asked
(:func:`dialeval.pipeline.check_model`), that a Dask scheduler answers at the address, and that it has at
least one worker. A LocalCluster gets at most one worker per shard to predict (more would idle), and at
most :data:`MAX_WORKERS_PER_CPU` per CPU.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import socket
import threading
import time
import warnings
from pathlib import Path

from distributed import Client, Event, LocalCluster, WorkerPlugin, as_completed, get_worker

from dialeval import progress as _progress
from dialeval.errors import DialevalError, DialevalWarning, describe
from dialeval.threads import default_threads

PLUGIN = "dialeval-model"
TOPIC = "dialeval-progress"
CONNECT_TIMEOUT = "20s"
"""How long to wait for a scheduler at an address to answer, and then for it to have a worker."""
MAX_WORKERS_PER_CPU = 4
"""``--workers`` above this many per CPU of this machine is refused (each worker loads the model)."""
RETRIES = 2
"""Times a failed shard task is tried again (a worker lost mid-task is handled by the scheduler)."""
NO_WORKER_TIMEOUT = 60.0
"""Seconds a run waits on a cluster left with no worker (all died or left) before it stops with an error."""
POLL = 1.0
"""Seconds between two looks at the cluster's workers while shards are being predicted."""


class ModelPlugin(WorkerPlugin):
    """Loads the model (and the encoder's weights) once when a worker starts; refuses a worker whose dialeval is
    not the client's version (its shards would not be the same bytes). Registered under a name of its run
    (:func:`run_name`), so two runs on one cluster never use each other's model, and removed when the run ends,
    whatever way it ends.

    A setup that fails keeps its message (:attr:`error`): Dask only logs the failure of a worker that joins
    mid-run and keeps the worker, so its tasks return that message instead of predicting."""

    name = PLUGIN

    def __init__(self, model: str | None, threads: int | None = None, version: str | None = None) -> None:
        self.model = model
        self.threads = threads
        self.version = version
        self.est = None
        self.error: str | None = None

    def setup(self, worker) -> None:
        try:
            self._load(worker)
        except Exception as e:
            self.error = cannot_load(self.model, e)
            raise

    def _load(self, worker) -> None:
        from dialeval import __version__

        if self.version is not None and __version__ != self.version:
            raise DialevalError(f"a worker ({worker.address}) runs dialeval {__version__}, this client "
                                f"{self.version}; install the same version on every worker")
        _malloc_for_numpy()
        if self.threads is not None:
            os.environ["DIALEVAL_THREADS"] = str(self.threads)
        from dialeval.models import encoders
        from dialeval.pipeline import load_estimator

        self.est = load_estimator(self.model)
        if getattr(self.est, "kind", None) == "neural":
            encoders.warm()


def cannot_load(model: str | None, e: BaseException) -> str:
    """The error of workers that failed to load the model: the same when the plugin is registered and when a task
    lands on a worker that joined later and failed (a refusal of ours as it is; else what a worker raised, e.g.
    the model folder not on its disk)."""
    if isinstance(e, DialevalError):
        return f"the workers cannot load the model: {e}"
    return f"the workers cannot load the model {model or '(shipped)'}: {type(e).__name__}: {e}"


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


class _Stopped(Exception):
    """The run's client stopped (Ctrl-C, ``--fail-fast``, an error): the shard is not to be put in ``--out``."""


LIVE_TIMEOUT = 10.0
"""Seconds a task waits for the scheduler to say whether its run goes on."""


def live_name(run: str) -> str:
    """The name of the Dask ``Event`` that is set while the client of ``run`` waits for its shards."""
    return f"{run}-live"


def _run_goes_on(worker, live: str) -> bool:
    """Whether the run's client still waits for its shards: its ``Event`` ``live`` is set (it is set before the
    tasks are submitted and cleared, which removes it, when the client stops for whatever reason). Asked of the
    scheduler directly, the way ``distributed.Event.is_set`` does, without a client on the worker. A failure to
    ask is a ``RuntimeError`` (an ``OSError`` would be taken for one of the files')."""
    from distributed.utils import sync

    try:
        return bool(sync(worker.loop, worker.scheduler.event_is_set, name=live, callback_timeout=LIVE_TIMEOUT))
    except Exception as e:
        raise RuntimeError(f"cannot ask the scheduler whether the run goes on ({type(e).__name__}: {e})") from None


def stage_name(run: str, name: str) -> str:
    """The hidden folder inside ``--out`` where the task of ``run`` predicts the shard ``name`` (then moved)."""
    return f".{run}-{name}.tmp"


def _shard_task(src: str, out_dir: str, name: str, subtasks: tuple[str, ...], fail_fast: bool,
                label: str | None = None, plugin: str = PLUGIN, live: str | None = None) -> dict:
    """One shard on a worker, with the model its run's plugin loaded. A refusal of the input (a
    :class:`DialevalError`, the same on any worker), a worker that failed to load the model, an input the worker
    cannot read or an output it cannot write come back as ``{"error": message}``, not raised: Dask would try it
    again (:data:`RETRIES`), which is for a worker that failed, not for a bad line or a missing file.

    The shard is predicted into a folder of its own inside ``out_dir`` (:func:`stage_name`: hidden, removed
    after; the temporary files of two runs of the same shard never meet) and moved into ``out_dir`` only if the
    run's ``Event`` ``live`` is still set just before: a task still running when its client stopped (Ctrl-C,
    ``--fail-fast``, an error) writes nothing into ``out_dir`` and returns ``{"stopped": True}``. It also looks
    after each chunk, so it ends early. (A client that stops between the last look and the rename, a few
    milliseconds, may still get the shard written after it returned: not in the manifest, the shard is predicted
    again, the same bytes, when the run resumes.)"""
    from dialeval.pipeline import REJECTS, predict_shard

    worker = get_worker()
    loaded = worker.plugins.get(plugin)
    est = getattr(loaded, "est", None)
    if est is None:   # its setup failed (a worker of another version that joined mid-run): Dask only logged it
        return {"error": getattr(loaded, "error", None)
                or f"a worker ({worker.address}) has not loaded the model of this run; start it again"}

    def advance(n: int) -> None:
        worker.log_event(TOPIC, n)
        with contextlib.suppress(RuntimeError):   # the scheduler not answering: the last look decides
            if live is not None and not _run_goes_on(worker, live):
                raise _Stopped

    out = Path(out_dir)
    stage = out / stage_name(plugin, name)
    try:
        shutil.rmtree(stage, ignore_errors=True)   # what an attempt on a worker that died left
        stage.mkdir()
        entry = predict_shard(src, stage, name, est, subtasks, fail_fast=fail_fast, advance=advance, label=label)
        if live is not None and not _run_goes_on(worker, live):
            raise _Stopped
        rejects = out / REJECTS / name
        if entry["rejects"]:
            rejects.parent.mkdir(exist_ok=True)
            os.replace(stage / REJECTS / name, rejects)
        else:
            rejects.unlink(missing_ok=True)   # an earlier run's rejects of an input that has changed since
        os.replace(stage / name, out / name)
        return entry
    except _Stopped:
        return {"stopped": True}
    except DialevalError as e:
        if e.file is not None and e.file.startswith(str(stage)):   # our folder's name is not the user's
            e = DialevalError(e.message, file=str(out) + e.file[len(str(stage)):], dialogue=e.dialogue,
                              field=e.field)
        return {"error": str(e)}
    except OSError as e:
        return {"error": _worker_os_error(e, worker, src, label, out / name)}
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _worker_os_error(e: OSError, worker, src: str, label: str | None, output: Path) -> str:
    """The error of a worker that cannot read an input or write ``--out`` where the client does: running again
    cannot help, the cluster needs the same paths as the client."""
    from distributed.comm import get_address_host

    try:
        host = get_address_host(worker.address)
    except Exception:
        host = str(worker.address)
    why = f"{type(e).__name__}: {e.strerror or e}"
    if e.filename is not None and os.fspath(e.filename) == src:
        return str(DialevalError(f"a Dask worker (on {host}) cannot read this input ({why}); the workers read "
                                 f"the inputs at the client's paths ({src}): they need the same files at the same "
                                 "paths (a shared file system)", file=label or src))
    return str(DialevalError(f"a Dask worker (on {host}) cannot write it ({why}); the workers write --out at the "
                             f"client's path ({output.parent}): they need the same writable folder at the same "
                             "path (a shared file system)", file=str(output)))


def run_name() -> str:
    """A name of its own for one run's plugin and tasks (a second client on the cluster gets another)."""
    return f"{PLUGIN}-{secrets.token_hex(6)}"


def _seconds() -> float:
    from dask.utils import parse_timedelta

    return float(parse_timedelta(CONNECT_TIMEOUT))


def check_scheduler(scheduler: object, workers: object) -> None:
    """An error for a ``--scheduler`` that is neither ``local`` nor ``tcp://HOST:PORT``, and for ``--workers``
    that is not an integer >= 1, not with ``local``, or more than :data:`MAX_WORKERS_PER_CPU` per CPU."""
    if scheduler == "local":
        cap = MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or not 1 <= workers <= cap):
            raise DialevalError(f"--workers {workers!r} is not allowed; allowed are integers 1 to {cap} "
                                f"({MAX_WORKERS_PER_CPU} per CPU of this machine; worker processes of the "
                                "LocalCluster, at most one per shard is started; default: $DIALEVAL_THREADS, else "
                                "one per CPU)")
        return
    allowed = "allowed are local or a scheduler address tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786"
    if not isinstance(scheduler, str) or not scheduler.startswith("tcp://"):
        raise DialevalError(f"--scheduler {describe(scheduler)} is not allowed; {allowed}")
    host, sep, port = scheduler.removeprefix("tcp://").rpartition(":")
    if not sep or not host.strip("[]") or "/" in host or any(c.isspace() for c in host) or not port.isdigit() \
            or not 1 <= int(port) <= 65535:
        raise DialevalError(f"--scheduler {describe(scheduler)} is not allowed: it needs a host and a port "
                            f"(1 to 65535); {allowed}")
    if workers is not None:
        raise DialevalError(f"--workers {workers} is only for --scheduler local; a running cluster has its own")


def _unreachable(scheduler: str, why: str) -> DialevalError:
    return DialevalError(f"cannot reach a Dask scheduler at {scheduler}: {why}")


REFUSED_TIMEOUT = 2.0
"""Seconds the first, plain TCP connection to a scheduler's address may take: a refusal comes at once."""


def _reach(scheduler: str, seconds: float) -> None:
    """An error at once for an address whose host does not resolve (within ``seconds``) or whose port refuses a
    connection (nothing listens there); a host that stays silent is left to :func:`_probe`, which waits."""
    host, _, port = scheduler.removeprefix("tcp://").rpartition(":")
    host = host.strip("[]")
    found: dict = {}

    def resolve() -> None:
        try:
            found["addresses"] = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as e:   # socket.gaierror is an OSError
            found["error"] = e

    thread = threading.Thread(target=resolve, name="dialeval-scheduler-resolve", daemon=True)
    thread.start()
    thread.join(seconds)
    if "addresses" not in found:
        error = found.get("error")
        why = f"{getattr(error, 'strerror', None) or error}" if error is not None else f"no answer within {seconds:g} s"
        raise _unreachable(scheduler, f"the host {host} does not resolve ({why}); give the scheduler's host name or "
                                      "IP address")
    try:
        with socket.create_connection((host, int(port)), timeout=min(REFUSED_TIMEOUT, seconds)):
            pass
    except ConnectionRefusedError:
        raise _unreachable(scheduler, f"connection refused: nothing listens on port {port} of {host} (is the "
                                      "scheduler running, and is this its port, usually 8786?)") from None
    except TimeoutError:
        return   # a slow or filtered host: the probe waits the full time
    except OSError as e:   # no route to the host, the network down
        raise _unreachable(scheduler, f"{e.strerror or e} (is the scheduler running at this address?)") from None


def _probe(scheduler: str, seconds: float) -> dict:
    """The identity of the scheduler at ``scheduler``, asked within ``seconds`` (the Client's own timeout does
    not cover a port that accepts and stays silent, and something else answering can crash its reader)."""
    import asyncio

    from distributed.comm import connect as open_comm

    async def ask() -> object:
        comm = await open_comm(scheduler, timeout=seconds)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    answer: dict = {}

    def run() -> None:
        try:
            answer["reply"] = asyncio.run(asyncio.wait_for(ask(), seconds))
        except BaseException as e:  # anything at all means: no scheduler there
            answer["error"] = e

    thread = threading.Thread(target=run, name="dialeval-scheduler-probe", daemon=True)
    thread.start()
    thread.join(seconds + 5)
    error = answer.get("error")
    if ("reply" not in answer and error is None) or isinstance(error, TimeoutError | asyncio.TimeoutError):
        raise _unreachable(scheduler, f"no answer within {CONNECT_TIMEOUT} (is the scheduler running, and is "
                                      "this its address and port, usually 8786?)")
    if isinstance(error, OSError):
        raise _unreachable(scheduler, f"{error} (is the scheduler running at this address?)")
    if error is not None:
        raise _unreachable(scheduler, f"something answers there, but not as a Dask scheduler does "
                                      f"({type(error).__name__}); the scheduler's port is usually 8786, not "
                                      "the dashboard's (8787)")
    reply = answer["reply"]
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise _unreachable(scheduler, f"what answers there is {describe(kind or type(reply).__name__)}, not a "
                                      "Dask scheduler")
    return reply


def connect(scheduler: str, workers: int | None, shards: int | None = None) -> tuple[Client, LocalCluster | None]:
    """A client of a new LocalCluster (``"local"``) or of the scheduler at a ``tcp://`` address, with at least
    one worker.

    ``"local"`` starts ``workers`` processes (default :func:`dialeval.threads.default_threads`), at most
    ``shards`` (a warning line on stderr when an explicit ``workers`` is cut). An address must answer as a
    Dask scheduler within :data:`CONNECT_TIMEOUT`, and have a worker within that time again. ``scheduler`` and
    ``workers`` are checked by the caller first (:func:`check_scheduler`, before the model is loaded).

    Raises
    ------
    DialevalError
        For every failure to connect.
    """
    if scheduler == "local":
        n = workers if workers is not None else default_threads()
        if shards is not None and n > max(shards, 1):
            if workers is not None:
                warnings.warn(f"--workers {workers}: starting {max(shards, 1)}, one per shard to predict",
                              DialevalWarning, stacklevel=2)
            n = max(shards, 1)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
        return Client(cluster), cluster
    seconds = _seconds()
    _reach(scheduler, seconds)
    _probe(scheduler, seconds)
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except Exception as e:  # an OSError, a timeout, or a reader crashing on a foreign answer
        raise _unreachable(scheduler, f"{type(e).__name__}: {e}") from None
    try:
        client.wait_for_workers(1, timeout=seconds)
    except Exception:  # a TimeoutError, or the scheduler gone meanwhile
        client.close()
        raise DialevalError(f"the Dask scheduler at {scheduler} has no worker: none joined within "
                            f"{CONNECT_TIMEOUT}; start some with `dask worker {scheduler}`") from None
    return client, None


def run_distributed(plan, scheduler: str, *, workers: int | None = None, fail_fast: bool = False,
                    progress: bool | None = None) -> None:
    """Predict ``plan.todo`` (a :class:`dialeval.pipeline.Plan`, not empty) on a Dask cluster, recording each
    shard as it finishes. :func:`dialeval.pipeline.run_plan` has checked the address (:func:`check_scheduler`)
    and the model (:func:`dialeval.pipeline.check_model`) first; the connection and the workers' loading of the
    model are checked here, still before anything is written. Dask's own log lines are silenced meanwhile
    (:func:`quiet_dask`): a failure is the one :class:`DialevalError` raised."""
    with quiet_dask():
        client, cluster = connect(scheduler, workers, shards=len(plan.todo))
        try:
            threads = 1 if cluster is not None else None
            model = None if plan.model is None else str(plan.model)
            if model is not None and Path(model).exists():
                model = str(Path(model).resolve())  # the workers may run in another folder
            from dialeval import __version__

            run = run_name()
            try:   # the plugin is removed whatever happens, also when a worker fails to load it
                try:
                    client.register_plugin(ModelPlugin(model, threads, __version__), name=run)
                except Exception as e:  # ours (another version), or what a worker raised: e.g. no model folder
                    raise DialevalError(cannot_load(model, e)) from None
                _predict_shards(client, plan, run, scheduler, fail_fast, progress)
            finally:
                with contextlib.suppress(Exception):   # the cluster may be gone: nothing left to remove then
                    client.unregister_worker_plugin(run)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


@contextlib.contextmanager
def quiet_dask():
    """Silence Dask's loggers (``distributed``, ``distributed.client``..., ``tornado``) while the block runs, and
    restore their levels after: a lost scheduler printed Dask's own ``ERROR`` lines and tracebacks before the one
    error line of dialeval. Their levels, not their handlers: a record of theirs then reaches no handler at all,
    also where they propagate to the root logger's. (A LocalCluster's ``silence_logs`` is for its own loggers.)"""
    loggers = [logging.getLogger(name) for name in ("distributed", "tornado")]
    loggers += [logger for name, logger in sorted(logging.Logger.manager.loggerDict.items())
                if name.startswith(("distributed.", "tornado.")) and isinstance(logger, logging.Logger)]
    levels = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in levels:
            logger.setLevel(level)


def _predict_shards(client: Client, plan, run: str, scheduler: str, fail_fast: bool, progress: bool | None) -> None:
    """Submit ``plan.todo``'s shards under keys of their run and record each as it finishes (its result then
    released: a worker lost later does not compute it again). A refused input or a failure of the cluster is one
    error naming the shard; what finished before is recorded, so running the command again resumes.

    However the run stops (an error, ``--fail-fast``, Ctrl-C), the shards not started are cancelled and the run's
    ``Event`` (:func:`live_name`) is cleared: the tasks still running put nothing in ``--out`` (:func:`_shard_task`),
    so the folder holds the manifest's shards only once the command has returned."""
    plan.write()
    out = str(Path(plan.out).resolve())
    total = plan.total() if _progress.enabled(progress) else None
    live = Event(live_name(run), client=client)
    live.set()
    futures: list = []
    try:
        with _progress.bar(f"predicting {len(plan.todo)} shard(s) on {scheduler}", total, progress=progress) as bar:
            client.subscribe_topic(TOPIC, lambda event: bar.advance(event[1]))
            # the workers read the absolute path; the rejects name the shard as given, as in-process
            futures = [client.submit(_shard_task, str(Path(src).resolve()), out, name, plan.subtasks, fail_fast,
                                     str(src), run, live.name, key=f"{run}-shard-{i}", retries=RETRIES, pure=False)
                       for i, (src, name) in enumerate(plan.todo)]
            label = {f.key: str(src) for f, (src, _name) in zip(futures, plan.todo, strict=True)}
            inputs = {name: str(src) for src, name in plan.todo}
            pending = as_completed(futures)
            watch = WorkerWatch(scheduler, NO_WORKER_TIMEOUT)
            while not pending.is_empty():
                if not pending.has_ready():
                    time.sleep(0.05)
                    watch.look(lambda: len(client.nthreads()), time.monotonic())
                    continue
                for fut in pending.next_batch(block=False):
                    _record(fut, plan, label, inputs)
    finally:
        with contextlib.suppress(Exception):   # first: the tasks running see the run stopped
            live.clear()                       # (and the scheduler forgets the Event)
        with contextlib.suppress(Exception):
            client.cancel([f for f in futures if not f.done()])
        with contextlib.suppress(Exception):
            client.unsubscribe_topic(TOPIC)
        for stage in Path(out).glob(stage_name(run, "*")):   # of tasks stopped, or of a worker that died
            shutil.rmtree(stage, ignore_errors=True)


def _record(fut, plan, label: dict, inputs: dict) -> None:
    """Record one finished shard, or stop the run (the caller cancels the others) on a refused input or a failed
    cluster."""
    try:
        entry = fut.result()
    except Exception as e:   # the cluster failed: the scheduler or a worker lost, a shard killing workers
        raise DialevalError(f"{label[fut.key]}: the Dask cluster failed while predicting it "
                            f"({type(e).__name__}: {_short(e)}); the shards finished are recorded: run the "
                            "command again to resume") from None
    if "error" in entry:
        raise DialevalError(entry["error"])
    if entry.get("stopped"):   # the run's Event gone while it runs: the scheduler lost its state
        raise DialevalError(f"{label[fut.key]}: the Dask cluster failed while predicting it (the scheduler no "
                            "longer knows this run); the shards finished are recorded: run the command again to "
                            "resume")
    fut.release()
    entry["input"] = inputs[entry["output"]]
    plan.done(entry)


class WorkerWatch:
    """Stops a run whose cluster has had no worker for ``limit`` seconds (Dask itself would wait for one forever,
    silently): a warning when the last worker goes, an error naming the scheduler when none came back in time.

    :meth:`look` asks the cluster at most every :data:`POLL` seconds; the clock is passed in.
    """

    def __init__(self, scheduler: str, limit: float) -> None:
        self.cluster = "the local Dask cluster" if scheduler == "local" else f"the Dask cluster at {scheduler}"
        self.start = "" if scheduler == "local" else f" (`dask worker {scheduler}` starts one)"
        self.limit = limit
        self.since: float | None = None   # when the cluster was first seen with no worker
        self.last: float | None = None    # when it was last asked

    def look(self, count, now: float) -> None:
        """Ask ``count()`` (the cluster's workers) if :data:`POLL` seconds have passed since the last time."""
        if self.last is not None and now - self.last < POLL:
            return
        self.last = now
        try:
            workers = count()
        except Exception:   # the scheduler itself gone: the futures fail, and that error names the shard
            return
        self.update(workers, now)

    def update(self, workers: int, now: float) -> None:
        """Note ``workers`` at time ``now``; raise once the cluster has had none for ``limit`` seconds."""
        if workers > 0:
            if self.since is not None:
                warnings.warn(f"{self.cluster} has {workers} worker(s) again; predicting goes on", DialevalWarning,
                              stacklevel=2)
            self.since = None
            return
        if self.since is None:
            self.since = now
            warnings.warn(f"{self.cluster} has no worker left (they died or were stopped); waiting up to "
                          f"{self.limit:g} s for one{self.start}", DialevalWarning, stacklevel=2)
        elif now - self.since >= self.limit:
            raise DialevalError(f"{self.cluster} has had no worker for {self.limit:g} s; the shards finished are "
                                "recorded: start workers and run the command again to resume")


def _short(e: BaseException) -> str:
    """An exception's message on one line, cut to 200 characters (Dask's can hold a whole task's repr)."""
    text = " ".join(str(e).split())
    return text if len(text) <= 200 else text[:197] + "..."
