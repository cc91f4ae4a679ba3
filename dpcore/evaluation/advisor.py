"""Clipping advisor: utility of a mechanism versus the candidate norm bound B (bias–noise trade-off of clipping).

A public norm bound B trades two errors. A small B clips many rows (x ← x·min(1, B/‖x‖)), which biases the second
moment the mechanism sees; a large B clips nothing but the noise, calibrated to rows of norm ≤ B, grows like B² in
the data's units. :func:`clipping_utility_curve` releases the mechanism on the data clipped to each candidate B and
scores the released subspace against the data's TRUE top-k subspace (same scaling and centring, no clipping), so
both errors show up in one curve, next to the fraction of rows each B clips.

NON-PRIVATE diagnostic: it reads the true data (norm quantiles, unclipped reference). Picking B from it is a
data-dependent, non-private choice, unless the curve is computed on public or similar (e.g. synthetic) data.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..core._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_k,
    check_time_limit,
)
from ..core.privacy import LedgerEntry
from ..core.seeding import seed_or_fresh
from ..core.timing import Deadline
from ..data import Dataset, PreparedData, clip_fraction_curve, preprocess, suggest_norm_bounds
from ..data.preprocess import CENTERINGS, FEATURE_SCALINGS, as_dataset
from ..exceptions import InvalidParameterError, MechanismTimeout, PrivacyLeakWarning
from ..mechanisms import Mechanism, get_mechanism, list_mechanisms
from ..vocabulary import Centering, FeatureScaling, Guarantee, Neighbouring, NormMode, ReleaseStatus
from .metrics import captured_variance_ratio, principal_angle_max_deg

#: Columns of :func:`clipping_utility_curve`'s result.
CURVE_COLUMNS = (
    "norm_bound",
    "clip_fraction",
    "captured_variance_ratio",
    "captured_variance_ratio_std",
    "principal_angle_max_deg",
    "principal_angle_max_deg_std",
    "n_ok",
)

#: Number of candidate bounds in the default grid.
DEFAULT_NUM_CANDIDATES = 12
#: Quantile of the row norms at the small end of the default grid.
LOW_QUANTILE = 0.05

ProgressCallback = Callable[[int, int, str], "bool | None"]
#: Told of each release as it is made, with its status (ok, ⊥, or capped at the time limit).
ReleaseCallback = Callable[[str], None]
#: Told of each budget-spending preprocessing step as it is drawn (a DP mean under DP centring).
PreprocessingCallback = Callable[[LedgerEntry], None]


def advisor_mechanisms() -> list[Mechanism]:
    """Registry mechanisms suited to the interactive advisor: private, covariance output, one-shot cost.

    Covariance-perturbation mechanisms (``output == "covariance"``) with a pure or approximate DP guarantee and a
    one-shot release (``Mechanism.one_shot``: no rejection sampling, MCMC or iterations, which are too slow for a
    grid of B × trials).
    """
    return [m for m in list_mechanisms()
            if m.output == "covariance" and m.guarantee in (Guarantee.PURE, Guarantee.APPROX) and m.one_shot]


def default_candidates(dataset: Dataset | np.ndarray, num: int = DEFAULT_NUM_CANDIDATES, *,
                       feature_scaling: str = FeatureScaling.SCHEMA, centering: str = Centering.NONE,
                       center: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """A log-spaced grid of ``num`` bounds from the 5 % quantile of the row norms to the largest possible norm.

    The top is the public default bound (e.g. √d after schema scaling, where nothing is clipped) or, without one,
    the largest observed norm. NON-PRIVATE: the quantiles read the data.
    """
    num = check_int(num, "number of candidates", 2, 200)
    q = suggest_norm_bounds(dataset, (LOW_QUANTILE, 1.0), feature_scaling=feature_scaling, centering=centering,
                            center=center)
    lo, top = float(q["norm_bound"].iloc[0]), float(q["norm_bound"].iloc[1])
    hi = max(top, _public_bound(dataset, feature_scaling, centering, center) or 0.0)
    if not (hi > 0 and math.isfinite(hi)):
        raise InvalidParameterError("every row is zero after scaling and centring; there is no norm to bound.")
    if not (0 < lo < hi):
        lo = hi / 100.0
    return np.geomspace(lo, hi, num)


def _public_bound(dataset, feature_scaling: str, centering: str, center) -> float | None:
    """The public default B of :func:`preprocess` (no clipping by construction), or None when there is none.

    That default depends only on public metadata (the schema, a public centre, a documented bound), never on the
    rows, so it is read off a one-row copy instead of preprocessing the whole dataset.
    """
    ds = as_dataset(dataset)
    one_row = replace(ds, X=ds.X[:1], y=None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return float(preprocess(one_row, feature_scaling=feature_scaling,
                                    centering=Centering.EMPIRICAL if centering == Centering.DP else centering,
                                    center=center).norm_bound)
    except InvalidParameterError:
        return None


def _reference(dataset, feature_scaling: str, centering: str, center, bound: float) -> PreparedData:
    """Same scaling and centring, no clipping (B above every row norm). A DP centre is replaced by the true mean."""
    ref_centering = Centering.EMPIRICAL if centering == Centering.DP else centering
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ref = preprocess(dataset, feature_scaling=feature_scaling, centering=ref_centering, center=center,
                         norm_bound=bound, norm_mode=NormMode.CLIP)
    if ref.clip_fraction > 0:  # pragma: no cover - bound is above the largest norm by construction
        raise AssertionError("the unclipped reference clipped rows")
    return ref


@dataclass(frozen=True)
class _CurveSettings:
    """:func:`clipping_utility_curve`'s arguments after validation."""

    mech: Mechanism
    feature_scaling: str
    centering: str
    neighbouring: str
    epsilon: float
    delta: float
    k: int
    trials: int
    seed: int
    options: dict


