"""AdaptiveLapCov: the pure ε-DP AdaptiveCov (ε/8 trace, ε/8 AboveThreshold, 3ε/4 Laplace or SeparateLapCov).

Dong, Liang & Yi (NeurIPS 2022), Appendix I; authors' code hkustDB/PrivateCovariance, ``adaptive/algos.py``
(AdaptiveLapCov). T̃ = tr(C) + Lap(8/ε) + (8/ε)·ln(4/β) (Δ = 1 at ε/8); AboveThreshold at ε/8 over the same
clipping-bias queries as AdaptiveCov (sensitivity 1); the rows clipped to r̃, then the Laplace mechanism or
SeparateLapCov at 3ε/4 with sensitivities scaled by r̃². Derivation: docs/dong_liang_yi.md.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.privacy import LedgerEntry
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from ._dong_liang_yi import (
    LAP_COVARIANCE_SHARE,
    LAP_SVT_SHARE,
    LAP_TRACE_SHARE,
    TRACE_SENSITIVITY,
    clip_to_ceiling,
    clipped_second_moment,
    lap_cov,
    laplace_error_model,
    private_radius,
    separate_lap_cov,
)
from .base import Mechanism, MechanismOutput, Param


def trace_scale(epsilon: float) -> float:
    """Laplace scale of the noisy trace: Δ = 1 at ε/8, i.e. 8/ε."""
    return TRACE_SENSITIVITY / (LAP_TRACE_SHARE * epsilon)


@register
class AdaptiveLapCov(Mechanism):
    id = "adaptive_lap_cov"
    name = "AdaptiveLapCov (Dong–Liang–Yi, pure)"
    summary = ("Pure-DP AdaptiveCov: a private clipping radius from the row norms, then the smaller of the Laplace "
               "mechanism and SeparateLapCov.")
    description = (
        "The pure ε-DP version of AdaptiveCov: an eighth of ε on the trace, an eighth on the sparse-vector search "
        "for the clipping radius, three quarters on the covariance of the clipped rows with Laplace noise "
        "(whole matrix, or eigenvectors and eigenvalues separately). The radius is a private output."
    )
    reference = ("Dong, Liang & Yi, \"Differentially Private Covariance Revisited\" (NeurIPS 2022), Appendix I, "
                 "AdaptiveLapCov; authors' code hkustDB/PrivateCovariance; AboveThreshold (Dwork & Roth 2014)")
    formula = (r"\tilde r = \min(2^{1-j},1),\; j=\mathrm{AboveThreshold}_{\varepsilon/8},\; "
               r"\hat C = \mathcal M_{3\varepsilon/4}(\textstyle\sum_i \mathrm{clip}_{\tilde r}(x_i)"
               r"\mathrm{clip}_{\tilde r}(x_i)^\top)")
    cost = "O(nd² + d³ + n·80)"
    guarantee = Guarantee.PURE
    output = "covariance"
    needs_rows = True
    utility_family = "additive"
    order = 36
    domain = "every ε > 0; 0 < β < 1; both relations; rows in memory (a streamed sample is refused)"
    params = (
        Param("beta", 0.1, "Failure probability β of the error bounds that steer the radius search (public; "
              "utility only, not privacy).", low=1e-12, high=0.999),
    )

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, beta=0.1):
        if getattr(data, "sample", None) is not None:
            raise InvalidParameterError("adaptive_lap_cov reads every row's norm; it cannot run on a streamed "
                                        "sample. Load the data in memory or choose a mechanism that needs only C.")
        norms = np.linalg.norm(data.X, axis=1)
        b_t = trace_scale(epsilon)
        t_tilde = float(np.sum(norms ** 2)) + rng.laplace(0.0, b_t) + b_t * math.log(4.0 / beta)
        if neighbouring == Neighbouring.REPLACE:
            t_tilde = min(t_tilde, float(data.n))
        t_tilde = max(t_tilde, 1e-16)
        model = laplace_error_model(t_tilde, data.d, epsilon, beta, neighbouring)
        deadline.check("AdaptiveLapCov's radius search")
        j, level, radius = private_radius(norms, model, LAP_SVT_SHARE * epsilon, rng)
        scale = radius ** 2
        C_clip = clipped_second_moment(data, norms, radius)
        eps_cov = LAP_COVARIANCE_SHARE * epsilon
        use_direct = model.separate(level) >= model.direct_at(level)
        step = (lap_cov if use_direct else separate_lap_cov)(C_clip, eps_cov, scale, neighbouring, rng)
        ledger = [LedgerEntry("noisy trace tr(C) (Laplace, Δ = 1)", LAP_TRACE_SHARE * epsilon, note=f"b = {b_t:.4g}"),
                  LedgerEntry("clipping radius by AboveThreshold over the row norms", LAP_SVT_SHARE * epsilon,
                              note="80 levels, query Δ = 1"),
                  LedgerEntry("covariance of the rows clipped to r̃", eps_cov,
                              note="Laplace mechanism or SeparateLapCov, chosen from T̃ and the radius")]
        return MechanismOutput(ledger=ledger, covariance=clip_to_ceiling(step.covariance, data.n, scale, neighbouring),
                               diagnostics={"radius (private output)": radius, "level index j (private output)": j,
                                            "branch (private output)": "laplace" if use_direct else "separate",
                                            "noisy trace (private output)": t_tilde,
                                            "rows clipped (NOT private)": int(np.sum(norms > radius))})
