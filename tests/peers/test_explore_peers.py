"""Explore's "Include peers" (issue 36): OpenDP's and diffprivlib's rows beside ours, labelled with their law verdict.

Needs the peers' Python (``make peers``); skips with the reason without it (fails under DPCORE_PEERS_REQUIRED=1).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state
from pages.ui.peers import PEER_GUARANTEE, TOGGLE_KEY

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LIVE = ui_state.slot_key("explore_result_live")


@pytest.mark.timeout(600)
def test_explore_shows_both_peers_with_their_law_verdict_and_timing(monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager
    from test_peers import _peers_python

    deferred: dict = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        deferred[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)

    _peers_python()
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"data": "wine", "trials": "1", "k": "2", "eps": "0.5~1", "mech": "itu", "cap": "120"})
    at.run()
    at.switch_page("pages/explore.py").run()
    at.toggle(key="dp_autorun").set_value(False).run()
    at.toggle(key=TOGGLE_KEY).set_value(True).run()
    at.button(key="explore_run").click().run()
    try:
        end = time.monotonic() + 300
        while not at.session_state[LIVE].sweep.job.finished:
            assert time.monotonic() < end, "the peers' sweep did not finish"
            time.sleep(1)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        text = " ".join(m.value for m in at.markdown) + " ".join(e.value for e in at.error)
        for name in ("OpenDP PCA", "diffprivlib PCA"):
            assert name in text
        assert PEER_GUARANTEE in text and "fits finished" in text
        assert "different law than its privacy proof assumes" in text and "z ≈ +" in text
        table = at.dataframe[0].value
        assert {"OpenDP PCA", "diffprivlib PCA"} <= set(table["name"])
        assert set(table.loc[table["name"].str.contains("PCA") & ~table["name"].str.startswith("IT"),
                             "guarantee"]) == {PEER_GUARANTEE}
        # the sweep results CSV is ours alone (what `dpcore run` reproduces); the peers' rows have a file of their own
        ours = deferred["sweep_wine.csv"]()
        theirs = deferred["sweep_peers_wine.csv"]()
        assert "peer:" not in ours and "itu" in ours
        assert "peer:opendp" in theirs and "peer:diffprivlib" in theirs and ",itu," not in theirs
    finally:
        if LIVE in at.session_state:
            at.session_state[LIVE].sweep.cancel()
