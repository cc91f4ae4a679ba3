"""The session odometer (dpcore.core.odometer): basic and zCDP composition side by side, exact ρ per step, reset."""

from __future__ import annotations

import math

import pytest

from dpcore.core.odometer import RESET_NOTE, Odometer, gaussian_rho, zcdp_epsilon_tight
from dpcore.core.privacy import l2_sensitivity_upper_triangle, zcdp_delta, zcdp_epsilon, zcdp_rho
from dpcore.data import load_dataset, preprocess
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism


@pytest.fixture(scope="module")
def wine():
    return preprocess(load_dataset("wine"))


def test_an_analyze_gauss_release_counts_rho_from_its_own_noise(wine):
    release = get_mechanism("analyze_gauss").release(wine, 2, 1.0, 1e-5, random_state=1)
    odo = Odometer()
    [entry] = odo.record_release(release, "Explore")
    sigma = release.diagnostics["sigma"]  # the σ the release drew with
    delta2 = l2_sensitivity_upper_triangle("replace")
    assert entry.rho == pytest.approx(delta2**2 / (2 * sigma**2), rel=1e-9)
    assert (entry.epsilon, entry.delta, entry.relation) == (1.0, 1e-5, "replace")
    assert "Explore" in entry.what and entry.private


def test_the_classical_calibration_too(wine):
    release = get_mechanism("analyze_gauss").release(wine, 2, 0.5, 1e-5, random_state=1, calibration="classical")
    [entry] = Odometer().record_release(release, "x")
    sigma = release.diagnostics["sigma"]
    assert entry.rho == pytest.approx(2.0 / (2 * sigma**2), rel=1e-9)


def test_basic_and_zcdp_totals_side_by_side(wine):
    odo = Odometer()
    release = get_mechanism("analyze_gauss").release(wine, 2, 0.5, 1e-6, random_state=1)
    for _ in range(20):
        odo.record_release(release, "Sample size")
    t = odo.totals()
    assert t.count == 20 and t.basic_epsilon == pytest.approx(10.0) and t.basic_delta == pytest.approx(2e-5)
    assert t.zcdp_rho == pytest.approx(20 * gaussian_rho(0.5, 1e-6))
    assert t.zcdp_delta == pytest.approx(2e-5)
    assert t.zcdp_epsilon == pytest.approx(zcdp_epsilon_tight(t.zcdp_rho, 2e-5))
    assert t.zcdp_epsilon < t.basic_epsilon  # many Gaussian releases: zCDP composes more tightly
    assert t.all_private and t.relations == ("replace",)


def test_pure_releases_count_eps_squared_over_two(wine):
    release = get_mechanism("laplace").release(wine, 2, 0.8, 0.0, random_state=1)
    entries = Odometer().record_release(release, "Inspect")
    assert sum(e.epsilon for e in entries) == pytest.approx(0.8)
    assert sum(e.rho for e in entries) == pytest.approx(sum(e.epsilon**2 / 2 for e in entries))


def test_ppm_counts_the_rho_it_was_calibrated_with(wine):
    release = get_mechanism("ppm").release(wine, 2, 1.0, 1e-5, random_state=1)
    entries = Odometer().record_release(release, "what-if")
    assert sum(e.rho for e in entries) == pytest.approx(zcdp_rho(1.0, 1e-5))


def test_dp_centring_is_counted_with_its_gaussian_rho():
    data = preprocess(load_dataset("wine"), centering="dp", centering_epsilon=0.2, centering_delta=1e-6,
                      random_state=3)
    release = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=1)
    entries = Odometer().record_release(release, "Explore")
    assert len(entries) == 2 and entries[0].epsilon == 0.2 and "centring" in entries[0].what
    assert entries[0].rho == pytest.approx(gaussian_rho(0.2, 1e-6))


def test_a_step_without_exact_rho_leaves_basic_only():
    odo = Odometer()
    odo.record(1.0, 1e-5, "replace", "Explore: analyze_gauss", rho=gaussian_rho(1.0, 1e-5))
    odo.record(0.5, 1e-6, "replace", "audit: some (ε, δ) mechanism")
    t = odo.totals()
    assert t.basic_epsilon == pytest.approx(1.5) and t.zcdp_rho is None and t.zcdp_epsilon is None
    assert t.zcdp_note.startswith("basic only") and "audit" in t.zcdp_note


def test_mixed_relations_and_non_private_releases_are_flagged(wine):
    odo = Odometer()
    odo.record(1.0, 0.0, "replace", "a", rho=0.5)
    odo.record(1.0, 0.0, "add_remove", "b", rho=0.5)
    assert any("neighbouring relations" in n for n in odo.totals().notes)
    odo.record_release(get_mechanism("pca").release(wine, 2, 1.0, 0.0), "reference")
    t = odo.totals()
    assert not t.all_private and any("not private" in n for n in t.notes)


