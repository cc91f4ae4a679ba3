"""The Papers page's CoinPress tab: the stored reproduction drawn (two readable Plotly figures with the paper's
numbers and ours), the verdict in the tab and in the summary, and a clear note instead of a traceback when the
stored results are missing. The page computes nothing (it reads benchmarks/results/coinpress_tables.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.evaluation import coinpress_repro as repro
from pages.ui import charts, coinpress_panel

APP = str(Path(__file__).resolve().parents[2] / "app.py")
pytestmark = pytest.mark.skipif(not repro.RESULTS_PATH.is_file(), reason="no stored CoinPress reproduction")


def _papers() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/papers.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_coinpress_tab_draws_both_tables_with_paper_and_ours():
    at = _papers()
    assert coinpress_panel.TAB_LABEL in [t.label for t in at.tabs]
    figures = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}
    for table in ("n", "rho"):
        spec = figures[f"papers_coinpress_fig_{table}"]
        names = [trace["name"] for trace in spec["data"]]
        assert {"paper, t = 1", "t = 1", "dpcore release, t = 2", "dpcore release", "× the paper"} <= set(names)
        shown = [trace["name"] for trace in spec["data"] if trace.get("showlegend", True)]
        assert len(shown) <= 8, shown  # one entry per t (its × and line together): no legend scrolled at 460 px
        assert spec["layout"]["font"]["size"] >= charts.STORED_FONT - 1 and "width" not in spec["layout"]
    names = (t["name"] for t in figures["papers_coinpress_fig_rho"]["data"])
    ts_rho = {n.split("t = ")[1] for n in names if "t = " in n}
    assert ts_rho == {"1", "2", "3", "4"}  # the repository stores no t = 5 for the ρ table
    text = " ".join(md.value for md in at.markdown)
    assert "CoinPress (Biswas et al. 2020), synthetic tables" in text  # the summary row
    assert "cells within 4 se" in text


def test_missing_results_say_how_to_make_them(monkeypatch, tmp_path):
    monkeypatch.setattr(repro, "RESULTS_PATH", tmp_path / "absent.json")
    at = _papers()
    assert any("benchmarks/coinpress_tables.py" in el.value for el in at.info)
