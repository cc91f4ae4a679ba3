"""IT-U / AD / KT / PPM / PPCA mechanisms: shapes, guarantees, budgets (add up to ε exactly), caps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _unit_rows import unit_rows

from dpcore.core.privacy import zcdp_rho
from dpcore.data import PreparedData
from dpcore.exceptions import InvalidParameterError, MechanismTimeout
from dpcore.mechanisms import get_mechanism, mechanism_ids
from dpcore.mechanisms.itu import ad_tau, exact_shares
from dpcore.mechanisms.ppm import default_iterations, hardt_price_sigma, ppm_sigma


@pytest.fixture(scope="module")
def data() -> PreparedData:
    return PreparedData(unit_rows(1500, 7, seed=3), name="synthetic")


def _spent(release) -> float:
    total = 0.0
    for entry in release.ledger:  # sequential sum, as ledger_total does
        total += entry.epsilon
    return total


def test_registered_ids():
    ids = set(mechanism_ids())
    assert {"ppca", "itu", "ad", "kt", "ppm"} <= ids
    assert get_mechanism("ppca").guarantee == "heuristic-mcmc"
    assert get_mechanism("ppm").uses_delta and get_mechanism("ppm").guarantee == "approx"
    for mid in ("itu", "ad", "kt"):
        assert get_mechanism(mid).guarantee == "pure"
    # no broken "always accept" sampler is exposed as a mechanism
    assert not any("accept" in mid for mid in ids)


@pytest.mark.parametrize("mid", ["itu", "ad"])
@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("exponent", ["paper", "tight"])
def test_iterative_outputs_and_budget(data, mid, k, exponent):
    eps = 1.3
    r = get_mechanism(mid).release(data, k, eps, random_state=11, exponent=exponent)
    d = data.d
    assert r.guarantee == "pure"
    assert r.subspace.shape == (d, k)
    assert np.allclose(r.subspace.T @ r.subspace, np.eye(k), atol=1e-10)
    assert r.eigenvalues.shape == (k,)
    assert np.all(r.eigenvalues >= 0) and np.all(r.eigenvalues <= data.n)
    assert np.all(np.diff(r.eigenvalues) <= 0)  # sorted, paired with the i-th draw
    # Ĉ = Σ λ̂ θ̂θ̂ᵀ: PSD with spectrum λ̂ (plus zeros) and θ̂ as eigenvectors
    w = np.sort(np.linalg.eigvalsh(r.covariance))[::-1]
    assert w[:k] == pytest.approx(np.sort(r.eigenvalues)[::-1], abs=1e-8 * data.n)
    assert np.allclose(w[k:], 0.0, atol=1e-8 * data.n)
    # budget: one entry for the eigenvalues, one per vector; adds up to ε exactly
    assert len(r.ledger) == 1 + k
    assert r.ledger[0].epsilon == pytest.approx(eps / 2)
    assert _spent(r) == eps
    assert len(r.diagnostics["proposals_per_vector"]) == k
    assert all(p >= 1 for p in r.diagnostics["proposals_per_vector"])


def test_itu_uniform_split_and_free_last_vector(data):
    d, eps = data.d, 1.0
    r = get_mechanism("itu").release(data, 3, eps, random_state=1)
    assert [e.epsilon for e in r.ledger[1:]] == pytest.approx([eps / 6] * 3)
    full = get_mechanism("itu").release(data, d, eps, random_state=1)
    vec = [e.epsilon for e in full.ledger[1:]]
    assert vec[-1] == 0.0 and "free" in full.ledger[-1].step
    assert vec[:-1] == pytest.approx([eps / (2 * (d - 1))] * (d - 1))
    assert _spent(full) == eps
    assert np.allclose(full.subspace.T @ full.subspace, np.eye(d), atol=1e-10)


def test_ad_split_follows_private_eigenvalues(data):
    r = get_mechanism("ad").release(data, 4, 2.0, random_state=5, beta=0.05)
    lam = r.eigenvalues
    tau = r.diagnostics["tau"]
    assert tau == pytest.approx(ad_tau(1.0, data.d, 0.05))
    weights = np.sqrt(lam + tau)
    assert [e.epsilon for e in r.ledger[1:]] == pytest.approx(list(1.0 * weights / weights.sum()))
    assert _spent(r) == 2.0


def test_ad_tau_reference_value():
    assert ad_tau(0.5, 13, 0.05) == pytest.approx(25.0153, abs=1e-4)
    assert ad_tau(0.5, 13, 0.05, "add_remove") == pytest.approx(25.0153 / 2, abs=1e-4)


def test_exact_shares_add_up():
    for total in (1.0, 0.3, 7.77, 1e-3):
        shares = exact_shares(total, total / 2, [0.1, 2.0, 3.3, 0.7, 1.1])
        acc = 0.0
        for s in shares:
            acc += s
        assert acc == total


def test_itu_recovers_strong_direction():
    """Large n·ε: the first released direction is close to the top eigenvector (utility sanity check)."""
    X = unit_rows(20000, 6, seed=4, spectrum=np.array([25.0, 1, 1, 1, 1, 1]))
    pd = PreparedData(X)
    r = get_mechanism("itu").release(pd, 1, 5.0, random_state=2)
    assert abs(float(r.subspace[:, 0] @ pd.eigenvectors[:, 0])) > 0.95


def test_kt_shapes_and_budget(data):
    eps, k = 1.0, 3
    r = get_mechanism("kt").release(data, k, eps, random_state=3)
    assert r.guarantee == "pure" and r.subspace.shape == (data.d, k)
    assert len(r.ledger) == 2 * k
    assert [e.epsilon for e in r.ledger[:-1]] == pytest.approx([eps / (2 * k)] * (2 * k - 1))
    assert _spent(r) == eps
    lam = np.array(r.diagnostics["lambda_hat"])
    assert np.all(lam >= 0) and np.all(lam <= data.n)
    r2 = get_mechanism("kt").release(data, k, eps, random_state=3, vector_fraction=0.8)
    assert r2.ledger[0].epsilon == pytest.approx(0.8 * eps / k)
    assert _spent(r2) == eps


def test_ppm_reference_values():
    assert zcdp_rho(1.0, 1e-5) == pytest.approx(0.0208199, abs=1e-7)
    assert ppm_sigma(1.0, 1e-5, 20) == pytest.approx(30.9938, abs=1e-4)
    assert ppm_sigma(1.0, 1e-5, 20, "add_remove") == pytest.approx(30.9938 / math.sqrt(2), abs=1e-4)
    assert hardt_price_sigma(1.0, 1e-5, 5, 20) == pytest.approx(67.8614, abs=1e-4)
    assert default_iterations(64) == math.ceil(3 * math.log(64))


def test_ppm_shapes_and_budget(data):
    r = get_mechanism("ppm").release(data, 2, 1.0, 1e-5, random_state=4, iterations=15)
    assert r.guarantee == "approx"
    assert r.subspace.shape == (data.d, 2)
    assert np.allclose(r.subspace.T @ r.subspace, np.eye(2), atol=1e-10)
    assert r.budget_spent == (1.0, 1e-5)
    assert r.diagnostics["iterations"] == 15
    assert r.diagnostics["sigma"] == pytest.approx(ppm_sigma(1.0, 1e-5, 15))
    with pytest.raises(InvalidParameterError):
        get_mechanism("ppm").release(data, 2, 1.0, 0.0)  # δ required


def test_ppca_k1_is_exact_and_pure(data):
    r = get_mechanism("ppca").release(data, 1, 1.0, random_state=6)
    assert r.guarantee == "pure"
    assert r.diagnostics["sampler"] == "kent-exact"
    assert r.subspace.shape == (data.d, 1)
    assert _spent(r) == 1.0


def test_ppca_gibbs_heuristic_with_traces(data):
    r = get_mechanism("ppca").release(data, 2, 1.0, random_state=7, burn_in=50, chains=3)
    assert r.guarantee == "heuristic-mcmc"
    assert r.subspace.shape == (data.d, 2)
    assert np.allclose(r.subspace.T @ r.subspace, np.eye(2), atol=1e-10)
    diag = r.diagnostics
    assert diag["f_traces"].shape == (3, 50)
    assert diag["trace_scans"].shape == (50,)
    assert isinstance(diag["converged"], bool)
    assert diag["convergence"] == "not converged (too few scans to judge)"  # 3 chains × 25 judged scans < 100
    assert diag["converged"] is False and diag["stat_traces"].shape == (3, 50, 3)
    assert diag["final_f"].shape == (3,)  # F_k(T): reported, no longer the verdict
    assert _spent(r) == 1.0
    assert get_mechanism("ppca").guarantee_for(1, {}) == "pure"
    assert get_mechanism("ppca").guarantee_for(3, {}) == "heuristic-mcmc"


def test_ppca_requires_k_below_d(data):
    with pytest.raises(InvalidParameterError):
        get_mechanism("ppca").release(data, data.d, 1.0)


def test_ppca_short_burn_in_is_flagged_not_converged():
    X = unit_rows(3000, 10, seed=8)
    r = get_mechanism("ppca").release(X, 2, 1.0, random_state=1, burn_in=5, chains=2)
    assert r.diagnostics["converged"] is False  # 5 scans: too few to judge


@pytest.mark.parametrize("mid,kwargs", [("ppca", {"burn_in": 100000}), ("itu", {}), ("ad", {}), ("kt", {}),
                                        ("ppm", {"iterations": 10_000})])
def test_time_cap_raises(mid, kwargs):
    X = unit_rows(2000, 30, seed=9)
    delta = 1e-5 if mid == "ppm" else 0.0
    with pytest.raises(MechanismTimeout):
        get_mechanism(mid).release(X, 5, 1.0, delta, time_limit=1e-6, random_state=0, **kwargs)


def test_seeded_releases_are_reproducible(data):
    for mid in ("itu", "ad", "kt", "ppca"):
        a = get_mechanism(mid).release(data, 2, 1.0, random_state=42, **({"burn_in": 20} if mid == "ppca" else {}))
        b = get_mechanism(mid).release(data, 2, 1.0, random_state=42, **({"burn_in": 20} if mid == "ppca" else {}))
        assert np.array_equal(a.subspace, b.subspace)
