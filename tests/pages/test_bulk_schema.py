"""#19, the schema editor at real widths: bulk edits, codebook import, typed values count as public, bounds only on
feature rows, a reset that asks first, and the clamped share per column (a labelled non-private diagnostic)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _wide_table import CATEGORIES, COLUMNS, COUNTS, SCORES, codebook_csv, wide_table
from streamlit.testing.v1 import AppTest

from dpcore.data import SchemaError, draft_schema, infer_roles, read_table
from dpcore.vocabulary import ColumnRole
from pages.ui import schema_editor as editor
from pages.ui import state as ui_state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _schema(at: AppTest):
    table_key = ui_state.memo_key("upload_table", session=at.session_state)
    return ui_state.stored("schemas", at.session_state)[table_key][0]  # one schema per file read


def _data_page(data: bytes, name: str) -> AppTest:
    """The Data page after the user uploaded ``data`` through the page's file chooser (one action)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    no_exception(at)
    at.file_uploader(key="data_upload_widget").set_value((name, data, "text/csv")).run()
    no_exception(at)
    return at


def _save_grid(at: AppTest, rows: dict) -> None:
    """Cell edits {position: {field: value}} typed into the grid, then saved (the grid is a form; before it was
    one, an edit applied on the next run — then the button is absent and the run alone applies it)."""
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    save = [b for b in at.button if b.key == "schema_grid_save"]
    (save[0].click() if save else at).run()
    no_exception(at)


@pytest.mark.slow
def test_a_40_column_table_is_made_public_in_at_most_ten_actions():
    actions = 1
    at = _data_page(wide_table(), "wide.csv")  # action 1: upload
    assert not at.error, [e.value for e in at.error]
    assert _schema(at).names == COLUMNS and not _schema(at).is_public
    at.button(key="schema_confirm_structure").click().run()  # 2: the detected format and inferred roles checked
    actions += 1
    at.text_input(key=editor.FILTER_KEY).set_value("score_*").run()  # 3: filter the 30 scores
    actions += 1
    assert len(at.data_editor[0].value) == len(SCORES)
    at.text_input(key="schema_bulk_lower").set_value("0")  # 4, 5: one public range for all of them
    at.text_input(key="schema_bulk_upper").set_value("100")
    actions += 2
    at.button(key="schema_bulk_apply").click().run()  # 6: apply it to the 30 selected columns
    actions += 1
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    schema = _schema(at)
    assert all((schema[c].lower, schema[c].upper) == (0, 100) and schema[c].values_public for c in SCORES)
    at.file_uploader(key=editor.CODEBOOK_KEY).set_value(("codebook.csv", codebook_csv(), "text/csv")).run()
    actions += 1  # 7: the codebook of the other columns
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    schema = _schema(at)
    assert schema.is_public, schema.not_public
    assert schema[COUNTS[0]].upper == 10000 and schema["region"].categories == tuple(CATEGORIES["region"])
    assert actions <= 10
    assert any("All 39 feature columns are public" in md.value for md in at.markdown)
    assert any("end-to-end private" in s.value for s in at.success)
    assert ui_state.stored("prepared", at.session_state).is_private


@pytest.mark.slow
def test_typed_values_equal_to_the_data_count_as_public_and_bounds_on_non_features_are_refused():
    at = _data_page(wide_table(30), "wide.csv")
    grid = at.data_editor[0].value
    pos = {name: i for i, name in enumerate(grid["column"])}
    first = SCORES[0]
    lo, hi = float(grid.loc[pos[first], "lower"]), float(grid.loc[pos[first], "upper"])
    assert grid.loc[pos[first], "status"] == "from data: role, lower, upper"  # the role too is inferred (R4-6)
    # the user types the very values shown (they know them from the questionnaire): a declaration
    _save_grid(at, {pos[first]: {"lower": lo, "upper": hi}})
    assert _schema(at)[first].values_public
    # the values are declared; the row is not called public while its role is the inference's (R4-6)
    assert at.data_editor[0].value.set_index("column").loc[first, "status"] == editor.FROM_DATA + "role"
    # a bound typed on the identifier row is refused with a message, and nothing is saved
    version = ui_state.stored("schema_version", at.session_state)
    _save_grid(at, {pos["respondent_id"]: {"lower": 0.0, "upper": 10.0}})
    assert any("'respondent_id'" in e.value and "not a feature" in e.value for e in at.error)
    assert _schema(at)["respondent_id"].lower is None and ui_state.stored("schema_version", at.session_state) == version
    assert any("What counts as public" in md.value for md in at.markdown)
    assert any("Paste works" in c.value for c in at.caption)


