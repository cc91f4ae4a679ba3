"""Input-perturbation mechanisms (spec §3.1–3.3, §3.9–3.11, §3.14): contracts, metadata and the noise they add.

Statistical checks use fixed seeds and ALPHA = 1e-6; each one also shows that it rejects a wrong scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.linalg import clip_spectrum, top_k_eigenvectors
from dpcore.core.privacy import gaussian_sigma_analytic, gaussian_sigma_classical
from dpcore.data.prepared import PreparedData
from dpcore.exceptions import DataError, InvalidMechanismError, InvalidParameterError
from dpcore.mechanisms import get_mechanism, mechanism_ids
from dpcore.mechanisms.mod_sulq import mod_sulq_beta
from dpcore.mechanisms.wishart_sheffet import sheffet_degrees_of_freedom

ALPHA = 1e-6
EPS, DELTA = 1.0, 1e-5

PRIVATE = ("mod_sulq", "analyze_gauss", "laplace", "wishart_sheffet")
APPROX = ("mod_sulq", "analyze_gauss", "wishart_sheffet")
INVALID = ("sn_imtiaz", "wishart_jiang")
COVARIANCE = ("pca", *PRIVATE, *INVALID)
ALL = ("pca", "random", *PRIVATE, *INVALID)


def unit_data(n: int, d: int, seed: int = 0) -> PreparedData:
    """Gaussian rows with a decaying spectrum, scaled so the largest norm is 1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d)
    return PreparedData(X / np.linalg.norm(X, axis=1).max())


def run(mid: str, data: PreparedData, k: int = 2, epsilon: float = EPS, delta: float = DELTA, **kw):
    """Release with the (ε, δ) arguments each mechanism accepts (δ is ignored by pure/invalid ones)."""
    mech = get_mechanism(mid)
    if mech.invalid:
        kw.setdefault("allow_invalid", True)
    return mech.release(data, k, epsilon, delta if mech.uses_delta else 0.0, **kw)


def upper(M: np.ndarray) -> np.ndarray:
    return M[np.triu_indices(M.shape[0])]


@pytest.fixture(scope="module")
def data() -> PreparedData:
    return unit_data(300, 8, seed=1)


# --------------------------------------------------------------------------------------------------
# contracts common to every mechanism
# --------------------------------------------------------------------------------------------------

def test_all_mechanisms_are_registered():
    assert set(ALL) <= set(mechanism_ids())


@pytest.mark.parametrize("mid", ALL)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_release_shapes_and_orthonormal_subspace(mid, k, data):
    rel = run(mid, data, k=k, random_state=0)
    assert rel.status == "ok" and not rel.is_bottom
    assert (rel.mechanism, rel.k, rel.n, rel.d) == (mid, k, data.n, data.d)
    assert rel.subspace.shape == (data.d, k)
    np.testing.assert_allclose(rel.subspace.T @ rel.subspace, np.eye(k), atol=1e-10)
    assert rel.projector.shape == (data.d, data.d)
    if mid in COVARIANCE:
        assert rel.covariance.shape == rel.covariance_post.shape == (data.d, data.d)
        assert np.array_equal(rel.covariance, rel.covariance.T)
    else:
        assert rel.covariance is None and rel.covariance_post is None


@pytest.mark.parametrize("mid", COVARIANCE)
def test_subspace_and_post_processing_come_from_the_released_covariance(mid, data):
    """V̂ = top-k eigenvectors of Ĉ and Ĉ_post = clip_spectrum(Ĉ, n), bit for bit (one shared eigh)."""
    rel = run(mid, data, k=3, random_state=1)
    if mid == "pca":
        np.testing.assert_allclose(rel.projector, top_k_eigenvectors(rel.covariance, 3) @ top_k_eigenvectors(
            rel.covariance, 3).T, atol=1e-10)
    else:
        assert np.array_equal(rel.subspace, top_k_eigenvectors(rel.covariance, 3))
    assert np.array_equal(rel.covariance_post, clip_spectrum(rel.covariance, upper=float(data.n)))


