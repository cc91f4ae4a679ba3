"""Inverse planner: the smallest ε at which a mechanism meets a utility target in a given share of its releases.

The user states a target on one of the sweep's metrics (:mod:`dpcore.evaluation.metrics`) — captured variance
ratio ≥ x, largest principal angle ≤ y°, SVM accuracy ≥ z — and a confidence q (the share of releases that must
meet it). The planner simulates releases at probed ε (through :func:`~dpcore.evaluation.sweep.run_sweep`, so every
release is seeded exactly as a sweep cell with the same settings) and searches log ε by bisection on a monotone
fit: the success share p̂(ε) of the probes is fitted by isotonic regression (p(ε) increases with ε), the bracket is
the largest probed ε whose fit is below q and the smallest whose fit reaches q, and its geometric midpoint is probed
next until the bracket is narrower than ``tolerance``.

**Uncertainty band.** Each probe's share has a Clopper–Pearson interval (``band_level``). Since p(ε) is monotone,
p(ε) ≥ lower(ε′) for every probed ε′ ≤ ε, and p(ε) ≤ upper(ε′) for every ε′ ≥ ε. The band is
[ε_low, ε_high]: ε_low the largest probed ε at which the target is confidently missed (upper bound < q), ε_high the
smallest at which it is confidently met (lower bound ≥ q); after the bisection both edges are tightened by further
bisection. The recommended ε is ε_high (conservative); ``estimate`` is where the isotonic fit crosses q.

**Privacy.** The metrics read the data, so planning is private only when the data is public: a built-in or
synthetic dataset (:func:`public_input`), or a covariance *released* privately (:func:`released_covariance_input`:
post-processing of that release, free; its own cost is stated). Planning on raw private data
(:func:`private_what_if`) is a labelled NON-private what-if: the answer is a function of the private data and must
not be published or used to choose a budget that is then claimed as data-independent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core._validation import check_delta, check_int, check_positive
from ..core.seeding import seed_or_fresh
from ..data.prepared import Moments, PreparedData
from ..exceptions import InvalidParameterError
from ..vocabulary import Neighbouring

#: Targets: metric → (operator, direction). "≥" metrics improve with ε; "≤" metrics (angles) too, downwards.
TARGET_METRICS = {
    "captured_variance_ratio": ">=",
    "principal_angle_max_deg": "<=",
    "svm_accuracy": ">=",
}
#: Short names accepted in a target text (``captured>=0.9``, ``angle<=10``, ``svm>=0.8``).
TARGET_ALIASES = {
    "captured": "captured_variance_ratio", "captured_variance": "captured_variance_ratio",
    "captured_variance_ratio": "captured_variance_ratio",
    "angle": "principal_angle_max_deg", "principal_angle": "principal_angle_max_deg",
    "principal_angle_max_deg": "principal_angle_max_deg",
    "svm": "svm_accuracy", "svm_accuracy": "svm_accuracy",
}
#: The public ε range searched by default.
DEFAULT_RANGE = (0.01, 100.0)

NON_PRIVATE_NOTE = ("NON-PRIVATE what-if: planned on the raw private data, so this ε is a function of the data. Do "
                    "not publish it, and do not present a budget chosen this way as chosen independently of the "
                    "data. Plan on a public or built-in dataset, or on a privately released covariance, instead.")
PUBLIC_NOTE = "Planned on public data (a built-in, synthetic or public dataset): no privacy cost."


@dataclass(frozen=True)
class Target:
    """A utility target: ``metric`` (a name of :data:`TARGET_METRICS`) ``op`` ``value``."""

    metric: str
    value: float

    @property
    def op(self) -> str:
        return TARGET_METRICS[self.metric]

    def met(self, values: np.ndarray) -> np.ndarray:
        """Which releases meet the target (a NaN metric — a ⊥ or failed release — never does)."""
        v = np.asarray(values, dtype=float)
        with np.errstate(invalid="ignore"):
            ok = v >= self.value if self.op == ">=" else v <= self.value
        return ok & np.isfinite(v)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


def parse_target(text: str) -> Target:
    """``"captured>=0.9"``, ``"angle<=10"`` or ``"svm>=0.8"`` (long metric names too) → :class:`Target`."""
    m = re.fullmatch(r"\s*([A-Za-z_]+)\s*(>=|<=|≥|≤)\s*([-+0-9.eE]+)\s*", str(text))
    if not m:
        raise InvalidParameterError(f"--target expects METRIC>=VALUE or METRIC<=VALUE (e.g. captured>=0.9, "
                                    f"angle<=10, svm>=0.8), got {text!r}.")
    name, op, raw = m.group(1).lower(), m.group(2).replace("≥", ">=").replace("≤", "<="), m.group(3)
    metric = TARGET_ALIASES.get(name)
    if metric is None:
        raise InvalidParameterError(f"--target: unknown metric {name!r}; use captured, angle or svm.")
    if op != TARGET_METRICS[metric]:
        raise InvalidParameterError(f"--target: {metric} needs {TARGET_METRICS[metric]} (a target bounds it from the "
                                    f"side where it gets better), got {op}.")
    try:
        value = float(raw)
    except ValueError:
        raise InvalidParameterError(f"--target: {raw!r} is not a number.") from None
    return make_target(metric, value)


def make_target(metric: str, value: float) -> Target:
    """A checked :class:`Target` (ratios and accuracies in (0, 1], angles in (0, 90))."""
    metric = TARGET_ALIASES.get(metric, metric)
    if metric not in TARGET_METRICS:
        raise InvalidParameterError(f"unknown target metric {metric!r}; use one of {sorted(TARGET_METRICS)}.")
    value = float(value)
    if metric == "principal_angle_max_deg":
        if not 0 < value < 90:
            raise InvalidParameterError(f"--target: an angle target must lie in (0, 90) degrees, got {value:g}.")
    elif not 0 < value <= 1:
        raise InvalidParameterError(f"--target: a {metric} target must lie in (0, 1], got {value:g}.")
    return Target(metric, value)


# --------------------------------------------------------------------------------------------------
# What the planner runs on, and what that costs
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlanInput:
    """The data the planner simulates releases on, and whether planning on it keeps the inputs private.

    ``private_inputs``: False when the data is raw private data (the plan is a non-private what-if).
    ``cost``: the (ε, δ) already spent to obtain this input (a released covariance), 0 for public data; planning
    itself adds nothing to it (post-processing)."""

    data: PreparedData
    private_inputs: bool
    note: str
    cost: tuple[float, float] = (0.0, 0.0)
    labels: bool = True  # False: no SVM target (a released covariance carries no labels)


def public_input(data: PreparedData) -> PlanInput:
    """Built-in, synthetic or otherwise public data: planning on it is free."""
    return PlanInput(data, True, PUBLIC_NOTE)


def private_what_if(data: PreparedData) -> PlanInput:
    """Raw private data (e.g. an upload): the plan is a labelled NON-private what-if."""
    return PlanInput(data, False, NON_PRIVATE_NOTE)


def released_covariance_input(release, *, n: int | None = None, name: str = "released covariance") -> PlanInput:
    """Plan on a covariance Ĉ released privately (e.g. by Analyze Gauss): post-processing, free.

    Ĉ (post-processed: PSD, unit scale) is turned into n rows with ‖x‖ ≤ 1 and Σ xxᵀ = Ĉ exactly: ⌈λⱼ⌉ rows
    √(λⱼ/⌈λⱼ⌉)·vⱼ along each eigenvector, the rest zero rows. Covariance mechanisms read only C, n and d, so they see
    exactly Ĉ; the metrics treat Ĉ as the truth (the noise in Ĉ makes the plan approximate, and the spectrum's small
    eigenvalues are inflated by it). No labels: the SVM target is unavailable. ``n`` is the release's public n
    (replace-one); under add/remove n is private, so give a public n.
    """
    C_hat = getattr(release, "covariance_post", None)
    if C_hat is None:
        raise InvalidParameterError("this release has no covariance; plan on a covariance release (e.g. Analyze "
                                    "Gauss).")
    rows = n if n is not None else release.n
    if rows is None:
        raise InvalidParameterError("the release's n is private (add/remove neighbours); give a public n to plan "
                                    "with.")
    rows = check_int(rows, "n", 2)
    lam, V = np.linalg.eigh(0.5 * (np.asarray(C_hat, float) + np.asarray(C_hat, float).T))
    lam = np.clip(lam, 0.0, None)
    counts = np.where(lam > 0, np.ceil(lam - 1e-12).astype(int), 0)
    counts = np.maximum(counts, (lam > 0).astype(int))
    if counts.sum() > rows:
        raise InvalidParameterError("the released covariance's trace exceeds what n unit rows can carry; give a "
                                    "larger public n.")
    X = np.zeros((rows, V.shape[0]))
    at = 0
    for j in np.flatnonzero(counts):
        m = int(counts[j])
        X[at:at + m] = math.sqrt(lam[j] / m) * V[:, j]
        at += m
    norms = np.linalg.norm(X, axis=1)
    X[norms > 1.0] /= norms[norms > 1.0, None]  # rounding only: √(λ/⌈λ⌉) ≤ 1
    data = PreparedData(X=X, norm_bound=float(release.norm_bound), name=name,
                        stats=Moments.of_rows(X))
    eps, delta = release.total_budget
    note = (f"Planned on a privately released covariance ({release.mechanism}, which cost ε = {eps:g}, δ = {delta:g} "
            "of the budget when it was released); planning on it is post-processing and costs nothing more. Ĉ is "
            "noisy, so the plan is approximate.")
    return PlanInput(data, bool(release.is_private), note, (eps, delta), labels=False)


# --------------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Probe:
    """One probed ε: how many of its releases met the target, and the q-quantile of the metric there."""

    epsilon: float
    met: int
    trials: int
    quantile: float

    @property
    def share(self) -> float:
        return self.met / self.trials if self.trials else float("nan")


@dataclass
class PlanResult:
    """The planner's answer. ``epsilon`` is None when the target is not met within the range (``reason`` says)."""

    mechanism: str
    target: Target
    confidence: float
    k: int
    delta: float
    epsilon: float | None
    estimate: float | None
    band: tuple[float, float] | None
    probes: list[Probe]
    private_inputs: bool
    notes: list[str] = field(default_factory=list)
    reason: str = ""
    eps_range: tuple[float, float] = DEFAULT_RANGE
    band_level: float = 0.95

    @property
    def band_factor(self) -> float | None:
        """ε_high / ε_low (how far apart the band's edges are)."""
        if self.band is None or self.band[0] <= 0:
            return None
        return self.band[1] / self.band[0]

    def as_dict(self) -> dict:
        return {
            "mechanism": self.mechanism, "target": str(self.target), "metric": self.target.metric,
            "target_value": self.target.value, "confidence": self.confidence, "k": self.k, "delta": self.delta,
            "epsilon": self.epsilon, "estimate": self.estimate,
            "band": None if self.band is None else list(self.band), "band_level": self.band_level,
            "band_factor": self.band_factor, "private_inputs": self.private_inputs, "notes": list(self.notes),
            "reason": self.reason, "range": list(self.eps_range),
            "probes": [{"epsilon": p.epsilon, "met": p.met, "trials": p.trials, "share": p.share,
                        "quantile": p.quantile} for p in sorted(self.probes, key=lambda p: p.epsilon)],
        }


