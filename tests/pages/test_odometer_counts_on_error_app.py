"""Review (issue 35 item 3): a release made on an upload is counted even when a later step fails or is interrupted.

On 67659ea Explore's ε planner counted its simulated releases only after ``plan_epsilon`` returned: a plan that
raised after some probes had already released on the upload (a DPCoreError shown as an error, any other exception,
a stop request) counted none of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app_odometer import _only, _use_upload

import dpcore.evaluation.sweep as sweep_module
from dpcore.exceptions import DPCoreError
from pages.ui import planner
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BOOK = ui_state.slot_key("odometer")
TRIALS = 20


def _entries(at) -> list:
    book = at.session_state[BOOK]
    return [] if book is None or not book.odometers else next(iter(book.odometers.values())).entries


def _small_upload_session() -> AppTest:
    """An app session on the test upload: k = 1, 2 trials, ε ∈ [0.5, 1], Analyze Gauss only (no page run yet)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    for key, value in {"dp_k": 1, "dp_trials": 2, "dp_eps_range": (0.5, 1.0), "dp_delta": 1e-5}.items():
        at.session_state[key] = value
    _only(at, ["analyze_gauss"])
    return at


@pytest.fixture
def explore_upload():
    at = _small_upload_session()
    at.switch_page("pages/explore.py").run()
    assert not at.exception
    at.number_input(key="explore_plan_trials").set_value(TRIALS)
    return at


@pytest.mark.parametrize("failure", [DPCoreError, RuntimeError])
def test_a_plan_that_fails_after_probes_counts_the_releases_they_made(explore_upload, monkeypatch, failure):
    at = explore_upload
    before = len(_entries(at))
    real, probed = sweep_module.run_sweep, []

    def fails_after_the_second_probe(*args, **kwargs):
        frame = real(*args, **kwargs)  # the probe's releases ran on the upload
        probed.append(kwargs["epsilons"][0])
        if len(probed) == 2:
            raise failure("a later step of the plan failed")
        return frame

    monkeypatch.setattr(sweep_module, "run_sweep", fails_after_the_second_probe)
    at.button(key="explore_plan_run").click().run()
    if failure is DPCoreError:
        assert not at.exception and any("later step" in e.value for e in at.error)  # shown as an error
    else:
        assert at.exception  # a bug: a traceback, but the releases still ran
    new = _entries(at)[before:]
    # 67659ea: nothing counted (the count came after plan_epsilon returned)
    assert sorted(e.epsilon for e in new) == sorted([probed[0]] * TRIALS + [probed[1]] * TRIALS)
    assert all(not e.private and "ε planner (NOT private what-if)" in e.what for e in new)
    assert planner.RESULT_KEY not in at.session_state or at.session_state[planner.RESULT_KEY] is None

    monkeypatch.setattr(sweep_module, "run_sweep", real)
    at.button(key="explore_plan_run").click().run()  # the same plan in full: the two probes' releases again, the same
    assert not at.exception
    plan = at.session_state[planner.RESULT_KEY][1]
    new = _entries(at)[before:]
    assert sorted(e.epsilon for e in new) == sorted(p.epsilon for p in plan.probes for _ in range(p.trials))


