"""Sampler conformance: does the Bingham sampler draw from the exact law?

An ε audit only lower-bounds the privacy loss, so it can miss a broken sampler whose output law is *flatter* than
the target (OpenDP's "always accept" Bingham bug, opendp#2416). :func:`sampler_conformance` tests the sampler's
output law itself against the exact law: Pearson's chi-square (:func:`scipy.stats.chisquare`) on a 1-D statistic
whose distribution is computed by numerical integration. Re-exported by :mod:`dpcore.audit` for compatibility.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..core._validation import check_fraction, check_int, check_positive
from ..core.noise import RandomState, make_rng
from ..core.privacy import jsonable
from ..exceptions import InvalidParameterError, SamplerError
from .bingham import KentBinghamSampler

__all__ = [
    "CONFORMANCE_ALPHA",
    "CONFORMANCE_CONCENTRATION",
    "CONFORMANCE_DRAWS",
    "CONFORMANCE_EIGENVALUES",
    "CONFORMANCE_STATISTIC",
    "ConformanceResult",
    "conformance_target",
    "format_p_value",
    "projection_bin_probabilities",
    "sampler_conformance",
]

ProgressCallback = Callable[[int, int], None]


#: Default public target of the sampler self-test: C = R·diag(8, 2, 0, …)·Rᵀ with exponent c = 0.5.
CONFORMANCE_EIGENVALUES = (8.0, 2.0)
CONFORMANCE_CONCENTRATION = 0.5
CONFORMANCE_DRAWS = 20_000
CONFORMANCE_ALPHA = 1e-6
CONFORMANCE_STATISTIC = "|⟨x, v₁⟩|, the absolute projection of the sample on the top eigenvector v₁ of C"
#: Samples further than this from the unit sphere make the sampler fail the self-test outright.
_SPHERE_TOL = 1e-6

SamplerFactory = Callable[[np.ndarray, float], Any]


def conformance_target(q: int = 3, eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The public test matrix C = H·diag(λ₁, λ₂, 0, …, 0)·H and its top axis v₁ = H·e₁.

    H is the fixed Householder reflection taking e₁ to (1, …, 1)/√q, so C is not diagonal and a sampler that
    mishandles the eigenbasis fails too. Returns (C, v₁).
    """
    q = check_int(q, "q (sphere dimension)", 2, 50)
    lam = _check_eigenvalues(eigenvalues)
    a = np.full(q, 1.0 / math.sqrt(q))
    w = np.eye(q)[0] - a
    H = np.eye(q) - 2.0 * np.outer(w, w) / float(w @ w)
    D = np.zeros(q)
    D[:2] = lam
    C = (H * D) @ H.T
    return 0.5 * (C + C.T), H[:, 0].copy()


def _check_eigenvalues(eigenvalues: Any) -> tuple[float, float]:
    try:
        lam = tuple(float(v) for v in eigenvalues)
    except (TypeError, ValueError):
        lam = ()
    if len(lam) != 2 or not all(math.isfinite(v) and v >= 0 for v in lam):
        raise InvalidParameterError(
            f"eigenvalues must be two finite numbers >= 0 (λ₁, λ₂; the others are 0), got {eigenvalues!r}."
        )
    return lam