#: Each target metric in words (an answer says what it is for).
TARGET_WORDS = {"captured_variance_ratio": "captured variance", "principal_angle_max_deg": "largest principal angle",
                "svm_accuracy": "SVM accuracy"}


def plan_context(result: PlanResult, neighbouring: str) -> str:
    """What a plan's answer is for, in words: the target and share, k, δ and the neighbouring relation."""
    from ..core.privacy import NEIGHBOURING_LABELS

    tgt = result.target
    unit = "°" if tgt.metric == "principal_angle_max_deg" else ""
    op = "≥" if tgt.op == ">=" else "≤"
    return (f"For {TARGET_WORDS.get(tgt.metric, tgt.metric)} {op} {tgt.value:g}{unit} in at least "
            f"{result.confidence:.0%} of releases, k = {result.k}, δ = {result.delta:g}, "
            f"{NEIGHBOURING_LABELS.get(neighbouring, neighbouring)} neighbours.")


def confidence_rule(result: PlanResult) -> str:
    """Why the answer can lie above a probe whose share met the target: the rule ``epsilon`` follows, in words,
    with the nearest such probe's numbers (empty when there is none)."""
    q, level = result.confidence, result.band_level
    rule = (f"The answer is the smallest probed ε at which the share of releases meeting the target is at least "
            f"{q:.0%} with {level:.0%} confidence: the lower end of that probe's two-sided {level:.0%} "
            f"Clopper–Pearson interval, over its releases, is at or above {q:.0%}.")
    if result.epsilon is None:
        return rule
    met = [p for p in result.probes if p.epsilon < result.epsilon and p.share >= q]
    if not met:
        return rule
    p = max(met, key=lambda p: p.epsilon)
    low = _cp_bounds(p.met, p.trials, level)[0]
    return (rule + f" A probe can meet the target in {q:.0%} of its releases and still fall short: at ε = "
            f"{p.epsilon:.4g}, {p.met} of {p.trials} releases ({p.share:.2f}) met it, but with {p.trials} releases "
            f"that share is consistent with a true share as low as {low:.2f}, so more ε is needed to be sure.")