@pytest.mark.parametrize("mid", COVARIANCE)
@pytest.mark.parametrize("epsilon", [0.05, 1.0])
def test_post_processed_covariance_is_psd_with_eigenvalues_at_most_n(mid, epsilon):
    data = unit_data(20, 10, seed=2)  # tiny n: at ε = 0.05 the noise pushes eigenvalues far outside [0, n]
    rel = run(mid, data, k=2, epsilon=epsilon, delta=1e-3, random_state=3)
    post = rel.covariance_post
    assert np.allclose(post, post.T, atol=1e-9)
    lam = np.linalg.eigvalsh(post)
    assert lam.min() >= -1e-8 * data.n
    assert lam.max() <= data.n * (1 + 1e-10)
    raw = np.linalg.eigvalsh(rel.covariance)
    if mid in ("mod_sulq", "analyze_gauss", "laplace") and epsilon == 0.05:
        assert raw.min() < 0 or raw.max() > data.n  # the clipping actually had work to do
    if mid == "wishart_sheffet":
        assert raw.min() > 0  # C + W is positive definite


@pytest.mark.parametrize("mid", ALL)
def test_reproducible_with_random_state(mid, data):
    a, b, c = (run(mid, data, k=2, random_state=s) for s in (7, 7, 8))
    np.testing.assert_array_equal(a.subspace, b.subspace)
    if a.covariance is not None:
        np.testing.assert_array_equal(a.covariance, b.covariance)
    if mid != "pca":
        assert not np.array_equal(a.subspace, c.subspace)
    # a Generator is used as given (consumed), so two releases from one generator differ
    if mid != "pca":
        g = np.random.default_rng(0)
        assert not np.array_equal(run(mid, data, random_state=g).subspace, run(mid, data, random_state=g).subspace)


@pytest.mark.parametrize("mid", PRIVATE)
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_ledger_spends_exactly_the_budget(mid, neighbouring, data):
    mech = get_mechanism(mid)
    if neighbouring not in mech.neighbourings:
        with pytest.raises(InvalidParameterError, match="neighbouring"):
            run(mid, data, neighbouring=neighbouring)
        return
    rel = run(mid, data, epsilon=0.7, delta=1e-4, neighbouring=neighbouring, random_state=0)
    eps, delta = rel.budget_spent
    assert eps == pytest.approx(0.7, rel=1e-12)
    assert delta == pytest.approx(1e-4 if mech.uses_delta else 0.0, rel=1e-12, abs=0.0)
    assert all(entry.private for entry in rel.ledger)
    assert rel.guarantee == mech.guarantee == ("approx" if mid in APPROX else "pure")
    assert rel.neighbouring == neighbouring
    assert (rel.epsilon, rel.delta) == (0.7, 1e-4 if mech.uses_delta else 0.0)
    assert rel.counterexample_delta is None


def test_mod_sulq_and_invalid_wishart_are_replace_one_only(data):
    for mid in ("mod_sulq", *INVALID):
        with pytest.raises(InvalidParameterError, match="replace"):
            run(mid, data, neighbouring="add_remove")


def test_random_subspace_is_data_independent_and_free(data):
    other = unit_data(50, 8, seed=9)
    a, b = run("random", data, k=3, random_state=4), run("random", other, k=3, random_state=4)
    np.testing.assert_array_equal(a.subspace, b.subspace)
    assert a.budget_spent == (0.0, 0.0)
    assert a.guarantee == "pure"


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 1e3])
def test_pca_returns_the_exact_top_k_subspace_at_any_epsilon(epsilon, data):
    rel = get_mechanism("pca").release(data, 3, epsilon, random_state=0)
    V = data.eigenvectors[:, :3]
    np.testing.assert_allclose(rel.projector, V @ V.T, atol=1e-10)
    np.testing.assert_array_equal(rel.covariance, data.C)
    assert rel.guarantee == "none"
    assert not any(entry.private for entry in rel.ledger)
    # against an independent eigendecomposition of XᵀX
    _, U = np.linalg.eigh(data.X.T @ data.X)
    U3 = U[:, ::-1][:, :3]
    np.testing.assert_allclose(rel.projector, U3 @ U3.T, atol=1e-8)