def _projection_weight(theta: np.ndarray | float, q: int, l1: float, l2: float, c: float) -> np.ndarray:
    """Unnormalised density of θ = arccos t on [0, π/2] for t = |⟨x, v₁⟩|, x ∝ exp(c·xᵀCx) on S^{q−1}.

    With x = (t, √(1−t²)·u), u uniform on S^{q−2}, the surface element is (1−t²)^{(q−3)/2} dt dσ(u) and the
    average of exp(c·λ₂(1−t²)u₁²) over u is ₁F₁(½; (q−1)/2; a) = e^a·₁F₁((q−2)/2; (q−1)/2; −a), a = cλ₂(1−t²)
    (Kummer's transformation keeps the special function in (0, 1]). In θ (dt = sin θ dθ) the density is
    sin^{q−2}θ · exp(cλ₁cos²θ + a) · ₁F₁((q−2)/2; (q−1)/2; −a), smooth on [0, π/2]. q = 2 gives the circle law
    exp(c(λ₁cos²θ + λ₂sin²θ)); q = 3 gives exp(cλ₁t² + a/2)·I₀(a/2) in t.
    """
    from scipy import special

    theta = np.asarray(theta, dtype=float)
    s2 = np.sin(theta) ** 2
    a = c * l2 * s2
    kummer = 1.0 if q == 2 else special.hyp1f1((q - 2) / 2.0, (q - 1) / 2.0, -a)
    return np.sin(theta) ** (q - 2) * np.exp(c * l1 * np.cos(theta) ** 2 + a - c * max(l1, l2)) * kummer


def projection_bin_probabilities(edges: Any, *, q: int = 3, eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES,
                                 concentration: float = CONFORMANCE_CONCENTRATION) -> np.ndarray:
    """Exact P(|⟨x, v₁⟩| ∈ [eᵢ, eᵢ₊₁)) for x ∝ exp(c·xᵀCx) on S^{q−1}, C with eigenvalues (λ₁, λ₂, 0, …, 0).

    One adaptive quadrature (scipy ``quad``, relative tolerance 1e-12) per bin of the 1-D marginal density; the
    edges must increase from 0 to 1. The result sums to 1.
    """
    from scipy import integrate

    q = check_int(q, "q (sphere dimension)", 2, 50)
    l1, l2 = _check_eigenvalues(eigenvalues)
    c = check_positive(concentration, "concentration", allow_zero=True)
    e = np.asarray(edges, dtype=float).ravel()
    if e.size < 2 or not np.all(np.isfinite(e)) or e[0] != 0.0 or e[-1] != 1.0 or np.any(np.diff(e) <= 0):
        raise InvalidParameterError("edges must increase strictly from 0 to 1 (the range of |⟨x, v₁⟩|).")
    th = np.arccos(e)
    mass = np.array([integrate.quad(_projection_weight, th[i + 1], th[i], args=(q, l1, l2, c), epsabs=0.0,
                                    epsrel=1e-12, limit=200)[0] for i in range(e.size - 1)])
    return mass / mass.sum()


def _equiprobable_edges(bins: int, q: int, lam: tuple[float, float], c: float) -> np.ndarray:
    """Bin edges on [0, 1] with (nearly) equal exact probability, from the CDF on a fine θ grid."""
    from scipy import integrate

    theta = np.linspace(0.0, 0.5 * math.pi, 8193)
    cum = integrate.cumulative_simpson(_projection_weight(theta, q, lam[0], lam[1], c), x=theta, initial=0.0)
    cum = np.maximum.accumulate(np.maximum(cum, 0.0))
    # P(t ≤ cos θ) = 1 − cum(θ)/cum(π/2); equal quantiles of t ↔ equal steps of cum from the θ = π/2 end.
    levels = cum[-1] * (1.0 - np.arange(1, bins) / bins)
    inner = np.cos(np.interp(levels, cum, theta))
    edges = np.concatenate([[0.0], np.sort(inner), [1.0]])
    if np.any(np.diff(edges) <= 0):  # degenerate targets: fall back to equal widths
        edges = np.linspace(0.0, 1.0, bins + 1)
    return edges


