"""PreparedData and SufficientStats share one small interface, PreparedSummary (issue 23, item 6): the fields
both really hold, with the same values for the same data; functions typed against it take either container."""

from __future__ import annotations

import typing
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore import stats
from dpcore.data import Dataset, preprocess
from dpcore.data.prepared import PreparedData, PreparedSummary
from dpcore.evaluation.sweep import SweepConfig, add_privacy_columns, non_private_preprocessing
from dpcore.exceptions import InvalidParameterError, PrivacyLeakWarning

MEMBERS = ("n", "d", "C", "norm_bound", "name", "feature_names", "ledger", "info", "diagnostics", "clip_fraction",
           "is_private")


def _dataset() -> Dataset:
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 3, size=(300, 4))
    return Dataset(id="toy", name="toy", X=X, feature_names=("a", "b", "c", "d"),
                   feature_ranges=np.tile([0.0, 2.0], (4, 1)))


@pytest.fixture(scope="module", params=["schema", "minmax"])
def pair(request):
    ds = _dataset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return (preprocess(ds, feature_scaling=request.param),
                stats.from_dataset(ds, feature_scaling=request.param, reservoir_size=50, seed=1))


def test_the_protocol_lists_the_shared_members():
    assert set(MEMBERS) == {m for m in PreparedSummary.__dict__ if not m.startswith("_")} - set(
        typing.Protocol.__dict__)


def test_both_containers_satisfy_it(pair):
    prepared, statistics = pair
    assert isinstance(prepared, PreparedData) and isinstance(statistics, stats.SufficientStats)
    assert isinstance(prepared, PreparedSummary) and isinstance(statistics, PreparedSummary)
    assert not isinstance(np.eye(2), PreparedSummary)


def test_the_shared_members_agree_for_the_same_data(pair):
    prepared, statistics = pair
    for member in ("n", "d", "norm_bound", "name", "feature_names", "clip_fraction", "is_private"):
        assert getattr(prepared, member) == getattr(statistics, member), member
    np.testing.assert_allclose(statistics.C, prepared.C, rtol=1e-10, atol=1e-12)
    assert [(e.step, e.private, e.note) for e in statistics.ledger] == [(e.step, e.private, e.note)
                                                                       for e in prepared.ledger]
    assert statistics.diagnostics["clip_fraction"] == prepared.diagnostics["clip_fraction"]


def test_functions_typed_against_it_take_either_container(pair):
    for data in pair:
        assert non_private_preprocessing(data) == [e.step for e in data.ledger if not e.private]
        frame = pd.DataFrame({"mechanism": ["laplace"], "guarantee": ["pure"], "message": [""]})
        add_privacy_columns(frame, data)
        assert bool(frame["end_to_end_private"][0]) == data.is_private
        assert SweepConfig(mechanisms=["laplace"], epsilons=[1.0], ks=[4], seed=0).validated(data).ks == [4]
        with pytest.raises(InvalidParameterError, match="k must be <= 4"):
            SweepConfig(mechanisms=["laplace"], epsilons=[1.0], ks=[5], seed=0).validated(data)
