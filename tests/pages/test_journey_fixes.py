"""Issue 32, items 2, 6 and 7 on the Data page: a bulk action applies only the fields set for it and says what it
changed; a codebook applies its valid rows and lists the rows it skipped, and why; a schema whose declared format
does not fit the file says so, naming both sides, from the header line alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from _wide_table import CATEGORIES, COUNTS, SCORES, codebook_csv, wide_table
from streamlit.testing.v1 import AppTest

from dpcore.data import SchemaError, draft_schema, infer_roles, read_table
from dpcore.data.reading import FileFormat
from dpcore.data.schema import apply_codebook, read_codebook
from dpcore.vocabulary import ColumnRole
from pages.ui import schema_editor as editor
from pages.ui import state as ui_state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _schema(at: AppTest):
    table_key = ui_state.memo_key("upload_table", session=at.session_state)
    return ui_state.stored("schemas", at.session_state)[table_key][0]


def _data_page(data: bytes, name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload_widget").set_value((name, data, "text/csv")).run()
    _no_exception(at)
    return at


# ------------------------------------------------------------------------------------------------ item 2
def test_a_bulk_action_applies_only_what_was_set_for_it_and_says_what_changed():
    """The issue's path: a role set in bulk ('excluded') stayed in the form, and a later "declare the shown values
    public" on four other columns excluded them too. Each action now empties the form after it is applied."""
    at = _data_page(wide_table(40), "wide.csv")
    at.text_input(key=editor.FILTER_KEY).set_value("PERMINTE").run()
    at.selectbox(key=editor.BULK_ROLE_KEY).set_value("excluded")
    at.button(key="schema_bulk_apply").click().run()
    _no_exception(at)
    assert all(_schema(at)[c].role == ColumnRole.EXCLUDED for c in COUNTS)
    first_note = next(s.value for s in at.success if "Bulk edit" in s.value)
    # the form is empty again: the role box is back on "keep", the value boxes are blank
    emptied = (at.selectbox(key=editor.BULK_ROLE_KEY).value,
               [at.text_input(key=k).value for k in editor.BULK_VALUE_KEYS.values()])

    at.text_input(key=editor.FILTER_KEY).set_value("score_0").run()
    at.button(key="schema_bulk_declare").click().run()
    _no_exception(at)
    schema = _schema(at)
    chosen = [c for c in SCORES if c.startswith("score_0")]
    assert all(schema[c].role == ColumnRole.NUMERIC and schema[c].values_public for c in chosen), \
        [(c, schema[c].role) for c in chosen]
    assert emptied == (editor.KEEP_ROLE, ["", "", ""])
    assert "role → excluded on " + COUNTS[0] in first_note, first_note
    note = next(s.value for s in at.success if "Bulk edit" in s.value)
    assert "shown values declared public on score_01" in note and "role" not in note, note
    lo = schema[chosen[0]].lower
    assert f"{lo:g}" not in note  # a shown value (read off the data) is never quoted


def test_bulk_changes_names_each_change_and_quotes_only_typed_values():
    table = read_table(wide_table(40))
    before = draft_schema(table, infer_roles(table))
    after = editor.bulk_update(before, SCORES[:3], table, lower="0", upper="100")
    text = editor.bulk_changes(before, after, SCORES[:3], typed={"lower": "0", "upper": "100", "categories": ""})
    assert text == f"Changed: lower = 0 and upper = 100 (declared public) on {', '.join(SCORES[:3])}."
    again = editor.bulk_changes(after, after, SCORES[:3], typed={"lower": "0", "upper": "100", "categories": ""})
    assert again == "Nothing changed."
    roles = editor.bulk_update(before, [COUNTS[0], "region"], table, role="excluded")
    text = editor.bulk_changes(before, roles, [COUNTS[0], "region"], typed={}, role="excluded")
    assert text == f"Changed: role → excluded on {COUNTS[0]}, region."


# ------------------------------------------------------------------------------------------------ item 6
def _labelled(schema, column: str):
    """``schema`` with ``column`` as its label (as the label picker leaves it)."""
    from dataclasses import replace

    cols = tuple(c if c.name != column else type(c)(c.name, ColumnRole.LABEL) for c in schema.columns)
    return replace(schema, columns=cols, label=column)


