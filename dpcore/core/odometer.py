"""A session odometer: every release computed on uploaded (private) data is counted, and the total shown two ways.

Each recorded step is (ε, δ, neighbouring relation, what). The totals are

* **basic composition**: (Σε, Σδ) — always valid;
* **zCDP composition**: Σρ, converted to (ε, δ)-DP at a chosen δ by the tight conversion of Canonne, Kamath &
  Steinke (2020, Prop. 12; :func:`~dpcore.core.privacy.zcdp_delta`, inverted in ε by :func:`zcdp_epsilon_tight`),
  never larger than Bun & Steinke's ε = ρ + 2√(ρ ln(1/δ)) (2016, Prop. 1.3) — only when every step has an exact ρ:
  a release whose mechanism declares it (:meth:`Mechanism.zcdp_rho <dpcore.mechanisms.base.Mechanism.zcdp_rho>`:
  Gaussian steps with known noise, ρ = Δ²/(2σ²), e.g. Analyze Gauss; or calibrated through zCDP itself, e.g. PPM,
  ρ = ρ(ε, δ) of :func:`~dpcore.core.privacy.zcdp_rho`), a ledger step that carries its ρ, DP centring (an analytic
  Gaussian mean), or a pure ε-DP step (ρ = ε²/2, Bun & Steinke Prop. 1.4). Any other (ε, δ) step has no exact zCDP
  conversion: the zCDP column then says "basic only" and why, rather than a number.

Every :class:`Odometer` asks the mechanisms for their declared ρ (:func:`declared_rho`, which resolves
:func:`dpcore.mechanisms.release_rho` when first called: the mechanisms sit above this layer and import it, so it
never imports them); no mechanism id is special-cased here.

The odometer counts; it does not refund. :meth:`Odometer.reset` forgets the count — the releases made before it
still cost what they cost (:data:`RESET_NOTE`).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring, ReleaseStatus
from ._validation import check_neighbouring
from .privacy import LedgerEntry, gaussian_rho, zcdp_epsilon_tight

#: The statuses of a release that ran on the data and is counted: its output, ⊥, or the fact that it was capped.
COUNTED_STATUSES = (ReleaseStatus.OK, ReleaseStatus.BOTTOM, ReleaseStatus.TIMEOUT)

RESET_NOTE = ("resetting forgets the count; nothing is refunded: every release made so far still cost what it cost, "
              "and an adversary who saw those releases still knows what they revealed.")

#: How a step's ρ was obtained (None: no exact zCDP conversion).
RHO_GAUSSIAN = "Gaussian noise: ρ = Δ²/(2σ²)"
RHO_PURE = "pure ε-DP: ρ = ε²/2"
RHO_DECLARED = "declared by the mechanism (its Gaussian or zCDP-calibrated steps)"

#: Mechanisms whose output does not depend on the data (0-DP): a sweep's reference line, not counted.
DATA_INDEPENDENT = frozenset({"random"})
#: Ledger steps known to be an analytic Gaussian mechanism (DP centring in preprocessing).
_GAUSSIAN_STEPS = {"DP mean for centring": "analytic"}


@dataclass(frozen=True)
class OdometerEntry:
    """One counted step: its (ε, δ), the neighbouring relation, what it was, and its zCDP ρ when exact."""

    epsilon: float
    delta: float
    relation: str
    what: str
    rho: float | None = None
    rho_source: str = ""
    private: bool = True

    def as_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "relation": self.relation, "what": self.what,
                "rho": self.rho, "rho_source": self.rho_source, "private": self.private}


@dataclass(frozen=True)
class OdometerTotals:
    """Basic and zCDP composition side by side. ``zcdp_epsilon`` is at ``zcdp_delta``; both None when some step has
    no exact ρ (``zcdp_note`` says which)."""

    count: int
    basic_epsilon: float
    basic_delta: float
    zcdp_rho: float | None
    zcdp_epsilon: float | None
    zcdp_delta: float | None
    zcdp_note: str
    all_private: bool
    relations: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def declared_rho(mechanism: str, epsilon: float, delta: float, *, n: int | None = None, d: int | None = None,
                 neighbouring: str | None = None, options: dict | None = None) -> float | None:
    """A release's exact ρ as its mechanism declares it (:func:`dpcore.mechanisms.release_rho`), or None. The
    mechanisms package is looked up when this is called, not imported with this module (it imports this layer)."""
    release_rho = importlib.import_module("..mechanisms", __package__).release_rho
    return release_rho(mechanism, epsilon, delta, n=n, d=d, neighbouring=neighbouring, options=options)


def ledger_entry_rho(entry: LedgerEntry, *, guarantee: str | None = None, preprocessing: bool = False,
                     declared: float | None = None) -> tuple[float | None, str]:
    """(ρ, how) of one ledger step, or (None, "") when it has no exact zCDP conversion. ``declared``: the
    mechanism's own ρ for the whole release (:func:`declared_rho`); the only source of a mechanism's Gaussian or
    zCDP-calibrated ρ."""
    if entry.epsilon <= 0 and entry.delta <= 0:
        return 0.0, "free"
    if declared is not None:  # the mechanism's own exact ρ for the whole release (Mechanism.zcdp_rho)
        return float(declared), RHO_DECLARED
    if entry.rho is not None and entry.private:
        return float(entry.rho), RHO_DECLARED
    if preprocessing:
        calibration = _GAUSSIAN_STEPS.get(entry.step)
        if calibration is not None and entry.delta > 0:
            return gaussian_rho(entry.epsilon, entry.delta, calibration), RHO_GAUSSIAN
        return None, ""
    if guarantee == Guarantee.PURE and entry.delta == 0:
        return entry.epsilon ** 2 / 2.0, RHO_PURE
    return None, ""


@dataclass
class Odometer:
    """Counts the privacy cost of every release on one upload in a session (see the module docstring)."""

    entries: list[OdometerEntry] = field(default_factory=list)
    #: Preprocessing already counted (keys given to :meth:`record_release` / :meth:`record_sweep`): a DP mean is
    #: released once per preprocessing run, however many releases then use the centred data.
    counted_preprocessing: set = field(default_factory=set)
    #: ``(mechanism, ε, δ, *, n, d, neighbouring, options) → ρ | None``: a release's exact ρ from its public settings
    #: — by default the mechanisms' own (:func:`declared_rho`); None: none (only ledger, centring and pure ρ).
    rho_of: Callable[..., float | None] | None = declared_rho

    def _declared(self, mechanism: str, epsilon: float, delta: float, *, n=None, d=None, neighbouring=None,
                  options: dict | None = None) -> float | None:
        if self.rho_of is None:
            return None
        n = None if n is None or (isinstance(n, float) and math.isnan(n)) else int(n)
        d = None if d is None or (isinstance(d, float) and math.isnan(d)) else int(d)
        return self.rho_of(mechanism, epsilon, delta, n=n, d=d, neighbouring=neighbouring, options=options)

    def record(self, epsilon: float, delta: float, relation: str, what: str, *, rho: float | None = None,
               rho_source: str = "", private: bool = True) -> OdometerEntry:
        """Count one step. Give ``rho`` only when it is exact for this step (see the module docstring)."""
        epsilon, delta = float(epsilon), float(delta)
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise InvalidParameterError(f"an odometer step needs ε ≥ 0, got {epsilon!r}.")
        if not (0.0 <= delta < 1.0):
            raise InvalidParameterError(f"an odometer step needs 0 ≤ δ < 1, got {delta!r}.")
        if rho is not None and not (math.isfinite(rho) and rho >= 0):
            raise InvalidParameterError(f"ρ must be finite and ≥ 0, got {rho!r}.")
        entry = OdometerEntry(epsilon, delta, check_neighbouring(relation), str(what), rho, rho_source,
                              bool(private))
        self.entries.append(entry)
        return entry

    def record_preprocessing(self, ledger, relation: str, what: str, key=None, *,
                             private: bool = True) -> list[OdometerEntry]:
        """Count the preprocessing steps that spent budget (DP centring) — once per ``key`` (e.g. the prepared
        data's fingerprint): the DP mean is one release, shared by every release on that data. ``key=None``
        counts them every time (conservative)."""
        if key is not None and key in self.counted_preprocessing:
            return []
        out = []
        for entry in ledger:
            if entry.epsilon > 0 or entry.delta > 0:
                rho, how = ledger_entry_rho(entry, preprocessing=True)
                out.append(self.record(entry.epsilon, entry.delta, relation, f"{what}: {entry.step}", rho=rho,
                                       rho_source=how, private=private))
        if key is not None:
            self.counted_preprocessing.add(key)
        return out

    def record_ledger(self, ledger, relation: str, what: str, *, private: bool = True) -> list[OdometerEntry]:
        """Count the budget-spending steps of a ledger released together (e.g. a picture's scree and histogram). A
        step with δ = 0 is pure ε-DP (ρ = ε²/2); any other has no exact ρ here (the zCDP total says "basic only")."""
        out = []
        for entry in ledger:
            if entry.epsilon > 0 or entry.delta > 0:
                rho, how = ledger_entry_rho(entry, guarantee=Guarantee.PURE if entry.delta == 0 else None)
                out.append(self.record(entry.epsilon, entry.delta, relation, f"{what}: {entry.step}", rho=rho,
                                       rho_source=how, private=private and entry.private))
        return out

    def record_runs(self, mechanism: str, guarantee: str, epsilon: float, delta: float, relation: str, what: str,
                    count: int, *, private: bool = True, options: dict | None = None) -> list[OdometerEntry]:
        """Count ``count`` releases of ``mechanism`` at (ε, δ) made inside one computation that keeps no release
        objects (a planner's simulated releases, an advisor's trials); ρ as in :func:`ledger_entry_rho`."""
        rho, how = ledger_entry_rho(LedgerEntry(mechanism, epsilon, delta), guarantee=guarantee,
                                    declared=self._declared(mechanism, epsilon, delta, options=options,
                                                            neighbouring=relation))
        return [self.record(epsilon, delta, relation, f"{what}: {mechanism}", rho=rho, rho_source=how,
                            private=private) for _ in range(int(count))]

    def record_release(self, release, what: str, preprocessing_key=None) -> list[OdometerEntry]:
        """Count a :class:`~dpcore.mechanisms.base.Release`: its preprocessing steps that spent budget (once per
        ``preprocessing_key``, see :meth:`record_preprocessing`) and its mechanism's steps. A release whose
        guarantee is none or claimed-invalid, or with a non-private step, is counted with ``private=False``."""
        private = bool(release.is_private)
        out = self.record_preprocessing(release.preprocessing, release.neighbouring, what, preprocessing_key,
                                        private=private)
        eps_total, delta_total = release.budget_spent
        declared = self._declared(release.mechanism, eps_total, delta_total, n=release.n, d=release.d,
                                  neighbouring=release.neighbouring, options=release.options)
        # The steps that spent budget; a release none of whose steps did is still counted once (its first step).
        # A free step is never counted beside spending ones: it would take the declared ρ (SeparateCov's and
        # AdaptiveCov's ledgers open with free zCDP shares and charge ρ in their last row).
        steps = [e for e in release.ledger if e.epsilon > 0 or e.delta > 0] or ([] if out else release.ledger[:1])
        for entry in steps:
            rho, how = ledger_entry_rho(entry, guarantee=release.guarantee, declared=declared)
            declared = None if declared is None else 0.0  # the release's ρ goes with its first step
            out.append(self.record(entry.epsilon, entry.delta, release.neighbouring,
                                   f"{what}: {release.mechanism}: {entry.step}", rho=rho, rho_source=how,
                                   private=private))
        return out

    def record_sweep(self, frame, what: str, *, preprocessing=(), preprocessing_key=None,
                     mechanism_options: dict | None = None) -> list[OdometerEntry]:
        """Count every release of a sweep frame (:func:`~dpcore.evaluation.sweep.run_sweep`): each row whose
        mechanism ran on the data (status ok, ⊥ or capped: when a release stops at the time cap depends on the data,
        and the page shows that it did, so a capped release is counted too; an error published nothing) is one
        release at its (ε, δ), plus
        the data's budget-spending preprocessing once. A mechanism's ρ is exact as in :func:`ledger_entry_rho`;
        for a pure mechanism ε²/2 bounds the ρ of its steps, whose ε add up to the row's ε."""
        out = []
        rows = frame[frame["status"].isin(COUNTED_STATUSES)]
        if len(rows):
            private = bool(rows["end_to_end_private"].all()) if "end_to_end_private" in rows else True
            out += self.record_preprocessing(preprocessing, str(rows["neighbouring"].iloc[0]), what,
                                             preprocessing_key, private=private)
        for row in rows.itertuples(index=False):
            if row.mechanism in DATA_INDEPENDENT:
                continue
            if row.guarantee == Guarantee.NONE:  # non-private reference (exact PCA): counted, flagged, no ε
                out.append(self.record(0.0, 0.0, row.neighbouring, f"{what}: {row.mechanism} (NOT private)",
                                       rho=0.0, rho_source="not private", private=False))
                continue
            step = LedgerEntry(str(row.mechanism), float(row.epsilon), float(row.delta))
            options = (mechanism_options or {}).get(row.mechanism)
            rho, how = ledger_entry_rho(step, guarantee=row.guarantee,
                                        declared=self._declared(str(row.mechanism), float(row.epsilon),
                                                                float(row.delta),
                                                                # n is public only under replace-one
                                                                n=getattr(row, "n", None)
                                                                if row.neighbouring == Neighbouring.REPLACE else None,
                                                                d=getattr(row, "d", None),
                                                                neighbouring=row.neighbouring, options=options))
            private = bool(getattr(row, "end_to_end_private", True))
            out.append(self.record(row.epsilon, row.delta, row.neighbouring, f"{what}: {row.mechanism}", rho=rho,
                                   rho_source=how, private=private))
        return out

    def totals(self, zcdp_delta: float | None = None) -> OdometerTotals:
        """Basic (Σε, Σδ) and zCDP (Σρ → ε at ``zcdp_delta``; default: the basic Σδ, or 1e-6 when that is 0)."""
        eps = sum(e.epsilon for e in self.entries)
        delta = sum(e.delta for e in self.entries)
        relations = tuple(dict.fromkeys(e.relation for e in self.entries))
        notes = []
        if len(relations) > 1:
            notes.append("the releases were made under different neighbouring relations; the sums add numbers that "
                         "hold under different relations (a replace-one step is two add/remove steps).")
        if not all(e.private for e in self.entries):
            notes.append("some counted releases are not private (a non-private step or no valid guarantee): no total "
                         "bounds what they reveal.")
        missing = list(dict.fromkeys(e.what for e in self.entries if e.rho is None))  # each kind of step once
        if missing:
            shown = "; ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
            rho = z_eps = z_delta = None
            z_note = f"basic only: no exact zCDP conversion for {shown}"
        else:
            rho = sum(e.rho for e in self.entries)  # type: ignore[misc]
            z_delta = zcdp_delta if zcdp_delta is not None else (delta if delta > 0 else 1e-6)
            z_eps = zcdp_epsilon_tight(rho, z_delta) if self.entries else 0.0
            z_note = f"Σρ = {rho:.4g}-zCDP ⇒ (ε = {z_eps:.4g}, δ = {z_delta:g})-DP"
        return OdometerTotals(len(self.entries), eps, delta, rho, z_eps, z_delta, z_note,
                              all(e.private for e in self.entries), relations, tuple(notes))

    def reset(self) -> str:
        """Forget the count; returns :data:`RESET_NOTE` (what resetting means: nothing is refunded)."""
        self.entries.clear()
        return RESET_NOTE
