"""The sweep engine: shape of the output, determinism, statuses, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import InvalidParameterError
from dpcore.evaluation.sweep import COLUMNS, SweepConfig, cell_seed, count_cells, run_sweep, summarise

MECHS = ["pca", "random", "analyze_gauss", "laplace"]


def test_columns_and_cell_count(small_data):
    cfg = SweepConfig(mechanisms=MECHS, epsilons=[0.5, 2.0], deltas=[1e-5, 1e-3], ks=[1, 2], trials=2)
    seen = []
    frame = run_sweep(small_data, cfg, progress=lambda done, total, text: seen.append((done, total)))
    assert list(frame.columns[: len(COLUMNS)]) == list(COLUMNS)
    # pure/none mechanisms run once (δ = 0); analyze_gauss once per δ
    expected = (3 * 1 + 1 * 2) * 2 * 2 * 2
    assert len(frame) == expected == count_cells(cfg.validated(small_data))
    assert seen[-1] == (expected, expected)
    assert set(frame.status) == {"ok"}
    assert (frame.loc[frame.mechanism == "laplace", "delta"] == 0).all()
    pca = frame[frame.mechanism == "pca"]
    assert np.allclose(pca.captured_variance_ratio, 1.0)
    assert frame.loc[frame.mechanism == "random", "frobenius_error"].isna().all()
    ag = frame[frame.mechanism == "analyze_gauss"]
    # post-processing (PSD projection, eigenvalues clipped to [0, n]) never moves Ĉ further from the PSD C
    assert (ag.frobenius_error <= ag.frobenius_error_raw + 1e-12).all() and ag.frobenius_error_raw.notna().all()
    assert frame.svm_accuracy.notna().all()  # the fixture has labels
    # one majority-class baseline for the whole sweep (same held-out split): the floor for svm_accuracy. It is the
    # test accuracy of the *training* majority class, so on balanced labels it can fall below 0.5 (0.483 with some
    # of the random splits an unseeded sweep draws: this bound was flaky)
    assert frame.svm_majority_baseline.nunique() == 1 and 0.0 < frame.svm_majority_baseline.iloc[0] < 1.0


def test_majority_baseline_on_imbalanced_labels():
    from dpcore.data import PreparedData

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (400, 3))
    y = np.where(rng.random(400) < 0.94, "common", "rare")
    frame = run_sweep(PreparedData(X, y=y), mechanisms=["random"], epsilons=[1.0], trials=3, seed=0)
    base = frame.svm_majority_baseline.iloc[0]
    assert base == pytest.approx(0.94, abs=0.05)  # census-like: every subspace scores about this
    assert (frame.svm_accuracy >= base - 0.05).all()


def test_same_seed_same_numbers_and_cells_independent_of_grid(small_data):
    a = run_sweep(small_data, mechanisms=["analyze_gauss"], epsilons=[1.0], trials=3, seed=5)
    b = run_sweep(small_data, mechanisms=["laplace", "analyze_gauss"], epsilons=[0.1, 1.0], trials=3, seed=5)
    sub = b[(b.mechanism == "analyze_gauss") & (b.epsilon == 1.0)].reset_index(drop=True)
    pd.testing.assert_series_equal(a.captured_variance_ratio, sub.captured_variance_ratio)
    assert list(a.seed) == list(sub.seed)
    c = run_sweep(small_data, mechanisms=["analyze_gauss"], epsilons=[1.0], trials=3, seed=6)
    assert not np.allclose(a.captured_variance_ratio, c.captured_variance_ratio)


def test_cell_seed_replays_a_cell(small_data):
    from dpcore.evaluation.metrics import evaluate, evaluation_split
    from dpcore.mechanisms import get_mechanism

    frame = run_sweep(small_data, mechanisms=["laplace"], epsilons=[3.0], trials=1, seed=2)
    row = frame.iloc[0]
    assert row.seed == cell_seed(2, "laplace", 3.0, 0.0, 2, 0, row.n)
    mech_rows, split = evaluation_split(small_data, 2)
    release = get_mechanism("laplace").release(mech_rows, 2, 3.0, random_state=int(row.seed))
    assert evaluate(release, mech_rows, split)["captured_variance_ratio"] == pytest.approx(row.captured_variance_ratio)


def test_errors_are_recorded_and_sweep_goes_on(small_data, monkeypatch):
    from dpcore.mechanisms import get_mechanism

    mech = get_mechanism("laplace")

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(mech, "_release", boom)
    frame = run_sweep(small_data, mechanisms=["laplace", "random"], epsilons=[1.0], trials=2)
    assert set(frame[frame.mechanism == "laplace"].status) == {"error"}
    assert frame[frame.mechanism == "laplace"].message.str.contains("kaboom").all()
    assert set(frame[frame.mechanism == "random"].status) == {"ok"}


def test_timeout_status(small_data, monkeypatch):
    from dpcore.exceptions import MechanismTimeout
    from dpcore.mechanisms import get_mechanism

    def slow(*args, deadline, **kwargs):
        raise MechanismTimeout("too slow")

    monkeypatch.setattr(get_mechanism("laplace"), "_release", slow)
    frame = run_sweep(small_data, mechanisms=["laplace"], epsilons=[1.0], trials=1, time_cap=0.5)
    assert frame.status.tolist() == ["timeout"]


def test_total_time_limit_and_stop(small_data):
    frame = run_sweep(small_data, mechanisms=["random"], epsilons=[1.0, 2.0], trials=3,
                      progress=lambda done, total, text: done < 2)
    assert len(frame) == 2
    frame = run_sweep(small_data, mechanisms=["random"], epsilons=[1.0], trials=3, total_time_limit=1e-9)
    assert "timeout" in set(frame.status)


def test_sample_sizes(small_data):
    frame = run_sweep(small_data, mechanisms=["analyze_gauss"], epsilons=[1.0], trials=2, sample_sizes=[50, 100])
    assert sorted(frame.n.unique()) == [50, 100]
    with pytest.raises(InvalidParameterError, match="exceeds"):
        run_sweep(small_data, mechanisms=["random"], epsilons=[1.0], sample_sizes=[10_000])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mechanisms": [], "epsilons": [1.0]}, "at least one mechanism"),
        ({"mechanisms": ["nope"], "epsilons": [1.0]}, "unknown mechanism"),
        ({"mechanisms": ["random"], "epsilons": [-1.0]}, "epsilon"),
        ({"mechanisms": ["random"], "epsilons": [1.0], "ks": [99]}, "k"),
        ({"mechanisms": ["analyze_gauss"], "epsilons": [1.0], "deltas": [0.0]}, "delta > 0"),
        ({"mechanisms": ["sn_imtiaz"], "epsilons": [1.0]}, "invalid"),
        ({"mechanisms": ["laplace"], "epsilons": [1.0], "mechanism_options": {"laplace": {"x": 1}}}, "unknown option"),
        ({"mechanisms": ["mod_sulq"], "epsilons": [1.0], "neighbouring": "add_remove"}, "supports"),
    ],
)
def test_bad_configs_fail_fast(small_data, kwargs, match):
    with pytest.raises(Exception, match=match) as info:
        run_sweep(small_data, **kwargs)
    assert isinstance(info.value, ValueError)


def test_invalid_mechanisms_run_when_allowed(small_data):
    frame = run_sweep(small_data, mechanisms=["sn_imtiaz"], epsilons=[1.0], trials=1, allow_invalid=True)
    assert frame.status.tolist() == ["ok"] and frame.guarantee.tolist() == ["claimed-invalid"]


def test_summarise(small_data):
    frame = run_sweep(small_data, mechanisms=["analyze_gauss", "pca"], epsilons=[1.0], trials=4)
    s = summarise(frame)
    assert set(s.mechanism) == {"analyze_gauss", "pca"}
    row = s[s.mechanism == "pca"].iloc[0]
    assert row.captured_variance_ratio_mean == pytest.approx(1.0) and row.captured_variance_ratio_count == 4
