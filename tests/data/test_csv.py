"""CSV uploads: one test per bad input (clear DataError), happy paths, and no disk writes."""

from __future__ import annotations

import builtins
import io
import os
import tempfile

import numpy as np
import pytest

from dpcore.data import example_csv_bytes, load_csv
from dpcore.data.csv import STRUCTURE_STEP
from dpcore.exceptions import DataError, InvalidParameterError

GOOD = b"a,b,colour,label\n1,2,red,x\n2,3.5,blue,y\n3,1,red,x\n4,0,green,y\n"


def _err(data, **kw) -> str:
    with pytest.raises(DataError) as exc:
        load_csv(data, **kw)
    return str(exc.value)


# --- bad inputs ----------------------------------------------------------------------------------------

def test_empty_file():
    assert "empty" in _err(b"")
    assert "empty" in _err(b"  \n\n")


def test_non_utf8():
    msg = _err(b"a,b\n\xff\xfe,1\n2,3\n")
    assert "UTF-8" in msg and "re-save" in msg


def test_binary_file_with_nul_bytes():
    assert "NUL" in _err(b"PK\x03\x04\x00\x00junk,1\n1,2\n")


def test_ragged_row_is_refused_without_naming_the_record():
    # the refusal names the problem and the fix, not the record's line or field count (privacy review R4-1)
    msg = _err(b"a,b,c\n1,2,3\n4,5\n6,7,8\n")
    assert "header has 3" in msg and "quote values" in msg
    assert "line 3" not in msg and "2 fields" not in msg
    assert msg == _err(b"a,b,c\n1,2,3\n4,5,6\n6,8\n")  # the same refusal wherever the ragged line is
    assert "header has 2" in _err(b"a,b\n1,2,3\n4,5\n")  # too many fields


def test_single_data_row():
    assert "single data row" in _err(b"a,b\n1,2\n")


def test_header_only():
    assert "no data rows" in _err(b"a,b\n")


def test_fewer_rows_than_k():
    msg = _err(b"a,b,c,d\n1,2,3,4\n2,3,4,6\n3,1,0,1\n", k=4)
    assert "3 rows" in msg and "k = 4" in msg


def test_no_numeric_columns_after_encoding():
    msg = _err(b"name,colour\nann,red\nbob,blue\ncid,red\n", categorical="drop")
    assert "no numeric columns" in msg and "onehot" in msg


def test_constant_columns_are_dropped_with_a_note():
    ds = load_csv(b"a,b,c\n1,5,0\n2,5,1\n3,5,0\n")
    assert ds.feature_names == ("a", "c")
    assert any("'b'" in note and "constant" in note for note in ds.diagnostics["notes"])
    # which columns are features was read off the data: recorded as not private, in words that do not depend on
    # what the data decided (the column names are in the non-private notes)
    step = next(e for e in ds.load_ledger if e.step == STRUCTURE_STEP)
    assert not step.private and "'b'" not in step.note
    assert ds.load_ledger == load_csv(b"a,b,c\n1,5,0\n2,6,1\n3,5,0\n").load_ledger  # b no longer constant
    msg = _err(b"a,b\n1,5\n1,5\n")  # nothing left: a clear error naming the columns
    assert "'a'" in msg and "constant" in msg and "role" in msg


def test_too_many_columns_after_one_hot():
    # 40 categories, 6 or 7 rows each (each in 2 rows, or each in the same number, would name records: identifier)
    rows = "\n".join(f"{(i * 7) % 11 / 3:.3f},cat{i % 40}" for i in range(250))
    msg = _err(("x,kind\n" + rows + "\n").encode(), max_columns=10)
    assert "41 columns" in msg and "max_columns = 10" in msg and "'kind' (40 distinct values)" in msg
    # categorical='drop' is the suggested fix and works
    assert load_csv(("x,kind\n" + rows + "\n").encode(), max_columns=10, categorical="drop").d == 1


def test_too_many_numeric_columns_names_the_real_cause():
    data = ("a,b,c\n" + "\n".join(f"{i % 9 + 0.5},{i * i % 7},{i % 5}" for i in range(30)) + "\n").encode()
    msg = _err(data, max_columns=2)
    assert "numeric feature columns" in msg and "max_columns = 2" in msg and "one-hot" not in msg


