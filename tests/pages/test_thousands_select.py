"""The Data page's "Thousands separator" select (privacy review R4-7): the separator is never detected from the
cells, only picked, and the "read as …" line shows it."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.mark.slow
def test_thousands_separator_is_picked_not_detected_and_shown() -> None:
    rows = "\n".join(f"{1 + i}.{(37 * i) % 1000:03d},{i % 10};{'a' if i % 2 else 'b'}" for i in range(40))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/data.py").run()
    at.session_state["dp_upload"] = ("x;g\n" + rows + "\n").encode()
    at.session_state["dp_upload_name"] = "grouped.csv"
    ui_state.set_stored("label_guess", None, at.session_state)
    at.run()
    at.selectbox(key="dp_dataset").set_value(ui_state.UPLOAD_ID).run()
    assert not at.exception, [e.value for e in at.exception]
    read_as = [md.value for md in at.markdown if "read as" in md.value]
    assert read_as and "thousands" not in read_as[0]  # nothing guessed from the cells
    assert _role(at, "x") != "numeric"  # "1.037,1" is not a number without a thousands separator
    at.selectbox(key="dp_csv_thousands").set_value(".").run()
    assert not at.exception, [e.value for e in at.exception]
    read_as = [md.value for md in at.markdown if "read as" in md.value]
    assert read_as and "thousands '.'" in read_as[0]  # the picked separator is shown (and confirmed only so)
    assert _role(at, "x") == "numeric"


def _role(at: AppTest, column: str) -> str:
    grid = at.data_editor[0].value
    return str(grid.set_index("column").loc[column, "role"])
