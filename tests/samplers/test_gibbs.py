"""Hoff's matrix Bingham Gibbs sampler: θ conditional, chain law against the exact Kent sampler, diagnostics.

Chain-vs-exact comparisons use batch means (the chain is autocorrelated) and a two-sided test at α = 1e-6 with a
Bonferroni correction; a power check shows the same statistic rejects a wrong target.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.core.timing import Deadline
from dpcore.exceptions import InvalidParameterError, MechanismTimeout, SamplerError
from dpcore.samplers import gibbs
from dpcore.samplers.bingham import KentBinghamSampler
from dpcore.samplers.gibbs import (
    STAT_NAMES,
    _gamma_threshold,
    _rtheta_near_one,
    _ry_bing_sweep,
    bmf_gibbs,
    f_statistic,
    rtheta_bing,
    ry_bing,
)

ALPHA = 1e-6


def _rotated(eigs: list[float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    R = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(eigs), len(eigs))))[0]
    return R @ np.diag(eigs) @ R.T, R


def _max_abs_z(chain_stats: np.ndarray, iid_stats: np.ndarray, n_batches: int = 40) -> tuple[float, float]:
    """Largest |z| over columns (batch-means SE for the chain, i.i.d. SE for the exact sample) and its critical
    value (Student t with n_batches − 1 d.o.f., two-sided α/columns)."""
    cols = chain_stats.shape[1]
    T = chain_stats.shape[0] // n_batches * n_batches
    bm = chain_stats[:T].reshape(n_batches, -1, cols).mean(axis=1)
    se_chain = bm.std(axis=0, ddof=1) / math.sqrt(n_batches)
    se_iid = iid_stats.std(axis=0, ddof=1) / math.sqrt(iid_stats.shape[0])
    z = (bm.mean(axis=0) - iid_stats.mean(axis=0)) / np.sqrt(se_chain**2 + se_iid**2)
    crit = stats.t.ppf(1.0 - ALPHA / (2 * cols), n_batches - 1)
    return float(np.max(np.abs(z))), float(crit)


# --------------------------------------------------------------------------------------------------
# θ conditional (rtheta_bing) against its exact CDF
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("h,a", [(0.5, -3.0), (0.5, 0.3), (0.5, 40.0), (2.0, -2.0), (2.0, -60.0), (2.0, 5.0),
                                 (4.5, -1.0), (4.5, 150.0), (22.0, -180.0),
                                 # a ≥ 4h: the envelope in φ = 1 − θ (_rtheta_near_one), at its edge and beyond
                                 (1.0, 4.0), (2.0, 8.0), (22.0, 90.0), (51.5, 400.0), (51.5, 2500.0)])
def test_rtheta_matches_exact_cdf(h, a):
    """KS against ∫₀^θ t^{−1/2}(1−t)^{h−1}e^{at} dt (substitution t = s² removes the singularity at 0). Where the
    law sits near θ = 1 (h ≥ 1, a ≥ 4h) the CDF is 1 − ∫_0^{1−θ} of the density in φ = 1 − θ, scaled at its mode
    (the θ-form's quadrature misses a peak of width ≈ √h/a)."""
    rng = np.random.default_rng(100)
    x = np.sort([rtheta_bing(h, a, rng) for _ in range(3000)])
    if h >= 1.0 and a >= 4.0 * h:
        mode = (h - 1.0) / a
        log_peak = (h - 1.0) * math.log(mode) - a * mode if mode > 0 else 0.0

        def f_phi(p: float) -> float:
            return (1.0 - p) ** -0.5 * math.exp((h - 1.0) * math.log(p) - a * p - log_peak) if 0.0 < p < 1.0 else 0.0

        def upper(p: float) -> float:  # ∫_p^1 f_phi
            return integrate.quad(f_phi, p, 1.0, points=[mode] if p < mode else None, limit=400)[0]

        Z = upper(0.0)
        cdf = np.vectorize(lambda t: upper(1.0 - min(max(t, 0.0), 1.0)) / Z)
    else:
        shift = max(a, 0.0)

        def f(s: float) -> float:
            return 2.0 * (1.0 - s * s) ** (h - 1.0) * math.exp(a * s * s - shift)

        Z = integrate.quad(f, 0.0, 1.0, limit=400)[0]
        cdf = np.vectorize(lambda t: integrate.quad(f, 0.0, math.sqrt(min(max(t, 0.0), 1.0)), limit=400)[0] / Z)
    assert stats.kstest(x, cdf).pvalue > ALPHA
    if a < _gamma_threshold(h):
        assert h >= 1.0  # the truncated-Gamma envelope is only used where it is valid


@pytest.mark.parametrize("h,a,draw", [
    (1.0, 4.0, "rtheta_bing"), (1.5, 6.0, "rtheta_bing"), (2.0, 8.0, "rtheta_bing"), (3.5, 14.0, "rtheta_bing"),
    (5.5, 22.0, "rtheta_bing"),
    (22.0, 42.5, "near_one"),  # just above the envelope's validity bound a > 2(h − 1), called directly
])
def test_rtheta_near_one_puts_the_exact_mass_on_both_envelope_pieces(h, a, draw):
    """At a = 4h the piece for φ = 1 − θ > ½ carries up to a third of the envelope's mass (integer and half-integer
    h, as m odd and even give): 100,000 draws against the exact probabilities of θ < 0.05 and θ < ½ (that piece's
    shape and mass) and of θ < ¾, binomial tests."""
    rng = np.random.default_rng(7)
    if draw == "near_one":
        x = np.array([_rtheta_near_one(h, a, rng, rng.random()) for _ in range(100_000)])
    else:
        x = np.array([rtheta_bing(h, a, rng) for _ in range(100_000)])

    def f_phi(p: float) -> float:
        return (1.0 - p) ** -0.5 * p ** (h - 1.0) * math.exp(-a * p)

    mode = (h - 1.0) / a
    Z = integrate.quad(f_phi, 0.0, 1.0, points=[mode] if mode > 0 else None, limit=400)[0]
    for t in (0.05, 0.5, 0.75):
        exact = integrate.quad(f_phi, 1.0 - t, 1.0, points=[mode] if mode > 1.0 - t else None, limit=400)[0] / Z
        assert stats.binomtest(int(np.sum(x < t)), x.size, exact).pvalue > ALPHA, (t, exact, np.mean(x < t))


def test_rtheta_near_one_refuses_parameters_outside_its_envelope():
    with pytest.raises(InvalidParameterError):
        _rtheta_near_one(22.0, 41.0, np.random.default_rng(0), 0.5)  # a < 2(h − 1): c_B does not bound the tail
    with pytest.raises(InvalidParameterError):
        _rtheta_near_one(0.5, 40.0, np.random.default_rng(0), 0.5)


class _Rejecting:
    """A generator stand-in whose draws make every envelope reject (uniforms of 1, proposals far out)."""

    def random(self, size=None):
        return 1.0 if size is None else np.ones(size)

    def beta(self, a, b, size=None):
        return 0.999 if size is None else np.full(size, 0.999)

    def standard_normal(self, size=None):
        return 30.0 if size is None else np.full(size, 30.0)

    def standard_gamma(self, shape, size=None):
        return 1e9 if size is None else np.full(size, 1e9)


@pytest.mark.parametrize("h,a", [(22.0, -180.0), (4.5, -1.0), (2.0, 5.0), (51.5, 400.0)])
def test_sampler_errors_carry_no_data_statistics(monkeypatch, h, a):
    """privacy-review item 7: a is a function of the data (l_i minus a weighted mean of the block's eigenvalues), so a
    sampler error that reaches a release's message must not show it (the old messages printed a = …). Every θ
    envelope — truncated Gamma, Beta(1/2, h), Beta(1/2, g) for a > 0, near one — is made to give up."""
    monkeypatch.setattr(gibbs, "RTHETA_MAX_PROPOSALS", 40)
    with pytest.raises(SamplerError) as err:
        rtheta_bing(h, a, _Rejecting())
    assert f"{a:g}" not in str(err.value) and "a =" not in str(err.value)
    with pytest.raises(SamplerError) as err:  # the sweep's range check: no a, no spread (max l)
        _ry_bing_sweep([math.nan, 0.6, 0.8], [0.0, 7.25, 13.5], np.random.default_rng(0))
    assert "7.25" not in str(err.value) and "13.5" not in str(err.value) and "nan" not in str(err.value)


def test_rtheta_input_checks():
    with pytest.raises(InvalidParameterError):
        rtheta_bing(0.0, 1.0, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError):
        rtheta_bing(1.0, float("nan"), np.random.default_rng(0))


def test_ry_bing_returns_unit_vector_and_handles_degenerate_start():
    rng = np.random.default_rng(1)
    l = np.array([0.0, 2.0, 50.0, 400.0])
    y = ry_bing(np.array([0.0, 0.0, 0.0, 1.0]), l, rng)  # Σ_{j≠i} y_j² = 0 for i = 3
    assert np.linalg.norm(y) == pytest.approx(1.0)
    for _ in range(2000):  # large spread: no drift off the sphere, no hang
        y = ry_bing(y, l, rng)
    assert np.linalg.norm(y) == pytest.approx(1.0) and np.all(np.isfinite(y))
    assert ry_bing(np.array([0.3]), np.array([1.0]), rng).shape == (1,)


# --------------------------------------------------------------------------------------------------
# the chain against the exact sampler
# --------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_gibbs_k1_matches_kent():
    """k = 1: E[(Rᵀv)_i²] of the chain equals that of exact Kent draws for the same target exp(vᵀMv)."""
    M, R = _rotated([6.0, 3.0, 1.0, 0.0, 0.0], seed=2)
    rng = np.random.default_rng(3)
    res = bmf_gibbs(M, 1, 10000, rng, keep_every=1)
    chain = ((res.samples[0, 400:, :, 0] @ R) ** 2)[:, :3]
    exact = ((KentBinghamSampler.from_score(M, 1.0).sample_many(40000, rng) @ R) ** 2)[:, :3]
    z, crit = _max_abs_z(chain, exact)
    assert z < crit
    # power: the same statistic rejects a different target (exponent 1.5·M)
    wrong = ((KentBinghamSampler.from_score(M, 1.5).sample_many(40000, rng) @ R) ** 2)[:, :3]
    z_wrong, _ = _max_abs_z(chain, wrong)
    assert z_wrong > crit


@pytest.mark.slow
def test_gibbs_k1_large_block_path_matches_kent():
    """d = 30 (block size ≥ the threshold of the flop-lean update path) against exact Kent draws."""
    M, R = _rotated(list(np.linspace(8.0, 0.0, 30)), seed=12)
    rng = np.random.default_rng(13)
    res = bmf_gibbs(M, 1, 4000, rng, keep_every=1)
    chain = ((res.samples[0, 200:, :, 0] @ R) ** 2)[:, :3]
    exact = ((KentBinghamSampler.from_score(M, 1.0).sample_many(40000, rng) @ R) ** 2)[:, :3]
    z, crit = _max_abs_z(chain, exact)
    assert z < crit
    wrong = ((KentBinghamSampler.from_score(M, 1.5).sample_many(40000, rng) @ R) ** 2)[:, :3]
    assert _max_abs_z(chain, wrong)[0] > crit


@pytest.mark.slow
@pytest.mark.parametrize("d", [8, 30])
def test_gibbs_k1_with_a_large_spread_matches_kent(d):
    """A spread of 60 ≫ |a_gamma| (3.3 at d = 8, 14 at d = 30): most coordinate updates draw θ through the
    truncated-Gamma envelope's pre-drawn first proposal (≈ 87 % at d = 8), the top coordinate through the near-one
    envelope (≈ 12 % at d = 8, ≈ 1 % at d = 30); the Beta envelope's pre-drawn proposal is used only at d = 30
    (≈ 3 %) — against exact Kent draws, on the dense (d = 8) and the tridiagonal (d = 30) path."""
    M, R = _rotated([60.0, 45.0, 30.0, 6.0] + [0.0] * (d - 4), seed=20 + d)
    assert -_gamma_threshold(0.5 * (d - 1)) < 60.0 / 4
    rng = np.random.default_rng(21 + d)
    res = bmf_gibbs(M, 1, 6000, rng, keep_every=1)

    def coords(v: np.ndarray) -> np.ndarray:  # y₂², y₃², y₄² and the mass outside the top three
        y2 = (v @ R) ** 2
        return np.column_stack([y2[:, 1:4], y2[:, 3:].sum(axis=1)])

    chain = coords(res.samples[0, 200:, :, 0])
    exact = coords(KentBinghamSampler.from_score(M, 1.0).sample_many(40000, rng))
    z, crit = _max_abs_z(chain, exact)
    assert z < crit
    wrong = coords(KentBinghamSampler.from_score(M, 1.25).sample_many(40000, rng))
    assert _max_abs_z(chain, wrong)[0] > crit


@pytest.mark.slow
def test_gibbs_k2_of_3_matches_kent_on_complement():
    """d = 3, k = 2: etr(VᵀMV) = exp(tr M − wᵀMw) for the normal w of span(V), so w ~ Bingham exp(−wᵀMw).

    Exercises the cross-column block updates and the m = 2 (h = 1/2) edge case of rtheta_bing.
    """
    M, R = _rotated([4.0, 1.5, 0.0], seed=4)
    rng = np.random.default_rng(5)
    res = bmf_gibbs(M, 2, 10000, rng, keep_every=1)
    V = res.samples[0, 400:]
    w = np.cross(V[:, :, 0], V[:, :, 1])
    assert np.allclose(np.linalg.norm(w, axis=1), 1.0)
    chain = (w @ R) ** 2
    exact = (KentBinghamSampler.from_score(-M, 1.0).sample_many(40000, rng) @ R) ** 2
    z, crit = _max_abs_z(chain, exact)
    assert z < crit
    wrong = (KentBinghamSampler.from_score(-M, 1.5).sample_many(40000, rng) @ R) ** 2
    assert _max_abs_z(chain, wrong)[0] > crit


# --------------------------------------------------------------------------------------------------
# diagnostics, shapes, guards
# --------------------------------------------------------------------------------------------------

def test_result_shapes_and_f_traces():
    rng = np.random.default_rng(6)
    d, k = 8, 3
    C = np.diag(np.linspace(50.0, 1.0, d))
    res = bmf_gibbs(C, k, 200, rng, chains=3, record_every=10)
    assert len(res.states) == 3
    for V in res.states:
        assert V.shape == (d, k)
        assert np.allclose(V.T @ V, np.eye(k), atol=1e-10)
    assert res.f_traces.shape == (3, 20)
    assert list(res.trace_scans[:3]) == [10, 20, 30] and res.trace_scans[-1] == 200
    assert np.all(res.f_traces >= 0) and np.all(res.f_traces <= 1.0 + 1e-12)
    assert res.final_f.shape == (3,)
    assert res.f_below(threshold=10.0) and not res.f_below(threshold=0.0)
    assert res.samples is None
    assert res.stat_traces.shape == (3, 20, len(STAT_NAMES))
    assert res.verdict.status == "not converged (too few scans to judge)"  # 3 chains × 10 judged records


def test_stat_traces_are_the_score_and_principal_angles_of_the_state():
    """The recorded statistics are tr(VᵀMV) and cos² of the principal angles to the top-k eigenvectors of M,
    computed from the state itself — and they are sign-invariant functions of the subspace."""
    M, R = _rotated([9.0, 6.0, 4.0, 1.0, 0.5, 0.0, 0.0], seed=3)
    res = bmf_gibbs(M, 3, 30, np.random.default_rng(2), keep_every=1, record_every=1)
    top = R[:, :3]
    for V, row in zip(res.samples[0], res.stat_traces[0]):
        cos2 = np.linalg.svd(top.T @ V, compute_uv=False) ** 2
        flipped = V * np.array([-1.0, 1.0, -1.0])
        assert row[0] == pytest.approx(np.trace(flipped.T @ M @ flipped), abs=1e-9)
        assert row[1] == pytest.approx(cos2.sum(), abs=1e-9) and row[2] == pytest.approx(cos2.min(), abs=1e-9)


def test_chain_runs_with_single_threaded_blas(monkeypatch):
    """Issue #22: the in-process scan runs its small dense linear algebra with every BLAS on one thread (observed
    from inside the scan), and the limit is lifted afterwards."""
    from threadpoolctl import threadpool_info, threadpool_limits

    import dpcore.samplers.gibbs as gibbs

    seen: list[list[int]] = []
    real = gibbs._rebuild

    def spy(M, V):
        seen.append([lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"])
        return real(M, V)

    monkeypatch.setattr(gibbs, "_rebuild", spy)
    with threadpool_limits(limits=2, user_api="blas"):  # as a 2-core machine's default
        before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
        gibbs.bmf_gibbs(np.diag(np.linspace(5.0, 0.0, 40)), 3, 9, np.random.default_rng(0))  # block m ≥ 24
        after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert seen and all(threads and set(threads) == {1} for threads in seen)
    assert after == before and max(before) == 2
    names = {lib["filepath"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    assert any("scipy" in n for n in names)  # scipy's LAPACK (tridiagonal path) is among the limited libraries


def test_f_statistic_definition():
    V = np.eye(4)[:, :2]
    assert f_statistic(4 * V, 4) == pytest.approx(1.0)  # a constant chain: ‖V‖_F/√k = 1
    assert f_statistic(np.zeros((4, 2)), 10) == 0.0


def test_v0_is_used_and_checked():
    rng = np.random.default_rng(7)
    V0 = np.eye(5)[:, :2]
    res = bmf_gibbs(np.zeros((5, 5)), 2, 1, rng, V0=V0, keep_every=1)
    assert res.samples.shape == (1, 1, 5, 2)
    with pytest.raises(InvalidParameterError):
        bmf_gibbs(np.zeros((5, 5)), 2, 1, rng, V0=np.ones((5, 2)))
    with pytest.raises(InvalidParameterError):
        bmf_gibbs(np.zeros((5, 5)), 5, 1, rng)


def test_large_spread_stays_orthonormal():
    """Concentrated target (nε large): the numerical guards keep the chain on the manifold."""
    rng = np.random.default_rng(8)
    M, _ = _rotated([5e4, 2e4, 10.0, 1.0, 0.0, 0.0], seed=9)
    res = bmf_gibbs(M, 2, 300, rng, chains=2)
    for V in res.states:
        assert np.allclose(V.T @ V, np.eye(2), atol=1e-10)
    # and it found the top-2 subspace
    top = np.linalg.eigh(M)[1][:, -2:]
    assert np.linalg.norm(top.T @ res.states[0]) ** 2 == pytest.approx(2.0, abs=1e-3)


def test_deadline_raises_timeout():
    import time

    deadline = Deadline(1e-9)
    time.sleep(0.01)
    with pytest.raises(MechanismTimeout):
        bmf_gibbs(np.eye(6), 2, 100, np.random.default_rng(0), deadline=deadline)


def test_small_dense_linear_algebra_runs_on_one_blas_thread_in_process(monkeypatch):
    """Issue #22: IT-U's vector loop (d eigendecompositions) and the Gibbs sampler's reference eigh run on one BLAS
    thread below d = SMALL_DENSE_BELOW, in-process, and the default threads come back afterwards; from that size
    on the library default is kept."""
    from threadpoolctl import threadpool_info, threadpool_limits

    import dpcore.mechanisms.itu as itu
    from dpcore.samplers.gibbs import SMALL_DENSE_BELOW, blas_threads_for

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen: list[set[int]] = []
    real = KentBinghamSampler.from_score.__func__

    def spy(cls, C, c, **kwargs):
        seen.append(blas_threads())
        return real(cls, C, c, **kwargs)

    monkeypatch.setattr(itu.KentBinghamSampler, "from_score", classmethod(spy))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 12))
    C = X.T @ X / 200
    with threadpool_limits(limits=2, user_api="blas"):  # as a 2-core machine's default
        before = blas_threads()
        thetas, _ = itu.sample_iterative_vectors(C, [0.5, 0.5, 0.5], "paper", rng, Deadline(None), "test")
        after = blas_threads()
        with blas_threads_for(SMALL_DENSE_BELOW):
            large = blas_threads()
    assert len(seen) == 3 and all(s == {1} for s in seen)
    assert before == after == large == {2}
    np.testing.assert_allclose(thetas.T @ thetas, np.eye(3), atol=1e-10)
