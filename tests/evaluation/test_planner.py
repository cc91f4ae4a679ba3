"""The inverse planner (dpcore.evaluation.planner) against a brute-force sweep on three data sets, its band, its
privacy labels and its released-covariance input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.data import load_csv, load_dataset, load_schema, preprocess
from dpcore.data.prepared import PreparedData
from dpcore.data.synthetic import make_css_synthetic
from dpcore.evaluation.metrics import evaluate
from dpcore.evaluation.planner import (
    NON_PRIVATE_NOTE,
    Probe,
    _confident,
    _isotonic,
    make_target,
    parse_target,
    plan_epsilon,
    private_what_if,
    public_input,
    released_covariance_input,
    svm_holdout,
)
from dpcore.evaluation.sweep import cell_seed, plan_sweep
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism

Q = 0.9
PLAN_TRIALS = 200
CHECK_TRIALS = 400
GRID_RATIO = 1.2
SEED = 11


def _wine() -> PreparedData:
    return preprocess(load_dataset("wine"))


def _upload() -> PreparedData:
    """An upload-like table: a small CSV with a public schema (bounds, categories, the label), loaded as a user's."""
    rng = np.random.default_rng(0)
    n = 400
    z = rng.normal(size=(n, 2))
    frame = pd.DataFrame({
        "a": np.clip(50 + 20 * z[:, 0], 0, 100).round(1),
        "b": np.clip(50 + 15 * z[:, 0] + 5 * rng.normal(size=n), 0, 100).round(1),
        "c": np.clip(50 + 10 * z[:, 1], 0, 100).round(1),
        "e": np.clip(50 + 5 * rng.normal(size=n), 0, 100).round(1),
        "g": rng.choice(["x", "y"], size=n),
        "lab": np.where(z[:, 0] > 0, "yes", "no"),
    })
    schema = load_schema({"dpcore_schema": 1, "format": {"kind": "csv"}, "label": "lab", "columns": [
        *({"name": c, "role": "numeric", "lower": 0, "upper": 100} for c in "abce"),
        {"name": "g", "role": "categorical", "categories": ["x", "y"]}, {"name": "lab", "role": "label"}]})
    return preprocess(load_csv(frame.to_csv(index=False).encode(), schema=schema, name="upload"),
                      centering="public")


def _synthetic() -> PreparedData:
    X, _ = make_css_synthetic(n=1000, seed=5)
    return preprocess(X, feature_scaling="none", norm_bound=1.0)


CASES = {
    "wine": (_wine, public_input, "captured>=0.9"),
    "upload": (_upload, private_what_if, "svm>=0.85"),
    "synthetic": (_synthetic, public_input, "angle<=15"),
}


def _shares(data: PreparedData, target: str, epsilons: list[float], seed: int, first_trial: int = PLAN_TRIALS,
            trials: int = CHECK_TRIALS) -> dict[float, float]:
    """Brute force: the share of fresh releases meeting the target at each ε — the sweep's cells (same seed, so the
    same rows reach the mechanism and the same SVM split) at trial indices the planner did not use, so their noise
    streams are independent of the planner's."""
    tgt = parse_target(target)
    plan = plan_sweep(data, mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[2], trials=1,
                      seed=seed, svm_holdout=svm_holdout(tgt))
    mech = get_mechanism("analyze_gauss")
    out = {}
    for eps in epsilons:
        values = []
        for trial in range(first_trial, first_trial + trials):
            release = mech.release(plan.mech_data, 2, eps, 1e-5, random_state=cell_seed(
                seed, "analyze_gauss", float(eps), 1e-5, 2, trial, plan.mech_data.n))
            values.append(evaluate(release, plan.mech_data, plan.split)[tgt.metric])
        out[float(eps)] = float(tgt.met(np.array(values)).mean())
    return out


@pytest.fixture(scope="module", params=sorted(CASES))
def planned(request):
    make, wrap, target = CASES[request.param]
    data = make()
    result = plan_epsilon(wrap(data), "analyze_gauss", target, k=2, confidence=Q, trials=PLAN_TRIALS, seed=SEED)
    return request.param, data, target, result


