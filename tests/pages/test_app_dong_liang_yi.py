"""Inspect runs AdaptiveCov and SeparateCov on the loose-bounds preset (issue 34 item 1): no exception, the ledger
shows ρ and the conversion, and the chosen radius is shown (a private output)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.mark.parametrize("mid", ["adaptive_cov", "separate_cov", "adaptive_lap_cov"])
def test_inspect_runs_the_dong_liang_yi_mechanisms_on_the_loose_bounds_preset(mid):
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["data"] = "wine_loose"
    at.run()
    at.switch_page("pages/inspect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="dp_insp_mech").set_value(mid).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dp_dataset"] == "wine_loose"
    release = ui_state.stored("insp_release", at.session_state)["release"]
    assert release is not None and release.mechanism == mid and not release.is_bottom
    if mid != "adaptive_lap_cov":
        assert "ρ-zCDP ⇒ (ε, δ)-DP" in release.ledger[-1].step and "ρ = " in release.ledger[-1].note
    page_text = " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.dataframe] if hasattr(e, "value"))
    assert "ρ" in page_text or mid == "adaptive_lap_cov"


def test_explore_on_the_loose_bounds_preset_draws_adaptive_cov_beside_analyze_gauss():
    import json

    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["data"] = "wine_loose"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dp_dataset"] == "wine_loose"
    at.multiselect(key="dp_mech_approx").set_value(["analyze_gauss", "adaptive_cov"]).run()
    assert not at.exception, [e.value for e in at.exception]
    fig = next(json.loads(el.proto.spec) for el in at.get("plotly_chart")
               if el.key == "explore_captured_variance_ratio")
    names = [t.get("name", "") for t in fig["data"]]
    assert any(n.startswith("AdaptiveCov") for n in names) and any(n.startswith("Analyze Gauss") for n in names)