def _cp_bounds(met: int, trials: int, level: float) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval of a binomial share at ``level``."""
    from scipy.stats import beta

    a = (1.0 - level) / 2.0
    lo = 0.0 if met == 0 else float(beta.ppf(a, met, trials - met + 1))
    hi = 1.0 if met == trials else float(beta.ppf(1.0 - a, met + 1, trials - met))
    return lo, hi


def _isotonic(probes: list[Probe]) -> tuple[np.ndarray, np.ndarray]:
    """(ε sorted, isotonic increasing fit of the shares, weighted by trials) — pool adjacent violators."""
    ps = sorted(probes, key=lambda p: p.epsilon)
    eps = np.array([p.epsilon for p in ps])
    blocks: list[list[float]] = []  # [weighted sum, weight, count of points]
    for p in ps:
        blocks.append([p.met, float(p.trials), 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w
            blocks[-1][2] += c
    fit = np.concatenate([np.full(int(c), s / w) for s, w, c in blocks])
    return eps, fit


def _confident(probes: list[Probe], q: float, level: float) -> tuple[float | None, float | None]:
    """(largest ε confidently below q, smallest ε confidently at or above q) under monotonicity."""
    ps = sorted(probes, key=lambda p: p.epsilon)
    bounds = [_cp_bounds(p.met, p.trials, level) for p in ps]
    lower = np.maximum.accumulate([b[0] for b in bounds])  # p(ε) ≥ lower at every probe at or below ε
    upper = np.minimum.accumulate([b[1] for b in bounds][::-1])[::-1]  # p(ε) ≤ upper at every probe at or above
    below = [p.epsilon for p, u in zip(ps, upper) if u < q]
    above = [p.epsilon for p, lo in zip(ps, lower) if lo >= q]
    return (max(below) if below else None), (min(above) if above else None)


def plan_epsilon(
    source: PlanInput | PreparedData,
    mechanism: str,
    target: Target | str,
    *,
    k: int = 2,
    delta: float = 1e-5,
    confidence: float = 0.9,
    trials: int = 100,
    eps_range: tuple[float, float] = DEFAULT_RANGE,
    tolerance: float = 1.1,
    max_probes: int = 24,
    band_level: float = 0.95,
    seed: int | None = None,
    neighbouring: str = Neighbouring.REPLACE,
    mechanism_options: dict | None = None,
    time_cap: float | None = 20.0,
    progress: Callable[[int, float], None] | None = None,
    on_releases: Callable[[float, int], None] | None = None,
) -> PlanResult:
    """Smallest ε in ``eps_range`` at which ``mechanism`` meets ``target`` in at least ``confidence`` of its releases.

    ``source``: a :class:`PlanInput` (:func:`public_input`, :func:`private_what_if`,
    :func:`released_covariance_input`); bare :class:`PreparedData` is treated as raw private data (what-if).
    ``trials`` releases per probed ε; ``tolerance`` the ratio at which the bisection bracket (and each band edge)
    stops narrowing; ``max_probes`` bounds the number of probed ε; ``seed`` seeds every probe's releases (child
    streams per cell, as in a sweep). See the module docstring for the fit, the band and the privacy of the answer.

    ``on_releases(ε, 1)`` is told of each simulated release as it finishes (in trial order; failed or capped cells
    too), so a caller counting releases on private data counts every one made even when the plan then raises.
    """
    from ..evaluation.sweep import run_sweep  # pandas and the mechanisms: loaded on use

    plan_in = source if isinstance(source, PlanInput) else private_what_if(source)
    tgt = parse_target(target) if isinstance(target, str) else target
    q, trials, max_probes, tolerance, (lo_eps, hi_eps) = _checked_search(confidence, band_level, trials,
                                                                          max_probes, tolerance, eps_range)
    delta = check_delta(delta)
    if tgt.metric == "svm_accuracy" and (not plan_in.labels or plan_in.data.y is None):
        raise InvalidParameterError("an svm target needs labelled data; this input has no labels (choose captured "
                                    "or angle).")
    seed = seed_or_fresh(seed)
    options = {mechanism: dict(mechanism_options)} if mechanism_options else {}
    probes: dict[float, Probe] = {}

    def probe(eps: float) -> Probe:
        eps = float(f"{eps:.6g}")  # public, readable values (the cell seeds are keyed by ε's repr)
        if eps in probes:
            return probes[eps]
        frame = run_sweep(plan_in.data, mechanisms=[mechanism], epsilons=[eps], deltas=[delta], ks=[k],
                          trials=trials, seed=seed, neighbouring=neighbouring, mechanism_options=options,
                          time_cap=time_cap, svm_holdout=svm_holdout(tgt),
                          progress=None if on_releases is None else lambda *_: on_releases(eps, 1))
        p = probes[eps] = _scored(eps, frame[tgt.metric].to_numpy(dtype=float), tgt, q)
        if progress is not None:
            progress(len(probes), eps)
        return p

    def result(epsilon, estimate, band, reason="") -> PlanResult:
        return PlanResult(mechanism, tgt, q, k, delta, epsilon, estimate, band, list(probes.values()),
                          plan_in.private_inputs, _notes(plan_in), reason, (lo_eps, hi_eps), float(band_level))

    top = probe(hi_eps)
    if _confident([top], q, band_level)[1] is None and top.share < q:
        return result(None, None, None, f"the target is not met in {q:.0%} of releases even at ε = {hi_eps:g} "
                                        "(the top of the range); relax the target or the confidence, or raise k.")
    bottom = probe(lo_eps)
    if bottom.share >= q:
        high_conf = _confident(list(probes.values()), q, band_level)[1] or lo_eps
        return result(high_conf, lo_eps, (lo_eps, high_conf),
                      f"the target is already met at ε = {lo_eps:g}, the bottom of the range.")

    def bracket() -> tuple[float, float]:
        eps, fit = _isotonic(list(probes.values()))
        below, above = eps[fit < q], eps[fit >= q]
        return float(below.max()), float(above.min())

    # 1. bisection in log ε on the isotonic fit
    a, b = bracket()
    while b / a > tolerance and len(probes) < max_probes:
        probe(math.sqrt(a * b))
        a, b = bracket()
    eps_sorted, fit = _isotonic(list(probes.values()))
    estimate = _crossing(eps_sorted, fit, q)

    # 2. tighten the band's edges (bisection on "confidently met" and on "confidently missed")
    def confident_edges() -> tuple[float, float]:
        low, high = _confident(list(probes.values()), q, band_level)
        return (low if low is not None else lo_eps), (high if high is not None else hi_eps)

    while len(probes) < max_probes:
        nxt = _next_edge_probe(list(probes), *confident_edges(), tolerance)
        if nxt is None or float(f"{nxt:.6g}") in probes:  # nothing left to tighten, or already probed
            break
        probe(nxt)
    low, high = confident_edges()
    notes_reason = "" if _confident(list(probes.values()), q, band_level)[1] is not None else (
        "no probe met the target confidently; the band's top is the range's top")
    return result(high, estimate, (low, high), notes_reason)


def _scored(eps: float, values: np.ndarray, target: Target, q: float) -> Probe:
    """A probe at ``eps``: how many of its releases' metric ``values`` meet ``target``, and their q-quantile."""
    finite = values[np.isfinite(values)]
    quant = float(np.quantile(finite, 1.0 - q if target.op == ">=" else q)) if finite.size else float("nan")
    return Probe(eps, int(target.met(values).sum()), int(values.size), quant)


