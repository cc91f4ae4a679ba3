"""Real-world-shaped tables, generated here: each gives the expected column roles (with reasons) or a clear
error — never a traceback. Also: format detection (delimiters, decimal commas, BOM, UTF-16, Parquet, Excel) and
role overrides."""

from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from dpcore.data import WideDataWarning, infer_roles, load_csv, read_table
from dpcore.exceptions import DataError, DPCoreError, InvalidParameterError
from dpcore.vocabulary import ColumnRole

R = ColumnRole
rng = np.random.default_rng(20261123)


def _csv(frame: pd.DataFrame, **kw) -> bytes:
    return frame.to_csv(index=False, **kw).encode(kw.pop("encoding", "utf-8") if "encoding" in kw else "utf-8")


def monthly() -> bytes:
    months = pd.period_range("2010-01", periods=120, freq="M").astype(str)
    return _csv(pd.DataFrame({"month": np.repeat(months, 3), "region": np.tile(["north", "south", "west"], 120),
                              "sales": rng.gamma(2, 100, 360).round(2), "units": rng.integers(10, 500, 360)}))


def stocks() -> bytes:
    days = pd.date_range("2020-01-01", periods=250, freq="B").strftime("%Y-%m-%d")
    return _csv(pd.DataFrame({"symbol": np.repeat(list("ABCDEFGH"), 250), "date": np.tile(days, 8),
                              "price": rng.lognormal(4, 0.3, 2000).round(2)}))


def weather() -> bytes:
    days = pd.date_range("2015-01-01", periods=1461, freq="D").strftime("%Y-%m-%d")
    return _csv(pd.DataFrame({"date": days, "tmax": rng.normal(15, 8, 1461).round(1),
                              "tmin": rng.normal(5, 6, 1461).round(1),
                              "precip": np.where(rng.random(1461) < 0.7, 0, rng.gamma(1, 5, 1461)).round(1)}))


def survey() -> bytes:
    n = 200
    comments = [(f"Question {rng.integers(1, 30)} was confusing and the form took too long" if rng.random() < 0.1
                 else "") for _ in range(n)]
    return _csv(pd.DataFrame({"Individual ID": [f"P{1000 + i}" for i in range(n)], "age": rng.integers(18, 90, n),
                              "score": rng.normal(50, 10, n).round(1), "country": "DE", "Comments": comments}))


def semicolon_decimal_comma() -> bytes:
    rows = [f"{i};{1.5 + rng.random() * 0.5:.2f};{rng.normal(70, 10):.1f};{'Berlin' if i % 3 else 'Köln'}"
            .replace(".", ",") for i in range(60)]
    return ("id;height;weight;city\n" + "\n".join(rows) + "\n").encode("utf-8")


def small_frame() -> pd.DataFrame:
    return pd.DataFrame({"a": rng.normal(size=80).round(3), "b": rng.integers(0, 5, 80),
                         "cls": rng.choice(["x", "y", "z"], 80)})


def mixed_types() -> bytes:
    counts = [str(v) for v in rng.integers(1, 100, 100)]
    counts[3], counts[50] = "<5", "unknown"
    return _csv(pd.DataFrame({"count": counts, "other": rng.normal(size=100).round(2)}))


def dates_ids_flags() -> bytes:
    frame = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=40).strftime("%Y%m%d").astype(int),
                          "v": rng.normal(size=40), "target": rng.choice([0, 1], 40),
                          "flag": rng.choice(["TRUE", "FALSE"], 40), "empty": ""})
    return frame.to_csv().encode()  # with the unnamed index column, as pandas writes it


def wide() -> bytes:
    X = rng.normal(size=(50, 3000)).round(3)
    return _csv(pd.DataFrame(X, columns=[f"g{i}" for i in range(3000)]))


def parquet() -> bytes:
    buf = io.BytesIO()
    pd.DataFrame({"when": pd.date_range("2020-01-01", periods=30), "x": rng.normal(size=30),
                  "c": rng.choice(["a", "b", "c"], 30)}).to_parquet(buf)
    return buf.getvalue()


def xlsx() -> bytes:
    buf = io.BytesIO()
    pd.DataFrame({"when": pd.date_range("2020-01-01", periods=30), "x": rng.normal(size=30),
                  "c": rng.choice(["a", "b", "c"], 30)}).to_excel(buf, index=False, engine="openpyxl")
    return buf.getvalue()


def fake_xlsx() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    return buf.getvalue()


