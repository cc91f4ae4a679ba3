"""Review (issue 35 item 3): the Data page's clipping advisor, a NOT-private what-if on an upload, counts what it
spends as it spends it, however the run ends.

* Under DP centring each DP mean it draws is a release of the upload: up to cdc079a they were counted from the
  finished curve only, so a run that failed, or that a rerun or stop request interrupted (Streamlit raises them at the
  next element call, e.g. the progress bar), after drawing some DP means counted none of them.
* A release stopped at the time cap is counted (when it stopped depends on the data and the page says that it did),
  as a capped sweep cell and a capped Inspect release are: up to cdc079a the advisor did not count it."""

from __future__ import annotations

from pathlib import Path

import pytest
from _slow_mechanisms import cap_the_third_release
from streamlit.testing.v1 import AppTest
from test_app_odometer import _table, _use_upload

import dpcore
import dpcore.evaluation.advisor as advisor
from dpcore.exceptions import DPCoreError
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BOOK = ui_state.slot_key("odometer")
MEAN = (True, 0.2, None, False)  # a DP mean drawn for centring at dp_centering_eps = 0.2, in a NOT-private what-if


def _data_page(**settings) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at, _table(seed=3, n=60))
    at.session_state["dp_delta"] = 1e-5
    for key, value in settings.items():
        at.session_state[key] = value
    at.switch_page("pages/data.py").run()
    at.session_state["dp_adv_trials"] = 2
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _entries(at) -> list:
    """(is a DP mean, ε, δ, private) of every counted entry (a DP mean's δ, the analytic Gaussian's own: None)."""
    return [("DP mean" in e.what, e.epsilon, None if "DP mean" in e.what else e.delta, e.private)
            for e in next(iter(at.session_state[BOOK].odometers.values())).entries]


def test_a_dp_centred_advisor_run_that_fails_after_three_releases_counts_its_dp_means(monkeypatch):
    at = _data_page(dp_centering="dp", dp_centering_eps=0.2)
    real = advisor.clipping_utility_curve

    def fails_after_three_releases(*args, progress=None, **kwargs):
        def report(done, total, text):
            progress(done, total, text)
            if done == 3:  # as a rerun request raised at the progress bar would
                raise DPCoreError("a later step failed")
        return real(*args, progress=report, **kwargs)

    monkeypatch.setattr(advisor, "clipping_utility_curve", fails_after_three_releases)
    at.button(key="data_adv_run").click().run()
    assert not at.exception and any("later step" in e.value for e in at.error)
    release = (False, float(at.session_state["dp_adv_eps"]), 1e-5, False)
    # cdc079a: the three releases only, no DP mean (they were counted from the finished curve)
    assert _entries(at) == [release] * 3 + [MEAN] * 3

    monkeypatch.setattr(advisor, "clipping_utility_curve", real)
    at.button(key="data_adv_run").click().run()  # the same run in full: the rest, not the first three again
    assert not at.exception, [e.value for e in at.exception]
    curve = ui_state.stored("adv_result", at.session_state)
    runs = int(curve.attrs["runs"])
    assert sorted(_entries(at)) == sorted([release] * runs + [MEAN] * runs)


def test_an_advisor_release_capped_at_the_time_limit_is_counted(monkeypatch):
    at = _data_page()
    mech = dpcore.get_mechanism(at.session_state["dp_adv_mech"])
    cap_the_third_release(monkeypatch, mech)
    at.button(key="data_adv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("time cap" in w.value for w in at.warning)  # what the page shows: the run stopped at the cap
    release = (False, float(at.session_state["dp_adv_eps"]), 1e-5, False)
    # cdc079a: the two finished releases only (the capped one was not counted; Inspect and the sweeps count it)
    assert _entries(at) == [release] * 3
    curve = ui_state.stored("adv_result", at.session_state)
    assert curve.attrs["runs"] == 2 and curve.attrs["capped"] == 1
    at.run()  # a rerun shows the stored curve: nothing new
    assert len(_entries(at)) == 3
