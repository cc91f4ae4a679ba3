"""Running an audit: releases on both neighbours, the event search, the verdict.

The recipe follows DP-Sniper (Bichsel et al., S&P 2021) and StatDP (Ding et al., CCS 2018): run ``trials`` releases
per side, choose an event on the first half of each side, count it on the second half, and turn the counts into
Clopper–Pearson bounds (:mod:`dpcore.audit.bounds`). Both orientations (S likelier under D, or under D′) are tried
and the confidence is split over them and over the two one-sided intervals, so every reported bound holds with the
stated confidence. Every release draws from its own part of one random stream (a Generator shared sequentially).

With ``n_jobs > 1`` the releases are split over that many worker processes (:mod:`dpcore.runtime.parallel`): worker i
runs
its share of the trials on its own child stream ``stage_seed(seed, Stage.AUDIT, i)`` (a Generator seed is split
with ``Generator.spawn``), and the workers' releases are concatenated in worker order. A given seed and job count
reproduce the same result; different job counts give different (equally valid) release samples.

**Interim results.** With ``on_partial`` (serial runs only) the releases collected so far are analysed every
``partial_every_s`` seconds by the same recipe — a smaller audit of the first m releases per side, halves of m, the
same confidence split — and passed on as an :class:`AuditResult` with ``interim=True``. The analysis works on a copy
of the collected values and draws no randomness, so the final result is the same with or without peeks. Each interim
result is a valid audit on its own, but repeated looks are not one test: the verdict is the final run's.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core._validation import check_choice, check_delta, check_epsilon, check_fraction, check_int, check_time_limit
from ..core.noise import RandomState, make_rng
from ..core.seeding import Stage, check_random_state, stage_seed
from ..core.timing import Deadline
from ..exceptions import DPCoreError, InvalidParameterError, MechanismTimeout
from ..mechanisms import get_mechanism
from ..mechanisms.base import Mechanism
from ..runtime.parallel import OutcomeStatus, Task, resolve_jobs, run_tasks
from ..vocabulary import Neighbouring
from .bounds import max_certifiable_epsilon, trials_to_certify
from .events import (
    AUTO_FAMILIES,
    EVENT_FAMILIES,
    FIELDS,
    OUTPUT_FIELDS,
    STATISTICS,
    Column,
    ReleaseBatch,
    extract_columns,
)
from .neighbours import ALL_CONSTRUCTION_NAMES, CONSTRUCTIONS, NeighbourPair, make_neighbours
from .result import AuditResult
from .search import ColumnStore, Finding, best_event, evaluate

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_TRIALS",
    "MIN_TRIALS",
    "PARTIAL_EVERY_S",
    "audit_all_relations",
    "audit_task",
    "estimate_audit_seconds",
    "run_audit",
]

#: Releases per side run by default (≈ 2–4 s for the fast covariance mechanisms at d = 3).
DEFAULT_TRIALS = 10_000
#: Fewest completed releases per side for which a bound is reported after a time-out.
MIN_TRIALS = 20
DEFAULT_DELTA = 1e-5
#: With n_jobs > 1 and a time limit, a worker still running HARD_LIMIT_FACTOR × time_limit + HARD_LIMIT_GRACE_S
#: seconds after it started (a release stuck outside its cooperative deadline checks) is killed; its releases are
#: lost and the audit reports the others as truncated.
HARD_LIMIT_FACTOR = 1.25
HARD_LIMIT_GRACE_S = 2.0

#: Seconds between two interim analyses (``on_partial``) by default.
PARTIAL_EVERY_S = 1.5
#: An interim analysis follows the previous one after at least this many times that one's duration (so peeks cost at
#: most about 1/(1 + factor) of the run time however large the store grows).
PARTIAL_COST_FACTOR = 4.0
#: Seconds between two progress reports of :func:`audit_task` (an interim result is reported at once).
REPORT_INTERVAL_S = 0.25

ProgressCallback = Callable[[int, int], None]
PartialCallback = Callable[[AuditResult], None]
#: The collector's hook after each trial: peek(store, buffers) with the flushed store and the unflushed releases.
PeekHook = Callable[[ColumnStore, tuple[list, list]], None]


# ------------------------------------------------------------------------------------------------
# Settings
# ------------------------------------------------------------------------------------------------

def resolve_mechanism(mechanism_id: str | Mechanism) -> Mechanism:
    """A registered id, a peer, a teaching mutant (``mutant:…``, :data:`~dpcore.audit.mutants.TEACHING_MUTANTS`) or
    a :class:`Mechanism` instance (e.g. a test-only mechanism)."""
    if isinstance(mechanism_id, Mechanism):
        return mechanism_id
    from .mutants import is_teaching_mutant, teaching_mutant

    return teaching_mutant(mechanism_id) if is_teaching_mutant(mechanism_id) else get_mechanism(mechanism_id)


def resolve_delta(delta: float | None, mech: Mechanism) -> float:
    """The claimed δ: 1e-5 by default for mechanisms that use δ, otherwise 0."""
    if delta is None:
        return DEFAULT_DELTA if mech.uses_delta else 0.0
    return check_delta(delta, required=mech.uses_delta)


def resolve_pair(mech: Mechanism, neighbours: Any, neighbouring: str | None, d: int, n: int) -> NeighbourPair:
    """Build the neighbours under the requested relation (None: the pair's or construction's own, if supported)."""
    if neighbouring is not None:
        neighbouring = mech.check_neighbouring(neighbouring)
    if isinstance(neighbours, str) and neighbouring is None and neighbours in CONSTRUCTIONS:
        own = CONSTRUCTIONS[neighbours].default_relation
        neighbouring = own if own in mech.neighbourings else (
            Neighbouring.REPLACE if Neighbouring.REPLACE in mech.neighbourings else mech.neighbourings[0])
    pair = make_neighbours(neighbours, d=d, n=n, neighbouring=neighbouring)
    mech.check_neighbouring(pair.neighbouring, given="the supplied pair is")
    return pair


def _resolve_events(statistic: str, field: str, mech: Mechanism) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(event families, released fields) to collect and search."""
    statistic = check_choice(statistic, "statistic", STATISTICS)
    field = check_choice(field, "field", FIELDS)
    released = OUTPUT_FIELDS.get(mech.output, ("subspace", "status"))
    families = AUTO_FAMILIES if statistic == "auto" else (statistic,)
    if field != "auto":
        if field not in released:
            raise InvalidParameterError(
                f"{mech.id} releases {'a covariance' if mech.output == 'covariance' else 'a subspace'}, not the field "
                f"{field!r}; choose one of {', '.join(map(repr, released))} or 'auto'.")
        fields: tuple[str, ...] = (field,)
    else:
        fields = released
    families = tuple(f for f in families if set(EVENT_FAMILIES[f].fields) & set(fields))
    if not families:
        if statistic in ("support", "quadratic") and mech.output != "covariance":
            raise InvalidParameterError(
                f"statistic {statistic!r} needs a covariance output but {mech.id} releases a subspace; "
                "use 'alignment', 'atom' or 'classifier'.")
        readable = ", ".join(EVENT_FAMILIES[statistic].fields) if statistic != "auto" else "any field"
        raise InvalidParameterError(
            f"statistic {statistic!r} reads {readable}, which the chosen field {field!r} of {mech.id} is not; "
            "choose another statistic or field='auto'.")
    if "classifier" in families:  # the classifier's features are every other family's columns
        return families, fields
    used = tuple(f for f in fields if any(f in EVENT_FAMILIES[fam].fields for fam in families))
    return families, used


