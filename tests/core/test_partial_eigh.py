"""Issue #22 item 3: DPPCA.fit takes its subspace from a partial eigensolver and defers covariance_post.

The release it makes is the one the eager path makes (same noisy covariance, same covariance_post bit for bit, the
same span); only the work not needed for the subspace is left until someone reads covariance_post.
"""

from __future__ import annotations

import numpy as np
import pytest
from _unit_rows import unit_rows

from dpcore import DPPCA
from dpcore.core.linalg import PARTIAL_EIGH_FROM_D, eigh_desc, top_k_eigenpairs
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.base import Release

COVARIANCE_MECHANISMS = ("analyze_gauss", "laplace", "mod_sulq", "wishart_sheffet")


@pytest.mark.parametrize(("d", "k"), [(5, 2), (30, 2), (PARTIAL_EIGH_FROM_D, 4), (120, 3), (200, 2), (200, 30)])
def test_top_k_eigenpairs_are_those_of_a_full_eigh(d, k):
    """Both branches (full eigh below the size rule, the partial solver above it): decreasing eigenvalues equal to
    the full decomposition's, orthonormal vectors spanning the same eigenspace."""
    A = np.random.default_rng(d + k).standard_normal((d, d))
    M = A @ A.T + np.diag(np.linspace(3 * d, 0, d))  # well separated top eigenvalues
    w, V = top_k_eigenpairs(M, k)
    w_full, V_full = eigh_desc(M)
    np.testing.assert_allclose(w, w_full[:k], rtol=1e-10, atol=1e-10 * abs(w_full).max())
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(V @ V.T, V_full[:, :k] @ V_full[:, :k].T, atol=1e-8)
    np.testing.assert_allclose(M @ V, V * w, atol=1e-8 * abs(w_full).max())


@pytest.mark.parametrize("mechanism", COVARIANCE_MECHANISMS)
def test_a_lazy_release_is_the_eager_release(mechanism):
    """Same seed: the raw covariance is identical, covariance_post (computed on first read) is the eager one bit
    for bit, the subspace spans the same plane and the variances along it agree."""
    X = unit_rows(600, 80)
    prepared = get_mechanism(mechanism).prepare_release(X, 3, 1.0, 1e-5 if get_mechanism(mechanism).uses_delta
                                                        else 0.0)
    eager = prepared.run(7)
    lazy = prepared.run(7, lazy_post=True)
    np.testing.assert_array_equal(lazy.covariance, eager.covariance)
    assert lazy.__dict__["_post_deferred"] is not None  # nothing computed yet
    np.testing.assert_allclose(lazy.post_processed_variances(), eager.post_processed_variances(), rtol=1e-9,
                               atol=1e-12)
    assert lazy.__dict__["_post_deferred"] is not None  # the variances did not need covariance_post
    np.testing.assert_allclose(lazy.projector, eager.projector, atol=1e-9)
    np.testing.assert_array_equal(lazy.covariance_post, eager.covariance_post)
    assert lazy.__dict__["_post_deferred"] is None
    assert lazy.as_dict()["private_output"]["covariance_post"] == eager.as_dict()["private_output"][
        "covariance_post"]


def test_covariance_post_set_explicitly_replaces_a_deferred_one():
    release = get_mechanism("analyze_gauss").prepare_release(unit_rows(200, 60), 2, 1.0, 1e-5).run(
        1, lazy_post=True)
    release.covariance_post = np.zeros((60, 60))
    np.testing.assert_array_equal(release.covariance_post, 0.0)
    assert Release(**{f: getattr(release, f) for f in release.__dataclass_fields__}).covariance_post is not None


@pytest.mark.parametrize("mechanism", COVARIANCE_MECHANISMS)
def test_dppca_fit_matches_the_eager_release(mechanism):
    """The estimator's components span the top-k eigenvectors of its released covariance (what the eager path
    takes from a full eigh) and its explained scatter equals B²·v̂ᵀ·covariance_post·v̂, to rounding."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 70)) * np.linspace(1.5, 0.1, 70)
    model = DPPCA(mechanism=mechanism, n_components=3, norm_bound=2.0, random_state=11).fit(X)
    release = model.release_
    top = eigh_desc(release.covariance)[1][:, :3]
    np.testing.assert_allclose(model.components_.T @ model.components_, top @ top.T, atol=1e-9)
    V = release.subspace
    expected = np.sum(V * (release.covariance_post @ V), axis=0) * release.norm_bound**2
    np.testing.assert_allclose(model.explained_scatter_, expected, rtol=1e-9, atol=1e-12)


def test_the_partial_solver_runs_on_one_blas_thread_below_the_large_size(monkeypatch):
    """scipy's OpenBLAS is not numpy's: left on its default threads, its spinning pool slowed numpy's next XᵀX
    (a fit took 15 ms instead of 9.5 on two cores). Below SMALL_DENSE_BELOW it runs on one thread, and the default
    comes back afterwards."""
    import scipy.linalg
    from threadpoolctl import threadpool_info, threadpool_limits

    from dpcore.core.threads import SMALL_DENSE_BELOW

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen: list[set[int]] = []
    real = scipy.linalg.eigh

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.linalg, "eigh", spy)
    M = np.diag(np.arange(120.0))
    with threadpool_limits(limits=2, user_api="blas"):
        top_k_eigenpairs(M, 3)
        after = blas_threads()
    assert SMALL_DENSE_BELOW > 120 and seen == [{1}] and after == {2}
