"""Privacy-aware preprocessing (spec §6.2): raw :class:`Dataset` → :class:`PreparedData` with ‖x‖ ≤ 1.

Pipeline, each step recorded in the ledger (``private=False`` steps also emit a :class:`PrivacyLeakWarning`):

1. **feature scaling** — ``"schema"``: clamp each feature to its PUBLIC range and map it affinely to [0, 1]
   (a per-record operation: free). A dataset without a public schema is used in its raw units (recorded).
   ``"minmax"``: ranges taken from the data — NOT private. ``"none"``: raw units.
2. **centring** — ``"none"``; ``"public"``: subtract a public ``center`` (default: the midpoint of the public
   ranges; free); ``"dp"``: subtract a DP mean
   (Gaussian mechanism on the mean of the B-clipped rows, replace-one L2 sensitivity 2B/n, analytic calibration,
   its own budget ``(centering_epsilon, centering_delta)``); ``"empirical"``: subtract the data mean — NOT private.
3. **norm bound** — ``"clip"``: x ← x·min(1, B/‖x‖) with a public B (per record: free; the clip fraction is a
   non-private diagnostic); ``"max_norm"``: B = maxᵢ‖xᵢ‖ — NOT private. Rows are finally divided by B.

Default B (``norm_bound=None`` with ``"clip"``): when the features were mapped to [0, 1] (schema/minmax), the
largest possible norm — √d, or maxₓ‖x − c‖ = ‖max(|c|, |1 − c|)‖ after a public centre c (√d/2 for the midpoint) —
so nothing is clipped except after DP/empirical centring; otherwise the dataset's public ``suggested_norm_bound``
(e.g. a generator's known bound, or B = 1 for Chaudhuri et al.'s synthetic data); otherwise an error asks for an
explicit bound.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice, check_delta, check_epsilon, check_neighbouring, check_positive
from ..exceptions import DataError, InvalidParameterError, PrivacyLeakWarning
from ..privacy import Diagnostics, LedgerEntry, gaussian_sigma
from ..seeding import RandomState, Stage, stage_rng
from ..vocabulary import Centering, FeatureScaling, NormMode, values
from .datasets import Dataset
from .prepared import PreparedData

FEATURE_SCALINGS = values(FeatureScaling)
NORM_MODES = values(NormMode)
CENTERINGS = values(Centering)


def as_dataset(dataset: Dataset | np.ndarray) -> Dataset:
    """A Dataset as is, or a raw numeric array wrapped as one (no schema, no labels)."""
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, np.ndarray):
        return Dataset(id="array", name="array", X=dataset)
    raise InvalidParameterError(f"dataset must be a dpcore Dataset or a 2-D numpy array, got {type(dataset).__name__}.")


def _scale(ds: Dataset, feature_scaling: str) -> tuple[np.ndarray, LedgerEntry | None, bool, dict]:
    """Step 1. Returns (X, ledger entry, features-in-[0,1] flag, info)."""
    X = np.array(ds.X, dtype=np.float64)
    if feature_scaling == "schema" and ds.feature_ranges is not None:
        lo, hi = ds.feature_ranges[:, 0], ds.feature_ranges[:, 1]
        width = hi - lo
        Xc = np.clip(X, lo, hi)
        clamped = float(np.mean(Xc != X))
        X = (Xc - lo) / np.where(width > 0, width, 1.0)
        entry = LedgerEntry("schema scaling", note="clamp each feature to its public range and map to [0, 1] "
                            "(per record, free)")
        return X, entry, True, {"clamped_fraction": clamped, "scale_lo": lo.copy(), "scale_width": width.copy()}
    if feature_scaling == "schema":
        return X, LedgerEntry("no public schema", note="the dataset has no public feature ranges; features are "
                              "used in their raw units"), False, {}
    if feature_scaling == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        width = hi - lo
        X = (X - lo) / np.where(width > 0, width, 1.0)
        entry = LedgerEntry("min–max scaling from the data", private=False,
                            note="per-feature min and max computed from the data (not private); use "
                                 "feature_scaling='schema' with public ranges for a private pipeline")
        return X, entry, True, {"scale_lo": lo, "scale_width": width}
    return X, LedgerEntry("no feature scaling", note="raw units"), False, {}


def _clip_rows(X: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """x ← x·min(1, B/‖x‖); returns (X, mask of clipped rows)."""
    norms = np.linalg.norm(X, axis=1)
    clipped = norms > bound
    if clipped.any():
        X = X.copy()
        X[clipped] *= (bound / norms[clipped])[:, None]
    return X, clipped


def _resolve_center(center: object, d: int, unit_box: bool) -> np.ndarray:
    """The public centre; None means the midpoint 0.5 of the public ranges when features were mapped to [0, 1]."""
    if center is None:
        if unit_box:
            return np.full(d, 0.5)
        raise InvalidParameterError("centering='public' needs center=<array of length d> (a public centre in raw "
                                    "units): this dataset has no public ranges whose midpoint could serve.")
    c = np.asarray(center, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(d, float(c))
    if c.shape != (d,) or not np.all(np.isfinite(c)):
        raise InvalidParameterError(f"center must be a finite array of length d = {d}; got shape {c.shape}.")
    return c


def preprocess(dataset: Dataset | np.ndarray, *, feature_scaling: str = "schema", norm_bound: float | None = None,
               norm_mode: str = "clip", centering: str = "none", center: Sequence[float] | np.ndarray | None = None,
               centering_epsilon: float = 0.1, centering_delta: float = 1e-6, neighbouring: str = "replace",
               norm_bound_from_data: bool = False, random_state: RandomState = None) -> PreparedData:
    """Turn a raw dataset into :class:`PreparedData` (rows divided by B so ‖x‖ ≤ 1; ``norm_bound`` = B).

    See the module docstring for the steps and the default B. ``center`` is in the units after feature scaling;
    with ``centering='public'`` and no ``center``, the midpoint of the public ranges (0.5 after schema scaling).
    The DP mean (``centering='dp'``) needs ``norm_mode='clip'`` and ``neighbouring='replace'`` (n public); its
    (ε, δ) are recorded in the ledger and must be added to the mechanism's budget (basic composition).
    ``norm_bound_from_data=True`` says that ``norm_bound`` was read off this data (e.g. from the clipping advisor):
    the clip step is then recorded as NOT private. ``random_state`` seeds the DP mean's own child stream
    (:mod:`dpcore.seeding`), so the same integer may also be given to the mechanism.
    Exact counts (clipped rows, clamped entries, dropped rows) go to ``PreparedData.diagnostics`` (not private),
    never into the ledger.
    """
    ds = as_dataset(dataset)
    feature_scaling = check_choice(feature_scaling, "feature_scaling", FEATURE_SCALINGS)
    norm_mode = check_choice(norm_mode, "norm_mode", NORM_MODES)
    centering = check_choice(centering, "centering", CENTERINGS)
    neighbouring = check_neighbouring(neighbouring)
    if norm_bound is not None:
        norm_bound = check_positive(norm_bound, "norm_bound")
        if norm_mode == "max_norm":
            raise InvalidParameterError("norm_bound is set but norm_mode='max_norm' derives B from the data; "
                                        "use norm_mode='clip' with your public bound, or drop norm_bound.")
    if norm_bound_from_data and norm_bound is None:
        raise InvalidParameterError("norm_bound_from_data=True needs the norm_bound that was read off the data.")
    if center is not None and centering != "public":
        raise InvalidParameterError(f"center is only used with centering='public' (got centering={centering!r}).")
    if centering == "dp":
        centering_epsilon = check_epsilon(centering_epsilon, "centering_epsilon")
        centering_delta = check_delta(centering_delta, "centering_delta", required=True)
        if norm_mode != "clip":
            raise InvalidParameterError("centering='dp' needs a public norm bound; use norm_mode='clip'.")
        if neighbouring != "replace":
            raise InvalidParameterError("centering='dp' uses the replace-one sensitivity 2B/n (n public); under "
                                        "add/remove n is private — use a public centre or neighbouring='replace'.")
    rng = stage_rng(random_state, Stage.CENTERING)

    ledger: list[LedgerEntry] = list(ds.load_ledger)
    X, entry, unit_box, info = _scale(ds, feature_scaling)
    ledger.append(entry)
    n, d = X.shape

    # --- public norm bound ---------------------------------------------------------------------------
    public_c = _resolve_center(center, d, unit_box) if centering == "public" else None
    bound_note = ""
    bound_public = not (norm_bound_from_data and norm_bound is not None)
    if norm_mode == "clip":
        if norm_bound is not None:
            bound, bound_note = norm_bound, ("read off this data (NOT private: choose B from public knowledge)"
                                             if norm_bound_from_data else "given by the user (public)")
        elif unit_box and public_c is not None:
            bound = float(np.linalg.norm(np.maximum(np.abs(public_c), np.abs(1.0 - public_c))))
            bound_note = "default: largest ‖x − c‖ over [0, 1]^d (no clipping)"
        elif unit_box:
            bound, bound_note = math.sqrt(d), "default √d: features lie in [0, 1] (no clipping)"
        elif ds.suggested_norm_bound is not None:
            bound, bound_note = float(ds.suggested_norm_bound), "the dataset's public suggested bound"
        else:
            raise InvalidParameterError(
                f"dataset {ds.name!r} has no public feature ranges, so there is no public default norm bound; "
                "load it with a public schema (load_csv(..., schema=S); CLI: --schema S, drafted by `dpcore schema "
                "infer`), pass norm_bound=B (a public bound on ‖x‖ in raw units), or use feature_scaling='minmax' / "
                "norm_mode='max_norm' (both not private)."
            )

    # --- centring --------------------------------------------------------------------------------------
    clipped_any = np.zeros(n, dtype=bool)
    if centering == "public":
        c = public_c
        X = X - c
        what = "the midpoint of the public ranges" if center is None else "a public centre"
        ledger.append(LedgerEntry("public centring", note=f"subtract {what} (free)"))
        info["center"] = c
    elif centering == "empirical":
        c = X.mean(axis=0)
        X = X - c
        ledger.append(LedgerEntry("empirical centring", private=False,
                                  note="the data mean was subtracted (not private); use centering='dp' or a "
                                       "public centre"))
        info["center"] = c
    elif centering == "dp":
        X, clipped_any = _clip_rows(X, bound)
        l2 = 2.0 * bound / n
        sigma = gaussian_sigma(centering_epsilon, centering_delta, l2, "analytic")
        mu = X.mean(axis=0) + rng.normal(0.0, sigma, size=d)
        X = X - mu
        ledger.append(LedgerEntry("DP mean for centring", centering_epsilon, centering_delta,
                                  note=f"Gaussian mechanism on the mean of B-clipped rows: Δ₂ = 2B/n = {l2:.4g}, "
                                       f"σ = {sigma:.4g} (analytic); rows re-clipped to B afterwards"))
        info.update(center=mu, centering_sigma=sigma)

    # --- norm bound ------------------------------------------------------------------------------------
    if norm_mode == "clip":
        X, clipped = _clip_rows(X, bound)
        clipped_any |= clipped
        clip_fraction = float(clipped_any.mean())
        ledger.append(LedgerEntry("clip rows to ‖x‖ ≤ B", private=bound_public,
                                  note=f"B = {bound:.6g} ({bound_note}); per record, free"))
    else:
        bound = float(np.linalg.norm(X, axis=1).max(initial=0.0))
        if bound <= 0:
            raise DataError("every row is zero after preprocessing; there is nothing to analyse.")
        clip_fraction = 0.0
        ledger.append(LedgerEntry("divide by the maximum row norm", private=False,
                                  note=f"B = max‖x‖ = {bound:.6g} computed from the data (not private); use "
                                       "norm_mode='clip' with a public bound"))

    for e in ledger:
        if not e.private:
            warnings.warn(f"{ds.name}: '{e.step}' is not differentially private — {e.note}",
                          PrivacyLeakWarning, stacklevel=2)

    info.update(dataset_id=ds.id, feature_scaling=feature_scaling, norm_mode=norm_mode, centering=centering,
                neighbouring=neighbouring, norm_bound_source=bound_note or "max row norm (data)")
    diagnostics = Diagnostics(ds.diagnostics)
    diagnostics.update(n_rows=n, clip_fraction=clip_fraction)
    if "clamped_fraction" in info:
        diagnostics["clamped_fraction"] = info["clamped_fraction"]
    return PreparedData(X=X / bound, norm_bound=bound, y=ds.y, name=ds.name, feature_names=ds.feature_names,
                        ledger=tuple(ledger), clip_fraction=clip_fraction, info=info, diagnostics=diagnostics)


# ==================================================================================================
# Clipping advisor (non-private diagnostics)
# ==================================================================================================

def _row_norms(ds: Dataset, feature_scaling: str, centering: str, center: object) -> np.ndarray:
    feature_scaling = check_choice(feature_scaling, "feature_scaling", FEATURE_SCALINGS)
    centering = check_choice(centering, "centering", CENTERINGS)
    X, _, unit_box, _ = _scale(ds, feature_scaling)
    if centering == "public":
        X = X - _resolve_center(center, X.shape[1], unit_box)
    elif centering in ("empirical", "dp"):  # the DP mean is approximated by the exact mean here
        X = X - X.mean(axis=0)
    return np.linalg.norm(X, axis=1)


def clip_fraction_curve(dataset: Dataset | np.ndarray, candidates: Sequence[float] | np.ndarray | None = None, *,
                        feature_scaling: str = "schema", centering: str = "none",
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
                        feature_scaling: str = "schema", centering: str = "none",
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
