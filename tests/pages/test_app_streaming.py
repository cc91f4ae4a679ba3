"""Issue #12 in the dashboard: sweeps on the server's shared pool, streamed, cancellable, reused cell by cell.

A test-only mechanism sleeps (without using the CPU) for ε > 1, so a sweep is reliably still running after the
page's short in-run wait; everything else is checked against the session's own records, not against timings.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from _slow_mechanisms import SleepyMechanism
from streamlit.testing.v1 import AppTest

from dpcore.mechanisms import _INSTANCES, _REGISTRY
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest-heavy: every test runs the app

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60
LIVE = ui_state.slot_key("explore_result_live")


@pytest.fixture
def at(monkeypatch):
    monkeypatch.setitem(_REGISTRY, SleepyMechanism.id, SleepyMechanism)
    monkeypatch.setitem(_INSTANCES, SleepyMechanism.id, SleepyMechanism())
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params.update({"data": "wine", "trials": "1", "k": "2", "eps": "0.5~2"})
    app.run()
    app.switch_page("pages/explore.py").run()
    assert not app.exception, [e.value for e in app.exception]
    yield app
    if LIVE in app.session_state:
        app.session_state[LIVE].sweep.cancel()  # no sleeping worker outlives the test


def _wait_until(predicate, timeout: float = TIMEOUT) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the sleeping cell holds one worker; needs a second one")
def test_a_sweep_streams_cancel_keeps_finished_cells_and_a_new_mechanism_reuses_them(at):
    at.toggle(key="dp_autorun").set_value(False).run()
    at.multiselect(key="dp_mech_approx").set_value([]).run()
    at.multiselect(key="dp_mech_pure").set_value(["laplace", SleepyMechanism.id]).run()
    at.button(key="explore_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    live = at.session_state[LIVE]
    sweep = live.sweep
    # ε ∈ {0.5, 1, 2}: the sleepy cell at ε = 2 holds one worker; every other cell finishes on the other
    quick = sweep.total - 1
    _wait_until(lambda: sweep.job.done + sweep.reused >= quick)
    at.run()  # what the page's poller does: a rerun draws the cells finished so far
    assert not sweep.finished
    partial = ui_state.stored("explore_result", at.session_state)
    assert not partial.complete and len(partial.frame) == 3 + 2  # Laplace at every ε, Sleepy at ε ≤ 1
    progress = [p.proto.text for p in at.get("progress")]
    assert any(f"{sweep.total - 1} / {sweep.total} releases" in text for text in progress), progress
    assert at.get("plotly_chart"), "partial results are drawn"

    at.button(key="explore_run_cancel").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert sweep.cancelled and sweep.finished
    kept = ui_state.stored("explore_result", at.session_state)
    assert len(kept.frame) == len(partial.frame) and set(kept.frame.status) == {"ok"}
    assert not kept.frame.query("mechanism == @SleepyMechanism.id and epsilon > 1").shape[0]
    assert any("Cancelled after" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "explore_run_cancel"]  # the button goes with the run

    # adding a mechanism: every finished cell is reused, only the new ones (and the cancelled ones) run
    at.multiselect(key="dp_mech_pure").set_value(["laplace", SleepyMechanism.id, "itu"]).run()
    at.button(key="explore_run").click().run()
    again = at.session_state[LIVE].sweep
    assert again is not sweep
    assert again.reused == len(kept.frame) + len(kept.frames["reference lines"])
    assert again.total - again.reused == 3 + 1  # IT-U at 3 ε values, the cancelled sleepy cell
    _wait_until(lambda: again.job.done >= 3)
    at.run()
    frame = ui_state.stored("explore_result", at.session_state).frame
    laplace_before = kept.frame.query("mechanism == 'laplace'").reset_index(drop=True)
    laplace_after = frame.query("mechanism == 'laplace'").reset_index(drop=True)
    assert laplace_after.equals(laplace_before)  # the very same rows, not recomputed ones


def test_without_worker_processes_sweeps_run_in_the_server_and_the_page_says_so(monkeypatch):
    from pages.ui.pool import shared_pool

    monkeypatch.setenv("DP_POOL_SLOTS", "0")
    shared_pool.clear()  # the next page run builds the pool again, without processes
    try:
        app = AppTest.from_file(APP, default_timeout=TIMEOUT)
        app.query_params.update({"data": "wine", "trials": "2", "k": "2"})
        app.run()
        app.switch_page("pages/explore.py").run()
        assert not app.exception, [e.value for e in app.exception]
        assert any("one at a time inside the server" in c.value for c in app.caption)
        run = ui_state.stored("explore_result", app.session_state)
        assert run.complete and len(run.frame) and set(run.frame.status) == {"ok"}
    finally:
        shared_pool().close()
        shared_pool.clear()
