"""Presentation mode (issue 20 item 7): one chart per row with larger text, from the sidebar, kept for the session."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import charts

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EXPLORE_CHARTS = ("explore_captured_variance_ratio", "explore_frobenius_error", "explore_principal_angle_max_deg",
                  "explore_svm_accuracy")


def _svm_figure():
    from test_charts_style import _band

    band = _band(["analyze_gauss", "laplace"], metric="svm_accuracy")
    band[["mean", "lo", "hi"]] = [[0.77, 0.75, 0.80]] * len(band)
    return charts.metric_figure(band, "svm_accuracy", title="SVM", x_title="ε", y_title="accuracy",
                                references={"pca": 0.81, "random": 0.756}, baselines={charts.MAJORITY_LABEL: 0.758})


def test_presentation_figure_has_larger_text_a_taller_plot_and_tags_apart():
    fig = _svm_figure()
    before = fig.to_dict()
    big = charts.presentation_figure(fig).to_dict()
    assert fig.to_dict() == before  # the shown figure is a copy: the cached one is unchanged
    layout = big["layout"]
    assert layout["legend"]["font"]["size"] >= 16 and layout["font"]["size"] >= 16
    assert layout["xaxis"]["tickfont"]["size"] >= 15 and layout["yaxis"]["tickfont"]["size"] >= 15
    assert layout["title"]["font"]["size"] >= 20
    tags = [a for a in layout["annotations"] if a.get("hovertext")]
    assert tags and all(a["font"]["size"] >= 16 for a in tags)
    assert layout["height"] >= charts.PRESENT_PLOT_HEIGHT + charts.chart_frame(1, charts.PRESENT_FONT)
    assert layout["margin"]["r"] >= charts.TAG_MARGIN * 16 / 12  # room for the larger tags
    lo, hi = layout["meta"]["tag_axis"]
    names = [t["name"] for t in big["data"] if t.get("showlegend", True) and t.get("name")]
    width = charts.FULL_WIDTH - layout["margin"]["l"] - layout["margin"]["r"]
    rows = charts.legend_rows(names, width=width, font=charts.PRESENT_FONT)
    plot_px = layout["height"] - charts.chart_frame(rows, charts.PRESENT_FONT) - charts.TAG_SLACK
    assert plot_px >= charts.PRESENT_PLOT_HEIGHT - charts.TAG_SLACK - 1
    centres = sorted((hi - a["y"]) * plot_px / (hi - lo) - a["yshift"] for a in tags)
    assert min(b - a for a, b in itertools.pairwise(centres)) >= charts.TAG_GAP * 16 - 0.1


def test_for_screen_leaves_the_figure_alone_outside_presentation_mode():
    fig = _svm_figure()
    assert charts.for_screen(fig) is fig  # no session: presentation mode is off


def _parents(node, chain=()) -> dict[str, tuple[str, ...]]:
    """Plotly chart key → the types of the blocks it sits in (AppTest's element tree)."""
    out = {}
    for child in getattr(node, "children", {}).values():
        if getattr(child, "type", "") == "plotly_chart":
            out[child.key] = chain
        out.update(_parents(child, (*chain, getattr(child, "type", type(child).__name__))))
    return out


def _legend_sizes(at: AppTest) -> dict[str, int]:
    return {el.key: json.loads(el.proto.spec)["layout"]["legend"]["font"]["size"] for el in at.get("plotly_chart")}


@pytest.mark.slow
def test_presentation_mode_from_the_sidebar_one_chart_per_row_kept_across_pages():
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"data": "wine", "trials": "2"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    toggle = at.sidebar.toggle(key=charts.PRESENTATION_KEY)
    assert toggle.value is False and toggle.label == "Presentation mode"
    side_by_side = _parents(at.main)
    assert all("column" in side_by_side[key] for key in EXPLORE_CHARTS)  # two per row
    assert set(_legend_sizes(at).values()) == {charts.LEGEND_FONT}

    toggle.set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    stacked = _parents(at.main)
    assert all("column" not in stacked[key] for key in EXPLORE_CHARTS)  # one per row, full width
    assert all(size >= charts.PRESENT_FONT for size in _legend_sizes(at).values())

    at.switch_page("pages/sample_size.py").run()  # kept for the session: on the next page too
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.toggle(key=charts.PRESENTATION_KEY).value is True
    if not at.get("plotly_chart"):
        at.button(key="ss_run").click().run()
    assert _legend_sizes(at).get("ss_chart", 0) >= charts.PRESENT_FONT
    at.switch_page("pages/explore.py").run()
    assert at.sidebar.toggle(key=charts.PRESENTATION_KEY).value is True
    assert all("column" not in chain for key, chain in _parents(at.main).items() if key in EXPLORE_CHARTS)


@pytest.mark.slow
def test_inspect_stacks_its_spectrum_and_noise_charts_in_presentation_mode():
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"data": "wine"})
    at.run()
    at.switch_page("pages/inspect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert {"insp_spectrum", "insp_noise"} <= set(_parents(at.main))
    assert all("column" in _parents(at.main)[key] for key in ("insp_spectrum", "insp_noise"))
    at.sidebar.toggle(key=charts.PRESENTATION_KEY).set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    chains = _parents(at.main)
    assert all("column" not in chains[key] for key in ("insp_spectrum", "insp_noise"))
    figures = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}
    assert figures["insp_spectrum"]["layout"]["font"]["size"] >= charts.PRESENT_FONT