@dataclass
class ConformanceResult:
    """The outcome of :func:`sampler_conformance` (Pearson chi-square goodness of fit; ``as_dict`` for JSON)."""

    sampler: str
    statistic: str
    q: int
    eigenvalues: tuple[float, float]
    concentration: float
    draws: int
    alpha: float
    chi2: float
    dof: int
    p_value: float
    verdict: str
    edges: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    runtime_s: float
    seed: int | None = None
    acceptance_rate: float | None = None
    off_sphere: int = 0
    reason: str = ""

    @property
    def conforms(self) -> bool:
        return self.verdict == "conforms"

    def densities(self) -> dict:
        """Observed and exact densities per bin (count / (draws · width)) for plotting on the t axis."""
        widths = np.diff(self.edges)
        return {"centres": 0.5 * (self.edges[1:] + self.edges[:-1]), "widths": widths,
                "observed": self.observed / (self.draws * widths), "expected": self.expected / (self.draws * widths)}

    def summary(self) -> str:
        """A few plain-language lines (CLI output)."""
        target = (f"exp({self.concentration:g}·xᵀCx) on S^{self.q - 1}, C with eigenvalues "
                  f"({self.eigenvalues[0]:g}, {self.eigenvalues[1]:g}, 0, …)")
        lines = [f"Sampler self-test of {self.sampler}: {self.draws:,} draws from {target}.",
                 f"Statistic: {self.statistic}; Pearson chi-square = {self.chi2:.4g} on {self.dof} degrees of "
                 f"freedom, p-value {_p_relation(self.p_value)} (reject below α = {self.alpha:g})."]
        if self.conforms:
            lines.append("CONFORMS: the samples are consistent with the exact Bingham law (a test can only fail to "
                         "find a bug, not prove there is none).")
        else:
            lines.append(f"REJECTED: {self.reason}")
        lines.append(f"Run time {self.runtime_s:.2f} s"
                     + (f"; acceptance rate {self.acceptance_rate:.3f}" if self.acceptance_rate is not None else "")
                     + ".")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return jsonable({
            "sampler": self.sampler, "statistic": self.statistic, "test": "Pearson chi-square goodness of fit",
            "q": self.q, "eigenvalues": list(self.eigenvalues), "concentration": self.concentration,
            "draws": self.draws, "alpha": self.alpha, "chi2": self.chi2, "dof": self.dof, "p_value": self.p_value,
            "verdict": self.verdict, "reason": self.reason, "edges": self.edges, "observed": self.observed,
            "expected": self.expected, "runtime_s": self.runtime_s, "seed": self.seed,
            "acceptance_rate": self.acceptance_rate, "off_sphere": self.off_sphere,
        })


def format_p_value(p: float) -> str:
    """A p-value for display; 0 (below the floating-point range) is shown as "< 1e-300"."""
    return "< 1e-300" if p < 1e-300 else f"{p:.3g}"


def _p_relation(p: float) -> str:
    text = format_p_value(p)
    return text if text.startswith("<") else f"= {text}"


def _factory_name(factory: Any) -> str:
    owner = getattr(factory, "__self__", None)
    if isinstance(owner, type):
        return f"{owner.__name__}.{getattr(factory, '__name__', 'factory')}"
    return getattr(factory, "__qualname__", None) or type(factory).__name__