def _check_curve_settings(dataset: Dataset | np.ndarray, *, mechanism: str, epsilon: float, delta: float, k: int,
                          trials: int, seed: int | None, feature_scaling: str, centering: str, neighbouring: str,
                          mechanism_options: dict) -> _CurveSettings:
    """Validate the curve's arguments once (mechanism, budget, k, trials, seed; a fresh seed when None)."""
    mech = get_mechanism(mechanism)
    feature_scaling = check_choice(feature_scaling, "feature_scaling", FEATURE_SCALINGS)
    centering = check_choice(centering, "centering", CENTERINGS)
    neighbouring = mech.check_neighbouring(neighbouring)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=mech.uses_delta) if mech.uses_delta else 0.0
    trials = check_int(trials, "trials", 1, 1000)
    seed = seed_or_fresh(seed)
    options = mech.validate_options(mechanism_options)
    k = check_k(k, as_dataset(dataset).X.shape[1], strict=mech.strict_k)  # scaling and centring keep d
    if mech.invalid:
        raise InvalidParameterError(f"{mech.name} is claimed-invalid (not private); the clipping advisor only "
                                    "runs mechanisms with a valid guarantee — choose another mechanism.")
    return _CurveSettings(mech, feature_scaling, centering, neighbouring, epsilon, delta, k, trials, seed, options)


