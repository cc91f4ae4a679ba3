"""Shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dpcore.data import PreparedData

# No background precomputation in the app runs of the tests (AppTest and the servers they start inherit this);
# tests of pages/ui/precompute.py turn it on themselves.
os.environ.setdefault("DP_PRECOMPUTE", "0")


def unit_rows(n: int, d: int, seed: int = 0, spectrum: np.ndarray | None = None) -> np.ndarray:
    """Gaussian rows with the given covariance spectrum, scaled so the largest norm is 1."""
    rng = np.random.default_rng(seed)
    scales = np.sqrt(spectrum) if spectrum is not None else np.linspace(2.0, 0.2, d)
    X = rng.standard_normal((n, d)) * scales
    return X / np.linalg.norm(X, axis=1).max()


@pytest.fixture
def small_data() -> PreparedData:
    rng = np.random.default_rng(1)
    X = unit_rows(400, 6, seed=1)
    y = (X[:, 0] + 0.1 * rng.standard_normal(400) > 0).astype(int)
    return PreparedData(X, y=y, name="small")
