"""Review (privacy review item 9): an upload restored from a workspace whose schema declares the file format is read
with exactly that format, by ``dpcore run`` and by the Data page — never by detection. Before, both read it with the
data settings' "auto" choices (delimiter, decimal mark and encoding detected from the cells) while the restored
schema was public and every ledger step private: one record written with commas in a semicolon file made the
detection reader refuse the whole file, where its neighbour ran."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import yaml
from streamlit.testing.v1 import AppTest
from test_workspace_run import _public_schema  # the schema a user declares for these columns

from dpcore.core.privacy import ledger_is_private
from dpcore.evaluation import workspace as ws
from pages.ui import state as ui_state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SETTINGS = {"dp_k": 2, "dp_eps_range": [0.5, 2.0], "dp_delta": 1e-6, "dp_trials": 2, "dp_time_cap": 20.0,
            "dp_neighbouring": "replace", "dp_band": "±1 sd"}


def _rows(seed: int = 3, n: int = 80) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{rng.uniform(1, 9):.3f};{rng.normal(50, 5):.3f};{'ab'[i % 2]};{i % 3 == 0:d}" for i in range(n)]


def _file(rows: list[str]) -> bytes:
    return ("x;y;grp;outcome\n" + "\n".join(rows) + "\n").encode()


D = _file(_rows())
#: The neighbour: the last record replaced by one written with commas (another number of fields).
D2 = _file([*_rows()[:-1], "3.5,40.25,a,0"])


def _workspace() -> dict:
    settings = {**ws.DATA_DEFAULTS, **ws.UPLOAD_DEFAULTS, "dp_label": "outcome"}  # dp_csv_*: "auto"
    return {ws.FORMAT_KEY: 1, "settings": dict(SETTINGS), "mechanisms": {"approx": ["analyze_gauss"]},
            "datasets": {}, "uploads": [{"file": "visits.csv", "settings": settings, "schema": _public_schema(D)}],
            ws.VIEW: {"upload": "visits.csv"}}


def test_dpcore_run_reads_a_restored_upload_with_the_declared_format_on_neighbouring_files():
    view = ws.explore_view(ws.parse(ws.to_text(copy.deepcopy(_workspace()))), seed=1, data_name="visits.csv")
    prepared = [ws.prepare_view(view, data) for data in (D, D2)]  # before: D2 refused ("another number of fields")
    assert all(ledger_is_private(p.ledger) for p in prepared)
    X, X2 = (np.asarray(p.X) for p in prepared)
    assert X.shape == X2.shape
    np.testing.assert_array_equal(X[:-1], X2[:-1])  # the neighbours differ in the replaced record only
    info = ws._read_upload(view, D2).info
    assert info.declared and not info.file_format.from_data


def test_the_data_page_reads_a_restored_upload_with_the_declared_format():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="workspace_widget").set_value(
        ("w.yaml", ws.to_text(_workspace()).encode(), "application/x-yaml")).run()
    at.file_uploader(key="data_upload_widget").set_value(("visits.csv", D2, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("number of fields" in e.value for e in at.error), [e.value for e in at.error]
    key = ui_state.memo_key("upload_table", session=at.session_state)
    fmt = dict(key[1]).get("format")
    assert fmt is not None and not fmt.from_data and fmt.delimiter == ";"
    schema = ui_state.stored("schemas", at.session_state)[key][0]
    assert schema.is_public
    assert yaml.safe_load(ws.to_text(_workspace()))["uploads"][0]["schema"]["format"]["delimiter"] == ";"