CORPUS = {
    # name: (bytes, kwargs, expected roles, expected d)
    "monthly": (monthly, {}, {"month": R.DATE, "region": R.CATEGORICAL, "sales": R.NUMERIC, "units": R.NUMERIC}, 5),
    "stocks": (stocks, {}, {"symbol": R.CATEGORICAL, "date": R.DATE, "price": R.NUMERIC}, 9),
    "weather": (weather, {}, {"date": R.DATE, "tmax": R.NUMERIC, "tmin": R.NUMERIC, "precip": R.NUMERIC}, 3),
    "survey": (survey, {}, {"Individual ID": R.IDENTIFIER, "age": R.NUMERIC, "score": R.NUMERIC,
                            "country": R.CONSTANT, "Comments": R.FREE_TEXT}, 2),
    "semicolon + decimal comma": (semicolon_decimal_comma, {}, {"id": R.IDENTIFIER, "height": R.NUMERIC,
                                                                 "weight": R.NUMERIC, "city": R.BINARY}, 4),
    "UTF-16 tab (Excel Unicode text)": (lambda: small_frame().to_csv(index=False, sep="\t").encode("utf-16"), {},
                                        {"a": R.NUMERIC, "b": R.NUMERIC, "cls": R.CATEGORICAL}, 5),
    "UTF-16 LE without BOM": (lambda: small_frame().to_csv(index=False, sep="\t").encode("utf-16-le"), {},
                              {"a": R.NUMERIC, "b": R.NUMERIC, "cls": R.CATEGORICAL}, 5),
    "UTF-8 with BOM": (lambda: small_frame().to_csv(index=False).encode("utf-8-sig"), {},
                       {"a": R.NUMERIC, "b": R.NUMERIC, "cls": R.CATEGORICAL}, 5),
    "pipe-separated": (lambda: small_frame().to_csv(index=False, sep="|").encode(), {},
                       {"a": R.NUMERIC, "b": R.NUMERIC, "cls": R.CATEGORICAL}, 5),
    "mixed types": (mixed_types, {"missing": "zero"}, {"count": R.NUMERIC, "other": R.NUMERIC}, 2),
    "dates, row numbers, flags, empty": (dates_ids_flags, {}, {"column1": R.IDENTIFIER, "date": R.DATE,
                                                               "v": R.NUMERIC, "target": R.BINARY, "flag": R.BINARY,
                                                               "empty": R.EMPTY}, 4),
    "wide numeric": (wide, {}, None, 3000),
    "parquet": (parquet, {}, {"when": R.DATE, "x": R.NUMERIC, "c": R.CATEGORICAL}, 4),
    "excel workbook": (xlsx, {}, {"when": R.DATE, "x": R.NUMERIC, "c": R.CATEGORICAL}, 4),
    "cp1252 with an explicit encoding": (lambda: "name,val\nJosé,1\nAnaïs,2\nBjörn,3\n".encode("cp1252"),
                                         {"encoding": "cp1252"}, {"name": R.CATEGORICAL, "val": R.NUMERIC}, 4),
}

ERRORS = {
    "damaged Excel workbook": (fake_xlsx, "Excel workbook could not be read"),
    "legacy .xls": (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 200, ".xls"),
    "cp1252 without an encoding": (lambda: "name,val\nJosé,1\nAnaïs,2\n".encode("cp1252"), "encoding='cp1252'"),
    "random bytes": (lambda: bytes(np.random.default_rng(1).integers(0, 256, 500, dtype=np.uint8)), "UTF-8"),
    "only an ID and a date": (lambda: _csv(pd.DataFrame({"id": [f"u{i}" for i in range(30)],
                                                         "day": pd.date_range("2021-01-01", periods=30)
                                                         .strftime("%d.%m.%Y")})), "no usable feature columns"),
    "damaged parquet": (lambda: b"PAR1" + b"\x00" * 64, "Parquet"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CORPUS))
def test_corpus_roles_and_shape(case):
    make, kwargs, roles, d = CORPUS[case]
    data = make()
    read_kw = {k: v for k, v in kwargs.items() if k in ("encoding", "delimiter", "decimal")}
    report = infer_roles(read_table(data, **read_kw))
    got = {c.name: c.role for c in report.columns}
    if roles is not None:
        assert got == roles, report.as_frame().to_string()
        assert all(c.reason for c in report.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WideDataWarning)
        ds = load_csv(data, **kwargs)
    assert ds.d == d
    assert np.all(np.isfinite(ds.X))
    left_out = [c.name for c in report.columns if not c.included]
    for name in left_out:  # every column left out is named in a note
        assert any(repr(name) in note for note in ds.diagnostics["notes"])


@pytest.mark.parametrize("case", list(ERRORS))
def test_corpus_clear_errors(case):
    make, needle = ERRORS[case]
    with pytest.raises(DPCoreError) as exc:
        load_csv(make())
    assert isinstance(exc.value, DataError) and needle in str(exc.value)