def test_a_codebook_applies_its_valid_rows_and_lists_the_skipped_ones():
    """One row for the label refused the whole codebook; now that row, an unknown column and a bad number are
    skipped, each with its line and reason, and the other rows are applied."""
    table = read_table(wide_table(40))
    schema = _labelled(draft_schema(table, infer_roles(table)), COUNTS[-1])  # the codebook has a row for it
    skipped: list[str] = []
    book = codebook_csv() + b"no_such_column,0,1,\nsize_class,abc,1,\n"
    entries = read_codebook(book, "book.csv", skipped=skipped)
    assert len(skipped) == 1 and "book.csv line 12" in skipped[0] and "'abc' is not a number" in skipped[0]
    new = apply_codebook(schema, entries, table, skipped=skipped)
    assert len(skipped) == 3, skipped
    assert "book.csv line 6" in skipped[1] and f"{COUNTS[-1]!r} is the label" in skipped[1], skipped
    assert "book.csv line 11" in skipped[2] and "no column 'no_such_column'" in skipped[2], skipped
    assert new["region"].categories == tuple(CATEGORIES["region"]) and new[COUNTS[0]].upper == 10000
    assert new[COUNTS[0]].values_public and new.label == COUNTS[-1]
    # without the list, the same codebook is refused whole (the CLI): nothing half-applied
    with pytest.raises(SchemaError, match="is the label"):
        apply_codebook(schema, read_codebook(codebook_csv(), "b.csv"), table)


def test_a_yaml_codebook_skips_a_bad_entry_and_keeps_the_rest():
    skipped: list[str] = []
    entries = read_codebook(b"- {column: age, lower: 0, upper: 120}\n- {column: x, uper: 3}\n- 7\n"
                            b"- {column: age, lower: 1, upper: 2}\n", "b.yaml", skipped=skipped)
    assert [e.column for e in entries] == ["age"]
    assert [s.split(":")[0] for s in skipped] == ["b.yaml entry 2", "b.yaml entry 3", "b.yaml entry 4"], skipped


def test_the_data_page_imports_a_codebook_with_a_label_row():
    data = _survey()
    at = _data_page(data, "survey.csv")
    at.selectbox(key="dp_label").set_value("outcome").run()
    book = b"column,lower,upper,categories\nx,0,10,\noutcome,,,yes|no\ngrp,,,a|b\n"
    at.file_uploader(key=editor.CODEBOOK_KEY).set_value(("book.csv", book, "text/csv")).run()
    _no_exception(at)
    schema = _schema(at)
    assert (schema["x"].lower, schema["x"].upper) == (0, 10) and schema["x"].values_public
    assert schema["grp"].categories == ("a", "b") and schema["grp"].values_public
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Skipped 1 row(s) of the codebook book.csv" in errors[0], errors
    assert "book.csv line 3" in errors[0] and "'outcome' is the label" in errors[0]
    assert any("Imported 2 column(s) from the codebook book.csv" in s.value for s in at.success)


def _survey(seed: int = 4, delimiter: str = ",") -> bytes:
    rng = np.random.default_rng(seed)
    rows = [delimiter.join((f"{rng.uniform(1, 9):.3f}", "ab"[i % 2], ("yes", "no")[i % 3 == 0]))
            for i in range(60)]
    return (delimiter.join(("x", "grp", "outcome")) + "\n" + "\n".join(rows) + "\n").encode()


