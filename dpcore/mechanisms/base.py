"""Mechanism base class, parameter declarations and the release record.

A mechanism is a stateless object: ``release(data, k, epsilon, delta, ...)`` validates every argument here,
in one place, then calls the subclass's ``_release``, which returns a :class:`MechanismOutput`. The base
class assembles the :class:`Release` (guarantee, ledger, post-processed covariance, subspace).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_k,
    check_neighbouring,
    check_time_limit,
)
from ..data.prepared import PreparedData
from ..exceptions import InvalidMechanismError, InvalidParameterError
from ..linalg import clip_spectrum, clip_spectrum_and_top_k, orthonormalize
from ..noise import RandomState, make_rng
from ..privacy import GUARANTEE_LABELS, GUARANTEES, LedgerEntry, ledger_total
from ..timing import Deadline

OUTPUT_KINDS = ("covariance", "subspace")


@dataclass(frozen=True)
class Param:
    """A mechanism-specific option (shown as a widget by the dashboard, a flag by the CLI)."""

    name: str
    default: Any
    description: str
    kind: str = "float"  # "float" | "int" | "bool" | "choice"
    choices: tuple = ()
    low: float | None = None
    high: float | None = None

    def validate(self, value: Any) -> Any:
        label = f"option {self.name!r}"
        if self.kind == "choice":
            return check_choice(value, label, self.choices)
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
                return value.lower() in ("true", "1", "yes")
            raise InvalidParameterError(f"{label} must be true or false, got {value!r}.")
        if self.kind == "int":
            if isinstance(value, str):
                try:
                    value = int(value)
                except ValueError:
                    raise InvalidParameterError(f"{label} must be a whole number, got {value!r}.") from None
            return check_int(value, label, None if self.low is None else math.ceil(self.low),
                             None if self.high is None else math.floor(self.high))
        if self.kind == "float":
            try:
                v = float(value)
            except (TypeError, ValueError):
                raise InvalidParameterError(f"{label} must be a number, got {value!r}.") from None
            if isinstance(value, bool) or not math.isfinite(v):
                raise InvalidParameterError(f"{label} must be a finite number, got {value!r}.")
            if self.low is not None and v < self.low:
                raise InvalidParameterError(f"{label} must be >= {self.low:g}, got {v:g}.")
            if self.high is not None and v > self.high:
                raise InvalidParameterError(f"{label} must be <= {self.high:g}, got {v:g}.")
            return v
        raise AssertionError(f"unknown Param kind {self.kind!r}")  # pragma: no cover

    def as_dict(self) -> dict:
        return {"name": self.name, "default": self.default, "description": self.description,
                "kind": self.kind, "choices": list(self.choices), "low": self.low, "high": self.high}


@dataclass
class MechanismOutput:
    """What a mechanism's ``_release`` returns; the base class turns it into a :class:`Release`.

    Give ``covariance`` (raw release, unit-norm scale) and/or ``subspace`` (d×k). When only a covariance is
    given, the subspace is its top-k eigenvectors. ``bottom_reason`` makes the release a ⊥ (no output).
    """

    ledger: list[LedgerEntry]
    subspace: np.ndarray | None = None
    covariance: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)
    bottom_reason: str | None = None


@dataclass
class Release:
    """One output of a mechanism, with its privacy metadata (spec Appendix B).

    Matrices are on the unit scale (rows ‖x‖ ≤ 1); multiply covariances by ``norm_bound**2`` for the
    preprocessed feature units (:meth:`scaled_covariance`). ``diagnostics`` are NOT private.
    """

    mechanism: str
    guarantee: str
    neighbouring: str
    epsilon: float
    delta: float
    k: int
    n: int
    d: int
    norm_bound: float
    ledger: tuple[LedgerEntry, ...]
    subspace: np.ndarray | None
    covariance: np.ndarray | None = None
    covariance_post: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)
    status: str = "ok"  # "ok" | "bottom"
    reason: str = ""
    options: dict = field(default_factory=dict)
    counterexample_delta: float | None = None

    @property
    def is_bottom(self) -> bool:
        return self.status == "bottom"

    @property
    def projector(self) -> np.ndarray | None:
        """Π̂ = V̂V̂ᵀ (None for ⊥)."""
        return None if self.subspace is None else self.subspace @ self.subspace.T

    @property
    def budget_spent(self) -> tuple[float, float]:
        return ledger_total(self.ledger)

    def scaled_covariance(self, post_processed: bool = True) -> np.ndarray | None:
        """The covariance estimate in preprocessed feature units (B²·Ĉ)."""
        C = self.covariance_post if post_processed else self.covariance
        return None if C is None else C * self.norm_bound**2


class Mechanism(ABC):
    """Base class of all mechanisms. Subclasses set the class attributes and implement ``_release``."""

    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one sentence
    description: ClassVar[str] = ""  # a paragraph in plain words (Learn page)
    reference: ClassVar[str]  # paper, algorithm and equation
    formula: ClassVar[str] = ""  # LaTeX
    cost: ClassVar[str] = ""
    guarantee: ClassVar[str]
    output: ClassVar[str]  # "covariance" | "subspace"
    uses_delta: ClassVar[bool] = False
    strict_k: ClassVar[bool] = False  # True when k must be < d
    needs_rows: ClassVar[bool] = False  # True when the mechanism reads X, not only C
    params: ClassVar[tuple[Param, ...]] = ()
    neighbourings: ClassVar[tuple[str, ...]] = ("replace", "add_remove")
    order: ClassVar[int] = 100  # display order within its guarantee group

    # --- metadata --------------------------------------------------------------------------------
    @property
    def invalid(self) -> bool:
        return self.guarantee == "claimed-invalid"

    def guarantee_for(self, k: int, options: dict) -> str:
        """The guarantee of a release with these settings (e.g. PPCA is exact for k = 1)."""
        return self.guarantee

    def counterexample_delta(self, epsilon: float, options: dict | None = None) -> float | None:
        """For claimed-invalid mechanisms: the δ below which the claim provably fails at this ε."""
        return None

    def default_options(self) -> dict:
        return {p.name: p.default for p in self.params}

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
        }

    # --- the release -----------------------------------------------------------------------------
    def release(
        self,
        data: PreparedData | np.ndarray,
        k: int,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbouring: str = "replace",
        random_state: RandomState = None,
        time_limit: float | None = None,
        allow_invalid: bool = False,
        **options: Any,
    ) -> Release:
        """Run the mechanism once on ``data`` (rows with ‖x‖ ≤ 1) and return a :class:`Release`."""
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
        neighbouring = check_neighbouring(neighbouring)
        if neighbouring not in self.neighbourings:
            raise InvalidParameterError(
                f"{self.id} supports neighbouring {', '.join(self.neighbourings)}; got {neighbouring!r}."
            )
        deadline = Deadline(check_time_limit(time_limit))
        opts = self.validate_options(options)
        rng = make_rng(random_state)

        out = self._release(data, k, epsilon, delta, neighbouring=neighbouring, rng=rng, deadline=deadline,
                            **opts)
        guarantee = self.guarantee_for(k, opts)
        assert guarantee in GUARANTEES
        spent_eps, spent_delta = ledger_total(out.ledger)
        if guarantee in ("pure", "approx", "heuristic-mcmc"):
            # Internal consistency: a mechanism never spends more than it was given.
            assert spent_eps <= epsilon * (1 + 1e-9) + 1e-12, (self.id, spent_eps, epsilon)
            assert spent_delta <= delta * (1 + 1e-9) + 1e-15, (self.id, spent_delta, delta)

        if out.bottom_reason is not None:
            return Release(
                mechanism=self.id, guarantee=guarantee, neighbouring=neighbouring, epsilon=epsilon,
                delta=delta, k=k, n=data.n, d=data.d, norm_bound=data.norm_bound, ledger=tuple(out.ledger),
                subspace=None, diagnostics=out.diagnostics, status="bottom", reason=out.bottom_reason,
                options=opts, counterexample_delta=self.counterexample_delta(epsilon, opts),
            )

        covariance = out.covariance
        covariance_post = None
        subspace = out.subspace
        if covariance is not None:
            if subspace is None:  # one shared eigendecomposition for both (identical to the two separate calls)
                covariance_post, subspace = clip_spectrum_and_top_k(covariance, k, upper=float(data.n))
            else:
                covariance_post = clip_spectrum(covariance, upper=float(data.n))
        if subspace is None:  # pragma: no cover - programming error in a subclass
            raise AssertionError(f"{self.id} returned neither a subspace nor a covariance")
        subspace = np.asarray(subspace, dtype=float)[:, :k]
        if not np.allclose(subspace.T @ subspace, np.eye(k), atol=1e-8):
            subspace = orthonormalize(subspace)
        return Release(
            mechanism=self.id, guarantee=guarantee, neighbouring=neighbouring, epsilon=epsilon, delta=delta,
            k=k, n=data.n, d=data.d, norm_bound=data.norm_bound, ledger=tuple(out.ledger), subspace=subspace,
            covariance=covariance, covariance_post=covariance_post, eigenvalues=out.eigenvalues,
            diagnostics=out.diagnostics, options=opts,
            counterexample_delta=self.counterexample_delta(epsilon, opts),
        )

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
