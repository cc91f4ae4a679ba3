"""Black-box privacy audits: empirical lower bounds on ε and δ, structural witnesses, a determinism probe.

For a pair of neighbouring datasets D, D′ and an event S on the output, every (ε, δ)-DP mechanism satisfies
P[M(D) ∈ S] ≤ e^ε·P[M(D′) ∈ S] + δ. :func:`run_audit` runs many releases on both, picks an event on one half
(a threshold, an exact value, the support event, a classifier score; :data:`STATISTICS`) on any released field
(raw or post-processed covariance, eigenvalues, basis, ⊥; :data:`FIELDS`) and counts it on the other half with
Clopper–Pearson bounds. It audits one neighbouring relation per run (``neighbouring=``);
:func:`audit_all_relations` audits each relation the mechanism declares. Verdicts are "violated", "consistent" (no
violation found, by a test that flags a violation *of the claim* — noise on C whose privacy loss on each pair is 2×
the claimed ε, calibrated from the claim, not from the audited code; not a proof of privacy) or "inconclusive" (the
test could not have refuted the claim; it says which violation it does detect). Refusals are outputs from the first
trial on. :func:`determinism_probe` compares releases on indistinguishable neighbours under identical seeds.
:func:`file_pair` audits the whole pipeline from two neighbouring files and a public schema;
:func:`callable_mechanism` audits anyone's ``module:function``.

Modules: :mod:`.bounds` (Clopper–Pearson, ε and δ bounds), :mod:`.neighbours` (constructions),
:mod:`.events` (the event registry), :mod:`.search` (event choice), :mod:`.runner` (the audit),
:mod:`.mutants` (the claim's reference violations), :mod:`.files` (pairs of files), :mod:`.callables`,
:mod:`.probe` (the determinism probe), :mod:`.result` (:class:`AuditResult`). The Bingham sampler conformance test
lives beside the samplers (:mod:`dpcore.samplers.conformance`) and is re-exported here.
"""

from __future__ import annotations

from ..samplers.conformance import (
    CONFORMANCE_ALPHA,
    CONFORMANCE_CONCENTRATION,
    CONFORMANCE_DRAWS,
    CONFORMANCE_EIGENVALUES,
    ConformanceResult,
    conformance_target,
    format_p_value,
    projection_bin_probabilities,
    sampler_conformance,
)
from .bounds import clopper_pearson, delta_lower_bound, epsilon_lower_bound, max_certifiable_epsilon, trials_to_certify
from .callables import callable_mechanism
from .events import AUTO_FAMILIES, EVENT_FAMILIES, FIELDS, STATISTICS, EventFamily
from .files import file_pair
from .neighbours import (
    ALL_CONSTRUCTION_NAMES,
    CONSTRUCTIONS,
    NEIGHBOUR_CONSTRUCTIONS,
    NeighbourPair,
    default_base_rows,
    make_neighbours,
)
from .probe import PROBE_SEEDS, ProbeResult, determinism_probe
from .result import VERDICTS, AuditResult, combined_verdict
from .runner import DEFAULT_DELTA, DEFAULT_TRIALS, MIN_TRIALS, audit_all_relations, estimate_audit_seconds, run_audit

__all__ = [
    "ALL_CONSTRUCTION_NAMES",
    "AUTO_FAMILIES",
    "CONFORMANCE_ALPHA",
    "CONFORMANCE_CONCENTRATION",
    "CONFORMANCE_DRAWS",
    "CONFORMANCE_EIGENVALUES",
    "CONSTRUCTIONS",
    "DEFAULT_DELTA",
    "DEFAULT_TRIALS",
    "EVENT_FAMILIES",
    "FIELDS",
    "MIN_TRIALS",
    "NEIGHBOUR_CONSTRUCTIONS",
    "PROBE_SEEDS",
    "STATISTICS",
    "VERDICTS",
    "AuditResult",
    "ConformanceResult",
    "EventFamily",
    "NeighbourPair",
    "ProbeResult",
    "audit_all_relations",
    "callable_mechanism",
    "clopper_pearson",
    "combined_verdict",
    "conformance_target",
    "default_base_rows",
    "delta_lower_bound",
    "determinism_probe",
    "epsilon_lower_bound",
    "estimate_audit_seconds",
    "file_pair",
    "format_p_value",
    "make_neighbours",
    "max_certifiable_epsilon",
    "projection_bin_probabilities",
    "run_audit",
    "sampler_conformance",
    "trials_to_certify",
]
