"""``dpcore run WORKSPACE`` and the runnable chart exports (issue 35 item 2): the CLI, the exported script and the
exported notebook give the same results CSV, byte for byte, as the library's one code path; bad workspaces are refused
with the fix named; nothing read off an upload reaches a workspace, script or notebook.

The page side (Explore's own CSV download against ``dpcore run``) is in tests/pages/test_app_run_export.py.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpcore.cli import main
from dpcore.data import draft_schema, infer_roles, read_table
from dpcore.evaluation import workspace as ws
from dpcore.evaluation.chart_code import chart_notebook, chart_script
from dpcore.vocabulary import ColumnRole

ROOT = Path(__file__).resolve().parents[2]

#: Small and fast: Wine, k = 2, two fast mechanisms, two trials, three ε values.
SETTINGS = {"dp_k": 2, "dp_eps_range": [0.5, 2.0], "dp_delta": 1e-6, "dp_trials": 2, "dp_time_cap": 20.0,
            "dp_neighbouring": "replace", "dp_band": "±1 sd"}
MECHANISMS = {"pure": ["laplace"], "approx": ["analyze_gauss"]}


def _builtin(seed: int = 7) -> dict:
    return {ws.FORMAT_KEY: 1, "settings": dict(SETTINGS), "mechanisms": copy.deepcopy(MECHANISMS), "datasets": {},
            "uploads": [], ws.VIEW: {"dataset": "wine", "seed": seed}}


def _visits(seed: int = 3, rows: int = 80) -> bytes:
    """An upload-like table: x in (1, 9), y around 50, a text group, and a binary outcome."""
    rng = np.random.default_rng(seed)
    lines = [f"{rng.uniform(1, 9):.3f},{rng.normal(50, 5):.3f},{'ab'[i % 2]},{i % 3 == 0:d}" for i in range(rows)]
    return ("x,y,grp,outcome\n" + "\n".join(lines) + "\n").encode()


def _public_schema(data: bytes) -> dict:
    """The schema a user declares: the file format, every column's role and values typed (public), outcome the
    label."""
    table = read_table(data)
    out = draft_schema(table, infer_roles(table, label="outcome")).to_dict()
    declared = {"x": dict(role=ColumnRole.NUMERIC.value, lower=0, upper=10),
                "y": dict(role=ColumnRole.NUMERIC.value, lower=0, upper=100),
                "grp": dict(role=ColumnRole.CATEGORICAL.value, categories=["a", "b"])}
    for column in out["columns"]:
        column.pop("from_data", None)
        column.update(declared.get(column["name"], {}))
    out.pop("from_data", None)
    out["format"].pop("from_data", None)  # the file format declared too: the whole pipeline is private
    return out


def _upload_workspace(data: bytes, name: str = "visits.csv") -> dict:
    settings = {**ws.DATA_DEFAULTS, **ws.UPLOAD_DEFAULTS, "dp_label": "outcome"}
    return {ws.FORMAT_KEY: 1, "settings": dict(SETTINGS), "mechanisms": copy.deepcopy(MECHANISMS), "datasets": {},
            "uploads": [{"file": name, "settings": settings, "schema": _public_schema(data)}],
            ws.VIEW: {"upload": name}}


def _library_csv(workspace: dict, data: bytes | None = None, seed: int | None = None, name: str | None = None) -> str:
    view = ws.explore_view(ws.parse(ws.to_text(workspace)), seed=seed, data_name=name)
    return ws.results_csv(ws.run_view(view, data).frame, upload=view.upload)


def _cli(tmp_path: Path, workspace: dict | str, *args: str, capsys=None) -> tuple[int, str]:
    path = tmp_path / "dpcore-workspace.yaml"
    path.write_text(workspace if isinstance(workspace, str) else ws.to_text(workspace), encoding="utf-8")
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--no-figures", "--quiet", *args])
    err = capsys.readouterr().err if capsys is not None else ""
    return code, err


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# ------------------------------------------------------------------------------------------------
# the CLI and the library: one code path
def test_cli_csv_equals_the_library_csv_on_a_builtin_dataset(tmp_path, capsys):
    code, err = _cli(tmp_path, _builtin(), capsys=capsys)
    assert code == 0, err
    written = (tmp_path / "out" / "sweep_wine.csv").read_bytes()
    assert written == _library_csv(_builtin()).encode()
    frame_text = written.decode().splitlines()
    assert len(frame_text) == 1 + 2 * 3 * 2  # header + 2 mechanisms × 3 ε × 2 trials
    other = tmp_path / "other"
    other.mkdir()
    assert _cli(other, _builtin(seed=8))[0] == 0
    assert (other / "out" / "sweep_wine.csv").read_bytes() != written  # the seed matters (the test can fail)


def test_cli_csv_on_an_upload_with_its_saved_schema(tmp_path, capsys):
    data = _visits()
    (tmp_path / "visits.csv").write_bytes(data)
    code, err = _cli(tmp_path, _upload_workspace(data), "--data", str(tmp_path / "visits.csv"), "--seed", "5",
                     capsys=capsys)
    assert code == 0, err
    written = (tmp_path / "out" / "sweep_visits.csv").read_bytes()
    assert written == _library_csv(_upload_workspace(data), data, seed=5, name="visits.csv").encode()
    assert b"visits.csv,laplace" in written and b"True" in written  # every step private: the schema is public
    # an upload's cell seeds are never written (with a seed and a release the noise could be replayed); a
    # built-in dataset's are
    frame = pd.read_csv(io.BytesIO(written))
    assert frame["seed"].isna().all() and frame["runtime_s"].isna().all()
    builtin = pd.read_csv(io.StringIO(ws.results_csv(pd.DataFrame({"seed": [7], "runtime_s": [0.1]}))))
    assert builtin["seed"].tolist() == [7]


def test_without_a_seed_an_upload_gets_a_fresh_one_and_says_so(tmp_path, capsys):
    data = _visits()
    (tmp_path / "visits.csv").write_bytes(data)
    code, err = _cli(tmp_path, _upload_workspace(data), "--data", str(tmp_path / "visits.csv"), capsys=capsys)
    assert code == 0 and "--seed" in err and "fresh seed" in err


# ------------------------------------------------------------------------------------------------
# bad configurations: clear errors, no traceback
@pytest.mark.parametrize("edit, match", [
    (lambda w: w.update(extra=1), "unknown field 'extra'"),
    (lambda w: w["settings"].update(dp_kk=3), "unknown setting settings.dp_kk"),
    (lambda w: w["settings"].pop("dp_k"), "no settings.dp_k"),
    (lambda w: w["settings"].update(dp_trials=0), "settings.dp_trials must be"),
    (lambda w: w["settings"].update(dp_eps_range=[200, 300]), "holds no ε"),
    (lambda w: w["mechanisms"].update(pure=["laplacian"]), "unknown mechanism 'laplacian'"),
    (lambda w: w["datasets"].update(wine={"dp_scale": "schema"}), "unknown setting datasets.wine.dp_scale"),
    (lambda w: w.update(explore={"dataset": "wines"}), "unknown dataset 'wines'"),
    (lambda w: w.pop("explore"), "--dataset ID"),
    (lambda w: w.update(dpcore_workspace=2), "version 2 is not supported"),
])
def test_a_bad_workspace_is_refused_with_the_fix(tmp_path, capsys, edit, match):
    workspace = _builtin()
    edit(workspace)
    code, err = _cli(tmp_path, workspace, capsys=capsys)
    assert code == 2 and match in err and "Traceback" not in err, err


def test_an_upload_workspace_without_its_data_file_names_the_file(tmp_path, capsys):
    code, err = _cli(tmp_path, _upload_workspace(_visits()), capsys=capsys)
    assert code == 2 and "--data PATH/TO/visits.csv" in err, err
    code, err = _cli(tmp_path, _upload_workspace(_visits()), "--data", str(tmp_path / "absent.csv"), capsys=capsys)
    assert code == 2 and "no data file at" in err, err


def test_a_schema_that_does_not_fit_the_data_is_refused(tmp_path, capsys):
    data = _visits()
    other = data.replace(b"x,y,grp,outcome", b"u,y,grp,outcome")  # the declared column x is not in this file
    (tmp_path / "visits.csv").write_bytes(other)
    code, err = _cli(tmp_path, _upload_workspace(data), "--data", str(tmp_path / "visits.csv"), "--seed", "1",
                     capsys=capsys)
    assert code == 2 and "declares the column 'x'" in err and "Traceback" not in err, err
    for line in other.decode().splitlines()[1:]:
        assert line.split(",")[0] not in err  # no record's value in the message
    # a declared role the cells do not fit is no refusal (privacy review item 13: no record may make a run fail
    # under a public schema): text in a column declared numeric is missing, filled by the declared policy
    workspace = _upload_workspace(data)
    for column in workspace["uploads"][0]["schema"]["columns"]:
        if column["name"] == "grp":
            column.update(role=ColumnRole.NUMERIC.value, lower=0, upper=1)
            column.pop("categories", None)
    (tmp_path / "visits.csv").write_bytes(data)
    code, err = _cli(tmp_path, workspace, "--data", str(tmp_path / "visits.csv"), "--seed", "1", capsys=capsys)
    assert code == 0, err


def test_figures_and_png_are_written_or_said_not_to_be(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(ws.to_text(_builtin()), encoding="utf-8")
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--no-png"])
    out = capsys.readouterr()
    assert code == 0, out.err
    summary = json.loads(out.out)
    html = sorted(Path(p).name for p in summary["written"] if p.endswith(".html"))
    assert html == ["explore_wine_captured_variance.html", "explore_wine_frobenius_error.html",
                    "explore_wine_largest_angle.html", "explore_wine_svm_accuracy.html"]
    text = (tmp_path / "out" / "explore_wine_captured_variance.html").read_text(encoding="utf-8")
    assert "k = 2" in text and "over 2 trials" in text and "Wine" in text  # the caption inside the figure


# ------------------------------------------------------------------------------------------------
# runnable exports
def _run_script(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "chart.py"
    script.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=240, check=False)


def _run_notebook(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    """Execute the notebook's code cells in order in a fresh interpreter (as a kernel would)."""
    notebook = json.loads(text)
    assert notebook["nbformat"] == 4 and notebook["cells"]
    code = "\n\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    runner = tmp_path / "cells.py"
    runner.write_text(code, encoding="utf-8")
    return subprocess.run([sys.executable, str(runner)], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=240, check=False)


