"""The fused clip-and-accumulate pass (issue #22 item 3) computes what the clipped copy + XᵀX computed.

``RowTransform.unit_moments`` holds at most one block of unit rows at once; these tests hold it to the reference
computation written out independently (clip each row with ``np.linalg.norm``, divide by B, then ``UᵀU`` and ``Σu``),
to the unfused pass of ``run_preprocessing`` (same ledger, same exact counts), and to the releases of the four
input-perturbation mechanisms on rows in memory from the same seed (same noise, so equal up to rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import DPPCA
from dpcore.core.seeding import Stage, stage_rng
from dpcore.data import Dataset, PreparedData, preprocess
from dpcore.data import transform as transform_module
from dpcore.data.prepared import Moments
from dpcore.data.preprocess import ArrayChunks, Collector, run_preprocessing
from dpcore.data.transform import MIN_BLOCK_ROWS, RowTransform, block_rows
from dpcore.exceptions import DataError
from dpcore.mechanisms import get_mechanism

INPUT_PERTURBATION = ("analyze_gauss", "laplace", "mod_sulq", "wishart_sheffet")


def _rows(n: int, d: int, bound: float, seed: int) -> np.ndarray:
    """Rows whose norms straddle ``bound``: about half are clipped, half are not (and a few are zero)."""
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((n, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    norms = bound * rng.uniform(0.2, 2.0, size=n)
    norms[::17] = 0.0
    return directions * norms[:, None]


def _reference_units(Y: np.ndarray, bound: float) -> np.ndarray:
    """Clipped copy divided by B, written out row by row: u = y·min(1, B/‖y‖)/B."""
    U = np.array(Y, dtype=np.float64, copy=True)
    for i, norm in enumerate(np.linalg.norm(Y, axis=1)):
        if norm > bound:
            U[i] *= bound / norm
    return U / bound


def _assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    scale = max(float(np.abs(expected).max()), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12 * scale)


# (n, d) with blocks of MIN_BLOCK_ROWS rows (``small_blocks``): one block, several blocks with a short last one,
# d = 1, n < d, a last block of one row
SHAPES = [(50, 3), (3 * MIN_BLOCK_ROWS + 5, 7), (700, 1), (5, 40), (MIN_BLOCK_ROWS + 1, 300)]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of MIN_BLOCK_ROWS rows, so that small data crosses several blocks."""
    monkeypatch.setattr(transform_module, "BLOCK_BYTES", 1)
    assert block_rows(300) == MIN_BLOCK_ROWS


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize(("n", "d"), SHAPES)
def test_fused_moments_equal_clipped_copy_then_gram(n, d):
    bound = 1.7
    Y = _rows(n, d, bound, seed=n + d)
    C, total, clipped, clamped = RowTransform(bound=bound).unit_moments(Y)
    U = _reference_units(Y, bound)
    expected_clipped = int(np.sum(np.linalg.norm(Y, axis=1) > bound))
    assert 0 < expected_clipped < n  # the data has clipped and unclipped rows
    assert (clipped, clamped) == (expected_clipped, 0)
    _assert_close(C, U.T @ U)
    _assert_close(total, U.sum(axis=0))
    assert np.array_equal(C, C.T)  # exactly symmetric, as the one-shot UᵀU


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize(("n", "d"), SHAPES)
def test_fused_moments_follow_every_step_of_the_transform(n, d):
    """Schema scaling with clamping, the DP-centring pre-clip and a centre, and ``clip=False``: the fused pass
    gives the moments of exactly the rows ``unit`` gives (those rows are the reference)."""
    rng = np.random.default_rng(d)
    raw = rng.uniform(-1.0, 3.0, size=(n, d))
    lo, hi = np.full(d, -0.5), np.full(d, 2.0)
    transforms = [
        RowTransform(bound=0.8 * np.sqrt(d), lo=lo, hi=hi, width=hi - lo, clamp=True),
        RowTransform(bound=0.5 * np.sqrt(d), pre_clip=1.5 * np.sqrt(d), center=np.full(d, 0.4)),
        RowTransform(bound=2.0 * np.sqrt(d), clip=False),
    ]
    for transform in transforms:
        U, hit, clamped = transform.unit(raw)
        C, total, clipped, fused_clamped = transform.unit_moments(raw)
        assert (clipped, fused_clamped) == (int(hit.sum()), clamped)
        _assert_close(C, U.T @ U)
        _assert_close(total, U.sum(axis=0))


@pytest.mark.parametrize(("n", "d"), [(1, 9), (300, 5), (4000, 200)])
def test_one_block_is_the_unfused_computation_bit_for_bit(n, d):
    """Up to :func:`block_rows` rows the fused pass is one block: exactly ``Moments.of_rows(unit(raw))``."""
    assert n <= block_rows(d)
    Y = _rows(n, d, 1.0, seed=n) + 0.5
    transform = RowTransform(bound=1.0)
    C, total, clipped, _ = transform.unit_moments(Y)
    U, hit, _ = transform.unit(Y)
    reference = Moments.of_rows(U)
    assert clipped == int(hit.sum()) > 0
    np.testing.assert_array_equal(C, reference.C)
    np.testing.assert_array_equal(total, reference.total)


@pytest.mark.usefixtures("small_blocks")
def test_fused_pass_refuses_non_finite_rows_with_the_same_message():
    Y = _rows(600, 4, 1.0, seed=1)
    Y[550, 2] = np.nan
    with pytest.raises(DataError, match="NaN or infinite"):
        RowTransform(bound=1.0).unit_moments(Y)
    with pytest.raises(DataError, match="NaN or infinite"):
        DPPCA(random_state=0).fit(Y)


