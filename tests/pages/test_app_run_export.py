"""Explore's results CSV equals ``dpcore run`` of the session's workspace, byte for byte (issue 35 item 2): on a
built-in dataset and on an upload with a saved public schema; Explore offers the workspace, a script and a notebook
per chart, and the page's charts are the ones ``dpcore run`` draws.

The browser version (a real download of both files) is tests/e2e/test_e2e_run_export.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from dpcore.cli import main
from dpcore.evaluation import workspace as ws
from pages.ui import state as ui_state
from pages.ui import workspace as page_workspace

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 120
sys_path = str(Path(__file__).resolve().parents[1] / "evaluation")


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> dict:
    """{file name: callable} of the download buttons whose payload is built on the click."""
    seen: dict = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        seen[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _explore_settings(at: AppTest) -> None:
    at.session_state["dp_k"] = 2
    at.session_state["dp_trials"] = 2
    at.session_state["dp_eps_range"] = (0.5, 2.0)
    at.session_state[ui_state.mech_key("pure")] = ["laplace"]
    at.session_state[ui_state.mech_key("approx")] = ["analyze_gauss"]


def _sweep(at: AppTest) -> None:
    at.run()
    at.button(key="explore_run").click().run()
    _no_exception(at)


def _cli_csv(tmp_path: Path, at: AppTest, *args: str) -> bytes:
    text = page_workspace.to_text(page_workspace.build(at.session_state))
    path = tmp_path / "dpcore-workspace.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-figures", "--quiet", *args]) == 0
    (csv,) = (tmp_path / "out").glob("sweep_*.csv")
    return csv.read_bytes()


def _page_csv(deferred: dict, name: str) -> bytes:
    return deferred[name]().encode("utf-8")  # the "Sweep results (CSV)" button's payload, as a click builds it


@pytest.mark.slow
def test_explore_csv_equals_dpcore_run_on_a_builtin_dataset(tmp_path, deferred):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.session_state["dp_seed"] = 11
    _explore_settings(at)
    _sweep(at)
    page = _page_csv(deferred, "sweep_wine.csv")
    assert page == _cli_csv(tmp_path, at)
    assert len(page.decode().splitlines()) == 1 + 2 * 3 * 2
    # the workspace, a script and a notebook per chart are offered next to the chart downloads
    keys = {b.key for b in at.get("download_button")}
    assert {"explore_dl_workspace", "explore_dl_captured_variance_ratio_py",
            "explore_dl_svm_accuracy_ipynb"} <= keys, keys
    script = deferred["explore_wine_captured_variance.py"]()
    assert "SEED = 11" in script and "'captured_variance_ratio'" in script
    notebook = json.loads(deferred["explore_wine_captured_variance.ipynb"]())
    assert notebook["nbformat"] == 4 and any(c["cell_type"] == "code" for c in notebook["cells"])
    # the page's charts are the ones dpcore run draws (same data, same arguments)
    view = ws.explore_view(ws.parse(page_workspace.download_bytes(at.session_state)))
    drawn = ws.explore_figures(ws.run_view(view))
    shown = {json.loads(el.proto.spec)["layout"]["title"]["text"]: json.loads(el.proto.spec)
             for el in at.get("plotly_chart")}
    assert len(drawn) == len(shown) == 4
    for fig, _caption, title in drawn.values():
        assert json.loads(fig.to_json())["data"] == shown[title]["data"], title


@pytest.mark.slow
def test_explore_csv_equals_dpcore_run_on_an_upload_with_its_saved_schema(tmp_path, deferred):
    import sys

    sys.path.insert(0, sys_path)
    from test_workspace_run import _public_schema, _visits

    data = _visits()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload_widget").set_value(("visits.csv", data, "text/csv")).run()
    _no_exception(at)
    schema = yaml.safe_dump(_public_schema(data)).encode()
    at.file_uploader(key="schema_upload_widget").set_value(("visits.yaml", schema, "application/x-yaml")).run()
    _no_exception(at)
    at.switch_page("pages/explore.py")
    _explore_settings(at)
    _sweep(at)
    assert at.session_state["dp_dataset"] == ui_state.UPLOAD_ID
    seed = int(at.session_state["dp_seed"])
    page = _page_csv(deferred, "sweep_visits.csv")
    text = page_workspace.to_text(page_workspace.build(at.session_state))
    assert "seed" not in yaml.safe_load(text)[ws.VIEW]  # an upload's seed is never in a workspace
    (tmp_path / "visits.csv").write_bytes(data)
    assert page == _cli_csv(tmp_path, at, "--data", str(tmp_path / "visits.csv"), "--seed", str(seed))
    assert b"False" not in page  # the saved schema is public: every release is end-to-end private
    # no file carries the upload's seeds: the CSV's seed column is empty, the run configuration's seed is null
    import io

    import pandas as pd

    assert pd.read_csv(io.BytesIO(page))["seed"].isna().all()
    config = yaml.safe_load(deferred["sweep_visits.yaml"]())
    assert config["sweep"]["seed"] is None and str(seed) not in deferred["sweep_visits.yaml"]()
    script = deferred["explore_visits_captured_variance.py"]()
    assert "SEED = None" in script and f"SEED = {seed}" not in script and "visits.csv" in script
    for line in data.decode().splitlines()[1:]:
        for cell in line.split(",")[:2]:
            assert cell not in script and cell not in text  # no value of the upload
    other = tmp_path / "other"
    other.mkdir()
    assert page != _cli_csv(other, at, "--data", str(tmp_path / "visits.csv"), "--seed", str(seed + 1))
