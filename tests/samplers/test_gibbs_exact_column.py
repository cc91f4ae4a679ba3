"""Issue #33: the Gibbs scan's exact column draw (`gibbs._ExactColumn`) and the law of the chain it drives.

The column update draws the column exactly from its conditional (Kent–Ganeiber–Mardia ACG rejection, no
eigendecomposition) instead of one sweep of Hoff's ``ry_bing``. Both kernels leave BMF_k(M) invariant, so the chains
must agree in law: (1) single draws against the exact Kent sampler, for any envelope tuning λ̂ and b; (2) long
chains of both kernels against each other (batch means, two-sided, α = 1e-6 with a Bonferroni correction), on the
small dense path and on Hoff's tridiagonal path (m ≥ 24). Each test has a mutant that it must reject: the column
draw without its acceptance step (an ACG, not a Bingham, sample), and a scan whose conditional is off by a factor
of 1.3 in M.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.threads import single_threaded_blas
from dpcore.exceptions import InvalidParameterError
from dpcore.samplers import gibbs
from dpcore.samplers.bingham import KentBinghamSampler
from dpcore.samplers.gibbs import _ExactColumn, bmf_gibbs

ALPHA = 1e-6


def _rotated(eigs: list[float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    R = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(eigs), len(eigs))))[0]
    return R @ np.diag(eigs) @ R.T, R


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Largest |z| over columns between the means of two i.i.d. samples, and its two-sided Bonferroni critical value."""
    z = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
    return float(np.max(np.abs(z))), float(stats.norm.ppf(1.0 - ALPHA / (2 * a.shape[1])))


def _chains_z(x: np.ndarray, y: np.ndarray, n_batches: int = 40) -> tuple[float, float]:
    """Largest |z| over columns between two autocorrelated chains (batch means) and its critical value (Student t
    with n_batches − 1 d.o.f., two-sided α/columns)."""
    def bm(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T = c.shape[0] // n_batches * n_batches
        m = c[:T].reshape(n_batches, -1, c.shape[1]).mean(axis=1)
        return m.mean(0), m.std(0, ddof=1) / math.sqrt(n_batches)

    (mx, sx), (my, sy) = bm(x), bm(y)
    z = (mx - my) / np.sqrt(sx**2 + sy**2)
    return float(np.max(np.abs(z))), float(stats.t.ppf(1.0 - ALPHA / (2 * x.shape[1]), n_batches - 1))


def _projections(samples: np.ndarray) -> np.ndarray:
    """Upper triangle of VVᵀ per state (sign- and rotation-invariant functions of the subspace)."""
    d = samples.shape[-2]
    iu = np.triu_indices(d)
    P = np.einsum("...ik,...jk->...ij", samples, samples)
    return P[..., iu[0], iu[1]].reshape(-1, iu[0].size)


# --------------------------------------------------------------------------------------------------
# One column draw against the exact Kent sampler
# --------------------------------------------------------------------------------------------------

S3, R3 = _rotated([9.0, 4.0, 0.5, 0.0], 11)  # a 4 × 4 block (m = 4), spread 9


def _column_draws(n: int, seed: int, column: _ExactColumn | None = None) -> np.ndarray:
    col = column or _ExactColumn(S3, 4)
    rng = np.random.default_rng(seed)
    with single_threaded_blas():  # as in the chain (tiny LAPACK calls; threads only add overhead)
        return np.array([col.draw(S3, rng) for _ in range(n)])


def _stats(x: np.ndarray) -> np.ndarray:
    y = x @ R3  # coordinates in S3's eigenbasis; squares (sign-invariant) and |products|
    return np.column_stack([y**2, np.abs(y[:, 0] * y[:, 1]), np.abs(y[:, 1] * y[:, 2])])


def _kent_draws(n: int, seed: int) -> np.ndarray:
    return KentBinghamSampler(-S3).sample_many(n, np.random.default_rng(seed))


def test_exact_column_draw_matches_the_exact_bingham_law():
    draws = _column_draws(20_000, 1)
    assert np.allclose(np.linalg.norm(draws, axis=1), 1.0)
    z, crit = _two_sample_z(_stats(draws), _stats(_kent_draws(20_000, 2)))
    assert z < crit, (z, crit)


@pytest.mark.parametrize("offset,b", [(-0.45, None), (3.0, None), (0.25, 3.0)])
def test_the_law_does_not_depend_on_the_envelope_tuning(monkeypatch, offset, b):
    """λ̂ below λ_max (down to −b/2), far above it, or a b far from Kent's optimum: same law (only the acceptance
    rate changes)."""
    lam_max = float(np.linalg.eigvalsh(S3)[-1])
    monkeypatch.setattr(_ExactColumn, "_top", lambda self, S: lam_max + offset - 0.25 * self._b)
    if b is not None:
        monkeypatch.setattr(_ExactColumn, "_kent_b", lambda self, lam_hat, b0: b)
    col = _ExactColumn(S3, 4)
    col._b = 1.0 if b is None else b
    draws = _column_draws(20_000, 3, col)
    z, crit = _two_sample_z(_stats(draws), _stats(_kent_draws(20_000, 4)))
    assert z < crit, (z, crit)


def test_mutant_without_the_acceptance_step_is_caught(monkeypatch):
    """Accepting every ACG proposal gives the envelope's law, not the Bingham: the same test rejects it."""
    monkeypatch.setattr(_ExactColumn, "_accept", lambda self, log_u, log_r: np.ones(log_u.shape, dtype=bool))
    draws = _column_draws(20_000, 1)
    monkeypatch.undo()
    z, crit = _two_sample_z(_stats(draws), _stats(_kent_draws(20_000, 2)))
    assert z > crit, (z, crit)


def test_a_block_that_is_not_positive_definite_after_the_estimate_falls_back_to_the_exact_top(monkeypatch):
    """An estimate of λ_max far too low (Ω not positive definite) is caught by the Cholesky factorisation; the draw
    then uses the block's exact top eigenvalue — and is still exact."""
    monkeypatch.setattr(_ExactColumn, "_top", lambda self, S: -50.0)
    z, crit = _two_sample_z(_stats(_column_draws(10_000, 5)), _stats(_kent_draws(10_000, 6)))
    assert z < crit, (z, crit)


# --------------------------------------------------------------------------------------------------
# The chain: new scan against Hoff's scan (the kernel before issue #33)
# --------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("eigs,k,scans", [([6.0, 3.0, 2.0, 0.5, 0.0], 2, 12_000),  # m = 4: Hoff's dense path
                                          (list(np.linspace(8.0, 0.0, 30)), 3, 3_000)])  # m = 28: tridiagonal path