# ------------------------------------------------------------------------------------------------ item 7
@pytest.mark.parametrize(("head", "fmt", "expected"), [
    (b"rownames;x;y\n1;2;3\n", FileFormat(delimiter=","), "declares the delimiter ',' (comma), but this file's "
     "header line is split by ';' (semicolon) (3 fields with ';', one with ',')"),
    (b"sep=;\na;b\n1;2\n", FileFormat(delimiter=","), "split by ';' (semicolon)"),
    (b"a,b\n1,2\n", FileFormat(delimiter=","), None),
    (b"a\n1\n", FileFormat(delimiter=","), None),  # one column: nothing contradicts the declaration
    ("a\tb\n1\t2\n".encode("utf-16"), FileFormat(delimiter="\t"), "declares the encoding utf-8, but this file's "
     "header line is not utf-8 text"),
    (b"a;b\n1;2\n", FileFormat(delimiter=",", header=False), None),  # no header line to check
])
def test_header_misfit_names_both_sides(head, fmt, expected):
    got = editor.header_misfit(head, fmt)
    assert (got is None) if expected is None else (expected in got), got


def test_header_misfit_quotes_no_record():
    assert "secret" not in editor.header_misfit(b"a;b\nsecret;1\n", FileFormat(delimiter=","))


def _schema_yaml(delimiter: str) -> bytes:
    return yaml.safe_dump({"dpcore_schema": 1, "label": None,
                           "format": {"kind": "csv", "delimiter": delimiter, "decimal": "."},
                           "columns": [{"name": "x", "role": "numeric", "lower": 0, "upper": 10},
                                       {"name": "grp", "role": "categorical", "categories": ["a", "b"]},
                                       {"name": "outcome", "role": "categorical", "categories": ["yes", "no"]}]},
                          ).encode()


def test_a_schema_whose_format_does_not_fit_the_file_is_refused_with_one_message():
    at = _data_page(_survey(delimiter=";"), "survey.csv")
    at.file_uploader(key="schema_upload_widget").set_value(("s.yaml", _schema_yaml(","), "application/x-yaml")).run()
    _no_exception(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert "s.yaml: the schema declares the delimiter ',' (comma), but this file's header line is split by ';'" \
        in errors[0] and "Nothing was loaded" in errors[0]
    assert not at.warning or not any("No column is a feature" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "schema_forget_declared"]  # nothing declared to forget
    assert _schema(at).names == ["x", "grp", "outcome"]  # still read as detected
    at.run()
    assert not at.error  # the message is shown once


def test_a_declared_format_the_next_file_does_not_fit_is_forgotten_with_one_message():
    at = _data_page(_survey(delimiter=";"), "first.csv")
    at.file_uploader(key="schema_upload_widget").set_value(("s.yaml", _schema_yaml(";"), "application/x-yaml")).run()
    _no_exception(at)
    assert not at.error and [b for b in at.button if b.key == "schema_forget_declared"]
    at.file_uploader(key="data_upload_widget").set_value(("second.csv", _survey(5), "text/csv")).run()
    _no_exception(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "declares the delimiter ';' (semicolon), but this file's header line is split by " \
        "',' (comma)" in errors[0], errors
    assert not [b for b in at.button if b.key == "schema_forget_declared"]
    assert _schema(at).names == ["x", "grp", "outcome"]
    at.run()
    assert not at.error


def test_a_bulk_action_pressed_after_the_filter_changed_changes_nothing():
    """A filter typed and a bulk button pressed before the page redrew (CI's flaky journey, 67659ea; a fast user):
    the button's callback was drawn for the previous filter's columns, and "declare the shown values public" went to
    columns the user no longer saw. The callback now compares the filter with the columns it was drawn for."""
    at = _data_page(wide_table(40), "wide.csv")
    at.text_input(key=editor.FILTER_KEY).set_value("PERMINTE").run()
    before = _schema(at)
    at.text_input(key=editor.FILTER_KEY).set_value("score_0")  # typed, not yet drawn …
    at.button(key="schema_bulk_declare").click().run()  # … when the button (drawn for PERMINTE*) is pressed
    _no_exception(at)
    assert _schema(at) == before  # 67659ea: the PERMINTE columns' shown values declared public
    assert any("Nothing was changed: the column filter changed" in e.value for e in at.error), \
        [e.value for e in at.error]
    at.button(key="schema_bulk_declare").click().run()  # pressed again on the form drawn for score_0*: applied
    chosen = [c for c in SCORES if c.startswith("score_0")]
    assert all(_schema(at)[c].values_public for c in chosen)
    assert not any(_schema(at)[c].values_public for c in COUNTS)
