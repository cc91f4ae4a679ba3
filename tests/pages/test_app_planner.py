"""Explore's "What ε do I need?" expander (pages/ui/planner.py): plans on the shown data, free on a built-in dataset,
a labelled non-private what-if on an upload."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.data import load_dataset, preprocess
from dpcore.evaluation.planner import NON_PRIVATE_NOTE, PUBLIC_NOTE
from pages import ui
from pages.ui import planner
from pages.ui import state as ui_state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
LIVE = ui_state.slot_key("explore_result") + "_live"


def test_an_upload_is_planned_as_a_non_private_what_if_and_a_built_in_dataset_for_free():
    data = preprocess(load_dataset("wine"))
    upload = planner.plan_source(data, ui.UPLOAD_ID)
    assert upload.private_inputs is False and upload.note == NON_PRIVATE_NOTE
    builtin = planner.plan_source(data, "wine")
    assert builtin.private_inputs is True and builtin.note == PUBLIC_NOTE


@pytest.mark.slow
def test_explore_plans_epsilon_for_the_shown_mechanism():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"data": "wine", "mech": "laplace", "trials": "1", "k": "2", "eps": "1~2"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    live = at.session_state[LIVE]
    if live.sweep.job is not None:
        live.sweep.job.wait(170)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(e.label == "What ε do I need?" for e in at.expander)
    at.number_input(key="explore_plan_trials").set_value(20)
    at.button(key="explore_plan_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = [m for m in at.metric if m.label.startswith("ε needed")]
    assert metrics and float(metrics[0].value) > 0, [m.label for m in at.metric]
    assert any(PUBLIC_NOTE in c.value for c in at.caption)
    assert not any(NON_PRIVATE_NOTE in w.value for w in at.warning)
