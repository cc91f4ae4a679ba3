"""The public schema: drafts mark data-derived values, YAML/JSON round trips, errors name the column and the field,
a schema-based load is per record (clamping, unseen categories, fills) with a data-independent ledger, and the
CLI (`dpcore schema infer|check`, `sweep|release --schema`)."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.data import (
    ColumnSchema,
    Schema,
    SchemaError,
    draft_schema,
    example_csv_bytes,
    infer_roles,
    load_csv,
    load_schema,
    load_table,
    preprocess,
    read_table,
)
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.vocabulary import ColumnRole

CSV = (b"id,age,income,colour,note,label\n"
       + b"".join(f"u{i},{20 + 7 * i % 45},{1000 + 37 * i % 900},{'rgb'[i % 3]},,{'ab'[i % 2]}\n".encode()
                  for i in range(40)))
PUBLIC = {
    "dpcore_schema": 1, "label": "label", "format": {"kind": "csv"},  # the declared default: UTF-8, comma, point
    "columns": [
        {"name": "id", "role": "identifier"},
        {"name": "age", "role": "numeric", "lower": 18, "upper": 65},
        {"name": "income", "role": "numeric", "lower": 0, "upper": 5000},
        {"name": "colour", "role": "categorical", "categories": ["r", "g", "b"]},
        {"name": "note", "role": "free_text"},
    ],
}


def _draft() -> Schema:
    table = read_table(CSV)
    return draft_schema(table, infer_roles(table, label="label"))


# --- the schema model ------------------------------------------------------------------------------------

def test_draft_marks_every_data_derived_value():
    s = _draft()
    assert s.label == "label" and s["label"].role == ColumnRole.LABEL
    # every inferred decision is marked: the roles, the guessed label, the detected format, the values
    assert s["id"].role == ColumnRole.IDENTIFIER and s["id"].from_data == {"role"}
    assert (s["age"].lower, s["age"].upper) == (20.0, 64.0) and s["age"].from_data == {"role", "lower", "upper"}
    assert s["colour"].categories == ("b", "g", "r") and s["colour"].from_data == {"role", "categories"}
    assert s.from_data == {"label"} and s.format.from_data >= {"kind", "encoding", "delimiter", "decimal"}
    assert not s.is_public and not s.format_public and not s.structure_public
    assert s.not_public == ["file format", "label", "id", "age", "income", "colour", "note"]
    assert s.values_from_data == ["age", "income", "colour"]
    assert s.confirmed().is_public
    checked = s.structure_confirmed()  # format, roles and label checked; the values still from the data
    assert checked.format_public and checked.structure_public and checked.not_public == ["age", "income", "colour"]
    assert checked.replace_column(checked["age"].confirmed(["lower"])).not_public == ["age", "income", "colour"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip(fmt):
    for s in (_draft(), load_schema(PUBLIC)):
        text = s.to_yaml() if fmt == "yaml" else s.to_json()
        back = load_schema(text)
        assert back == s
        assert back.is_public == s.is_public


def test_yaml_draft_is_readable_and_keeps_text_categories():
    text = _draft().to_yaml()
    assert "from_data: [role, lower, upper]" in text and text.startswith("# dpcore schema")
    assert "format:\n  kind: csv\n  encoding: utf-8\n  delimiter: ','\n  decimal: .\n  thousands: null" in text
    # thousands: never guessed (privacy review R4-7), so null is the default, not read off the data
    assert "  from_data: [kind, encoding, delimiter, decimal]\nlabel: label\nfrom_data: [label]" in text
    s = Schema.from_text("columns:\n- {name: smoker, role: binary, categories: [yes, no]}\n")
    assert s["smoker"].categories == ("yes", "no")  # not YAML 1.1 booleans


@pytest.mark.parametrize("columns, needle", [
    ([{"name": "age", "role": "numerc", "lower": 0, "upper": 1}], "schema column 'age', field 'role': unknown role"),
    ([{"name": "age", "role": "numeric", "lower": "abc", "upper": 1}], "'age', field 'lower': expected a number"),
    ([{"name": "age", "role": "numeric", "lower": 5, "upper": 1}], "'age', field 'upper': upper (1) is below"),
    ([{"name": "age", "role": "numeric", "lower": 0}], "'age', field 'upper'"),
    ([{"name": "age", "role": "numeric", "lower": 0, "upper": float("inf")}], "field 'upper': expected a finite"),
    ([{"name": "c", "role": "categorical"}], "'c', field 'categories'"),
    ([{"name": "c", "role": "categorical", "categories": "red"}], "'c', field 'categories': expected a list"),
    ([{"name": "c", "role": "categorical", "categories": ["a", "a"]}], "'c', field 'categories': the category 'a'"),
    ([{"name": "c", "role": "binary", "categories": ["a", "b", "c"]}], "'c', field 'categories': a binary column"),
    ([{"name": "c", "role": "numeric", "lower": 0, "upper": 1, "colour": 3}], "'c', field 'colour': unknown field"),
    ([{"name": "c", "role": "numeric", "lower": 0, "upper": 1, "from_data": ["bounds"]}], "'c', field 'from_data'"),
    ([{"name": "c", "lower": 0, "upper": 1}], "'c', field 'role': missing"),
    ([{"role": "numeric"}], "columns[0] needs a 'name'"),
    ([{"name": "c", "role": "numeric", "lower": 0, "upper": 1}] * 2, "schema column 'c': listed twice"),
    ([{"name": "c", "role": "label"}], "schema column 'c', field 'role': 'label'"),
    ([], "field 'columns'"),
])
def test_malformed_schema_names_column_and_field(columns, needle):
    with pytest.raises(SchemaError) as exc:
        load_schema({"columns": columns})
    assert needle in str(exc.value)


def test_malformed_text_and_files(tmp_path):
    with pytest.raises(SchemaError, match="not valid YAML/JSON at line"):
        load_schema("columns:\n  - [unclosed\n")
    with pytest.raises(SchemaError, match="version 7"):
        load_schema({"dpcore_schema": 7, "columns": [{"name": "a", "role": "identifier"}]})
    with pytest.raises(SchemaError, match="unknown"):
        load_schema({"colums": []})
    with pytest.raises(SchemaError, match="not found"):
        load_schema(tmp_path / "nope.yaml")
    path = tmp_path / "s.yaml"
    path.write_text(load_schema(PUBLIC).to_yaml())
    assert load_schema(path) == load_schema(PUBLIC) == load_schema(str(path))


# --- loading with a schema -------------------------------------------------------------------------------

def test_schema_load_is_private_end_to_end():
    ds = load_csv(CSV, schema=PUBLIC)
    assert ds.feature_names == ("age", "income", "colour=r", "colour=g", "colour=b")
    np.testing.assert_array_equal(ds.feature_ranges, [[18, 65], [0, 5000], [0, 1], [0, 1], [0, 1]])
    assert ds.y is not None and set(ds.y) == {"a", "b"}
    assert all(e.private for e in ds.load_ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # nothing non-private anywhere
        prepared = preprocess(ds)
    assert prepared.is_private
    assert prepared.X.max() <= 1.0 + 1e-12
    # ages 20..64 within [18, 65]: nothing clamped
    assert "values_outside_bounds" not in ds.diagnostics


def test_clamping_unseen_categories_and_fills_are_per_record_with_counts_in_diagnostics_only():
    data = CSV.replace(b"u3,41,", b"u3,99,").replace(b"u4,48,1148,g", b"u4,48,1148,purple")
    data = data.replace(b"u5,55,1185,", b"u5,,1185,")
    ds = load_csv(data, schema=PUBLIC)
    assert ds.diagnostics["values_outside_bounds"] == {"age": 1}
    assert ds.diagnostics["unseen_categories"] == {"colour": 1}
    assert ds.diagnostics["missing_values"] == {"age": 1}
    assert ds.n == 40  # nothing dropped
    np.testing.assert_array_equal(ds.X[4, 2:], [0, 0, 0])  # unseen category → all-zero indicators
    prepared = preprocess(ds)
    assert prepared.X[3, 0] * prepared.norm_bound == pytest.approx(1.0)  # 99 clamped to the upper bound 65 → 1
    assert prepared.diagnostics["clamped_fraction"] > 0
    # the ledger is the same as for clean data: it depends only on the schema and the options
    clean = load_csv(CSV, schema=PUBLIC)
    assert ds.load_ledger == clean.load_ledger and preprocess(clean).ledger == prepared.ledger


def test_draft_schema_load_is_flagged_not_private():
    ds = load_csv(CSV, schema=_draft())
    entry = ds.load_ledger[0]
    assert not entry.private and "age, income, colour" in entry.note
    with pytest.warns(PrivacyLeakWarning):
        assert not preprocess(ds).is_private
    # confirming the values (declaring them public) makes the same pipeline private
    assert preprocess(load_csv(CSV, schema=_draft().confirmed())).is_private


def test_dropping_rows_is_always_recorded_not_private_with_a_schema():
    ds = load_csv(CSV, schema=PUBLIC, missing="drop")  # no row has a gap, and still: n could depend on the data
    assert any(e.step == "drop rows with missing values" and not e.private for e in ds.load_ledger)
    ds = load_csv(CSV, schema=PUBLIC, missing="mean")
    assert any(not e.private for e in ds.load_ledger)


def test_schema_errors_against_the_file():
    bad = dict(PUBLIC, columns=[*PUBLIC["columns"], {"name": "height", "role": "numeric", "lower": 0, "upper": 2}])
    with pytest.raises(SchemaError, match="schema column 'height' is not in the file"):
        load_csv(CSV, schema=bad)
    with pytest.raises(SchemaError, match=r"'label'.*'other'"):
        load_csv(CSV, schema=PUBLIC, label="other")
    # (a text column declared numeric is not refused: its cells are per-record missing values, see encode.py)
    with pytest.raises(SchemaError, match="no feature columns"):
        load_csv(CSV, schema={"columns": [{"name": "id", "role": "identifier"}]})


def test_schema_options():
    ds = load_csv(CSV, schema=PUBLIC, categorical="drop")
    assert ds.feature_names == ("age", "income") and all(e.private for e in ds.load_ledger)
    data = CSV.replace(b",b\n", b",\n", 1)  # one missing label: the row is kept (label only feeds the metrics)
    ds = load_csv(data, schema=PUBLIC)
    assert ds.n == 40 and "(missing)" in set(ds.y)
    # a schema without a label accepts label=
    ds = load_csv(CSV, schema=dict(PUBLIC, label=None), label="label")
    assert ds.y is not None


def test_draft_column_roles_for_binary_and_typed_columns():
    table = read_table(pd.DataFrame({"flag": [0, 1] * 15, "kind": ["x", "y"] * 15}).to_csv(index=False).encode())
    s = draft_schema(table, infer_roles(table))
    assert s["flag"].role == ColumnRole.BINARY and (s["flag"].lower, s["flag"].upper) == (0, 1)
    assert s["kind"].role == ColumnRole.BINARY and s["kind"].categories == ("x", "y")
    assert isinstance(s["kind"], ColumnSchema) and s.width == 3


# --- command line ---------------------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_schema_infer_check_and_private_release(capsys, tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_bytes(CSV)
    draft = tmp_path / "draft.yaml"
    code, _, err = run(capsys, "schema", "infer", "--csv", str(csv), "--label", "label", "--out", str(draft))
    assert code == 0 and "identifier" in err and "NOT public" in err
    assert load_schema(draft) == _draft()
    code, out, _ = run(capsys, "schema", "check", "--schema", str(draft), "--csv", str(csv), "--require-public")
    assert code == 1 and "NOT public" in out
    # a release with the draft is labelled non-private; with the edited, public schema it is private
    args = ["release", "--csv", str(csv), "--mechanism", "analyze_gauss", "--epsilon", "1", "--delta", "1e-5",
            "--seed", "1"]
    code, out, err = run(capsys, *args, "--schema", str(draft))
    assert code == 0 and json.loads(out)["end_to_end_private"] is False and "schema values read off" in err
    public = tmp_path / "public.json"
    public.write_text(json.dumps(PUBLIC))
    code, out, err = run(capsys, *args, "--schema", str(public), "--quiet")
    result = json.loads(out)
    assert code == 0 and result["end_to_end_private"] is True and result["d"] == 5
    assert all(e["private"] for e in result["ledger"])
    code, out, _ = run(capsys, "schema", "check", "--schema", str(public), "--json")
    assert code == 0 and json.loads(out)["public"] is True


def test_cli_sweep_with_schema_and_without(capsys, tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_bytes(CSV)
    public = tmp_path / "public.yaml"
    public.write_text(load_schema(PUBLIC).to_yaml())
    out = tmp_path / "out.csv"
    base = ["sweep", "--csv", str(csv), "--mechanisms", "analyze_gauss", "--epsilons", "1", "--k", "2", "--trials",
            "1", "--out", str(out)]
    code, _, err = run(capsys, *base, "--schema", str(public))
    assert code == 0, err
    assert "non-private" not in err and pd.read_csv(out).status.tolist() == ["ok"]
    # without a schema: works as before, and says which steps are not private
    code, _, err = run(capsys, *base, "--feature-scaling", "minmax", "--label", "label")
    assert code == 0 and "non-private preprocessing step" in err and "note: 'id' left out" in err


@pytest.mark.parametrize("argv, needle", [
    (["schema", "infer", "--csv", "/no/such.csv"], "not found"),
    (["schema", "check", "--schema", "/no/such.yaml"], "not found"),
    (["sweep", "--dataset", "wine", "--schema", "s.yaml", "--mechanisms", "pca", "--epsilons", "1", "--out", "x.csv"],
     "--schema only applies to --csv"),
    (["schema", "infer", "--csv", "x.csv", "--role", "novalue"], "key=value"),
])
def test_cli_schema_errors_exit_2(capsys, tmp_path, argv, needle):
    if "x.csv" in argv:
        (tmp_path / "x.csv").write_bytes(CSV)
        argv = [str(tmp_path / "x.csv") if a == "x.csv" else a for a in argv]
    code, _, err = run(capsys, *argv)
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert code == 2 and len(lines) == 1 and needle in lines[0], err


def test_cli_malformed_schema_is_one_line(capsys, tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_bytes(CSV)
    bad = tmp_path / "bad.yaml"
    bad.write_text("columns:\n- {name: age, role: numeric, lower: 0, upper: ten}\n")
    code, _, err = run(capsys, "release", "--csv", str(csv), "--schema", str(bad), "--mechanism", "analyze_gauss",
                       "--epsilon", "1", "--delta", "1e-5")
    assert code == 2 and "schema column 'age', field 'upper'" in err and "Traceback" not in err


def test_example_csv_schema_round_trip_through_the_cli(capsys, tmp_path):
    csv = tmp_path / "classroom.csv"
    csv.write_bytes(example_csv_bytes())
    code, out, _ = run(capsys, "schema", "infer", "--csv", str(csv), "--label", "passed", "--format", "json",
                       "--quiet")
    assert code == 0 and json.loads(out)["label"] == "passed"


# --- the file format -------------------------------------------------------------------------------------

def test_file_format_round_trip_and_reading_options():
    from dpcore.data.reading import FileFormat

    fmt = FileFormat(delimiter="\t", decimal=",", thousands=".", encoding="UTF-16", missing=["NA", " ", "-"],
                     from_data=["delimiter"])
    assert fmt.encoding == "utf-16" and fmt.missing == ("", "-", "na") and not fmt.is_public
    assert fmt.confirmed().is_public and fmt.confirmed().reading == fmt.reading
    schema = load_schema(PUBLIC).with_format(fmt)
    for text in (schema.to_yaml(), schema.to_json()):
        assert load_schema(text) == schema
    assert not schema.is_public and schema.not_public == ["file format"]
    opts = schema.with_format(fmt.confirmed()).reading_options()
    assert (opts["delimiter"], opts["decimal"], opts["thousands"], opts["header"]) == ("\t", ",", ".", True)
    assert opts["declared"] and opts["public"] and opts["records"] == "lines"
    assert load_schema({"columns": PUBLIC["columns"]}).reading_options()["declared"] is False
    assert FileFormat(kind="parquet", delimiter=";").to_dict() == {"kind": "parquet",
                                                                  "missing": ["", "?", "n/a", "na", "nan", "null"]}


@pytest.mark.parametrize("fmt, needle", [
    ({"kind": "tsv"}, "field 'kind': unknown kind"),
    ({"delimiter": ";;"}, "field 'delimiter'"),
    ({"decimal": ";"}, "field 'decimal'"),
    ({"decimal": ",", "thousands": ","}, "field 'thousands'"),
    ({"encoding": "klingon"}, "field 'encoding'"),
    ({"header": "maybe"}, "field 'header'"),
    ({"quote": "'"}, "field 'quote': unknown field"),
    ({"from_data": ["colour"]}, "field 'from_data'"),
])
def test_malformed_format_names_the_field(fmt, needle):
    with pytest.raises(SchemaError) as exc:
        load_schema({"format": fmt, "columns": PUBLIC["columns"]})
    assert needle in str(exc.value) and str(exc.value).startswith("schema, file format")


def test_declared_format_is_used_exactly():
    data = b"a;b\n4.900;1,5\n3;2\n1.234,5;x\n"
    grouped = load_schema({"format": {"delimiter": ";", "decimal": ",", "thousands": "."},
                           "columns": [{"name": "a", "role": "numeric", "lower": 0, "upper": 1e4},
                                       {"name": "b", "role": "numeric", "lower": 0, "upper": 10}]})
    ds = load_csv(data, schema=grouped)
    np.testing.assert_array_equal(ds.X, [[4900, 1.5], [3, 2], [1234.5, 0]])  # "x" is missing → 0
    plain = grouped.with_format(replace(grouped.format, thousands=None))
    np.testing.assert_array_equal(load_csv(data, schema=plain).X[:, 0], [0, 3, 0])  # "." is no decimal mark here
    # a table read with detection is read again with the declared format
    table = read_table(data, decimal=".")
    assert table.numbers("a")[0][0] == 4.9
    assert load_table(table, schema=grouped).X[0, 0] == 4900
    with pytest.raises(Exception, match="declared format"):
        load_csv(data, schema=grouped, delimiter=";")


def test_format_without_a_header_row_takes_the_schema_names():
    schema = load_schema({"format": {"header": False}, "columns": [
        {"name": "u", "role": "numeric", "lower": 0, "upper": 9},
        {"name": "v", "role": "numeric", "lower": 0, "upper": 9}]})
    ds = load_csv(b"1,2\n3,4\n5,6\n", schema=schema)
    assert ds.feature_names == ("u", "v") and ds.n == 3