def test_detected_format_is_described():
    info = read_table(semicolon_decimal_comma()).info
    assert (info.delimiter, info.decimal) == (";", ",")
    assert info.describe() == "CSV, UTF-8, semicolon-separated, decimal comma"
    info = read_table(small_frame().to_csv(index=False, sep="\t").encode("utf-16")).info
    assert info.encoding == "UTF-16" and info.delimiter == "\t"
    assert read_table(parquet()).info.format == "parquet"


def test_decimal_comma_values_and_thousands():
    # the thousands separator is never guessed from the cells (one record would decide how the others are read,
    # privacy review R4-7): it is given (or declared in a schema's format)
    from dpcore.data import load_table

    ds = load_table(read_table(b"a;b\n1.234,5;2\n2.000,0;3\n15,5;4\n", thousands="."))
    np.testing.assert_allclose(ds.X[:, 0], [1234.5, 2000.0, 15.5])
    ds = load_table(read_table(b'a,b\n"1,234.5",2\n"2,000",3\n15.5,4\n', thousands=","))
    np.testing.assert_allclose(ds.X[:, 0], [1234.5, 2000.0, 15.5])
    table = read_table(b"a;b\n1.234,5;2\n2.000,0;3\n15,5;4\n")
    assert table.info.file_format.thousands is None and "thousands" not in table.info.file_format.from_data
    assert "thousands" in read_table(b"a;b\n1.234,5;2\n2,5;3\n", thousands=".").info.describe()


def test_overrides_of_detection_and_roles():
    data = semicolon_decimal_comma()
    # a wrong delimiter override is applied, not second-guessed: the error names the separator used
    with pytest.raises(DataError, match="comma-separated"):
        read_table(data, delimiter=",")
    # decimal point forced: the comma numbers are no longer numbers
    roles = {c.name: c.role for c in infer_roles(read_table(data, decimal=".")).columns}
    assert roles["height"] != R.NUMERIC
    ds = load_csv(data, roles={"id": "numeric", "city": "excluded"})
    assert ds.feature_names == ("id", "height", "weight")
    with pytest.raises(InvalidParameterError, match="unknown role 'nummeric'"):
        load_csv(data, roles={"id": "nummeric"})
    with pytest.raises(DataError, match=r"'nope'.*not in the file"):
        load_csv(data, roles={"nope": "numeric"})
    with pytest.raises(DPCoreError, match=r"'city'.*role"):
        load_csv(data, roles={"city": "numeric"})  # text cannot be numeric: names the column and the field


def test_mostly_empty_column_no_longer_empties_the_file():
    """The issue's example: a mostly-empty comments column and an ID; 'drop rows' used to remove almost every row."""
    n = 300
    notes = np.where(rng.random(n) < 0.9, "", np.array(["late", "ok", "check"])[rng.integers(0, 3, n)])
    data = _csv(pd.DataFrame({"Individual ID": np.arange(5000, 5000 + n), "x": rng.normal(size=n).round(3),
                              "y": rng.normal(size=n).round(3), "Comments": notes}))
    report = infer_roles(read_table(data))
    assert report["Comments"].role == R.EXCLUDED and "missing" in report["Comments"].reason
    assert report["Individual ID"].role == R.IDENTIFIER
    ds = load_csv(data)  # missing='drop' by default
    assert ds.n == n and ds.feature_names == ("x", "y")
    assert "rows_with_missing_values" not in ds.diagnostics


def test_mixed_column_counts_go_to_diagnostics_only():
    ds = load_csv(mixed_types(), missing="zero")
    assert ds.diagnostics["non_numeric_values"] == {"count": 2}
    assert not any("2" in e.note for e in ds.load_ledger)  # the count is a diagnostic, never in the ledger


@pytest.mark.slow
def test_wide_numeric_runs_with_a_warning():
    with pytest.warns(WideDataWarning, match="3,000 feature columns"):
        ds = load_csv(wide())
    assert ds.d == 3000 and ds.n == 50
    assert any("more feature columns" in note for note in ds.diagnostics["notes"])


def test_label_candidate_and_label_role():
    data = dates_ids_flags()
    report = infer_roles(read_table(data))
    assert report["target"].label_candidate and "label" in report["target"].reason
    report = infer_roles(read_table(data), label="target")
    assert report["target"].role == R.LABEL and not report["target"].included
    ds = load_csv(data, label="target")
    assert ds.y is not None and "target" not in ds.feature_names


def test_small_files_keep_their_text_columns():
    """Identifier and mostly-empty rules need a sample: a 3-row file one-hot encodes its text as before."""
    report = infer_roles(read_table(b"name,x\nann,1\nbob,2\ncid,3\n"))
    assert report["name"].role == R.CATEGORICAL


