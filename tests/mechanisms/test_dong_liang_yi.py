"""SeparateCov and AdaptiveCov (Dong, Liang & Yi 2022): every sensitivity and budget constant, the laws of the new
noise steps (AboveThreshold's index, the noisy eigenvalues) at α = 1e-6 with fixed seeds, and the neighbouring
relations (n never read under add/remove). The oracle test against the authors' code is
tests/oracles/test_dong_liang_yi_oracle.py; the derivation is docs/dong_liang_yi.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.core.privacy import gaussian_mu_rho_for, zcdp_delta, zcdp_rho_for
from dpcore.data.prepared import PreparedData
from dpcore.mechanisms import _dong_liang_yi as dly
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.adaptive_cov import error_model, trace_sigma
from dpcore.vocabulary import Neighbouring

ALPHA = 1e-6
REPLACE, ADD_REMOVE = Neighbouring.REPLACE, Neighbouring.ADD_REMOVE


# --------------------------------------------------------------------------------------------------
# budget split and sensitivities
# --------------------------------------------------------------------------------------------------

def test_the_budget_split_is_trace_eighth_svt_eighth_covariance_three_quarters():
    assert (dly.TRACE_SHARE, dly.SVT_SHARE, dly.COVARIANCE_SHARE) == (1 / 8, 1 / 8, 3 / 4)
    assert dly.TRACE_SHARE + dly.SVT_SHARE + dly.COVARIANCE_SHARE == 1.0
    for rho in (1e-3, 0.1, 2.0):
        eps = dly.svt_epsilon(rho)
        assert eps == pytest.approx(math.sqrt(rho) / 2, rel=1e-14)  # the authors' SVT(0, √ρ/2, …)
        assert eps**2 / 2 == pytest.approx(rho / 8, rel=1e-14)  # ε-DP ⇒ ε²/2-zCDP (Bun & Steinke, Prop. 1.4)
        sigma = trace_sigma(rho)
        assert sigma == pytest.approx(2 / math.sqrt(rho), rel=1e-14)  # Δ = 1 at ρ/8
        assert dly.TRACE_SENSITIVITY**2 / (2 * sigma**2) == pytest.approx(rho / 8, rel=1e-14)


@pytest.mark.parametrize("relation, delta2", [(REPLACE, math.sqrt(2)), (ADD_REMOVE, 1.0)])
def test_separate_cov_spends_half_of_rho_on_each_release(relation, delta2):
    rho, scale = 0.3, 0.25
    step = dly.separate_cov(np.eye(4), rho, scale, relation, np.random.default_rng(0))
    assert dly.eigenvalue_l2_sensitivity(relation) == delta2
    for sigma in (step.sigma_matrix, step.sigma_eigenvalues):
        assert (delta2 * scale) ** 2 / (2 * sigma**2) == pytest.approx(rho / 2, rel=1e-14)


def test_gaussian_step_spends_rho():
    step = dly.gauss_cov(np.eye(3), 0.2, 1.0, REPLACE, np.random.default_rng(0))
    assert 2.0 / (2 * step.sigma_matrix**2) == pytest.approx(0.2, rel=1e-14)


def test_eigenvalue_sensitivity_sqrt2_is_attained_and_never_exceeded():
    """‖λ(C) − λ(C′)‖₂ ≤ √2 (replace) and ≤ 1 (add/remove) on random neighbours; √2 attained by the docstring's pair."""
    def lam(C):
        return np.sort(np.linalg.eigvalsh(C))[::-1]

    a, b = 3.0, 1.0
    C = np.diag([a + 1, b, 0.0])
    C2 = np.diag([a, b + 1, 0.0])  # e₁ replaced by e₂
    assert np.linalg.norm(lam(C) - lam(C2)) == pytest.approx(math.sqrt(2))
    rng = np.random.default_rng(3)
    worst_r = worst_a = 0.0
    for _ in range(2000):
        X = rng.standard_normal((6, 4))
        X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
        y = rng.standard_normal(4)
        y /= max(1, np.linalg.norm(y))
        C = X.T @ X
        worst_r = max(worst_r, np.linalg.norm(lam(C) - lam(C - np.outer(X[0], X[0]) + np.outer(y, y))))
        worst_a = max(worst_a, np.linalg.norm(lam(C) - lam(C + np.outer(y, y))))
    assert worst_r <= math.sqrt(2) + 1e-12 and worst_a <= 1 + 1e-12


