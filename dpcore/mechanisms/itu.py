"""IT-U and AD: iterative eigenvector sampling with projection (pure ε-DP covariance / subspace).

Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii, "Differentially private covariance estimation", NeurIPS 2019,
Algorithm 1, Theorem 1, Corollaries 1–2; spec §3.6. Implemented from the paper, not from the authors' code
(which uses Lap(1/ε₀) eigenvalue noise and an 8× larger Bingham exponent).

Eigenvalues: λ(C) + Lap(Δ/ε₀) (Δ = 2 replace-one, 1 add/remove), sorted decreasing and clipped to [0, n]
(replace-one, n public) or [0, ∞) (add/remove: n is private).
Vectors: for i = 1..k draw ûᵢ ∝ exp(c·uᵀCᵢu) on S^{d−i} with c = εᵢ/4 ("paper") or εᵢ/2 ("tight"; score
sensitivity is 1, so εᵢ/2 already gives εᵢ-DP), lift θ̂ᵢ = Pᵢûᵢ and project C onto the complement (Householder,
built incrementally). The last draw (on S⁰ = {±1}) is free, so for k = d the vector budget is spread over d − 1
draws. Budget: IT-U ε₀ = ε/2, εᵢ = ε/(2k) (ε/(2(d−1)) when k = d); AD ε₀ = ε/2, εᵢ ∝ √(λ̂ᵢ + τ) with
τ = (Δ/ε₀)·ln(2d/β) (Corollary 1; the weights use only private λ̂, so the split is post-processing).

AD's ``split="authors"`` is the default of the authors' released code (google-research/google-research,
``private_covariance_estimation/mechanisms.py``: ``split_privacy_between_eigenvalues_and_vectors`` and
``get_vector_privacy_parameters``, the defaults of ``iterative_mechanism``) with the paper's privacy constants:
ε₀ minimises their utility bound √d/t + Σᵢ √(d−i)·√n/√(ε−t) over t ∈ [ε/d², ε − ε/d²] (a function of the public
n, d, ε: replace-one only), and εᵢ ∝ √(λ̂ᵢ·(d−i)) for the i-th vector (1-based; d − i is the dimension of the sphere
it is drawn on) from the private, clipped λ̂.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.noise import laplace
from ..core.privacy import LedgerEntry, l1_sensitivity_eigenvalues
from ..core.threads import blas_threads_for
from ..core.timing import Deadline
from ..exceptions import InvalidParameterError
from ..samplers.bingham import KentBinghamSampler
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param, eigenvalue_ceiling

EXPONENT_FACTORS = {"paper": 0.25, "tight": 0.5}


def ad_tau(epsilon0: float, d: int, beta: float, neighbouring: str = Neighbouring.REPLACE) -> float:
    """AD's τ = (Δ/ε₀)·ln(2d/β) (Δ = eigenvalue L1 sensitivity; ε₀ = 0.5, d = 13, β = 0.05 → 25.0153)."""
    return l1_sensitivity_eigenvalues(neighbouring) / epsilon0 * math.log(2.0 * d / beta)


def authors_eigenvalue_budget(n: int, d: int, epsilon: float, draws: int) -> float:
    """ε₀ of the authors' code: argmin over t ∈ [ε/d², ε − ε/d²] of √d/t + Σ_{i<draws} √(d−i)·√n/√(ε−t).

    ``split_privacy_between_eigenvalues_and_vectors`` (bounded Brent search, ``draws = d``); here the sum runs over
    the vectors actually drawn (k < d draws k). A function of public n (replace-one), d and ε only.
    """
    if d < 2 or draws < 1:
        return epsilon
    dim_sum = math.fsum(math.sqrt(d - i) for i in range(draws))
    root_n = math.sqrt(n)

    def bound(t: float) -> float:
        return math.sqrt(d) / t + dim_sum * root_n / math.sqrt(epsilon - t)

    from scipy import optimize  # imported on use: `dpcore mechanisms` loads no scipy

    res = optimize.minimize_scalar(bound, method="bounded", bounds=(epsilon / d**2, epsilon - epsilon / d**2))
    return float(res.x)


def authors_vector_weights(lam_hat: np.ndarray, d: int, draws: int) -> list[float]:
    """√(λ̂ᵢ·(d−1−i)) for i = 0..draws−1 (``get_vector_privacy_parameters``); all ones when every weight is 0
    (their code would divide by zero there; any split of the private λ̂ is post-processing)."""
    weights = [math.sqrt(max(float(lam_hat[i]), 0.0) * (d - 1 - i)) for i in range(draws)]
    return weights if any(w > 0 for w in weights) else [1.0] * draws


