"""Convergence verdict for MCMC traces: rank-normalised split-R̂ and bulk effective sample size.

Follows Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and localization: an
improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2), §4 and Appendix A (the same estimators as
ArviZ / Stan, written out here so the project does not depend on ArviZ):

* every chain is split into two halves (a trend inside one chain then shows up as disagreeing halves);
* draws are replaced by normal scores of their ranks over all chains, z = Φ⁻¹((r − 3/8)/(S + 1/4));
* R̂ = max(bulk R̂ of the rank-normalised draws, tail R̂ of the rank-normalised folded draws |θ − median θ|),
  with R̂ = √(var⁺/W), var⁺ = (n − 1)/n·W + B/n (Gelman–Rubin on the split chains);
* bulk-ESS = (chains·n)/τ̂ of the rank-normalised split chains, τ̂ from the multi-chain autocorrelations truncated
  by Geyer's initial monotone sequence.

The PPCA verdict (:func:`judge_convergence`) applies these to sign-invariant functions of the state (the score
tr(VᵀMV), and the sum and the smallest cos² of the principal angles between span(V) and the top-k eigenvectors
of M — functions of the subspace VVᵀ),
over the second half of the recorded trace (the first half is treated as warm-up, as in Gelman & Rubin's original
recipe): the released state is the last one, so what matters is whether the chain had settled before the end.
Converged ⇔ the judged window holds at least :data:`MIN_JUDGED_DRAWS` draws, every quantity has R̂ ≤
:data:`RHAT_MAX` and bulk-ESS ≥ :data:`ESS_MIN`. These relax Vehtari et al.'s thresholds (R̂ < 1.01, ESS > 100 per
chain, meant for estimating posterior means to precision from several long chains) for the question asked here —
has a *single* short chain forgotten its start? With one chain of 1,000 scans the window is two half-chains of 250
draws; an exactly stationary chain then has R̂ − 1 of order 1/(2·ESS per half), so 1.01 would flag a few percent
of stationary chains on each quantity, while a chain still drifting (a trend across the window) gives R̂ well above
1.05 (still inside Gelman et al.'s 1.1). ESS ≥ 50 asks that the chain decorrelated at least 50 times after the
warm-up. Calibration (tests/samplers/test_convergence.py): chains started at stationarity are judged converged in
≥ 95 % of runs of 1,000 scans (measured 118 of 120 on Wine, k = 2, ε = 5 and 50; 120 of 120 for k = 1 from exact draws).

Like every MCMC diagnostic this can only show that a chain has *not* converged; passing it is evidence, never a
certificate — and PPCA's privacy guarantee needs the exact stationary law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..exceptions import InvalidParameterError

#: Largest R̂ (over the judged quantities) for the verdict "converged".
RHAT_MAX = 1.05
#: Smallest bulk-ESS (over the judged quantities) for the verdict "converged".
ESS_MIN = 50.0
#: Fewest draws (all chains together) in the judged window; fewer → "not converged (too few scans to judge)".
MIN_JUDGED_DRAWS = 100
#: Status strings of the verdict.
CONVERGED = "converged"
NOT_CONVERGED = "not converged"
TOO_FEW = "not converged (too few scans to judge)"


def _as_chains(draws: np.ndarray | list) -> np.ndarray:
    arr = np.asarray(draws, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 4 or not np.all(np.isfinite(arr)):
        raise InvalidParameterError("convergence diagnostics need finite draws shaped (chains, draws ≥ 4).")
    return arr


def split_chains(draws: np.ndarray) -> np.ndarray:
    """(chains, n) → (2·chains, ⌊n/2⌋): every chain cut into its first and second half (middle draw dropped)."""
    arr = _as_chains(draws)
    half = arr.shape[1] // 2
    return np.concatenate([arr[:, :half], arr[:, arr.shape[1] - half:]], axis=0)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..S of a flat array, ties getting their average rank (as ``scipy.stats.rankdata``)."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(1, values.size + 1)
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    if uniq.size < values.size:  # average the ranks within each group of ties
        ranks = (np.bincount(inverse, weights=ranks) / counts)[inverse]
    return ranks


def rank_normalise(draws: np.ndarray) -> np.ndarray:
    """Normal scores Φ⁻¹((r − 3/8)/(S + 1/4)) of the pooled ranks r (average ranks for ties), same shape."""
    arr = np.asarray(draws, dtype=float)
    ranks = _average_ranks(arr.ravel())
    inv_cdf = NormalDist().inv_cdf  # no scipy.stats import on the release path
    return np.array([inv_cdf(u) for u in (ranks - 0.375) / (arr.size + 0.25)]).reshape(arr.shape)


def _rhat_of(chains: np.ndarray) -> float:
    """Gelman–Rubin R̂ = √(var⁺/W) of already split chains (chains, n)."""
    n = chains.shape[1]
    within = float(np.mean(np.var(chains, axis=1, ddof=1)))
    between_over_n = float(np.var(np.mean(chains, axis=1), ddof=1))
    if within <= 0.0:
        return 1.0 if between_over_n == 0.0 else math.inf
    return math.sqrt(((n - 1) / n * within + between_over_n) / within)


def split_rhat(draws: np.ndarray) -> float:
    """Rank-normalised split-R̂ (Vehtari et al. 2021): max of the bulk and the folded (tail) version."""
    split = split_chains(draws)
    bulk = _rhat_of(rank_normalise(split))
    folded = np.abs(split - np.median(split))
    return max(bulk, _rhat_of(rank_normalise(folded)))


def _autocovariance(chains: np.ndarray) -> np.ndarray:
    """Biased autocovariance (divided by n) of every chain at lags 0..n−1, via FFT."""
    n = chains.shape[1]
    centred = chains - chains.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(centred, size, axis=1)
    return np.fft.irfft(f * np.conjugate(f), size, axis=1)[:, :n] / n


def _ess_of(chains: np.ndarray) -> float:
    """Multi-chain ESS (Vehtari et al. 2021 eq. 10–11, Geyer's initial monotone sequence) of (chains, n)."""
    m, n = chains.shape
    acov = _autocovariance(chains)
    mean_var = float(np.mean(acov[:, 0])) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n + (float(np.var(chains.mean(axis=1), ddof=1)) if m > 1 else 0.0)
    if var_plus <= 0.0:
        return float(m * n)
    rho = np.zeros(n)
    rho[0] = 1.0
    rho_even, rho_odd = 1.0, 1.0 - (mean_var - float(np.mean(acov[:, 1]))) / var_plus
    rho[1] = rho_odd
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0.0:  # Geyer's initial positive sequence
        rho_even = 1.0 - (mean_var - float(np.mean(acov[:, t + 1]))) / var_plus
        rho_odd = 1.0 - (mean_var - float(np.mean(acov[:, t + 2]))) / var_plus
        if rho_even + rho_odd >= 0.0:
            rho[t + 1], rho[t + 2] = rho_even, rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0.0:
        rho[max_t + 1] = rho_even
    t = 1
    while t <= max_t - 2:  # initial monotone sequence
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = 0.5 * (rho[t - 1] + rho[t])
        t += 2
    tau = -1.0 + 2.0 * float(np.sum(rho[: max_t + 1])) + float(np.sum(rho[max_t + 1: max_t + 2]))
    tau = max(tau, 1.0 / math.log10(m * n))
    return m * n / tau


def ess_bulk(draws: np.ndarray) -> float:
    """Bulk effective sample size (rank-normalised split chains) of draws shaped (chains, n) or (n,)."""
    return _ess_of(rank_normalise(split_chains(draws)))


@dataclass(frozen=True)
class ConvergenceVerdict:
    """The non-private convergence verdict on a chain's recorded trace (see the module docstring)."""

    status: str  # CONVERGED, NOT_CONVERGED or TOO_FEW
    rhat: float  # largest R̂ over the judged quantities (nan when too few scans)
    ess_bulk: float  # smallest bulk-ESS over the judged quantities (nan when too few scans)
    judged_draws: int  # draws per chain in the judged window (second half of the recorded trace)
    chains: int
    worst: str = ""  # the quantity with the largest R̂

    @property
    def converged(self) -> bool:
        return self.status == CONVERGED

    def message(self) -> str:
        """One line for sweep rows and captions, e.g. "MCMC not converged (split-R̂ 1.31 > 1.05)"."""
        if self.status == TOO_FEW:
            return (f"MCMC {TOO_FEW}: {self.judged_draws * self.chains} draws in the judged window, "
                    f"{MIN_JUDGED_DRAWS} needed")
        detail = f"split-R̂ {self.rhat:.3f}, bulk-ESS {self.ess_bulk:.0f}"
        if self.converged:
            return f"MCMC {CONVERGED} by the non-private heuristic ({detail})"
        why = [f"split-R̂ {self.rhat:.3f} > {RHAT_MAX:g}"] if self.rhat > RHAT_MAX else []
        why += [f"bulk-ESS {self.ess_bulk:.0f} < {ESS_MIN:g}"] if self.ess_bulk < ESS_MIN else []
        return f"MCMC {NOT_CONVERGED} ({'; '.join(why) or detail}; worst: {self.worst})"

    def row_message(self) -> str:
        """The verdict without its data-derived numbers, for sweep rows and CSVs (the status and the thresholds)."""
        if self.status == TOO_FEW:
            return f"MCMC {TOO_FEW}"
        return f"MCMC {self.status} (split-R̂ ≤ {RHAT_MAX:g} and bulk-ESS ≥ {ESS_MIN:g} verdict, non-private)"

    def as_dict(self) -> dict:
        """Diagnostics entries: ``convergence_message`` (status only, for sweep rows) and ``convergence_detail``
        (with R̂ and ESS, for Inspect's non-private diagnostics)."""
        return {"convergence": self.status, "converged": self.converged, "rhat": self.rhat,
                "ess_bulk": self.ess_bulk, "judged_draws": self.judged_draws, "rhat_max": RHAT_MAX,
                "ess_min": ESS_MIN, "convergence_message": self.row_message(), "convergence_detail": self.message()}


def judge_convergence(traces: np.ndarray, names: list[str] | tuple[str, ...] | None = None) -> ConvergenceVerdict:
    """Verdict on traces shaped (chains, recorded draws, quantities): R̂ and bulk-ESS over the second half."""
    arr = np.asarray(traces, dtype=float)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[0] < 1:
        raise InvalidParameterError("judge_convergence needs traces shaped (chains, draws, quantities).")
    chains, n, q = arr.shape
    names = list(names) if names is not None else [f"q{j}" for j in range(q)]
    window = arr[:, n - n // 2:, :]
    judged = window.shape[1]
    if judged * chains < MIN_JUDGED_DRAWS or judged < 4:
        return ConvergenceVerdict(TOO_FEW, math.nan, math.nan, judged, chains)
    rhats = [split_rhat(window[:, :, j]) for j in range(q)]
    esses = [ess_bulk(window[:, :, j]) for j in range(q)]
    worst = int(np.argmax(rhats))
    ok = max(rhats) <= RHAT_MAX and min(esses) >= ESS_MIN
    return ConvergenceVerdict(CONVERGED if ok else NOT_CONVERGED, float(max(rhats)), float(min(esses)), judged,
                              chains, names[worst])


__all__ = [
    "CONVERGED",
    "ESS_MIN",
    "MIN_JUDGED_DRAWS",
    "NOT_CONVERGED",
    "RHAT_MAX",
    "TOO_FEW",
    "ConvergenceVerdict",
    "ess_bulk",
    "judge_convergence",
    "rank_normalise",
    "split_chains",
    "split_rhat",
]
