"""Issue 18, items 1 and 3: the file format and the table structure are public inputs of a private run.

Each test reads two neighbouring files D and D′ (one record replaced) and checks that no public output — how the
other records are read, success vs refusal, d and the columns, the "public"/"private" labels, the ledger — depends on
that record, unless the run says it is not private. All of them fail on 40144d4, where the decimal mark, delimiter
and encoding were guessed from the cells and inferred roles, the guessed label and content-based drops counted as
public (see the notes at each test).

The schemas are built by :func:`_schema`, which declares the file format; on 40144d4 (which had no format field)
it falls back to the same schema without one, so that the tests show the leak there instead of a schema error.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.data import (
    SchemaError,
    draft_schema,
    infer_roles,
    load_csv,
    load_schema,
    load_table,
    preprocess,
    read_table,
)
from dpcore.data.roles import guess_label
from dpcore.data.schema import VALUE_FIELDS


def _schema(columns: list[dict], label: str | None = None, **fmt):
    """A public schema with a declared file format (on 40144d4: the same schema without the format)."""
    data = {"dpcore_schema": 1, "label": label, "columns": columns, "format": {"kind": "csv", **fmt}}
    try:
        return load_schema(data)
    except SchemaError:  # 40144d4: no `format` field, the reader guessed the format
        data.pop("format")
        return load_schema(data)


def _outcome(data: bytes, schema, **kw):
    """What a run publishes about the loading: success or the refusal's type, and d, columns, ledger, privacy."""
    try:
        ds = load_csv(data, schema=schema, **kw)
    except Exception as exc:  # a refusal is an output too
        return ("refused", type(exc).__name__)
    return ("ok", ds.d, ds.feature_names, tuple((e.step, e.note, e.private) for e in ds.load_ledger))


# --- item 1: the file format ---------------------------------------------------------------------------------

def _semicolon_file(last_b: str) -> bytes:
    """150 records with a = "4.900" (4900 in a decimal-comma file with "." thousands), 150 with b = "1,25", and one
    record whose b is ``last_b``."""
    rows = [f"4.900;{i % 7}" for i in range(150)] + [f"{i % 5};1,25" for i in range(150)] + [f"2;{last_b}"]
    return ("a;b\n" + "\n".join(rows) + "\n").encode()


def test_one_record_does_not_decide_the_decimal_mark_of_the_others():
    """40144d4: "3" vs "3,5" in one record tips the decimal-mark vote (150 vs 151 comma cells), so the 150 cells
    "4.900" are read as 4.9 on D and as 4900 on D′ — both labelled private."""
    schema = _schema([{"name": "a", "role": "numeric", "lower": 0, "upper": 10_000},
                      {"name": "b", "role": "numeric", "lower": 0, "upper": 10}],
                     delimiter=";", decimal=",", thousands=".")
    D, D2 = load_csv(_semicolon_file("3"), schema=schema), load_csv(_semicolon_file("3,5"), schema=schema)
    np.testing.assert_array_equal(D.X[:300], D2.X[:300])  # every other record is read the same way
    assert D.X[0, 0] == 4900.0 and D2.X[-1, 1] == 3.5
    assert [e.step for e in D.load_ledger] == [e.step for e in D2.load_ledger]


def test_one_record_does_not_decide_the_delimiter():
    """40144d4: a record "12;34" in a six-row comma file tips the delimiter detection to ";" (the comma no longer
    splits 90 % of the rows alike): D is read, D′ is refused (the schema's columns are not in the file)."""
    rows = ["1,2;3,4", "2,3;4,5", "3,1;2,6", "4,4;1,7", "5,6;2,8", "6,5;4,9"]
    D = ("a,b;c,d\n" + "\n".join(rows) + "\n").encode()
    D2 = ("a,b;c,d\n" + "\n".join([*rows[:-1], "12;34"]) + "\n").encode()
    schema = _schema([{"name": "a", "role": "numeric", "lower": 0, "upper": 10},
                      {"name": "d", "role": "numeric", "lower": 0, "upper": 10}])
    out, out2 = _outcome(D, schema), _outcome(D2, schema)
    assert out[0] == out2[0] == "ok" and out[1:3] == out2[1:3]
    np.testing.assert_array_equal(load_csv(D, schema=schema).X[:5], load_csv(D2, schema=schema).X[:5])


@pytest.mark.parametrize("bad_record", [b"7,\xff\xfe", b"7", b'7,"open quote', b"7,8,9"],
                         ids=["invalid UTF-8", "too few fields", "unclosed quote", "too many fields"])
def test_one_record_cannot_make_the_reading_fail_or_move_the_others(bad_record):
    """40144d4: invalid UTF-8 in one record refused the whole file ("not UTF-8 text"), a line with the wrong number
    of fields was refused naming its line, and an unclosed quote swallowed the records after it."""
    good = [f"{i % 9},{(3 * i) % 7}".encode() for i in range(40)]
    D = b"x,y\n" + b"\n".join(good) + b"\n"
    D2 = b"x,y\n" + b"\n".join([*good[:20], bad_record, *good[21:]]) + b"\n"
    schema = _schema([{"name": "x", "role": "numeric", "lower": 0, "upper": 10},
                      {"name": "y", "role": "numeric", "lower": 0, "upper": 10}])
    out, out2 = _outcome(D, schema), _outcome(D2, schema)
    assert out2[0] == "ok" and out[1:] == out2[1:]
    X, X2 = load_csv(D, schema=schema).X, load_csv(D2, schema=schema).X
    others = np.arange(40) != 20
    np.testing.assert_array_equal(X[others], X2[others])