def test_release_accepts_raw_unit_rows_and_rejects_bad_rows(data):
    rel = run("analyze_gauss", np.asarray(data.X), random_state=0)
    np.testing.assert_array_equal(rel.covariance, run("analyze_gauss", data, random_state=0).covariance)
    with pytest.raises(DataError, match="norm"):
        run("analyze_gauss", 2 * np.asarray(data.X))


# --------------------------------------------------------------------------------------------------
# refusal and validation
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mid", INVALID)
def test_invalid_mechanisms_refuse_without_allow_invalid(mid, data):
    mech = get_mechanism(mid)
    with pytest.raises(InvalidMechanismError, match="allow_invalid"):
        mech.release(data, 2, 1.0)
    rel = mech.release(data, 2, 1.0, allow_invalid=True, random_state=0)
    assert rel.guarantee == "claimed-invalid"
    expected = 1 - math.exp(-1.0) if mid == "sn_imtiaz" else 1 - math.exp(-1.0 / 3.0)
    assert rel.counterexample_delta == pytest.approx(expected, rel=1e-12)
    assert not any(entry.private for entry in rel.ledger)
    assert rel.budget_spent == (1.0, 0.0)  # the claimed ε, shown next to the failure
    assert mech.describe()["counterexample_delta_at_eps1"] == pytest.approx(expected)


def test_sn_code_variant_counterexample_is_carried(data):
    rel = run("sn_imtiaz", data, epsilon=0.5, variant="code", random_state=0)
    assert rel.counterexample_delta == pytest.approx(1 - math.exp(-2 * 0.25))
    assert rel.options["variant"] == "code"


@pytest.mark.parametrize("mid", APPROX)
def test_approx_mechanisms_reject_zero_delta(mid, data):
    with pytest.raises(InvalidParameterError, match=r"delta must be > 0.*try delta="):
        get_mechanism(mid).release(data, 2, 1.0, 0.0)
    with pytest.raises(InvalidParameterError, match="delta"):
        get_mechanism(mid).release(data, 2, 1.0, 1.0)


@pytest.mark.parametrize("mid", ALL)
def test_unknown_option_and_bad_budget_rejected(mid, data):
    mech = get_mechanism(mid)
    kw = {"allow_invalid": True} if mech.invalid else {}
    with pytest.raises(InvalidParameterError, match="unknown option"):
        mech.release(data, 2, 1.0, 1e-5, bogus=1, **kw)
    for bad_eps in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidParameterError, match="epsilon"):
            mech.release(data, 2, bad_eps, 1e-5, **kw)
    with pytest.raises(InvalidParameterError, match="k"):
        mech.release(data, data.d + 1, 1.0, 1e-5, **kw)
    with pytest.raises(InvalidParameterError, match="random_state"):
        mech.release(data, 2, 1.0, 1e-5, random_state=-3, **kw)


@pytest.mark.parametrize(
    ("mid", "options", "match"),
    [
        ("analyze_gauss", {"calibration": "magic"}, "calibration"),
        ("laplace", {"sensitivity": "loose"}, "sensitivity"),
        ("wishart_sheffet", {"constant": 5.0}, "constant"),
        ("mod_sulq", {"exact_beta": "perhaps"}, "exact_beta"),
        ("sn_imtiaz", {"variant": "other"}, "variant"),
    ],
)
def test_bad_option_values_rejected(mid, options, match, data):
    with pytest.raises(InvalidParameterError, match=match):
        run(mid, data, **options)


def test_classical_calibration_refuses_large_epsilon(data):
    with pytest.raises(InvalidParameterError, match="analytic"):
        run("analyze_gauss", data, epsilon=2.0, calibration="classical")


# --------------------------------------------------------------------------------------------------
# the noise actually added: Ĉ − C has the calibrated law
# --------------------------------------------------------------------------------------------------

