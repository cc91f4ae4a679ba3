"""CoinPress covariance: t rounds of clip → Gaussian noise → precondition, from a loose public prior Σ ⪯ λ·I.

Biswas, Dong, Kamath & Ullman, "CoinPress: Practical Private Mean and Covariance Estimation" (NeurIPS 2020),
Algorithms 3–4 (MVCRec / MVC); authors' code ``twistedcubic/coin-press`` (``algos.py: cov_est_step, cov_est``).

Step i (i = 1…t) with a preconditioner Mᵢ fixed by the earlier steps' private outputs (M₁ = λ^{-1/2}·I):

    wⱼ = Mᵢxⱼ clipped to ‖wⱼ‖ ≤ rᵢ,   rᵢ = min(γ, ‖Mᵢ‖₂),   γ = √(d + 2√(d ln 10) + 2 ln 10)
    Zᵢ = Proj_PSD( (1/n)Σⱼ wⱼwⱼᵀ + E ),  E symmetric, upper triangle i.i.d. N(0, σᵢ²),  σᵢ = √2·rᵢ²/(n·√(2ρᵢ))
    Mᵢ₊₁ = (Zᵢ + ηI)^{-1/2} Mᵢ,   η = ½(2√(d/n) + d/n)

and the release is n·Mₜ⁻¹ZₜMₜ⁻ᵀ (the scatter scale of C = Σxxᵀ). Privacy: under replace-one (n public) the upper
triangle of (1/n)Σwwᵀ moves by at most ‖wwᵀ − w′w′ᵀ‖_F/n ≤ √2·rᵢ²/n, so step i is ρᵢ-zCDP (Δᵢ²/(2σᵢ²) = ρᵢ);
γ is a public constant and ‖Mᵢ‖₂ a function of earlier private outputs, so every clip radius is public when it is
used. The t steps are Gaussian mechanisms with Δᵢ/σᵢ = √(2ρᵢ) fixed in advance, so their adaptive composition is
μ-GDP with μ² = 2Σρᵢ = 2ρ (Dong, Roth & Su 2022, Cor. 3.3), which is (ε, δ)-DP exactly when ρ =
:func:`~dpcore.core.privacy.gaussian_mu_rho_for` (ε, δ). Budget split (authors' code): ρ for t = 1; otherwise
ρ/(4(t − 1)) for each of the first t − 1 steps and 3ρ/4 for the last.

Our two departures from the authors' code, both documented in ``docs/coinpress.md``: the cap rᵢ ≤ ‖Mᵢ‖₂ (rows
have ‖x‖ ≤ 1, so ‖Mᵢx‖ ≤ ‖Mᵢ‖₂: a smaller public radius, same clipping) and the orientation — the code forms X·A
and A⁻¹ZA⁻¹, which equals the paper's algorithm only while A is symmetric (t ≤ 2): from t = 3 on their estimate is
not even symmetric, and its skew part is most of their error at t ≥ 4. ``as_in_authors_code=True`` (reproduction
only) runs their orientation, their unsymmetrised output and their PSD step (an SVD, which makes |Z|, not the
projection onto the PSD cone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.noise import symmetric_gaussian
from ..core.privacy import LedgerEntry, gaussian_mu_rho_for
from ..core.timing import Deadline
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param

#: Failure probability behind the clip radius γ (authors' code: ``gaussian_tailbound(d, 0.1)``).
TAIL_BETA = 0.1
#: ‖wwᵀ − w′w′ᵀ‖_F ≤ √2·r² for ‖w‖, ‖w′‖ ≤ r: the replace-one sensitivity of Σwwᵀ (attained by w ⊥ w′).
SENSITIVITY_FACTOR = math.sqrt(2.0)
#: Share of ρ spent by the last step when t ≥ 2 (the rest is split evenly over the first t − 1 steps).
FINAL_SHARE = 0.75
MAX_STEPS = 10


def tail_radius(d: int, beta: float = TAIL_BETA) -> float:
    """γ = √(d + 2√(d·ln(1/β)) + 2·ln(1/β)): ‖g‖ ≤ γ with probability ≥ 1 − β for g ~ N(0, I_d) (Laurent–Massart)."""
    log_inv = math.log(1.0 / beta)
    return math.sqrt(d + 2.0 * math.sqrt(d * log_inv) + 2.0 * log_inv)


def regulariser(d: int, n: int) -> float:
    """η = ½(2√(d/n) + d/n), added to each step's Z before it becomes the next preconditioner (authors' code)."""
    ratio = d / n
    return 0.5 * (2.0 * math.sqrt(ratio) + ratio)


def budget_split(steps: int) -> tuple[float, ...]:
    """The shares of ρ per step: (1,) for t = 1; ((1 − ¾)/(t − 1), …, ¾) otherwise. They sum to 1."""
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or not 1 <= steps <= MAX_STEPS:
        raise InvalidParameterError(f"steps must be a whole number from 1 to {MAX_STEPS}, got {steps!r}.")
    if steps == 1:
        return (1.0,)
    first = (1.0 - FINAL_SHARE) / (steps - 1)
    return (first,) * (steps - 1) + (FINAL_SHARE,)


def step_sigma(radius: float, rho: float, n: int) -> float:
    """σᵢ = Δᵢ/√(2ρᵢ) with Δᵢ = √2·rᵢ²/n (per entry of the upper triangle, mean scale)."""
    return SENSITIVITY_FACTOR * radius**2 / (n * math.sqrt(2.0 * rho))


@dataclass(frozen=True)
class CoinPressResult:
    """Σ̂ (mean scale, (1/n)Σxxᵀ); per step ρᵢ, the clip radius rᵢ and σᵢ (functions of the settings and of the
    earlier steps' private outputs), the step's private output Zᵢ (after the PSD step; kept for tests, never
    released by the mechanism) and the exact number of rows clipped (a non-private diagnostic)."""

    covariance: np.ndarray
    rhos: tuple[float, ...]
    radii: tuple[float, ...]
    sigmas: tuple[float, ...]
    clipped_rows: tuple[int, ...]
    step_outputs: tuple[np.ndarray, ...] = ()


def _sym_power(S: np.ndarray, power: float) -> np.ndarray:
    w, V = np.linalg.eigh(S)
    return (V * w**power) @ V.T


def clipped_gram(W: np.ndarray, radius: float) -> tuple[np.ndarray, int]:
    """(1/n)Σ wwᵀ over the rows of ``W`` clipped to ‖w‖ ≤ ``radius`` (a per-row map with a public radius), and how
    many rows were clipped (a non-private diagnostic)."""
    norms = np.sqrt(np.einsum("ij,ij->i", W, W))
    over = norms > radius
    if over.any():  # a new array: the caller's W is never modified
        W = W * np.where(over, radius / np.where(over, norms, 1.0), 1.0)[:, None]
    return W.T @ W / W.shape[0], int(over.sum())


def noisy_step(X: np.ndarray, M: np.ndarray, rho: float, radius: float, rng: np.random.Generator, *,
               as_in_authors_code: bool = False) -> tuple[np.ndarray, float, int]:
    """One step's private release before the PSD step: clipped_gram(XMᵀ, r) + E with σ = √2·r²/(n√(2ρ)) (ρ-zCDP
    under replace-one); returns (noisy matrix, σ, rows clipped)."""
    W = X @ M if as_in_authors_code else X @ M.T
    gram, clipped = clipped_gram(W, radius)
    sigma = step_sigma(radius, rho, X.shape[0])
    return gram + symmetric_gaussian(X.shape[1], sigma, rng), sigma, clipped


def coinpress_covariance(X: np.ndarray, rhos: tuple[float, ...] | list[float], prior_upper: float,
                         rng: np.random.Generator, deadline: Deadline | None = None, *,
                         as_in_authors_code: bool = False) -> CoinPressResult:
    """Run the t = len(rhos) CoinPress steps on unit rows ``X`` (‖x‖ ≤ 1, n public) with ρᵢ-zCDP each.

    ``prior_upper`` is λ in the public prior Σ ⪯ λ·I on (1/n)Σxxᵀ. ``as_in_authors_code`` runs the authors' code's
    orientation (X·A, A⁻¹ZA⁻¹) and PSD step (|Z|) for the reproduction; the privacy argument is the same.
    """
    n, d = X.shape
    gamma, eta = tail_radius(d), regulariser(d, n)
    M = np.eye(d) / math.sqrt(prior_upper)
    radii, sigmas, clipped, outputs = [], [], [], []
    Z = np.zeros((d, d))
    for i, rho in enumerate(rhos):
        if deadline is not None:
            deadline.check("CoinPress")
        radius = min(gamma, float(np.linalg.norm(M, 2)))  # public: M depends only on earlier private outputs
        noisy, sigma, n_clipped = noisy_step(X, M, rho, radius, rng, as_in_authors_code=as_in_authors_code)
        w, V = np.linalg.eigh(noisy)
        Z = (V * (np.abs(w) if as_in_authors_code else np.maximum(w, 0.0))) @ V.T
        radii.append(radius)
        sigmas.append(sigma)
        clipped.append(n_clipped)
        outputs.append(Z)
        if i < len(rhos) - 1:
            M = _sym_power(Z + eta * np.eye(d), -0.5) @ M
    M_inv = np.linalg.inv(M)
    if as_in_authors_code:  # A⁻¹ZA⁻¹: not symmetric once A is not (t ≥ 3); their error counts its skew part
        cov = M_inv @ Z @ M_inv
    else:
        cov = M_inv @ Z @ M_inv.T
        cov = 0.5 * (cov + cov.T)
    return CoinPressResult(cov, tuple(float(r) for r in rhos), tuple(radii), tuple(sigmas), tuple(clipped),
                           tuple(outputs))


def coinpress_ledger(epsilon: float, delta: float, rho: float, steps: int, d: int) -> list[LedgerEntry]:
    """One entry carrying (ε, δ), its note listing ρ and every round's ρᵢ (rounds are not (εᵢ, δᵢ) pieces that add
    up: they compose in zCDP, so the budget is shown once, where it is spent)."""
    shares = budget_split(steps)
    per_step = ", ".join(f"ρ{_sub(i + 1)} = {share * rho:.4g}" for i, share in enumerate(shares))
    return [LedgerEntry(f"CoinPress: {steps} round{'s' if steps > 1 else ''} of clip + Gaussian noise (zCDP)",
                        epsilon, delta,
                        note=f"ρ = {rho:.4g} = Σρᵢ: {per_step} (last round ¾ when t ≥ 2); σᵢ = √2·rᵢ²/(n√(2ρᵢ)) with "
                             f"rᵢ = min(γ = {tail_radius(d):.4g}, ‖Mᵢ‖₂) from the earlier rounds' private output; "
                             "the rounds are μ-GDP with μ = √(2ρ) (exact for Gaussian noise), converted to (ε, δ) "
                             "by the analytic Gaussian profile")]


def _sub(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


@register
class CoinPressCovariance(Mechanism):
    id = "coinpress"
    name = "CoinPress covariance (zCDP)"
    summary = ("t rounds of clip, Gaussian noise and preconditioning shrink a loose public prior Σ ⪯ λI towards Σ "
               "((ε, δ)-DP through ρ-zCDP).")
    description = (
        "Start from a loose public bound on the covariance (by default the one the norm bound gives for free) and "
        "repeat t times: whiten the rows with the current estimate, clip them, add Gaussian noise to their "
        "second moment and use the result to whiten better. Each round's clip radius comes from the previous "
        "round's private output, so later rounds clip tighter and need less noise. The budget is split in zCDP "
        "(¾ to the last round) and converted exactly to (ε, δ). Replace-one only: each round divides by the "
        "public n."
    )
    reference = ("Biswas, Dong, Kamath & Ullman, CoinPress (NeurIPS 2020), Algorithms 3–4 (MVC); authors' code "
                 "twistedcubic/coin-press; (ε, δ) via μ-GDP (Dong, Roth & Su 2022) and Balle & Wang (2018)")
    formula = (r"Z_i=\mathrm{Proj}_{\succeq 0}\big(\tfrac1n\textstyle\sum_j \mathrm{clip}_{r_i}(M_i x_j)"
               r"\mathrm{clip}_{r_i}(M_i x_j)^\top+E_i\big),\; \sigma_i=\frac{\sqrt2\,r_i^2}{n\sqrt{2\rho_i}},\; "
               r"M_{i+1}=(Z_i+\eta I)^{-1/2}M_i,\; \hat C=n\,M_t^{-1}Z_tM_t^{-\top}")
    cost = "O(t·(nd² + d³))"
    one_shot = False  # t rounds over the rows
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    needs_rows = True
    neighbourings = (Neighbouring.REPLACE,)
    order = 25
    domain = ("every ε > 0 and 0 < δ < 1 (t Gaussian steps composed exactly as μ-GDP); replace-one only (n public: "
              f"each step divides by n); 1 ≤ t ≤ {MAX_STEPS}; prior 0 < λ ≤ 1")
    params = (
        Param("steps", 3, "Number of rounds t (public). About log₂ of how loose the prior is (λ over the smallest "
              "eigenvalue you expect); the last round gets ¾ of ρ.", kind="int", low=1, high=MAX_STEPS),
        Param("prior_upper", 1.0, "Public prior λ: (1/n)Σxxᵀ ⪯ λ·I on the unit scale. 1 always holds (‖x‖ ≤ 1); "
              "give less only from public knowledge.", kind="float", low=1e-8, high=1.0),
    )

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """Its t Gaussian rounds share ρ = gaussian_mu_rho_for(ε, δ)."""
        return gaussian_mu_rho_for(epsilon, delta)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, steps=3, prior_upper=1.0):
        rho = gaussian_mu_rho_for(epsilon, delta)
        rhos = tuple(share * rho for share in budget_split(steps))
        result = coinpress_covariance(np.asarray(data.X, dtype=float), rhos, prior_upper, rng, deadline)
        ledger = coinpress_ledger(epsilon, delta, rho, steps, data.d)
        diagnostics = {"rho": rho, "rho_steps": list(result.rhos), "radii": list(result.radii),
                       "sigmas": list(result.sigmas), "rows_clipped_per_step": list(result.clipped_rows)}
        return MechanismOutput(ledger=ledger, covariance=data.n * result.covariance, diagnostics=diagnostics)
