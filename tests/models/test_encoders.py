"""The sentence encoder: dialeval's fixed-block forward pass against the wheel's own, and its reproducibility."""

from __future__ import annotations

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


@pytest.mark.parametrize("rows", [1, 255, 256, 257, 700])
def test_blocks_is_the_product_and_a_rows_result_depends_on_that_row_only(rows):
    rng = np.random.default_rng(rows)
    W = rng.standard_normal((96, 40)).astype(np.float32)
    A = rng.standard_normal((rows, 96)).astype(np.float32)
    got = encoders._blocks(A, W)
    assert got.shape == (rows, 40)
    np.testing.assert_allclose(got, A.astype(np.float64) @ W.astype(np.float64), rtol=1e-5, atol=1e-4)
    for i in {0, rows // 2, rows - 1}:
        assert np.array_equal(encoders._blocks(A[i:i + 1], W)[0], got[i])


def test_models_saved_under_the_earlier_encoder_name_still_load():
    from dialeval.models import load_model

    assert "usem3-512-spm" in encoders.SAME_NETWORK and encoders.ENCODER not in encoders.SAME_NETWORK
    assert load_model("en") is not None  # the shipped models were saved as usem3-512-spm
