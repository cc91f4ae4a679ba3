"""Pure helpers behind the dashboard's "Inspect a mechanism" and "Learn" pages.

Everything here reads the TRUE data (eigenvalues of C, projections of the rows, the noise Ĉ − C): these are
evaluation views for a sandbox, never private releases. No Streamlit import; the pages only draw what these
functions return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.linalg import eigh_desc
from ..core.privacy import GUARANTEES, LedgerEntry
from ..data.prepared import PreparedData
from ..evaluation.metrics import principal_angle_max_deg
from ..vocabulary import Guarantee

#: ε values of the counterexample-δ table on the Learn page.
COUNTEREXAMPLE_EPSILONS = (0.1, 0.5, 1.0, 2.0)

#: The PPCA burn-in threshold of Chaudhuri et al. (2013) §6.2 (F_k^i(T) < 0.01; a reported statistic, not the verdict).
CONVERGENCE_THRESHOLD = 0.01

# Diagnostics keys that may hold per-chain burn-in traces (first match wins).
_TRACE_KEYS = ("f_traces", "burn_in_traces", "traces", "f_trace", "F_traces")


# --------------------------------------------------------------------------------------------------
# Registry grouping
# --------------------------------------------------------------------------------------------------

def group_by_guarantee(mechanisms: Iterable, include_invalid: bool = True) -> dict[str, list]:
    """Mechanisms grouped by guarantee, strongest first, keeping registry order inside each group.

    Claimed-invalid mechanisms are dropped unless ``include_invalid``; empty groups are omitted.
    """
    groups: dict[str, list] = {g: [] for g in GUARANTEES}
    for mech in mechanisms:
        if mech.guarantee == Guarantee.CLAIMED_INVALID and not include_invalid:
            continue
        groups.setdefault(mech.guarantee, []).append(mech)
    return {g: ms for g, ms in groups.items() if ms}


def counterexample_table(mechanisms: Iterable, epsilons: Sequence[float] = COUNTEREXAMPLE_EPSILONS) -> pd.DataFrame:
    """δ below which each mechanism's privacy claim provably fails, one row per mechanism with a counterexample.

    Columns: ``id``, ``name`` and one column ``ε = …`` per epsilon (from ``mech.counterexample_delta``).
    """
    rows = []
    for mech in mechanisms:
        if mech.counterexample_delta(1.0) is None:
            continue
        row = {"id": mech.id, "name": mech.name}
        for eps in epsilons:
            value = mech.counterexample_delta(float(eps))
            row[f"ε = {eps:g}"] = float("nan") if value is None else float(value)
        rows.append(row)
    return pd.DataFrame(rows, columns=["id", "name", *[f"ε = {e:g}" for e in epsilons]])


# --------------------------------------------------------------------------------------------------
# Spectrum
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpectrumComparison:
    """True vs private eigenvalues (unit-norm scale of C). ``private`` is None when nothing spectral was released."""

    true: np.ndarray
    private: np.ndarray | None
    source: str  # "released eigenvalues" | "eigenvalues of the post-processed covariance" | "none"

    def frame(self) -> pd.DataFrame:
        """Long format (index, eigenvalue, series); values that are zero to rounding are NaN (log axis)."""
        parts = [_series_frame(self.true_drawable, "true (non-private)")]
        if self.private is not None:
            parts.append(_series_frame(self.private_drawable, "private"))
        return pd.concat(parts, ignore_index=True)

    @property
    def true_drawable(self) -> np.ndarray:
        return drawable_on_log_scale(self.true)

    @property
    def private_drawable(self) -> np.ndarray | None:
        return None if self.private is None else drawable_on_log_scale(self.private)

    @property
    def n_nonpositive(self) -> int:
        """How many private eigenvalues are zero (to rounding) or negative, i.e. not drawable on a log scale."""
        return 0 if self.private is None else int(np.sum(np.isnan(self.private_drawable)))


def drawable_on_log_scale(values: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Values with those ≤ rtol·max|values| (zero up to rounding, or negative) replaced by NaN."""
    v = np.asarray(values, dtype=float)
    scale = float(np.nanmax(np.abs(v))) if v.size else 0.0
    return np.where(v > rtol * scale, v, np.nan)


def _series_frame(values: np.ndarray, label: str) -> pd.DataFrame:
    return pd.DataFrame({"index": np.arange(1, values.size + 1), "eigenvalue": values, "series": label})


def spectrum_comparison(true_eigenvalues: np.ndarray, release) -> SpectrumComparison:
    """Compare C's eigenvalues with the release's: released eigenvalues if any, else eig(covariance_post)."""
    true = np.sort(np.asarray(true_eigenvalues, dtype=float))[::-1]
    if release is None or getattr(release, "is_bottom", False):
        return SpectrumComparison(true, None, "none")
    if release.eigenvalues is not None:
        priv = np.sort(np.asarray(release.eigenvalues, dtype=float).ravel())[::-1]
        return SpectrumComparison(true, priv, "released eigenvalues")
    if release.covariance_post is not None:
        return SpectrumComparison(true, eigh_desc(release.covariance_post)[0],
                                  "eigenvalues of the post-processed covariance")
    return SpectrumComparison(true, None, "none")


