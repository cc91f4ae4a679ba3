"""Review: an Inspect release that stops at its time cap on an upload is counted (the page says it was capped, and
when it stopped depends on the data), once, like a capped sweep cell; built-in data still counts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from _slow_mechanisms import CappedMechanism
from streamlit.testing.v1 import AppTest
from test_app_odometer import _table, _use_upload

from dpcore.mechanisms import _INSTANCES, _REGISTRY
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BOOK = ui_state.slot_key("odometer")


def test_an_inspect_release_capped_on_an_upload_is_counted_once(monkeypatch):
    monkeypatch.setitem(_REGISTRY, CappedMechanism.id, CappedMechanism)
    monkeypatch.setitem(_INSTANCES, CappedMechanism.id, CappedMechanism())
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at, _table(seed=3, n=60))
    at.session_state["dp_insp_mech"] = CappedMechanism.id
    at.session_state["dp_insp_eps"] = 0.5
    at.session_state["dp_k"] = 1
    at.switch_page("pages/inspect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Timed out" in w.value for w in at.warning)  # what the page shows: the release was capped
    [odo] = at.session_state[BOOK].odometers.values()
    # fde6aff..e331d59: nothing was counted (count_release got no release object)
    assert [(e.epsilon, e.delta, e.rho) for e in odo.entries] == [(0.5, 0.0, 0.125)]
    assert odo.entries[0].what.endswith("capped at its time limit: test_capped")
    assert not odo.entries[0].private  # B read off the upload (not declared): the pipeline is not private
    at.run()  # a rerun shows the stored outcome: nothing new
    assert len(odo.entries) == 1


def test_the_clipping_advisor_with_dp_centring_counts_every_dp_mean_it_drew():
    """Under DP centring the advisor draws a DP mean at every candidate B and trial: each is a release of the upload
    (e331d59 counted only the mechanism's releases)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at, _table(seed=3, n=60))
    at.session_state["dp_delta"] = 1e-5
    at.session_state["dp_centering"] = "dp"
    at.session_state["dp_centering_eps"] = 0.2
    at.switch_page("pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.session_state["dp_adv_trials"] = 1
    at.run()
    at.button(key="data_adv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    curve = ui_state.stored("adv_result", at.session_state)
    [odo] = at.session_state[BOOK].odometers.values()
    runs = int(curve.attrs["runs"])
    means = [e for e in odo.entries if "DP mean" in e.what]
    assert runs > 0 and len(means) == runs  # one DP mean per release (none timed out here)
    assert {(e.epsilon, e.private) for e in means} == {(0.2, False)}
    assert len(odo.entries) == 2 * runs