@pytest.mark.slow
def test_bulk_refusal_reset_confirmation_and_clamped_share():
    at = _data_page(wide_table(60), "wide.csv")
    # bounds for every column at once: the identifier and the categorical columns cannot take them
    at.text_input(key="schema_bulk_lower").set_value("0")
    at.text_input(key="schema_bulk_upper").set_value("100")
    at.button(key="schema_bulk_apply").click().run()
    no_exception(at)
    assert any("nothing was changed" in e.value and "respondent_id (identifier)" in e.value for e in at.error)
    assert not _schema(at)[SCORES[0]].values_public
    # the counts (0–5000) under bounds 0–100: most rows are clamped; the grid and a warning say so, labelled
    at.text_input(key=editor.FILTER_KEY).set_value("PERMINTE").run()
    at.text_input(key="schema_bulk_lower").set_value("0")
    at.text_input(key="schema_bulk_upper").set_value("100")
    at.button(key="schema_bulk_apply").click().run()
    no_exception(at)
    clamped = at.data_editor[0].value.set_index("column")["clamped"]
    assert all(clamped[c].startswith("⚠") for c in COUNTS)
    warning = next(w.value for w in at.warning if "cut off much of the data" in w.value)
    assert "non-private diagnostic" in warning and "true data" in warning and COUNTS[0] in warning
    # "Reset to draft" asks first: the reset happens only through the confirmation inside the popover
    assert not [b for b in at.button if b.label in ("Reset to draft", "Reset")]
    at.button(key="schema_reset").click().run()
    no_exception(at)
    assert not _schema(at)[COUNTS[0]].values_public


# --- the logic, without Streamlit --------------------------------------------------------------------------

def _draft():
    table = read_table(wide_table(40))
    return table, draft_schema(table, infer_roles(table))


def test_match_columns_by_pattern_and_role():
    _, schema = _draft()
    assert editor.match_columns(schema, "score_0*") == SCORES[:9]
    assert editor.match_columns(schema, "perminte") == [c for c in COLUMNS if c in COUNTS]
    assert editor.match_columns(schema, "region, SECTOR") == ["region", "sector"]
    assert editor.match_columns(schema, "", ["categorical"]) == list(CATEGORIES)
    assert len(editor.match_columns(schema)) == 40


def test_bulk_update_and_its_refusals():
    table, schema = _draft()
    new = editor.bulk_update(schema, SCORES, table, lower="0", upper="100")
    assert all(new[c].values_public and new[c].upper == 100 for c in SCORES)
    cats = editor.bulk_update(schema, ["sector", "ownership"], table, categories="a, b, c")
    assert cats["sector"].categories == ("a", "b", "c") and cats["sector"].values_public
    declared = editor.bulk_update(schema, ["region"], table, declare_shown=True)
    assert declared["region"].is_public
    as_numeric = editor.bulk_update(schema, ["respondent_id"], table, role="numeric", lower="0", upper="1e5")
    assert as_numeric["respondent_id"].role == ColumnRole.NUMERIC and as_numeric["respondent_id"].is_public
    with pytest.raises(SchemaError, match="respondent_id \\(identifier\\)"):
        editor.bulk_update(schema, ["respondent_id", *SCORES], table, lower="0", upper="1")
    with pytest.raises(SchemaError, match="'lower': 'zero' is not a number"):
        editor.bulk_update(schema, SCORES, table, lower="zero")
    with pytest.raises(SchemaError, match="nothing to set"):
        editor.bulk_update(schema, SCORES, table)
    with pytest.raises(SchemaError, match="no column is selected"):
        editor.bulk_update(schema, [], table, lower="0")


