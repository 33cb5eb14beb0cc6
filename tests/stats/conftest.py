"""Fixtures of the stats tests: Sakai's textbook example (SIGNIFICANCE.md) and small random matrices."""

from __future__ import annotations

import numpy as np
import pytest

TEXTBOOK = {
    "A": [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30, .50, .40, .00, .60, .50, .30, .10, .50, .20, .10],
    "B": [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30, .40, .40, .10, .40, .20, .10, .10, .60, .30, .20],
    "C": [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40, .40, .30, .30, .20, .20, .20, .10, .50, .40, .30],
}


@pytest.fixture
def textbook() -> np.ndarray:
    """20 topics x 3 systems (A, B, C) of SIGNIFICANCE.md."""
    return np.column_stack([TEXTBOOK[k] for k in "ABC"])


@pytest.fixture
def runs_matrix() -> np.ndarray:
    """60 dialogues x 5 runs with clear and unclear differences: means about .30 .31 .40 .50 .51."""
    rng = np.random.default_rng(7)
    base = rng.random((60, 1)) * 0.4
    return np.clip(base + rng.normal(0, 0.08, (60, 5)) + [0.1, 0.11, 0.2, 0.3, 0.31], 0, 1)
