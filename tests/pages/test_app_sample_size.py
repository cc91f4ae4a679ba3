"""Sample size at its defaults shows the lesson the page exists for (issue #33 item 4): on 563c1b2 the page opened on
"Press Run sweep to compute the curves.", and once run, every mechanism said "no guide here, because … n ≥ 3,886,320"
(Explore's k = 5 on Adult needs more rows than Adult has); at k = 2 the one guide drawn was a thin dotted line lying on
its curve, invisible. Now the page has its own k (1), runs its default by itself and streams, and draws each scaling
guide as a wide translucent stroke."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import charts
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # the page's default sweep on Adult: 200 releases

APP = str(Path(__file__).resolve().parents[2] / "app.py")
LIVE = ui_state.slot_key("ss_result_live")


def test_sample_size_defaults_run_by_themselves_and_draw_visible_guides():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page("pages/sample_size.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Press **Run sweep**" in i.value for i in at.info)  # it runs by itself
    live = at.session_state[LIVE]
    end = time.monotonic() + 240
    while not (live.sweep.job is None or live.sweep.job.finished):
        assert time.monotonic() < end, f"the default sample-size sweep did not finish: {live.sweep.job.done} done"
        time.sleep(0.5)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    fig = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}["ss_chart"]
    guides = [t for t in fig["data"] if (t.get("name") or "").startswith("scaling guide:")]
    assert any("Analyze Gauss" in g["name"] for g in guides), [t.get("name") for t in fig["data"]]
    for guide in guides:  # visible even where it lies on its curve
        assert guide["line"]["width"] >= charts.GUIDE_WIDTH and guide.get("opacity", 1) < 1
        assert guide["line"].get("dash") in (None, "solid")
    frame = ui_state.stored("ss_result", at.session_state).frame
    assert set(frame["k"]) == {1} and set(frame["status"]) == {"ok"}
