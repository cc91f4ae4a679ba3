"""Review (privacy review item 12): the seed an upload's releases used never reaches a file or a link made on built-in
data after it. Before, switching from an upload back to a built-in dataset kept the upload's seed as the session's
seed, so the workspace's ``explore`` section (``{dataset: wine, seed: S}``), the chart script's ``SEED`` and the link
(``seed=S``) carried it — and a Wine cell under add/remove has the upload cell's seed (n enters as 0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from _session_stub import SessionStub
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state
from pages.ui import workspace

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _visits() -> bytes:
    rng = np.random.default_rng(3)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.normal(50, 5):.3f},{'ab'[i % 2]}" for i in range(60)]
    return ("x,y,grp\n" + "\n".join(rows) + "\n").encode()


def test_leaving_an_upload_for_builtin_data_leaves_its_seed_out_of_the_workspace_and_the_link():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload_widget").set_value(("visits.csv", _visits(), "text/csv")).run()
    drawn = at.session_state["dp_seed"]
    assert drawn != ui_state.DEFAULTS["dp_seed"]
    at.selectbox(key="dp_dataset").set_value("wine").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dp_seed"] != drawn
    saved = yaml.safe_load(workspace.to_text(workspace.build(at.session_state)))
    assert saved["explore"].get("seed") != drawn  # before: {'dataset': 'wine', 'seed': <the upload's seed>}
    assert str(drawn) not in workspace.to_text(workspace.build(at.session_state))
    link = {k: at.query_params[k] for k in at.query_params}
    assert str(drawn) not in str(link)
    at.selectbox(key="dp_dataset").set_value(ui_state.UPLOAD_ID).run()
    assert at.session_state["dp_seed"] == drawn  # back on the file: its own seed (its results stay valid)


@pytest.fixture
def session(monkeypatch):
    import streamlit as st

    ss = SessionStub(ui_state.DEFAULTS)
    monkeypatch.setattr(st, "session_state", ss)
    ui_state.track_origins("Home")
    return ss


def test_a_seed_the_user_set_on_the_upload_stays_with_it_too(session):
    from pages.ui import datasets

    datasets.store_upload(b"a,b\n1,2\n3,4\n", "v1.csv")
    session["dp_seed"] = 99
    ui_state.track_origins("Explore")
    builtin = ui_state.DEFAULTS["dp_dataset"]
    ui_state.select_dataset(builtin)
    assert session["dp_seed"] == ui_state.DEFAULTS["dp_seed"]  # built-in data: the public default, not 99
    ui_state.select_dataset(ui_state.UPLOAD_ID)
    assert session["dp_seed"] == 99
