"""Reproductions of the leaks found by the 2026-11-23 privacy review (issue "Privacy correctness"), one test each.

Every test here failed on the code before the fix; the numbers in the comments are the review's measurements on
that code. The registry-wide neighbouring-pair suite is ``test_privacy_regression.py``.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import dpcore.core.seeding
from dpcore import cli
from dpcore.core.privacy import Diagnostics, gaussian_sigma
from dpcore.data import Dataset, preprocess
from dpcore.estimator import DPPCA
from dpcore.exceptions import InvalidParameterError, PrivacyLeakWarning
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.wishart_sheffet import sheffet_degrees_of_freedom, support_event_probability
from pages.ui import state as ui_state

ALPHA = 1e-6
APP = str(Path(__file__).resolve().parents[2] / "app.py")


# --------------------------------------------------------------------------------------------------
# 1. ss_exact released the member rows' singular vectors (δ = 1)
# --------------------------------------------------------------------------------------------------

def _plane_pair(n: int = 70, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """n points in the x–y plane of R³, and the same with one in-plane point moved elsewhere in the plane."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 3))
    X[:, :2] = rng.standard_normal((n, 2)) * [1.0, 0.05]  # elongated: the rows' top singular vector is ≈ e₁
    X /= np.linalg.norm(X, axis=1).max()
    Y = X.copy()
    Y[0, :2] = [0.0, 0.9]  # still in the plane, but it turns the rows' singular vectors
    return X, Y


def test_ss_exact_basis_is_identical_on_neighbours_with_the_same_subspace():
    X, Y = _plane_pair()
    mech = get_mechanism("ss_exact")
    for seed in range(20):
        a = mech.release(X, 2, 1.0, 1e-6, random_state=seed)
        b = mech.release(Y, 2, 1.0, 1e-6, random_state=seed)
        assert not a.is_bottom and not b.is_bottom
        np.testing.assert_allclose(a.projector, b.projector, atol=1e-12)
        # before the fix: (0.998611, 0.052691, 0) vs (0.995709, 0.092536, 0) for every seed
        np.testing.assert_allclose(a.subspace, b.subspace, atol=1e-10)


@pytest.mark.slow
def test_ss_exact_basis_is_uniform_over_the_bases_of_the_subspace():
    """The angle of the first basis vector inside the plane is uniform on (−π, π] (Haar), whatever the rows."""
    X, _ = _plane_pair()
    mech = get_mechanism("ss_exact")
    rng = np.random.default_rng(11)
    angles = []
    for _ in range(400):
        v = mech.release(X, 2, 1.0, 1e-6, random_state=rng).subspace[:, 0]
        assert abs(v[2]) < 1e-12
        angles.append(math.atan2(v[1], v[0]))
    assert stats.kstest(angles, stats.uniform(loc=-math.pi, scale=2 * math.pi).cdf).pvalue > ALPHA
    # power: the old basis (the rows' own top singular vector, ±e₁ up to a few degrees) is far from uniform
    assert stats.kstest(np.full(400, 0.05), stats.uniform(loc=-math.pi, scale=2 * math.pi).cdf).pvalue < ALPHA


# --------------------------------------------------------------------------------------------------
# 2. one integer seeded both the DP mean and the mechanism: their noise cancelled exactly
# --------------------------------------------------------------------------------------------------