def exact_shares(total: float, first: float, weights: list[float]) -> list[float]:
    """[first, w₁·rest/Σw, …] with rest = total − first, adjusted so the sequential float sum is total (or the
    largest float below it where no share reaches total exactly).

    A zero weight gets exactly 0 and every share is ≥ 0: the rounding correction goes to the last share with a
    positive weight (putting it on a zero-weight last share made it ≈ −1e-17, a negative exponent the sampler
    refuses — AD's authors' split gives weight 0 to every λ̂ᵢ clipped to 0)."""
    shares = [first]
    rest = total - first
    if not weights:
        return shares
    wsum = math.fsum(weights)
    if not wsum > 0.0:
        weights, wsum = [1.0] * len(weights), float(len(weights))
    vec = [rest * w / wsum for w in weights]
    last = max(i for i, w in enumerate(weights) if w > 0.0)
    acc = first
    for s in vec[:last]:
        acc += s
    vec[last] = max(total - acc, 0.0)
    # acc + (total − acc) can round one ulp off total (and some totals are out of reach): take the largest share
    # whose sequential sum does not exceed total, so the ledger never spends more than it was given.
    for _ in range(64):
        if _sequential_sum(shares + vec) <= total or vec[last] == 0.0:
            break
        vec[last] = max(math.nextafter(vec[last], 0.0), 0.0)
    for _ in range(64):
        if _sequential_sum(shares + vec) == total:
            break
        up = math.nextafter(vec[last], math.inf)
        if _sequential_sum([*shares, *vec[:last], up, *vec[last + 1:]]) > total:
            break
        vec[last] = up
    return shares + vec


def _sequential_sum(values: list[float]) -> float:
    """Σ values as the ledger adds them, one by one."""
    acc = 0.0
    for v in values:
        acc += v
    return acc


class _Iterative(Mechanism):
    """Shared body of IT-U and AD (not registered)."""

    output = "covariance"
    guarantee = Guarantee.PURE
    utility_family = "exponential"  # the subspace comes from exponential-mechanism draws
    cost = "O(d⁴) + rejections (d eigendecompositions of shrinking size)"
    one_shot = False
    domain = ("every ε > 0; both relations (eigenvalue L1 sensitivity 2 replace-one, 1 add/remove; score "
              "sensitivity 1); eigenvalues clipped to [0, n] only under replace-one, where n is public")

    def _vector_weights(self, lam_hat: np.ndarray, draws: int, eps0: float, d: int, neighbouring: str,
                        options: dict) -> list[float]:
        raise NotImplementedError

    def _eigenvalue_budget(self, epsilon: float, n: int, d: int, paid: int, draws: int, options: dict) -> float:
        """ε₀, the eigenvalues' share: ε/2 (the paper), ε when no vector is paid for (``paid`` of ``draws``)."""
        return epsilon / 2.0 if paid > 0 else epsilon

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, exponent="paper", **options):
        d = data.d
        draws = k if k < d else d  # the d-th draw (on S⁰) is free
        paid = min(k, d - 1)
        eps0 = self._eigenvalue_budget(epsilon, data.n, d, paid, draws, options)
        # Eigenvalues first: AD's vector budgets are a function of the private λ̂.
        scale = l1_sensitivity_eigenvalues(neighbouring) / eps0
        lam_hat = np.sort(data.eigenvalues + laplace(scale, rng, size=d))[::-1]
        lam_hat = np.clip(lam_hat, 0.0, eigenvalue_ceiling(data, neighbouring))
        weights = self._vector_weights(lam_hat, paid, eps0, d, neighbouring, options)
        shares = exact_shares(epsilon, eps0, weights)
        eps_vec = shares[1:] + [0.0] * (draws - paid)
        thetas, proposals = self._vectors(data.C, eps_vec, exponent, rng, deadline)
        clip_note = "[0, n]" if neighbouring == Neighbouring.REPLACE else "[0, ∞) (n is private under add/remove)"
        ledger = [LedgerEntry("eigenvalues (Laplace)", eps0,
                              note=f"λ(C) + Lap({scale:.4g}) each, sorted, clipped to {clip_note}")]
        factor = EXPONENT_FACTORS[exponent]
        for i, e in enumerate(eps_vec):
            if i >= paid:
                ledger.append(LedgerEntry(f"eigenvector {i + 1} (S⁰, free)", 0.0, note="last direction is ±1"))
            else:
                ledger.append(LedgerEntry(f"eigenvector {i + 1} (exponential mechanism)", e,
                                          note=f"∝ exp({factor:g}·εᵢ·uᵀCᵢu) on S^{d - i - 1}"))
        lam_k = lam_hat[:draws]
        covariance = (thetas * lam_k) @ thetas.T
        diagnostics = {"proposals_per_vector": proposals, "epsilon_eigenvalues": eps0,
                       "epsilon_vectors": eps_vec, "exponent": exponent, "laplace_scale": scale,
                       "note": "proposal counts are non-private diagnostics (data dependent)"}
        diagnostics.update(self._extra_diagnostics(eps0, d, neighbouring, options))
        return MechanismOutput(ledger=ledger, covariance=covariance, subspace=thetas[:, :k],
                               eigenvalues=lam_k.copy(), diagnostics=diagnostics)

    def _extra_diagnostics(self, eps0: float, d: int, neighbouring: str, options: dict) -> dict:
        return {}

    def _vectors(self, C: np.ndarray, eps_vec: list[float], exponent: str, rng: np.random.Generator,
                 deadline: Deadline) -> tuple[np.ndarray, list[int]]:
        return sample_iterative_vectors(C, eps_vec, exponent, rng, deadline, f"{self.id.upper()} eigenvector sampling")


