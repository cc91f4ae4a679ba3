"""Reference violations of a claim (the audit's power check), and mutants of a mechanism's own code.

An audit's "consistent" is only worth something where the same test (same neighbours, same events, same number of
releases) would have flagged a violation *of the claim*. :func:`references_for` gives those: for a mechanism that
releases a covariance, the claim's own family of additive noise on C, calibrated from the claim and the pair alone —
never from the audited code — so that its privacy loss on these neighbours is exactly c× the claimed ε
(:data:`REFERENCE_FACTORS`; c = 2 decides "consistent", the larger ones say what the test can detect):

* an (ε, δ) claim: Ĉ = C + E, the upper triangle of E i.i.d. N(0, σ²) with the analytic σ(c·ε, δ, Δ₂) and
  Δ₂ = ‖triu(C(D′) − C(D))‖₂ (tight: its ε at δ on this pair is c·ε);
* an ε claim: the same with Laplace(Δ₁/(c·ε)) noise, Δ₁ = ‖triu(C(D′) − C(D))‖₁ (its pure loss is c·ε).

A subspace (or other) output has no such reference here, so its audit is never "consistent".

:func:`mutants_for` (the mutation test suite) gives mutants of the code itself, strongest first:

* **additive-noise mechanisms** (noise added to C: Laplace, Analyze Gauss, MOD-SuLQ, the Wishart mechanisms, and any
  unregistered mechanism that releases only a covariance): the release with its noise divided by 2 and by 1.5,
  Ĉ′ = C + (Ĉ − C)/c (σ/2, σ/1.5; the true ε of Analyze Gauss σ/2 at ε = 1, δ = 1e-5 is ≈ 2.15);
* **every other mechanism** (exponential-mechanism and selection-type releases, subspace outputs): the mechanism
  run at 2ε and at 1.5ε while its ledger still claims ε.

A mutant is an ordinary :class:`~dpcore.mechanisms.base.Mechanism` (picklable, so parallel audits can run it); its
ledger shows the claimed budget, as a buggy implementation's would.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core.linalg import _psd_from_spectrum
from ..core.noise import symmetric_gaussian, symmetric_laplace
from ..core.privacy import LedgerEntry, gaussian_sigma_analytic
from ..exceptions import InvalidParameterError
from ..mechanisms.base import Mechanism, MechanismOutput, Release, eigenvalue_ceiling
from ..mechanisms.g_dppca import GDPPCA
from ..vocabulary import Guarantee

__all__ = ["ADDITIVE_NOISE_MECHANISMS", "MUTATION_FACTORS", "REFERENCE_FACTORS", "TEACHING_MUTANTS", "GDPPCATwoOverN",
           "Mutant", "MutantSpec", "Reference", "ReferenceSpec", "is_teaching_mutant", "mutants_for",
           "reference_family", "reference_for", "teaching_mutant"]

#: Registered mechanisms whose release is C plus data-independent noise (the noise can be scaled).
ADDITIVE_NOISE_MECHANISMS = ("laplace", "analyze_gauss", "mod_sulq", "wishart_sheffet", "sn_imtiaz", "wishart_jiang")
#: The violations tried, strongest first: noise divided by c (or ε multiplied by c).
MUTATION_FACTORS = (2.0, 1.5)
#: The reference violations of the claim: privacy loss c× the claimed ε on the audited pair. The first decides
#: "consistent"; the others are tried only when it is not flagged, to say which violation the test does detect.
REFERENCE_FACTORS = (2.0, 4.0, 8.0, 16.0)


@dataclass(frozen=True)
class MutantSpec:
    """How a mutant breaks its mechanism: ``kind`` "noise" (noise/``factor``) or "epsilon" (ε·``factor``)."""

    kind: str
    factor: float

    @property
    def label(self) -> str:
        if self.kind == "noise":
            return "σ/2" if self.factor == 2.0 else f"σ/{self.factor:g}"
        return "2ε" if self.factor == 2.0 else f"{self.factor:g}ε"

    @property
    def words(self) -> str:
        if self.kind == "noise":
            part = "half its noise" if self.factor == 2.0 else f"its noise divided by {self.factor:g}"
            return f"a version with {part} ({self.label})"
        return f"a version that spends {self.factor:g}× the claimed ε ({self.label})"


def _kind(mech: Mechanism) -> str:
    additive = mech.id in ADDITIVE_NOISE_MECHANISMS
    if not additive and mech.output == "covariance":
        from ..mechanisms import mechanism_ids

        additive = mech.id not in mechanism_ids()  # an unregistered (e.g. test-only) covariance mechanism
    return "noise" if additive else "epsilon"


def mutants_for(mech: Mechanism) -> list[Mutant]:
    """The mutants the power check runs for ``mech``, strongest violation first."""
    kind = _kind(mech)
    return [Mutant(mech, MutantSpec(kind, f)) for f in MUTATION_FACTORS]


class Mutant(Mechanism):
    """``base`` with the violation ``spec``; every class attribute of ``base`` is copied onto the instance."""

    summary = "a deliberately broken copy of a mechanism (audit power check)"
    reference = "dpcore.audit.mutants"

    def __init__(self, base: Mechanism, spec: MutantSpec) -> None:
        if isinstance(base, Mutant):
            raise InvalidParameterError("a mutant of a mutant is not a comparable violation.")
        if spec.kind not in ("noise", "epsilon") or not spec.factor > 1.0:
            raise InvalidParameterError(f"unknown mutation {spec!r}.")
        self.base = base
        self.spec = spec
        for attr in ("guarantee", "output", "uses_delta", "strict_k", "needs_rows", "params", "neighbourings",
                     "domain"):
            setattr(self, attr, getattr(base, attr))
        self.id = f"{base.id}~{spec.label}"
        self.name = f"{base.name} — mutant with {spec.label}"

    def guarantee_for(self, k: int, options: dict) -> str:
        return self.base.guarantee_for(k, options)

    def check_domain(self, *, d: int, k: int, epsilon: float, delta: float, neighbouring: str,
                     options: dict) -> None:
        self.base.check_domain(d=d, k=k, epsilon=epsilon, delta=delta, neighbouring=neighbouring, options=options)
        if self.spec.kind == "epsilon":
            self.base.check_domain(d=d, k=k, epsilon=epsilon * self.spec.factor, delta=delta,
                                   neighbouring=neighbouring, options=options)

    @property
    def derivable(self) -> bool:
        """True when the mutant's release is a function of the base's release (noise kind): the power check then
        reuses the audit's own draws instead of running the mechanism again."""
        return self.spec.kind == "noise"

    def _scaled(self, C: np.ndarray, covariance: Any, eigenvalues: Any) -> tuple[np.ndarray, np.ndarray | None]:
        c = self.spec.factor
        scaled = C + (np.asarray(covariance, dtype=float) - C) / c
        if eigenvalues is None:
            return scaled, None
        lam = np.asarray(eigenvalues, dtype=float)
        exact = np.linalg.eigvalsh(C)[::-1][:lam.size]
        return scaled, exact + (lam - exact) / c

    def derive(self, release: Any, data: Any) -> Any:
        """The mutant's release made from the base's ``release`` on ``data`` with the same draws (noise kind):
        identical to what :meth:`release` returns for the same random stream. ⊥ and refusals pass unchanged."""
        return self.derive_many([release], data)[0]

    def derive_many(self, releases: list, data: Any) -> list:
        """:meth:`derive` of every release of ``releases`` on ``data`` (the same arrays, bit for bit), with the
        scaling and the eigendecompositions done once for the stack (LAPACK runs on each matrix as alone)."""
        if not self.derivable:
            raise InvalidParameterError(f"the {self.spec.label} mutant runs the mechanism itself; it cannot be "
                                        "derived from a release.")
        out = list(releases)
        todo = [i for i, r in enumerate(releases)
                if isinstance(r, Release) and not r.is_bottom and r.covariance is not None]
        if not todo:
            return out
        c = self.spec.factor
        C = data.C
        stack = np.stack([np.asarray(releases[i].covariance, dtype=float) for i in todo])
        scaled = C + (stack - C) / c
        w, V = np.linalg.eigh(0.5 * (scaled + np.swapaxes(scaled, 1, 2)))  # symmetrize(·) of each matrix
        exact = None
        for j, i in enumerate(todo):
            release = releases[i]
            eigenvalues = release.eigenvalues
            if eigenvalues is not None:
                if exact is None:
                    exact = np.linalg.eigvalsh(C)[::-1]
                lam = np.asarray(eigenvalues, dtype=float)
                head = exact[:lam.size]
                eigenvalues = head + (lam - head) / c
            post = _psd_from_spectrum(w[j], V[j], eigenvalue_ceiling(data, release.neighbouring))
            subspace = V[j][:, ::-1][:, :release.k].copy()
            out[i] = release._copy_with(mechanism=self.id, covariance=scaled[j], covariance_post=post,
                                        subspace=subspace, eigenvalues=eigenvalues)
        return out

    def _release(self, data: Any, k: int, epsilon: float, delta: float, **kwargs: Any) -> MechanismOutput:
        c = self.spec.factor
        if self.spec.kind == "epsilon":
            out = self.base._release(data, k, epsilon * c, delta, **kwargs)
            ledger = [dataclasses.replace(e, epsilon=e.epsilon / c) for e in out.ledger]  # claims ε, spends c·ε
            return dataclasses.replace(out, ledger=ledger)
        out = self.base._release(data, k, epsilon, delta, **kwargs)
        if out.bottom_reason is not None or out.covariance is None:
            return out
        covariance, eigenvalues = self._scaled(data.C, out.covariance, out.eigenvalues)
        return dataclasses.replace(out, covariance=covariance, eigenvalues=eigenvalues, subspace=None)


