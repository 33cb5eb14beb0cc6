r"""Prediction over many shards: one JSONL output shard per input shard, a manifest, resume, rejects.

``predict_many(inputs, out)`` reads every shard of ``inputs`` (files, folders, globs; JSON arrays or JSON
Lines, gzip'ed or not: :mod:`dialeval.io.stream`) in bounded memory and writes, in folder ``out``:

- ``<shard>.jsonl``: one line per valid dialogue, ``{"id", "meta"?, "quality"?, "nugget"?}`` in input
  order (``meta``: the input's other fields, e.g. ``system`` and ``day``, for ``dialeval summarize``);
- ``rejects/<shard>.jsonl``: the dialogues that failed validation, with file, line, item index, id and error;
- ``manifest.json``: per shard the input's SHA-256, the output's SHA-256 and the counts (dialogues,
  rejected, ``in_training``: how many were in the model's training data, :mod:`dialeval.models.leakage`, with
  a few of their ids); the model (kind, checksum), the subtasks and the dialeval version. Its paths are text
  (:func:`path_text`): a file name that is not UTF-8 (``caf\xe9.json``) is written with ``\xNN`` escapes, as the
  reports write it, never as bytes no JSON file can hold.

Dialogues are predicted in fixed chunks of :data:`CHUNK_DIALOGUES` consecutive dialogues of a shard, and a
text's embedding does not depend on which texts share its batch (:func:`dialeval.models.encoders.embed`), so a
shard's output bytes depend only on the shard and the model: not on the embedding cache, the thread count, or
where it ran (in-process or on a Dask worker, :mod:`dialeval.distributed`). A shard is written atomically and the
manifest after each shard, so a run killed half-way and run again skips every shard whose input and output
checksums match the manifest and writes each remaining shard once.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path

import orjson

from dialeval.errors import DialevalError, first_few
from dialeval.io.atomic import atomic_path, write_bytes
from dialeval.io.stream import Reject, batched, expand_inputs, iter_dialogues, sha256_file
from dialeval.models.leakage import EXAMPLES

CHUNK_DIALOGUES = 256
"""Dialogues predicted together. Part of what defines the output bytes: never derived from the machine."""
MANIFEST = "manifest.json"
REJECTS = "rejects"
_SUFFIXES = (".gz", ".jsonl", ".ndjson", ".json")


def output_names(files: list[Path]) -> list[str]:
    """The output shard name of each input: its name without ``.gz``/``.json``/``.jsonl`` plus ``.jsonl``;
    a name taken by an earlier input gets ``-2``, ``-3``...

    Examples
    --------
    >>> output_names([Path("a/day1.jsonl.gz"), Path("b/day1.json"), Path("c.json"), Path("DAY3.JSONL")])
    ['day1.jsonl', 'day1-2.jsonl', 'c.jsonl', 'DAY3.jsonl']
    """
    names, used = [], set()
    for f in files:
        stem = f.name
        for suffix in _SUFFIXES:   # in any case, as the shards are found
            if stem.lower().endswith(suffix):
                stem = stem[: -len(suffix)]
        name, n = f"{stem}.jsonl", 1
        while name in used or name == MANIFEST:
            n += 1
            name = f"{stem}-{n}.jsonl"
        used.add(name)
        names.append(name)
    return names


def path_text(path: str | os.PathLike) -> str:
    r"""A path as the manifest and the rejects write it: :func:`dialeval.report.display.display_text` (bytes of
    a file name that are not UTF-8 as ``\xNN`` escapes, control characters escaped), as the reports write it.

    >>> path_text("in/day1.json"), path_text(b"in/caf\xe9.json")
    ('in/day1.json', 'in/caf\\xe9.json')
    """
    from dialeval.report.display import display_text  # here: the report package loads only when needed

    text = os.fsdecode(path) if isinstance(path, bytes | os.PathLike) else str(path)
    return text if text.isprintable() else display_text(text)


def _shown(entry: dict) -> dict:
    """A shard's manifest entry with its paths as text (:func:`path_text`)."""
    paths = {k: path_text(entry[k]) for k in ("input", "output", "rejects") if isinstance(entry.get(k), str)}
    return {**entry, **paths} if any(paths[k] != entry[k] for k in paths) else entry