# --------------------------------------------------------------------------------------------------
# Noise / projector difference
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NoiseView:
    """A d×d matrix to draw as a heatmap (possibly the leading block of a larger one)."""

    matrix: np.ndarray
    kind: str  # "covariance" (Ĉ − C) | "projector" (Π̂ − Π_k)
    title: str
    truncated_from: int | None = None  # original d when only the leading block is shown
    frobenius: float = 0.0


def noise_view(release, data: PreparedData, max_dim: int = 120) -> NoiseView | None:
    """Ĉ − C (raw release minus the true C) for covariance releases, else Π̂ − Π_k; None for ⊥.

    Only the leading ``max_dim`` × ``max_dim`` block is kept for very wide data (the Frobenius norm is of the full
    matrix).
    """
    if release is None or release.is_bottom:
        return None
    if release.covariance is not None:
        M = np.asarray(release.covariance, dtype=float) - data.C
        kind, title = "covariance", "Noise Ĉ − C (raw release minus the true C)"
    elif release.subspace is not None:
        Vk = data.eigenvectors[:, : release.k]
        M = release.subspace @ release.subspace.T - Vk @ Vk.T
        kind, title = "projector", f"Projector difference Π̂ − Π_k (k = {release.k})"
    else:  # pragma: no cover - a Release always has a subspace unless ⊥
        return None
    fro = float(np.linalg.norm(M))
    d = M.shape[0]
    truncated = None
    if d > max_dim:
        M, truncated = M[:max_dim, :max_dim], d
    return NoiseView(M, kind, title, truncated, fro)


# --------------------------------------------------------------------------------------------------
# Projections on the top-2 subspaces
# --------------------------------------------------------------------------------------------------

def procrustes_rotation(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The orthogonal Q minimising ‖A Q − B‖_F (Schönemann 1966: Q = U Wᵀ for AᵀB = U Σ Wᵀ)."""
    U, _, Wt = np.linalg.svd(np.asarray(A, dtype=float).T @ np.asarray(B, dtype=float))
    return U @ Wt


@dataclass(frozen=True)
class ProjectionPair:
    """Rows projected on the true top-2 directions and on the aligned private 2-D plane."""

    true: np.ndarray  # (m, 2)
    private: np.ndarray  # (m, 2)
    rows: np.ndarray  # indices of the rows shown
    rotation: np.ndarray  # the orthogonal alignment applied to the private basis
    max_angle_deg: float  # largest principal angle between the two 2-D planes


def aligned_private_plane(V_hat: np.ndarray, V_true: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A d×2 basis of the private plane, rotated/reflected to best match the true top-2 basis ``V_true[:, :2]``.

    ``ordered``: the private columns are ordered (top eigenvectors of a private covariance, or sequentially sampled);
    the plane is then span of the first two private columns. Otherwise (an unordered subspace such as a Bingham
    sample) the whole private k-frame is first Procrustes-aligned to the true top-k and its first two columns kept.
    Returns (basis, rotation).
    """
    V_hat = np.asarray(V_hat, dtype=float)
    V_true = np.asarray(V_true, dtype=float)
    if V_hat.shape[1] < 2 or V_true.shape[1] < 2:
        raise ValueError("the projection view needs k ≥ 2 private directions")
    if ordered:
        P = V_hat[:, :2]
        Q = procrustes_rotation(P, V_true[:, :2])
        return P @ Q, Q
    k = V_hat.shape[1]
    Q = procrustes_rotation(V_hat, V_true[:, :k])
    return (V_hat @ Q)[:, :2], Q


def projection_pair(data: PreparedData, V_hat: np.ndarray, ordered: bool = True, max_points: int = 3000,
                    seed: int = 0) -> ProjectionPair:
    """Project (a random subsample of at most ``max_points``) rows on the true vs aligned private top-2 planes."""
    V_true = data.eigenvectors
    basis, Q = aligned_private_plane(V_hat, V_true, ordered)
    rows = subsample_rows(data.n, max_points, seed)
    X = data.X[rows]
    Vt2 = V_true[:, :2]
    angle = principal_angle_max_deg(Vt2, basis)
    return ProjectionPair(X @ Vt2, X @ basis, rows, Q, angle)


def subsample_rows(n: int, max_points: int, seed: int = 0) -> np.ndarray:
    """All row indices when n ≤ max_points, else a sorted random subset of size max_points (deterministic)."""
    if n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))


# --------------------------------------------------------------------------------------------------
# Ledger and sampler diagnostics
# --------------------------------------------------------------------------------------------------

def ledger_frame(entries: Iterable[LedgerEntry], only_costly: bool = False) -> pd.DataFrame:
    """One row per ledger step (step, epsilon, delta, private, note), for a "where ε went" bar chart.

    ``only_costly`` keeps the steps that spend budget or are flagged non-private (free private steps dropped).
    """
    rows = [e.as_dict() for e in entries
            if not only_costly or e.epsilon > 0 or e.delta > 0 or not e.private]
    return pd.DataFrame(rows, columns=["step", "epsilon", "delta", "private", "note"])