def test_an_infinite_cell_is_not_refused():
    """One record cannot make the load fail (issue 18 item 6): an infinite cell follows the declared policy and
    is counted in the (non-private) diagnostics; the other records are unchanged."""
    ds = load_csv(b"a,b\n1,2\ninf,3\n4,5\n")
    assert ds.n == 3 and np.isfinite(ds.X).all() and ds.diagnostics["non_finite_values"] == {"a": 1}
    np.testing.assert_array_equal(ds.X[[0, 2]], [[1, 2], [4, 5]])


def test_label_not_found_lists_columns():
    msg = _err(GOOD, label="Label")
    assert "'Label' not found" in msg and "'colour'" in msg and "'label'" in msg


def test_label_with_one_class_is_a_diagnostic_not_a_refusal():
    ds = load_csv(b"a,b,y\n1,2,k\n2,3,k\n3,5,k\n", label="y")
    assert any("fewer than two classes" in note for note in ds.diagnostics["notes"])


def test_too_many_rows():
    data = ("a,b\n" + "\n".join(f"{i},{i * i}" for i in range(20)) + "\n").encode()
    assert "max_rows" in _err(data, max_rows=10)


def test_duplicate_header():
    assert "appears twice" in _err(b"a,a\n1,2\n3,4\n")


def test_all_rows_missing_after_drop():
    assert "missing='zero'" in _err(b"a,b\n1,\n,2\n3,\n")


def test_semicolon_separated_is_read():
    ds = load_csv(b"a;b\n1;2\n3;4\n")
    assert ds.feature_names == ("a", "b") and ds.n == 2


def test_invalid_parameters():
    with pytest.raises(InvalidParameterError):
        load_csv(GOOD, categorical="ordinal")
    with pytest.raises(InvalidParameterError):
        load_csv(GOOD, missing="median")
    with pytest.raises(InvalidParameterError):
        load_csv(12345)


# --- happy paths ----------------------------------------------------------------------------------------