# ------------------------------------------------------------------------------------------------
# Reference violations of the claim (the power check)
# ------------------------------------------------------------------------------------------------

#: The claim's family of reference violations, by (output, whether the claim has a δ).
REFERENCE_FAMILIES = {("covariance", True): "gaussian", ("covariance", False): "laplace"}


def reference_family(mech: Mechanism, delta: float) -> str | None:
    """"gaussian" for an (ε, δ) claim on a covariance, "laplace" for an ε claim, None for other outputs."""
    return REFERENCE_FAMILIES.get((mech.output, delta > 0))


@dataclass(frozen=True)
class ReferenceSpec:
    """A reference violation: the claim's ``family`` of noise on C with privacy loss ``factor``× the claimed ε on
    the audited pair."""

    family: str
    factor: float

    @property
    def label(self) -> str:
        return f"{self.factor:g}ε"

    @property
    def words(self) -> str:
        return (f"a {'Gaussian' if self.family == 'gaussian' else 'Laplace'} mechanism whose privacy loss on these "
                f"neighbours is {self.factor:g}× the claimed ε ({self.label})")


def _triangle_distance(pair: Any, order: float) -> float:
    """‖triu(C(D′) − C(D))‖ (L2 or L1) of the pair: what one record changed in the released triangle."""
    diff = np.asarray(pair.D1.C, dtype=float) - np.asarray(pair.D0.C, dtype=float)
    tri = diff[np.triu_indices(diff.shape[0])]
    return float(np.linalg.norm(tri, ord=order))


