"""The ledger's wording for zCDP shares: a step that spends ρ·share (charged in the conversion row) is shown with
its ρ, never as "no privacy cost" (on 67659ea AdaptiveCov's noisy trace, ρ/8, read "(no privacy cost) — ρ·0.125 …")."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.core.odometer import Odometer
from dpcore.mechanisms import get_mechanism, release_rho
from pages.ui import charts


def _shown(monkeypatch, ledger) -> list[str]:
    lines: list[str] = []
    monkeypatch.setattr(charts.st, "markdown", lambda text, *a, **k: lines.extend(str(text).splitlines()))
    charts.show_ledger(ledger)
    return lines


# every mechanism whose ledger rows carry a share of ρ or of ε (the zCDP ones and their pure-DP twins)
@pytest.mark.parametrize("mid", ["adaptive_cov", "separate_cov", "adaptive_lap_cov", "separate_lap_cov", "coinpress",
                                 "ppm"])
def test_no_step_that_spends_budget_says_no_privacy_cost(monkeypatch, mid):
    X = np.random.default_rng(3).normal(size=(200, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    release = get_mechanism(mid).release(X, 2, 1.0, 1e-6, random_state=1)
    lines = _shown(monkeypatch, release.ledger)
    assert len(lines) == len(release.ledger)
    for entry, line in zip(release.ledger, lines, strict=True):
        spends = entry.epsilon > 0 or entry.delta > 0 or bool(entry.rho) or "of ρ" in entry.note
        assert not (spends and "no privacy cost" in line), line


def test_adaptive_covs_trace_step_shows_its_rho_and_is_still_charged_once():
    release = get_mechanism("adaptive_cov").release(np.eye(3) * 0.5, 1, 2.0, 1e-6, random_state=1)
    rho = release_rho("adaptive_cov", 2.0, 1e-6, d=3)
    trace = next(e for e in release.ledger if e.step.startswith("noisy trace"))
    assert trace.rho == pytest.approx(rho / 8, rel=1e-12)  # the authors' split: trace ρ/8
    shares = [e.rho for e in release.ledger[:-1]]
    assert sum(shares) == pytest.approx(release.ledger[-1].rho, rel=1e-12)  # the shares add up to the conversion's ρ
    odo = Odometer()
    odo.record_release(release, "Inspect")
    assert odo.totals().zcdp_rho == pytest.approx(rho, rel=1e-12)  # the share rows are not counted beside it


def test_a_free_step_still_says_so(monkeypatch):
    from dpcore.core.privacy import LedgerEntry

    assert "no privacy cost" in _shown(monkeypatch, [LedgerEntry("clip rows", note="per record, free")])[0]
