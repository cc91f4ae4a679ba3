"""dpcore.stats and the lean in-memory path: sufficient statistics equal the rows' own, rows on demand, the reservoir
(determinism, positions only), statistics-backed data through the mechanisms, the metrics and a sweep."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpcore import stats
from dpcore.cli.data import run_sweep as cli_run_sweep
from dpcore.core.privacy import Diagnostics
from dpcore.data import Dataset, PreparedData, preprocess
from dpcore.data.prepared import Moments
from dpcore.data.preprocess import ArrayChunks, clip_rows
from dpcore.evaluation.metrics import evaluation_split
from dpcore.evaluation.sweep import SweepConfig, run_sweep
from dpcore.exceptions import DataError
from dpcore.mechanisms import get_mechanism


def _toy(n=3000, d=6, seed=0, labels=True) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 5, size=(n, d)) * np.linspace(1.0, 0.2, d)
    y = (X[:, 0] + rng.normal(0, 1, n) > 1).astype(int) if labels else None
    return Dataset(id="toy", name="toy", X=X, y=y, feature_ranges=np.tile([-2.0, 4.0], (d, 1)))


def _rows_of(ds: Dataset, **options) -> np.ndarray:
    """The unit rows the old eager pipeline produced (reference implementation, straight from the formulas)."""
    lo, hi = ds.feature_ranges[:, 0], ds.feature_ranges[:, 1]
    Y = (np.clip(ds.X, lo, hi) - lo) / (hi - lo)
    bound = options.get("norm_bound", np.sqrt(ds.d))
    norms = np.linalg.norm(Y, axis=1, keepdims=True)
    return Y * np.minimum(1.0, bound / norms) / bound


# --------------------------------------------------------------------------------------------------
# the lean in-memory path
# --------------------------------------------------------------------------------------------------

def test_preprocess_statistics_equal_those_of_its_rows_and_rows_come_on_demand():
    ds = _toy()
    p = preprocess(ds, norm_bound=1.2)
    assert not p.rows_materialised and p.stats is not None and p.stats.n == ds.n
    expected = _rows_of(ds, norm_bound=1.2)
    np.testing.assert_allclose(p.take(np.arange(5)), expected[:5], atol=1e-15)
    assert not p.rows_materialised  # take() reads only the rows asked for
    np.testing.assert_allclose(p.C, expected.T @ expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p.stats.total, expected.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(p.X, expected, atol=1e-15)
    assert p.rows_materialised and not p.X.flags.writeable
    assert np.linalg.norm(p.X, axis=1).max() <= 1 + 1e-12
    assert p.clip_fraction == pytest.approx(np.mean(np.linalg.norm(expected * 1.2, axis=1) > 1.2 - 1e-12), abs=0.01)


def test_the_one_clip_step():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out, clipped = clip_rows(X, 1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    assert clipped.tolist() == [True, False, False] and X[0, 0] == 3.0  # the input is never modified
    unit, _ = clip_rows(X, 2.0, divide=True)
    np.testing.assert_allclose(unit, [[0.6, 0.8], [0.15, 0.2], [0.0, 0.0]])
    with pytest.raises(DataError, match="NaN or infinite"):
        clip_rows(np.array([[np.nan, 1.0]]), 1.0)


def test_evaluation_split_keeps_rows_on_demand_and_statistics_exact():
    ds = _toy()
    p = preprocess(ds, norm_bound=1.0)
    mech, split = evaluation_split(p, seed=4)
    assert split is not None and not p.rows_materialised and not mech.rows_materialised
    rows = mech.X  # now materialised: C (parent C minus the held-out rows) matches the kept rows
    np.testing.assert_allclose(mech.C, rows.T @ rows, atol=1e-10)
    assert mech.n == mech.n_rows == ds.n - split.X_train.shape[0] - split.X_test.shape[0]


def test_estimator_fit_does_not_copy_its_input(monkeypatch):
    from dpcore import DPPCA

    X = np.random.default_rng(0).standard_normal((500, 8))
    before = X.copy()
    model = DPPCA(epsilon=1.0, n_components=2, random_state=0).fit(X)
    assert model.components_.shape == (2, 8) and X.flags.writeable
    np.testing.assert_array_equal(X, before)


# --------------------------------------------------------------------------------------------------
# SufficientStats from arrays
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {},
    {"norm_bound": 0.9},
    {"centering": "public"},
    {"centering": "dp", "centering_epsilon": 0.5, "centering_delta": 1e-6, "random_state": 3},
])
def test_from_dataset_equals_preprocess(options):
    ds = _toy()
    p = preprocess(ds, **options)
    s = stats.from_dataset(ds, reservoir_size=100, seed=options.get("random_state", 0),
                           **{k: v for k, v in options.items() if k != "random_state"})
    np.testing.assert_allclose(s.C, p.C, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.total, p.stats.total, rtol=1e-12, atol=1e-12)
    assert s.n == p.n and s.norm_bound == p.norm_bound and s.clip_fraction == p.clip_fraction
    assert [e.as_dict() for e in s.ledger] == [e.as_dict() for e in p.ledger]
    np.testing.assert_allclose(s.sample, p.take(s.sample_positions), atol=1e-15)
    np.testing.assert_array_equal(s.sample_labels, ds.y[s.sample_positions])


def test_moments_add_and_subtract():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((40, 3)), rng.standard_normal((25, 3))
    both = Moments.of_rows(np.vstack([A, B]))
    summed = Moments.of_rows(A) + Moments.of_rows(B)
    np.testing.assert_allclose(summed.C, both.C)
    np.testing.assert_allclose(summed.total, both.total)
    assert summed.n == 65 and (both - Moments.of_rows(B)).n == 40


# --------------------------------------------------------------------------------------------------
# the reservoir: seeded, positions only, independent of chunking
# --------------------------------------------------------------------------------------------------

def test_reservoir_is_deterministic_and_independent_of_chunking_and_values():
    ds = _toy(n=5000)
    a = stats.from_dataset(ds, reservoir_size=300, seed=7)
    b = stats.from_source(ArrayChunks(ds.X, ds.y, chunk_bytes=8 * ds.d * 97), feature_ranges=ds.feature_ranges,
                          reservoir_size=300, seed=7)
    np.testing.assert_array_equal(a.sample_positions, b.sample_positions)
    np.testing.assert_allclose(a.C, b.C, rtol=1e-12, atol=1e-12)
    other = _toy(n=5000, seed=99)  # different values at the same positions: the same positions are kept
    c = stats.from_dataset(other, reservoir_size=300, seed=7)
    np.testing.assert_array_equal(a.sample_positions, c.sample_positions)
    d = stats.from_dataset(ds, reservoir_size=300, seed=8)
    assert not np.array_equal(a.sample_positions, d.sample_positions)
    assert a.sample.shape == (300, ds.d) and np.all(np.diff(a.sample_positions) > 0)


def test_reservoir_is_a_uniform_sample_of_positions():
    n, m = 100_000, 2000
    pos = np.sort(np.argsort(stats.position_keys(stats.reservoir_seed(0), np.arange(n)))[:m])
    # a uniform m-subset: the mean position is n/2 ± n/√(12 m) (sd ≈ 645 here); every tenth of the range gets m/10
    assert abs(pos.mean() - n / 2) < 5 * n / np.sqrt(12 * m)
    counts = np.bincount(pos * 10 // n, minlength=10)
    assert counts.min() > 0.8 * m / 10 and counts.max() < 1.2 * m / 10


def test_reservoir_holding_every_row_is_the_in_memory_data():
    ds = _toy(n=800)
    s = stats.from_dataset(ds, reservoir_size=10_000, seed=0)
    assert s.sample_is_complete
    data = s.to_prepared()
    assert data.sample is None and data.sample_note == ""
    np.testing.assert_allclose(data.X, preprocess(ds).X, atol=1e-15)


# --------------------------------------------------------------------------------------------------
# statistics-backed PreparedData through mechanisms, metrics and sweeps
# --------------------------------------------------------------------------------------------------

def test_sample_backed_data_runs_every_covariance_mechanism_with_all_rows_statistics():
    ds = _toy(n=4000)
    s = stats.from_dataset(ds, reservoir_size=500, seed=1)
    data = s.to_prepared()
    assert data.sample == "reservoir" and data.n == 4000 and data.n_rows == 500
    assert data.sample_note == "metrics on a reservoir sample of 500 rows"
    full = preprocess(ds)
    for mid in ("analyze_gauss", "laplace", "itu"):
        mech = get_mechanism(mid)
        r1 = mech.release(data, 2, 1.0, 1e-5 if mech.uses_delta else 0.0, random_state=5)
        r2 = mech.release(full, 2, 1.0, 1e-5 if mech.uses_delta else 0.0, random_state=5)
        np.testing.assert_allclose(np.abs(r1.subspace.T @ r2.subspace), np.eye(2), atol=1e-8)
        assert r1.n == 4000
    add_remove = get_mechanism("analyze_gauss").release(data, 2, 1.0, 1e-5, neighbouring="add_remove")
    assert add_remove.n is None  # n is private under add/remove, whatever the data's form


def test_subset_of_a_sample_removes_the_left_out_sample_rows_from_the_statistics():
    ds = _toy(n=3000)
    data = stats.from_dataset(ds, reservoir_size=400, seed=2).to_prepared()
    mech, split = evaluation_split(data, seed=0)
    held = split.X_train.shape[0] + split.X_test.shape[0]
    assert mech.n == 3000 - held and mech.n_rows == 400 - held and mech.sample == "reservoir"
    kept_positions = np.setdiff1d(np.arange(3000), stats.from_dataset(ds, reservoir_size=400, seed=2)
                                  .sample_positions[np.setdiff1d(np.arange(400), _kept(data, mech))])
    rows = preprocess(ds).take(kept_positions)
    np.testing.assert_allclose(mech.C, rows.T @ rows, atol=1e-10)
    with pytest.raises(DataError, match="reservoir sample"):
        data.subset(np.arange(1000))  # indices beyond the sample: a subsample of all rows is not possible


def _kept(data: PreparedData, sub: PreparedData) -> np.ndarray:
    """Indices of ``data``'s sample rows that ``sub`` kept (matched by value)."""
    return np.array([int(np.flatnonzero(np.all(r == data.X, axis=1))[0]) for r in sub.X])