class Reference(Mechanism):
    """Ĉ = C + noise of the claim's family, calibrated so that the privacy loss on ``pair`` is ``spec.factor``× the
    claimed ε (``epsilon``, ``delta``): computed from the claim and the pair, never from the audited code. Its
    ledger claims (ε, δ), as a buggy implementation's would. ``scale`` is σ (Gaussian) or the Laplace scale b."""

    summary = "a reference violation of the claim (audit power check)"
    reference = "dpcore.audit.mutants"
    output = "covariance"

    def __init__(self, base: Mechanism, spec: ReferenceSpec, pair: Any, epsilon: float, delta: float) -> None:
        if spec.family not in ("gaussian", "laplace") or not spec.factor > 1.0:
            raise InvalidParameterError(f"unknown reference {spec!r}.")
        self.spec = spec
        for attr in ("guarantee", "uses_delta", "strict_k", "needs_rows", "params", "neighbourings", "domain"):
            setattr(self, attr, getattr(base, attr))
        self.id = f"reference~{spec.family}~{spec.label}"
        self.name = f"reference {spec.family} mechanism at {spec.label}"
        self.epsilon, self.delta = epsilon, delta
        self.sensitivity = _triangle_distance(pair, 2 if spec.family == "gaussian" else 1)
        self.scale = self._scale(spec.factor)

    def _scale(self, factor: float) -> float:
        """σ (Gaussian) or b (Laplace) with privacy loss factor·ε on the pair (0 when the pair's C are equal)."""
        if self.sensitivity <= 0:
            return 0.0
        if self.spec.family == "gaussian":
            return gaussian_sigma_analytic(factor * self.epsilon, self.delta, self.sensitivity)
        return self.sensitivity / (factor * self.epsilon)

    @property
    def applicable(self) -> bool:
        """False when the pair's C do not differ (no violation of the claim can show on it)."""
        return self.sensitivity > 0

    def _release(self, data: Any, k: int, epsilon: float, delta: float, **kwargs: Any) -> MechanismOutput:
        noise = (symmetric_gaussian if self.spec.family == "gaussian" else symmetric_laplace)(data.d, self.scale,
                                                                                             kwargs["rng"])
        ledger = [LedgerEntry(f"reference {self.spec.family} noise on C", epsilon, delta)]
        return MechanismOutput(ledger=ledger, covariance=data.C + noise)

    def ladder(self, factors: tuple[float, ...]) -> list[Mutant]:
        """The references at the larger ``factors``, derived from this one's draws: the noise scaled by the ratio
        of the scales, which is the same law as running them (Gaussian and Laplace are scale families)."""
        out = []
        for factor in factors:
            mutant = Mutant(self, MutantSpec("noise", self.scale / self._scale(factor)))
            mutant.reference_spec = ReferenceSpec(self.spec.family, factor)
            out.append(mutant)
        return out