def sample_iterative_vectors(C: np.ndarray, eps_vec: list[float], exponent: str, rng: np.random.Generator,
                    deadline: Deadline, what: str) -> tuple[np.ndarray, list[int]]:
    """The vector loop of Algorithm 1: θ̂ᵢ for budgets ``eps_vec`` (d×len(eps_vec), orthonormal) and the
    number of Kent proposals per vector. Projection via incremental Householder complements."""
    d = C.shape[0]
    with blas_threads_for(d):  # d eigendecompositions of size ≤ d: one BLAS thread when d is small (issue #22)
        return _iterative_vectors(C, eps_vec, EXPONENT_FACTORS[exponent], rng, deadline, what)


def _iterative_vectors(C: np.ndarray, eps_vec: list[float], factor: float, rng: np.random.Generator,
                       deadline: Deadline, what: str) -> tuple[np.ndarray, list[int]]:
    """Body of :func:`sample_iterative_vectors` (``factor``: the Bingham exponent per unit of εᵢ)."""
    d = C.shape[0]
    Ci = np.array(C, dtype=float)
    P = np.eye(d)
    thetas = np.empty((d, len(eps_vec)))
    proposals: list[int] = []
    for i, eps_i in enumerate(eps_vec):
        deadline.check(what)
        sampler = KentBinghamSampler.from_score(Ci, factor * eps_i)
        u = sampler.sample(rng, deadline, what=f"{what}, vector {i + 1}")
        proposals.append(sampler.stats.proposals)
        thetas[:, i] = P @ u
        if i == len(eps_vec) - 1 or Ci.shape[0] == 1:
            break
        # Householder H with H e₀ = ∓u: columns 1.. span u's complement; P ← (PH)[:, 1:], Cᵢ ← (HCᵢH)[1:, 1:].
        s = 1.0 if u[0] >= 0.0 else -1.0
        v = u.copy()
        v[0] += s
        c = 2.0 / float(v @ v)
        P = P[:, 1:] - c * np.outer(P @ v, v[1:])
        Cv = Ci @ v
        Ci = (Ci - c * (np.outer(Cv, v) + np.outer(v, Cv)) + (c * c * float(v @ Cv)) * np.outer(v, v))[1:, 1:]
        Ci = 0.5 * (Ci + Ci.T)
    return thetas, proposals


_EXPONENT_PARAM = Param(
    "exponent", "paper", "Bingham exponent per vector: 'paper' εᵢ/4 (as published, conservative by 2×) or 'tight' "
    "εᵢ/2 (score sensitivity 1 — still εᵢ-DP).", kind="choice", choices=("paper", "tight"))


