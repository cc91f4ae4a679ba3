"""Issue 18, smaller items: every sweep row says whether it is end-to-end private and names the non-private steps
(the CSV, the CLI even with --quiet, Explore's CSV loader and its charts); the share of each column's rows clamped
to the public bounds is a labelled non-private diagnostic (Data page, ``dpcore schema check``, the sweep's notes),
with a warning when large."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.cli import main
from dpcore.data import Dataset, load_dataset, preprocess
from dpcore.data.diagnostics import CLAMP_WARN_SHARE, clamp_report, clamp_report_from_counts
from dpcore.evaluation.sweep import run_sweep
from pages.ui.sweep_loader import KEY, SweepCsvError, load_sweep_csv, privacy_status

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SWEEP = ["--mechanisms", "analyze_gauss,pca", "--epsilons", "1", "--trials", "2", "--k", "1", "--seed", "3",
         "--jobs", "1"]


def _prepared(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return preprocess(load_dataset("wine"), **options)


# ------------------------------------------------------------------ the sweep frame
def test_every_row_says_whether_it_is_end_to_end_private():
    frame = run_sweep(_prepared(), mechanisms=["analyze_gauss", "pca"], epsilons=[1.0], trials=2, seed=1)
    ag, pca = frame[frame["mechanism"] == "analyze_gauss"], frame[frame["mechanism"] == "pca"]
    assert ag["end_to_end_private"].tolist() == [True, True] and (ag["non_private_steps"] == "").all()
    assert not pca["end_to_end_private"].any()
    assert pca["non_private_steps"].str.contains("without a privacy guarantee").all()


@pytest.mark.parametrize(("options", "step"), [
    ({"norm_mode": "max_norm"}, "divide by the maximum row norm"),
    ({"feature_scaling": "minmax"}, "min–max scaling from the data"),
    ({"centering": "empirical"}, "empirical centring"),
])
def test_a_non_private_step_marks_every_row_and_is_named(options, step):
    frame = run_sweep(_prepared(**options), mechanisms=["analyze_gauss", "laplace"], epsilons=[0.5, 2.0], trials=1,
                      seed=1)
    assert not frame["end_to_end_private"].any()
    assert all(step in s.split("; ") for s in frame["non_private_steps"])


def test_the_privacy_columns_survive_the_csv_round_trip(tmp_path):
    frame = run_sweep(_prepared(norm_mode="max_norm"), mechanisms=["analyze_gauss"], epsilons=[1.0], trials=1,
                      seed=1)
    loaded = load_sweep_csv(frame.to_csv(index=False).encode())
    assert loaded["end_to_end_private"].dtype == bool and not loaded["end_to_end_private"].any()
    assert privacy_status(loaded) == (False, ["divide by the maximum row norm"])
    public = run_sweep(_prepared(), mechanisms=["analyze_gauss", "pca"], epsilons=[1.0], trials=1, seed=1)
    assert privacy_status(load_sweep_csv(public.to_csv(index=False).encode()), ("pca",)) == (True, [])
    # an older CSV without the columns: unknown, not "private"
    old = public.drop(columns=["end_to_end_private", "non_private_steps"])
    assert privacy_status(load_sweep_csv(old.to_csv(index=False).encode()))[0] is None
    bad = public.assign(end_to_end_private="maybe")
    with pytest.raises(SweepCsvError, match="end_to_end_private"):
        load_sweep_csv(bad.to_csv(index=False).encode())


# ------------------------------------------------------------------ the CLI
def test_quiet_sweep_still_says_it_is_not_private(tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--dataset", "wine", "--feature-scaling", "minmax", *SWEEP, "--quiet",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "NOT end-to-end private" in err and "min–max scaling from the data" in err
    frame = pd.read_csv(out)
    assert not frame["end_to_end_private"].any()
    assert frame["non_private_steps"].str.contains("min–max scaling from the data").all()


def test_private_sweep_has_no_privacy_note(tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--dataset", "wine", *SWEEP, "--quiet", "--out", str(out)]) == 0
    assert "NOT end-to-end private" not in capsys.readouterr().err
    frame = pd.read_csv(out)
    assert frame.loc[frame["mechanism"] == "analyze_gauss", "end_to_end_private"].all()


# ------------------------------------------------------------------ clamping to public bounds
def _ages(tmp_path: Path) -> tuple[Path, Path]:
    """1,000 ages uniform on 18–89 with a declared upper bound of 54: about half are clamped."""
    rng = np.random.default_rng(0)
    csv = tmp_path / "ages.csv"
    rows = [f"{int(rng.integers(18, 90))},{rng.normal(50, 10):.2f},{'abc'[i % 3]}" for i in range(1000)]
    csv.write_text("age,income,city\n" + "\n".join(rows) + "\n")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": [
        {"name": "age", "role": "numeric", "lower": 0, "upper": 54},
        {"name": "income", "role": "numeric", "lower": 0, "upper": 200},
        {"name": "city", "role": "categorical", "categories": ["a", "b", "c"]}]}))
    return csv, schema


def test_clamp_report_counts_each_column_on_every_path():
    X = np.array([[0.0, 5.0], [2.0, 5.0], [np.nan, 11.0], [1.0, -1.0]])
    ds = Dataset("t", "t", X, feature_names=("a", "b"), feature_ranges=np.array([[0.0, 1.0], [0.0, 10.0]]))
    report = clamp_report(ds)
    assert report.shares == {"a": 0.25, "b": 0.5} and report.n_rows == 4
    assert list(report.large) == ["b", "a"] and "'b' (50.0 %)" in report.warning()
    assert "non-private" in report.summary() and report.as_dict()["private"] is False
    assert clamp_report_from_counts({"b": 2, "a": 1}, 4).shares == report.shares
    small = clamp_report_from_counts({"a": 1}, 1000)
    assert small.shares == {"a": 0.001} and small.warning() == "" and CLAMP_WARN_SHARE == 0.05
    assert clamp_report(Dataset("u", "u", X)).shares == {}  # no public ranges: nothing is clamped


def test_schema_check_reports_the_clamped_share(tmp_path, capsys):
    csv, schema = _ages(tmp_path)
    assert main(["schema", "check", "--schema", str(schema), "--csv", str(csv)]) == 0
    captured = capsys.readouterr()
    assert "age 51.4 %" in captured.out and "non-private diagnostic" in captured.out
    assert "warning" in captured.err and "'age' (51.4 %)" in captured.err
    assert main(["schema", "check", "--schema", str(schema), "--csv", str(csv), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["clamping"]["clamped_share"] == {"age": pytest.approx(0.514)}
    assert summary["clamping"]["private"] is False


def test_quiet_sweep_warns_about_heavy_clamping(tmp_path, capsys):
    csv, schema = _ages(tmp_path)
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--csv", str(csv), "--schema", str(schema), *SWEEP, "--quiet", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "'age' (51.4 %)" in err


# ------------------------------------------------------------------ the dashboard
def _charts(at: AppTest) -> dict[str, dict]:
    return {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def test_explore_warns_when_a_loaded_sweep_is_not_private():
    frame = run_sweep(_prepared(feature_scaling="minmax"), mechanisms=["analyze_gauss", "pca"], epsilons=[0.5, 2.0],
                      trials=1, seed=1)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.file_uploader(key=KEY).set_value(("sweep.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("NOT end-to-end private" in w.value and "min–max scaling" in w.value for w in at.warning)
    title = _charts(at)["explore_csv_captured_variance_ratio"]["layout"]["title"]["text"]
    assert "NOT end-to-end private" in title


@pytest.mark.slow
def test_data_page_shows_the_clamped_share_as_a_non_private_diagnostic():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.selectbox(key="dp_dataset").set_value("wine").run()
    assert not at.exception, [e.value for e in at.exception]
    # Wine's public ranges clamp 0.6 % of the alcohol and colour-intensity values: a caption, no warning
    assert any("alcohol 0.6 %" in c.value and "non-private diagnostic" in c.value for c in at.caption)
    assert not any("Clamping" in w.value for w in at.warning)


def test_data_page_reports_missing_cells_apart_from_clamping():
    """Missing ages filled with 0 under bounds [18, 90] are missing values, not clamped ones (issue 32 item 4): no
    clamping warning, a labelled note naming the policy."""
    rng = np.random.default_rng(1)
    rows = [f"{'' if i % 4 == 0 else int(rng.integers(18, 91))},{rng.normal(50, 5):.1f}" for i in range(80)]
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state["dp_upload"] = ("age,score\n" + "\n".join(rows) + "\n").encode()
    at.session_state["dp_upload_name"] = "ages.csv"
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_missing"] = "zero"
    at.switch_page("pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [w.value for w in at.warning if "Clamping" in w.value]  # on 563c1b2: 'age' (25.0 %) "clamped"
    notes = [c.value for c in at.caption if "missing (empty or unreadable) cell" in c.value]
    assert notes and "'age' 25.0 %" in notes[0] and "filled with 0" in notes[0]


def test_the_privacy_columns_ignore_the_convergence_verdict():
    """Privacy review item 18: the convergence verdict is read off the chain run on the private data, so it stays
    in its own diagnostic column; the privacy columns follow the guarantee (public settings) only."""
    from dpcore.evaluation.sweep import add_privacy_columns

    frame = pd.DataFrame({"mechanism": ["ppca", "ppca", "analyze_gauss"],
                          "guarantee": ["heuristic-mcmc", "heuristic-mcmc", "approx"],
                          "message": ["MCMC not converged (split-R̂ 1.31 > 1.05)", "", ""],
                          "convergence": ["not converged", "converged", ""]})
    add_privacy_columns(frame, _prepared())
    assert frame["end_to_end_private"].tolist() == [True, True, True]
    assert frame["non_private_steps"].tolist() == ["", "", ""]