def reference_for(mech: Mechanism, pair: Any, epsilon: float, delta: float) -> Reference | None:
    """The power check's reference violation of the claim (ε, δ) on ``pair`` at :data:`REFERENCE_FACTORS` [0]
    (its :meth:`~Reference.ladder` gives the larger ones); None when the mechanism's output has no reference
    family (:func:`reference_family`)."""
    family = reference_family(mech, delta)
    if family is None:
        return None
    return Reference(mech, ReferenceSpec(family, REFERENCE_FACTORS[0]), pair, epsilon, delta)


# ------------------------------------------------------------------------------------------------
# Published miscalibrations: a constant someone ships that under-noises, kept so the audit can show it fail
# ------------------------------------------------------------------------------------------------

class GDPPCATwoOverN(GDPPCA):
    """g-DPPCA calibrated to Δ₂ = 1/m (= 2/n for even n, an R package's constant) instead of the upper triangle's
    √2/m: σ is √2 too small, so its true ε at the claimed δ is larger than claimed. A teaching mutant, never
    registered (not in Explore, ``dpcore release`` or the mechanism lists): the audit runs it by its id
    :data:`TEACHING_MUTANTS` (``dpcore audit --mechanism mutant:g_dppca_2_over_n``, the Audit page's "g-DPPCA 2/n"
    preset) and flags it on the attaining pair ``unit_swap_zeros`` (tests/audit/test_gdppca_two_over_n_preset.py,
    tests/mechanisms/test_g_dppca.py)."""

    id = "mutant:g_dppca_2_over_n"
    name = "g-DPPCA 2/n variant — teaching mutant, under-noised by √2 (NOT private)"
    summary = ("g-DPPCA with its noise calibrated to 2/n instead of 2√2/n: a deliberately under-noised copy for the "
               "audit to catch, not a shipped mechanism.")
    guarantee = Guarantee.CLAIMED_INVALID
    sensitivity = staticmethod(lambda m: 1.0 / m)
    #: The audit that flags it (the page's preset and the CLI's defaults for this id): the attaining pair, a claim
    #: (1, 0.2) where the directions' true δ is ≈ 0.26 (ours: ≈ 0.13), 50 000 releases per dataset (seconds).
    audit_defaults: ClassVar[dict[str, Any]] = {"neighbours": "unit_swap_zeros", "epsilon": 1.0, "delta": 0.2,
                                                "trials": 50_000}
    #: What the audit's pages say of it: its chart legend, its deliberate bug, and the shipped mechanism to compare.
    legend: ClassVar[str] = "g-DPPCA 2/n mutant · NOT PRIVATE"
    bug: ClassVar[str] = ("a deliberately under-noised copy of g-DPPCA, kept on this page to show the audit catching "
                          "a bug — not a shipped mechanism (Explore does not offer it). Its noise is calibrated to the "
                          "sensitivity 2/n (an R package's constant) instead of 2√2/n, so σ is √2 too small.")
    shipped: ClassVar[str] = "g-DPPCA"


#: Deliberately under-noised teaching mutants the audit runs by id (``mutant:…``; the old id ``g_dppca~2/n`` too).
#: They are not registered mechanisms: only the audit (page and CLI) knows them.
TEACHING_MUTANTS: dict[str, type[Mechanism]] = {GDPPCATwoOverN.id: GDPPCATwoOverN}
_MUTANT_ALIASES = {"g_dppca~2/n": GDPPCATwoOverN.id}


def is_teaching_mutant(mechanism_id: Any) -> bool:
    """True for the id (or old alias) of a :data:`TEACHING_MUTANTS` entry."""
    return isinstance(mechanism_id, str) and _MUTANT_ALIASES.get(mechanism_id, mechanism_id) in TEACHING_MUTANTS


def teaching_mutant(mechanism_id: str) -> Mechanism:
    """The teaching mutant with this id (:data:`TEACHING_MUTANTS`)."""
    mid = _MUTANT_ALIASES.get(mechanism_id, mechanism_id)
    if mid not in TEACHING_MUTANTS:
        raise InvalidParameterError(f"unknown teaching mutant {mechanism_id!r}; available: "
                                    f"{', '.join(TEACHING_MUTANTS)}.")
    return TEACHING_MUTANTS[mid]()
