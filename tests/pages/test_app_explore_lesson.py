"""Explore for a class and an analyst (issue #33 item 7, issue #32 item 8): a shared link runs by itself when "Run
automatically" is on (on 563c1b2 a link with PPCA opened on "Press Run sweep"), the stored Adult chart never sits
beside another dataset's curves or the session's own, and the page says when a run IS end-to-end private — from
the public settings (the ledger and the guarantees), not from a diagnostic of the data."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest runs of the whole app with sweeps

APP = str(Path(__file__).resolve().parents[2] / "app.py")
LIVE = ui_state.slot_key("explore_result") + "_live"


def _open(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _finish(at: AppTest) -> None:
    live = at.session_state[LIVE]
    if live.sweep.job is not None:
        live.sweep.job.wait(170)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_a_shared_link_with_a_slow_mechanism_runs_by_itself_and_says_it_is_end_to_end_private():
    at = _open({"data": "wine", "mech": "ppca,laplace", "trials": "1", "k": "2", "eps": "1~2"})
    assert not any("Press **Run sweep**" in i.value for i in at.info), [i.value for i in at.info]
    assert LIVE in at.session_state  # the link's sweep started without a click
    _finish(at)
    success = [s.value for s in at.success if "End-to-end private run" in s.value]
    assert success and "PPCA: heuristic ε-DP" in success[0], [s.value for s in at.success]
    assert not at.get("image")  # Wine: the stored Adult chart is not shown beside Wine's curves


def test_after_the_first_view_a_slow_change_waits_and_says_why():
    at = _open({"data": "wine", "mech": "laplace", "trials": "1", "k": "2", "eps": "1~2"})
    _finish(at)
    at.multiselect(key=ui_state.mech_key("heuristic-mcmc")).set_value(["ppca"]).run()
    hints = [i.value for i in at.info if "Run automatically" in i.value]
    assert not hints or "PPCA" in hints[0]  # the shown run stays (stale note) or the hint names the waiting one


def test_a_non_private_preprocessing_is_named_not_end_to_end_private():
    at = _open({"data": "wine", "mech": "laplace", "trials": "1", "k": "2", "eps": "1~2", "scale": "minmax"})
    _finish(at)
    assert not any("End-to-end private run" in s.value for s in at.success)
    errors = [e.value for e in at.error if "Not end-to-end private" in e.value]
    assert errors and "of" in errors[0]


def test_presentation_mode_shows_a_results_table_that_fits_the_screen():
    """The results table ran off the right edge at 1280 px: in presentation mode, the columns a class reads under
    short names."""
    at = _open({"data": "wine", "mech": "laplace", "trials": "1", "k": "2", "eps": "1~2"})
    _finish(at)
    at.sidebar.toggle(key="dp_presentation").set_value(True).run()
    table = at.dataframe[0].value
    assert list(table.columns) == ["name", "epsilon", "captured_variance_ratio", "frobenius_error",
                                   "principal_angle_max_deg", "svm_accuracy", "status"]
    assert set(table["name"]) == {"Laplace"}  # the short name (was "Laplace input perturbation")