@pytest.mark.slow  # the module's plan fixture: 200 releases per probe on three data sets
def test_the_planner_matches_a_brute_force_sweep_within_its_band(planned):
    name, data, target, result = planned
    assert result.epsilon is not None, result.reason
    low, high = result.band
    assert low < result.estimate <= high and result.epsilon == high
    # a grid around the band, with its two edges on it; fresh releases (another seed than the planner's)
    grid = sorted({*np.geomspace(low / GRID_RATIO**2, high * GRID_RATIO**2, 7).round(6).tolist(), low, high})
    shares = _shares(data, target, grid, seed=SEED)
    tolerance = 3.0 * math.sqrt(Q * (1 - Q) / CHECK_TRIALS)  # the fresh share's own sampling error (3 SE)
    # at the returned ε the target holds in ≥ q of fresh releases (up to their sampling error) …
    assert shares[high] >= Q - tolerance, (name, shares)
    # … and at ε / (band factor) = the band's low edge it fails
    assert result.epsilon / result.band_factor == pytest.approx(low)
    assert shares[low] < Q, (name, shares)
    # the brute-force answer (the smallest grid ε from which on every share reaches q) lies in the band, up to
    # one grid step above it (the fresh share at the band's top is itself within its sampling error of q)
    first = min((e for e in grid if all(shares[f] >= Q for f in grid if f >= e)), default=math.inf)
    step_up = min((e for e in grid if e > high), default=high)
    assert low < first <= step_up, (name, shares, result.band)
    # the band's edges are what the probes say: confidently below at low, confidently above at high
    assert _confident(result.probes, Q, result.band_level) == (low, high)


@pytest.mark.slow  # the module's plan fixture: 200 releases per probe on three data sets
def test_the_brute_force_helper_replays_the_planners_releases(planned):
    """Trials 0..PLAN_TRIALS−1 of the helper are the planner's own releases: its counts come back exactly."""
    _, data, target, result = planned
    probe = min(result.probes, key=lambda p: abs(math.log(p.epsilon / result.epsilon)))
    shares = _shares(data, target, [probe.epsilon], SEED, first_trial=0, trials=PLAN_TRIALS)
    assert shares[probe.epsilon] == pytest.approx(probe.share)


def test_the_mechanism_sees_every_row_unless_the_target_is_the_svm():
    data = _wine()
    for target, rows in (("captured>=0.9", data.n), ("svm>=0.8", None)):
        plan = plan_sweep(data, mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[2], trials=1,
                          seed=1, svm_holdout=svm_holdout(parse_target(target)))
        assert plan.mech_data.n == rows if rows else plan.mech_data.n < data.n


@pytest.mark.slow  # the module's plan fixture: 200 releases per probe on three data sets
def test_the_planners_privacy_label(planned):
    name, _, _, result = planned
    assert result.private_inputs == (name != "upload")
    assert (NON_PRIVATE_NOTE in result.notes) == (name == "upload")
    assert result.as_dict()["private_inputs"] == result.private_inputs


@pytest.mark.slow  # the module's plan fixture: 200 releases per probe on three data sets
def test_the_search_is_a_bisection_not_a_grid(planned):
    _, _, _, result = planned
    # a grid over [0.01, 100] at the planner's resolution (ratio 1.1) would need ~97 points; bisection needs
    # log₂ of that for the bracket plus a few to tighten each band edge
    grid_points = math.log(1e4) / math.log(1.1)
    assert len(result.probes) <= 24 < grid_points / 4
    assert sum(low_high_contains(result, p.epsilon) for p in result.probes) >= 2


def low_high_contains(result, eps: float) -> bool:
    return result.band[0] <= eps <= result.band[1]


def test_the_same_seed_gives_the_same_plan():
    data = _wine()
    a = plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.8", trials=50, seed=3)
    b = plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.8", trials=50, seed=3)
    assert a.as_dict() == b.as_dict()


def test_an_unreachable_target_says_so():
    result = plan_epsilon(public_input(_wine()), "analyze_gauss", "captured>=0.9999", trials=20, seed=1,
                          eps_range=(0.01, 1.0))
    assert result.epsilon is None and result.band is None
    assert "not met" in result.reason and len(result.probes) == 1


def test_a_target_met_at_the_bottom_of_the_range():
    result = plan_epsilon(public_input(_wine()), "pca", "captured>=0.9", trials=20, seed=1)
    assert result.estimate == 0.01 and "bottom of the range" in result.reason