@pytest.mark.slow
def test_the_exported_script_and_notebook_give_the_csv_of_the_cli(tmp_path, capsys):
    workspace_text = ws.to_text(_builtin())
    expected = _library_csv(_builtin()).encode()
    for kind, make, run in (("script", chart_script, _run_script), ("notebook", chart_notebook, _run_notebook)):
        where = tmp_path / kind
        where.mkdir()
        done = run(where, make(workspace_text, metric="svm_accuracy", seed=7))
        assert done.returncode == 0, done.stderr[-2000:]
        assert (where / "sweep_wine.csv").read_bytes() == expected, kind
        assert (where / "explore_wine_svm_accuracy.html").stat().st_size > 10_000
    changed = _run_script(tmp_path / "script", chart_script(workspace_text, metric="svm_accuracy", seed=8))
    assert changed.returncode == 0 and (tmp_path / "script" / "sweep_wine.csv").read_bytes() != expected


@pytest.mark.slow
def test_the_exported_script_of_an_upload_reads_the_file_it_is_given(tmp_path):
    data = _visits()
    (tmp_path / "elsewhere.csv").write_bytes(data)
    text = ws.to_text(_upload_workspace(data))
    script = chart_script(text, metric="captured_variance_ratio", seed=None, data_name="visits.csv")
    assert "SEED = None" in script  # an upload's seed is given on the command line, never written to a file
    done = _run_script(tmp_path, script, str(tmp_path / "elsewhere.csv"), "--seed", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "sweep_visits.csv").read_bytes() == \
        _library_csv(_upload_workspace(data), data, seed=5, name="visits.csv").encode()