def test_reset_forgets_and_refunds_nothing():
    odo = Odometer()
    odo.record(1.0, 0.0, "replace", "a", rho=0.5)
    note = odo.reset()
    assert note == RESET_NOTE and "nothing is refunded" in note and "forgets the count" in note
    t = odo.totals()
    assert t.count == 0 and t.basic_epsilon == 0 and t.zcdp_epsilon == 0


@pytest.mark.parametrize("eps, delta, rho", [(-1.0, 0.0, None), (math.inf, 0.0, None), (1.0, 1.0, None),
                                             (1.0, 0.0, -0.1)])
def test_bad_steps_are_refused(eps, delta, rho):
    with pytest.raises(InvalidParameterError):
        Odometer().record(eps, delta, "replace", "x", rho=rho)


def test_dp_centring_counts_once_per_preprocessing_key():
    data = preprocess(load_dataset("wine"), centering="dp", centering_epsilon=0.2, centering_delta=1e-6,
                      random_state=3)
    odo = Odometer()
    mech = get_mechanism("analyze_gauss")
    for seed in (1, 2, 3):
        odo.record_release(mech.release(data, 2, 1.0, 1e-5, random_state=seed), "Inspect",
                           preprocessing_key=data.fingerprint)
    t = odo.totals()
    assert t.count == 4 and t.basic_epsilon == pytest.approx(3.2)  # one DP mean + three releases
    odo.record_release(mech.release(data, 2, 1.0, 1e-5, random_state=4), "Inspect")  # no key: counted again
    assert odo.totals().basic_epsilon == pytest.approx(4.4)


def test_a_sweep_counts_every_release_that_ran(wine):
    from dpcore.evaluation.sweep import run_sweep

    frame = run_sweep(wine, mechanisms=["analyze_gauss", "laplace", "random", "pca"], epsilons=[0.5, 1.0],
                      deltas=[1e-5], ks=[2], trials=3, seed=1)
    odo = Odometer()
    odo.record_sweep(frame, "Explore", preprocessing=wine.ledger, preprocessing_key=wine.fingerprint)
    t = odo.totals()
    # analyze_gauss, laplace (and pca, NOT private, no ε): 2 ε × 3 trials each; random is data-independent
    assert t.count == 12 + 6 and t.basic_epsilon == pytest.approx(2 * 3 * 1.5)
    assert t.basic_delta == pytest.approx(6 * 1e-5)
    assert t.zcdp_rho == pytest.approx(3 * (gaussian_rho(0.5, 1e-5) + gaussian_rho(1.0, 1e-5))
                                       + 3 * (0.5**2 + 1.0**2) / 2)
    assert not t.all_private  # the exact-PCA reference line
    counted = len(odo.entries)
    frame.loc[frame["mechanism"] == "laplace", "status"] = "error"
    odo.record_sweep(frame, "Explore")
    assert len(odo.entries) - counted == 6 + 6  # a failed cell published nothing
    counted = len(odo.entries)
    frame.loc[frame["mechanism"] == "laplace", "status"] = "timeout"
    odo.record_sweep(frame, "Explore")
    assert len(odo.entries) - counted == 6 + 6 + 6  # a capped release ran on the data, and the page says it was capped


def test_the_basic_only_note_names_each_kind_of_step_once():
    odo = Odometer()
    for _ in range(5):
        odo.record(0.5, 1e-6, "replace", "Explore: mod_sulq")
    odo.record(0.5, 1e-6, "replace", "Explore: other")
    assert odo.totals().zcdp_note == "basic only: no exact zCDP conversion for Explore: mod_sulq; Explore: other"


def test_a_ledger_released_together_counts_its_spending_steps():
    from dpcore.core.privacy import LedgerEntry

    ledger = [LedgerEntry("free scree", 0.0), LedgerEntry("histogram (Laplace)", 0.5),
              LedgerEntry("histogram (Gaussian)", 0.3, 1e-6)]
    entries = Odometer().record_ledger(ledger, "replace", "Inspect: pictures")
    assert [(e.epsilon, e.delta) for e in entries] == [(0.5, 0.0), (0.3, 1e-6)]
    assert entries[0].rho == pytest.approx(0.125) and entries[1].rho is None
    assert entries[0].what == "Inspect: pictures: histogram (Laplace)"


def test_a_tiny_rho_is_zero_epsilon_at_its_delta():
    assert zcdp_delta(1e-6, 0.0) <= 1e-3 and zcdp_epsilon_tight(1e-6, 1e-3) == 0.0


