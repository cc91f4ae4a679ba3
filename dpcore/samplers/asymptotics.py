"""An outside check of the PPCA samplers: Yun & Dudeja's closed form for exponential-mechanism PCA.

Yun & Dudeja (2025), "High-Dimensional Asymptotics of Differentially Private PCA" (arXiv 2511.07270), study the
exponential mechanism V̂ ∝ exp(tr(VᵀAV)) with A = (pβ/2)·Σ_X, where Σ_X = (1/n) Σ xᵢxᵢᵀ for rows rank-scaled into
[−1, 1]^p. In dpcore's convention (rows of norm ≤ 1, C = Σ zᵢzᵢᵀ, density ∝ exp((ε/2)·tr(VᵀCV))) the rows are
zᵢ = xᵢ/√p, so C = (n/p)·Σ_X and (ε/2)·C = A exactly when

    ε = β·p²/n.

As p → ∞ (spectrum of Σ_X with a few spikes above a bulk), with P, P̂ the projectors on the true and the sampled
top-k subspaces and λ₁ ≥ … ≥ λ_p the eigenvalues of Σ_X:

* ‖P̂ − P‖²_F → 2·Σ_{i≤k} min(1, H_i/β),  H_i = (1/p)·Σ_{j>k} 1/(λ_i − λ_j);
* ‖P̂ − P‖²_op → min(1, H_k/β)  (the largest principal angle's sin²).

This module builds a public spiked spectrum, evaluates the formula, and draws the samplers PPCA uses (the exact
Kent sampler for k = 1, Hoff's Gibbs scan for k ≥ 2) on the same matrix, so a test and the Papers page can compare
them. Finite p: the formula is a limit; at p = 200 the exact finite-p value differs by a few percent (see
:data:`FINITE_P_TOLERANCE`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..exceptions import InvalidParameterError
from .bingham import KentBinghamSampler
from .gibbs import bmf_gibbs

#: Default spiked spectrum: p = 200, three clear spikes above a bulk spread evenly over [0, 1].
DEFAULT_P = 200
DEFAULT_SPIKES = (6.0, 4.0, 3.0)
#: Nominal row count for the ε = βp²/n mapping (the samplers see only the exponent matrix, which fixes βp).
NOMINAL_N = 10_000
#: Relative allowance for the finite-p gap between the sampler at p = 200 and the p → ∞ formula (Yun–Dudeja's
#: own finite-p experiments and ours: k = 1 within ~1 %, the k = 2 scan 0.4–2.3 % above). The tests add 4 standard
#: errors of the Monte Carlo mean on top.
FINITE_P_TOLERANCE = 0.05


def spiked_spectrum(p: int = DEFAULT_P, spikes: tuple[float, ...] = DEFAULT_SPIKES,
                    bulk: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """Eigenvalues of Σ_X, descending: ``spikes`` then p − len(spikes) bulk values at the midpoints of ``bulk``."""
    s = len(spikes)
    if p <= s + 1 or list(spikes) != sorted(spikes, reverse=True) or min(spikes) <= bulk[1] or bulk[0] >= bulk[1]:
        raise InvalidParameterError("spiked_spectrum needs p > #spikes + 1, descending spikes above the bulk.")
    m = p - s
    grid = bulk[0] + (bulk[1] - bulk[0]) * (np.arange(m, 0, -1) - 0.5) / m
    return np.concatenate([np.asarray(spikes, dtype=float), grid])


def yun_dudeja_h(eigenvalues: np.ndarray, k: int) -> np.ndarray:
    """H_i = (1/p)·Σ_{j>k} 1/(λ_i − λ_j) for i = 1..k (eigenvalues descending, λ_k > λ_{k+1})."""
    lam = np.asarray(eigenvalues, dtype=float)
    p = lam.size
    if not (1 <= k < p) or lam[k - 1] <= lam[k]:
        raise InvalidParameterError("yun_dudeja_h needs 1 <= k < p and a gap λ_k > λ_{k+1}.")
    return np.array([np.sum(1.0 / (lam[i] - lam[k:])) / p for i in range(k)])


def predicted_errors(eigenvalues: np.ndarray, k: int, beta: float) -> tuple[float, float]:
    """Yun–Dudeja limits (‖P̂ − P‖²_F, ‖P̂ − P‖²_op) at inverse temperature β."""
    h = yun_dudeja_h(eigenvalues, k)
    return float(2.0 * np.sum(np.minimum(1.0, h / beta))), float(min(1.0, h[-1] / beta))


def epsilon_for(beta: float, p: int, n: int = NOMINAL_N) -> float:
    """ε = β·p²/n: the PPCA budget whose exponent (ε/2)·C equals Yun–Dudeja's A = (pβ/2)·Σ_X."""
    return beta * p * p / n


