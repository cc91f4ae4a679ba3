"""Private pictures (dpcore.explain.pictures): noise against its exact law, sensitivity on neighbouring pairs, a
halved-sensitivity mutant flagged by an empirical privacy-loss check, budget, caption and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.privacy import LedgerEntry, gaussian_sigma, ledger_total, zcdp_epsilon
from dpcore.data.prepared import PreparedData
from dpcore.exceptions import InvalidParameterError
from dpcore.explain import pictures as pic
from dpcore.mechanisms import get_mechanism

ALPHA = 1e-6
I2 = np.eye(2)


def _unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    X = rng.normal(size=(n, d))
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0) * rng.uniform(0, 1, size=(n, 1))


def _four_cells(extra: list[tuple[float, float]]) -> np.ndarray:
    """Three rows in each of the four cells of a 2×2 frame, then ``extra`` rows."""
    base = [(-0.5, -0.5), (-0.5, 0.5), (0.5, -0.5), (0.5, 0.5)] * 3
    return np.array(base + extra)


def _clipped_law_check(samples: np.ndarray, true_count: float, cdf) -> None:
    """``samples`` = max(true_count + Z, 0) with Z ~ cdf: the mass at 0 (binomial test) and the law above 0
    (KS against Z's law conditioned on Z > −true_count) are exact."""
    p0 = cdf(-true_count)
    zeros = int(np.sum(samples == 0.0))
    assert stats.binomtest(zeros, len(samples), p0).pvalue > ALPHA
    pos = samples[samples > 0.0] - true_count
    cond = lambda t: (cdf(t) - p0) / (1.0 - p0)  # noqa: E731
    assert stats.kstest(pos, cond).pvalue > ALPHA


@pytest.mark.parametrize("noise, delta, neighbouring", [("laplace", 0.0, "replace"), ("laplace", 0.0, "add_remove"),
                                                       ("gaussian", 1e-5, "replace")])
def test_histogram_noise_follows_its_exact_law(noise, delta, neighbouring):
    X = _four_cells([(0.5, 0.5)])  # counts: 3, 3, 3, 4 (cell [1, 1] has 4)
    s = pic.PictureSettings(1.0, noise=noise, delta_histogram=delta, bins=2, neighbouring=neighbouring)
    rng = np.random.default_rng(20261128)
    draws = np.array([pic.private_score_histogram(X, I2, s, rng).counts[0] for _ in range(3000)])
    if noise == "laplace":
        b = (2.0 if neighbouring == "replace" else 1.0) / 1.0
        assert pic.histogram_noise(s) == ("laplace", pytest.approx(b))
        cdf = stats.laplace(scale=b).cdf
    else:
        sigma = gaussian_sigma(1.0, delta, math.sqrt(2.0))
        assert pic.histogram_noise(s) == ("gaussian", pytest.approx(sigma))
        cdf = stats.norm(scale=sigma).cdf
    _clipped_law_check(draws[:, 0, 0], 3.0, cdf)
    _clipped_law_check(draws[:, 1, 1], 4.0, cdf)
    # cells are independent: the correlation of two cells' draws is ~0
    _r, p = stats.pearsonr(draws[:, 0, 0], draws[:, 1, 1])
    assert p > ALPHA


def test_scree_noise_follows_its_exact_law():
    rng = np.random.default_rng(7)
    data = PreparedData(_unit_rows(rng, 40, 3))
    lam1 = float(data.eigenvalues[0])
    s = pic.PictureSettings(1.0, epsilon_scree=0.5, n_eigenvalues=1)
    draws = np.array([pic.private_scree(None, data, s, "subspace", rng).eigenvalues[0] for _ in range(3000)])
    _clipped_law_check(draws, lam1, stats.laplace(scale=2.0 / 0.5).cdf)


@pytest.mark.parametrize("groups", [None, ("a", "b")])
def test_histogram_sensitivity_on_neighbouring_pairs(groups):
    rng = np.random.default_rng(11)
    labels = np.array(["a", "b", "c"])
    worst = {"replace": [0.0, 0.0], "add_remove": [0.0, 0.0]}
    for _ in range(300):
        n, d = 25, 4
        X = _unit_rows(rng, n, d)
        V = np.linalg.qr(rng.normal(size=(d, 2)))[0]
        y = labels[rng.integers(0, 3, n)]
        s = pic.PictureSettings(1.0, bins=int(rng.integers(1, 8)), groups=groups)
        gi, names = pic._group_index(y if groups else None, s.groups)
        c, edges = pic.true_score_counts(X, V, s.bins, gi, len(names))
        assert np.array_equal(edges, np.linspace(-1, 1, s.bins + 1))  # public frame, never read off the data
        i = int(rng.integers(0, n))
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = _unit_rows(rng, 1, d)[0], labels[rng.integers(0, 3)]
        gi2, _ = pic._group_index(y2 if groups else None, s.groups)
        c2, _ = pic.true_score_counts(X2, V, s.bins, gi2, len(names))
        keep = np.arange(n) != i
        c3, _ = pic.true_score_counts(X[keep], V, s.bins, None if gi is None else gi[keep], len(names))
        for rel, other in (("replace", c2), ("add_remove", c3)):
            diff = (c - other).ravel()
            l1, l2 = np.abs(diff).sum(), np.linalg.norm(diff)
            bound1, bound2 = pic.histogram_sensitivity(rel)
            assert l1 <= bound1 + 1e-12 and l2 <= bound2 + 1e-12
            worst[rel] = [max(worst[rel][0], l1), max(worst[rel][1], l2)]
    for rel in worst:  # attained: the stated sensitivity is tight
        assert worst[rel] == pytest.approx(list(pic.histogram_sensitivity(rel)))


def test_scree_sensitivity_on_neighbouring_pairs():
    rng = np.random.default_rng(3)
    for _ in range(200):
        X = _unit_rows(rng, 12, 3)
        X2 = X.copy()
        X2[0] = _unit_rows(rng, 1, 3)[0]
        lam = np.linalg.eigvalsh(X.T @ X)
        assert np.abs(lam - np.linalg.eigvalsh(X2.T @ X2)).sum() <= pic.scree_sensitivity("replace") + 1e-9
        assert np.abs(lam - np.linalg.eigvalsh(X[1:].T @ X[1:])).sum() <= pic.scree_sensitivity("add_remove") + 1e-9
    # attained: e₂ replaced by e₁ turns λ = (1, 1) into (2, 0), an L1 change of 2
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    X2 = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert np.abs(np.linalg.eigvalsh(X.T @ X) - np.linalg.eigvalsh(X2.T @ X2)).sum() == pytest.approx(2.0)


def _privacy_loss_lower_bound(epsilon: float, draws: int = 20000) -> float:
    """A (1 − α) lower confidence bound on P_D(E)/P_D′(E) for the replace-one worst pair (one row moves from cell
    [1, 1] to cell [0, 0]) and the fixed event E = {Y₁₁ ≥ c₁₁(D), Y₀₀ ≤ c₀₀(D)}, through the whole histogram path."""
    D = _four_cells([(0.5, 0.5)])
    D2 = _four_cells([(-0.5, -0.5)])
    s = pic.PictureSettings(epsilon, bins=2)
    hits = []
    for X, seed in ((D, 1), (D2, 2)):
        rng = np.random.default_rng(seed)
        out = np.array([pic.private_score_histogram(X, I2, s, rng).counts[0] for _ in range(draws)])
        hits.append(int(np.sum((out[:, 1, 1] >= 4.0) & (out[:, 0, 0] <= 3.0))))
    lo = stats.beta.ppf(ALPHA / 2, hits[0], draws - hits[0] + 1)
    hi = stats.beta.ppf(1 - ALPHA / 2, hits[1] + 1, draws - hits[1])
    return lo / hi


@pytest.mark.slow
def test_empirical_privacy_loss_is_within_epsilon():
    assert _privacy_loss_lower_bound(2.0) <= math.exp(2.0)


@pytest.mark.slow
def test_halved_sensitivity_mutant_is_flagged(monkeypatch):
    """A deliberately wrong sensitivity (half the true one: half the noise) is caught by the same check."""
    true = pic.histogram_sensitivity
    monkeypatch.setattr(pic, "histogram_sensitivity", lambda rel="replace": tuple(v / 2 for v in true(rel)))
    assert pic.histogram_noise(pic.PictureSettings(2.0))[1] == pytest.approx(0.5)
    assert _privacy_loss_lower_bound(2.0) > math.exp(2.0)


def _wine():
    from dpcore.data import load_dataset, preprocess

    return preprocess(load_dataset("wine"), random_state=1)


def test_budget_totals_and_ledger_equal_what_is_spent():
    data = _wine()
    for mid, eps_scree, total in (("analyze_gauss", 0.3, 1.5), ("ppm", 0.3, 1.8)):
        mech = get_mechanism(mid)
        release = mech.release(data, 2, 1.0, 1e-5, random_state=5)
        s = pic.PictureSettings(0.5, epsilon_scree=eps_scree)
        before = pic.compose_budget(release.full_ledger, mech.output, s)
        assert before.basic == pytest.approx((total, 1e-5))
        assert before.zcdp is None and before.best == before.basic and before.private
        pics = pic.release_pictures(release, data, s, mech.output, random_state=9)
        spent = (*release.full_ledger, *pics.scree.ledger, *pics.histogram.ledger)
        assert ledger_total(spent) == pytest.approx(before.basic)
        assert pics.scree.free == (mech.output == "covariance")
    g = pic.PictureSettings(0.5, noise="gaussian", delta_histogram=1e-6, epsilon_scree=0.2)
    b = pic.compose_budget([LedgerEntry("m", 1.0, 1e-5)], "subspace", g)
    sigma = gaussian_sigma(0.5, 1e-6, math.sqrt(2.0))
    rho = 0.2 ** 2 / 2 + 2.0 / (2 * sigma ** 2)
    assert b.basic == pytest.approx((1.7, 1e-5 + 1e-6))
    assert b.zcdp == pytest.approx((1.0 + zcdp_epsilon(rho, 1e-6), 1e-5 + 1e-6))
    assert "zCDP" in b.text()


def test_caption_carries_epsilon_and_delta():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=5)
    pics = pic.release_pictures(release, data, pic.PictureSettings(0.5), "covariance", random_state=9)
    assert "ε = 1.5" in pics.caption and "δ = 1e-05" in pics.caption
    assert pic.PRIVATE_PICTURE_NOTE in pics.caption
    assert str(data.n) + " " not in pics.caption  # no row count