@pytest.mark.parametrize("rho, delta", [(0.01, 1e-6), (0.5, 1e-5), (3.0, 1e-8), (1e-4, 1e-3)])
def test_the_zcdp_column_is_the_tight_conversion(rho, delta):
    eps = zcdp_epsilon_tight(rho, delta)
    assert zcdp_delta(rho, eps) <= delta  # valid: ρ-zCDP implies (ε, δ)-DP at the ε shown
    assert zcdp_delta(rho, eps * (1 - 1e-6)) > delta  # and the smallest such ε (to the bisection's precision)
    assert eps < zcdp_epsilon(rho, delta)  # tighter than Bun & Steinke's ρ + 2√(ρ ln(1/δ))


# ------------------------------------------------------------------ exact ρ declared by the mechanisms
def _noise_rho(release, sensitivity: float) -> float:
    sigma = release.diagnostics["sigma"]
    return sensitivity**2 / (2 * sigma**2)


def test_mechanisms_declare_the_rho_of_their_gaussian_noise(wine):
    """Mechanism.zcdp_rho is Δ²/(2σ²) of the noise each release actually drew (MOD-SULQ: σ = nβ on C; g-DPPCA:
    Δ = √2/m on K), so the odometer's zCDP column is exact where it used to say 'basic only'."""
    from dpcore.mechanisms import release_rho

    mod = get_mechanism("mod_sulq").release(wine, 2, 1.0, 1e-5, random_state=1)
    sigma = wine.n * mod.diagnostics["beta"]
    assert release_rho("mod_sulq", 1.0, 1e-5, n=wine.n, d=wine.d, neighbouring="replace") == pytest.approx(
        2.0 / (2 * sigma**2), rel=1e-9)
    assert release_rho("mod_sulq", 1.0, 1e-5, n=None, d=wine.d) is None  # n not public: no exact ρ
    g = get_mechanism("g_dppca").release(wine, 2, 1.0, 1e-5, random_state=1)
    m = g.diagnostics["pairs"]
    assert release_rho("g_dppca", 1.0, 1e-5, n=wine.n, d=wine.d) == pytest.approx(
        _noise_rho(g, math.sqrt(2) / m), rel=1e-9)
    assert release_rho("laplace", 1.0, 0.0) is None and release_rho("no_such_mechanism", 1.0, 1e-5) is None


def test_every_odometer_asks_the_mechanisms_for_their_rho(wine):
    """A bare Odometer() gets the mechanisms' declared ρ (no caller has to pass rho_of); rho_of=None opts out."""
    from dpcore.evaluation.sweep import run_sweep
    from dpcore.mechanisms import release_rho

    frame = run_sweep(wine, mechanisms=["mod_sulq", "analyze_gauss", "ppm"], epsilons=[1.0], deltas=[1e-5], ks=[2],
                      trials=2, seed=1)
    plain = Odometer(rho_of=None)
    plain.record_sweep(frame, "Explore")
    assert plain.totals().zcdp_rho is None  # without the mechanisms' ρ: basic only (no mechanism id is special)
    asked = Odometer()
    asked.record_sweep(frame, "Explore")
    want = 2 * (release_rho("mod_sulq", 1.0, 1e-5, n=wine.n, d=wine.d) + gaussian_rho(1.0, 1e-5)
                + zcdp_rho(1.0, 1e-5))
    assert asked.totals().zcdp_rho == pytest.approx(want, rel=1e-9)
    release = get_mechanism("mod_sulq").release(wine, 2, 1.0, 1e-5, random_state=2)
    [entry] = Odometer().record_release(release, "Inspect")
    assert entry.rho == pytest.approx(release_rho("mod_sulq", 1.0, 1e-5, n=wine.n, d=wine.d), rel=1e-12)


@pytest.mark.parametrize("calibration", ["analytic", "classical"])
def test_ppm_and_analyze_gauss_declare_their_rho_through_the_hook(calibration):
    """The ρ the odometer used to special-case by id is the mechanisms' own Mechanism.zcdp_rho, with the same
    numbers: PPM's zCDP calibration ρ(ε, δ), Analyze Gauss's ρ = 1/(2σ₁²)."""
    from dpcore.mechanisms import release_rho

    assert get_mechanism("ppm").zcdp_rho(1.0, 1e-5, n=None, d=4, neighbouring="add_remove", options={}) == \
        zcdp_rho(1.0, 1e-5)
    assert release_rho("ppm", 0.5, 1e-6, d=4, options={"iterations": 7}) == zcdp_rho(0.5, 1e-6)
    assert release_rho("ppm", 1.0, 0.0) is None  # PPM needs δ > 0: no ρ, as before
    assert release_rho("analyze_gauss", 0.5, 1e-5, options={"calibration": calibration}) == \
        gaussian_rho(0.5, 1e-5, calibration)
    [entry] = Odometer().record_runs("ppm", "approx", 1.0, 1e-5, "replace", "ε planner", 1)
    assert entry.rho == zcdp_rho(1.0, 1e-5)