def test_clipping_bias_queries_have_sensitivity_below_one_under_both_relations():
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(500):
        norms = rng.uniform(0, 1, size=30) ** rng.uniform(1, 8)
        other = rng.uniform(0, 1) ** rng.uniform(1, 8)
        base = dly.clipping_bias_bounds(dly.norm_level_counts(norms))
        replaced = dly.clipping_bias_bounds(dly.norm_level_counts(np.r_[norms[1:], other]))
        added = dly.clipping_bias_bounds(dly.norm_level_counts(np.r_[norms, other]))
        worst = max(worst, np.abs(base - replaced).max(), np.abs(base - added).max())
    assert worst <= dly.SVT_QUERY_SENSITIVITY + 1e-9  # < 1 exactly; the sums round


def test_clipping_bias_bound_is_an_upper_bound_on_the_true_bias():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((300, 5)) * rng.uniform(0, 1, size=(300, 1)) ** 3
    X /= np.linalg.norm(X, axis=1).max()
    norms = np.linalg.norm(X, axis=1)
    bounds = dly.clipping_bias_bounds(dly.norm_level_counts(norms))
    for i in range(12):
        Y = dly.clip_rows(X, norms, 2.0**-i)
        assert np.linalg.norm(X.T @ X - Y.T @ Y) <= bounds[i] + 1e-12


def test_norm_levels_match_half_open_dyadic_intervals():
    counts = dly.norm_level_counts(np.array([1.0, 0.75, 0.5, 0.3, 0.25, 0.2, 0.0, 2.0**-90]), levels=6)
    # (1/2, 1]: 1, 0.75; (1/4, 1/2]: 0.5, 0.3; (1/8, 1/4]: 0.25, 0.2; zero and tiny rows fall off the end
    assert counts.tolist() == [0, 2, 2, 2, 0, 0]


def test_tight_conversion_is_used_and_shown():
    eps, delta = 1.0, 1e-6
    rho = zcdp_rho_for(eps, delta)
    assert zcdp_delta(rho, eps) <= delta
    rel = get_mechanism("adaptive_cov").release(np.eye(3) * 0.5, 1, eps, delta, random_state=1)
    last = rel.ledger[-1]
    assert (last.epsilon, last.delta) == (eps, delta) and f"{rho:.6g}" in last.note
    assert all(e.epsilon == 0 and e.delta == 0 for e in rel.ledger[:-1])
    assert rel.budget_spent == (eps, delta)
    sep = get_mechanism("separate_cov").release(np.eye(3) * 0.5, 1, eps, delta, random_state=1)
    assert f"{gaussian_mu_rho_for(eps, delta):.6g}" in sep.ledger[-1].note


# --------------------------------------------------------------------------------------------------
# laws of the new noise steps
# --------------------------------------------------------------------------------------------------

def above_threshold_law(queries: np.ndarray, epsilon: float) -> np.ndarray:
    """Exact P(index = i), i = 0..m (m = none above): ∫ p_T(t) Π_{l<i} F(t − q_l) (1 − F(t − q_i)) dt."""
    b_t, b_q = 2.0 / epsilon, 4.0 / epsilon
    m = len(queries)

    def density(t, i):
        below = np.prod([stats.laplace.cdf(t - q, scale=b_q) for q in queries[:i]])
        tail = 1.0 if i == m else stats.laplace.sf(t - queries[i], scale=b_q)
        return stats.laplace.pdf(t, scale=b_t) * below * tail

    return np.array([integrate.quad(density, -60 * b_q, 60 * b_q, args=(i,), points=[0.0], limit=400)[0]
                     for i in range(m + 1)])


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_above_threshold_index_follows_its_exact_law(epsilon):
    queries = np.array([-9.0, -4.0, -1.5, -0.5, 0.3, 2.0])
    p = above_threshold_law(queries, epsilon)
    assert p.sum() == pytest.approx(1.0, abs=1e-7)
    rng = np.random.default_rng(20261128)
    N = 40_000
    draws = np.array([dly.above_threshold(queries, epsilon, rng) for _ in range(N)])
    observed = np.bincount(draws, minlength=len(p))
    assert stats.chisquare(observed, N * p).pvalue > ALPHA
    # power: the same test rejects query noise Lap(2/ε) instead of Lap(4/ε) (half the noise)
    wrong = above_threshold_law(queries, 2 * epsilon)
    wrong = 0.5 * (wrong + above_threshold_law(queries, epsilon))  # even a half-way mixture is rejected
    assert stats.chisquare(observed, N * wrong).pvalue < ALPHA