def model_identity(model: str | os.PathLike | None) -> dict:
    """What names a model in a manifest: ``shipped`` or its folder, its kind, subtasks and a checksum of
    its files (a resumed run with another model predicts every shard again)."""
    from dialeval.models import LANGUAGES, shipped_folder

    shipped = model is None or (isinstance(model, str) and model in LANGUAGES and not Path(model).exists())
    folder = shipped_folder(str(model or "zh")) if shipped else Path(model)  # type: ignore[arg-type]
    if not (folder / "model.json").is_file():
        raise DialevalError(f"{folder} is not a saved dialeval model (no model.json in it)")
    h = hashlib.sha256()
    for part in ("model.json", "arrays.npz"):
        h.update(sha256_file(folder / part).encode())
    meta = orjson.loads((folder / "model.json").read_bytes())
    return {"name": "shipped" if shipped else str(folder), "kind": meta.get("kind"),
            "subtasks": meta.get("subtasks"), "sha256": h.hexdigest()}


def load_estimator(model: str | os.PathLike | None):
    """The fitted model (the shipped multilingual default when None), without progress bars."""
    from dialeval.models import load_model, shipped_folder

    est = load_model(shipped_folder("zh") if model is None else model)
    est.progress = False
    return est


_PROBE = [{"id": "dialeval-check", "turns": [{"sender": "customer", "utterances": ["?"]},
                                              {"sender": "helpdesk", "utterances": ["?"]}]}]
"""One STC-3 dialogue: what :func:`check_model` asks the single-file checks about (never predicted)."""


def check_model(est, subtasks: tuple[str, ...], source: str | os.PathLike | None = None) -> None:
    """An error when ``est`` cannot predict ``subtasks`` of STC-3 dialogues: the checks of the single-file
    path (:func:`dialeval.models.check_predictable`: a model of other scales, a model trained for other
    subtasks), made before any shard is read or written.

    Raises
    ------
    DialevalError
        The single-file path's error, naming ``source`` (the dialogues, e.g. the first shard) as its file.
    """
    from dialeval.io.stc3 import read_stc3
    from dialeval.models import check_predictable

    where = None if source is None else str(source)
    try:
        check_predictable(read_stc3(_PROBE), est, subtasks)
    except DialevalError as e:
        raise DialevalError(e.message, file=where or e.file, dialogue=e.dialogue, field=e.field) from None
    if est.scales:  # a model of other scales that a transfer maps onto STC-3's: not what a shard's records hold
        raise DialevalError(f"this {est.kind} model predicts the scale(s) {', '.join(est.scales)}, not STC-3's "
                            "dialogue quality and nugget types, which a folder --out holds; predict one file into "
                            "a run file (--out NAME.json)", file=where)


def predict_records(est, subtasks: tuple[str, ...], chunk: list) -> tuple[list[dict], tuple[str, ...]]:
    """Output records of one chunk of :class:`~dialeval.io.stream.StreamedDialogue` (in order), and the ids of
    the chunk's dialogues that were in the model's training data (:mod:`dialeval.models.leakage`)."""
    from threadpoolctl import threadpool_limits

    from dialeval.io.stc3 import read_stc3
    from dialeval.models.data import TurnTable

    table = TurnTable.from_corpus(read_stc3([d.record() for d in chunk]))
    # One BLAS thread: the network's matrices are small (threaded BLAS was 3-7x slower on 2 busy cores), and
    # the sums then run in one order whatever the machine. Parallelism comes from the encoder's threads and
    # from Dask's worker processes (shards side by side).
    with threadpool_limits(1, user_api="blas"):
        records = est.predict(table, check_training=False).select(subtasks).to_records(table)
    out = []
    for d, rec in zip(chunk, records, strict=True):
        line = {"id": d.id}
        if d.meta:
            line["meta"] = d.meta
        line.update((k, v) for k, v in rec.items() if k != "id")
        out.append(line)
    return out, est.in_training(table).ids