def _dp_centred(X: np.ndarray, seed: int, eps_mu: float = 0.5, delta_mu: float = 1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return preprocess(Dataset(id="t", name="t", X=X), feature_scaling="none", norm_bound=1.0, centering="dp",
                          centering_epsilon=eps_mu, centering_delta=delta_mu, random_state=seed)


def test_same_integer_seed_gives_independent_centring_and_mechanism_noise():
    """Before the fix both stages called default_rng(seed): the mechanism's first Gaussian draw equalled the DP
    mean's, so Ĉ[0,0] − (σ₂/σ₁)·μ̂[0]-type combinations were noiseless. Across seeds the two first draws must be
    uncorrelated (they were identical, correlation 1)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(200, 3)) / math.sqrt(3)
    mech = get_mechanism("analyze_gauss")
    sigma_mu = gaussian_sigma(0.5, 1e-6, 2.0 / 200)
    z_mu, z_cov = [], []
    for seed in range(300):
        data = _dp_centred(X, seed)
        release = mech.release(data, 2, 1.0, 1e-5, random_state=seed)
        sigma = release.diagnostics["sigma"]
        z_mu.append((data.info["center"][0] - X.mean(axis=0)[0]) / sigma_mu)
        z_cov.append((release.covariance[0, 0] - data.C[0, 0]) / sigma)
    r = stats.pearsonr(z_mu, z_cov)
    assert r.pvalue > ALPHA and abs(r.statistic) < 0.35  # the old code gives exactly 1


def _record_stage_seeds(monkeypatch) -> list[tuple[int, tuple, tuple]]:
    calls: list[tuple[int, tuple, tuple]] = []
    original = dpcore.core.seeding.stage_seed

    def spy(random_state, stage, *key):
        out = original(random_state, stage, *key)
        if isinstance(out, np.random.SeedSequence):
            calls.append((int(stage), tuple(np.atleast_1d(out.entropy)), tuple(out.spawn_key)))
        return out

    monkeypatch.setattr(dpcore.core.seeding, "stage_seed", spy)
    return calls


def _assert_independent_streams(calls) -> None:
    stages = {c[0] for c in calls}
    assert {dpcore.core.seeding.Stage.CENTERING, dpcore.core.seeding.Stage.MECHANISM} <= stages, calls
    streams = [(c[1], c[2]) for c in calls]
    assert len(set(streams)) == len(streams), "two stages drew from the same stream"


def test_cli_release_uses_independent_streams(monkeypatch, capsys):
    calls = _record_stage_seeds(monkeypatch)
    code = cli.main(["release", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1", "--delta",
                     "1e-5", "--k", "2", "--seed", "7", "--center", "dp", "--quiet"])
    assert code == 0
    _assert_independent_streams(calls)
    # 5. the budget in the JSON is the whole pipeline's: the mechanism's ε = 1 plus the DP mean's
    result = json.loads(capsys.readouterr().out)
    mean_eps = next(e["epsilon"] for e in result["ledger"] if e["step"] == "DP mean for centring")
    assert mean_eps > 0 and result["epsilon"] == pytest.approx(1.0 + mean_eps)  # the old JSON said 1.0
    assert result["mechanism_epsilon"] == 1.0


def test_estimator_uses_independent_streams(monkeypatch):
    calls = _record_stage_seeds(monkeypatch)
    X = np.random.default_rng(2).uniform(-0.5, 0.5, size=(100, 3))
    est = DPPCA(epsilon=1.0, delta=1e-5, n_components=1, centering="dp", random_state=4).fit(X)
    _assert_independent_streams(calls)
    assert est.privacy_spent == pytest.approx((1.0, 1e-5))


@pytest.mark.slow
def test_dashboard_inspect_path_uses_independent_streams(monkeypatch):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    calls = _record_stage_seeds(monkeypatch)  # the Inspect run only (the first page's sweep repeats cells)
    at.session_state["dp_centering"] = "dp"
    at.switch_page("pages/inspect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    release = ui_state.stored("insp_release", at.session_state)["release"]
    assert release is not None and any(e.step == "DP mean for centring" for e in release.preprocessing)
    _assert_independent_streams(calls)
    # 5. "ε spent" on Inspect includes the DP mean (it showed the mechanism's ε alone)
    shown = next(m for m in at.metric if m.label == "ε spent")
    assert float(shown.value) == pytest.approx(release.total_budget[0])
    assert release.total_budget[0] > release.epsilon


# --------------------------------------------------------------------------------------------------
# 3. exact n used under add/remove (eigenvalues clipped to [0, n])
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mid", ["itu", "kt", "analyze_gauss", "laplace"])
def test_no_atom_at_n_under_add_remove(mid):
    """20 copies of e₁, ε = 1: "top released eigenvalue = 20 exactly" had probability 0.52 (itu), 0.15 (kt),
    0.64 (analyze_gauss), 0.66 (laplace) — and 0 on the neighbour with 21 copies."""
    X = np.tile([1.0, 0.0, 0.0], (20, 1))
    mech = get_mechanism(mid)
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(200):
        rel = mech.release(X, 1, 1.0, 1e-5 if mech.uses_delta else 0.0, neighbouring="add_remove",
                           random_state=rng)
        assert rel.n is None and rel.diagnostics["n_rows"] == 20
        top = [np.linalg.eigvalsh(rel.covariance_post)[-1]]
        if rel.eigenvalues is not None:
            top += list(rel.eigenvalues)
        hits += any(v == 20.0 for v in top)
    assert hits == 0


def test_replace_one_still_clips_to_the_public_n():
    X = np.tile([1.0, 0.0, 0.0], (20, 1))
    rel = get_mechanism("itu").release(X, 1, 1.0, random_state=0)
    assert rel.n == 20 and max(rel.eigenvalues) <= 20.0


def test_estimator_does_not_divide_by_a_private_n():
    X = np.random.default_rng(3).uniform(-0.5, 0.5, size=(60, 3))
    est = DPPCA(mechanism="analyze_gauss", n_components=2, neighbouring="add_remove", random_state=0).fit(X)
    assert est.n_samples_ is None and np.isnan(est.explained_variance_).all()
    assert np.isfinite(est.explained_scatter_).all() and est.diagnostics_["n_rows"] == 60
    est = DPPCA(mechanism="analyze_gauss", n_components=2, random_state=0).fit(X)
    np.testing.assert_allclose(est.explained_variance_, est.explained_scatter_ / 60)


# --------------------------------------------------------------------------------------------------
# 4. wishart_sheffet ran at any ε
# --------------------------------------------------------------------------------------------------

def test_sheffet_support_event_numbers():
    m = sheffet_degrees_of_freedom(3, 6.0, 1e-5) - 3
    assert m == 11 and support_event_probability(m) == pytest.approx(1.4165e-5, rel=1e-3)  # > δ
    m = sheffet_degrees_of_freedom(3, 10.0, 1e-5) - 3
    assert support_event_probability(m) == pytest.approx(0.0374, rel=1e-2)
    # inside the domain the event is far below δ (c = 14, the smallest allowed constant, ε = 1)
    m = sheffet_degrees_of_freedom(3, 1.0, 1e-5, 14.0) - 3
    assert support_event_probability(m) < 1e-30


@pytest.mark.parametrize("eps", [1.5, 6.0, 10.0])
def test_sheffet_refuses_epsilon_outside_its_proof(eps):
    X = np.eye(3) * 0.5
    with pytest.raises(InvalidParameterError, match="ε ≤ 1"):
        get_mechanism("wishart_sheffet").release(X, 1, eps, 1e-5, random_state=0)


def test_sheffet_support_event_never_seen_inside_the_domain():
    """At ε = 1 (c = 14) the release minus the neighbour's C is always positive definite."""
    base = np.zeros((10, 3))
    base[:9] = np.random.default_rng(0).uniform(-0.3, 0.3, (9, 3))
    u = np.array([1.0, 0.0, 0.0])
    C_other = base.T @ base + np.outer(u, u)
    mech = get_mechanism("wishart_sheffet")
    rng = np.random.default_rng(4)
    for _ in range(500):
        rel = mech.release(base, 1, 1.0, 1e-5, random_state=rng, constant=14.0)
        assert np.linalg.eigvalsh(rel.covariance - C_other).min() > 0


def test_mod_sulq_domain():
    with pytest.raises(InvalidParameterError, match="d ≥ 2"):
        get_mechanism("mod_sulq").release(np.full((5, 1), 0.5), 1, 1.0, 1e-5)


# --------------------------------------------------------------------------------------------------
# the output surface
# --------------------------------------------------------------------------------------------------

def test_release_keeps_non_private_values_out_of_the_private_fields():
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (40, 3))
    rel = get_mechanism("itu").release(X, 2, 1.0, random_state=0)
    assert isinstance(rel.diagnostics, Diagnostics) and rel.diagnostics.private is False
    record = rel.as_dict()
    assert set(record["private_output"]) == {"status", "reason", "subspace", "eigenvalues", "covariance_post"}
    assert record["nonprivate_diagnostics"]["private"] is False
    assert "proposals_per_vector" in record["nonprivate_diagnostics"]["values"]
    assert "proposals_per_vector" not in json.dumps(record["private_output"])


def test_advisor_bound_is_recorded_as_not_private():
    X = np.random.default_rng(0).uniform(0, 1, (30, 3))
    ds = Dataset(id="t", name="t", X=X, feature_ranges=np.array([[0.0, 1.0]] * 3))
    with pytest.warns(PrivacyLeakWarning, match="clip rows"):
        data = preprocess(ds, norm_bound=0.8, norm_bound_from_data=True)
    clip = data.ledger[-1]
    assert not clip.private and "read off this data" in clip.note
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert preprocess(ds, norm_bound=0.8).is_private


def test_clamp_fraction_is_a_diagnostic_not_a_ledger_note():
    X = np.array([[2.0, 0.5], [0.2, 0.5], [0.3, 0.4]])
    ds = Dataset(id="t", name="t", X=X, feature_ranges=np.array([[0.0, 1.0]] * 2))
    data = preprocess(ds)
    assert data.diagnostics["clamped_fraction"] == pytest.approx(1 / 6)
    assert all("%" not in e.note for e in data.ledger)