def _noise_entries(mid: str, data: PreparedData, reps: int, seed: int, **kw) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        rel = run(mid, data, random_state=rng, **kw)
        E = rel.covariance - data.C
        assert np.array_equal(E, E.T)
        out.append(upper(E))
    return np.concatenate(out)


def _gauss_pvalues(x: np.ndarray, sigma: float) -> tuple[float, float]:
    """(χ² test of Σx²/σ² ~ χ²_N, KS of x/σ vs N(0,1))."""
    s = float(np.sum(x**2) / sigma**2)
    p_var = 2 * min(stats.chi2.cdf(s, x.size), stats.chi2.sf(s, x.size))
    return p_var, float(stats.kstest(x / sigma, "norm").pvalue)


def _laplace_pvalues(x: np.ndarray, b: float) -> tuple[float, float]:
    """(exact scale test Σ|x|/b ~ Gamma(N), KS vs Laplace(b))."""
    s = float(np.abs(x).sum() / b)
    p_scale = 2 * min(stats.gamma.cdf(s, x.size), stats.gamma.sf(s, x.size))
    return p_scale, float(stats.kstest(x, stats.laplace(scale=b).cdf).pvalue)


NOISE_DATA_D = 60


@pytest.fixture(scope="module")
def noise_data() -> PreparedData:
    return unit_data(40, NOISE_DATA_D, seed=5)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mid", "kw", "expected_sigma"),
    [
        ("analyze_gauss", {}, lambda n, d: gaussian_sigma_analytic(EPS, DELTA, math.sqrt(2))),
        ("analyze_gauss", {"neighbouring": "add_remove"}, lambda n, d: gaussian_sigma_analytic(EPS, DELTA, 1.0)),
        ("analyze_gauss", {"calibration": "classical", "epsilon": 0.5},
         lambda n, d: gaussian_sigma_classical(0.5, DELTA, math.sqrt(2))),
        ("mod_sulq", {}, lambda n, d: n * mod_sulq_beta(d, n, EPS, DELTA)),
        ("mod_sulq", {"exact_beta": True}, lambda n, d: n * mod_sulq_beta(d, n, EPS, DELTA, exact=True)),
    ],
)
def test_gaussian_noise_has_the_calibrated_scale(mid, kw, expected_sigma, noise_data):
    n, d = noise_data.n, noise_data.d
    sigma = expected_sigma(n, d)
    x = _noise_entries(mid, noise_data, reps=20, seed=11, **kw)  # 20 × 1830 = 36 600 entries
    p_var, p_ks = _gauss_pvalues(x, sigma)
    assert p_var > ALPHA and p_ks > ALPHA, (p_var, p_ks)
    assert min(_gauss_pvalues(x, 1.1 * sigma)) < ALPHA  # power: σ × 1.1 is rejected
    assert min(_gauss_pvalues(x, sigma / 1.1)) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kw", "expected_scale"),
    [
        ({}, lambda d: 2 * d / EPS),
        ({"sensitivity": "tight"}, lambda d: (d + 1) / EPS),
        ({"neighbouring": "add_remove"}, lambda d: d / EPS),
        ({"neighbouring": "add_remove", "sensitivity": "tight"}, lambda d: (d + 1) / (2 * EPS)),
    ],
)
def test_laplace_noise_has_the_calibrated_scale(kw, expected_scale, noise_data):
    b = expected_scale(noise_data.d)
    x = _noise_entries("laplace", noise_data, reps=20, seed=12, **kw)
    p_scale, p_ks = _laplace_pvalues(x, b)
    assert p_scale > ALPHA and p_ks > ALPHA, (p_scale, p_ks)
    assert min(_laplace_pvalues(x, 1.1 * b)) < ALPHA
    assert min(_laplace_pvalues(x, b / 1.1)) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("debias", [False, True])