def test_noisy_eigenvalues_are_exact_eigenvalues_plus_gaussian_noise():
    C = np.diag([5.0, 3.0, 1.0, 0.5])
    sigma = 0.7
    rng = np.random.default_rng(11)
    R = np.array([dly.noisy_eigenvalues(C, sigma, rng) - [5.0, 3.0, 1.0, 0.5] for _ in range(20_000)]) / sigma
    assert stats.kstest(R.ravel(), "norm").pvalue > ALPHA
    assert np.abs(np.corrcoef(R.T) - np.eye(4)).max() < 0.05
    assert stats.kstest(R.ravel() / 1.05, "norm").pvalue < ALPHA  # power: σ off by 5 % is rejected


# --------------------------------------------------------------------------------------------------
# neighbouring relations and the output surface
# --------------------------------------------------------------------------------------------------

def test_adaptive_cov_never_reads_n_under_add_remove():
    """A zero row changes n only. Under add/remove the release is bit-for-bit the same; under replace-one n clips
    the noisy trace (T̃ ≤ n), so the same pair differs there — the test can see n being read."""
    X = np.eye(3)[[0, 1, 2]]
    X0 = np.vstack([X, np.zeros((1, 3))])
    mech = get_mechanism("adaptive_cov")
    for seed in range(5):
        a = mech.release(X, 2, 0.3, 1e-6, neighbouring=ADD_REMOVE, random_state=seed)
        b = mech.release(X0, 2, 0.3, 1e-6, neighbouring=ADD_REMOVE, random_state=seed)
        assert np.array_equal(a.covariance, b.covariance) and a.n is None
    differs = [not np.array_equal(mech.release(X, 2, 0.3, 1e-6, random_state=s).covariance,
                                  mech.release(X0, 2, 0.3, 1e-6, random_state=s).covariance) for s in range(5)]
    assert any(differs)


def test_adaptive_cov_shrinks_the_radius_on_small_rows_and_reports_it_as_output():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50_000, 40)) * np.linspace(1, 0.2, 40)
    X *= 0.1 / np.linalg.norm(X, axis=1).max()
    data = PreparedData(X)
    rels = [get_mechanism("adaptive_cov").release(data, 2, 8.0, 1e-6, random_state=s) for s in range(9)]
    radii = [r.diagnostics["radius (private output)"] for r in rels]
    assert np.median(radii) <= 0.25
    assert len(set(radii)) > 1  # different radii, yet the ledger is the same: it holds settings only
    assert len({tuple(e.as_dict().values()) for r in rels for e in r.ledger}) == len(rels[0].ledger)
    assert all(r.reason == "" and r.is_private for r in rels)  # no ⊥ path at all


def test_adaptive_cov_beats_analyze_gauss_when_the_bound_is_loose():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5000, 40)) * np.linspace(1, 0.2, 40)
    X *= 0.05 / np.linalg.norm(X, axis=1).max()
    data = PreparedData(X)
    errs = {m: np.mean([np.linalg.norm(get_mechanism(m).release(data, 2, 2.0, 1e-6, random_state=s).covariance_post
                                       - data.C) for s in range(10)]) for m in ("analyze_gauss", "adaptive_cov")}
    assert errs["adaptive_cov"] < 0.5 * errs["analyze_gauss"]


def test_adaptive_cov_refuses_a_beta_outside_0_1():
    from dpcore.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="beta"):
        get_mechanism("adaptive_cov").release(np.eye(2) * 0.5, 1, 1.0, 1e-6, beta=1.0)


def test_error_model_scales_with_the_relation():
    rep = error_model(100.0, 10, 0.5, 0.1, REPLACE)
    ar = error_model(100.0, 10, 0.5, 0.1, ADD_REMOVE)
    assert ar.direct == pytest.approx(rep.direct / math.sqrt(2))
    assert ar.sep_square == pytest.approx(rep.sep_square / math.sqrt(2))
    assert ar.sep_linear == pytest.approx(rep.sep_linear / 2**0.25)


