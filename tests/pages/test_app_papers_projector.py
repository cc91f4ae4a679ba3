"""Papers on a projector (issue #33 item 3): on 563c1b2 the stored figures were PNGs 1,000–1,400 px wide with 13 px
text, shown ≈ 850 px wide (text ≈ 8–9 px), the tab bar showed 4½ of its 7 long labels at 1280 px, and presentation
mode did not apply. Now each stored figure is drawn by Plotly from its stored HTML at the page's width with text of
at least 14 px (16 px in presentation mode), the tab labels are short, and the page has the presentation switch."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dpcore.evaluation import reproduce
from pages.ui import charts

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _fonts(spec: dict) -> list[float]:
    layout = spec["layout"]
    sizes = [layout["font"]["size"], layout["legend"]["font"]["size"]]
    sizes += [ax["tickfont"]["size"] for key, ax in layout.items() if key.startswith(("xaxis", "yaxis"))]
    sizes += [note["font"]["size"] for note in layout.get("annotations", [])]
    return sizes


def test_papers_figures_are_readable_and_every_tab_label_is_short():
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/papers.py").run()  # straight to Papers (no Explore sweep first)
    assert not at.exception, [e.value for e in at.exception]
    figures = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}
    stored = [k for k in figures if k.startswith("papers_fig_")]
    assert len(stored) == sum(reproduce.result_files(e.name)["html"].is_file() for e in reproduce.EXPERIMENTS) > 0
    for key in stored:
        assert min(_fonts(figures[key])) >= charts.STORED_FONT - 1, key
        assert "width" not in figures[key]["layout"]  # follows the page
    labels = [t.label for t in at.tabs]
    assert len(labels) == len(reproduce.EXPERIMENTS) + 1 and max(len(label) for label in labels) <= 18, labels
    toggle = at.sidebar.toggle(key=charts.PRESENTATION_KEY)
    toggle.set_value(True).run()
    figures = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}
    for key in stored:
        assert min(_fonts(figures[key])) >= charts.PRESENT_FONT - 1, key
