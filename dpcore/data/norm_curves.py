"""Clipping advisor curves (NON-PRIVATE diagnostics): how many rows each candidate norm bound B would clip.

* :func:`clip_fraction_curve` — the clip fraction at each candidate B.
* :func:`suggest_norm_bounds` — B at quantiles of the row norms.

Both read the raw data (for public/synthetic data and teaching). Re-exported by :mod:`dpcore.data.preprocess` (the
old import path) and :mod:`dpcore.data`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core._validation import check_choice
from ..exceptions import InvalidParameterError
from ..vocabulary import Centering, FeatureScaling
from .datasets import Dataset
from .preprocess import CENTERINGS, FEATURE_SCALINGS, _resolve_center, as_dataset
from .transform import RowTransform


def _row_norms(ds: Dataset, feature_scaling: str, centering: str, center: object) -> np.ndarray:
    feature_scaling = check_choice(feature_scaling, "feature_scaling", FEATURE_SCALINGS)
    centering = check_choice(centering, "centering", CENTERINGS)
    X = ds.X
    if feature_scaling == FeatureScaling.SCHEMA and ds.feature_ranges is not None:
        lo, hi = ds.feature_ranges[:, 0], ds.feature_ranges[:, 1]
    elif feature_scaling == FeatureScaling.MINMAX:
        lo, hi = X.min(axis=0), X.max(axis=0)
    else:
        lo = hi = None
    width = None if lo is None else np.where(hi - lo > 0, hi - lo, 1.0)
    X = RowTransform(bound=1.0, lo=lo, hi=hi, width=width, clamp=feature_scaling == FeatureScaling.SCHEMA).scaled(X)[0]
    if centering == Centering.PUBLIC:
        X = X - _resolve_center(center, X.shape[1], lo is not None, ds.feature_groups)
    elif centering in (Centering.EMPIRICAL, Centering.DP):  # the DP mean is approximated by the exact mean here
        X = X - X.mean(axis=0)
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def clip_fraction_curve(dataset: Dataset | np.ndarray, candidates: Sequence[float] | np.ndarray | None = None, *,
                        feature_scaling: str = FeatureScaling.SCHEMA, centering: str = Centering.NONE,
                        center: Sequence[float] | np.ndarray | None = None) -> pd.DataFrame:
    """Fraction of rows that clipping to each candidate B would clip (columns ``norm_bound``, ``clip_fraction``).

    NON-PRIVATE diagnostic computed from the raw data, for public/synthetic data and teaching only: showing it for
    sensitive data leaks information. ``centering='dp'`` is approximated by the exact mean. With ``candidates``
    None, 25 bounds spread over the observed norms are used.
    """
    norms = _row_norms(as_dataset(dataset), feature_scaling, centering, center)
    if candidates is None:
        hi = float(norms.max(initial=0.0)) or 1.0
        cand = np.linspace(hi / 25.0, hi, 25)
    else:
        cand = np.asarray(candidates, dtype=np.float64).ravel()
        if cand.size == 0 or not np.all(np.isfinite(cand)) or np.any(cand <= 0):
            raise InvalidParameterError("candidates must be a non-empty list of positive, finite norm bounds.")
    cand = np.sort(cand)
    sorted_norms = np.sort(norms)
    frac = 1.0 - np.searchsorted(sorted_norms, cand, side="right") / norms.size
    return pd.DataFrame({"norm_bound": cand, "clip_fraction": frac})


def suggest_norm_bounds(dataset: Dataset | np.ndarray,
                        quantiles: Sequence[float] = (0.5, 0.75, 0.9, 0.95, 0.99, 1.0), *,
                        feature_scaling: str = FeatureScaling.SCHEMA, centering: str = Centering.NONE,
                        center: Sequence[float] | np.ndarray | None = None) -> pd.DataFrame:
    """Norm bounds at the given quantiles of ‖xᵢ‖ (columns ``quantile``, ``norm_bound``, ``clip_fraction``).

    NON-PRIVATE diagnostic (exact quantiles of the data): fine for choosing B on public or synthetic data; for
    sensitive data, a private pipeline would spend budget on a DP quantile instead (spec §6.2).
    """
    q = np.asarray(quantiles, dtype=np.float64).ravel()
    if q.size == 0 or np.any(~np.isfinite(q)) or np.any(q <= 0) or np.any(q > 1):
        raise InvalidParameterError("quantiles must be numbers in (0, 1].")
    norms = _row_norms(as_dataset(dataset), feature_scaling, centering, center)
    bounds = np.quantile(norms, q)
    frac = np.array([np.mean(norms > b) for b in bounds])
    return pd.DataFrame({"quantile": q, "norm_bound": bounds, "clip_fraction": frac})


__all__ = ["clip_fraction_curve", "suggest_norm_bounds"]