@register
class IterativeUniform(_Iterative):
    id = "itu"
    name = "IT-U (iterative eigenvectors, uniform budget)"
    summary = ("Noisy eigenvalues plus eigenvectors drawn one at a time by the exponential mechanism, each on the "
               "complement of the previous ones; budget split evenly (pure ε-DP).")
    description = (
        "Half of ε buys Laplace-noised eigenvalues (sorted, clipped to [0, n] when n is public); the other half "
        "is split evenly over the k eigenvector draws. Each draw samples a unit vector with probability "
        "∝ exp(c·uᵀCu) on the sphere orthogonal to the previous draws (exact Kent sampler), then C is projected "
        "onto the complement. "
        "For k = d the last direction is forced (±1), so it costs nothing. Output: a PSD covariance estimate of "
        "rank k with orthonormal eigenvectors."
    )
    reference = "Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii (NeurIPS 2019), Algorithm 1, Corollary 2 (IT-U)"
    formula = (r"\hat\lambda = \mathrm{sort}(\lambda(C)+\mathrm{Lap}(2/\varepsilon_0)),\; "
               r"\hat u_i \propto \exp(\tfrac{\varepsilon_i}{4} u^\top C_i u),\; "
               r"\hat C=\sum_{i\le k}\hat\lambda_i\hat\theta_i\hat\theta_i^\top,\; "
               r"\varepsilon_0=\tfrac{\varepsilon}{2},\ \varepsilon_i=\tfrac{\varepsilon}{2k}")
    order = 40
    params = (_EXPONENT_PARAM,)

    def _vector_weights(self, lam_hat, draws, eps0, d, neighbouring, options):
        return [1.0] * draws


@register
class Adaptive(_Iterative):
    id = "ad"
    name = "AD (iterative eigenvectors, adaptive budget)"
    summary = ("Like IT-U, but each eigenvector's budget is proportional to √(λ̂ᵢ + τ) of its private eigenvalue "
               "(pure ε-DP).")
    description = (
        "Same algorithm as IT-U; the vector budget ε/2 is split in proportion to √(λ̂ᵢ + τ), τ = (2/ε₀)·ln(2d/β), "
        "so strong directions (easy to find) and weak ones get budgets matched to their utility bound. The "
        "weights use only the already-private eigenvalues, so the split costs nothing extra. β is the failure "
        "probability of the utility bound (not a privacy δ). With split = 'authors' the budget is split as in the "
        "authors' released code: the eigenvalues' share minimises their utility bound (it uses n, so replace-one "
        "only), and vector i gets a share ∝ √(λ̂ᵢ·(d−i)), its eigenvalue times the dimension of its sphere."
    )
    reference = "Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii (NeurIPS 2019), Algorithm 1, Corollary 1 (AD)"
    formula = (r"\varepsilon_i=\varepsilon_0\frac{\sqrt{\hat\lambda_i+\tau}}{\sum_j\sqrt{\hat\lambda_j+\tau}},\; "
               r"\tau=\tfrac{2}{\varepsilon_0}\ln\tfrac{2d}{\beta}")
    order = 41
    domain = _Iterative.domain + "; split='authors' under replace-one only (its ε₀ reads n)"
    params = (
        _EXPONENT_PARAM,
        Param("beta", 0.05, "Failure probability β of AD's utility bound (sets τ; not a privacy parameter).",
              kind="float", low=1e-9, high=0.5),
        Param("split", "corollary1", "Budget split: 'corollary1' (the paper: ε₀ = ε/2, εᵢ ∝ √(λ̂ᵢ + τ)) or 'authors' "
              "(the authors' code's default: ε₀ minimising their utility bound in n, d, ε; εᵢ ∝ √(λ̂ᵢ·(d−i))). "
              "'authors' reads n, so it holds under replace-one only.", kind="choice",
              choices=("corollary1", "authors")),
    )

    def check_domain(self, *, d, k, epsilon, delta, neighbouring, options):
        if options.get("split") == "authors" and neighbouring != Neighbouring.REPLACE:
            raise InvalidParameterError(
                "split='authors' chooses the eigenvalues' budget from n, which is private under add/remove; use "
                "split='corollary1' or the replace-one relation.")

    def _eigenvalue_budget(self, epsilon, n, d, paid, draws, options):
        if options.get("split") == "authors" and paid > 0:
            return authors_eigenvalue_budget(n, d, epsilon, draws)
        return super()._eigenvalue_budget(epsilon, n, d, paid, draws, options)

    def _vector_weights(self, lam_hat, draws, eps0, d, neighbouring, options):
        if options.get("split") == "authors":
            return authors_vector_weights(lam_hat, d, draws)
        tau = ad_tau(eps0, d, options.get("beta", 0.05), neighbouring)
        return [math.sqrt(max(float(x) + tau, 0.0)) for x in lam_hat[:draws]]

    def _extra_diagnostics(self, eps0, d, neighbouring, options):
        if options.get("split") == "authors":
            return {"split": "authors"}
        return {"tau": ad_tau(eps0, d, options.get("beta", 0.05), neighbouring)}
