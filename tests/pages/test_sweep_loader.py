"""Explore's sweep-CSV loader: a CSV written by `dpcore sweep` gives the same charts, bands and tables; a CSV that is
not a sweep gets a clear error (validation and AppTest)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.cli import main
from pages.ui.sweep_loader import KEY, SweepCsvError, load_sweep_csv

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


@pytest.fixture(scope="module")
def sweep_csv(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("loader") / "sweep.csv"
    assert main(["sweep", "--dataset", "wine", "--mechanisms", "analyze_gauss,laplace,pca", "--epsilons", "0.5,2",
                 "--trials", "2", "--quiet", "--jobs", "1", "--out", str(out)]) == 0
    return out.read_bytes()


def test_a_sweep_csv_loads_with_its_types(sweep_csv):
    frame = load_sweep_csv(sweep_csv)
    assert len(frame) == 12 and set(frame["mechanism"]) == {"analyze_gauss", "laplace", "pca"}
    assert frame["epsilon"].dtype == float and (frame["status"] == "ok").all()


@pytest.mark.parametrize(("raw", "match"), [
    (b"a,b,c\n1,2,3\n", "not a sweep CSV: the column"),
    (b"\x00\x01\x02 not text", "not a sweep CSV|could not be read"),
    (b"", "could not be read"),
])
def test_a_file_that_is_not_a_sweep_is_refused_with_a_clear_error(raw, match):
    with pytest.raises(SweepCsvError, match=match):
        load_sweep_csv(raw)


def test_a_damaged_sweep_is_refused_naming_the_column(sweep_csv):
    text = sweep_csv.decode()
    header, first, *rest = text.splitlines()
    cols = header.split(",")
    cells = first.split(",")
    cells[cols.index("epsilon")] = "lots"
    with pytest.raises(SweepCsvError, match="'epsilon' must hold numbers; line 2"):
        load_sweep_csv("\n".join([header, ",".join(cells), *rest]).encode())
    cells[cols.index("epsilon")] = "1.0"
    cells[cols.index("status")] = "great"
    with pytest.raises(SweepCsvError, match="status"):
        load_sweep_csv("\n".join([header, ",".join(cells), *rest]).encode())
    with pytest.raises(SweepCsvError, match="no rows"):
        load_sweep_csv(header.encode() + b"\n")


def _charts(at: AppTest) -> dict[str, dict]:
    return {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


@pytest.mark.slow
def test_explore_draws_a_loaded_sweep_and_explains_a_wrong_file(sweep_csv):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.file_uploader(key=KEY).set_value(("sweep.csv", sweep_csv, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    charts = _charts(at)
    for metric in ("captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy"):
        assert f"explore_csv_{metric}" in charts, sorted(charts)
    names = {t.get("name") for t in charts["explore_csv_captured_variance_ratio"]["data"]}
    assert any("Analyze" in str(n) for n in names), names
    assert any("Showing **sweep.csv**" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert len(table) == 6 and np.isfinite(table["captured_variance_ratio"]).all()
    at.radio(key="explore_sweep_csv_band").set_value("min–max").run()
    assert not at.exception
    at.file_uploader(key=KEY).set_value(("notes.csv", b"name,score\nada,3\n", "text/csv")).run()
    assert not at.exception
    assert any("not a sweep CSV" in e.value for e in at.error)
    assert not any(k.startswith("explore_csv_") for k in _charts(at))
