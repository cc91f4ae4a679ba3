"""Statistical tests of the noise primitives in :mod:`dpcore.core.noise` against their exact laws.

Every test uses a fixed seed and a significance level ALPHA = 1e-6, so a correct sampler fails with probability
about 1e-6 per test, and every test also shows its power: the same check rejects a deliberately wrong law
(scale × 1.1, a missing sign fix, a wrong distribution, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.noise import (
    laplace,
    make_rng,
    symmetric_gaussian,
    symmetric_laplace,
    truncated_laplace,
    uniform_sphere,
    uniform_stiefel,
    wishart_bartlett,
    wishart_gram,
)
from dpcore.exceptions import InvalidParameterError

ALPHA = 1e-6


# --------------------------------------------------------------------------------------------------
# small exact tests used throughout
# --------------------------------------------------------------------------------------------------

def variance_pvalue(x: np.ndarray, sigma: float) -> float:
    """Two-sided p-value of H0: x i.i.d. N(0, σ²), from Σx²/σ² ~ χ²_N (mean known to be 0)."""
    stat = float(np.sum(np.square(x)) / sigma**2)
    cdf = stats.chi2.cdf(stat, df=x.size)
    return 2.0 * min(cdf, 1.0 - cdf)


def ks_pvalue(x: np.ndarray, cdf) -> float:
    return float(stats.kstest(x, cdf).pvalue)


def ks2_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.ks_2samp(x, y).pvalue)


def z_pvalue_max(z: np.ndarray) -> float:
    """Bonferroni p-value of the largest |z| among independent-ish standard normal statistics."""
    z = np.abs(np.asarray(z, dtype=float)).ravel()
    return float(min(1.0, z.size * 2.0 * stats.norm.sf(z.max())))


def upper(M: np.ndarray) -> np.ndarray:
    """Entries on and above the diagonal (the independent coordinates of a symmetric matrix)."""
    return M[np.triu_indices(M.shape[-1])] if M.ndim == 2 else M[:, *np.triu_indices(M.shape[-1])]


# --------------------------------------------------------------------------------------------------
# make_rng
# --------------------------------------------------------------------------------------------------

def test_make_rng_accepts_the_documented_types():
    g = np.random.default_rng(3)
    assert make_rng(g) is g
    assert isinstance(make_rng(None), np.random.Generator)
    assert isinstance(make_rng(0), np.random.Generator)
    assert isinstance(make_rng(np.int64(7)), np.random.Generator)
    assert isinstance(make_rng(np.random.SeedSequence(5)), np.random.Generator)
    # seeds are reproducible, and an int and its SeedSequence give the same stream
    assert make_rng(42).random() == make_rng(42).random()
    assert make_rng(42).random() == make_rng(np.random.SeedSequence(42)).random()
    assert make_rng(42).random() != make_rng(43).random()
    assert make_rng(None).random() != make_rng(None).random()


@pytest.mark.parametrize("bad", [-1, np.int32(-5), 1.5, "seed", [1, 2], True, object()])
def test_make_rng_rejects_negative_and_garbage(bad):
    with pytest.raises(InvalidParameterError, match="random_state"):
        make_rng(bad)


@pytest.mark.parametrize(
    "draw",
    [
        lambda r: symmetric_gaussian(4, 2.0, r),
        lambda r: symmetric_laplace(4, 2.0, r),
        lambda r: laplace(1.0, r, size=5),
        lambda r: truncated_laplace(1.0, 2.0, r, size=5),
        lambda r: wishart_bartlett(4, 6.5, 0.5, r),
        lambda r: wishart_gram(4, 6, 0.5, r),
        lambda r: uniform_stiefel(6, 2, r),
        lambda r: uniform_sphere(5, r, size=3),
    ],
)
def test_every_generator_is_reproducible_with_a_seed(draw):
    a, b, c = draw(make_rng(123)), draw(make_rng(123)), draw(make_rng(124))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# --------------------------------------------------------------------------------------------------
# symmetric Gaussian
# --------------------------------------------------------------------------------------------------

def test_symmetric_gaussian_is_exactly_symmetric_with_the_right_shape():
    M = symmetric_gaussian(7, 3.0, make_rng(0))
    assert M.shape == (7, 7)
    assert np.array_equal(M, M.T)
    assert len(np.unique(upper(M))) == 28  # all upper entries are distinct draws


def test_symmetric_gaussian_entries_have_variance_sigma2_and_normal_law():
    sigma = 2.5
    x = upper(symmetric_gaussian(400, sigma, make_rng(1)))  # 80 200 independent entries
    assert variance_pvalue(x, sigma) > ALPHA
    assert ks_pvalue(x / sigma, stats.norm.cdf) > ALPHA
    assert abs(x.mean()) / (sigma / math.sqrt(x.size)) < stats.norm.isf(ALPHA / 2)
    # power: the same tests reject σ × 1.1
    assert variance_pvalue(x, 1.1 * sigma) < ALPHA
    assert ks_pvalue(x / (1.1 * sigma), stats.norm.cdf) < ALPHA


def test_symmetric_gaussian_diagonal_and_off_diagonal_have_the_same_variance():
    """The diagonal must not get 2σ² or 4σ² (the classic G + Gᵀ mistake)."""
    sigma, d = 1.7, 6
    rng = make_rng(2)
    draws = np.stack([symmetric_gaussian(d, sigma, rng) for _ in range(6000)])
    diag = draws[:, np.arange(d), np.arange(d)].ravel()
    off = draws[:, *np.triu_indices(d, 1)].ravel()
    assert variance_pvalue(diag, sigma) > ALPHA
    assert variance_pvalue(off, sigma) > ALPHA
    # power: the naive (G + Gᵀ) construction fails the diagonal test (variance 4σ²) and the off-diagonal (2σ²)
    naive = np.stack([(lambda G: G + G.T)(rng.normal(0, sigma, (d, d))) for _ in range(2000)])
    assert variance_pvalue(naive[:, np.arange(d), np.arange(d)].ravel(), sigma) < ALPHA
    assert variance_pvalue(naive[:, *np.triu_indices(d, 1)].ravel(), sigma) < ALPHA


@pytest.mark.slow
def test_symmetric_gaussian_upper_entries_are_uncorrelated():
    d, N = 4, 20000
    rng = make_rng(3)
    U = np.stack([upper(symmetric_gaussian(d, 1.0, rng)) for _ in range(N)])  # N × 10
    R = np.corrcoef(U, rowvar=False)
    z = R[np.triu_indices(U.shape[1], 1)] * math.sqrt(N)  # ≈ N(0,1) under independence
    assert z_pvalue_max(z) > ALPHA
    # power: a shared component of relative size 0.3 (correlation ≈ 0.08) is detected
    common = rng.standard_normal((N, 1))
    Ubad = U + 0.3 * common
    Rb = np.corrcoef(Ubad, rowvar=False)
    assert z_pvalue_max(Rb[np.triu_indices(U.shape[1], 1)] * math.sqrt(N)) < ALPHA


# --------------------------------------------------------------------------------------------------
# Laplace family
# --------------------------------------------------------------------------------------------------

def test_symmetric_laplace_matches_laplace_law():
    scale = 3.0
    M = symmetric_laplace(400, scale, make_rng(4))
    assert np.array_equal(M, M.T)
    x = upper(M)
    assert ks_pvalue(x, stats.laplace(scale=scale).cdf) > ALPHA
    # exact test of the scale: Σ|x|/b ~ Gamma(N, 1)
    s = float(np.abs(x).sum() / scale)
    assert 2 * min(stats.gamma.cdf(s, x.size), stats.gamma.sf(s, x.size)) > ALPHA
    assert ks_pvalue(x, stats.laplace(scale=1.1 * scale).cdf) < ALPHA
    s_bad = float(np.abs(x).sum() / (1.1 * scale))
    assert 2 * min(stats.gamma.cdf(s_bad, x.size), stats.gamma.sf(s_bad, x.size)) < ALPHA


def test_symmetric_laplace_diagonal_has_the_same_law():
    scale, d = 0.5, 5
    rng = make_rng(5)
    draws = np.stack([symmetric_laplace(d, scale, rng) for _ in range(8000)])
    diag = draws[:, np.arange(d), np.arange(d)].ravel()
    assert ks_pvalue(diag, stats.laplace(scale=scale).cdf) > ALPHA
    assert ks_pvalue(diag, stats.laplace(scale=1.1 * scale).cdf) < ALPHA


def test_laplace_vector_draws():
    x = laplace(2.0, make_rng(6), size=100_000)
    assert x.shape == (100_000,)
    assert ks_pvalue(x, stats.laplace(scale=2.0).cdf) > ALPHA
    assert ks_pvalue(x, stats.laplace(scale=2.2).cdf) < ALPHA


def truncated_laplace_cdf(z, scale: float, half_width: float):
    """Exact CDF of Laplace(0, scale) conditioned on [−A, A]."""
    z = np.clip(np.asarray(z, dtype=float), -half_width, half_width)
    mass = -math.expm1(-half_width / scale)
    return 0.5 + 0.5 * np.sign(z) * (-np.expm1(-np.abs(z) / scale)) / mass


@pytest.mark.parametrize(
    ("scale", "half_width", "scale_visible", "width_visible"),
    [
        (1.0, 2.0, True, True),
        (2.0, 6.0, True, True),
        (2.0, 27.3274, True, False),  # Appendix A half-width: the truncation removes only e^{-13.7} of the mass
        (5.0, 1.0, False, True),  # scale ≫ A: nearly uniform, the scale is barely identifiable
    ],
)
def test_truncated_laplace_matches_the_exact_truncated_cdf(scale, half_width, scale_visible, width_visible):
    x = truncated_laplace(scale, half_width, make_rng(7), size=100_000)
    assert x.shape == (100_000,)
    assert np.all(np.abs(x) <= half_width)
    assert ks_pvalue(x, lambda z: truncated_laplace_cdf(z, scale, half_width)) > ALPHA
    # power: a wrong scale, or a wrong half-width, where the law actually depends on it
    if scale_visible:
        assert ks_pvalue(x, lambda z: truncated_laplace_cdf(z, 1.1 * scale, half_width)) < ALPHA
    if width_visible:
        assert ks_pvalue(x, lambda z: truncated_laplace_cdf(z, scale, 0.9 * half_width)) < ALPHA


def test_truncated_laplace_is_not_the_untruncated_law():
    x = truncated_laplace(1.0, 2.0, make_rng(8), size=50_000)
    assert ks_pvalue(x, stats.laplace(scale=1.0).cdf) < ALPHA


@pytest.mark.parametrize(("scale", "half_width"), [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (1.0, float("inf"))])
def test_truncated_laplace_validates(scale, half_width):
    with pytest.raises(InvalidParameterError):
        truncated_laplace(scale, half_width, make_rng(0), size=3)


# --------------------------------------------------------------------------------------------------
# Wishart
# --------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_wishart_bartlett_mean_is_df_times_scale_identity():
    d, df, s, N = 4, 7, 0.5, 20_000
    rng = make_rng(9)
    W = np.stack([wishart_bartlett(d, df, s, rng) for _ in range(N)])
    assert np.allclose(W, np.swapaxes(W, 1, 2))
    mean = W.mean(axis=0)
    # Var(W_ii) = 2·df·s², Var(W_ij) = df·s² (i ≠ j) for W ~ W_d(sI, df)
    sd = np.where(np.eye(d, dtype=bool), math.sqrt(2 * df) * s, math.sqrt(df) * s) / math.sqrt(N)
    z = (mean - df * s * np.eye(d)) / sd
    assert z_pvalue_max(upper(z)) > ALPHA
    # power: scale × 1.1 and df + 1 are both rejected
    assert z_pvalue_max(upper((mean - df * 1.1 * s * np.eye(d)) / sd)) < ALPHA
    assert z_pvalue_max(upper((mean - (df + 1) * s * np.eye(d)) / sd)) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("df", [1.0, 3.0, 2.5])
def test_wishart_bartlett_one_dimensional_is_scaled_chi_square(df):
    s = 0.7
    rng = make_rng(10)
    x = np.array([wishart_bartlett(1, df, s, rng)[0, 0] for _ in range(40_000)])
    assert ks_pvalue(x, stats.chi2(df, scale=s).cdf) > ALPHA
    assert ks_pvalue(x, stats.chi2(df, scale=1.1 * s).cdf) < ALPHA


def _wishart_features(W: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "trace": np.trace(W, axis1=1, axis2=2),
        "W11": W[:, 0, 0],
        "Wdd": W[:, -1, -1],
        "W12": W[:, 0, 1],
        "logdet": np.linalg.slogdet(W)[1],
    }


@pytest.mark.slow
def test_wishart_bartlett_exact_marginals():
    """tr W ~ s·χ²_{d·df}, every W_ii ~ s·χ²_df (including the last, which mixes the Bartlett factors)."""
    d, df, s, N = 3, 5.5, 2.0, 40_000
    rng = make_rng(11)
    W = np.stack([wishart_bartlett(d, df, s, rng) for _ in range(N)])
    f = _wishart_features(W)
    assert ks_pvalue(f["trace"], stats.chi2(d * df, scale=s).cdf) > ALPHA
    assert ks_pvalue(f["W11"], stats.chi2(df, scale=s).cdf) > ALPHA
    assert ks_pvalue(f["Wdd"], stats.chi2(df, scale=s).cdf) > ALPHA
    assert ks_pvalue(f["trace"], stats.chi2(d * df, scale=1.1 * s).cdf) < ALPHA
    assert ks_pvalue(f["Wdd"], stats.chi2(df, scale=1.1 * s).cdf) < ALPHA


@pytest.mark.slow
def test_wishart_bartlett_matches_scipy_wishart():
    d, df, s, N = 3, 5, 0.5, 30_000
    rng = make_rng(12)
    ours = np.stack([wishart_bartlett(d, df, s, rng) for _ in range(N)])
    ref = stats.wishart(df=df, scale=s * np.eye(d)).rvs(size=N, random_state=np.random.default_rng(99))
    wrong = stats.wishart(df=df, scale=1.1 * s * np.eye(d)).rvs(size=N, random_state=np.random.default_rng(98))
    fo, fr, fw = _wishart_features(ours), _wishart_features(ref), _wishart_features(wrong)
    for key in fo:
        assert ks2_pvalue(fo[key], fr[key]) > ALPHA, key
    # power: scipy's law with scale × 1.1 is told apart on the scale-sensitive features
    for key in ("trace", "logdet"):
        assert ks2_pvalue(fo[key], fw[key]) < ALPHA, key


@pytest.mark.slow
def test_wishart_gram_matches_bartlett():
    d, df, s, N = 3, 6, 0.8, 30_000
    rng = make_rng(13)
    gram = np.stack([wishart_gram(d, df, s, rng) for _ in range(N)])
    bart = np.stack([wishart_bartlett(d, df, s, rng) for _ in range(N)])
    wrong = np.stack([wishart_gram(d, df, 1.1 * s, rng) for _ in range(N)])
    fg, fb, fw = _wishart_features(gram), _wishart_features(bart), _wishart_features(wrong)
    for key in fg:
        assert ks2_pvalue(fg[key], fb[key]) > ALPHA, key
    assert ks_pvalue(fg["trace"], stats.chi2(d * df, scale=s).cdf) > ALPHA
    for key in ("trace", "logdet"):
        assert ks2_pvalue(fw[key], fb[key]) < ALPHA, key


def test_wishart_bartlett_is_positive_definite_and_validates_df():
    W = wishart_bartlett(30, 30, 1.0, make_rng(14))  # df = d: still PD
    assert np.linalg.eigvalsh(W).min() > 0
    assert np.array_equal(W, W.T)
    with pytest.raises(InvalidParameterError, match="degrees of freedom"):
        wishart_bartlett(5, 4, 1.0, make_rng(0))
    with pytest.raises(InvalidParameterError):
        wishart_bartlett(0, 4, 1.0, make_rng(0))


# --------------------------------------------------------------------------------------------------
# uniform directions and subspaces
# --------------------------------------------------------------------------------------------------

def sphere_coordinate_cdf(q: int):
    """CDF of one coordinate t of a uniform unit vector in R^q: (t + 1)/2 ~ Beta((q−1)/2, (q−1)/2)."""
    a = (q - 1) / 2.0
    return lambda t: stats.beta.cdf((np.asarray(t) + 1.0) / 2.0, a, a)


def _stiefel_no_sign_fix(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """The classic mistake: plain QR without fixing the signs of diag(R); not Haar."""
    return np.linalg.qr(rng.standard_normal((d, k)))[0]


@pytest.mark.parametrize(("d", "k"), [(6, 1), (6, 3), (10, 10)])
def test_uniform_stiefel_is_orthonormal(d, k):
    V = uniform_stiefel(d, k, make_rng(15))
    assert V.shape == (d, k)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-12)


@pytest.mark.slow
def test_uniform_stiefel_k1_is_haar():
    d, N = 5, 30_000
    rng = make_rng(16)
    v = np.stack([uniform_stiefel(d, 1, rng)[:, 0] for _ in range(N)])
    beta = stats.beta(0.5, (d - 1) / 2.0).cdf
    assert ks_pvalue(v[:, 0] ** 2, beta) > ALPHA  # |⟨v, e1⟩|² ~ Beta(1/2, (d−1)/2)
    assert ks_pvalue(v[:, 0], sphere_coordinate_cdf(d)) > ALPHA  # signed coordinate is symmetric
    # power: the squared coordinate of a different dimension, and the QR without sign fix (one-signed v₁)
    assert ks_pvalue(v[:, 0] ** 2, stats.beta(0.5, d / 2.0).cdf) < ALPHA
    bad = np.stack([_stiefel_no_sign_fix(d, 1, rng)[:, 0] for _ in range(N)])
    assert ks_pvalue(bad[:, 0] ** 2, beta) > ALPHA  # the magnitude alone cannot see the mistake ...
    assert ks_pvalue(bad[:, 0], sphere_coordinate_cdf(d)) < ALPHA  # ... the signed coordinate can


@pytest.mark.slow
def test_uniform_stiefel_subspace_is_haar():
    """‖Vᵀe₁‖² ~ Beta(k/2, (d−k)/2) for a uniform k-plane, and each column is uniform on the sphere."""
    d, k, N = 6, 3, 20_000
    rng = make_rng(17)
    V = np.stack([uniform_stiefel(d, k, rng) for _ in range(N)])
    proj = np.sum(V[:, 0, :] ** 2, axis=1)
    assert ks_pvalue(proj, stats.beta(k / 2.0, (d - k) / 2.0).cdf) > ALPHA
    assert ks_pvalue(proj, stats.beta((k + 1) / 2.0, (d - k) / 2.0).cdf) < ALPHA
    for j in range(k):
        assert ks_pvalue(V[:, 0, j], sphere_coordinate_cdf(d)) > ALPHA, j
    bad = np.stack([_stiefel_no_sign_fix(d, k, rng) for _ in range(N)])
    assert min(ks_pvalue(bad[:, 0, j], sphere_coordinate_cdf(d)) for j in range(k)) < ALPHA


def test_uniform_sphere():
    q, N = 3, 60_000
    x = uniform_sphere(q, make_rng(18), size=N)
    assert x.shape == (N, q)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-12)
    # Archimedes: each coordinate of a uniform point on S² is Uniform(−1, 1)
    for j in range(q):
        assert ks_pvalue(x[:, j], stats.uniform(-1, 2).cdf) > ALPHA
    # power: normalising a uniform cube sample is not uniform on the sphere
    rng = make_rng(19)
    cube = rng.uniform(-1, 1, (N, q))
    cube /= np.linalg.norm(cube, axis=1, keepdims=True)
    assert ks_pvalue(cube[:, 0], stats.uniform(-1, 2).cdf) < ALPHA
    one = uniform_sphere(7, make_rng(20))
    assert one.shape == (7,)
    assert math.isclose(float(np.linalg.norm(one)), 1.0, rel_tol=1e-12)
    y = uniform_sphere(7, make_rng(21), size=N)
    assert ks_pvalue(y[:, 3], sphere_coordinate_cdf(7)) > ALPHA
    assert ks_pvalue(y[:, 3], sphere_coordinate_cdf(6)) < ALPHA
