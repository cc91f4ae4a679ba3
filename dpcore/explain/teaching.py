"""The computations behind the dashboard's "Privacy basics" lesson (no Streamlit import; pages only draw these).

Four small live demos on a built-in public dataset (Wine, 178 rows):

* :func:`epsilon_demo` — what ε means: a noisy count on two datasets that differ in one record, whose output
  densities never differ by more than a factor e^ε;
* :func:`record_release_demo` — what δ allows: "publish one random record with probability δ·n" is (0, δ)-DP
  under replace-one, so δ = 1/n publishes a real row every time (a teaching option only, never a setting);
* :func:`neighbouring_comparison` — the same mechanism (Analyze Gauss) under replace-one and add/remove: σ and the
  sensitivity Δ₂ from the mechanism's own release, and utility vs ε from a sweep;
* :func:`invalid_exhibits` — the δ statements of the claimed-invalid mechanisms (:mod:`dpcore.explain.statements`).

Every demo reads the true (public) data; exact values are labelled as such by the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core._validation import check_delta, check_epsilon, check_int
from ..core.privacy import GUARANTEE_LABELS, NEIGHBOURING_LABELS, l2_sensitivity_upper_triangle
from ..core.seeding import RandomState, Stage, fresh_seed, stage_rng
from ..data.datasets import Dataset, load_dataset
from ..data.prepared import PreparedData
from ..data.preprocess import preprocess
from ..evaluation.sweep import run_sweep, summarise
from ..exceptions import InvalidParameterError
from ..mechanisms import get_mechanism, list_mechanisms
from .display import delta_vs_n_warning
from .statements import delta_statement

__all__ = [
    "GLOSSARY",
    "LESSON_DATASET",
    "DeltaChoice",
    "EpsilonDemo",
    "NeighbouringComparison",
    "RecordRelease",
    "delta_choices",
    "epsilon_demo",
    "invalid_exhibits",
    "lesson_data",
    "neighbouring_comparison",
    "record_release_demo",
]

#: The built-in (public) dataset of every demo.
LESSON_DATASET = "wine"
#: The counting query of the ε demo: a public column and threshold of the Wine data.
COUNT_COLUMN, COUNT_THRESHOLD = "alcohol", 13.0
#: δ values a real release may use (the app's δ menu) — the lesson compares them with 1/n.
SAFE_DELTAS = (1e-5, 1e-6)
COMPARISON_MECHANISM = "analyze_gauss"
COMPARISON_EPSILONS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)

GLOSSARY: tuple[tuple[str, str], ...] = (
    ("ε (epsilon)",
     "The privacy budget. Changing one person's record can change the probability of any outcome by at most a "
     "factor $e^{\\varepsilon}$. Smaller ε = better privacy and more noise; ε = 1 means a factor of at most 2.7. "
     "It is a bound on what *any* attacker can learn, whatever they already know."),
    ("δ (delta)",
     "An additive slack in the $e^{\\varepsilon}$ bound: for every set of outcomes S, P[M(D) ∈ S] ≤ "
     "$e^{\\varepsilon}$·P[M(D′) ∈ S] + δ. It is not “the probability that the bound fails” — (ε, δ)-DP is weaker "
     "than “ε-DP except with probability δ”. It should be much smaller than 1/n (e.g. 10⁻⁵ or less); a δ of 1/n "
     "would allow publishing one person's record outright. Pure ε-DP mechanisms have δ = 0."),
    ("Replace-one vs add/remove neighbours",
     "Two datasets are neighbours if they differ in one person. *Replace-one*: same n, one record swapped (n is "
     "public). *Add/remove*: one record added or deleted, so n itself is private: no released number may be clipped "
     "to [0, n] or divided by the exact n. Replacing is at most an add plus a remove, so a mechanism never needs "
     "more than twice the noise under replace-one, and often less: for AG the sensitivity is √2 vs 1, since the "
     "Frobenius norm of xxᵀ − yyᵀ is at most √2 for rows of norm ≤ 1."),
    ("Claimed-invalid",
     "A mechanism published with a privacy proof that is wrong. The app keeps two (the SN and Jiang Wishart "
     "mechanisms) as labelled exhibits, drawn dashed and red: a proven counterexample shows that, at a given ε, "
     "no δ below a stated value makes them private."),
    ("Norm bound and clipping",
     "Every row is scaled by a public bound B and rows longer than B are clipped, so ‖x‖ ≤ 1. That bounds how much "
     "one person can move C = Σ xxᵀ, which is what the noise is calibrated to. Too small a B clips many rows "
     "(bias); too large a B wastes the budget on noise (variance). B must be chosen without looking at the data."),
    ("Why data-dependent preprocessing is not private",
     "Centring on the empirical mean, scaling by the observed maximum or choosing B from the data all use the data "
     "*before* the noise is added, and none of it is paid for in ε. One outlier can change them, and that change "
     "shows in the output. Use public bounds, or spend part of the budget on a DP estimate; the ledger marks "
     "unpaid steps in red."),
    ("Public bounds and the schema of an upload",
     "Scaling a column by its observed minimum and maximum, or one-hot encoding the categories that happen to occur, "
     "reads the data before any noise is added: the largest income in the file moves every scaled value, and a "
     "category seen once reveals that someone has it. A *public schema* fixes each column's range and category list "
     "from public knowledge (a codebook, the instrument's scale). Then every step is per record — values outside the "
     "range are clamped, unseen categories become all-zero indicators — and costs no budget. The Data page drafts "
     "a schema from the data, marks those values red, and turns the ledger green once you replace or confirm them; "
     "the what-if numbers then show the utility of the pipeline you would really run."),
    ("Why utility metrics use the true data",
     "Captured variance, principal angles, Frobenius error and SVM accuracy compare the private output with the "
     "truth, so they must read the true data. That is fine in this sandbox, where you evaluate mechanisms, but "
     "the charts themselves are not private releases and should not be published as such."),
)


def lesson_data() -> tuple[Dataset, PreparedData]:
    """The lesson's dataset, raw and preprocessed with its public schema (every ledger step private)."""
    dataset = load_dataset(LESSON_DATASET)
    return dataset, preprocess(dataset)


