"""Every simulated release the inverse planner makes is reported as it is made (``plan_epsilon(on_releases=…)``), so
the session odometer counts the releases of a plan that fails after some probes (issue 35 item 3; on 67659ea the
dashboard counted a plan's releases only from its result, after it returned)."""

from __future__ import annotations

from collections import Counter

import pytest

import dpcore.evaluation.sweep as sweep_module
from dpcore.data import load_dataset, preprocess
from dpcore.evaluation.planner import make_target, plan_epsilon
from dpcore.exceptions import DPCoreError


@pytest.fixture(scope="module")
def wine():
    return preprocess(load_dataset("wine"))


def _plan(data, reported: Counter, **kw):
    return plan_epsilon(data, "analyze_gauss", make_target("captured_variance_ratio", 0.9), k=1, trials=10, seed=3,
                        max_probes=5, on_releases=lambda eps, n: reported.update({eps: n}), **kw)


def test_the_planner_reports_exactly_the_releases_it_made(wine):
    reported: Counter = Counter()
    result = _plan(wine, reported)
    assert reported == Counter({p.epsilon: p.trials for p in result.probes})


def test_a_plan_that_fails_after_two_probes_has_reported_their_releases(wine, monkeypatch):
    real, probed = sweep_module.run_sweep, []

    def fails_after_the_second_probe(*args, **kwargs):
        frame = real(*args, **kwargs)
        probed.append((kwargs["epsilons"][0], len(frame)))
        if len(probed) == 2:
            raise DPCoreError("a later step failed")
        return frame

    monkeypatch.setattr(sweep_module, "run_sweep", fails_after_the_second_probe)
    reported: Counter = Counter()
    with pytest.raises(DPCoreError):
        _plan(wine, reported)
    assert reported == Counter(dict(probed)) and sum(reported.values()) == 20