def test_an_inspect_release_interrupted_as_its_spinner_ends_is_counted(monkeypatch):
    """A widget change while a release runs makes Streamlit raise its rerun (or stop) request at the next element
    call — the spinner's end, after the release was computed. On 67659ea the count came after the spinner: a release
    interrupted there was never counted (and with the settings changed, not on the next run either)."""
    import contextlib

    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException
    from test_app_odometer import _table

    real_spinner, interrupted = st.spinner, []

    @contextlib.contextmanager
    def interrupting_spinner(text="", *args, **kwargs):
        with real_spinner(text, *args, **kwargs):
            yield
        if str(text).startswith("Running ") and not interrupted:
            interrupted.append(text)
            raise StopException()  # the request handled where the spinner is cleared

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at, _table(seed=5, n=60))
    at.session_state["dp_insp_mech"] = "analyze_gauss"
    at.session_state["dp_insp_eps"] = 0.5
    at.session_state["dp_k"] = 1
    at.session_state["dp_delta"] = 1e-5
    monkeypatch.setattr(st, "spinner", interrupting_spinner)
    at.switch_page("pages/inspect.py").run()
    assert interrupted and not at.exception
    assert [(e.epsilon, e.delta) for e in _entries(at) if e.epsilon > 0] == [(0.5, 1e-5)]  # 67659ea: []
    at.session_state["dp_insp_eps"] = 1.0  # the settings the user changed: a new release, counted too
    at.run()
    assert not at.exception
    assert [e.epsilon for e in _entries(at) if e.epsilon > 0] == [0.5, 1.0]


def test_sweep_cells_collected_on_an_upload_are_counted_even_when_the_run_stops_right_after(monkeypatch):
    """A collected cell is in the session's cell cache, from where another sweep (another page's) reuses and shows it
    as counted before. On 67659ea Explore counted its cells at the end of the sweep panel: a rerun or stop request
    raised at an element call in between (e.g. a click on another page's link) left them uncounted when the panel
    was left — until Explore's panel ran to its end again."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    import pages.ui
    from dpcore.evaluation.sweep import PooledSweep
    from pages.ui import odometer as odo_ui

    real_collect, real_panel, stopped, left = PooledSweep.collect, pages.ui.run_or_reuse, [], []

    def collect_then_stop(self):
        if not stopped and self.job is not None:  # every cell at once: the assertions below do not hang on timing
            self.job.wait(120.0)
        got = real_collect(self)
        if got and not stopped:
            stopped.append(got)
            raise StopException()  # as if the next element call handled a stop request
        return got

    def panel(*args, **kwargs):
        try:
            return real_panel(*args, **kwargs)
        except StopException:  # what the odometer holds when the panel is left
            left.append(sorted((e.epsilon, e.delta) for e in odo_ui.odometer(odo_ui.counting_upload()).entries
                               if e.epsilon > 0))
            raise

    at = _small_upload_session()
    monkeypatch.setattr(PooledSweep, "collect", collect_then_stop)
    monkeypatch.setattr(pages.ui, "run_or_reuse", panel)
    at.switch_page("pages/explore.py").run()
    assert stopped and not at.exception
    assert left == [[(0.5, 1e-5)] * 2 + [(1.0, 1e-5)] * 2]  # 67659ea: [[]]
    at.run()  # the panel runs to its end: nothing new
    assert not at.exception
    assert sorted((e.epsilon, e.delta) for e in _entries(at) if e.epsilon > 0) == left[0]


def test_a_clipping_advisor_run_that_fails_after_some_releases_counts_them(monkeypatch):
    """The Data page's clipping advisor: on 67659ea its releases were counted from the finished curve only, so a run
    that raised after some releases (or was interrupted by a rerun at its progress bar) counted none."""
    import dpcore.evaluation.advisor as advisor

    real = advisor.clipping_utility_curve

    def fails_after_three_releases(*args, progress=None, **kwargs):
        def report(done, total, text):
            progress(done, total, text)
            if done == 3:
                raise DPCoreError("a later step failed")
        return real(*args, progress=report, **kwargs)

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.session_state["dp_delta"] = 1e-5
    at.switch_page("pages/data.py").run()
    at.session_state["dp_adv_trials"] = 2
    at.run()
    assert not at.exception
    monkeypatch.setattr(advisor, "clipping_utility_curve", fails_after_three_releases)
    at.button(key="data_adv_run").click().run()
    assert not at.exception and any("later step" in e.value for e in at.error)
    eps = float(at.session_state["dp_adv_eps"])
    # 67659ea: [] (nothing counted without a finished curve)
    assert [(e.epsilon, e.delta, e.private) for e in _entries(at)] == [(eps, 1e-5, False)] * 3
