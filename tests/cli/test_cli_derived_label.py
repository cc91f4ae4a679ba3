"""#19 "Labels" on the command line: ``--label-above COLUMN=NUMBER`` / ``--label-nonzero COLUMN`` (sweep, release,
``schema infer``) and a schema's ``label: {column, above}``; bad values exit 2 with a message that names the flag."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.data import load_schema


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def csv(tmp_path):
    r = np.random.default_rng(21)
    n = 120
    path = tmp_path / "grades.csv"
    pd.DataFrame({"hours": r.normal(10, 2, n).round(2), "score": r.normal(60, 9, n).round(1),
                  "income": r.normal(50, 10, n).round(2), "kids": r.integers(0, 3, n)}).to_csv(path, index=False)
    return path


_SWEEP = ["--norm-bound", "10", "--feature-scaling", "none", "--mechanisms", "analyze_gauss", "--epsilons", "1",
          "--k", "1", "--trials", "1", "--seed", "5", "--jobs", "1"]


def test_label_above_runs_with_the_source_column_left_out_of_the_features(capsys, tmp_path, csv):
    out = tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--label-above", "income=50", *_SWEEP, "--out", str(out))
    assert code == 0, err
    row = pd.read_csv(out).iloc[0]
    assert row.status == "ok" and row.d == 3  # hours, score, kids: income is the label's source, not a feature
    assert np.isfinite(row.svm_accuracy) and np.isfinite(row.captured_variance_ratio)
    assert "label: income > 50" in err
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--label-nonzero", "kids", *_SWEEP, "--out", str(out))
    assert code == 0, err
    assert "label: kids ≠ 0" in err and pd.read_csv(out).d.iloc[0] == 3


@pytest.mark.parametrize(("flags", "needles"), [
    (["--label-above", "income=fifty"], ["--label-above income=fifty: 'fifty' is not a finite number",
                                         "--label-above income=50000"]),
    (["--label-above", "income=inf"], ["'inf' is not a finite number"]),
    (["--label-above", "income"], ["--label-above expects COLUMN=NUMBER"]),
    (["--label-above", "incme=50"], ["--label-above names column 'incme'", "did you mean 'income'?"]),
    (["--label-nonzero", "nope"], ["--label-nonzero names column 'nope'"]),
    (["--label-above", "income=50", "--label", "kids"], ["--label and --label-above were both given"]),
    (["--label-nonzero", "kids", "--no-label"], ["--label-nonzero and --no-label were both given"]),
])
def test_bad_label_flags_exit_2_naming_the_flag(capsys, tmp_path, csv, flags, needles):
    out = tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), *flags, *_SWEEP, "--out", str(out))
    assert code == 2, err
    assert all(n in err for n in needles), err
    assert "Traceback" not in err and "label_rule" not in err and not out.exists()


def test_label_flags_on_a_built_in_dataset_are_refused(capsys, tmp_path):
    code, _, err = run(capsys, "sweep", "--dataset", "wine", "--label-above", "x=1", *_SWEEP,
                       "--out", str(tmp_path / "o.csv"))
    assert code == 2 and "--label-above only applies to --csv" in err


def test_schema_infer_writes_the_declaration_and_the_sweep_uses_it(capsys, tmp_path, csv):
    schema_path = tmp_path / "s.yaml"
    code, _, err = run(capsys, "schema", "infer", "--csv", str(csv), "--label-above", "income=50", "--quiet",
                       "--out", str(schema_path))
    assert code == 0, err
    text = schema_path.read_text()
    assert "label: {column: income, above: 50}" in text
    schema = load_schema(schema_path)
    assert schema.label_text == "income > 50" and "label" not in schema.from_data  # typed: a declaration
    code, out, _ = run(capsys, "schema", "check", "--schema", str(schema_path), "--json")
    assert code == 0 and json.loads(out)["label"] == "income > 50"
    out_csv = tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema_path), *_SWEEP, "--quiet",
                       "--out", str(out_csv))
    assert code == 0, err
    assert pd.read_csv(out_csv).d.iloc[0] == 3
    # the same rule on the command line is accepted, another one is refused naming the flag
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema_path), "--label-above",
                       "income=50", *_SWEEP, "--quiet", "--out", str(out_csv))
    assert code == 0, err
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema_path), "--label-above",
                       "income=60", *_SWEEP, "--quiet", "--out", str(out_csv))
    assert code == 2 and "--label-above income=60: the schema already declares the label income > 50" in err
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema_path), "--label-nonzero",
                       "kids", *_SWEEP, "--quiet", "--out", str(out_csv))
    assert code == 2 and "--label-nonzero kids: the schema's label is 'income'" in err


def test_a_streamed_run_derives_the_same_label(capsys, tmp_path, csv):
    schema_path = tmp_path / "s.yaml"
    assert run(capsys, "schema", "infer", "--csv", str(csv), "--no-label", "--quiet", "--out",
               str(schema_path))[0] == 0
    rows = {}
    for how in ([], ["--stream"]):
        out = tmp_path / f"o{len(how)}.csv"
        code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema_path), "--label-above",
                           "income=50", *_SWEEP, *how, "--quiet", "--out", str(out))
        assert code == 0, err
        rows[bool(how)] = pd.read_csv(out).iloc[0]
    assert rows[False].d == rows[True].d == 3
    assert rows[False].svm_majority_baseline == pytest.approx(rows[True].svm_majority_baseline)


def test_release_takes_the_flag_too(capsys, csv):
    code, out, err = run(capsys, "release", "--csv", str(csv), "--label-above", "income=50", "--norm-bound", "10",
                         "--feature-scaling", "none", "--mechanism", "analyze_gauss", "--epsilon", "1", "--delta",
                         "1e-5", "--k", "1", "--seed", "3", "--quiet")
    assert code == 0, err
    assert json.loads(out)