def test_bare_data_is_taken_as_private():
    result = plan_epsilon(_wine(), "analyze_gauss", "captured>=0.5", trials=20, seed=1, max_probes=4)
    assert result.private_inputs is False and NON_PRIVATE_NOTE in result.notes


def test_isotonic_fit_pools_violators():
    probes = [Probe(1.0, 5, 10, 0.0), Probe(2.0, 3, 10, 0.0), Probe(4.0, 9, 10, 0.0)]
    eps, fit = _isotonic(probes)
    assert eps.tolist() == [1.0, 2.0, 4.0]
    assert fit.tolist() == pytest.approx([0.4, 0.4, 0.9])


@pytest.mark.parametrize("text, metric, value", [
    ("captured>=0.9", "captured_variance_ratio", 0.9), ("angle <= 10", "principal_angle_max_deg", 10.0),
    ("svm>=0.8", "svm_accuracy", 0.8), ("captured_variance_ratio≥0.5", "captured_variance_ratio", 0.5)])
def test_parse_target(text, metric, value):
    t = parse_target(text)
    assert (t.metric, t.value) == (metric, value)


@pytest.mark.parametrize("text", ["captured<=0.9", "angle>=10", "foo>=1", "captured>=2", "angle<=95", "captured"])
def test_bad_targets_are_refused(text):
    with pytest.raises(InvalidParameterError, match="--target"):
        parse_target(text)


def test_bad_planner_arguments_are_refused():
    data = _wine()
    with pytest.raises(InvalidParameterError, match="confidence"):
        plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.9", confidence=1.0)
    with pytest.raises(InvalidParameterError, match="range"):
        plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.9", eps_range=(1.0, 0.5))
    with pytest.raises(InvalidParameterError, match="tolerance"):
        plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.9", tolerance=1.0)
    assert make_target("angle", 10).metric == "principal_angle_max_deg"


# --------------------------------------------------------------------------------------------------
# Planning on a privately released covariance
# --------------------------------------------------------------------------------------------------

def test_a_released_covariance_becomes_rows_with_exactly_that_covariance():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 2, 2.0, 1e-5, random_state=7)
    source = released_covariance_input(release)
    X = source.data.X
    assert source.data.n == release.n and np.linalg.norm(X, axis=1).max() <= 1.0 + 1e-12
    assert np.allclose(source.data.C, release.covariance_post, atol=1e-9)
    assert source.private_inputs is True and source.cost == release.total_budget
    assert "costs nothing more" in source.note and f"ε = {release.total_budget[0]:g}" in source.note


def test_planning_on_a_released_covariance_is_private_and_close_to_the_truth():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 2, 5.0, 1e-5, random_state=7)
    source = released_covariance_input(release)
    result = plan_epsilon(source, "analyze_gauss", "captured>=0.9", trials=100, seed=5)
    assert result.private_inputs is True and result.epsilon is not None
    assert any("cost ε = 5" in note for note in result.notes)
    truth = plan_epsilon(public_input(data), "analyze_gauss", "captured>=0.9", trials=100, seed=5)
    assert 0.25 < result.estimate / truth.estimate < 4.0  # the same order: Ĉ is a noisy proxy
    with pytest.raises(InvalidParameterError, match="labelled"):
        plan_epsilon(source, "analyze_gauss", "svm>=0.8", trials=20)


def test_a_released_covariance_needs_a_public_n_under_add_remove():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, neighbouring="add_remove", random_state=1)
    with pytest.raises(InvalidParameterError, match="public n"):
        released_covariance_input(release)
    assert released_covariance_input(release, n=178).data.n == 178


def test_a_subspace_release_cannot_be_planned_on():
    release = get_mechanism("ppm").release(_wine(), 2, 1.0, 1e-5, random_state=1)
    if release.covariance_post is None:
        with pytest.raises(InvalidParameterError, match="no covariance"):
            released_covariance_input(release)


@pytest.mark.parametrize("name", ["upload", "synthetic"])
def test_a_quick_plan_carries_the_privacy_label_of_its_input(name):
    """The fast tier's check of the label (the slow tier checks it on the full plans)."""
    make, wrap, target = CASES[name]
    result = plan_epsilon(wrap(make()), "analyze_gauss", target, k=2, confidence=Q, trials=20, seed=SEED)
    assert result.private_inputs == (name != "upload")
    assert (NON_PRIVATE_NOTE in result.notes) == (name == "upload")