def test_exports_carry_no_value_of_the_upload():
    """Privacy: the workspace, script and notebook hold settings, the public schema, the seed and the file's name —
    no cell of the file (the values here are typed public bounds and categories only)."""
    data = _visits()
    text = ws.to_text(_upload_workspace(data))
    exports = [text, chart_script(text, metric="svm_accuracy", seed=5, data_name="visits.csv"),
               chart_notebook(text, metric="svm_accuracy", seed=5, data_name="visits.csv")]
    cells = {cell for line in data.decode().splitlines()[1:] for cell in line.split(",")[:2]}
    for export in exports:
        assert not [c for c in cells if c in export]


# ------------------------------------------------------------------------------------------------
# the parser is the page's
def test_the_page_uses_the_library_parser_and_settings():
    from pages.ui import datasets, state
    from pages.ui import workspace as page_workspace

    assert page_workspace.parse is ws.parse and page_workspace.to_text is ws.to_text
    assert page_workspace.restore_schema_checked is ws.restore_schema_checked
    assert state.EPS_GRID == ws.EPS_GRID
    assert set(page_workspace.SHARED) <= {*ws.EXPLORE_SETTINGS, *ws.OTHER_SETTINGS}
    for dataset in ("wine", state.UPLOAD_ID):
        extra = ws.UPLOAD_DEFAULTS if dataset == state.UPLOAD_ID else {}
        assert state.private_defaults(dataset) == {**ws.DATA_DEFAULTS, **extra}
    assert datasets.DELIMITER_CHOICES == ws.DELIMITERS and datasets.DECIMAL_CHOICES == ws.DECIMALS
    assert datasets.THOUSANDS_CHOICES == ws.THOUSANDS and datasets.ENCODING_CHOICES == ws.ENCODINGS
    assert yaml.safe_load(ws.to_text(_builtin()))[ws.VIEW] == {"dataset": "wine", "seed": 7}


@pytest.mark.parametrize("broken", ["absent", "raises"])
def test_png_that_cannot_be_drawn_is_a_note_not_a_crash(tmp_path, capsys, monkeypatch, broken):
    from dpcore.explain import figures as export  # what dpcore run draws with

    if broken == "absent":
        monkeypatch.setattr(export, "png_export_available", lambda: False)
    else:
        monkeypatch.setattr(export, "png_export_available", lambda: True)

        def fail(*_args, **_kwargs):
            raise RuntimeError("no Chromium here")

        monkeypatch.setattr(export, "figure_png", fail)
    path = tmp_path / "w.yaml"
    path.write_text(ws.to_text(_builtin()), encoding="utf-8")
    code = main(["run", str(path), "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert code == 0 and "PNG not written" in out.err, out.err
    assert not list((tmp_path / "out").glob("*.png")) and len(list((tmp_path / "out").glob("*.html"))) == 4


def test_the_results_csv_loads_back_as_a_sweep_csv():
    from pages.ui.sweep_loader import load_sweep_csv

    frame = load_sweep_csv(_library_csv(_builtin()).encode())
    assert len(frame) == 12 and frame["runtime_s"].isna().all()  # wall time left out: not reproducible
