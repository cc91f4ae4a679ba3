"""Synthetic rows for mechanism tests (imported by name: ``from _unit_rows import unit_rows``; a test module never
imports ``conftest``, which names a different file in tests/e2e)."""

from __future__ import annotations

import numpy as np


def unit_rows(n: int, d: int, seed: int = 0, spectrum: np.ndarray | None = None) -> np.ndarray:
    """Gaussian rows with the given covariance spectrum, scaled so the largest norm is 1."""
    rng = np.random.default_rng(seed)
    scales = np.sqrt(spectrum) if spectrum is not None else np.linspace(2.0, 0.2, d)
    X = rng.standard_normal((n, d)) * scales
    return X / np.linalg.norm(X, axis=1).max()
