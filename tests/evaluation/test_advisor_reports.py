"""The clipping advisor reports what it spends as it spends it (issue 35 item 3): each DP mean as it is drawn
(``on_preprocessing``, DP centring) and each release as it is made (``on_release``), a release stopped at the time
cap included (``ReleaseStatus.TIMEOUT``: when it stopped depends on the data, so it is counted as a capped sweep cell
and a capped Inspect release are). A run that fails or is interrupted after some draws has reported them all."""

from __future__ import annotations

import numpy as np
import pytest
from _slow_mechanisms import cap_the_third_release

import dpcore
from dpcore.data import Dataset
from dpcore.evaluation.advisor import clipping_utility_curve
from dpcore.exceptions import DPCoreError
from dpcore.vocabulary import ReleaseStatus

BOUNDS = [0.5, 1.0, 2.0]


@pytest.fixture(scope="module")
def data() -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset(id="toy", name="toy", X=rng.normal(size=(200, 4)) * [2.0, 1.0, 0.5, 0.25])


def _curve(data, events: list, **kw):
    return clipping_utility_curve(data, BOUNDS, feature_scaling="none", k=1, trials=2, seed=5, time_limit=None,
                                  on_release=lambda status: events.append(("release", status)),
                                  on_preprocessing=lambda entry: events.append(("mean", entry)), **kw)


def test_every_dp_mean_and_release_is_reported_in_the_order_drawn(data):
    events: list = []
    curve = _curve(data, events, centering="dp", centering_epsilon=0.3)
    means = [e for kind, e in events if kind == "mean"]
    assert means == list(curve.attrs["preprocessing_ledger"]) and len(means) == curve.attrs["runs"] == 6
    assert all(m.epsilon == 0.3 for m in means)
    assert [kind for kind, _ in events] == ["mean", "release"] * 6  # each DP mean reported before its release
    assert {s for kind, s in events if kind == "release"} <= {ReleaseStatus.OK, ReleaseStatus.BOTTOM}
    assert curve.attrs["capped"] == 0


def test_reporting_changes_no_number(data):
    plain = clipping_utility_curve(data, BOUNDS, feature_scaling="none", k=1, trials=2, seed=5, time_limit=None,
                                   centering="dp", centering_epsilon=0.3)
    reported = _curve(data, [], centering="dp", centering_epsilon=0.3)
    assert plain.equals(reported)


def test_a_run_that_fails_after_three_releases_has_reported_their_dp_means(data):
    events: list = []

    def fails(done, total, text):
        if done == 3:
            raise DPCoreError("a later step failed")

    with pytest.raises(DPCoreError):
        _curve(data, events, centering="dp", centering_epsilon=0.3, progress=fails)
    assert [kind for kind, _ in events] == ["mean", "release"] * 3


def test_a_release_capped_at_the_time_limit_is_reported(data, monkeypatch):
    mech = dpcore.get_mechanism("analyze_gauss")
    cap_the_third_release(monkeypatch, mech)
    statuses: list = []
    curve = clipping_utility_curve(data, BOUNDS, feature_scaling="none", k=1, trials=2, seed=5, time_limit=None,
                                   on_release=statuses.append)
    assert statuses[:2] == [ReleaseStatus.OK] * 2 and statuses[2:] == [ReleaseStatus.TIMEOUT]
    assert curve.attrs["runs"] == 2 and curve.attrs["capped"] == 1 and not curve.attrs["complete"]
    assert list(curve["n_ok"]) == [2, 0, 0]