def predict_shard(src: str | os.PathLike, out_dir: str | os.PathLike, name: str, est, subtasks: tuple[str, ...],
                  *, fail_fast: bool = False, advance: Callable[[int], None] | None = None,
                  label: str | None = None) -> dict:
    """Predict one input shard into ``out_dir/name`` (atomically); returns its manifest entry.

    ``advance(n)`` is called after each chunk of ``n`` dialogues (a progress bar). Rejected dialogues go to
    ``out_dir/rejects/name``; with ``fail_fast`` the first one raises a :class:`DialevalError` instead.
    ``label`` is how the rejects and errors name the shard (default ``src`` as given): a Dask worker reads
    the absolute path but writes the bytes the client's own run would.
    """
    src, out_dir = Path(src), Path(out_dir)
    label = str(src) if label is None else label
    digest = sha256_file(src)
    rejects: list[Reject] = []
    h, n, seen, seen_ids = hashlib.sha256(), 0, 0, []
    try:
        with atomic_path(out_dir / name) as tmp, open(tmp, "wb") as fh:
            for chunk in batched(iter_dialogues(src, rejects, fail_fast=fail_fast), CHUNK_DIALOGUES):
                lines, trained = predict_records(est, subtasks, chunk)
                seen += len(trained)
                seen_ids.extend(trained[:EXAMPLES - len(seen_ids)])
                data = b"".join(orjson.dumps(r) + b"\n" for r in lines)
                fh.write(data)
                h.update(data)
                n += len(chunk)
                if advance is not None:
                    advance(len(chunk))
    except DialevalError as e:
        if e.file != str(src) or label == str(src):
            raise
        raise DialevalError(e.message, file=label, dialogue=e.dialogue, field=e.field) from None
    reject_file = out_dir / REJECTS / name
    if rejects:
        reject_file.parent.mkdir(exist_ok=True)
        shown = path_text(label)
        write_bytes(reject_file, b"".join(orjson.dumps({**r.to_dict(), "file": shown}) + b"\n" for r in rejects))
    elif reject_file.exists():
        reject_file.unlink()  # an earlier run's rejects of an input that has changed since
    return {"input": label, "sha256": digest, "output": name, "output_sha256": h.hexdigest(), "dialogues": n,
            "rejected": len(rejects), "rejects": f"{REJECTS}/{name}" if rejects else None,
            "in_training": seen, "in_training_examples": seen_ids}


STREAMED_ONLY = (".jsonl", ".ndjson", ".gz")
"""Shards only the streaming reader reads (JSON Lines, gzip): no other corpus format comes as these."""


def refuse_other_corpora(paths: Iterable[Path]) -> None:
    """An error for an input that is another format's corpus (a ConTurE ``data.json``, a DBDC folder), which
    streaming would read as STC-3 dialogues and reject one by one, or find no shard in; what detection cannot
    tell (a folder of STC-3 shards, JSON Lines, a damaged array) is left to the streaming reader.

    Raises
    ------
    DialevalError
        Naming the file, the format it holds and the command that predicts it.
    """
    from dialeval.io.detect import detect
    from dialeval.io.formats import get

    for f in paths:
        try:
            found = detect(f)
        except DialevalError:
            continue
        if found != "stc3":
            what = "folder" if f.is_dir() else "file"
            raise DialevalError(f"is a {get(found).corpus} {what}, not STC-3 dialogues, and several inputs, a "
                                "folder --out or --scheduler stream STC-3 shards only: predict it alone, in this "
                                f"process, e.g. `dialeval predict {shlex.quote(str(f))} --out run.json`", file=str(f))


def _free_folder(out: Path) -> Path:
    """A folder name beside ``out`` that does not exist yet (``preds-2``, ``preds-3``...), to suggest."""
    n = 2
    while (free := out.with_name(f"{out.name}-{n}")).exists():
        n += 1
    return free


def _same_file(a: object, b: Path) -> bool:
    try:
        return isinstance(a, str) and os.path.samefile(a, b)
    except OSError:
        return False


def _subtasks_text(subtasks: object) -> str:
    return "+".join(map(str, subtasks)) if isinstance(subtasks, list | tuple) else str(subtasks)