def test_seeds_are_reproducible_and_child_streams():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=5)
    s = pic.PictureSettings(0.5)
    a = pic.release_pictures(release, data, s, "covariance", random_state=9).histogram.counts
    b = pic.release_pictures(release, data, s, "covariance", random_state=9).histogram.counts
    c = pic.release_pictures(release, data, s, "covariance", random_state=None).histogram.counts
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    # the histogram's stream is not the seed's own stream nor the mechanism's
    plain = np.random.default_rng(9).laplace(0, 4.0, size=3)
    assert not np.allclose(pic._picture_rng(9, "histogram").laplace(0, 4.0, size=3), plain)


def test_one_seed_at_two_picture_epsilons_or_releases_draws_independent_noise():
    """Privacy review 2: with one noise stream, (b₂·Y₁ − b₁·Y₂)/(b₂ − b₁) would give the exact counts back."""
    X = np.repeat(_four_cells([(0.5, 0.5)]), 20, axis=0)
    data = PreparedData(X)
    mech = get_mechanism("analyze_gauss")
    rel = mech.release(data, 2, 1.0, 1e-5, random_state=5)
    truth = pic.true_score_counts(X, rel.subspace, 2)[0]
    (b1, y1), (b2, y2) = [(pic.histogram_noise(s)[1],
                           pic.release_pictures(rel, data, s, "covariance", random_state=3).histogram.counts)
                          for s in (pic.PictureSettings(0.5, bins=2), pic.PictureSettings(1.0, bins=2))]
    both = (y1 > 0) & (y2 > 0)
    assert both.any()
    combo = (b2 * y1 - b1 * y2) / (b2 - b1)
    assert not np.allclose(combo[both], truth[both])
    rel2 = mech.release(data, 2, 2.0, 1e-5, random_state=5)
    s = pic.PictureSettings(1.0, bins=2)
    a = pic.release_pictures(rel, data, s, "covariance", random_state=3).histogram.counts
    b = pic.release_pictures(rel2, data, s, "covariance", random_state=3).histogram.counts
    t2 = pic.true_score_counts(X, rel2.subspace, 2)[0]
    both = (a > 0) & (b > 0)
    assert not np.allclose((a - b)[both], (truth - t2)[both])


