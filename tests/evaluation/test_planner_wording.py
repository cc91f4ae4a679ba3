"""The planner's answer in words: what it is for (target, share, k, δ, neighbours) and the confidence rule that can
put it above a probe whose share met the target (a reviewer saw 0.92 ≥ 0.90 at ε = 3.398 and an answer of 3.65)."""

from __future__ import annotations

import pytest

from dpcore.evaluation.planner import PlanResult, Probe, _confident, confidence_rule, make_target, plan_context


def _result(probes, epsilon=3.65):
    return PlanResult("analyze_gauss", make_target("captured_variance_ratio", 0.9), 0.9, 5, 1e-4, epsilon, 3.3,
                      (3.0, epsilon), probes, True)


def test_the_context_names_target_share_k_delta_and_neighbours():
    text = plan_context(_result([]), "replace")
    for part in ("captured variance ≥ 0.9", "90%", "k = 5", "δ = 0.0001", "replace-one"):
        assert part in text, (part, text)
    assert "add/remove-one" in plan_context(_result([]), "add_remove")
    angle = PlanResult("laplace", make_target("principal_angle_max_deg", 10), 0.8, 2, 1e-5, 2.0, 2.0, (1.0, 2.0), [],
                       True)
    assert "largest principal angle ≤ 10°" in plan_context(angle, "replace")


def test_the_rule_explains_a_probe_that_met_the_target_but_not_confidently():
    probes = [Probe(3.398, 46, 50, 0.91), Probe(3.65, 50, 50, 0.95), Probe(1.0, 0, 50, 0.2)]
    # the planner's own rule: 46/50 is not confidently ≥ 0.9, 50/50 is
    assert _confident(probes, 0.9, 0.95)[1] == 3.65
    text = confidence_rule(_result(probes))
    assert "95% confidence" in text and "Clopper–Pearson" in text
    assert "ε = 3.398, 46 of 50 releases (0.92)" in text
    low = float(text.split("as low as ")[1][:4])
    assert low == pytest.approx(0.81, abs=0.01)  # the two-sided 95 % interval's lower end for 46 of 50


def test_the_rule_has_no_example_when_no_lower_probe_met_the_target():
    text = confidence_rule(_result([Probe(1.0, 10, 50, 0.2), Probe(3.65, 50, 50, 0.95)]))
    assert "A probe can meet" not in text and "95% confidence" in text
