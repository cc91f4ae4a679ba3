"""Outside check (issue #25): PPCA's samplers against Yun & Dudeja's (2025) closed form on a spiked Σ, p = 200.

Tolerance: the formula is a p → ∞ limit; at p = 200 the sampler may sit a few percent off it (measured: k = 1
within 1 %, the k = 2 scan within 0.5 %). A check passes when |measured − predicted| ≤ 5 % of the prediction
(:data:`FINITE_P_TOLERANCE`) plus 4 Monte Carlo standard errors. A 25 % change of β (e.g. a wrong ε = βp²/n
mapping, ε/2 in place of ε) moves the prediction by 20 % or more and fails it.
"""

from __future__ import annotations

import pytest

from dpcore.samplers.asymptotics import (
    FINITE_P_TOLERANCE,
    check_sampler,
    epsilon_for,
    predicted_errors,
    spiked_spectrum,
    yun_dudeja_h,
)


def test_closed_form_and_mapping():
    lam = spiked_spectrum()
    assert lam.size == 200 and lam[:3].tolist() == [6.0, 4.0, 3.0] and 0.0 < lam[-1] < lam[3] < 1.0
    h = yun_dudeja_h(lam, 2)
    assert h[0] == pytest.approx(sum(1.0 / (6.0 - x) for x in lam[2:]) / 200)
    assert predicted_errors(lam, 2, 1.0) == pytest.approx((2 * (h[0] + h[1]), h[1]))
    assert predicted_errors(lam, 2, 0.01) == (4.0, 1.0)  # saturated: no information
    assert epsilon_for(1.0, 200, 10_000) == pytest.approx(4.0)  # ε = βp²/n


@pytest.mark.slow
@pytest.mark.parametrize("k,kwargs", [(1, {"draws": 100}), (2, {"chains": 3, "scans": 80, "warmup": 30})])
def test_samplers_land_on_the_yun_dudeja_curve(k, kwargs):
    lam = spiked_spectrum()
    check = check_sampler(lam, k, 1.0, seed=7, **kwargs)
    assert check.agrees(), (check.frobenius_mean, check.frobenius_se, check.frobenius_predicted)
    op_allowance = FINITE_P_TOLERANCE * check.operator_predicted + 4 * check.operator_se
    assert abs(check.operator_mean - check.operator_predicted) <= op_allowance
    wrong = predicted_errors(lam, k, 1.25)[0]  # the same draws against a 25 % different β: rejected
    assert abs(check.frobenius_mean - wrong) > FINITE_P_TOLERANCE * wrong + 4 * check.frobenius_se
