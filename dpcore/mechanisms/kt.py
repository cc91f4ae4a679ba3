"""KT: Kapralov–Talwar rank-one subtraction with the exact Kent sampler (pure ε-DP baseline).

Kapralov & Talwar, "On differentially private low rank approximation", SODA 2013, as used as a baseline by
Amin et al. (NeurIPS 2019, §2, Fig. 1); spec §3.7. Each round draws θ̂ ∝ exp((ε_v/2)·uᵀRu) on S^{d−1}
(score sensitivity 1 — R − C is public), estimates λ̂ = θ̂ᵀRθ̂ + Lap(1/ε_λ) (sensitivity 1), clips it to [0, n]
(replace-one, n public; [0, ∞) under add/remove, where n is private) and subtracts λ̂θ̂θ̂ᵀ from R. Explicit
split k·(ε_v + ε_λ) = ε; default ε_v = ε_λ = ε/(2k) (the authors' code uses constants inconsistent with a total
ε under replace-one). The θ̂'s are not orthogonal.
"""

from __future__ import annotations

import numpy as np

from ..core.noise import laplace
from ..core.privacy import SCORE_SENSITIVITY, LedgerEntry
from ..samplers.bingham import KentBinghamSampler
from ..vocabulary import Guarantee
from . import register
from .base import Mechanism, MechanismOutput, Param, eigenvalue_ceiling


@register
class KapralovTalwar(Mechanism):
    id = "kt"
    name = "KT (rank-one subtraction)"
    summary = ("k rounds of: sample a direction by the exponential mechanism, estimate its variance with Laplace "
               "noise, subtract it (pure ε-DP).")
    description = (
        "Kapralov and Talwar's scheme with the exact sampler of Amin et al.: each round picks a direction θ̂ "
        "with probability ∝ exp((ε_v/2)·θᵀRθ) from the residual matrix R, releases a noisy variance λ̂ along it "
        "and subtracts λ̂θ̂θ̂ᵀ from R. Errors in λ̂ leave residual variance that later rounds may pick again, "
        "which is why Amin et al. prefer projection (IT-U). The directions are not orthogonal; the released "
        "subspace is the top-k eigenvectors of the estimate."
    )
    reference = "Kapralov & Talwar (SODA 2013); baseline KT in Amin et al. (NeurIPS 2019), §2 and Fig. 1"
    formula = (r"\hat\theta_i \propto \exp(\tfrac{\varepsilon_v}{2}\theta^\top R_i\theta),\; "
               r"\hat\lambda_i=\hat\theta_i^\top R_i\hat\theta_i+\mathrm{Lap}(1/\varepsilon_\lambda),\; "
               r"R_{i+1}=R_i-\hat\lambda_i\hat\theta_i\hat\theta_i^\top")
    cost = "O(k·d³) + rejections"
    one_shot = False
    guarantee = Guarantee.PURE
    output = "covariance"
    order = 45
    utility_family = "exponential"
    domain = ("every ε > 0; both relations (score and variance sensitivity 1); variances clipped to [0, n] only "
              "under replace-one, where n is public")
    params = (
        Param("vector_fraction", 0.5, "Fraction of each round's budget spent on the direction (the rest on its "
              "variance): ε_v = f·ε/k, ε_λ = (1 − f)·ε/k.", kind="float", low=0.01, high=0.99),
    )

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, vector_fraction=0.5):
        d = data.d
        ceiling = eigenvalue_ceiling(data, neighbouring)
        eps_v = vector_fraction * epsilon / k
        eps_l = epsilon / k - eps_v
        R = np.array(data.C, dtype=float)
        C_hat = np.zeros((d, d))
        ledger: list[LedgerEntry] = []
        proposals, lam, spent = [], [], 0.0
        for i in range(k):
            deadline.check("KT")
            sampler = KentBinghamSampler.from_score(R, eps_v / (2.0 * SCORE_SENSITIVITY))
            theta = sampler.sample(rng, deadline, what=f"KT, round {i + 1}")
            proposals.append(sampler.stats.proposals)
            # Budget of the last entry is adjusted so the ledger adds up to ε exactly in floating point.
            e_l = eps_l if i < k - 1 else epsilon - (spent + eps_v)
            lam_i = float(theta @ R @ theta) + float(laplace(SCORE_SENSITIVITY / e_l, rng))
            lam_i = min(max(lam_i, 0.0), ceiling)
            R -= lam_i * np.outer(theta, theta)
            C_hat += lam_i * np.outer(theta, theta)
            lam.append(lam_i)
            ledger.append(LedgerEntry(f"direction {i + 1} (exponential mechanism)", eps_v,
                                      note="∝ exp((ε_v/2)·θᵀRθ)"))
            ledger.append(LedgerEntry(f"variance {i + 1} (Laplace)", e_l, note=f"θ̂ᵀRθ̂ + Lap({1.0 / e_l:.4g})"))
            spent += eps_v
            spent += e_l
        diagnostics = {"proposals_per_vector": proposals, "lambda_hat": lam, "epsilon_vector": eps_v,
                       "epsilon_value": eps_l,
                       "note": "proposal counts are non-private diagnostics (data dependent)"}
        return MechanismOutput(ledger=ledger, covariance=C_hat, diagnostics=diagnostics)