def test_excel_sep_line_and_trailing_separators():
    ds = load_csv(b"sep=;\na;b;\n1,5;2;\n2,5;3;\n3,5;1;\n")
    assert ds.feature_names == ("a", "b")  # the trailing empty column is left out
    np.testing.assert_allclose(ds.X[:, 0], [1.5, 2.5, 3.5])


def test_binary_formats_write_nothing_to_disk(monkeypatch, tmp_path):
    import builtins
    import os
    import tempfile

    data = parquet()
    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(m in mode for m in "wax+"):
            raise AssertionError(f"write attempted: {file!r} mode {mode!r}")
        return real_open(file, mode, *args, **kwargs)

    before = set(os.listdir(tempfile.gettempdir()))
    monkeypatch.setattr(builtins, "open", guarded_open)
    ds = load_csv(data)
    ds2 = load_csv(semicolon_decimal_comma(), schema={"format": {"delimiter": ";", "decimal": ",", "thousands": "."},
                                                      "columns": [{"name": "height", "role": "numeric", "lower": 1,
                                                                   "upper": 2.2}]})
    monkeypatch.undo()
    assert ds.d == 4 and ds2.d == 1
    assert not {f for f in set(os.listdir(tempfile.gettempdir())) - before if f.endswith((".csv", ".parquet"))}


def test_excel_without_openpyxl_names_the_fix(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openpyxl" else real(name, *a))
    with pytest.raises(DataError, match="openpyxl"):
        read_table(xlsx())


# ---------------------------------------------------------------------------------------------------------------
# #19 "Roles the guesser misses": repeated-ID columns and whole-number code columns, on generated tables
# ---------------------------------------------------------------------------------------------------------------

def _long_table(id_name: str, subjects: int = 30, per: int = 4):
    r = np.random.default_rng(12)
    n = subjects * per
    frame = pd.DataFrame({id_name: np.repeat(np.arange(1, subjects + 1), per),
                          "visit": np.tile(np.arange(per), subjects),
                          "weight": r.normal(70, 9, n).round(1), "mode": r.choice([1, 2, 3, 4], n),
                          "region": r.choice([10, 20, 40, 70], n), "count": r.integers(0, 5, n)})
    return read_table(frame.to_csv(index=False).encode(), name="long")


@pytest.mark.parametrize("id_name", ["individual", "Sample Number", "subject_id", "q7"])
def test_a_repeated_id_column_is_detected_with_a_reason(id_name):
    from dpcore.data import draft_schema

    table = _long_table(id_name)
    report = infer_roles(table)
    d = report[id_name]
    assert d.role == ColumnRole.IDENTIFIER and not d.included
    assert "runs" in d.reason and "30 values" in d.reason
    assert "role" in draft_schema(table, report)[id_name].from_data  # a draft, marked as read off the data


def test_code_columns_are_categorical_with_a_reason_and_counts_stay_numeric():
    from dpcore.data import draft_schema

    table = _long_table("individual")
    report = infer_roles(table)
    assert report["mode"].role == ColumnRole.CATEGORICAL
    assert "4 whole-number codes (1, 2, 3, 4)" in report["mode"].reason
    assert report["region"].role == ColumnRole.CATEGORICAL  # codes 10/20/40/70 under a code-like name
    assert report["count"].role == ColumnRole.NUMERIC  # 0–4 without a code name: a count
    assert report["weight"].role == ColumnRole.NUMERIC
    draft = draft_schema(table, report)
    assert {"role", "categories"} <= draft["mode"].from_data and draft["mode"].categories == ("1", "2", "3", "4")


def test_a_value_that_comes_back_is_not_a_repeated_id():
    r = np.random.default_rng(13)
    values = np.concatenate([np.tile(np.arange(1, 31), 3), np.arange(1, 16)])  # 1..30, 1..30, 1..30, 1..15
    frame = pd.DataFrame({"individual": values, "x": r.normal(size=values.size)})
    report = infer_roles(read_table(frame.to_csv(index=False).encode()))
    assert report["individual"].role == ColumnRole.NUMERIC
    # each of 30 values in exactly 4 rows under an ID-like name: a balanced panel's units (issue 32 item 9)
    frame = pd.DataFrame({"individual": np.tile(np.arange(1, 31), 4), "x": r.normal(size=120)})
    decision = infer_roles(read_table(frame.to_csv(index=False).encode()))["individual"]
    assert decision.role == ColumnRole.IDENTIFIER and "panel" in decision.reason


def test_few_whole_numbers_without_a_code_name_stay_numeric():
    r = np.random.default_rng(14)
    frame = pd.DataFrame({"b": r.choice([0, 1, 2, 4], 60), "x": r.normal(size=60)})  # gapped, but no code name
    assert infer_roles(read_table(frame.to_csv(index=False).encode()))["b"].role == ColumnRole.NUMERIC
