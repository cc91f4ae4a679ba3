"""Missing cells are not clamping (issue 32, item 4): an empty cell filled with 0 below a public lower bound of 1 is a
missing value, reported apart (a non-private note), and ``dpcore schema check`` reports what ``dpcore sweep`` does —
one function (:func:`dpcore.data.diagnostics.encoder_report`) for both."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.data import load_csv, load_schema
from dpcore.data.diagnostics import NOT_PRIVATE_LABEL, clamp_report

N = 200
_rng = np.random.default_rng(3)
_x = _rng.uniform(2, 9, N)
_empty = np.arange(N) % 6 == 0  # 34 of 200 rows: 17.0 %
_z = _rng.uniform(0, 50, N)
CSV = ("x,z,w\n" + "".join(f"{'' if e else f'{x:.2f}'},{z:.2f},{_rng.normal():.3f}\n"
                           for x, z, e in zip(_x, _z, _empty))).encode()
SCHEMA = {"dpcore_schema": 1, "format": {"kind": "csv"}, "label": None, "columns": [
    {"name": "x", "role": "numeric", "lower": 1, "upper": 10},
    {"name": "z", "role": "numeric", "lower": 0, "upper": 40},  # clamps the values above 40: ~20 % of the rows
    {"name": "w", "role": "numeric", "lower": -5, "upper": 5}]}
CLAMPED_Z = float(np.mean(_z > 40))


@pytest.mark.parametrize("missing", ["zero", "drop", "mean"])
def test_a_missing_cell_is_not_counted_as_clamped(missing):
    dataset = load_csv(CSV, schema=load_schema(SCHEMA), missing=missing)
    report = clamp_report(dataset)
    assert "x" not in report.shares  # on 563c1b2: x 17.0 % "clamped" under missing = zero
    assert report.shares["z"] == pytest.approx(CLAMPED_Z)
    assert report.missing == {"x": pytest.approx(_empty.mean())} and report.n_rows == N
    assert list(report.large) == ["z"]
    note = report.missing_note()
    assert NOT_PRIVATE_LABEL in note and "'x' 17.0 %" in note and "not clamped" in note and missing in note


def _write(tmp_path):
    table, schema = tmp_path / "t.csv", tmp_path / "s.yaml"
    table.write_bytes(CSV)
    schema.write_text(load_schema(SCHEMA).confirmed().to_yaml())
    return str(table), str(schema)


def test_schema_check_and_sweep_report_the_same(tmp_path, capsys):
    table, schema = _write(tmp_path)
    assert main(["schema", "check", "--schema", schema, "--csv", table]) == 0
    check = capsys.readouterr()
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--csv", table, "--schema", schema, "--mechanisms", "pca", "--epsilons", "1", "--k", "1",
                 "--trials", "1", "--missing", "zero", "--out", str(out)]) == 0
    sweep = capsys.readouterr().err
    for text in (check.out + check.err, sweep):
        assert "'x' 17.0 %" in text and "missing" in text  # the note on missing cells, in both
        assert "'z' (" in text and "clamp more than 5.0 %" in text  # the clamping warning, in both
        assert "'x' (17.0 %)" not in text  # never as clamping
    assert check.err.count("warning") == 1
