"""Mechanism base class, parameter declarations and the release record.

A mechanism is a stateless object: ``release(data, k, epsilon, delta, ...)`` validates every argument here,
in one place, then calls the subclass's ``_release``, which returns a :class:`MechanismOutput`. The base
class assembles the :class:`Release` (guarantee, ledger, post-processed covariance, subspace).
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..core._validation import check_delta, check_epsilon, check_k, check_neighbouring, check_time_limit
from ..core.linalg import clip_spectrum, clip_spectrum_and_top_k, orthonormalize, top_k_eigenpairs
from ..core.privacy import GUARANTEE_LABELS, GUARANTEES, Diagnostics, LedgerEntry, ledger_total
from ..core.seeding import RandomState, Stage, stage_rng
from ..core.timing import Deadline
from ..exceptions import InvalidMechanismError, InvalidParameterError
from ..params import Param
from ..vocabulary import PRIVATE_GUARANTEES, Guarantee, Neighbouring, ReleaseStatus

if TYPE_CHECKING:  # the data layer (pandas, scipy.stats) loads on first release, not on `import dpcore.mechanisms`
    from ..data.prepared import PreparedData

OUTPUT_KINDS = ("covariance", "subspace")


@dataclass
class MechanismOutput:
    """What a mechanism's ``_release`` returns; the base class turns it into a :class:`Release`.

    Give ``covariance`` (raw release, unit-norm scale) and/or ``subspace`` (d×k). When only a covariance is
    given, the subspace is its top-k eigenvectors. ``bottom_reason`` makes the release a ⊥ (no output); it is part
    of the output, so it must not depend on the data (put data-dependent explanations in ``diagnostics``, which are
    non-private).
    """

    ledger: list[LedgerEntry]
    subspace: np.ndarray | None = None
    covariance: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)
    bottom_reason: str | None = None


#: The fields of a :class:`Release` that are the private output (or public settings); everything else a release
#: carries is in :attr:`Release.diagnostics`, which is NOT private.
PRIVATE_OUTPUT_FIELDS = ("status", "reason", "subspace", "covariance", "covariance_post", "eigenvalues")
PUBLIC_SETTING_FIELDS = ("mechanism", "guarantee", "neighbouring", "epsilon", "delta", "k", "n", "d", "norm_bound",
                         "options", "ledger", "preprocessing", "counterexample_delta")


@dataclass
class Release:
    """One output of a mechanism, with its privacy metadata (spec Appendix B).

    The output surface has two parts, and the type says which is which:

    * the **private output** (:data:`PRIVATE_OUTPUT_FIELDS`): ``status`` (ok or ⊥), ``reason`` (a data-independent
      sentence for ⊥), ``subspace``, ``covariance`` (raw), ``covariance_post`` (post-processed) and
      ``eigenvalues``; together with the **public settings** (:data:`PUBLIC_SETTING_FIELDS`) they may be published;
    * ``diagnostics``: a :class:`~dpcore.core.privacy.Diagnostics` of exact, data-dependent values (scores, proposal
      counts, the exact row count, …) — NOT private, for teaching and debugging only.

    ``n`` is the row count only where it is public (replace-one); under add/remove it is None (the exact count is
    in ``diagnostics["n_rows"]``). Matrices are on the unit scale (rows ‖x‖ ≤ 1); multiply covariances by
    ``norm_bound**2`` for the preprocessed feature units (:meth:`scaled_covariance`). ``ledger`` holds the
    mechanism's steps, ``preprocessing`` the steps that prepared its input (DP centring spends budget there).

    ``covariance_post`` may be computed when first read (:meth:`PreparedRelease.run` with ``lazy_post=True``, as
    :class:`~dpcore.estimator.DPPCA` does): post-processing of ``covariance``, the same value either way.
    """

    mechanism: str
    guarantee: str
    neighbouring: str
    epsilon: float
    delta: float
    k: int
    n: int | None
    d: int
    norm_bound: float
    ledger: tuple[LedgerEntry, ...]
    subspace: np.ndarray | None
    covariance: np.ndarray | None = None
    covariance_post: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    status: ReleaseStatus = ReleaseStatus.OK  # OK or BOTTOM
    reason: str = ""
    options: dict = field(default_factory=dict)
    counterexample_delta: float | None = None
    preprocessing: tuple[LedgerEntry, ...] = ()

    @property
    def is_bottom(self) -> bool:
        return self.status == ReleaseStatus.BOTTOM

    @property
    def projector(self) -> np.ndarray | None:
        """Π̂ = V̂V̂ᵀ (None for ⊥)."""
        return None if self.subspace is None else self.subspace @ self.subspace.T

    @property
    def budget_spent(self) -> tuple[float, float]:
        """(ε, δ) spent by the mechanism itself (its own ledger)."""
        return ledger_total(self.ledger)

    @property
    def full_ledger(self) -> tuple[LedgerEntry, ...]:
        """Preprocessing steps, then the mechanism's steps: everything the published result cost."""
        return (*self.preprocessing, *self.ledger)

    @property
    def total_budget(self) -> tuple[float, float]:
        """(ε, δ) of the whole pipeline (DP centring included): what to show as "spent"."""
        return ledger_total(self.full_ledger)

    @property
    def is_private(self) -> bool:
        """False when a preprocessing or mechanism step is not private, or the mechanism's guarantee is none or
        claimed-invalid."""
        return self.guarantee in PRIVATE_GUARANTEES and all(e.private for e in self.full_ledger)

    def as_dict(self) -> dict:
        """JSON-ready record: settings, the private output and, apart and labelled, the non-private diagnostics."""
        def arr(a):
            return None if a is None else np.asarray(a).tolist()

        eps, delta = self.total_budget
        return {
            "mechanism": self.mechanism, "guarantee": self.guarantee, "neighbouring": self.neighbouring,
            "epsilon": eps, "delta": delta,
            "mechanism_epsilon": self.epsilon, "mechanism_delta": self.delta,
            "k": self.k, "n": self.n, "d": self.d, "norm_bound": self.norm_bound, "options": dict(self.options),
            "end_to_end_private": self.is_private,
            "ledger": [e.as_dict() for e in self.full_ledger],
            "counterexample_delta": self.counterexample_delta,
            "private_output": {"status": self.status, "reason": self.reason, "subspace": arr(self.subspace),
                               "eigenvalues": arr(self.eigenvalues),
                               "covariance_post": arr(self.covariance_post)},
            "nonprivate_diagnostics": self.diagnostics.as_dict(),
        }

    def scaled_covariance(self, post_processed: bool = True) -> np.ndarray | None:
        """The covariance estimate in preprocessed feature units (B²·Ĉ)."""
        C = self.covariance_post if post_processed else self.covariance
        return None if C is None else C * self.norm_bound**2

    def post_processed_variances(self) -> np.ndarray | None:
        """v̂ᵢᵀ·``covariance_post``·v̂ᵢ along each released direction (unit scale); None without both.

        When the subspace is the top-k eigenvectors of the released covariance these are its top-k eigenvalues
        clipped as ``covariance_post`` clips them, read without forming ``covariance_post`` if it is deferred.
        """
        deferred = self.__dict__.get("_post_deferred")
        if deferred is not None and deferred[2] is not None:
            _, upper, top = deferred
            return np.clip(top, 0.0, upper)
        if self.subspace is None or self.covariance_post is None:
            return None
        V = self.subspace
        return np.sum(V * (self.covariance_post @ V), axis=0)

    def _copy_with(self, **changes: Any) -> Release:
        """``dataclasses.replace(self, **changes)`` without its per-call field walk (plain fields, no
        ``__post_init__``): a shallow copy with ``changes`` set (``covariance_post`` through its property)."""
        new = object.__new__(Release)
        new.__dict__.update(self.__dict__)
        if "covariance_post" in changes:
            new.covariance_post = changes.pop("covariance_post")
        new.__dict__.update(changes)
        return new

    def _defer_post(self, upper: float, top_eigenvalues: np.ndarray | None) -> None:
        """Compute ``covariance_post`` from ``covariance`` when first read (clip to [0, ``upper``]);
        ``top_eigenvalues``: those of the released subspace's directions, when it is the top-k eigenvectors."""
        self.__dict__["_covariance_post"] = None
        self.__dict__["_post_deferred"] = (self.covariance, upper, top_eigenvalues)