def test_sweep_on_complete_statistics_equals_the_in_memory_sweep():
    ds = _toy(n=1500)
    cfg = dict(mechanisms=["analyze_gauss", "laplace"], epsilons=[0.5, 2.0], trials=2, seed=3)
    a = run_sweep(preprocess(ds), SweepConfig(**cfg))
    b = run_sweep(stats.from_dataset(ds, reservoir_size=5000, seed=3).to_prepared(), SweepConfig(**cfg))
    metrics = ["captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy"]
    np.testing.assert_allclose(a[metrics].to_numpy(), b[metrics].to_numpy(), rtol=1e-9, atol=1e-9)
    assert (a["n"] == b["n"]).all() and (a["seed"] == b["seed"]).all()


def test_cli_sweep_runs_singhal_steinke_on_the_reservoir_and_labels_it():
    ds = _toy(n=3000)
    data = stats.from_dataset(ds, reservoir_size=600, seed=0).to_prepared()
    cfg = SweepConfig(mechanisms=["ss_approx", "analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=2,
                      seed=0, time_cap=30)
    frame = cli_run_sweep(data, cfg)
    assert list(frame["mechanism"]) == ["ss_approx", "analyze_gauss"] * 2 and list(frame["trial"]) == [0, 0, 1, 1]
    ss, ag = frame[frame.mechanism == "ss_approx"], frame[frame.mechanism == "analyze_gauss"]
    assert ss["message"].str.contains("Singhal–Steinke ran on a reservoir sample of 600 rows").all()
    assert ss["message"].str.contains("metrics on a reservoir sample of 600 rows").all()
    assert ag["message"].str.contains("metrics on a reservoir sample of 600 rows for svm_accuracy").all()
    assert (ag["n"] > 2000).all() and (ss["n"] < 600).all()
    assert frame.attrs["config"]["mechanisms"] == ["ss_approx", "analyze_gauss"]


def test_rows_stay_in_the_main_process_when_only_statistics_are_needed():
    p = preprocess(_toy(n=2000))
    local = p.keep_rows_local()
    local.C, local.spectrum  # noqa: B018
    blob = pickle.dumps(local)
    assert len(blob) < len(pickle.dumps(p.X)) / 4
    there = pickle.loads(blob)
    np.testing.assert_allclose(there.C, p.C)
    assert there.n == p.n and there.eigenvalues.shape == (p.d,)
    with pytest.raises(DataError, match="stayed in the main process"):
        there.X  # noqa: B018
    np.testing.assert_array_equal(local.X, p.X)  # in this process the rows are still there


def test_statistics_keep_exact_counts_out_of_the_ledger():
    ds = _toy()
    s = stats.from_dataset(ds, reservoir_size=50, norm_bound=0.5)
    assert isinstance(s.diagnostics, Diagnostics) and s.diagnostics.private is False
    assert 0 < s.clip_fraction <= 1 and s.diagnostics["clip_fraction"] == s.clip_fraction
    assert s.diagnostics["reservoir_rows"] == 50
    notes = " ".join(e.note for e in s.ledger)
    assert f"{s.clip_fraction:.2%}" not in notes and str(s.n) not in notes
    assert s.is_private


def test_the_cli_reservoir_default_is_the_library_default():
    from dpcore.cli import data as cli_data

    assert cli_data.DEFAULT_RESERVOIR == stats.DEFAULT_RESERVOIR


def test_unit_rows_are_still_checked_for_outside_constructions():
    with pytest.raises(DataError, match="norm ≤ 1"):
        PreparedData(np.array([[2.0, 0.0]]))
    with pytest.raises(DataError, match="NaN"):
        PreparedData(np.array([[np.nan, 0.0]]))