def test_sheffet_noise_mean_is_m_identity(debias):
    d, eps, delta, reps = 5, 1.0, 1e-3, 2000  # ε = 1: the top of the proof's domain
    data = unit_data(30, d, seed=6)
    m = sheffet_degrees_of_freedom(d, eps, delta)
    assert m == d + math.ceil(28 * math.log(4 / delta) / eps**2) == 238
    rng = np.random.default_rng(13)
    E = np.stack([run("wishart_sheffet", data, epsilon=eps, delta=delta, random_state=rng, debias=debias).covariance
                  - data.C for _ in range(reps)])
    if not debias:
        assert np.linalg.eigvalsh(E).min() > 0  # Wishart noise is PD
    shift = 0.0 if debias else m
    # W ~ W_d(I, m): Var(W_ii) = 2m, Var(W_ij) = m
    sd = np.where(np.eye(d, dtype=bool), math.sqrt(2 * m), math.sqrt(m)) / math.sqrt(reps)
    mean = E.mean(axis=0)

    def p_max(target: float) -> float:
        z = np.abs(upper((mean - target * np.eye(d)) / sd))
        return float(min(1.0, z.size * 2 * stats.norm.sf(z.max())))

    assert p_max(0.0 if debias else m) > ALPHA
    # power: forgetting the "+ d" in m, or a 10 % larger m, is detected
    assert p_max(shift - d) < ALPHA
    assert p_max(shift + 0.1 * m) < ALPHA


# --------------------------------------------------------------------------------------------------
# the support attack on SN and Jiang (spec §3.9, §3.10)
# --------------------------------------------------------------------------------------------------

def _support_violation_rate(mid: str, epsilon: float, options: dict, draws: int, seed: int) -> tuple[int, int]:
    """D has a zero row; D' replaces it by a unit u. Count releases on D with Ĉ − C' not PD, and on D' likewise."""
    rng = np.random.default_rng(seed)
    d = 3
    X = rng.standard_normal((4, d))
    X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
    X[-1] = 0.0
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    Xp = X.copy()
    Xp[-1] = u
    D, Dp = PreparedData(X), PreparedData(Xp)
    np.testing.assert_allclose(Dp.C - D.C, np.outer(u, u), atol=1e-14)
    mech = get_mechanism(mid)
    hits_d = hits_dp = 0
    for _ in range(draws):
        Y = mech.release(D, 1, epsilon, allow_invalid=True, random_state=rng, **options).covariance
        hits_d += np.linalg.eigvalsh(Y - Dp.C)[0] <= 0
    for _ in range(draws // 20):  # under D' itself the output is always in D's support: Y' − C' = W ≻ 0
        Yp = mech.release(Dp, 1, epsilon, allow_invalid=True, random_state=rng, **options).covariance
        hits_dp += np.linalg.eigvalsh(Yp - Dp.C)[0] <= 0
    return int(hits_d), int(hits_dp)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mid", "epsilon", "options", "formula"),
    [
        ("sn_imtiaz", 1.0, {}, lambda e: 1 - math.exp(-e)),
        ("sn_imtiaz", 0.3, {"variant": "code"}, lambda e: 1 - math.exp(-2 * e * e)),
        ("wishart_jiang", 1.0, {}, lambda e: 1 - math.exp(-e / 3)),
        ("wishart_jiang", 0.5, {}, lambda e: 1 - math.exp(-e / 3)),
    ],
)
def test_support_violation_frequency_matches_counterexample_delta(mid, epsilon, options, formula):
    draws = 10_000
    p = formula(epsilon)
    assert get_mechanism(mid).counterexample_delta(epsilon, options) == pytest.approx(p, rel=1e-12)
    hits, hits_neighbour = _support_violation_rate(mid, epsilon, options, draws, seed=21)
    assert hits_neighbour == 0
    assert stats.binomtest(hits, draws, p).pvalue > ALPHA, (hits / draws, p)
    # power: a 15 % error in the probability is detected
    assert stats.binomtest(hits, draws, 1.15 * p).pvalue < ALPHA
    assert stats.binomtest(hits, draws, p / 1.15).pvalue < ALPHA