def _covariance_post(self: Release) -> np.ndarray | None:
    post = self.__dict__.get("_covariance_post")
    deferred = self.__dict__.get("_post_deferred")
    if post is None and deferred is not None:
        post = clip_spectrum(deferred[0], upper=deferred[1])
        self.__dict__["_covariance_post"], self.__dict__["_post_deferred"] = post, None
    return post


def _set_covariance_post(self: Release, value: np.ndarray | None) -> None:
    self.__dict__["_covariance_post"], self.__dict__["_post_deferred"] = value, None


# A property over the dataclass field: the generated __init__ (and dataclasses.replace) set it; a deferred value is
# computed on first read (see Release).
Release.covariance_post = property(_covariance_post, _set_covariance_post,  # type: ignore[assignment]
                                   doc="The post-processed covariance (PSD, eigenvalues clipped); unit scale.")


def eigenvalue_ceiling(data: PreparedData, neighbouring: str) -> float:
    """Upper clip for released eigenvalues: n where n is public (replace-one), +∞ under add/remove (n private)."""
    return float(data.n) if neighbouring == Neighbouring.REPLACE else math.inf


class Mechanism(ABC):
    """Base class of all mechanisms. Subclasses set the class attributes and implement ``_release``."""

    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one sentence
    description: ClassVar[str] = ""  # a paragraph in plain words (Learn page)
    reference: ClassVar[str]  # paper, algorithm and equation
    formula: ClassVar[str] = ""  # LaTeX
    cost: ClassVar[str] = ""
    #: True when a release is one closed-form perturbation (milliseconds); False when it samples by rejection, runs
    #: MCMC or iterates (seconds, data-dependent). The interactive clipping advisor runs one-shot mechanisms only.
    one_shot: ClassVar[bool] = True
    guarantee: ClassVar[str]
    output: ClassVar[str]  # "covariance" | "subspace"
    uses_delta: ClassVar[bool] = False
    strict_k: ClassVar[bool] = False  # True when k must be < d
    needs_rows: ClassVar[bool] = False  # True when the mechanism reads X, not only C
    params: ClassVar[tuple[Param, ...]] = ()
    neighbourings: ClassVar[tuple[str, ...]] = tuple(Neighbouring)
    order: ClassVar[int] = 100  # display order within its guarantee group
    #: Scaling family for the Sample size page's guides (dpcore.evaluation.theory.FAMILIES): "exponential" (shortfall
    #: ∝ 1/n),
    #: "additive" (noise added to C, ∝ 1/n²) or None (no guide).
    utility_family: ClassVar[str | None] = None
    #: True when the release ignores location (it estimates the *centred* covariance's directions, e.g. from paired
    #: differences): on uncentred data the metrics, which compare with C = Σxxᵀ, understate it.
    location_invariant: ClassVar[bool] = False
    #: Where the privacy proof holds, in words (Learn cards, ``dpcore mechanisms``); enforced by check_domain.
    domain: ClassVar[str] = "every ε > 0 (and δ in (0, 1) where δ is used), every k ≤ d"

    # --- metadata --------------------------------------------------------------------------------
    @property
    def invalid(self) -> bool:
        return self.guarantee == Guarantee.CLAIMED_INVALID

    def guarantee_for(self, k: int, options: dict) -> str:
        """The guarantee of a release with these settings (e.g. PPCA is exact for k = 1)."""
        return self.guarantee

    def zcdp_rho(self, epsilon: float, delta: float, *, n: int | None, d: int, neighbouring: str,
                 options: dict) -> float | None:
        """The exact zCDP cost ρ of one release with these public settings, where the mechanism's privacy is a
        composition of Gaussian steps or is calibrated in zCDP (the session odometer composes it); None otherwise.
        ``n`` is None where it is not public."""
        return None

    def counterexample_delta(self, epsilon: float, options: dict | None = None) -> float | None:
        """For claimed-invalid mechanisms: the δ below which the claim provably fails at this ε."""
        return None

    def default_options(self) -> dict:
        return {p.name: p.default for p in self.params}

    def check_neighbouring(self, neighbouring: object, given: str = "got") -> str:
        """Return the relation after checking it is known and this mechanism supports it (the one such check).

        ``given`` words where the value came from in the error (e.g. "the supplied pair is").
        """
        neighbouring = check_neighbouring(neighbouring)
        if neighbouring not in self.neighbourings:
            raise InvalidParameterError(
                f"{self.id} supports neighbouring {', '.join(self.neighbourings)}; {given} {neighbouring!r}.")
        return neighbouring

    def validate_options(self, options: dict) -> dict:
        """Check option names and values; returns defaults merged with ``options``."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(options) - set(known))
        if unknown:
            valid = ", ".join(known) or "none"
            raise InvalidParameterError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for mechanism {self.id!r}; valid: {valid}."
            )
        merged = self.default_options()
        for key, value in options.items():
            merged[key] = known[key].validate(value)
        return merged

    def describe(self) -> dict:
        """JSON-serialisable metadata (``dpcore mechanisms --json``, the Learn page)."""
        return {
            "id": self.id,
            "name": self.name,
            "guarantee": self.guarantee,
            "guarantee_label": GUARANTEE_LABELS[self.guarantee],
            "output": self.output,
            "reference": self.reference,
            "summary": self.summary,
            "description": self.description,
            "formula": self.formula,
            "cost": self.cost,
            "uses_delta": self.uses_delta,
            "neighbouring": list(self.neighbourings),
            "params": [p.as_dict() for p in self.params],
            "counterexample_delta_at_eps1": self.counterexample_delta(1.0),
            "proof_domain": self.domain,
        }

    # --- the release -----------------------------------------------------------------------------
    def release(
        self,
        data: PreparedData | np.ndarray,
        k: int,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbouring: str = Neighbouring.REPLACE,
        random_state: RandomState = None,
        time_limit: float | None = None,
        allow_invalid: bool = False,
        **options: Any,
    ) -> Release:
        """Run the mechanism once on ``data`` (rows with ‖x‖ ≤ 1) and return a :class:`Release`.

        ``random_state``: None (OS entropy, for real releases), an int or SeedSequence (the release draws from its
        own child stream, see :mod:`dpcore.core.seeding`) or a Generator (used as is).
        """
        prepared = self.prepare_release(data, k, epsilon, delta, neighbouring=neighbouring, time_limit=time_limit,
                                        allow_invalid=allow_invalid, **options)
        return prepared.run(random_state, time_limit)

    def prepare_release(
        self,
        data: PreparedData | np.ndarray,
        k: int,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbouring: str = Neighbouring.REPLACE,
        time_limit: float | None = None,
        allow_invalid: bool = False,
        **options: Any,
    ) -> PreparedRelease:
        """Validate every argument of :meth:`release` (the one place) and return the settings, ready to run many
        releases with :meth:`PreparedRelease.run` (the audit validates once, then releases thousands of times)."""
        from ..data.prepared import PreparedData

        if not isinstance(data, PreparedData):
            data = PreparedData.from_unit_rows(np.asarray(data, dtype=float))
        if self.invalid and not allow_invalid:
            raise InvalidMechanismError(
                f"{self.name} ({self.id}) is NOT differentially private: its published proof ignores that the "
                "output's support depends on the data. Pass allow_invalid=True (CLI: --allow-invalid) to run it "
                "as a labelled exhibit."
            )
        k = check_k(k, data.d, strict=self.strict_k)
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, required=self.uses_delta)
        neighbouring = self.check_neighbouring(neighbouring)
        check_time_limit(time_limit)
        opts = self.validate_options(options)
        self.check_domain(d=data.d, k=k, epsilon=epsilon, delta=delta, neighbouring=neighbouring, options=opts)
        return PreparedRelease(self, data, k, epsilon, delta, neighbouring, opts)

    def check_domain(self, *, d: int, k: int, epsilon: float, delta: float, neighbouring: str,
                     options: dict) -> None:
        """Raise :class:`InvalidParameterError` when the settings lie outside the domain of the privacy proof.

        Called by :meth:`release` after the generic checks; :attr:`domain` states the same in words. The default
        accepts everything the generic checks accept.
        """
        return None

    @abstractmethod
    def _release(
        self,
        data: PreparedData,
        k: int,
        epsilon: float,
        delta: float,
        *,
        neighbouring: str,
        rng: np.random.Generator,
        deadline: Deadline,
        **options: Any,
    ) -> MechanismOutput:
        """Mechanism body: arguments are already validated."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id!r} guarantee={self.guarantee!r}>"