def test_a_schema_without_a_declared_format_is_not_public():
    """40144d4: a schema with public bounds was public although the file format was guessed from the cells."""
    columns = [{"name": "x", "role": "numeric", "lower": 0, "upper": 10}]
    undeclared = load_schema({"columns": columns})
    assert not undeclared.is_public
    ds = load_csv(b"x\n1\n2\n3\n", schema=undeclared)
    assert not preprocess(ds).is_private
    declared = load_schema({"columns": columns, "format": {"kind": "csv"}})
    assert declared.is_public and preprocess(load_csv(b"x\n1\n2\n3\n", schema=declared)).is_private


# --- item 3: the structure -----------------------------------------------------------------------------------

def _values_ticked(data: bytes, label_guess: bool = False):
    """The draft of ``data`` with every bound and category list confirmed (what ticking *public* on each row of the
    Data page's editor did), and the loaded dataset under it."""
    table = read_table(data)
    label = guess_label(table).column if label_guess and guess_label(table) else None
    draft = draft_schema(table, infer_roles(table, label=label))
    ticked = replace(draft, columns=tuple(c.confirmed(VALUE_FIELDS) for c in draft.columns))
    return ticked, load_table(table, schema=ticked)


def _labels_and_structure(data: bytes, **kw):
    schema, ds = _values_ticked(data, **kw)
    return schema.is_public, preprocess(ds).is_private, ds.d, ds.feature_names


def _numeric_file(c_values: list[str], n: int = 30) -> bytes:
    rows = [f"{i % 7},{(5 * i) % 11},{c_values[i % len(c_values)]}" for i in range(n)]
    return ("a,b,c\n" + "\n".join(rows) + "\n").encode()


def test_a_constant_column_becoming_a_feature_is_not_labelled_public():
    """40144d4: with c constant, c is dropped (d = 2); one record with another c makes it a feature (d = 3), and
    both drafts with their values ticked were public, both pipelines private."""
    D = _numeric_file(["5"])
    D2 = D.replace(b"\n0,0,5\n", b"\n0,0,6\n", 1)
    first, second = _labels_and_structure(D), _labels_and_structure(D2)
    assert first[2] != second[2]  # the structure does depend on the record here ...
    assert not first[0] and not second[0] and not first[1] and not second[1]  # ... so neither is called public


def test_the_guessed_label_is_not_public_until_confirmed():
    """40144d4: a last text column with 20 values is guessed as the label (not a feature); a 21st value in one
    record makes it a feature with 21 indicators — both labelled public and private."""
    def file(extra: str) -> bytes:
        rows = [f"{i % 7},{(5 * i) % 11},k{i % 20}" for i in range(199)] + [f"3,4,{extra}"]  # ~10 rows per value
        return ("a,b,kind\n" + "\n".join(rows) + "\n").encode()

    first, second = _labels_and_structure(file("k1"), label_guess=True), \
        _labels_and_structure(file("k99"), label_guess=True)
    assert first[2] != second[2]
    assert not first[0] and not second[0] and not first[1] and not second[1]
    schema, _ = _values_ticked(file("k1"), label_guess=True)
    assert "label" in schema.not_public and schema.structure_confirmed().structure_public


def test_categorical_drop_by_the_share_of_text_cells_is_never_private():
    """40144d4: without a schema, a numeric column with 3 of 30 text cells stays numeric (≤ 10 %), with a fourth it
    is text and categorical='drop' removes it; the ledger said "drop non-numeric columns" as a private step and
    both runs were private with a public B (d = 3 vs 2)."""
    base = _numeric_file([str(v) for v in range(1, 10)])
    lines = base.decode().splitlines()
    for i in (3, 9, 12):
        lines[i] = lines[i].rsplit(",", 1)[0] + ",n/x"
    D = ("\n".join(lines) + "\n").encode()
    lines[15] = lines[15].rsplit(",", 1)[0] + ",n/x"
    D2 = ("\n".join(lines) + "\n").encode()
    runs = [load_csv(data, categorical="drop", missing="zero") for data in (D, D2)]
    assert runs[0].d != runs[1].d
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the PrivacyLeakWarning of the non-private steps
        prepared = [preprocess(ds, norm_bound=20.0) for ds in runs]
    assert not prepared[0].is_private and not prepared[1].is_private
    assert runs[0].load_ledger == runs[1].load_ledger


@pytest.mark.parametrize("missing", ["zero", "drop", "mean"])
def test_the_ledger_does_not_say_whether_a_cell_was_missing(missing):
    """40144d4: without a schema, "fill missing values with 0" (and the drop/mean steps) appeared only when some
    cell was missing, so the ledger told whether one record had a gap."""
    D = _numeric_file([str(v) for v in range(1, 10)])
    D2 = D.replace(b"\n0,0,", b"\n0,,", 1)
    assert D2 != D
    ledgers = [tuple((e.step, e.note, e.private) for e in load_csv(data, missing=missing).load_ledger)
               for data in (D, D2)]
    assert ledgers[0] == ledgers[1]


def test_schema_check_require_public_refuses_inferred_roles(tmp_path, capsys):
    """40144d4: `dpcore schema check --require-public` accepted a draft whose values were confirmed but whose
    roles (and format) were read off the data."""
    schema, _ = _values_ticked(_numeric_file(["5"]))
    path = tmp_path / "ticked.yaml"
    path.write_text(schema.to_yaml())
    assert main(["schema", "check", "--schema", str(path), "--require-public"]) == 1
    assert "not public" in capsys.readouterr().out.lower()
    path.write_text(schema.structure_confirmed().to_yaml())
    assert main(["schema", "check", "--schema", str(path), "--require-public"]) == 0