def _differences(old: dict, new: dict) -> list[str]:
    """What differs between an earlier run's manifest header and this run's, as the user sees it.

    Examples
    --------
    >>> m = {"name": "m", "kind": "prior", "subtasks": ["quality"], "sha256": "1"}
    >>> _differences({"dialeval_version": "1", "model": m, "subtasks": ["quality"], "chunk_dialogues": 256},
    ...              {"dialeval_version": "1", "model": {**m, "sha256": "2"}, "subtasks": ["nugget"],
    ...               "chunk_dialogues": 256})  # doctest: +NORMALIZE_WHITESPACE
    ['its model m has changed since (its files differ: trained again?)',
     'it predicted subtasks quality, this run nugget']
    """
    diffs = []
    if old["dialeval_version"] != new["dialeval_version"]:
        diffs.append(f"it was written by dialeval {old['dialeval_version']}, this is {new['dialeval_version']}")
    before, now = old["model"] if isinstance(old["model"], dict) else {}, new["model"]
    if {k: v for k, v in before.items() if k != "name"} == {k: v for k, v in now.items() if k != "name"}:
        pass   # the same model's files, given by another path (m, ./m, $PWD/m)
    elif before.get("name") != now["name"]:
        diffs.append(f"it was predicted by the model {before.get('name')}, this run by {now['name']}")
    elif before != now:
        diffs.append(f"its model {now['name']} has changed since (its files differ: trained again?)")
    if old["subtasks"] != new["subtasks"]:
        diffs.append(f"it predicted subtasks {_subtasks_text(old['subtasks'])}, this run "
                     f"{_subtasks_text(new['subtasks'])}")
    if old["chunk_dialogues"] != new["chunk_dialogues"]:
        diffs.append(f"it predicted chunks of {old['chunk_dialogues']} dialogues, this version "
                     f"{new['chunk_dialogues']}")
    return diffs