# --------------------------------------------------------------------------------------------------
# (a) what ε means
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EpsilonDemo:
    """A Laplace count on D (all rows) and D′ (one counted row removed): densities on ``grid`` and one release."""

    epsilon: float
    question: str
    true_count: int  #: exact (NOT private): shown only to explain the picture
    grid: np.ndarray
    density_with: np.ndarray  #: output density on D
    density_without: np.ndarray  #: output density on D′ (one person fewer)
    largest_ratio: float  #: max over the grid of the two densities' ratio (either way): at most e^ε
    release: float  #: one noisy answer on D (ε-DP)
    guarantee: str

    @property
    def bound(self) -> float:
        """e^ε, the largest factor the definition allows."""
        return math.exp(self.epsilon)


#: Keys of the demos' own random streams (each demo draws from its own child of the mechanism stage, so one draw
#: number never gives two demos the same noise).
_EPSILON_DEMO, _RECORD_DEMO = 1, 2


def epsilon_demo(epsilon: float, random_state: RandomState = None, dataset: Dataset | None = None) -> EpsilonDemo:
    """The Laplace mechanism on a count (sensitivity 1): noise of scale 1/ε, on D and on D′ = D minus one counted
    row. One release on D is drawn from the MECHANISM stream of ``random_state``."""
    epsilon = check_epsilon(epsilon)
    dataset = dataset if dataset is not None else load_dataset(LESSON_DATASET)
    column = dataset.feature_names.index(COUNT_COLUMN)
    count = int(np.count_nonzero(dataset.X[:, column] > COUNT_THRESHOLD))
    scale = 1.0 / epsilon
    grid = np.linspace(count - 1 - 6 * scale, count + 6 * scale, 601)
    with_d = np.exp(-np.abs(grid - count) / scale) / (2 * scale)
    without_d = np.exp(-np.abs(grid - (count - 1)) / scale) / (2 * scale)
    ratio = float(np.max(np.maximum(with_d / without_d, without_d / with_d)))
    noisy = float(count + stage_rng(random_state, Stage.MECHANISM, _EPSILON_DEMO).laplace(0.0, scale))
    return EpsilonDemo(
        epsilon=epsilon, question=f"How many wines have {COUNT_COLUMN} above {COUNT_THRESHOLD:g} %?",
        true_count=count, grid=grid, density_with=with_d, density_without=without_d, largest_ratio=ratio,
        release=noisy, guarantee=(f"{epsilon:g}-DP (pure ε-DP, Laplace noise of scale 1/ε = {scale:.3g}; either "
                                  "neighbouring relation: one record moves a count by at most 1)"))


# --------------------------------------------------------------------------------------------------
# (b) δ and 1/n
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeltaChoice:
    """One δ of the lesson's menu; ``teaching_only`` marks δ = 1/n (unsafe: never a setting of a real release)."""

    delta: float
    label: str
    teaching_only: bool = False


def delta_choices(n: int) -> tuple[DeltaChoice, ...]:
    """The lesson's δ menu for a dataset of ``n`` rows: the app's usual values, then 1/n (teaching only)."""
    n = check_int(n, "n", 2)
    # "far below 1/n" by the same rule the other pages use to flag δ (dpcore.explain.display.delta_vs_n_warning)
    safe = tuple(DeltaChoice(d, f"δ = {d:g} (a usual choice: far below 1/n)" if delta_vs_n_warning(d, n) is None
                             else f"δ = {d:g} (NOT far below 1/n)") for d in SAFE_DELTAS)
    return (*safe, DeltaChoice(1.0 / n, f"δ = 1/n = {1.0 / n:.3g} — TEACHING ONLY, NOT SAFE", teaching_only=True))