def test_grouped_histogram_counts_other_labels_apart():
    X = _four_cells([])
    y = np.array(["a", "b", "z"] * 4)
    c, _ = pic.true_score_counts(X, I2, 2, *(lambda gi, names: (gi, len(names)))(*pic._group_index(y, ("a", "b"))))
    assert c.shape == (3, 2, 2) and c.sum() == 12 and c[2].sum() == 4


@pytest.mark.parametrize("kwargs, words", [
    ({"noise": "laplace", "delta_histogram": 1e-5}, "pure"),
    ({"noise": "gaussian"}, "delta"),
    ({"noise": "cauchy"}, "noise"),
    ({"bins": 0}, "bins"),
    ({"groups": ()}, "groups"),
])
def test_bad_settings_are_refused_clearly(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        pic.PictureSettings(1.0, **kwargs)


def test_refusals_name_the_fix():
    data = _wine()
    release = get_mechanism("analyze_gauss").release(data, 1, 1.0, 1e-5, random_state=5)
    with pytest.raises(InvalidParameterError, match="k ≥ 2"):
        pic.release_pictures(release, data, pic.PictureSettings(0.5), "covariance", random_state=1)
    release = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=5)
    with pytest.raises(InvalidParameterError, match="neighbouring"):
        pic.release_pictures(release, data, pic.PictureSettings(0.5, neighbouring="add_remove"), "covariance")
    nolabel = PreparedData(data.X, norm_bound=data.norm_bound)
    with pytest.raises(InvalidParameterError, match="label"):
        pic.release_pictures(release, nolabel, pic.PictureSettings(0.5, groups=(0, 1)), "covariance")


