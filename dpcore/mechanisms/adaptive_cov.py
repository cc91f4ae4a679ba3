"""AdaptiveCov: a privately chosen clipping radius, then the better of the Gaussian mechanism and SeparateCov.

Dong, Liang & Yi, "Differentially Private Covariance Revisited" (NeurIPS 2022), AdaptiveCov (the tail-sensitive
algorithm); authors' code hkustDB/PrivateCovariance, ``adaptive/algos.py`` (AdaptiveCov). ρ-zCDP, split
ρ/8 + ρ/8 + 3ρ/4:

1. T̃ = tr(C) + N(0, σ_T²) + σ_T·√(2 ln(8/β)), σ_T = 1/√(2·ρ/8) = 2/√ρ (Δ = 1);
2. AboveThreshold with ε = √ρ/2 (⇒ ρ/8-zCDP) over the radii 2⁰, 2⁻¹, …: query i is an upper bound on the clipping
   bias at radius 2⁻ⁱ minus the smaller predicted noise error there (a function of T̃ and public constants;
   sensitivity 1); the first level above threshold j gives the radius r̃ = min(2⁻ʲ⁺¹, 1);
3. rows clipped to r̃; the Gaussian mechanism or SeparateCov at 3ρ/4 with sensitivities scaled by r̃², whichever the
   error model (public once T̃ and j are released) predicts smaller.

The user's (ε, δ) becomes ρ by the tight conversion (Canonne, Kamath & Steinke 2020). Derivation:
docs/dong_liang_yi.md.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.privacy import zcdp_rho_for
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from ._dong_liang_yi import (
    COVARIANCE_SHARE,
    NORM_LEVELS,
    SEPARATE_ERROR_DIVISOR,
    SVT_SHARE,
    TRACE_SENSITIVITY,
    TRACE_SHARE,
    ErrorModel,
    clip_to_ceiling,
    clipped_second_moment,
    gauss_cov,
    gaussian_sigma_for_rho,
    gaussian_tailbound,
    private_radius,
    separate_cov,
    svt_epsilon,
    wigner_gauss_fnormbound,
    wigner_gauss_tailbound,
    zcdp_ledger,
)
from .base import Mechanism, MechanismOutput, Param

CKS_CONVERSION = "ρ from (ε, δ) by the tight conversion of Canonne, Kamath & Steinke (2020), optimised over α"


def trace_sigma(rho: float) -> float:
    """σ of the noisy trace: Δ = 1 at ρ/8, i.e. 2/√ρ."""
    return gaussian_sigma_for_rho(TRACE_SENSITIVITY, TRACE_SHARE * rho)


def error_model(noisy_trace: float, d: int, rho: float, beta: float, neighbouring: str) -> ErrorModel:
    """Predicted Frobenius errors (C units, radius 1) of the two covariance steps at 3ρ/4 (the authors' bounds).

    Under add/remove every σ is 1/√2 of replace-one's; the eigenvector term grows as √σ, the others as σ.
    """
    rho1, beta1 = COVARIANCE_SHARE * rho, COVARIANCE_SHARE * beta
    rel = 1.0 if neighbouring == Neighbouring.REPLACE else 1.0 / math.sqrt(2.0)
    nu = wigner_gauss_tailbound(d, 0.5 * beta1)
    return ErrorModel(
        sep_linear=2.0 ** 1.25 * math.sqrt(noisy_trace * nu) / rho1 ** 0.25 / SEPARATE_ERROR_DIVISOR * math.sqrt(rel),
        sep_square=math.sqrt(2.0) * gaussian_tailbound(d, 0.5 * beta1) / math.sqrt(rho1) * rel,
        direct=wigner_gauss_fnormbound(d, beta1) / math.sqrt(rho1) * rel)


def noisy_trace(trace: float, rho: float, beta: float, rng: np.random.Generator) -> float:
    """tr(C) + N(0, σ_T²) + σ_T·√(2 ln(8/β)) (the shift makes T̃ ≥ tr(C) with probability ≥ 1 − β/8)."""
    sigma = trace_sigma(rho)
    return trace + sigma * rng.standard_normal() + sigma * math.sqrt(2.0 * math.log(8.0 / beta))


@register
class AdaptiveCov(Mechanism):
    id = "adaptive_cov"
    name = "AdaptiveCov (Dong–Liang–Yi)"
    summary = ("Chooses the clipping radius privately from the row norms (sparse vector), then adds the smaller of "
               "two noises — pays for the data's norms, not the public bound.")
    description = (
        "Analyze Gauss pays for the public norm bound even when every record sits far inside it. AdaptiveCov "
        "spends an eighth of its budget on the trace, an eighth on a sparse-vector search down the radii 1, ½, ¼, … "
        "for where the bias of clipping would overtake the noise, clips the rows to that radius, and spends the "
        "rest on the Gaussian mechanism or SeparateCov, whichever its error model predicts smaller. The noise "
        "shrinks with the square of the chosen radius. The radius is a private output."
    )
    reference = ("Dong, Liang & Yi, \"Differentially Private Covariance Revisited\" (NeurIPS 2022), AdaptiveCov; "
                 "authors' code hkustDB/PrivateCovariance, adaptive/algos.py; AboveThreshold (Dwork & Roth 2014, "
                 "Alg. 1); zCDP conversion Canonne, Kamath & Steinke (2020)")
    formula = (r"\tilde r = \min(2^{1-j},1),\; j=\mathrm{AboveThreshold}_{\sqrt\rho/2}(q_0,q_1,\dots),\; "
               r"\hat C = \mathcal M_{3\rho/4}(\textstyle\sum_i \mathrm{clip}_{\tilde r}(x_i)\mathrm{clip}_{\tilde r}"
               r"(x_i)^\top)")
    cost = "O(nd² + d³ + n·80)"
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    needs_rows = True
    utility_family = "additive"
    order = 26
    domain = ("every ε > 0 and 0 < δ < 1 (ρ-zCDP by the tight conversion); 0 < β < 1; both relations (trace and "
              "sparse-vector sensitivity 1; covariance Δ₂ = √2·r̃² replace-one, r̃² add/remove); rows in memory "
              "(a streamed sample is refused)")
    params = (
        Param("beta", 0.1, "Failure probability β of the error bounds that steer the radius search (public; "
              "utility only, not privacy).", low=1e-12, high=0.999),
    )

    def check_domain(self, *, d, k, epsilon, delta, neighbouring, options):
        if not 0.0 < options.get("beta", 0.1) < 1.0:
            raise InvalidParameterError("beta must lie in (0, 1); the default 0.1 is the authors'.")

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """Calibrated in zCDP: ρ = zcdp_rho_for(ε, δ), split ρ/8 + ρ/8 + 3ρ/4."""
        return zcdp_rho_for(epsilon, delta)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, beta=0.1):
        if getattr(data, "sample", None) is not None:
            raise InvalidParameterError("adaptive_cov reads every row's norm; it cannot run on a streamed sample. "
                                        "Load the data in memory or choose a mechanism that needs only C.")
        rho = zcdp_rho_for(epsilon, delta)
        norms = np.linalg.norm(data.X, axis=1)
        t_tilde = noisy_trace(float(np.sum(norms ** 2)), rho, beta, rng)
        if neighbouring == Neighbouring.REPLACE:
            t_tilde = min(t_tilde, float(data.n))
        t_tilde = max(t_tilde, 1e-16)
        model = error_model(t_tilde, data.d, rho, beta, neighbouring)
        deadline.check("AdaptiveCov's radius search")
        j, level, radius = private_radius(norms, model, svt_epsilon(rho), rng)
        scale = radius ** 2
        C_clip = clipped_second_moment(data, norms, radius)
        use_gauss = model.separate(level) >= model.direct_at(level)
        rho_cov = COVARIANCE_SHARE * rho
        if use_gauss:
            step = gauss_cov(C_clip, rho_cov, scale, neighbouring, rng)
            cov_note = f"Gaussian mechanism at radius r̃ (σ = Δ₂·r̃²/√(2·3ρ/4) = {step.sigma_matrix / scale:.4g}·r̃²)"
        else:
            step = separate_cov(C_clip, rho_cov, scale, neighbouring, rng)
            cov_note = (f"SeparateCov at radius r̃ (σ = {step.sigma_matrix / scale:.4g}·r̃² for the matrix and for "
                        "the eigenvalues, 3ρ/8 each)")
        ledger = zcdp_ledger(
            [("noisy trace tr(C) (Gaussian, Δ = 1)", TRACE_SHARE, f"σ = {trace_sigma(rho):.4g}"),
             ("clipping radius by AboveThreshold over the row norms", SVT_SHARE,
              f"ε = √ρ/2 = {svt_epsilon(rho):.4g} (ε-DP ⇒ ε²/2-zCDP), {NORM_LEVELS} levels, query Δ = 1"),
             ("covariance of the rows clipped to r̃", COVARIANCE_SHARE,
              "Gaussian mechanism or SeparateCov, chosen from T̃ and the radius (post-processing)")],
            rho, epsilon, delta, CKS_CONVERSION)
        covariance = clip_to_ceiling(step.covariance, data.n, scale, neighbouring)
        clipped = int(np.sum(norms > radius))
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={
            "rho": rho, "radius (private output)": radius, "branch (private output)":
                "gaussian" if use_gauss else "separate", "noisy trace (private output)": t_tilde,
            "level index j (private output)": j, "covariance step": cov_note,
            "rows clipped (NOT private)": clipped, "exact trace (NOT private)": float(np.sum(norms ** 2))})