def _candidate_clip_fractions(dataset: Dataset | np.ndarray, candidates: Sequence[float] | np.ndarray | None,
                              num_candidates: int, *, feature_scaling: str, centering: str,
                              center: Sequence[float] | np.ndarray | None) -> pd.DataFrame:
    """The candidate bounds (given, or :func:`default_candidates`), validated and sorted, with their clip fractions."""
    if candidates is None:
        cand = default_candidates(dataset, num_candidates, feature_scaling=feature_scaling, centering=centering,
                                  center=center)
    else:
        try:
            cand = np.asarray(candidates, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise InvalidParameterError("candidates must be a list of positive, finite norm bounds; got "
                                        f"{candidates!r}.") from None
    # validates the candidates (non-empty, positive, finite), sorts them, and counts the clipped rows
    return clip_fraction_curve(dataset, cand, feature_scaling=feature_scaling, centering=centering, center=center)


def _unclipped_reference(dataset: Dataset | np.ndarray, largest_candidate: float, *, feature_scaling: str,
                         centering: str, center: Sequence[float] | np.ndarray | None) -> PreparedData:
    """The reference of every score: the data with a bound above its largest row norm and every candidate."""
    top_norm = float(suggest_norm_bounds(dataset, (1.0,), feature_scaling=feature_scaling, centering=centering,
                                         center=center)["norm_bound"].iloc[0])
    return _reference(dataset, feature_scaling, centering, center,
                      max(top_norm * (1.0 + 1e-9), largest_candidate, 1e-300))


@dataclass
class _TrialScores:
    """Scores of every (candidate, trial) release (NaN: ⊥ or not run), the runs done, the releases stopped at the
    time cap, whether all ran, and the budget-spending preprocessing steps drawn (a DP mean per candidate and trial
    under DP centring)."""

    cvr: np.ndarray
    angle: np.ndarray
    done: int = 0
    capped: int = 0
    complete: bool = True
    preprocessing: list = field(default_factory=list)


def _score_trials(dataset: Dataset | np.ndarray, bounds: np.ndarray, reference: PreparedData, s: _CurveSettings, *,
                  center: Sequence[float] | np.ndarray | None, centering_epsilon: float, deadline: Deadline,
                  time_limit: float | None, progress: ProgressCallback | None,
                  on_release: ReleaseCallback | None = None,
                  on_preprocessing: PreprocessingCallback | None = None) -> _TrialScores:
    """Release the mechanism ``s.trials`` times at every bound and score each release against ``reference``.

    Common random numbers: trial t draws its preprocessing and mechanism noise from the same seeds at every B.
    Stops early (``complete=False``) when the deadline passes, a release times out or ``progress`` returns False.
    ``on_preprocessing`` is told of each DP mean as soon as it is drawn and ``on_release`` of each release as soon as
    it is made (its status; a capped one too), before anything else runs.
    """
    V_ref = reference.eigenvectors[:, :s.k]
    total = bounds.size * s.trials
    scores = _TrialScores(np.full((bounds.size, s.trials), np.nan), np.full((bounds.size, s.trials), np.nan))
    seeds = [np.random.SeedSequence([s.seed, t, 0xC11B]).spawn(2) for t in range(s.trials)]

    def prepare(bound: float, pre_seed: np.random.SeedSequence) -> PreparedData:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return preprocess(dataset, feature_scaling=s.feature_scaling, norm_bound=float(bound),
                              norm_mode=NormMode.CLIP, centering=s.centering, center=center,
                              neighbouring=s.neighbouring,
                              random_state=pre_seed,
                              **({"centering_epsilon": centering_epsilon} if s.centering == Centering.DP else {}))

    for i, bound in enumerate(bounds):
        data = None
        for t in range(s.trials):
            if not scores.complete:
                break
            if deadline.expired:
                scores.complete = False
                break
            pre_seed, mech_seed = seeds[t]  # SeedSequence.generate_state is stateless: same streams at every B
            if data is None or s.centering == Centering.DP:  # only a DP centre is random: else prepare once per B
                data = prepare(bound, pre_seed)
                for step in (e for e in data.ledger if e.epsilon > 0 or e.delta > 0):  # each a release
                    scores.preprocessing.append(step)
                    if on_preprocessing is not None:
                        on_preprocessing(step)
            try:
                release = s.mech.release(data, s.k, s.epsilon, s.delta, neighbouring=s.neighbouring,
                                         random_state=mech_seed,
                                         time_limit=max(deadline.remaining, 1e-3) if time_limit else None,
                                         **s.options)
            except MechanismTimeout:  # when it stopped depends on the data: a release, as a capped sweep cell is
                scores.capped += 1
                scores.complete = False
                if on_release is not None:
                    on_release(ReleaseStatus.TIMEOUT)
                break
            if on_release is not None:
                on_release(ReleaseStatus.BOTTOM if release.is_bottom else ReleaseStatus.OK)
            if not release.is_bottom:
                scores.cvr[i, t] = captured_variance_ratio(reference.C, release.subspace, reference.eigenvalues)
                scores.angle[i, t] = principal_angle_max_deg(V_ref, release.subspace)
            scores.done += 1
            if progress is not None and progress(scores.done, total,
                                                 f"B = {bound:.4g}, trial {t + 1} of {s.trials}") is False:
                scores.complete = False
    return scores


def clipping_utility_curve(
    dataset: Dataset | np.ndarray,
    candidates: Sequence[float] | np.ndarray | None = None,
    *,
    mechanism: str = "analyze_gauss",
    epsilon: float = 1.0,
    delta: float = 1e-5,
    k: int = 2,
    trials: int = 3,
    seed: int | None = None,
    feature_scaling: str = FeatureScaling.SCHEMA,
    centering: str = Centering.NONE,
    center: Sequence[float] | np.ndarray | None = None,
    neighbouring: str = Neighbouring.REPLACE,
    centering_epsilon: float = 0.1,
    num_candidates: int = DEFAULT_NUM_CANDIDATES,
    time_limit: float | None = 60.0,
    progress: ProgressCallback | None = None,
    on_release: ReleaseCallback | None = None,
    on_preprocessing: PreprocessingCallback | None = None,
    **mechanism_options,
) -> pd.DataFrame:
    """Utility of ``mechanism`` versus the public norm bound B, with the fraction of rows each B clips.

    NON-PRIVATE DIAGNOSTIC: it uses the true data (the default grid comes from the row norms, and every release is
    scored against the unclipped data). Choosing B from this curve is a data-dependent, non-private choice, unless
    it is computed on public or similar data (e.g. an earlier public release or synthetic data of the same kind).

    For each candidate B the data is preprocessed with that public B (``norm_mode="clip"``, the given scaling and
    centring), released ``trials`` times, and each released subspace V̂ is scored against the reference second
    moment C of the same scaling and centring WITHOUT clipping (the data's true top-k subspace; a DP centre is
    replaced by the true mean there): captured-variance ratio tr(V̂ᵀCV̂)/Σ_{i≤k}λᵢ and the largest principal angle.
    A small B shows the clipping bias, a large B the noise. Trial t uses the same seed at every B (common random
    numbers), so neighbouring candidates are compared on the same noise draws. Deterministic given ``seed``
    (None: a fresh seed from OS entropy).

    ``centering="dp"`` spends ``centering_epsilon`` on a DP mean at every B (re-drawn per trial).
    ``candidates`` None: :func:`default_candidates` (``num_candidates`` log-spaced bounds from the 5 % quantile
    of the row norms to the largest possible norm). ``time_limit`` caps the whole run (seconds, None: no cap); when
    it runs out, or ``progress(done, total, text)`` returns False, the remaining candidates get NaN metrics and
    ``n_ok = 0`` and ``frame.attrs["complete"]`` is False. ``frame.attrs["runs"]`` counts the releases that finished,
    ``frame.attrs["capped"]`` those stopped at the time cap (0 or 1) and ``frame.attrs["preprocessing_ledger"]`` the
    budget-spending preprocessing steps drawn (one DP mean per candidate and trial under DP centring): what an
    odometer must count. To count them however the run ends (an error, an interruption), take them as they happen:
    ``on_release(status)`` is told of each release as it is made (ok, ⊥, or capped: when a release stops at the cap
    depends on the data) and ``on_preprocessing(entry)`` of each DP mean as it is drawn.

    Returns a DataFrame with columns :data:`CURVE_COLUMNS` (one row per candidate, increasing B); metric columns
    are the mean (and standard deviation) over the trials whose release was not ⊥ (``n_ok`` of them).
    """
    time_limit = check_time_limit(time_limit)
    deadline = Deadline(time_limit)  # the cap covers the set-up (norms, reference spectrum) too
    started = time.perf_counter()
    s = _check_curve_settings(dataset, mechanism=mechanism, epsilon=epsilon, delta=delta, k=k, trials=trials,
                              seed=seed, feature_scaling=feature_scaling, centering=centering,
                              neighbouring=neighbouring, mechanism_options=mechanism_options)
    where = dict(feature_scaling=s.feature_scaling, centering=s.centering, center=center)
    clip = _candidate_clip_fractions(dataset, candidates, num_candidates, **where)
    bounds = clip["norm_bound"].to_numpy(dtype=float)
    reference = _unclipped_reference(dataset, float(bounds[-1]), **where)
    scores = _score_trials(dataset, bounds, reference, s, center=center, centering_epsilon=centering_epsilon,
                           deadline=deadline, time_limit=time_limit, progress=progress, on_release=on_release,
                           on_preprocessing=on_preprocessing)

    n_ok = np.sum(np.isfinite(scores.cvr), axis=1)
    cvr_mean, cvr_sd = _mean_sd(scores.cvr, n_ok)
    angle_mean, angle_sd = _mean_sd(scores.angle, n_ok)
    frame = pd.DataFrame({
        "norm_bound": bounds,
        "clip_fraction": clip["clip_fraction"].to_numpy(dtype=float),
        "captured_variance_ratio": cvr_mean,
        "captured_variance_ratio_std": cvr_sd,
        "principal_angle_max_deg": angle_mean,
        "principal_angle_max_deg_std": angle_sd,
        "n_ok": n_ok.astype(int),
    }, columns=list(CURVE_COLUMNS))
    frame.attrs.update(mechanism=s.mech.id, guarantee=s.mech.guarantee, epsilon=s.epsilon, delta=s.delta, k=s.k,
                       trials=s.trials, seed=s.seed, feature_scaling=s.feature_scaling, centering=s.centering,
                       neighbouring=s.neighbouring, complete=scores.complete, runs=scores.done, capped=scores.capped,
                       preprocessing_ledger=tuple(scores.preprocessing),
                       runtime_s=time.perf_counter() - started, private=False)
    return frame


def _mean_sd(values: np.ndarray, n_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise mean and sample sd over the non-NaN entries (``n_ok`` of them: NaN without any; sd 0 with one)."""
    with warnings.catch_warnings():  # a row without any result is NaN, as intended
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=1)
        sd = np.nanstd(values, axis=1, ddof=1)
    return mean, np.where(n_ok == 1, 0.0, sd)


def best_norm_bound(curve: pd.DataFrame) -> float | None:
    """The candidate B with the highest mean captured-variance ratio (None when no candidate has a result)."""
    if "captured_variance_ratio" not in curve or "norm_bound" not in curve:
        raise InvalidParameterError("expected a frame from clipping_utility_curve (norm_bound, "
                                    "captured_variance_ratio columns).")
    values = curve["captured_variance_ratio"].to_numpy(dtype=float)
    if not np.isfinite(values).any():
        return None
    return float(curve["norm_bound"].to_numpy(dtype=float)[int(np.nanargmax(values))])


__all__ = ["CURVE_COLUMNS", "DEFAULT_NUM_CANDIDATES", "advisor_mechanisms", "best_norm_bound", "clipping_utility_curve",
           "default_candidates"]
