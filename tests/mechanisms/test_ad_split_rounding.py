"""Review of AD's authors' split: a λ̂ᵢ clipped to 0 gives vector i weight 0, and the rounding correction of the
shares must not land on it (it made the last share ≈ −1e-17, which the Bingham sampler refuses: the release failed)."""

from __future__ import annotations

import numpy as np

from dpcore.core.privacy import ledger_total
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.itu import authors_eigenvalue_budget, authors_vector_weights, exact_shares


def _sequential_sum(values: list[float]) -> float:
    acc = 0.0
    for v in values:
        acc += v
    return acc


def test_shares_with_zero_weights_are_non_negative_zero_where_the_weight_is_zero_and_sum_exactly():
    rng = np.random.default_rng(20261128)
    for _ in range(3000):
        d = int(rng.integers(3, 12))
        eps = float(rng.uniform(0.01, 20.0))
        lam = np.sort(rng.exponential(5.0, size=d))[::-1]
        lam[int(rng.integers(1, d)):] = 0.0  # the smaller noisy eigenvalues clipped to 0
        weights = authors_vector_weights(lam, d, d - 1)
        shares = exact_shares(eps, authors_eigenvalue_budget(int(rng.integers(10, 5000)), d, eps, d), weights)
        assert min(shares) >= 0.0
        assert all(s == 0.0 for s, w in zip(shares[1:], weights, strict=True) if w == 0.0)
        total = _sequential_sum(shares)  # never above ε; equal to it unless no float share reaches it
        assert total <= eps and total >= np.nextafter(eps, 0.0)


def test_authors_split_release_never_fails_when_a_noisy_eigenvalue_is_clipped_to_zero():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6)) * np.array([3, 1, 0.01, 0.01, 0.01, 0.01])
    X /= np.linalg.norm(X, axis=1).max()
    ad = get_mechanism("ad")
    for seed in (4, 33):  # the seeds whose λ̂ made the old last share negative (InvalidParameterError)
        r = ad.release(X, 5, 0.5, split="authors", random_state=seed)
        assert r.status == "ok"
        assert min(e.epsilon for e in r.ledger) >= 0.0
        assert ledger_total(r.ledger)[0] == 0.5