@functools.lru_cache(maxsize=64)
def _identity(k: int) -> np.ndarray:
    """The k×k identity the orthonormality check compares against, built once per k (read-only)."""
    eye = np.eye(k)
    eye.flags.writeable = False
    return eye


def _is_orthonormal(V: np.ndarray, k: int) -> bool:
    """``np.allclose(VᵀV, I, atol=1e-8)`` (rtol 1e-5; NaN is not close) without its per-call overhead."""
    eye = _identity(k)
    with np.errstate(invalid="ignore"):
        return bool((np.abs(V.T @ V - eye) <= 1e-8 + 1e-5 * eye).all())


class PreparedRelease:
    """A mechanism with validated release settings (:meth:`Mechanism.prepare_release`): :meth:`run` makes one
    release per call. The settings-only values (guarantee, counterexample δ) are computed once, after the first
    run's draws, so every run has the draws and the errors of :meth:`Mechanism.release`."""

    __slots__ = ("_settled", "data", "delta", "epsilon", "k", "mechanism", "neighbouring", "options")

    def __init__(self, mechanism: Mechanism, data: PreparedData, k: int, epsilon: float, delta: float,
                 neighbouring: str, options: dict) -> None:
        self.mechanism = mechanism
        self.data = data
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.neighbouring = neighbouring
        self.options = options
        self._settled: tuple | None = None

    def _settings(self) -> tuple:
        """(guarantee, counterexample δ, public n, eigenvalue ceiling, preprocessing): functions of the settings."""
        if self._settled is None:
            mech, data = self.mechanism, self.data
            guarantee = str(mech.guarantee_for(self.k, self.options))  # plain value: releases hold strings
            if guarantee not in GUARANTEES:  # pragma: no cover - programming error in a subclass
                raise InvalidMechanismError(f"{mech.id} declared an unknown guarantee {guarantee!r}.")
            self._settled = (guarantee, mech.counterexample_delta(self.epsilon, self.options),
                             # n is public only under replace-one; under add/remove nothing released depends on it
                             data.n if self.neighbouring == Neighbouring.REPLACE else None,
                             eigenvalue_ceiling(data, self.neighbouring), tuple(data.ledger))
        return self._settled

    def run(self, random_state: RandomState = None, time_limit: float | None = None, *,
            lazy_post: bool = False) -> Release:
        """One release with these settings (``random_state`` and ``time_limit`` as in :meth:`Mechanism.release`).

        ``lazy_post=True``: a covariance mechanism's subspace comes from a partial eigensolver
        (:func:`~dpcore.core.linalg.top_k_eigenpairs`: same span, vectors equal up to rounding and sign) and
        ``covariance_post`` is computed when first read — for callers that need only the subspace (``DPPCA.fit``).
        """
        mech, data, k, epsilon, delta = self.mechanism, self.data, self.k, self.epsilon, self.delta
        deadline = Deadline(check_time_limit(time_limit))
        opts = dict(self.options)  # each release owns its options dict
        rng = stage_rng(random_state, Stage.MECHANISM)
        out = mech._release(data, k, epsilon, delta, neighbouring=self.neighbouring, rng=rng, deadline=deadline,
                            **opts)
        guarantee, counterexample, public_n, upper, preprocessing = self._settings()
        spent_eps, spent_delta = ledger_total(out.ledger)
        if guarantee in PRIVATE_GUARANTEES and (
                spent_eps > epsilon * (1 + 1e-9) + 1e-12 or spent_delta > delta * (1 + 1e-9) + 1e-15):
            # Internal consistency: a mechanism never spends more than it was given.
            raise InvalidMechanismError(
                f"{mech.id} spent (ε, δ) = ({spent_eps:g}, {spent_delta:g}), more than the budget "
                f"({epsilon:g}, {delta:g}); this is a bug in the mechanism — please report it.")

        diagnostics = Diagnostics(out.diagnostics)
        diagnostics.setdefault("n_rows", data.n)
        common = dict(
            mechanism=mech.id, guarantee=guarantee, neighbouring=self.neighbouring, epsilon=epsilon, delta=delta,
            k=k, n=public_n, d=data.d, norm_bound=data.norm_bound, ledger=tuple(out.ledger), diagnostics=diagnostics,
            options=opts, counterexample_delta=counterexample, preprocessing=preprocessing,
        )
        if out.bottom_reason is not None:
            return Release(subspace=None, status=ReleaseStatus.BOTTOM, reason=out.bottom_reason, **common)

        covariance = out.covariance
        covariance_post = top = None
        subspace = out.subspace
        if covariance is not None:
            if lazy_post:
                if subspace is None:
                    top, subspace = top_k_eigenpairs(covariance, k)
            elif subspace is None:  # one shared eigendecomposition for both (identical to the two separate calls)
                covariance_post, subspace = clip_spectrum_and_top_k(covariance, k, upper=upper)
            else:
                covariance_post = clip_spectrum(covariance, upper=upper)
        if subspace is None:  # pragma: no cover - programming error in a subclass
            raise InvalidMechanismError(f"{mech.id} returned neither a subspace nor a covariance")
        subspace = np.asarray(subspace, dtype=float)[:, :k]
        if not _is_orthonormal(subspace, k):
            subspace, top = orthonormalize(subspace), None
        release = Release(subspace=subspace, covariance=covariance, covariance_post=covariance_post,
                          eigenvalues=out.eigenvalues, **common)
        if lazy_post and covariance is not None:
            release._defer_post(upper, top)
        return release