def svm_holdout(target: Target) -> float:
    """The share of rows held out from the mechanisms while planning: the sweep's SVM hold-out for an SVM target
    (the classifier is scored on rows the mechanism did not see), none otherwise — a real release on the data sees
    every row, so the plan does too."""
    from .metrics import SVM_HOLDOUT

    return SVM_HOLDOUT if target.metric == "svm_accuracy" else 0.0


def _notes(plan_in: PlanInput) -> list[str]:
    """What the plan's input means for privacy (and what it cost, for a released covariance)."""
    notes = [plan_in.note]
    if plan_in.cost != (0.0, 0.0):
        notes.append(f"The input covariance cost ε = {plan_in.cost[0]:g}, δ = {plan_in.cost[1]:g}; a release at the "
                     "planned ε spends that ε on top (basic composition).")
    return notes


def _checked_search(confidence, band_level, trials, max_probes, tolerance, eps_range):
    """The search settings, checked: (q, trials, max_probes, tolerance, (low, high))."""
    if not 0.0 < float(confidence) < 1.0:
        raise InvalidParameterError(f"--confidence must lie in (0, 1), e.g. 0.9; got {confidence!r}.")
    if not 0.5 <= float(band_level) < 1.0:
        raise InvalidParameterError(f"band_level must lie in [0.5, 1), got {band_level!r}.")
    trials = check_int(trials, "trials", 10, 100_000)
    max_probes = check_int(max_probes, "max_probes", 3, 1000)
    tolerance = check_positive(tolerance, "tolerance")
    if tolerance <= 1.0:
        raise InvalidParameterError(f"tolerance is a ratio of ε values and must be > 1, got {tolerance:g}.")
    lo_eps, hi_eps = (float(eps_range[0]), float(eps_range[1]))
    if not (0 < lo_eps < hi_eps and math.isfinite(hi_eps)):
        raise InvalidParameterError(f"the ε range must satisfy 0 < low < high, got {eps_range!r}.")
    return float(confidence), trials, max_probes, tolerance, (lo_eps, hi_eps)


def _next_edge_probe(probed: list[float], low: float, high: float, tolerance: float) -> float | None:
    """The next ε that tightens the band [low, high] (the geometric midpoint of its widest gap between an edge and
    the nearest probe inside), or None when every such gap is within ``tolerance``."""
    inner = sorted(e for e in probed if low < e < high)
    gaps = []
    if inner and high / inner[-1] > tolerance:
        gaps.append((high / inner[-1], math.sqrt(high * inner[-1])))
    if inner and inner[0] / low > tolerance:
        gaps.append((inner[0] / low, math.sqrt(low * inner[0])))
    if not inner and high / low > tolerance:
        gaps.append((high / low, math.sqrt(high * low)))
    return max(gaps)[1] if gaps else None


def _crossing(eps: np.ndarray, fit: np.ndarray, q: float) -> float:
    """Where the isotonic fit crosses q, interpolated in log ε between the bracketing probes."""
    i = int(np.argmax(fit >= q))
    if i == 0:
        return float(eps[0])
    x0, x1, y0, y1 = math.log(eps[i - 1]), math.log(eps[i]), fit[i - 1], fit[i]
    t = 1.0 if y1 == y0 else (q - y0) / (y1 - y0)
    return float(math.exp(x0 + t * (x1 - x0)))
