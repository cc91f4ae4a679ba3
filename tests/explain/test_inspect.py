"""Unit tests of dpcore.explain.inspect (the maths behind the Inspect and Learn pages)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.core.privacy import GUARANTEES, LedgerEntry
from dpcore.data.prepared import PreparedData
from dpcore.explain.inspect import (
    aligned_private_plane,
    burn_in_traces,
    counterexample_table,
    group_by_guarantee,
    ledger_frame,
    noise_view,
    procrustes_rotation,
    projection_pair,
    proposal_counts,
    scalar_diagnostics,
    spectrum_comparison,
    subsample_rows,
)
from dpcore.mechanisms import get_mechanism, list_mechanisms


@pytest.fixture(scope="module")
def data() -> PreparedData:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6)) * np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.1])
    X /= np.linalg.norm(X, axis=1).max()
    y = (X[:, 0] > 0).astype(int)
    return PreparedData.from_unit_rows(X, y=y)


def _random_orthogonal(d: int, seed: int) -> np.ndarray:
    Q, R = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def test_procrustes_recovers_a_known_rotation():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((50, 3))
    R = _random_orthogonal(3, 2)
    Q = procrustes_rotation(A, A @ R)
    np.testing.assert_allclose(Q, R, atol=1e-10)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)


def test_aligned_plane_undoes_sign_flips_and_rotation_inside_the_plane(data):
    V = data.eigenvectors
    theta = 0.7
    rot = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    V_hat = np.column_stack([(V[:, :2] @ rot) * np.array([1, -1]), -V[:, 2]])
    basis, Q = aligned_private_plane(V_hat, V, ordered=True)
    np.testing.assert_allclose(basis, V[:, :2], atol=1e-10)
    np.testing.assert_allclose(Q.T @ Q, np.eye(2), atol=1e-12)


def test_unordered_alignment_uses_the_whole_frame(data):
    V = data.eigenvectors
    R = _random_orthogonal(3, 5)
    V_hat = V[:, :3] @ R  # same 3-D subspace, arbitrary frame: first 2 columns are NOT the top-2 plane
    basis, _ = aligned_private_plane(V_hat, V, ordered=False)
    np.testing.assert_allclose(basis, V[:, :2], atol=1e-10)
    ordered_basis, _ = aligned_private_plane(V_hat, V, ordered=True)
    assert np.linalg.norm(ordered_basis - V[:, :2]) > 1e-3


def test_projection_pair_is_identical_for_the_exact_subspace(data):
    pair = projection_pair(data, -data.eigenvectors[:, :3], ordered=True)
    assert pair.true.shape == (data.n, 2)
    np.testing.assert_allclose(pair.private, pair.true, atol=1e-10)
    assert pair.max_angle_deg < 1e-4


def test_projection_pair_detects_a_wrong_plane(data):
    V = data.eigenvectors
    pair = projection_pair(data, V[:, [0, 3]], ordered=True)
    assert pair.max_angle_deg == pytest.approx(90.0, abs=1e-6)
    assert np.abs(pair.private[:, 1] - pair.true[:, 1]).max() > 0.01


def test_projection_needs_two_directions(data):
    with pytest.raises(ValueError, match="k ≥ 2"):
        projection_pair(data, data.eigenvectors[:, :1])


def test_subsample_rows():
    np.testing.assert_array_equal(subsample_rows(10, 20), np.arange(10))
    rows = subsample_rows(10_000, 500, seed=3)
    assert rows.size == 500 and np.unique(rows).size == 500 and np.all(np.diff(rows) > 0)
    np.testing.assert_array_equal(rows, subsample_rows(10_000, 500, seed=3))


def test_spectrum_comparison_sources(data):
    true = data.eigenvalues
    ag = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=0)
    spec = spectrum_comparison(true, ag)
    assert spec.source.startswith("eigenvalues of the post-processed")
    np.testing.assert_allclose(spec.private, np.linalg.eigvalsh(ag.covariance_post)[::-1], atol=1e-9)
    frame = spec.frame()
    assert set(frame["series"]) == {"true (non-private)", "private"}
    assert len(frame) == 2 * data.d
    # Changing ε changes the private spectrum.
    ag2 = get_mechanism("analyze_gauss").release(data, 2, 0.1, 1e-5, random_state=0)
    assert not np.allclose(spectrum_comparison(true, ag2).private, spec.private)


class _FakeRelease:
    def __init__(self, eigenvalues=None, covariance_post=None, bottom=False):
        self.eigenvalues = eigenvalues
        self.covariance_post = covariance_post
        self.is_bottom = bottom


def test_spectrum_prefers_released_eigenvalues_and_hides_nonpositive():
    spec = spectrum_comparison(np.array([3.0, 1.0, 0.5]), _FakeRelease(eigenvalues=np.array([0.4, 2.0, -0.1])))
    assert spec.source == "released eigenvalues"
    np.testing.assert_allclose(spec.private, [2.0, 0.4, -0.1])
    assert spec.n_nonpositive == 1
    priv = spec.frame().query("series == 'private'")["eigenvalue"].to_numpy()
    assert np.isnan(priv[-1]) and priv[0] == 2.0
    tiny = spectrum_comparison(np.array([3.0, 1.0]), _FakeRelease(eigenvalues=np.array([5.0, 1e-15])))
    assert tiny.n_nonpositive == 1  # zero up to rounding: not drawn on the log axis
    assert spectrum_comparison(np.ones(3), _FakeRelease(bottom=True)).private is None
    assert spectrum_comparison(np.ones(3), _FakeRelease()).source == "none"


def test_noise_view_covariance_and_projector(data):
    ag = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, random_state=0)
    view = noise_view(ag, data)
    assert view.kind == "covariance"
    np.testing.assert_allclose(view.matrix, ag.covariance - data.C, atol=1e-12)
    np.testing.assert_allclose(view.matrix, view.matrix.T, atol=1e-9)
    small = noise_view(ag, data, max_dim=3)
    assert small.matrix.shape == (3, 3) and small.truncated_from == data.d
    assert small.frobenius == pytest.approx(view.frobenius)

    rs = get_mechanism("random").release(data, 2, 1.0, random_state=0)
    pview = noise_view(rs, data)
    assert rs.covariance is None and pview.kind == "projector"
    Vk = data.eigenvectors[:, :2]
    np.testing.assert_allclose(pview.matrix, rs.projector - Vk @ Vk.T, atol=1e-12)


def test_ledger_frame():
    frame = ledger_frame([LedgerEntry("a", 0.3, 0.0), LedgerEntry("b", 0.7, 1e-5, private=False, note="x")])
    assert list(frame["step"]) == ["a", "b"]
    assert frame["epsilon"].sum() == pytest.approx(1.0)
    assert list(frame["private"]) == [True, False]
    assert ledger_frame([]).empty
    costly = ledger_frame([LedgerEntry("free", 0.0), LedgerEntry("paid", 0.5), LedgerEntry("leak", private=False)],
                          only_costly=True)
    assert list(costly["step"]) == ["paid", "leak"]


def test_burn_in_traces_formats():
    arr = np.array([[0.5, 0.05, 0.005], [0.4, 0.04, 0.02]])
    tr = burn_in_traces({"f_traces": arr})
    assert len(tr.frame) == 6 and set(tr.frame["chain"]) == {"1", "2"}
    np.testing.assert_allclose(tr.final, [0.005, 0.02])
    assert not tr.converged
    tr2 = burn_in_traces({"traces": [np.array([0.1, 0.001]), np.array([0.2, 0.003])], "trace_scans": [10, 20]})
    assert tr2.converged
    assert list(tr2.frame["scan"][:2]) == [10, 20]
    assert burn_in_traces({"sigma": 1.0}) is None
    assert burn_in_traces({"f_traces": np.array([0.3, 0.2])}).final.tolist() == [0.2]
    strict = burn_in_traces({"f_traces": np.array([0.3, 0.005]), "threshold": 0.001})
    assert strict.threshold == 0.001 and not strict.converged


def test_proposal_counts():
    np.testing.assert_array_equal(proposal_counts({"proposals_per_vector": [3, 1, 7]}), [3, 1, 7])
    assert proposal_counts({"proposals": 4}) is None


def test_scalar_diagnostics_skips_arrays():
    table = scalar_diagnostics({"sigma": 0.5, "noise": np.eye(3), "converged": True, "proposals": 12, "note": "x"})
    assert list(table["diagnostic"]) == ["sigma", "converged", "proposals"]
    assert list(table["value"]) == ["0.5", "yes", "12"]


def test_group_by_guarantee_and_invalid_toggle():
    mechs = list_mechanisms()
    with_invalid = group_by_guarantee(mechs, include_invalid=True)
    without = group_by_guarantee(mechs, include_invalid=False)
    assert sum(map(len, with_invalid.values())) == len(mechs)
    assert "claimed-invalid" not in without
    assert list(with_invalid) == [g for g in GUARANTEES if g in with_invalid]
    invalid = [m for m in mechs if m.invalid]
    assert with_invalid.get("claimed-invalid", []) == invalid


def test_counterexample_table_matches_spec():
    table = counterexample_table(list_mechanisms())
    ids = set(table["id"])
    assert {"sn_imtiaz", "wishart_jiang"} <= ids
    sn = table.set_index("id").loc["sn_imtiaz"]
    # Spec §3.9: δ = 1 − e^{−ε}; §3.10 (Jiang): 1 − e^{−ε/3}.
    for eps in (0.1, 0.5, 1.0, 2.0):
        assert sn[f"ε = {eps:g}"] == pytest.approx(1 - math.exp(-eps), rel=1e-9)
    jw = table.set_index("id").loc["wishart_jiang"]
    assert jw["ε = 1"] == pytest.approx(1 - math.exp(-1 / 3), rel=1e-9)
    valid_ids = {m.id for m in list_mechanisms() if not m.invalid}
    assert not ids & valid_ids


def test_burn_in_traces_from_a_real_ppca_release(data):
    ids = {m.id for m in list_mechanisms()}
    if "ppca" not in ids:
        pytest.skip("ppca is not registered")
    rel = get_mechanism("ppca").release(data, 2, 1.0, random_state=0, burn_in=200, chains=3, time_limit=20)
    tr = burn_in_traces(rel.diagnostics)
    assert tr is not None
    assert set(tr.frame["chain"]) == {"1", "2", "3"}
    assert tr.final.size == 3 and np.all(tr.final > 0)
    assert tr.converged == bool(np.all(rel.diagnostics["final_f"] < 0.01))  # F_k below the line: sign mixing
    # Unordered subspace: the aligned plane is still orthonormal and inside span(V̂).
    basis, _ = aligned_private_plane(rel.subspace, data.eigenvectors, ordered=False)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-10)
    np.testing.assert_allclose(rel.projector @ basis, basis, atol=1e-10)
