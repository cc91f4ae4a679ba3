"""The determinism probe: identical seeds on indistinguishable neighbours must give identical outputs.

Some mechanisms make an exact private *selection* (GAP-MAX picks a subspace; ⊥ or not) and then release a
representation of it (a basis). For neighbours built so that the selection is the same on both (``in_plane``: every
point lies in one plane, D′ moves one point inside that plane), a release that also depends on *which* rows were
there leaks them, with δ = 1, even though the selection itself is private. Running the mechanism on D and on D′
with the **same** random stream, R times, exposes this without any statistics: wherever both give the same selection
(the ``invariant``, by default the projector V̂V̂ᵀ), every released field must agree up to float rounding.

This is a targeted test, not a general one: under the same seed two neighbours legitimately give different outputs
whenever the private part itself differs (noisy covariances do); the probe then reports "not applicable".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core._validation import check_epsilon, check_int, check_positive, check_time_limit
from ..core.noise import RandomState
from ..core.privacy import jsonable
from ..core.timing import Deadline
from ..exceptions import InvalidParameterError, MechanismTimeout
from ..mechanisms.base import Mechanism, MechanismOutput
from .neighbours import NeighbourPair
from .runner import resolve_delta, resolve_mechanism, resolve_pair

__all__ = ["PROBE_FIELDS", "PROBE_SEEDS", "PROBE_TOLERANCE", "ProbeResult", "determinism_probe"]

#: Seeds tried by default (each gives one release on D and one on D′).
PROBE_SEEDS = 20
#: Two values agree when max|a − b| ≤ tolerance·max(|a|, |b|) (float rounding).
PROBE_TOLERANCE = 1e-8
#: Released fields compared, with the words used in reports.
PROBE_FIELDS: dict[str, str] = {"subspace": "basis", "covariance": "raw covariance",
                                "covariance_post": "post-processed covariance", "eigenvalues": "released eigenvalues"}
INVARIANTS = ("projector",)

ProgressCallback = Callable[[int, int], None]


def _relative_difference(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """max|a − b| / max(|a|, |b|); None when a field is missing on either side or the shapes differ."""
    if a is None or b is None:
        return None
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    diff = float(np.max(np.abs(a - b), initial=0.0))
    return 0.0 if diff == 0.0 else diff / max(scale, 1e-300)


@dataclass
class ProbeResult:
    """The outcome of :func:`determinism_probe`; ``verdict`` is "leak", "passed" or "not applicable"."""

    mechanism: str
    mechanism_name: str
    claimed_epsilon: float
    delta: float
    neighbours: dict
    neighbouring: str
    k: int
    seeds: int
    invariant: str
    tolerance: float
    verdict: str
    compared: int  # seeds where both releases are outputs (not ⊥)
    invariant_equal: int  # … and the invariant agrees
    status_differs: int  # seeds where exactly one side is ⊥
    differences: dict = field(default_factory=dict)  # field → largest relative difference (invariant equal)
    leaking_fields: list = field(default_factory=list)
    first_leaking_seed: int | None = None
    reason: str = ""
    runtime_s: float = 0.0
    seed: int | None = None

    @property
    def leak(self) -> bool:
        return self.verdict == "leak"

    def summary(self) -> str:
        """A few plain-language lines (CLI output, dashboard verdict)."""
        head = (f"Determinism probe of {self.mechanism} ({self.mechanism_name}) at ε = {self.claimed_epsilon:g}"
                + (f", δ = {self.delta:g}" if self.delta > 0 else "")
                + f"; neighbours {self.neighbours['name']} ({self.neighbouring.replace('_', '/')}); "
                f"{self.seeds} seeds, each run on D and on D′.")
        word = {"leak": "LEAK", "passed": "PASSED", "not applicable": "NOT APPLICABLE"}[self.verdict]
        lines = [head, f"{word}: {self.reason}",
                 f"Both outputs (not ⊥) for {self.compared} seeds; same {self.invariant} for {self.invariant_equal}; "
                 f"⊥ on one side only for {self.status_differs}. Run time {self.runtime_s:.2f} s."]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return jsonable({
            "kind": "determinism_probe", "mechanism": self.mechanism, "mechanism_name": self.mechanism_name,
            "claimed_epsilon": self.claimed_epsilon, "delta": self.delta, "neighbours": self.neighbours,
            "neighbouring": self.neighbouring, "k": self.k, "seeds": self.seeds, "invariant": self.invariant,
            "tolerance": self.tolerance, "verdict": self.verdict, "reason": self.reason, "compared": self.compared,
            "invariant_equal": self.invariant_equal, "status_differs": self.status_differs,
            "differences": self.differences, "leaking_fields": self.leaking_fields,
            "first_leaking_seed": self.first_leaking_seed, "runtime_s": self.runtime_s, "seed": self.seed,
        })


def _root_seed_sequence(seed: RandomState) -> np.random.SeedSequence:
    """The probe's root stream: a SeedSequence as given, a fresh one for None, else one seeded by the int."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        return np.random.SeedSequence()
    return np.random.SeedSequence(check_int(seed, "seed (an int, a SeedSequence or None)", 0))