def test_loose_bounds_preset_declares_ranges_ten_times_the_documented_ones():
    from dpcore.data.datasets import WINE_RANGES, load_dataset
    from dpcore.data.preprocess import preprocess

    loose, wine = load_dataset("wine_loose"), load_dataset("wine")
    widths = np.diff(loose.feature_ranges, axis=1).ravel()
    assert np.allclose(widths, 10 * np.diff(np.array(WINE_RANGES), axis=1).ravel())
    assert np.array_equal(loose.X, wine.X) and not loose.nonprivate_steps
    assert np.linalg.norm(preprocess(loose).X, axis=1).max() < 0.1  # records sit far inside the public bound


# --------------------------------------------------------------------------------------------------
# the pure-DP twins
# --------------------------------------------------------------------------------------------------

def test_pure_split_and_laplace_scales():
    from dpcore.mechanisms.adaptive_lap_cov import trace_scale

    assert (dly.LAP_TRACE_SHARE, dly.LAP_SVT_SHARE, dly.LAP_COVARIANCE_SHARE) == (1 / 8, 1 / 8, 3 / 4)
    assert trace_scale(2.0) == pytest.approx(4.0)  # Δ = 1 at ε/8: b = 8/ε (the authors' 8r²/ε)
    d, eps, scale = 5, 2.0, 0.25
    for relation, l1_matrix, l1_eig in ((REPLACE, d + 1, 2), (ADD_REMOVE, (d + 1) / 2, 1)):
        step = dly.separate_lap_cov(np.eye(d), eps, scale, relation, np.random.default_rng(0))
        assert step.sigma_matrix == pytest.approx(l1_matrix * scale / (eps / 2))
        assert step.sigma_eigenvalues == pytest.approx(l1_eig * scale / (eps / 2))


@pytest.mark.parametrize("mid", ["separate_lap_cov", "adaptive_lap_cov"])
def test_pure_twins_spend_exactly_epsilon_and_never_read_n_under_add_remove(mid):
    X = np.eye(3)
    X0 = np.vstack([X, np.zeros((1, 3))])
    mech = get_mechanism(mid)
    for seed in range(3):
        a = mech.release(X, 2, 0.3, neighbouring=ADD_REMOVE, random_state=seed)
        b = mech.release(X0, 2, 0.3, neighbouring=ADD_REMOVE, random_state=seed)
        assert np.array_equal(a.covariance, b.covariance)
        assert a.budget_spent == pytest.approx((0.3, 0.0)) and a.guarantee == "pure"


def test_separate_lap_cov_eigenvalue_noise_law():
    """The output's eigenvalues are λ(C) + Lap(b), b = 2·r²/(ε/2) (replace-one): read back exactly as the eigenvalues
    of P·diag(λ̃)·Pᵀ (gaps ≫ noise keep the order), whatever the noisy eigenvectors P are."""
    lam = np.array([400.0, 200.0, 100.0])
    C, eps, rng = np.diag(lam), 8.0, np.random.default_rng(12)
    b = 2.0 / (eps / 2)
    R = np.array([np.sort(np.linalg.eigvalsh(dly.separate_lap_cov(C, eps, 1.0, REPLACE, rng).covariance))[::-1] - lam
                  for _ in range(20_000)]).ravel() / b
    assert stats.kstest(R, "laplace").pvalue > ALPHA
    assert stats.kstest(R / 1.1, "laplace").pvalue < ALPHA  # power: b off by 10 % is rejected


def test_the_odometer_gets_the_rho_each_release_was_calibrated_with():
    from dpcore.mechanisms import release_rho

    for mid, rho_of in (("adaptive_cov", zcdp_rho_for), ("separate_cov", gaussian_mu_rho_for)):
        rel = get_mechanism(mid).release(np.eye(3) * 0.5, 1, 2.0, 1e-6, random_state=1)
        assert release_rho(mid, 2.0, 1e-6, d=3) == rel.ledger[-1].rho == pytest.approx(rho_of(2.0, 1e-6), rel=1e-12)