def sampler_conformance(
    sampler_factory: SamplerFactory | None = None,
    *,
    q: int = 3,
    eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES,
    concentration: float = CONFORMANCE_CONCENTRATION,
    draws: int = CONFORMANCE_DRAWS,
    alpha: float = CONFORMANCE_ALPHA,
    seed: RandomState = None,
    bins: int | None = None,
    progress: ProgressCallback | None = None,
) -> ConformanceResult:
    """Test that a Bingham sampler draws from the exact law ∝ exp(c·xᵀCx) on S^{q−1} (c = ``concentration``).

    An ε audit only lower-bounds the privacy loss and can miss a broken sampler: OpenDP's "always accept" bug
    (opendp#2416) drew from the flatter ACG envelope, whose privacy loss stays *below* the claim. This test compares
    the law of t = |⟨x, v₁⟩| with its exact distribution (:func:`projection_bin_probabilities`) on the fixed public
    target of :func:`conformance_target`, using ``bins`` equal-probability bins (default: at most 40, ≥ 20 expected
    draws each) and Pearson's chi-square test; the verdict is "rejected" when p < ``alpha`` or when a sample is off
    the unit sphere. With a correct sampler a false rejection has probability ≈ ``alpha``.

    ``sampler_factory(C, c)`` must return an object with ``sample_many(n, rng)`` giving an (n, q) array; the
    default is the library's exact sampler :meth:`KentBinghamSampler.from_score`. ``progress(done, total)`` is
    called after each chunk of draws.
    """
    started = time.perf_counter()
    factory = KentBinghamSampler.from_score if sampler_factory is None else sampler_factory
    if not callable(factory):
        raise InvalidParameterError("sampler_factory must be a callable factory(C, c) returning a sampler, or None.")
    q = check_int(q, "q (sphere dimension)", 2, 50)
    lam = _check_eigenvalues(eigenvalues)
    c = check_positive(concentration, "concentration", allow_zero=True)
    draws = check_int(draws, "draws", 100, 10_000_000)
    alpha = check_fraction(alpha, "alpha")
    bins = min(40, draws // 20) if bins is None else check_int(bins, "bins", 2, 10_000)
    if draws < 5 * bins:
        raise InvalidParameterError(f"{bins} bins need at least {5 * bins} draws (≥ 5 expected per bin); "
                                    "use fewer bins or more draws.")
    if progress is not None and not callable(progress):
        raise InvalidParameterError("progress must be a callable progress(done, total) or None.")
    rng = make_rng(seed)
    C, axis = conformance_target(q, lam)
    sampler = factory(C, c)
    if not callable(getattr(sampler, "sample_many", None)):
        raise InvalidParameterError("sampler_factory(C, c) must return an object with a sample_many(n, rng) method.")

    chunk = max(1, -(-draws // 10))
    parts = []
    done = 0
    while done < draws:
        m = min(chunk, draws - done)
        x = np.asarray(sampler.sample_many(m, rng), dtype=float)
        if x.shape != (m, q):
            raise SamplerError(f"the sampler returned an array of shape {x.shape}; expected ({m}, {q}).")
        parts.append(x)
        done += m
        if progress is not None:
            progress(done, draws)
    X = np.vstack(parts)
    norms = np.linalg.norm(X, axis=1)
    off = int(np.count_nonzero(~np.isfinite(norms) | (np.abs(norms - 1.0) > _SPHERE_TOL)))
    t = np.clip(np.abs(np.nan_to_num(X @ axis)), 0.0, 1.0)

    edges = _equiprobable_edges(bins, q, lam, c)
    p = projection_bin_probabilities(edges, q=q, eigenvalues=lam, concentration=c)
    observed = np.bincount(np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1), minlength=bins)
    expected = draws * p
    test = stats.chisquare(observed, expected)
    chi2, p_value = float(test.statistic), float(test.pvalue)
    dof = bins - 1
    if off:
        verdict, reason = "rejected", f"{off} of {draws:,} samples are not unit vectors (|‖x‖ − 1| > {_SPHERE_TOL:g})."
    elif p_value < alpha:
        verdict = "rejected"
        reason = (f"p {_p_relation(p_value)} < α = {alpha:g}: the samples do not follow the exact Bingham law, "
                  "so the sampler is broken (e.g. it accepts proposals it should reject) and its privacy proof "
                  "does not apply.")
    else:
        verdict, reason = "conforms", ""
    rate = getattr(getattr(sampler, "stats", None), "acceptance_rate", None)
    return ConformanceResult(
        sampler=_factory_name(factory), statistic=CONFORMANCE_STATISTIC, q=q, eigenvalues=lam, concentration=c,
        draws=draws, alpha=alpha, chi2=chi2, dof=dof, p_value=p_value, verdict=verdict, edges=edges,
        observed=observed, expected=expected, runtime_s=time.perf_counter() - started,
        seed=seed if isinstance(seed, int) else None,
        acceptance_rate=float(rate) if isinstance(rate, (int, float)) and math.isfinite(rate) else None,
        off_sphere=off, reason=reason,
    )