def test_exact_scan_has_the_stationary_law_of_hoffs_scan(eigs, k, scans):
    M, _ = _rotated(eigs, 3)
    new = bmf_gibbs(M, k, scans, np.random.default_rng(10), keep_every=1)
    old = bmf_gibbs(M, k, scans, np.random.default_rng(20), keep_every=1, kernel="hoff")
    assert new.info["kernel"] == "exact" and old.info["kernel"] == "hoff"
    burn = scans // 20
    x, y = _projections(new.samples[0, burn:]), _projections(old.samples[0, burn:])
    z, crit = _chains_z(x, y)
    assert z < crit, (z, crit)


@pytest.mark.slow
def test_a_scan_with_a_wrong_conditional_is_caught(monkeypatch):
    """Mutant: every column drawn from the conditional of 1.3·M (a different BMF law). Against Hoff's scan on M the
    same statistic rejects it."""
    eigs, k, scans = [6.0, 3.0, 2.0, 0.5, 0.0], 2, 12_000
    M, _ = _rotated(eigs, 3)
    real_draw = _ExactColumn.draw
    monkeypatch.setattr(_ExactColumn, "draw", lambda self, S, rng, *a: real_draw(self, 1.3 * S, rng, *a))
    new = bmf_gibbs(M, k, scans, np.random.default_rng(10), keep_every=1)
    monkeypatch.undo()
    old = bmf_gibbs(M, k, scans, np.random.default_rng(20), keep_every=1, kernel="hoff")
    burn = scans // 20
    z, crit = _chains_z(_projections(new.samples[0, burn:]), _projections(old.samples[0, burn:]))
    assert z > crit, (z, crit)


def test_kents_b_is_solved_on_a_flat_spectrum():
    """On a flat block (a weakly concentrated conditional) Kent's optimal b is far from 1; a b left near 1 makes the
    ACG envelope's acceptance collapse (is_synthetic at ε = 0.1 gave up after 10⁷ proposals before b was solved).
    With b solved the draws take about one proposal each — and keep the exact law."""
    S, R = _rotated(list(np.linspace(2.0, 0.0, 60)), 5)
    col = _ExactColumn(S, 60)
    rng = np.random.default_rng(0)
    with single_threaded_blas():
        draws = np.array([col.draw(S, rng) for _ in range(3_000)])
    assert col.proposals / col.draws < 3.0 and col._b > 20.0
    exact = KentBinghamSampler(-S).sample_many(3_000, np.random.default_rng(1))
    z, crit = _two_sample_z((draws @ R) ** 2, (exact @ R) ** 2)
    assert z < crit, (z, crit)


def test_kernel_is_checked_and_recorded():
    with pytest.raises(InvalidParameterError, match="kernel"):
        bmf_gibbs(np.eye(4), 2, 1, np.random.default_rng(0), kernel="fast")
    res = bmf_gibbs(np.diag([3.0, 2.0, 1.0, 0.0]), 2, 3, np.random.default_rng(0))
    assert res.info["kernel"] == "exact"
    V = res.states[0]
    assert np.allclose(V.T @ V, np.eye(2), atol=1e-10)


class _Rejecting:
    """A generator stand-in whose uniforms reject every proposal."""

    def standard_normal(self, size):
        return np.random.default_rng(0).standard_normal(size)

    def random(self, size=None):
        return np.ones(size) * (1.0 - 1e-16)


def test_a_long_column_draw_honours_the_deadline():
    import time

    from dpcore.core.timing import Deadline
    from dpcore.exceptions import MechanismTimeout

    deadline = Deadline(1e-9)
    time.sleep(0.01)
    with pytest.raises(MechanismTimeout):
        _ExactColumn(S3, 4).draw(S3, _Rejecting(), deadline)


def test_the_column_draws_proposal_cap_raises_without_data_values(monkeypatch):
    """A draw that never accepts raises a SamplerError naming the block size (public), no data statistic."""
    from dpcore.exceptions import SamplerError

    monkeypatch.setattr(gibbs, "ACG_MAX_PROPOSALS", 40)
    col = _ExactColumn(S3, 4)
    with pytest.raises(SamplerError) as err:
        col.draw(S3, _Rejecting())
    msg = str(err.value)
    assert "block size 4" in msg and "lower epsilon" in msg
    assert not any(ch in msg for ch in ("9.", "4.0", "0.5"))
