"""AppTest of the upload → schema editor → private pipeline flow, and the editor's table logic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.data import SchemaError, draft_schema, infer_roles, read_table
from dpcore.vocabulary import ColumnRole
from pages.ui import schema_editor as editor
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest-heavy: every test runs the app

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _upload() -> bytes:
    """A European spreadsheet export: semicolons, decimal commas, an ID column and a date column."""
    rng = np.random.default_rng(3)
    rows = [f"P{100 + i};2024-01-{1 + i % 28:02d};{rng.uniform(1, 9):.2f};{rng.normal(50, 5):.1f};{'ab'[i % 2]}"
            .replace(".", ",") for i in range(60)]
    return ("person;visit;x;y;grp\n" + "\n".join(rows) + "\n").encode("utf-8")


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    no_exception(app)
    # what the uploader's callback (pages.ui.store_upload) does
    app.session_state["dp_upload"] = _upload()
    app.session_state["dp_upload_name"] = "visits.csv"
    app.session_state["dp_dataset"] = "__upload__"
    app.session_state["dp_scaling"] = "schema"
    app.session_state["dp_missing"] = "zero"
    ui_state.set_stored("upload_note", True, app.session_state)
    app.switch_page("pages/data.py").run()
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    return app


def _edit(at: AppTest, rows: dict) -> None:
    """Apply cell edits {row: {column: value}} to the schema editor, as the browser would, and rerun."""
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    at.button(key="schema_grid_save").click().run()  # the grid's edits are saved together (a form)
    no_exception(at)


def _confirm_structure(at: AppTest) -> None:
    """Declare the detected file format, the inferred roles and the guessed label (they are read off the data)."""
    at.button(key="schema_confirm_structure").click().run()
    no_exception(at)


def _table(at: AppTest) -> pd.DataFrame:
    return at.data_editor[0].value.set_index("column")


def _red(at: AppTest) -> bool:
    return any(":red[" in md.value for md in at.markdown)


def test_upload_shows_roles_and_a_red_draft(at):
    assert any("CSV, UTF-8, semicolon-separated, decimal comma" in md.value for md in at.markdown)
    table = _table(at)
    assert list(table.index) == ["person", "visit", "x", "y", "grp"]
    assert table.loc["person", "role"] == "identifier" and table.loc["visit", "role"] == "date"
    assert table.loc["x", "status"] == "from data: role, lower, upper"  # the role is inferred too (R4-6)
    assert table.loc["grp", "categories"] == "a,b"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Features d"] == "4" and metrics["Rows n"] == "60"  # x, y and two indicators of grp
    assert _red(at) and not at.success
    assert any("without a public schema" in i.value for i in at.info)
    assert ui_state.stored("prepared", at.session_state).is_private is False


def test_edit_bounds_turns_the_ledger_green_and_explore_runs_privately(at):
    _confirm_structure(at)
    _edit(at, {2: {"lower": 0.0, "upper": 10.0}})  # x: public bounds typed in
    table = _table(at)
    assert table.loc["x", "status"] == "public" and (table.loc["x", "lower"], table.loc["x", "upper"]) == (0, 10)
    assert table.loc["y", "status"].startswith(editor.FROM_DATA) and _red(at)
    _edit(at, {4: {"categories": "a, b"}})  # grp: the category list confirmed by typing it
    _edit(at, {3: {"lower": 20.0, "upper": 80.0}})  # y: the last bound edited → everything public
    assert not _red(at), [md.value for md in at.markdown if ":red[" in md.value]
    assert any("end-to-end private" in s.value for s in at.success)
    prepared = ui_state.stored("prepared", at.session_state)
    assert prepared.is_private and prepared.d == 4
    assert prepared.ledger[0].step == "public schema: declared bounds and category lists"
    # the Explore page runs on the same, private pipeline
    at.switch_page("pages/explore.py").run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert not any("non-private step" in w.value for w in at.warning)
    assert at.get("plotly_chart")
    assert ui_state.stored("prepared", at.session_state).is_private


def test_tick_public_and_change_a_role(at):
    _edit(at, {2: {"public": True}, 3: {"public": True}, 4: {"public": True}})
    assert _red(at)  # the format, the other roles and the label are still read off the data
    _confirm_structure(at)
    assert not _red(at) and any("end-to-end private" in s.value for s in at.success)
    _edit(at, {3: {"role": "excluded"}})
    assert {m.label: m.value for m in at.metric}["Features d"] == "3"
    assert _table(at).loc["y", "status"] == editor.EXCLUDED
    _edit(at, {1: {"role": "categorical"}})  # the date as categories: drafted from the data, so red again
    assert _table(at).loc["visit", "status"] == "from data: categories" and _red(at)


def test_invalid_edit_names_column_and_field(at):
    version = ui_state.stored("schema_version", at.session_state)
    _edit(at, {2: {"lower": 50.0}})  # above the data-derived upper bound
    assert any("schema column 'x', field 'upper'" in e.value for e in at.error)
    assert ui_state.stored("schema_version", at.session_state) == version  # schema unchanged


def test_label_and_format_override(at):
    at.selectbox(key="dp_label").set_value("grp").run()
    no_exception(at)
    assert "grp" not in list(_table(at).index)
    assert {m.label: m.value for m in at.metric}["Labels"] == "2 classes"
    at.selectbox(key="dp_csv_delimiter").set_value(",").run()  # a wrong override: a clear error, no traceback
    no_exception(at)
    assert at.error and "comma-separated" in at.error[0].value


def test_minmax_uses_the_roles_and_is_red(at):
    _edit(at, {2: {"public": True}, 3: {"public": True}, 4: {"public": True}})
    at.radio(key="dp_scaling").set_value("minmax").run()
    no_exception(at)
    assert _red(at) and not at.success
    assert {m.label: m.value for m in at.metric}["Features d"] == "4"


def test_wide_upload_warns_instead_of_refusing():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    X = np.random.default_rng(0).normal(size=(30, 1200)).round(2)
    at.session_state["dp_upload"] = pd.DataFrame(X, columns=[f"g{i}" for i in range(1200)]).to_csv(
        index=False).encode()
    at.session_state["dp_upload_name"] = "wide.csv"
    at.session_state["dp_dataset"] = "__upload__"
    at.switch_page("pages/data.py").run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert any("1,200 feature columns" in w.value for w in at.warning)
    assert {m.label: m.value for m in at.metric}["Features d"] == "1200"


# --- the editor's logic, without Streamlit ---------------------------------------------------------------

def _schema():
    table = read_table(_upload())
    return table, draft_schema(table, infer_roles(table))


def test_schema_table_and_apply_edits():
    table, schema = _schema()
    before = editor.schema_table(schema)
    assert list(before.columns) == ["column", "role", "status", "lower", "upper", "public", "clamped", "categories",
                                    "reason"]
    after = before.copy()
    after.loc[2, "upper"] = 12.0
    new = editor.apply_edits(schema, before, after, table)
    assert new["x"].upper == 12.0 and new["x"].from_data == {"role", "lower"}  # only the typed value became public
    after.loc[2, "public"] = True
    assert editor.apply_edits(schema, before, after, table)["x"].is_public
    after = before.copy()
    after.loc[4, "categories"] = '"a, with comma", b'
    assert editor.apply_edits(schema, before, after, table)["grp"].categories == ("a, with comma", "b")
    after = before.copy()
    after.loc[3, "role"] = "excluded"
    assert editor.apply_edits(schema, before, after, table)["y"].role == ColumnRole.EXCLUDED
    after = before.copy()
    after.loc[4, "categories"] = " "
    with pytest.raises(SchemaError, match="'grp', field 'categories'"):
        editor.apply_edits(schema, before, after, table)


def test_merge_loaded_schema_excludes_unnamed_columns():
    table, schema = _schema()
    loaded = schema.confirmed()
    partial = type(loaded)(tuple(c for c in loaded.columns if c.name != "y"), None, loaded.format)
    merged = editor.merge_loaded(partial, table)
    assert merged.names == table.columns and merged["y"].role == ColumnRole.EXCLUDED and merged.is_public


def test_explore_what_if_compares_declared_and_data_derived_pipelines(at):
    """The what-if panel runs the same sweep on the declared schema and on bounds read off the data."""
    _confirm_structure(at)
    _edit(at, {2: {"lower": 0.0, "upper": 40.0}, 3: {"lower": 0.0, "upper": 200.0}, 4: {"categories": "a, b"}})
    assert ui_state.stored("prepared", at.session_state).is_private
    at.switch_page("pages/explore.py").run()
    no_exception(at)
    at.button(key="whatif_run").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    frames = ui_state.stored("whatif", at.session_state).frames
    assert set(frames) == {"declared", "data_derived"}
    assert frames["declared"]["mechanism"].tolist() == frames["data_derived"]["mechanism"].tolist()
    assert "whatif_chart" in [el.key for el in at.get("plotly_chart")]
    shown = next(df for df in at.dataframe if "cost of public bounds" in df.value)
    costs = shown.value["cost of public bounds"].dropna()
    assert len(costs) and (costs.abs() < 1.5).all()