@dataclass
class _ProbeTally:
    """What the seeds showed so far: counts, the largest difference per field, the first leaking seed."""

    done: int = 0
    compared: int = 0
    invariant_equal: int = 0
    status_differs: int = 0
    differences: dict[str, float] = field(default_factory=dict)
    first_leak: int | None = None

    def add(self, r: int, pair_of_releases: list[MechanismOutput], tolerance: float) -> None:
        """Record seed ``r``'s two releases (on D and on D′)."""
        first, second = pair_of_releases
        if first.is_bottom != second.is_bottom:
            self.status_differs += 1
            return
        if first.is_bottom:
            return
        self.compared += 1
        inv = _relative_difference(first.projector, second.projector)
        if inv is None or inv > tolerance:
            return
        self.invariant_equal += 1
        for name in PROBE_FIELDS:
            diff = _relative_difference(getattr(first, name), getattr(second, name))
            if diff is None:
                continue
            self.differences[name] = max(self.differences.get(name, 0.0), diff)
            if diff > tolerance and self.first_leak is None:
                self.first_leak = r


def _run_probe_seeds(mech: Mechanism, pair: NeighbourPair, children: list[np.random.SeedSequence], *, k: int,
                     epsilon: float, delta: float, opts: dict, tolerance: float, deadline: Deadline,
                     progress: ProgressCallback | None) -> _ProbeTally:
    """Release on D and on D′ with each child stream until done, out of time, or a release times out."""
    tally = _ProbeTally()
    for r, child in enumerate(children):
        if deadline.expired:
            break
        limit = None if deadline.seconds is None else max(deadline.remaining, 1e-3)
        try:
            rel = [mech.release(data, k, epsilon, delta, neighbouring=pair.neighbouring,
                                random_state=np.random.default_rng(child), time_limit=limit, allow_invalid=True,
                                **opts) for data in (pair.D0, pair.D1)]
        except MechanismTimeout:
            break
        tally.done += 1
        if progress is not None:
            progress(tally.done, len(children))
        tally.add(r, rel, tolerance)
    return tally


def _probe_verdict(tally: _ProbeTally, leaking: list[str], *, k: int, d: int, invariant: str,
                   tolerance: float) -> tuple[str, str]:
    """The verdict ("leak", "passed" or "not applicable") and its plain-language reason."""
    inv_words = "subspace (projector V̂V̂ᵀ)" if invariant == "projector" else invariant
    if k == d and invariant == "projector":
        return "not applicable", (f"k = d = {k}: every release spans the whole space, so equal projectors say "
                                  "nothing; use k < d.")
    if leaking:
        differences = tally.differences
        worst = max(leaking, key=lambda f: differences[f])
        return "leak", ("identical seeds, indistinguishable neighbours, different outputs: with the same random "
                        f"stream D and D′ gave the same {inv_words} but a different {PROBE_FIELDS[worst]} (largest "
                        f"relative difference {differences[worst]:.3g}, first at seed {tally.first_leak}). So the "
                        f"{', '.join(PROBE_FIELDS[f] for f in leaking)} depend{'s' if len(leaking) == 1 else ''} on "
                        "the rows beyond the private selection: a leak with δ = 1.")
    if tally.compared == 0:
        return "not applicable", "no seed gave an output (not ⊥) on both datasets, so nothing could be compared."
    if tally.invariant_equal == 0:
        return "not applicable", (f"D and D′ never gave the same {inv_words} under the same seed, so they are not "
                                  "indistinguishable for this mechanism (its private output differs between them, "
                                  "as noisy outputs do).")
    return "passed", (f"for all {tally.invariant_equal} seeds where D and D′ gave the same {inv_words}, every "
                      f"released field agreed within a relative {tolerance:g}: nothing beyond the selection depends "
                      "on the rows.")