def _check_progress(progress: Any) -> None:
    if progress is not None and not callable(progress):
        raise InvalidParameterError("progress must be a callable progress(done, total) or None.")


def _check_partial(on_partial: Any, partial_every_s: Any, jobs: int) -> float:
    """Validate the interim-result settings; returns the interval in seconds."""
    if on_partial is None:
        return PARTIAL_EVERY_S
    if not callable(on_partial):
        raise InvalidParameterError("on_partial must be a callable on_partial(interim_result) or None.")
    if jobs != 1:
        raise InvalidParameterError("interim results (on_partial) need n_jobs=1: the releases of worker processes "
                                    "are only seen when they end.")
    try:
        every = float(partial_every_s)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"partial_every_s must be a number of seconds; got {partial_every_s!r}.") from None
    if not math.isfinite(every) or every <= 0:
        raise InvalidParameterError(f"partial_every_s must be a positive number of seconds; got {partial_every_s!r}.")
    return every


# ------------------------------------------------------------------------------------------------
# Run time
# ------------------------------------------------------------------------------------------------

def estimate_audit_seconds(mechanism_id: str | Mechanism, epsilon: float, trials: int = DEFAULT_TRIALS, *,
                           delta: float | None = None, neighbours: Any = "all", k: int = 1,
                           pilot: int = 30, max_seconds: float = 0.5, d: int = 3, n: int = 30,
                           neighbouring: str | None = None, **options: Any) -> float:
    """Rough wall time of an audit with ``trials`` releases per side and pair, from a pilot of at most ``pilot``
    releases (stopping after ``max_seconds`` once two are done). The power check can add up to as much again."""
    mech = resolve_mechanism(mechanism_id)
    epsilon = check_epsilon(epsilon)
    delta = resolve_delta(delta, mech)
    pairs = _pairs(mech, neighbours, neighbouring, d, n)
    pair = pairs[0]
    opts = mech.validate_options(options)
    trials = check_int(trials, "trials", 1)
    pilot = check_int(pilot, "pilot", 1, 10_000)
    check_int(k, "k (number of components)", 1, pair.D0.d)
    rng = make_rng(None)
    t0 = time.perf_counter()
    # as the audit does (_collect): the settings validated once per side, then the releases
    prepared = [_prepare_or_refusal(mech, data, k, epsilon, delta, pair.neighbouring, opts)
                for data in (pair.D0, pair.D1)]
    done = 0
    while done < pilot and not (done >= 2 and time.perf_counter() - t0 > max_seconds):
        _run_or_refusal(prepared[done % 2], rng, None)
        done += 1
    per = (time.perf_counter() - t0) / done
    return per * 2 * trials * len(pairs) * 1.1 + 0.2


# ------------------------------------------------------------------------------------------------
# The audit
# ------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Refusal:
    """A release that raised an error: under a fixed relation and public settings a refusal is an output too."""

    reason: str
    error: BaseException
    status: str = "refused"
    ledger: tuple = ()

    @property
    def is_bottom(self) -> bool:
        return True


def _prepare_or_refusal(mech: Mechanism, data: Any, k: int, epsilon: float, delta: float, neighbouring: str,
                        opts: dict) -> Any:
    """The validated settings of the releases on ``data`` (:meth:`Mechanism.prepare_release`, checked once per
    audit side), or the :class:`Refusal` every release with these settings would be."""
    try:
        return mech.prepare_release(data, k, epsilon, delta, neighbouring=neighbouring, allow_invalid=True, **opts)
    except DPCoreError as exc:
        return Refusal(f"{type(exc).__name__}: {exc}", exc)