class _KeepNothing(Collector):
    """A collector that keeps nothing: ``run_preprocessing`` then takes its unfused path (rows materialised)."""

    def part(self, chunk, units):
        return None

    def merge(self, a, b):
        return None


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("centering", ["none", "dp", "empirical"])
def test_fused_and_unfused_passes_keep_the_same_ledger_and_counts(centering):
    n, d = 2 * MIN_BLOCK_ROWS + 3, 12
    X = _rows(n, d, 2.0, seed=5) + 0.3
    kwargs = dict(feature_scaling="none", norm_bound=2.0, centering=centering, centering_epsilon=0.5,
                  centering_delta=1e-6, random_state=11)
    fused = run_preprocessing(ArrayChunks(X), **kwargs)
    unfused = run_preprocessing(ArrayChunks(X), collector=_KeepNothing(), **kwargs)
    assert fused.ledger == unfused.ledger
    assert dict(fused.diagnostics) == dict(unfused.diagnostics)
    assert fused.clip_fraction == unfused.clip_fraction > 0
    assert fused.moments.n == unfused.moments.n == n
    _assert_close(fused.moments.C, unfused.moments.C)
    _assert_close(fused.moments.total, unfused.moments.total)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("mechanism", INPUT_PERTURBATION)
def test_release_from_the_fused_pass_equals_the_release_on_clipped_rows(mechanism):
    """Same seed, same noise: the released matrix from preprocess's fused pass equals the release on the clipped
    rows held in memory (C formed as UᵀU) up to floating-point rounding."""
    n, d, bound = 1500, 8, 1.5
    X = _rows(n, d, bound, seed=7)
    fused = preprocess(Dataset(id="t", name="t", X=X), feature_scaling="none", norm_bound=bound)
    in_memory = PreparedData(_reference_units(X, bound), norm_bound=bound)
    _assert_close(fused.C, in_memory.C)
    mech = get_mechanism(mechanism)
    delta = 1e-5 if mech.uses_delta else 0.0
    a = mech.release(fused, 2, 1.0, delta, random_state=4)
    b = mech.release(in_memory, 2, 1.0, delta, random_state=4)
    assert a.status == b.status
    if a.covariance is not None:
        _assert_close(a.covariance, b.covariance)
        _assert_close(a.covariance_post, b.covariance_post)
    _assert_close(a.subspace @ a.subspace.T, b.subspace @ b.subspace.T)
    assert [(e.step, e.epsilon, e.delta) for e in a.ledger] == [(e.step, e.epsilon, e.delta) for e in b.ledger]


@pytest.mark.usefixtures("small_blocks")
def test_estimator_fit_equals_the_release_on_clipped_rows():
    n, d, bound = 900, 6, 1.2
    X = _rows(n, d, bound, seed=9)
    model = DPPCA(mechanism="analyze_gauss", n_components=2, norm_bound=bound, random_state=2).fit(X)
    reference = get_mechanism("analyze_gauss").release(PreparedData(_reference_units(X, bound), norm_bound=bound),
                                                        2, 1.0, 1e-5, random_state=2)
    _assert_close(model.release_.covariance, reference.covariance)
    _assert_close(model.components_.T @ model.components_, reference.subspace @ reference.subspace.T)


def test_dp_mean_is_the_mean_of_the_clipped_rows_plus_its_noise():
    """The DP mean sums the clipped rows without copying them: equal, up to rounding, to the mean of the clipped copy
    plus the CENTERING stage's draw from the same seed."""
    n, d, bound, seed = 3000, 6, 1.5, 13
    X = _rows(n, d, bound, seed=2) + 0.4
    data = preprocess(Dataset(id="t", name="t", X=X), feature_scaling="none", norm_bound=bound, centering="dp",
                      centering_epsilon=0.5, centering_delta=1e-6, random_state=seed)
    clipped_mean = (_reference_units(X, bound) * bound).mean(axis=0)
    stream = stage_rng(seed, Stage.CENTERING, data.info["centering_stream_key"])  # keyed by its public settings
    noise = stream.normal(0.0, data.info["centering_sigma"], size=d)
    np.testing.assert_allclose(data.info["center"], clipped_mean + noise, rtol=0, atol=1e-13)


def test_no_step_writes_into_the_raw_rows():
    """Steps after the first new array work in place; the raw rows (a read-only view here) are never written."""
    rng = np.random.default_rng(4)
    d = 8
    raw = rng.uniform(-1.0, 3.0, size=(300, d))
    before = raw.copy()
    raw.setflags(write=False)
    lo, hi, centre = np.full(d, -0.5), np.full(d, 2.0), np.full(d, 0.4)
    for transform in (RowTransform(bound=2.0, lo=lo, hi=hi, width=hi - lo, clamp=True, pre_clip=2.5, center=centre),
                      RowTransform(bound=2.0, center=centre), RowTransform(bound=2.0, pre_clip=3.0, center=centre),
                      RowTransform(bound=2.0)):
        U = transform.unit(raw)[0]
        transform.unit_moments(raw)
        assert U is not raw and not np.shares_memory(U, raw)
        expected = raw.copy()
        if transform.lo is not None:
            expected = (np.clip(expected, lo, hi) - lo) / (hi - lo)
        if transform.pre_clip is not None:
            expected = _reference_units(expected, transform.pre_clip) * transform.pre_clip
        expected = expected - centre if transform.center is not None else expected
        np.testing.assert_allclose(U, _reference_units(expected, 2.0), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(raw, before)