def test_figure_has_private_and_labelled_true_scree():
    data = _wine()
    release = get_mechanism("ppm").release(data, 2, 1.0, 1e-5, random_state=5)
    pics = pic.release_pictures(release, data, pic.PictureSettings(0.5, epsilon_scree=0.2), "subspace", random_state=2)
    fig = pic.picture_figure(pics, true_eigenvalues=data.eigenvalues[:10])
    names = [t.name for t in fig.data]
    assert "private" in names and pic.TRUE_LABEL in names
    assert any(pic.PRIVATE_PICTURE_NOTE in (a.text or "") for a in fig.layout.annotations)


def test_side_by_side_shows_the_true_panel_labelled_and_private_panels_at_each_epsilon(tmp_path):
    data = _wine()
    fig, released = pic.side_by_side(data, "analyze_gauss", (0.5, 2.0, 8.0), random_state=4)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0] == pic.TRUE_LABEL
    assert [t.split(",")[0] for t in titles[1:4]] == ["private"] * 3
    assert [p.budget.basic[0] for p in released] == pytest.approx([0.5, 2.0, 8.0])
    assert all(p.budget.basic[1] == pytest.approx(1e-6) for p in released)
    assert "ε = 0.5" in titles[1] and "ε = 8" in titles[3]
    caption = titles[-1].replace("<br>", " ")
    assert "Cannot conclude" in caption and "NOT private" in caption
    assert len(fig.data) == 4
    again, _ = pic.side_by_side(data, "analyze_gauss", (0.5, 2.0, 8.0), random_state=4)
    assert np.array_equal(fig.data[2].z, again.data[2].z)  # reproducible with a seed
    with pytest.raises(InvalidParameterError, match="picture_share"):
        pic.side_by_side(data, "analyze_gauss", (1.0,), picture_share=1.0)