class Plan:
    """The shards of one ``predict_many`` call: which are done (manifest checksums match) and which to do."""

    def __init__(self, inputs: Iterable[str | os.PathLike], out: str | os.PathLike,
                 model: str | os.PathLike | None, subtask: str) -> None:
        from dialeval import __version__
        from dialeval.models.data import check_subtasks

        self.subtasks = check_subtasks(subtask)
        given = [inputs] if isinstance(inputs, str | os.PathLike) else list(inputs)
        refuse_other_corpora(Path(p) for p in given if isinstance(p, str | os.PathLike) and Path(p).is_dir())
        self.files = expand_inputs(given)
        refuse_other_corpora(f for f in self.files if not f.name.lower().endswith(STREAMED_ONLY))
        self.names = output_names(self.files)
        if os.fspath(out) == "":
            raise DialevalError("--out '' is empty; give the folder of the output shards (a new one, or one an "
                                "earlier run of the same settings wrote, to resume it)")
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise DialevalError("exists and is not a folder; --out is the folder of the output shards",
                                file=str(self.out))
        old_doc = self._old_manifest()  # before the model is read: a folder of other files is refused first
        self.model = model
        self._est = None
        self._digests: dict[Path, str] = {}
        self.header = {"dialeval_version": __version__, "model": model_identity(model),
                       "subtasks": list(self.subtasks), "chunk_dialogues": CHUNK_DIALOGUES}
        old = self._resumable(old_doc)
        self.entries: dict[str, dict] = {}
        self.todo: list[tuple[Path, str]] = []
        for f, name in zip(self.files, self.names, strict=True):
            prev = old.get(path_text(name))  # the manifest holds paths as text (path_text)
            if prev is not None and prev.get("input") == path_text(f) and prev.get("sha256") == self._sha256(f) \
                    and self._intact(prev, name):
                self.entries[name] = prev
            else:
                self.todo.append((f, name))
        self.skipped = len(self.entries)

    def _old_manifest(self) -> dict | None:
        """The manifest an earlier run wrote in ``out`` (None: a new or empty folder).

        Raises
        ------
        DialevalError
            ``out`` holds files but no manifest of ours (its files could be overwritten by shards of the same
            names), or a ``manifest.json`` that is not one.
        """
        if not self.out.is_dir():
            return None
        path = self.out / MANIFEST
        if not path.exists():
            held = sorted(p.name for p in self.out.iterdir())
            if not held:
                return None
            listed = first_few(held)
            raise DialevalError(f"--out {self.out} is a folder that is not empty ({listed}) and holds no {MANIFEST} "
                                "of an earlier `dialeval predict`: its shards could overwrite those files; give a "
                                f"new or empty folder, e.g. {_free_folder(self.out)}")
        try:
            doc = orjson.loads(path.read_bytes()) if path.is_file() else None
        except (OSError, orjson.JSONDecodeError):
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("shards"), list) \
                or not {"dialeval_version", "model", "subtasks"} <= doc.keys():
            raise DialevalError(f"--out {self.out} holds a {MANIFEST} that is not the manifest of a `dialeval "
                                f"predict`; give a new or empty folder, e.g. {_free_folder(self.out)}")
        return doc

    def _resumable(self, doc: dict | None) -> dict[str, dict]:
        """The finished shards of the earlier run ``doc`` by output name (as text: :func:`path_text`), when this
        run resumes it.

        Raises
        ------
        DialevalError
            The earlier run had other settings (model, subtasks, dialeval version), or predicted an output of
            this run from another input: resuming would silently replace its shards. The message names each
            difference. A model that cannot predict comes first (:meth:`estimator`), as when nothing is there.
        """
        if doc is None:
            return {}
        old = {e["output"]: e for e in doc["shards"] if isinstance(e, dict) and "output" in e}
        diffs = _differences({k: doc.get(k) for k in self.header}, self.header)
        for f, name in zip(self.files, self.names, strict=True):
            prev = old.get(path_text(name))
            if prev is not None and prev.get("input") != path_text(f) and not _same_file(prev.get("input"), f) \
                    and prev.get("sha256") != self._sha256(f):
                diffs.append(f"its {path_text(name)} is the prediction of {prev.get('input')}, not of {path_text(f)}")
        if diffs:
            self.estimator()
            raise DialevalError(f"--out {self.out} holds the shards of another run: " + "; ".join(diffs)
                                + ". Resuming needs the same inputs, model, --subtask and dialeval version: give a "
                                f"new or empty folder, e.g. {_free_folder(self.out)}")
        return old

    def _sha256(self, f: Path) -> str:
        if f not in self._digests:
            self._digests[f] = sha256_file(f)
        return self._digests[f]

    def estimator(self, source: str | os.PathLike | None = None):
        """The fitted model (loaded once) after the checks of :func:`check_model`, whose errors name ``source``
        (default the first input)."""
        if self._est is None:
            est = load_estimator(self.model)
            check_model(est, self.subtasks, source or self.files[0])
            self._est = est
        return self._est

    def _intact(self, entry: dict, name: str) -> bool:
        """Whether the output ``name`` of the manifest ``entry`` is there, with the checksum it recorded."""
        path = self.out / name
        return path.is_file() and sha256_file(path) == entry.get("output_sha256")

    def done(self, entry: dict) -> None:
        """Record a finished shard and rewrite the manifest (atomically)."""
        self.entries[entry["output"]] = entry
        self.write()

    def total(self) -> int | None:
        """Dialogues to predict, for a progress bar: the lines of the JSON Lines shards to do (counted in
        chunks, a fraction of a second per 100 MB); None when a shard is an array or gzip'ed."""
        from dialeval.io.stream import CHUNK, is_jsonl

        n = 0
        for src, _ in self.todo:
            with src.open("rb") as fh:
                if src.name.endswith(".gz") or not is_jsonl(src, fh.read(64)):
                    return None
                fh.seek(0)
                while chunk := fh.read(CHUNK):
                    n += chunk.count(b"\n") + (not chunk.endswith(b"\n") and len(chunk) < CHUNK)
        return n

    def manifest(self) -> dict:
        """The manifest as written: the header, totals and the finished shards, paths as text (:func:`path_text`)."""
        shards = [_shown(self.entries[n]) for n in self.names if n in self.entries]
        totals = {"shards": len(shards), "dialogues": sum(e["dialogues"] for e in shards),
                  "rejected": sum(e["rejected"] for e in shards),
                  "in_training": sum(e.get("in_training", 0) for e in shards)}
        return {**self.header, "totals": totals, "complete": len(shards) == len(self.names), "shards": shards}

    def write(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_bytes(self.out / MANIFEST, orjson.dumps(self.manifest(), option=orjson.OPT_INDENT_2) + b"\n")


def predict_many(inputs: Iterable[str | os.PathLike] | str | os.PathLike, out: str | os.PathLike, *,
                 model: str | os.PathLike | None = None, subtask: str = "both", scheduler: str | None = None,
                 workers: int | None = None, fail_fast: bool = False, progress: bool | None = None) -> dict:
    """Predict every dialogue of ``inputs`` into folder ``out`` (see the module docstring); returns the manifest.

    Parameters
    ----------
    inputs : path, glob or list of them
        Shards: JSON arrays or JSON Lines, gzip'ed or not; folders and glob patterns are expanded.
    out : path
        Output folder (created). Re-running with the same inputs resumes: finished shards are skipped.
    model : path, optional
        A model folder saved by ``dialeval train``; default the shipped multilingual model.
    subtask : {'both', 'quality', 'nugget'}
    scheduler : None, ``"local"`` or ``"tcp://HOST:PORT"``
        None: in this process. ``"local"``: a Dask LocalCluster of ``workers`` processes. An address: a
        running Dask cluster (:mod:`dialeval.distributed`), which must answer and have a worker within
        :data:`dialeval.distributed.CONNECT_TIMEOUT`. The output bytes are the same either way.
    workers : int, optional
        Worker processes of the local cluster (default: ``$DIALEVAL_THREADS``, else the number of CPUs this
        process may use: :func:`dialeval.threads.default_threads`). At most one per shard to predict is started
        (a :class:`~dialeval.DialevalWarning` when a given ``workers`` is cut; the CLI prints it as a
        ``warning:`` line); above :data:`dialeval.distributed.MAX_WORKERS_PER_CPU` per CPU is an error.
    fail_fast : bool
        Stop at the first dialogue that fails validation (default: reject it and go on).
    progress : bool, optional
        A progress bar in dialogues on stderr (None: when stderr is a terminal).
    """
    return run_plan(Plan(inputs, out, model, subtask), scheduler=scheduler, workers=workers, fail_fast=fail_fast,
                    progress=progress)


def run_plan(plan: Plan, *, scheduler: str | None = None, workers: int | None = None, fail_fast: bool = False,
             progress: bool | None = None) -> dict:
    """Predict the shards ``plan`` has to do (see :func:`predict_many`); returns the manifest.

    For a caller that wants to know the plan too (``plan.skipped``: shards an earlier run finished). The model
    is loaded and checked (:func:`check_model`), and a cluster reached, before anything is written: a run that
    fails then leaves ``plan.out`` as it was."""
    if scheduler is not None:
        from dialeval.distributed import check_scheduler, run_distributed

        check_scheduler(scheduler, workers)
    elif workers is not None:
        raise DialevalError(f"--workers {workers} needs --scheduler local (or a cluster address)")
    if not plan.todo:
        plan.write()
        return plan.manifest()
    est = plan.estimator(plan.todo[0][0])  # checked before anything is written: a failure leaves --out as it was
    if scheduler is not None:  # the workers load the model themselves; its errors were one line here first
        run_distributed(plan, scheduler, workers=workers, fail_fast=fail_fast, progress=progress)
        return plan.manifest()
    from dialeval import progress as _progress

    plan.write()
    total = plan.total() if _progress.enabled(progress) else None
    with _progress.bar(f"predicting {len(plan.todo)} shard(s)", total, progress=progress) as bar:
        for src, name in plan.todo:
            plan.done(predict_shard(src, plan.out, name, est, plan.subtasks, fail_fast=fail_fast,
                                    advance=bar.advance))
    return plan.manifest()
