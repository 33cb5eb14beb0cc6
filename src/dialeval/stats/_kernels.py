"""Compiled kernel of the randomised Tukey HSD: within-row permutations from counter-based random streams.

The random numbers of iteration ``b`` depend only on ``(key, b)``, never on which thread runs it, so the
result is the same at any thread count. The stream, documented here so that a slow reference can
reproduce it exactly (``tests/stats`` does):

- ``mix(z)``: the SplitMix64 finaliser ``z ^= z >> 30; z *= C1; z ^= z >> 27; z *= C2; z ^= z >> 31``
  (all arithmetic modulo 2**64).
- Iteration ``b`` has a main stream starting at ``state = mix(key ^ mix((b + 1) * GAMMA))`` and a
  secondary one at ``rstate = mix(state ^ GAMMA)``; an output of a stream is ``state += GAMMA; mix(state)``
  (SplitMix64).
- Rows are taken in order; row ``i`` is permuted by the "inside-out" Fisher-Yates shuffle
  (``out[0] = x[0]``; for ``k = 1 .. m-1``: ``j = uniform(k + 1)``, ``out[k] = out[j]``, ``out[j] = x[k]``)
  and added to the column sums ``S``; ``hsd_b = (max(S) - min(S)) / n``.
- The draws for ``k = 1..4`` of a row use the four 16-bit words (least significant first) of one output of
  the main stream, ``k = 5..8`` those of the next output, and so on; words left over at the end of a row
  are not used.
- ``uniform(s)`` of a word ``w`` is Lemire's multiply-shift ``(w * s) >> 16``; while
  ``(w * s) & 0xFFFF < (2**16 - s) % s`` (probability below ``s / 2**16``) ``w`` is replaced by the low 16
  bits of the next output of the secondary stream. This makes the draw exactly uniform (needs s <= 2**16).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

GAMMA = np.uint64(0x9E3779B97F4A7C15)
C1 = np.uint64(0xBF58476D1CE4E5B9)
C2 = np.uint64(0x94D049BB133111EB)
_M16 = np.uint64(0xFFFF)
MAX_RUNS = 1 << 16
"""Runs (columns) the kernel can permute: its uniform draws use 16-bit words."""


@njit(inline="always", cache=True)
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> uint64(30))) * C1
    z = (z ^ (z >> uint64(27))) * C2
    return z ^ (z >> uint64(31))


@njit(inline="never", cache=True)
def _redraw(prod, s, rstate):  # pragma: no cover - compiled
    """Lemire's rejection step: new words from the secondary stream until ``(w * s) & 0xFFFF >= 2**16 % s``."""
    threshold = (uint64(65536) - s) % s
    while (prod & _M16) < threshold:
        rstate += GAMMA
        prod = (_mix(rstate) & _M16) * s
    return prod, rstate


@njit(cache=True, nogil=True)
def hsd_chunk(X, key, b0, out):  # pragma: no cover - compiled
    """``out[t] = hsd`` of iteration ``b0 + t`` for t in range(len(out)); X is a C-contiguous n x m float64.

    Serial and free of the GIL: :func:`dialeval.stats.randomization.permutation_null` runs contiguous blocks
    of iterations on several threads. (A ``prange`` here scaled badly: the two scratch arrays allocated per
    iteration contend across threads, and hoisting them out made numba's parallel code slower per thread.)
    """
    n, m = X.shape
    sums = np.empty(m)  # scratch allocated once per call: allocations per iteration contend across threads
    row = np.empty(m)
    for t in range(out.size):
        state = _mix(key ^ _mix(uint64(b0 + t + 1) * GAMMA))
        rstate = _mix(state ^ GAMMA)
        sums[:] = 0.0
        for i in range(n):
            row[0] = X[i, 0]
            for k0 in range(1, m, 4):
                state += GAMMA
                z = _mix(state)
                for q in range(4):  # unrolled by LLVM: constant shifts
                    k = k0 + q
                    if k >= m:
                        break
                    s = uint64(k + 1)
                    prod = ((z >> uint64(16 * q)) & _M16) * s
                    if (prod & _M16) < s:  # rare: may need rejection
                        prod, rstate = _redraw(prod, s, rstate)
                    j = prod >> uint64(16)
                    row[k] = row[j]
                    row[j] = X[i, k]
            for k in range(m):
                sums[k] += row[k]
        lo = sums[0]
        hi = sums[0]
        for k in range(1, m):
            v = sums[k]
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        out[t] = (hi - lo) / n


@njit(cache=True, nogil=True)
def hsd_chunk_multi(X, key, b0, out):  # pragma: no cover - compiled
    """:func:`hsd_chunk` for K score columns at once: X is a C-contiguous n x m x K float64, ``out`` is t x K.

    Every column is permuted by the same draws (iteration ``b``'s stream of ``key``), which is what K calls
    of :func:`hsd_chunk` with one key do: ``out[:, q]`` equals ``hsd_chunk(X[:, :, q], key, b0)`` bit for bit
    (the same values are added in the same order), while the random numbers are drawn once, not K times.
    """
    n, m, K = X.shape
    sums = np.empty((m, K))
    idx = np.empty(m, dtype=np.int64)
    for t in range(out.shape[0]):
        state = _mix(key ^ _mix(uint64(b0 + t + 1) * GAMMA))
        rstate = _mix(state ^ GAMMA)
        sums[:, :] = 0.0
        for i in range(n):
            idx[0] = 0
            for k0 in range(1, m, 4):
                state += GAMMA
                z = _mix(state)
                for q in range(4):
                    k = k0 + q
                    if k >= m:
                        break
                    s = uint64(k + 1)
                    prod = ((z >> uint64(16 * q)) & _M16) * s
                    if (prod & _M16) < s:
                        prod, rstate = _redraw(prod, s, rstate)
                    j = prod >> uint64(16)
                    idx[k] = idx[j]
                    idx[j] = k
            for c in range(m):
                src = idx[c]
                for q in range(K):
                    sums[c, q] += X[i, src, q]
        for q in range(K):
            lo = sums[0, q]
            hi = sums[0, q]
            for c in range(1, m):
                v = sums[c, q]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            out[t, q] = (hi - lo) / n