def test_one_hot_and_label():
    ds = load_csv(GOOD, label="label", name="toy")
    assert ds.name == "toy" and ds.n == 4
    assert ds.feature_names == ("a", "b", "colour=blue", "colour=green", "colour=red")
    np.testing.assert_array_equal(ds.X[:, 2:], [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert ds.y.tolist() == ["x", "y", "x", "y"]
    vocab = [e for e in ds.load_ledger if "one-hot" in e.step]
    assert len(vocab) == 1 and not vocab[0].private and "colour" not in vocab[0].note
    assert ds.feature_ranges is None


def test_without_a_schema_the_structure_is_flagged_whatever_the_data():
    ds = load_csv(GOOD, label="label", categorical="drop")
    assert ds.feature_names == ("a", "b")
    # which columns are text was read off the data: never private without a schema, and the same steps whether or
    # not the data has text columns
    assert next(e.step for e in ds.load_ledger if not e.private) == STRUCTURE_STEP
    numeric = load_csv(b"a,b,label\n1,2,x\n2,1,y\n3,3,x\n", label="label", categorical="drop")
    assert numeric.load_ledger == ds.load_ledger


def test_numeric_label_becomes_int():
    ds = load_csv(b"a,b,y\n1,2,0\n2,1,1\n3,3,1\n", label="y")
    assert ds.y.dtype.kind == "i" and ds.y.tolist() == [0, 1, 1]


MISSING = b"a,b,c\n1,,x\n2,4,\n3,6,y\n5,8,x\n"


def test_missing_drop():
    ds = load_csv(MISSING, missing="drop")
    assert ds.n == 2
    np.testing.assert_array_equal(ds.X[:, :2], [[3, 6], [5, 8]])
    # dropping rows makes n data-dependent: recorded as not private, the exact count only in the diagnostics
    assert any("drop rows" in e.step and not e.private for e in ds.load_ledger)
    assert ds.diagnostics["rows_with_missing_values"] == 2
    assert not any("2" in e.note for e in ds.load_ledger)


def test_missing_zero():
    ds = load_csv(MISSING, missing="zero")
    assert ds.n == 4
    assert ds.X[0, 1] == 0.0
    np.testing.assert_array_equal(ds.X[1, 2:], [0, 0])  # missing category → all-zero indicators
    assert all(e.private for e in ds.load_ledger if "fill" in e.step)


def test_missing_mean_is_flagged_not_private():
    ds = load_csv(MISSING, missing="mean")
    assert ds.X[0, 1] == pytest.approx(6.0)  # mean of 4, 6, 8
    steps = {e.step: e for e in ds.load_ledger}
    assert not steps["mean imputation of missing values"].private
    assert ds.nonprivate_steps


def test_missing_tokens():
    ds = load_csv(b"a,b\n1,NA\n2,?\n3,4\n5,null\n6,7\n", missing="zero")
    np.testing.assert_array_equal(ds.X[:, 1], [0, 0, 4, 0, 7])


@pytest.mark.parametrize("make", [
    lambda: GOOD,
    lambda: bytearray(GOOD),
    lambda: GOOD.decode(),
    lambda: io.BytesIO(GOOD),
    lambda: io.StringIO(GOOD.decode()),
])
def test_sources(make):
    ds = load_csv(make(), label="label")
    assert ds.X.shape == (4, 5)


def test_path_source(tmp_path):
    p = tmp_path / "data.csv"
    p.write_bytes(GOOD)
    assert load_csv(p, label="label").n == 4
    assert load_csv(str(p), label="label").n == 4
    assert "no file" in _err(str(tmp_path / "nope.csv"))


def test_bom_quotes_and_blank_lines():
    data = '\ufeffname,x,y\n"Smith, J",1,2\n\n"Doe, A",3,5\n"Roe, B",4,4\n'.encode()
    ds = load_csv(data)
    assert ds.feature_names[-2:] == ("x", "y") and ds.n == 3  # columns keep their order
    assert "name=Smith, J" in ds.feature_names


def test_example_csv_loads_cleanly():
    raw = example_csv_bytes()
    n_lines = raw.count(b"\n") - 1
    assert 200 <= n_lines <= 400
    ds = load_csv(raw, label="passed", k=2)
    assert ds.n == n_lines and ds.labels and set(np.unique(ds.y)) == {"no", "yes"}
    assert any("=" in f for f in ds.feature_names) and "hours_studied" in ds.feature_names


def test_nothing_written_to_disk(monkeypatch):
    """load_csv must not open any file for writing nor create temporary files."""
    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(m in mode for m in "wax+"):
            raise AssertionError(f"write attempted: {file!r} mode {mode!r}")
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise AssertionError(f"write attempted: {path!r}")
        return real_os_open(path, flags, *args, **kwargs)

    tmpdir = tempfile.gettempdir()
    before = set(os.listdir(tmpdir))
    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    ds = load_csv(io.BytesIO(example_csv_bytes()), label="passed", missing="mean")
    ds2 = load_csv(GOOD, label="label")
    monkeypatch.undo()
    assert ds.n > 0 and ds2.n == 4
    new = {f for f in set(os.listdir(tmpdir)) - before if "dpcore" in f or f.endswith(".csv")}
    assert not new


def test_crlf_whitespace_lines_spaces_and_booleans():
    ds = load_csv(b"a,b\r\n1 ,2\r\n   \r\n3, 5 \r\n4,4\r\n")
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 5], [4, 4]])
    ds = load_csv(b"a,b\n1,True\n2,False\n3,True\n")
    assert ds.feature_names == ("a", "b=False", "b=True")  # booleans are categories, not numbers
    ds = load_csv(b"a,b\n1,NULL\n2,3\n4, n/a \n", missing="zero")
    np.testing.assert_array_equal(ds.X[:, 1], [0, 3, 0])


@pytest.mark.slow
def test_large_upload_is_read_exactly():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(50_000, 10)), 4)
    text = "\n".join([",".join(f"c{i}" for i in range(10))] + [",".join(map(str, r)) for r in X]) + "\n"
    ds = load_csv(text.encode())
    np.testing.assert_array_equal(ds.X, X)


def test_missing_in_dropped_categorical_column_keeps_rows():
    data = b"a,b,note\n1,2,\n2,1,ok\n3,5,\n"
    assert load_csv(data, categorical="drop").n == 3
    with pytest.raises(DataError, match="missing"):  # with one-hot the blank notes count: only 1 row is left
        load_csv(data, categorical="onehot")


# #19: TSV headers with quote characters ('popul', "popul") are stripped consistently, so a label can be named plainly
@pytest.mark.parametrize("quote", ["'", '"', "`"])
def test_quoted_tsv_headers_are_stripped(quote):
    from dpcore.data import read_table

    rows = [f"{quote}popul{quote}\t{quote}area{quote}\t{quote}vote{quote}"]
    rows += [f"{100 + 3 * i}\t{i % 7 + 0.5}\t{'yes' if i % 2 else 'no'}" for i in range(40)]
    raw = ("\n".join(rows) + "\n").encode()
    assert read_table(raw).columns == ["popul", "area", "vote"]
    ds = load_csv(raw, label="vote")
    assert ds.feature_names == ("popul", "area") and ds.options["label"] == "vote"