def _basis(p: int, seed: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((p, p)))[0]


@dataclass(frozen=True)
class SamplerCheck:
    """Projector errors of one sampler run against the formula at one β."""

    k: int
    beta: float
    epsilon: float
    frobenius_mean: float
    frobenius_se: float
    operator_mean: float
    operator_se: float
    frobenius_predicted: float
    operator_predicted: float
    draws: int
    sampler: str

    @property
    def relative_gap(self) -> float:
        """(measured − predicted)/predicted for the squared Frobenius error."""
        return self.frobenius_mean / self.frobenius_predicted - 1.0

    def agrees(self, tolerance: float = FINITE_P_TOLERANCE, z: float = 4.0) -> bool:
        """|measured − predicted| ≤ tolerance·predicted + z·SE (finite-p allowance plus Monte Carlo error)."""
        return abs(self.frobenius_mean - self.frobenius_predicted) <= (
            tolerance * self.frobenius_predicted + z * self.frobenius_se)


def _errors(U: np.ndarray, V: np.ndarray) -> tuple[float, float]:
    s2 = np.linalg.svd(U.T @ V, compute_uv=False) ** 2
    return float(2.0 * (U.shape[1] - s2.sum())), float(1.0 - s2.min())


def check_sampler(eigenvalues: np.ndarray, k: int, beta: float, *, draws: int = 200, chains: int = 4,
                  scans: int = 150, warmup: int = 50, seed: int = 0, n: int = NOMINAL_N) -> SamplerCheck:
    """Draw PPCA's sampler on Σ_X = R·diag(λ)·Rᵀ (R a seeded random basis) at inverse temperature β.

    k = 1: ``draws`` exact Kent samples (i.i.d.; SE from their spread). k ≥ 2: ``chains`` Gibbs chains of ``scans``
    scans from uniform starts, the first ``warmup`` discarded; the SE comes from the spread of the chain means.
    """
    lam = np.asarray(eigenvalues, dtype=float)
    p = lam.size
    R = _basis(p, 12345)
    sigma = (R * lam) @ R.T
    U = R[:, :k]
    c = p * beta / 2.0  # exponent on vᵀΣ_X v
    rng = np.random.default_rng(seed)
    if k == 1:
        sampler = KentBinghamSampler.from_score(sigma, c)
        errs = np.array([_errors(U, sampler.sample(rng)[:, None]) for _ in range(draws)])
        se = errs.std(axis=0, ddof=1) / math.sqrt(draws)
        means, used, name = errs.mean(axis=0), draws, "Kent exact (k = 1)"
    else:
        if chains < 2 or scans <= warmup:
            raise InvalidParameterError("the Gibbs check needs chains >= 2 and scans > warmup.")
        res = bmf_gibbs(c * sigma, k, scans, rng, chains=chains, keep_every=1)
        per_chain = np.array([[_errors(U, V) for V in chain[warmup:]] for chain in res.samples]).mean(axis=1)
        means = per_chain.mean(axis=0)
        se = per_chain.std(axis=0, ddof=1) / math.sqrt(chains)
        used, name = chains * (scans - warmup), f"Gibbs scan (k = {k})"
    frob, op = predicted_errors(lam, k, beta)
    return SamplerCheck(k, beta, epsilon_for(beta, p, n), float(means[0]), float(se[0]), float(means[1]),
                        float(se[1]), frob, op, used, name)


__all__ = [
    "DEFAULT_P",
    "DEFAULT_SPIKES",
    "FINITE_P_TOLERANCE",
    "NOMINAL_N",
    "SamplerCheck",
    "check_sampler",
    "epsilon_for",
    "predicted_errors",
    "spiked_spectrum",
    "yun_dudeja_h",
]
