"""Explore's what-if panel (AppTest): results are kept with what they were computed on and discarded when the file,
the schema or a setting changes (issue 19: upload A, run both pipelines, upload B, return → A's numbers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.vocabulary import CategoricalPolicy

pytestmark = pytest.mark.slow  # AppTest: every test runs the app

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _visits(seed: int, scale: float) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [f"{rng.uniform(1, 9) * scale:.2f},{rng.normal(50, 5) * scale:.1f},{'ab'[i % 2]}" for i in range(60)]
    return ("x,y,grp\n" + "\n".join(rows) + "\n").encode()


def _use_upload(at, data: bytes, name: str) -> None:
    """What the uploader's callback leaves in the session (written directly, as a browser upload would)."""
    at.session_state["dp_upload"] = data
    at.session_state["dp_upload_name"] = name
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_missing"] = "zero"


def _cost_table(at):
    return next((df.value for df in at.dataframe if "cost of public bounds" in df.value), None)


def _run_panel(at):
    at.button(key="whatif_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = _cost_table(at)
    assert table is not None and "whatif_chart" in [el.key for el in at.get("plotly_chart")]
    return table


@pytest.fixture
def explore_on_a():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    _use_upload(at, _visits(1, 1.0), "a.csv")
    at.session_state["dp_k"] = 1  # below d: the captured variance tells the files apart
    at.switch_page("pages/explore.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_what_if_results_are_discarded_when_the_file_changes(explore_on_a):
    at = explore_on_a
    first = _run_panel(at)
    at.run()
    assert _cost_table(at) is not None  # the same file and settings: the result stays
    _use_upload(at, _visits(2, 3.0), "a.csv")  # another file (under the same name)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _cost_table(at) is None, "the previous file's what-if is shown under the new file"
    assert "whatif_chart" not in [el.key for el in at.get("plotly_chart")]
    second = _run_panel(at)
    # the panel says how the two curves are scored (each against its own pipeline's PCA)
    assert any("on its own pipeline's data" in c.value for c in at.caption)
    assert not np.allclose(first["bounds from data (not private)"].to_numpy(dtype=float),
                           second["bounds from data (not private)"].to_numpy(dtype=float), equal_nan=True)


def test_what_if_results_are_discarded_when_the_schema_changes(explore_on_a):
    at = explore_on_a
    _run_panel(at)
    at.session_state["dp_label"] = "grp"  # the schema follows the label picker: another schema
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _cost_table(at) is None, "the previous schema's what-if is shown"
    _run_panel(at)
    other = CategoricalPolicy.DROP if at.session_state["dp_categorical"] != CategoricalPolicy.DROP \
        else CategoricalPolicy.ONEHOT
    at.session_state["dp_categorical"] = other.value
    at.run()
    assert _cost_table(at) is None, "a what-if computed under other settings is shown"