@dataclass(frozen=True)
class RecordRelease:
    """One run of "publish one random record with probability δ·n" (else publish nothing)."""

    delta: float
    n: int
    publish_probability: float  #: δ·n (capped at 1)
    record: dict[str, float] | None  #: the published row, verbatim — a real person's record — or None
    guarantee: str

    @property
    def per_person_probability(self) -> float:
        """Probability that one given person's record is published: δ."""
        return self.publish_probability / self.n


def record_release_demo(delta: float, random_state: RandomState = None,
                        dataset: Dataset | None = None) -> RecordRelease:
    """Run the (0, δ)-DP "publish a random record" mechanism once (replace-one: n is public).

    Each person's record is published with probability δ, so two datasets that differ in one record give
    probabilities that differ by at most δ on every event: (0, δ)-DP. At δ = 1/n it publishes a real row every time.
    """
    delta = check_delta(delta, required=True)
    dataset = dataset if dataset is not None else load_dataset(LESSON_DATASET)
    n = dataset.n
    if delta * n > 1.0 + 1e-12:
        raise InvalidParameterError(f"δ = {delta:g} is above 1/n = {1.0 / n:.3g}: the demo stops at 1/n.")
    p = min(1.0, delta * n)
    rng = stage_rng(random_state, Stage.MECHANISM, _RECORD_DEMO)
    record = None
    if rng.random() < p:
        row = dataset.X[int(rng.integers(n))]
        record = {name: float(v) for name, v in zip(dataset.feature_names, row)}
    return RecordRelease(delta=delta, n=n, publish_probability=p, record=record,
                         guarantee=f"(0, {delta:.3g})-DP under replace-one (ε = 0: the privacy comes only from δ)")


# --------------------------------------------------------------------------------------------------
# (c) replace-one vs add/remove
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NeighbouringComparison:
    """Analyze Gauss under both relations: one row per relation at ``epsilon`` and a utility/σ table per ε."""

    mechanism: str
    epsilon: float
    delta: float
    k: int
    trials: int
    relations: pd.DataFrame  #: relation, label, sensitivity (Δ₂), sigma, guarantee — at ``epsilon``
    curves: pd.DataFrame  #: relation, label, epsilon, sigma, captured_variance_ratio (mean, std over trials)


def neighbouring_comparison(data: PreparedData, epsilon: float = 1.0, delta: float = 1e-5, k: int = 2,
                            epsilons: Sequence[float] = COMPARISON_EPSILONS, trials: int = 20,
                            seed: int | None = None) -> NeighbouringComparison:
    """The same mechanism under replace-one and add/remove. σ is read from the mechanism's own release (its
    calibration code), Δ₂ from the sensitivity function it calls, utility from
    :func:`~dpcore.evaluation.sweep.run_sweep`."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    mech = get_mechanism(COMPARISON_MECHANISM)
    if seed is None:  # one fresh seed for both relations (common random numbers), never a fixed default
        seed = fresh_seed()
    eps_grid = sorted({float(check_epsilon(e)) for e in (*epsilons, epsilon)})
    rows, curves = [], []
    for relation in mech.neighbourings:
        label = NEIGHBOURING_LABELS[relation]

        def sigma_at(eps: float, rel: str = relation) -> float:
            release = mech.release(data, k, eps, delta, neighbouring=rel, random_state=seed)
            return float(release.diagnostics["sigma"])

        rows.append({"relation": relation, "label": label, "sensitivity": l2_sensitivity_upper_triangle(relation),
                     "sigma": sigma_at(epsilon),
                     "guarantee": f"({epsilon:g}, {delta:g})-DP, {label}"})
        frame = run_sweep(data, mechanisms=[mech.id], epsilons=eps_grid, deltas=[delta], ks=[k], trials=trials,
                          seed=seed, neighbouring=relation)
        summary = summarise(frame, by=("epsilon",))
        for _, row in summary.iterrows():
            eps = float(row["epsilon"])
            curves.append({"relation": relation, "label": label, "epsilon": eps, "sigma": sigma_at(eps),
                           "captured_variance_ratio": float(row["captured_variance_ratio_mean"]),
                           "captured_variance_ratio_std": float(row["captured_variance_ratio_std"])})
    return NeighbouringComparison(mechanism=mech.name, epsilon=epsilon, delta=delta, k=k, trials=trials,
                                  relations=pd.DataFrame(rows), curves=pd.DataFrame(curves))


# --------------------------------------------------------------------------------------------------
# (d) claimed-invalid
# --------------------------------------------------------------------------------------------------

def invalid_exhibits(epsilon: float) -> pd.DataFrame:
    """Every claimed-invalid mechanism: name, guarantee and its δ statement at ``epsilon``."""
    epsilon = check_epsilon(epsilon)
    rows = []
    for mech in list_mechanisms():
        cex = mech.counterexample_delta(epsilon)
        if mech.invalid and cex is not None:
            rows.append({"id": mech.id, "name": mech.name, "guarantee": GUARANTEE_LABELS[mech.guarantee],
                         "counterexample_delta": float(cex),
                         "statement": delta_statement(epsilon, cex, subject=mech.name.split(" — ")[0])})
    return pd.DataFrame(rows, columns=["id", "name", "guarantee", "counterexample_delta", "statement"])