def determinism_probe(
    mechanism_id: str | Mechanism,
    epsilon: float,
    delta: float | None = None,
    *,
    neighbours: str | tuple = "in_plane",
    neighbouring: str | None = None,
    k: int = 2,
    seeds: int = PROBE_SEEDS,
    d: int = 3,
    n: int = 70,
    invariant: str | None = None,
    tolerance: float = PROBE_TOLERANCE,
    seed: RandomState = None,
    time_limit: float | None = None,
    progress: ProgressCallback | None = None,
    **options: Any,
) -> ProbeResult:
    """Run ``mechanism_id`` on D and D′ with the same random stream for each of ``seeds`` seeds and compare.

    Seed r gives both releases a Generator on the same child stream of ``SeedSequence(seed)``. Where both are
    outputs and the ``invariant`` (default: the pair's, else "projector") agrees, every released field (basis,
    covariances, eigenvalues) must agree within ``tolerance`` (relative); a field that differs is reported as a leak:
    "identical seeds, indistinguishable neighbours, different outputs". When the invariant never agrees the pair is
    not indistinguishable for this mechanism and the verdict is "not applicable" (as for k = d, where every
    projector is the identity). Extra keyword arguments are mechanism options.
    """
    started = time.perf_counter()
    mech = resolve_mechanism(mechanism_id)
    epsilon = check_epsilon(epsilon)
    delta = resolve_delta(delta, mech)
    pair = resolve_pair(mech, neighbours, neighbouring, d, n)
    opts = mech.validate_options(options)
    k = check_int(k, "k (number of components)", 1, pair.D0.d)
    seeds = check_int(seeds, "seeds", 1, 100_000)
    tolerance = check_positive(tolerance, "tolerance")
    invariant = invariant or pair.invariant or "projector"
    if invariant not in INVARIANTS:
        raise InvalidParameterError(f"invariant must be one of {', '.join(map(repr, INVARIANTS))}; got {invariant!r}.")
    if progress is not None and not callable(progress):
        raise InvalidParameterError("progress must be a callable progress(done, total) or None.")
    deadline = Deadline(check_time_limit(time_limit))
    children = _root_seed_sequence(seed).spawn(seeds)

    tally = _run_probe_seeds(mech, pair, children, k=k, epsilon=epsilon, delta=delta, opts=opts,
                             tolerance=tolerance, deadline=deadline, progress=progress)
    leaking = [name for name, diff in tally.differences.items() if diff > tolerance]
    if tally.done == 0:
        raise MechanismTimeout("the probe stopped at the time limit before the first seed finished; raise it.")
    verdict, reason = _probe_verdict(tally, leaking, k=k, d=pair.D0.d, invariant=invariant, tolerance=tolerance)
    return ProbeResult(
        mechanism=mech.id, mechanism_name=mech.name, claimed_epsilon=epsilon, delta=delta,
        neighbours=pair.as_dict(), neighbouring=pair.neighbouring, k=k, seeds=tally.done, invariant=invariant,
        tolerance=tolerance, verdict=verdict, compared=tally.compared, invariant_equal=tally.invariant_equal,
        status_differs=tally.status_differs, differences=tally.differences, leaking_fields=leaking,
        first_leaking_seed=tally.first_leak, reason=reason, runtime_s=time.perf_counter() - started,
        seed=int(seed) if isinstance(seed, (int, np.integer)) else None,
    )