@dataclass(frozen=True)
class BurnInTraces:
    """Per-chain F_k^i(T) traces (Chaudhuri et al. 2013 §6.2) and whether every chain ended below the threshold.

    F_k measures sign mixing (≈ 1/√T at stationarity); it is not PPCA's convergence verdict, which is
    ``diagnostics["convergence"]`` (split-R̂ / bulk-ESS, :mod:`dpcore.samplers.convergence`)."""

    frame: pd.DataFrame  # columns: chain, scan, F
    final: np.ndarray  # last value of each chain
    threshold: float = CONVERGENCE_THRESHOLD

    @property
    def converged(self) -> bool:
        return bool(np.all(self.final < self.threshold))


def burn_in_traces(diagnostics: Mapping, threshold: float = CONVERGENCE_THRESHOLD) -> BurnInTraces | None:
    """Extract per-chain burn-in traces from a release's diagnostics, or None when there are none.

    Accepts a 2-D array (chains × scans), a list of 1-D arrays, or a dict chain → array, under one of the keys
    ``f_traces``, ``burn_in_traces``, ``traces``, ``f_trace``, ``F_traces``. A ``trace_scans`` entry (the scan
    number of each recorded value) is used for the x-axis when present and of the right length.
    """
    raw = next((diagnostics[k] for k in _TRACE_KEYS if k in diagnostics and diagnostics[k] is not None), None)
    if raw is None:
        return None
    if isinstance(diagnostics.get("threshold"), (int, float)) and diagnostics["threshold"] > 0:
        threshold = float(diagnostics["threshold"])
    if isinstance(raw, Mapping):
        chains = [(str(name), np.asarray(v, dtype=float).ravel()) for name, v in raw.items()]
    else:
        arr = raw if isinstance(raw, (list, tuple)) else np.asarray(raw, dtype=float)
        if isinstance(arr, np.ndarray) and arr.ndim == 1:
            arr = arr[None, :]
        chains = [(str(i + 1), np.asarray(v, dtype=float).ravel()) for i, v in enumerate(arr)]
    chains = [(name, v) for name, v in chains if v.size]
    if not chains:
        return None
    scans_raw = diagnostics.get("trace_scans")
    parts, final = [], []
    for name, v in chains:
        scans = np.arange(1, v.size + 1)
        if scans_raw is not None and np.asarray(scans_raw).size == v.size:
            scans = np.asarray(scans_raw).ravel()
        parts.append(pd.DataFrame({"chain": name, "scan": scans, "F": v}))
        final.append(v[-1])
    return BurnInTraces(pd.concat(parts, ignore_index=True), np.asarray(final, dtype=float), threshold)


def proposal_counts(diagnostics: Mapping) -> np.ndarray | None:
    """Rejection-sampler proposal counts per drawn vector (``proposals_per_vector``), or None."""
    value = diagnostics.get("proposals_per_vector")
    if value is None:
        return None
    arr = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    return arr if arr.size else None


#: Diagnostics keys shown elsewhere (caption / dedicated chart) rather than in the scalar table.
_NOT_IN_TABLE = ("note",)


def scalar_diagnostics(diagnostics: Mapping) -> pd.DataFrame:
    """The scalar (number / bool / short string) diagnostics as a two-column table; arrays and ``note`` skipped."""
    rows = []
    for key, value in diagnostics.items():
        if key in _NOT_IN_TABLE:
            continue
        if isinstance(value, (bool, np.bool_)):
            rows.append({"diagnostic": str(key), "value": "yes" if value else "no"})
        elif isinstance(value, (int, float, np.integer, np.floating)):
            rows.append({"diagnostic": str(key), "value": f"{float(value):.6g}"})
        elif isinstance(value, str) and len(value) <= 200:
            rows.append({"diagnostic": str(key), "value": value})
        elif isinstance(value, np.ndarray) and value.ndim == 0:
            rows.append({"diagnostic": str(key), "value": f"{float(value):.6g}"})
    return pd.DataFrame(rows, columns=["diagnostic", "value"])


def is_ordered_release(mechanism, release) -> bool:
    """Whether the release's columns carry an order (covariance outputs, or explicitly released eigenvalues)."""
    if release.covariance is not None or release.eigenvalues is not None:
        return True
    return bool(getattr(mechanism, "ordered_output", False))


__all__ = [
    "CONVERGENCE_THRESHOLD",
    "COUNTEREXAMPLE_EPSILONS",
    "BurnInTraces",
    "NoiseView",
    "ProjectionPair",
    "SpectrumComparison",
    "aligned_private_plane",
    "burn_in_traces",
    "counterexample_table",
    "drawable_on_log_scale",
    "group_by_guarantee",
    "is_ordered_release",
    "ledger_frame",
    "noise_view",
    "procrustes_rotation",
    "projection_pair",
    "proposal_counts",
    "scalar_diagnostics",
    "spectrum_comparison",
    "subsample_rows",
]
