"""Precomputed cells outlast a session's time cap (issue #22 item 4): under load the niced, pausable background
PPCA cells ran past the session's 20 s wall-clock cap, their time-outs were not stored, and a "warm" server had to
compute PPCA again. The precomputation's cap is therefore longer, and — the cap being no part of a cell's key — its
cells are still the ones a session with the default cap asks for."""

from __future__ import annotations

import dataclasses

import pytest

from dpcore.evaluation.sweep import plan_sweep
from pages.ui import precompute, server_cache
from pages.ui import state as ui_state


@pytest.fixture(autouse=True)
def caches_on(monkeypatch):
    monkeypatch.setenv(server_cache.SWITCH, "1")


@pytest.mark.parametrize("mechanisms", [ui_state.DEFAULT_MECHANISMS, precompute.LESSON_MECHANISMS])
def test_precomputed_cells_keep_their_keys_under_the_longer_cap(mechanisms):
    session_cap = float(ui_state.DEFAULTS["dp_time_cap"])
    plans = precompute.default_plans(precompute.Item("wine", tuple(mechanisms), "wine"))
    assert "main" in plans
    for plan in plans.values():
        assert plan.config.time_cap == max(session_cap, precompute.CELL_TIME_CAP_S) > session_cap
        session = plan_sweep(plan.data, dataclasses.replace(plan.config, time_cap=session_cap), dataset_name="wine")
        assert session.config.time_cap == session_cap
        keys = [plan.cell_key(i) for i in range(len(plan.cells))]
        assert keys == [session.cell_key(i) for i in range(len(session.cells))]
        assert len(set(keys)) == len(keys) > 0
