"""Singhal–Steinke's dimension independence, measured (issue 21 items 2–3).

The paper's claim (Singhal & Steinke, NeurIPS 2021, Theorems 1.2/4.3): for data in (or very near) a k-dimensional
subspace, the sample size needed does not grow with the ambient dimension d, while noise-adding mechanisms such as
Analyze Gauss need n ∝ d. The near-subspace case needs a *multiplicative* eigengap: λ_{k+1}/λ_k = γ² with γ small
enough for the grid (γ ∝ d^−1.5 at fixed n with our constants). This module runs one point of that comparison —
fixed n, one d, one γ — for ss_approx (default options), ss_exact on its default subsample, and Analyze Gauss, and
returns the largest principal angle of each against the planted subspace. Used by
``benchmarks/ss_dimension_sweep.py`` (``dpcore reproduce singhal_steinke_dimension``) and the Inspect page.

Data: :func:`dpcore.data.synthetic.make_subspace_synthetic` (public, synthetic), rows divided by the public bound
B = 2·RMS (known from the generator) and clipped to norm 1 — the same rows for every mechanism (the SS mechanisms
are scale-free and need no bound).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..data import synthetic
from ..data.prepared import PreparedData
from ..exceptions import DPCoreError, MechanismTimeout
from ..mechanisms import get_mechanism
from ..mechanisms._subspace_learning import projector_distance
from ..vocabulary import ReleaseStatus

#: The mechanisms compared (label, mechanism id, options): default options, except that ss_exact's work limit is
#: 3e7 (a 95-row subsample at k = 3 instead of 206: on points exactly in a plane every one of the C(m, 3) spans
#: is a candidate, ≈ 10 s instead of ≈ 100 s on a loaded 2-core machine).
EXACT_MAX_WORK = 3e7
METHODS: tuple[tuple[str, str, dict], ...] = (
    ("ss_approx", "ss_approx", {}),
    ("ss_exact (subsample)", "ss_exact", {"max_work": EXACT_MAX_WORK}),
    ("analyze_gauss", "analyze_gauss", {}),
)
#: γ at d = 50 of the "γ ∝ d^−1.5" setting: half the gap the automatic ss_approx grid tolerates at n = 5,000.
GAMMA_AT_50 = 4e-6


def scaled_gamma(d: int, gamma_at_50: float = GAMMA_AT_50) -> float:
    """γ(d) = γ₅₀·(50/d)^1.5: the gap shrinking with d as the grid's tolerance does (the paper's assumption)."""
    return float(gamma_at_50) * (50.0 / d) ** 1.5


def planted_data(n: int, d: int, k: int, gamma: float, seed: int) -> tuple[PreparedData, np.ndarray]:
    """(rows on the unit scale, planted d×k basis): x = Uz + e, off-subspace variance γ² × in-subspace."""
    X, basis = synthetic.make_subspace_synthetic(n, d, k, gamma**2, seed)
    bound = 2.0 * math.sqrt(synthetic.subspace_expected_sq_norm(d, k, gamma**2))  # public: from the generator
    X /= bound
    X *= np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(X, axis=1), 1e-300))[:, None]
    return PreparedData.from_unit_rows(X, name=f"planted k={k} d={d} γ={gamma:g}"), basis


def dimension_point(n: int, d: int, k: int, gamma: float, trial: int, *, epsilon: float = 1.0, delta: float = 1e-6,
                    methods: tuple[tuple[str, str, dict], ...] = METHODS, time_limit: float | None = 120.0,
                    seed: int = 0) -> list[dict]:
    """One (d, γ, trial) point: a record per method with status, sin θ_max, the angle in degrees and the guarantee.

    ``seed`` shifts the data and mechanism seeds (trial t uses data seed 10·d + t + seed, mechanism seed t + seed).
    """
    data, basis = planted_data(n, d, k, gamma, seed=10 * d + trial + seed)
    records = []
    for label, mech_id, options in methods:
        rec = {"d": d, "n": n, "k": k, "gamma": gamma, "trial": trial, "method": label, "mechanism": mech_id,
               "epsilon": epsilon, "delta": delta, "status": "", "sin_theta": math.nan, "angle_deg": math.nan,
               "private": True, "seconds": math.nan, "reason": ""}
        start = time.perf_counter()
        try:
            rel = get_mechanism(mech_id).release(data, k, epsilon, delta, random_state=trial + seed,
                                                 time_limit=time_limit, **options)
        except MechanismTimeout as exc:
            rec.update(status=ReleaseStatus.TIMEOUT, reason=str(exc))
        except DPCoreError as exc:
            rec.update(status=ReleaseStatus.ERROR, reason=str(exc))
        else:
            rec["private"] = rel.is_private
            if rel.is_bottom:
                rec.update(status=ReleaseStatus.BOTTOM, reason=rel.reason)
            else:
                s = projector_distance(basis, rel.subspace)
                rec.update(status=ReleaseStatus.OK, sin_theta=s, angle_deg=math.degrees(math.asin(min(1.0, s))))
        rec["seconds"] = time.perf_counter() - start
        records.append(rec)
    return records