def _run_or_refusal(prepared: Any, rng: np.random.Generator, limit: float | None) -> Any:
    """One release of ``prepared`` (from :func:`_prepare_or_refusal`), or a :class:`Refusal` for a
    :class:`DPCoreError` other than a time-out."""
    if isinstance(prepared, Refusal):
        return prepared
    try:
        return prepared.run(rng, limit)
    except MechanismTimeout:
        raise
    except DPCoreError as exc:
        return Refusal(f"{type(exc).__name__}: {exc}", exc)


def _upfront_refusal(prepared: list) -> None:
    """Both sides refused before any release, with the same message: the settings are refused (a check of public
    settings, e.g. parameter validation, deterministic), not one record. A refusal *during* a release may be random
    (a sampler's proposal cap), so it is an output, counted from the first trial on."""
    if all(isinstance(p, Refusal) for p in prepared) and prepared[0].reason == prepared[1].reason:
        raise prepared[0].error


def _collect(mech: Mechanism, pair: NeighbourPair, k: int, epsilon: float, delta: float, opts: dict, trials: int,
             families: tuple[str, ...], fields: tuple[str, ...], rng: np.random.Generator, deadline: Deadline,
             progress: ProgressCallback | None, peek: PeekHook | None = None,
             derive: tuple = ()) -> tuple[ColumnStore, int, bool]:
    """Run up to ``trials`` releases per side; returns the column store, releases per side and a truncated flag.
    ``peek`` is called after every completed trial (both sides) with the store and the releases not yet in it.
    ``derive``: noise mutants whose releases are computed from the same draws (``Mutant.derive``); their columns go
    to ``store.derived[i]``."""
    store = ColumnStore()
    store.derived = [ColumnStore() for _ in derive]
    datasets = (pair.D0, pair.D1)
    prepared = [pair.refused[side] if pair.refused[side] is not None else
                _prepare_or_refusal(mech, data, k, epsilon, delta, pair.neighbouring, opts)
                for side, data in enumerate(datasets)]
    _upfront_refusal(prepared)
    same: list = [None, True]  # the first refusal's reason; whether every release so far was that refusal
    d = pair.D0.d
    chunk = max(1, min(500, trials // 20))
    buffers: tuple[list, list] = ([], [])
    counts = [0, 0]
    total = 2 * trials
    truncated = False

    def flush() -> None:
        for side in (0, 1):
            if buffers[side]:
                batch = ReleaseBatch.from_releases(buffers[side], d, k, fields)
                store.add(side, extract_columns(batch, pair, families, fields))
                for mutant, target in zip(derive, store.derived):
                    rels = mutant.derive_many(buffers[side], datasets[side])
                    target.add(side, extract_columns(ReleaseBatch.from_releases(rels, d, k, fields), pair, families,
                                                     fields))
                buffers[side].clear()

    try:
        while counts[1] < trials and not truncated:
            for _ in range(min(chunk, trials - counts[1])):
                for side in (0, 1):
                    limit = None if deadline.seconds is None else max(deadline.remaining, 1e-3)
                    rel = _run_or_refusal(prepared[side], rng, limit)
                    buffers[side].append(rel)
                    counts[side] += 1
                    if same[1]:
                        if same[0] is None and isinstance(rel, Refusal):
                            same[0] = rel
                        same[1] = isinstance(rel, Refusal) and rel.reason == same[0].reason
                if peek is not None and counts[1] < trials:  # after the last trial comes the final result
                    peek(store, buffers)
                if deadline.expired and counts[1] < trials:
                    truncated = True
                    break
            flush()
            if progress is not None:
                progress(counts[0] + counts[1], total)
    except MechanismTimeout:
        truncated = True
    if buffers[0] and len(buffers[0]) > len(buffers[1]):  # a time-out between the two releases of a trial
        buffers[0].pop()
        counts[0] -= 1
    flush()
    store.refusal = same[0].error if same[1] and same[0] is not None and min(counts) > 0 else None
    return store, min(counts), truncated


def _worker_seeds(seed: RandomState, jobs: int) -> list:
    """One independent child stream per worker: stage_seed(seed, AUDIT, i); a Generator is split with spawn."""
    check_random_state(seed)
    if isinstance(seed, np.random.Generator):
        return seed.spawn(jobs)
    return [stage_seed(seed, Stage.AUDIT, i) for i in range(jobs)]


def _collect_task(context: Any, mech: Mechanism, pair: NeighbourPair, k: int, epsilon: float, delta: float,
                  opts: dict, trials: int, families: tuple[str, ...], fields: tuple[str, ...], seed: Any,
                  seconds: float | None, derive: tuple, report: Callable[[Any], None]) -> tuple:
    """One worker's share of an audit: ``trials`` releases per side on its own stream."""
    try:
        store, m, truncated = _collect(mech, pair, k, epsilon, delta, opts, trials, families, fields,
                                       make_rng(seed), Deadline(seconds), lambda done, total: report(done),
                                       derive=derive)
    except DPCoreError as exc:  # re-raised by the parent, as the serial audit would raise it
        return "error", exc
    return "ok", (store, m, truncated)


def _collect_parallel(mech: Mechanism, pair: NeighbourPair, k: int, epsilon: float, delta: float, opts: dict,
                      trials: int, families: tuple[str, ...], fields: tuple[str, ...], seed: RandomState,
                      deadline: Deadline, progress: ProgressCallback | None,
                      jobs: int, derive: tuple = ()) -> tuple[ColumnStore, int, bool]:
    """:func:`_collect` split over ``jobs`` worker processes; the stores are concatenated in worker order."""
    shares = [trials // jobs + (i < trials % jobs) for i in range(jobs)]
    seeds = _worker_seeds(seed, jobs)
    seconds = deadline.seconds
    hard = None if seconds is None else HARD_LIMIT_FACTOR * seconds + HARD_LIMIT_GRACE_S
    tasks = [Task(_collect_task, (mech, pair, k, epsilon, delta, opts, share, families, fields, seeds[i], seconds,
                                  derive), hard_limit=hard) for i, share in enumerate(shares) if share > 0]
    done = [0] * len(tasks)

    def on_report(index: int, count: int) -> None:
        done[index] = count
        if progress is not None:
            progress(sum(done), 2 * trials)

    parts: dict[int, tuple[ColumnStore, int]] = {}
    truncated = False
    for out in run_tasks(tasks, n_jobs=jobs, on_report=on_report):
        if out.status == OutcomeStatus.KILLED:
            truncated = True
            continue
        if out.status != OutcomeStatus.DONE:
            raise RuntimeError(f"an audit worker failed: {out.message}")
        kind, value = out.value
        if kind == "error":  # vocabulary: not a choice
            raise value
        store, m, trunc = value
        truncated |= trunc
        if m > 0:
            parts[out.index] = (store, m)
    merged = _merge([(store, m) for _, (store, m) in sorted(parts.items())])
    merged.derived = [_merge([(store.derived[i], m) for _, (store, m) in sorted(parts.items())])
                      for i in range(len(derive))]
    refusals = [store.refusal for store, _ in parts.values()]
    if refusals and all(r is not None and str(r) == str(refusals[0]) for r in refusals):
        merged.refusal = refusals[0]
    return merged, sum(m for _, m in parts.values()), truncated


def _merge(parts: list[tuple[ColumnStore, int]]) -> ColumnStore:
    """The workers' stores (first ``m`` releases of each) concatenated, keeping the columns they all have."""
    merged = ColumnStore()
    if parts:
        keys = [key for key in parts[0][0].columns if all(key in st.columns for st, _ in parts)]
        for store, m in parts:
            for side in (0, 1):
                merged.add(side, [(store.columns[key], store.values(side, key, m)) for key in keys])
    return merged


def _add_classifier_score(store: ColumnStore, half: int, m: int) -> str:
    """Fit a logistic regression on the selection half (all columns as features); store its score as a column."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    keys = sorted(store.columns)
    feats = [np.nan_to_num(np.stack([store.values(s, key, m) for key in keys], axis=1), nan=0.0, posinf=1e6,
                           neginf=-1e6) for s in (0, 1)]
    Xtr = np.vstack([feats[0][:half], feats[1][:half]])
    ytr = np.r_[np.zeros(half), np.ones(half)]
    if Xtr.size == 0 or np.ptp(Xtr, axis=0).max() == 0:
        scores = (np.zeros(m), np.zeros(m))
    else:
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        clf.fit(Xtr, ytr)
        scores = (clf.decision_function(feats[0]), clf.decision_function(feats[1]))
    col = Column("classifier:score", "classifier", "auto",
                 "classifier score (log-odds that the output came from D′)")
    for side in (0, 1):
        store.add(side, [(col, scores[side])])
    return col.key


ALL_CONSTRUCTIONS = "all"


#: The key under which the parts of an audit (its pairs, its mutants) get their child streams.
_PART_KEY = 7


def _child_seed(seed: RandomState, key: int) -> RandomState:
    """An independent child stream of ``seed`` for one part of an audit (a pair, a mutant); None stays None."""
    if isinstance(seed, np.random.Generator):
        return seed.spawn(1)[0]
    return stage_seed(seed, Stage.AUDIT, _PART_KEY, key)


def _pairs(mech: Mechanism, neighbours: Any, neighbouring: str | None, d: int, n: int) -> list[NeighbourPair]:
    """The neighbour pairs of an audit: every construction for ``"all"``, else the one asked for."""
    if isinstance(neighbours, str) and neighbours == ALL_CONSTRUCTIONS:
        return [resolve_pair(mech, name, neighbouring, d, n) for name in ALL_CONSTRUCTION_NAMES]
    return [resolve_pair(mech, neighbours, neighbouring, d, n)]


def run_audit(
    mechanism_id: str | Mechanism,
    epsilon: float,
    delta: float | None = None,
    neighbours: str | tuple = ALL_CONSTRUCTIONS,
    statistic: str = "auto",
    trials: int = DEFAULT_TRIALS,
    k: int = 1,
    confidence: float = 0.95,
    seed: RandomState = None,
    progress: ProgressCallback | None = None,
    time_limit: float | None = None,
    *,
    d: int = 3,
    n: int = 30,
    neighbouring: str | None = None,
    field: str = "auto",
    n_jobs: int | None = 1,
    on_partial: PartialCallback | None = None,
    partial_every_s: float = PARTIAL_EVERY_S,
    power: bool = True,
    **options: Any,
) -> AuditResult:
    """Audit a mechanism's claim "(ε, δ)-DP" on neighbouring datasets, with a power check.

    ``mechanism_id`` is a registered id or a :class:`Mechanism` instance (e.g. a test-only mechanism).
    ``neighbours`` is "all" (default: every built-in construction but the targeted ones, :data:`ALL_CONSTRUCTION_NAMES`,
    the confidence split over them), one construction (D′ with ``n`` rows and ``d`` features) or a pair of
    PreparedData; ``trials`` releases are run on each side of each pair. ``neighbouring`` ("replace" or
    "add_remove") picks the relation; None takes each construction's own (or the pair's) when the mechanism
    supports it. ``statistic`` picks an event family (:data:`STATISTICS`; "auto" searches all but the classifier)
    and ``field`` the released field it reads (:data:`FIELDS`). Half of each side's releases choose the event, the
    other half count it. ``delta`` defaults to 1e-5 for mechanisms that use δ and 0 otherwise. ``time_limit``
    (seconds) bounds the audit and, separately, its power check; a run stopped by it reports the bound from the
    releases so far (``truncated=True``). ``n_jobs`` worker processes share the releases (1: this process; −1:
    every core). ``on_partial(result)`` (serial runs only) receives interim results of the pair being audited.
    Extra keyword arguments are mechanism options. A release that raises a :class:`DPCoreError` is recorded as a
    refusal (an output) from the first trial on; the error is raised only when the settings are refused before any
    release (the same message on both sides: public parameter validation) or when every release on both sides was
    the same refusal (nothing to compare).

    The verdict is "violated" when a bound refutes the claim (a ratio bound above ε, or a δ bound above δ; a
    structural witness gives δ ≥ P[M(D) ∈ S] for every ε); "inconclusive" when the claimed ε is beyond what the
    held-out releases could certify and no structural witness was seen, or — with ``power`` — when the same test
    did not flag a reference violation of the claim (privacy loss 2× the claimed ε on one of the pairs, calibrated
    from the claim, :mod:`dpcore.audit.mutants`; ``detectable_epsilon`` then says which violation it does detect),
    or when the output has no such reference; "consistent" otherwise.
    """
    started = time.perf_counter()
    mech = resolve_mechanism(mechanism_id)
    epsilon = check_epsilon(epsilon)
    delta = resolve_delta(delta, mech)
    pairs = _pairs(mech, neighbours, neighbouring, d, n)
    families, fields = _resolve_events(statistic, field, mech)
    opts = mech.validate_options(options)
    check_int(k, "k (number of components)", 1, pairs[0].D0.d)
    trials = check_int(trials, "trials", MIN_TRIALS, 10_000_000)
    confidence = check_fraction(confidence, "confidence")
    seconds = check_time_limit(time_limit)
    _check_progress(progress)
    jobs = resolve_jobs(n_jobs)
    every = _check_partial(on_partial, partial_every_s, jobs)
    if not isinstance(power, bool):
        raise InvalidParameterError(f"power must be True or False; got {power!r}.")
    each = 1.0 - (1.0 - confidence) / len(pairs)
    plan = _Plan(k, opts, epsilon, delta, each, trials, families, fields, statistic, field, jobs)
    deadline = Deadline(seconds)
    runs: list[_PairRun] = []
    for j, pair in enumerate(pairs):
        if runs and deadline.expired:
            break

        def pair_progress(done: int, total: int, offset: int = 2 * trials * j) -> None:
            progress(offset + done, 2 * trials * len(pairs))

        single = len(pairs) == 1
        try:
            runs.append(_audit_pair(mech, plan, pair, seed if single else _child_seed(seed, j),
                                    None if progress is None else pair_progress, deadline, on_partial, every,
                                    started))
        except MechanismTimeout:
            if single or not runs:
                raise
    result = _combine([r.result for r in runs], confidence, len(pairs))
    if power and result.verdict == "consistent":
        result = _power_check(mech, plan, result, runs, seconds, started)
    elif result.verdict == "consistent":  # no power check: nothing shows this test could have found a violation
        result = dataclasses.replace(result, verdict="inconclusive", inconclusive_reason="unchecked")
    return dataclasses.replace(result, runtime_s=time.perf_counter() - started)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The settings every pair and every mutant of one audit share (the same test)."""

    k: int
    opts: dict
    epsilon: float
    delta: float
    confidence: float
    trials: int
    families: tuple[str, ...]
    fields: tuple[str, ...]
    statistic: str
    field: str
    jobs: int
    derive: tuple = ()


@dataclasses.dataclass
class _PairRun:
    """The audit of one pair, with what the power check needs: the derived mutants' columns."""

    pair: NeighbourPair
    result: AuditResult
    store: ColumnStore
    m: int
    seed: RandomState


def _audit_pair(mech: Mechanism, plan: _Plan, pair: NeighbourPair, seed: RandomState,
                progress: ProgressCallback | None, deadline: Deadline, on_partial: PartialCallback | None,
                every: float, started: float, derive: bool = True) -> _PairRun:
    """The audit of one pair: collect ``plan.trials`` releases per side, choose and count the event."""
    def analyse(store: ColumnStore, m: int, truncated: bool) -> AuditResult:
        return _analyse(mech, plan.k, plan.opts, plan.epsilon, plan.delta, plan.confidence, plan.trials, store, m,
                        plan.families, plan.statistic, plan.field, pair, seed, truncated,
                        time.perf_counter() - started)

    derived = plan.derive if derive else ()
    if plan.jobs == 1:
        peek = None if on_partial is None else _peeker(analyse, on_partial, every, pair, plan.k, plan.families,
                                                       plan.fields)
        store, m, truncated = _collect(mech, pair, plan.k, plan.epsilon, plan.delta, plan.opts, plan.trials,
                                       plan.families, plan.fields, make_rng(seed), deadline, progress, peek,
                                       derive=derived)
    else:
        store, m, truncated = _collect_parallel(mech, pair, plan.k, plan.epsilon, plan.delta, plan.opts,
                                                plan.trials, plan.families, plan.fields, seed, deadline, progress,
                                                plan.jobs, derive=derived)
    if store.refusal is not None:  # every release on both sides was the same refusal: nothing to compare
        raise store.refusal
    if m < MIN_TRIALS:
        cap = "the time limit" if deadline.seconds is None else f"the time limit of {deadline.seconds:g} s"
        raise MechanismTimeout(
            f"the audit stopped at {cap} after only {m} releases per side (need at least {MIN_TRIALS}); "
            "raise the time limit or audit a faster setting (smaller ε, fewer features).")
    return _PairRun(pair, analyse(store, m, truncated), store, m, seed)


def _pair_line(r: AuditResult) -> dict:
    verdict = "no violation found" if r.verdict == "consistent" else r.verdict  # power is judged for all pairs
    return {"neighbours": r.neighbours["name"], "neighbouring": r.neighbouring, "verdict": verdict,
            "epsilon_lower_bound": r.epsilon_lower_bound, "delta_lower_bound": r.delta_lower_bound,
            "event": r.event["description"], "releases": r.completed[0], "truncated": r.truncated}


def _combine(results: list[AuditResult], confidence: float, planned: int) -> AuditResult:
    """One result for the pairs of an audit: the violated pair (strongest), else the most revealing pair."""
    if len(results) == 1 and planned == 1:
        return results[0]
    violated = [r for r in results if r.violated]
    if violated:
        best = max(violated, key=lambda r: (r.structural, r.delta_lower_bound, r.epsilon_lower_bound))
    else:
        best = max(results, key=lambda r: (r.epsilon_lower_bound, r.delta_lower_bound))
    verdict = "violated" if violated else ("inconclusive" if any(r.inconclusive for r in results)
                                           else "consistent")
    return dataclasses.replace(best, verdict=verdict, pairs=[_pair_line(r) for r in results],
                               confidence=confidence, pairs_planned=planned,
                               truncated=any(r.truncated for r in results) or len(results) < planned)


def _power_line(spec: Any, epsilon: float) -> dict:
    return {"mutant": spec.label, "description": spec.words, "kind": "reference", "family": spec.family,
            "factor": spec.factor, "epsilon": spec.factor * epsilon, "flagged": False, "pairs_flagged": 0,
            "pairs_run": 0, "neighbours": None, "epsilon_lower_bound": math.inf, "delta_lower_bound": 0.0,
            "releases": 0, "run": False, "truncated": False, "event": None}


def _record(line: dict, r: AuditResult, pair: NeighbourPair) -> None:
    """Enter one pair's audit of a reference into its power line: flagged when flagged on every pair run; the
    bound shown is the weakest pair's (where the test has least power)."""
    line.update(run=True, releases=max(line["releases"], r.completed[0]), truncated=line["truncated"] or r.truncated,
                pairs_run=line["pairs_run"] + 1, pairs_flagged=line["pairs_flagged"] + int(r.violated))
    line["flagged"] = line["pairs_flagged"] == line["pairs_run"]
    if r.epsilon_lower_bound < line["epsilon_lower_bound"]:
        line.update(epsilon_lower_bound=r.epsilon_lower_bound, delta_lower_bound=r.delta_lower_bound,
                    neighbours=pair.name, event=r.event["description"])


def _power_check(mech: Mechanism, plan: _Plan, result: AuditResult, runs: list[_PairRun], seconds: float | None,
                 started: float) -> AuditResult:
    """Run the same test on a reference violation *of the claim* (:func:`~dpcore.audit.mutants.reference_for`): on
    each pair, the claim's family of noise on C calibrated so that its privacy loss there is 2× the claimed ε —
    from the claim and the pair only, never from the audited code. "consistent" stands only when the test flags it
    on every pair audited (a violation may sit on any of them). The larger references (4ε, 8ε, 16ε, derived from
    the same draws) say which violation this test does detect on every pair (``detectable_epsilon``). A mechanism
    whose output has no reference family is "inconclusive" (``no_reference``)."""
    from .mutants import REFERENCE_FACTORS, ReferenceSpec, reference_family, reference_for

    family = reference_family(mech, plan.delta)
    if family is None:
        return dataclasses.replace(result, verdict="inconclusive", inconclusive_reason="no_reference", power=[])
    lines = [_power_line(ReferenceSpec(family, f), plan.epsilon) for f in REFERENCE_FACTORS]
    deadline = Deadline(seconds)
    complete = True
    for run in runs:
        ref = reference_for(mech, run.pair, plan.epsilon, plan.delta)
        if not ref.applicable:  # the pair's C are equal: no violation of the claim can show there
            continue
        ladder = ref.ladder(REFERENCE_FACTORS[1:])
        try:
            if deadline.expired:
                raise MechanismTimeout("the power check reached its time limit")
            part = _audit_pair(ref, dataclasses.replace(plan, derive=tuple(ladder)), run.pair,
                               _child_seed(run.seed, 1000), None, deadline, None, PARTIAL_EVERY_S, started)
        except MechanismTimeout:
            complete = False
            break
        _record(lines[0], part.result, run.pair)
        for line, mutant, store in zip(lines[1:], ladder, part.store.derived):
            _record(line, _analyse(mutant, plan.k, plan.opts, plan.epsilon, plan.delta, plan.confidence,
                                   plan.trials, store, part.m, plan.families, plan.statistic, plan.field, run.pair,
                                   run.seed, part.result.truncated, time.perf_counter() - started), run.pair)
    for line in lines:
        line["truncated"] = line["truncated"] or not complete
        line["flagged"] = line["flagged"] and line["run"] and complete
        if not line["run"]:
            line["epsilon_lower_bound"] = 0.0
    flagged = [line["epsilon"] for line in lines if line["flagged"]]
    if lines[0]["flagged"]:
        return dataclasses.replace(result, verdict="consistent", power=lines[:1], detectable_epsilon=flagged[0])
    return dataclasses.replace(result, verdict="inconclusive", inconclusive_reason="power", power=lines,
                               detectable_epsilon=min(flagged) if flagged else None)


def _snapshot(store: ColumnStore, buffers: tuple[list, list], pair: NeighbourPair, k: int,
              families: tuple[str, ...], fields: tuple[str, ...]) -> tuple[ColumnStore, int]:
    """A copy of the collected values (the store's and the unflushed releases'), and the releases per side in it.
    Called between two trials, so both sides hold the same number of releases."""
    parts: list[list[list[tuple[Column, np.ndarray]]]] = [[], []]  # per side: the store's part, the buffers'
    for side in (0, 1):
        if store.columns:
            parts[side].append([(col, store.values(side, key)) for key, col in store.columns.items()])
        if buffers[side]:
            batch = ReleaseBatch.from_releases(list(buffers[side]), pair.D0.d, k, fields)
            parts[side].append(extract_columns(batch, pair, families, fields))
    keys = set.intersection(*({col.key for col, _ in part} for side in parts for part in side)) if parts[0] else set()
    snap = ColumnStore()
    for side in (0, 1):
        for part in parts[side]:
            snap.add(side, [(col, np.array(values)) for col, values in part if col.key in keys])
    m = len(snap.values(0, "status")) if "status" in keys else 0
    return snap, m


def _interim(result: AuditResult) -> AuditResult:
    """An interim result: no power check has run yet, so a "consistent" is reported as unchecked."""
    if result.verdict == "consistent":
        result = dataclasses.replace(result, verdict="inconclusive", inconclusive_reason="unchecked")
    return dataclasses.replace(result, interim=True)


def _peeker(analyse: Callable[[ColumnStore, int, bool], AuditResult], on_partial: PartialCallback, every: float,
            pair: NeighbourPair, k: int, families: tuple[str, ...], fields: tuple[str, ...]) -> PeekHook:
    """The collector's hook that hands an interim result to ``on_partial`` when one is due."""
    state = {"due": time.monotonic() + every, "m": 0}

    def peek(store: ColumnStore, buffers: tuple[list, list]) -> None:
        if time.monotonic() < state["due"]:
            return
        t0 = time.monotonic()
        snap, m = _snapshot(store, buffers, pair, k, families, fields)
        if m >= MIN_TRIALS and m > state["m"]:
            try:
                result = analyse(snap, m, False)
            except DPCoreError:  # e.g. no usable values yet: try again at the next look
                result = None
            if result is not None:
                state["m"] = m
                on_partial(_interim(result))
        spent = time.monotonic() - t0
        state["due"] = time.monotonic() + max(every, PARTIAL_COST_FACTOR * spent)

    return peek


def _analyse(mech: Mechanism, k: int, opts: dict, epsilon: float, delta: float, confidence: float, trials: int,
             store: ColumnStore, m: int, families: tuple[str, ...], statistic: str, field: str,
             pair: NeighbourPair, seed: RandomState, truncated: bool, runtime: float) -> AuditResult:
    """Choose the event on the first half of the ``m`` releases per side, count it on the second half."""
    half = m // 2
    level = (1.0 - confidence) / 4  # two orientations × two one-sided intervals
    if families == ("classifier",):
        keys = [_add_classifier_score(store, half, m)]
    else:
        keys = [key for key, col in store.columns.items() if col.family in families]
    findings: list[Finding] = []
    for o in (0, 1):
        cand = best_event(store, keys, o, half, epsilon, delta, level)
        if cand is None:
            raise InvalidParameterError(
                f"the releases of {mech.id} gave no usable values for statistic {statistic!r} (field {field!r}); "
                "choose another statistic or field.")
        findings.append(evaluate(store, cand, half, m, epsilon, delta, level))
    best = max(findings, key=lambda f: (f.violated, f.structural and f.violated, f.epsilon_lb, f.delta_lb,
                                        f.candidate.key()))
    return _result(mech, k, opts, epsilon, delta, confidence, trials, m, half, level, store, findings, best,
                   pair, seed, truncated, runtime)


def _result(mech: Mechanism, k: int, opts: dict, epsilon: float, delta: float, confidence: float, trials: int,
            m: int, half: int, level: float, store: ColumnStore, findings: list[Finding], best: Finding,
            pair: NeighbourPair, seed: RandomState, truncated: bool,
            runtime: float) -> AuditResult:
    ev = best.event
    col = ev.column
    o = ev.orientation
    held_out = m - half
    eps_max = max_certifiable_epsilon(held_out, delta, level)
    if any(f.violated for f in findings):
        verdict = "violated"
    elif epsilon >= eps_max:
        verdict = "inconclusive"
    else:
        verdict = "consistent"
    desc = ev.describe()
    if col.family == "support":
        other = "C(D′)" if o == 0 else "C(D)"
        desc = f"Ĉ − {other} is not positive definite (its smallest eigenvalue is ≤ 0)"
    elif ev.kind == "==":
        desc = f"{col.label} is exactly {ev.threshold:.10g}"
    elif ev.threshold == -math.inf:  # ⊥ and refusals sort below every value
        desc = ("an output was released (not ⊥, not refused)" if ev.kind == ">" else
                "the release is ⊥ or refused (no output)")
    if not best.violated and best.epsilon_lb <= 0:
        desc = f"no event separated the two sides (best candidate: {desc})"
    rec = best.as_dict()
    counts = {
        "numerator": rec["numerator"], "denominator": rec["denominator"],
        "held_out_hits": rec["held_out_hits"], "held_out_n": rec["held_out_n"],
        "selection_hits": rec["selection_hits"], "selection_n": rec["selection_n"],
        "p_numerator_lower": rec["p_numerator_lower"], "p_denominator_upper": rec["p_denominator_upper"],
        "bottom": [int(np.count_nonzero(store.values(s, "status", m) > 0)) for s in (0, 1)],
    }
    assumption = EVENT_FAMILIES[col.family].structural if best.structural else None
    event = {"statistic": col.family, "family": col.family, "field": col.field, "orientation": rec["orientation"],
             "direction": ev.kind, "threshold": ev.threshold, "variable": col.label, "description": desc,
             "structural": best.structural, "assumption": assumption}
    statistic = col.family
    samples = (np.asarray(store.values(0, col.key, m)), np.asarray(store.values(1, col.key, m)))
    return AuditResult(
        mechanism=mech.id, mechanism_name=mech.name, guarantee=mech.guarantee_for(k, opts),
        claimed_epsilon=epsilon, delta=delta, epsilon_lower_bound=best.epsilon_lb,
        epsilon_estimate=best.epsilon_estimate, confidence=confidence, trials=trials, completed=(m, m),
        verdict=verdict, counts=counts, event=event, statistic=statistic, samples=samples, runtime_s=runtime,
        neighbours=pair.as_dict(), truncated=truncated, k=k, seed=seed if isinstance(seed, int) else None,
        orientations=[f.as_dict() for f in findings], counterexample_delta=mech.counterexample_delta(epsilon, opts),
        delta_lower_bound=max(f.delta_lb for f in findings), field=col.field, neighbouring=pair.neighbouring,
        structural=best.structural and best.violated, max_certifiable_epsilon=eps_max,
        trials_needed=_trials_needed(epsilon, delta, level) if verdict == "inconclusive" else None,
        inconclusive_reason="ratio" if verdict == "inconclusive" else None,
    )


def _trials_needed(epsilon: float, delta: float, level: float) -> int | None:
    """Releases per side (both halves) a frequency ratio would need to certify ε; None beyond 10¹² (hopeless)."""
    held_out = trials_to_certify(epsilon, delta, level)
    return 2 * held_out if held_out <= 5 * 10**11 else None


def audit_task(context: Any, kwargs: dict, *, report: Callable[[Any], None]) -> tuple[str, Any]:
    """A task for :class:`dpcore.runtime.scheduler.SharedPool` that runs ``run_audit(**kwargs)`` (serially) and reports
    ``(done, total, interim)``: releases finished (both sides), releases planned, and the latest interim
    :class:`AuditResult` (None before the first). Returns ``("ok", result)``, or ``("error", message)`` for a
    :class:`DPCoreError`."""
    state: dict[str, Any] = {"done": 0, "total": 1, "interim": None, "sent": -math.inf}

    def send(now: bool = False) -> None:
        if now or time.monotonic() - state["sent"] >= REPORT_INTERVAL_S:
            state["sent"] = time.monotonic()
            report((state["done"], state["total"], state["interim"]))

    def progress(done: int, total: int) -> None:
        state["done"], state["total"] = done, total
        send(done >= total)

    def on_partial(result: AuditResult) -> None:
        state["interim"] = result
        send(True)

    try:
        return "ok", run_audit(**kwargs, progress=progress, on_partial=on_partial, n_jobs=1)
    except DPCoreError as exc:
        return "error", str(exc)


def audit_all_relations(mechanism_id: str | Mechanism, epsilon: float, *, confidence: float = 0.95,
                        **kwargs: Any) -> list[AuditResult]:
    """:func:`run_audit` once per neighbouring relation the mechanism declares (``mech.neighbourings``).

    The confidence is split over the relations (each audit runs at 1 − (1 − confidence)/R), so a "violated" among
    the results holds at the stated confidence. ``neighbours`` must be a built-in construction (every construction
    exists for both relations). Combine the verdicts with :func:`~dpcore.audit.combined_verdict`.
    """
    mech = resolve_mechanism(mechanism_id)
    confidence = check_fraction(confidence, "confidence")
    if kwargs.get("neighbouring") is not None:
        raise InvalidParameterError("audit_all_relations runs every relation; do not pass neighbouring.")
    if not isinstance(kwargs.get("neighbours", "zero_vs_unit"), str):
        raise InvalidParameterError("audit_all_relations needs a built-in neighbour construction, not a pair.")
    relations = tuple(mech.neighbourings)
    each = 1.0 - (1.0 - confidence) / len(relations)
    seed = kwargs.pop("seed", None)
    out = []
    for i, relation in enumerate(relations):
        child = seed if seed is None or isinstance(seed, np.random.Generator) else np.random.SeedSequence(
            seed.entropy if isinstance(seed, np.random.SeedSequence) else int(seed), spawn_key=(i,))
        out.append(run_audit(mech, epsilon, confidence=each, neighbouring=relation, seed=child, **kwargs))
    return out