def test_cell_edits_typed_equal_values_are_declarations():
    table, schema = _draft()
    col = schema[SCORES[0]]
    new = editor.apply_cell_edits(schema, {col.name: {"lower": col.lower, "upper": col.upper}}, table)
    assert new[col.name].values_public
    shown = editor.schema_table(schema)
    state = {"edited_rows": {"1": {"lower": col.lower}}, "added_rows": [], "deleted_rows": []}
    assert editor.edited_cells(state, shown) == {shown.loc[1, "column"]: {"lower": col.lower}}
    with pytest.raises(SchemaError, match="not a feature"):
        editor.apply_cell_edits(schema, {"respondent_id": {"upper": 3.0}}, table)
    # a role changed and bounds typed in one save: the typed bounds win over the drafted ones
    both = editor.apply_cell_edits(schema, {"respondent_id": {"role": "numeric", "lower": 0.0, "upper": 9e3}}, table)
    assert (both["respondent_id"].lower, both["respondent_id"].upper) == (0, 9e3)
    assert both["respondent_id"].values_public


def test_clamped_shares_on_the_true_data():
    table, schema = _draft()
    assert set(editor.clamped_shares(schema, table).values()) == {0.0}  # draft bounds are the data's range
    narrow = editor.bulk_update(schema, COUNTS, table, lower="0", upper="2500")
    shares = editor.clamped_shares(narrow, table)
    counts = pd.to_numeric(pd.Series(read_table(wide_table(40)).frame[COUNTS[0]]))
    assert shares[COUNTS[0]] == pytest.approx(float((counts > 2500).mean()))
    fewer = editor.bulk_update(schema, ["region"], table, categories="north")
    assert editor.clamped_shares(fewer, table)["region"] > 0.5


# --- uploads under a loaded schema: read with its declared format ------------------------------------------

COLON_SCHEMA = (b"dpcore_schema: 1\nformat: {kind: csv, encoding: utf-8, delimiter: ':', decimal: ., header: true}\n"
                b"label: grp\ncolumns:\n- {name: h, role: numeric, lower: 100, upper: 250}\n"
                b"- {name: w, role: numeric, lower: 20, upper: 200}\n- {name: grp, role: label}\n")


def _colon_file(seed: int) -> bytes:
    """A ':'-separated export (format detection does not know ':': it reads one text column)."""
    rng = np.random.default_rng(seed)
    rows = [f"{rng.uniform(150, 200):.1f}:{rng.uniform(50, 90):.1f}:{'ab'[i % 2]}" for i in range(40)]
    return ("h:w:grp\n" + "\n".join(rows) + "\n").encode()


@pytest.mark.slow
def test_an_upload_detection_cannot_read_reaches_the_declared_schema_and_the_next_file_is_read_with_it():
    at = _data_page(_colon_file(1), "heights.txt")
    at.selectbox(key="dp_csv_encoding").set_value("utf-16").run()  # a wrong override: the file cannot be read
    no_exception(at)
    assert at.error and not at.data_editor
    loader = at.file_uploader(key="schema_upload_unread")  # still offered: declare the format instead
    loader.set_value(("heights.yaml", COLON_SCHEMA, "application/x-yaml")).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    schema = _schema(at)
    assert schema.names == ["h", "w", "grp"] and schema.label == "grp" and schema.is_public
    assert any("declared format" in c.value for c in at.caption)
    # a second file under the loaded schema: read with the declared ':' (nothing detected), its schema applied
    at.file_uploader(key="data_upload_widget").set_value(("heights_2025.txt", _colon_file(2), "text/plain")).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    schema = _schema(at)
    assert schema.is_public and schema.label == "grp" and at.session_state["dp_label"] == "grp"
    assert ui_state.stored("prepared", at.session_state).is_private
    assert {m.label: m.value for m in at.metric}["Labels"] == "2 classes"
