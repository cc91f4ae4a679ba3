"""The command-line contract: JSON listings, sweep CSV columns, determinism, exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.evaluation.sweep import COLUMNS


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_mechanisms_json(capsys):
    code, out, _ = run(capsys, "mechanisms", "--json")
    assert code == 0
    items = json.loads(out)
    ids = {m["id"] for m in items}
    assert {"pca", "random", "mod_sulq", "analyze_gauss", "laplace", "wishart_sheffet", "sn_imtiaz",
            "wishart_jiang"} <= ids
    for m in items:
        assert {"id", "name", "guarantee", "output", "reference"} <= set(m)
        assert m["guarantee"] in ("pure", "approx", "heuristic-mcmc", "claimed-invalid", "none")
    sn = next(m for m in items if m["id"] == "sn_imtiaz")
    assert sn["guarantee"] == "claimed-invalid"
    assert sn["counterexample_delta_at_eps1"] == pytest.approx(0.6321, abs=1e-4)


def test_datasets_json(capsys):
    code, out, _ = run(capsys, "datasets", "--json")
    assert code == 0
    items = {d["id"]: d for d in json.loads(out)}
    for ds in ("wine", "breast_cancer", "digits", "css_synthetic", "is_synthetic", "subspace_synthetic", "adult"):
        assert {"id", "n", "d", "labels", "source"} <= set(items[ds])
    assert (items["wine"]["n"], items["wine"]["d"], items["wine"]["labels"]) == (178, 13, True)


def test_sweep_csv_contract_and_determinism(capsys, tmp_path):
    args = ["sweep", "--dataset", "wine", "--mechanisms", "analyze_gauss,laplace,pca", "--epsilons", "0.5,2",
            "--delta", "1e-5", "--k", "2", "--trials", "2", "--seed", "3", "--quiet"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert run(capsys, *args, "--out", str(a))[0] == 0
    assert run(capsys, *args, "--out", str(b))[0] == 0
    fa, fb = pd.read_csv(a), pd.read_csv(b)
    assert list(fa.columns[: len(COLUMNS)]) == list(COLUMNS)
    pd.testing.assert_frame_equal(fa.drop(columns="runtime_s"), fb.drop(columns="runtime_s"))
    assert len(fa) == 3 * 2 * 2 and set(fa.status) == {"ok"}
    assert set(fa.dataset) == {"wine"}


def test_sweep_csv_input_and_options(capsys, tmp_path):
    csv = tmp_path / "in.csv"
    pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6, 7, 8], "b": [0.5, 0.1, 0.3, 0.9, 0.2, 0.7, 0.4, 0.6],
                  "c": [3.0, 1, 2, 5, 4, 8, 6, 7]}).to_csv(csv, index=False)
    out = tmp_path / "out.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--norm-bound", "10", "--feature-scaling", "none",
                       "--mechanisms", "laplace", "--option", "laplace.sensitivity=tight", "--epsilons", "1",
                       "--k", "1", "--trials", "1", "--out", str(out))
    assert code == 0, err
    assert pd.read_csv(out).status.tolist() == ["ok"]


@pytest.mark.parametrize("argv, needle", [
    (["sweep", "--dataset", "nope", "--mechanisms", "pca", "--epsilons", "1", "--out", "x.csv"], "unknown dataset"),
    (["sweep", "--dataset", "wine", "--mechanisms", "nope", "--epsilons", "1", "--out", "x.csv"], "unknown mechanism"),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "a,b", "--out", "x.csv"], "--epsilons"),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "-1", "--out", "x.csv"], "epsilon"),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "1", "--k", "40", "--out", "x.csv"], "k"),
    (["sweep", "--mechanisms", "pca", "--epsilons", "1", "--out", "x.csv"], "exactly one of"),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "1"], "--out"),
    (["sweep", "--csv", "/no/such.csv", "--mechanisms", "pca", "--epsilons", "1", "--out", "x.csv"], "not found"),
    (["sweep", "--dataset", "wine", "--mechanisms", "sn_imtiaz", "--epsilons", "1", "--out", "x.csv"], "invalid"),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "1", "--out", "/no/dir/x.csv"], "folder"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_release_json(capsys):
    code, out, _ = run(capsys, "release", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1",
                       "--delta", "1e-5", "--k", "2", "--seed", "1", "--quiet")
    assert code == 0
    result = json.loads(out)
    assert result["guarantee"] == "approx" and len(result["private_output"]["subspace"]) == 13
    assert result["metrics_on_true_data"]["private"] is False
    assert 0 <= result["metrics_on_true_data"]["values"]["captured_variance_ratio"] <= 1
    assert result["nonprivate_diagnostics"]["private"] is False


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "dpcore", "mechanisms"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "analyze_gauss" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--dataset", "wine"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_building_the_parser_loads_no_heavy_module():
    """`dpcore --version`, `--help` and the parser itself import neither numpy/scipy/pandas nor the mechanisms."""
    code = ("import sys; from dpcore.cli import build_parser; build_parser(); "
            "print(','.join(m for m in ('numpy', 'scipy', 'pandas', 'sklearn', 'plotly', 'dpcore.audit', "
            "'dpcore.mechanisms', 'dpcore.data') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
    proc = subprocess.run([sys.executable, "-m", "dpcore", "--version"], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout.startswith("dpcore ")


def test_audit_parser_reads_the_audit_registries():
    """`dpcore audit`'s choices and defaults are read off dpcore.audit when used (not copied into the CLI)."""
    import argparse

    from dpcore import audit
    from dpcore.cli import audit as cli_audit

    parser = cli_audit.add_audit_parser(argparse.ArgumentParser().add_subparsers())
    choices = {a.dest: a.choices for a in parser._actions}
    assert tuple(choices["neighbours"]) == ("all", *audit.NEIGHBOUR_CONSTRUCTIONS)
    assert tuple(choices["statistic"]) == tuple(audit.STATISTICS)
    assert tuple(choices["field"]) == tuple(audit.FIELDS)
    args = parser.parse_args([])
    assert [cli_audit._arg(args, dest, None) for dest in ("trials", "probe_seeds", "draws")] == \
        [audit.DEFAULT_TRIALS, audit.PROBE_SEEDS, audit.CONFORMANCE_DRAWS]
    assert f"default {audit.DEFAULT_TRIALS})" in " ".join(parser.format_help().split())


def test_reproduce_list(capsys):
    from dpcore.evaluation.reproduce import experiment_names

    code, out, _ = run(capsys, "reproduce", "--list")
    assert code == 0
    assert [line.split()[0] for line in out.strip().splitlines()] == experiment_names()
    assert "stored results" in out


@pytest.mark.parametrize("argv, needle", [
    (["reproduce", "nope"], "unknown experiment"),
    (["reproduce"], "name an experiment"),
    (["reproduce", "--list", "amin_fig1"], "--list takes no"),
    (["reproduce", "amin_fig1", "--quick", "--out", "/no/such/dir/x"], "folder"),
])
def test_reproduce_bad_arguments_exit_2(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and "Traceback" not in err


@pytest.mark.slow
def test_reproduce_quick_writes_the_same_files_to_out(capsys, tmp_path):
    from dpcore.evaluation.reproduce import result_files

    code, out, _ = run(capsys, "reproduce", "chaudhuri_fig5", "--quick", "--out", str(tmp_path))
    assert code == 0 and "=== chaudhuri_fig5 (quick)" in out
    stored = result_files("chaudhuri_fig5")
    for kind in ("raw", "summary", "facts", "html"):
        assert (tmp_path / stored[kind].name).is_file()
    quick = pd.read_csv(tmp_path / stored["summary"].name)
    full = pd.read_csv(stored["summary"])
    assert list(quick.columns) == list(full.columns)  # same file layout as the stored full run


def test_listing_the_mechanisms_loads_neither_pandas_nor_scipy():
    """`dpcore mechanisms` reads the registry's class attributes only: the data layer, the samplers' LAPACK
    routines and scipy.stats load on first use (it answers in about 0.2 CPU-seconds instead of 1.2)."""
    code = ("import io, sys, contextlib; from dpcore.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out: rc = main(['mechanisms'])\n"
            "assert rc == 0 and 'analyze_gauss' in out.getvalue()\n"
            "print(','.join(m for m in ('scipy', 'pandas', 'sklearn', 'dpcore.data') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


# #19: the CLI refuses a continuous label (exit 2, naming the column) and guesses a label as the dashboard does
def _labelled_csv(tmp_path, n: int = 80):
    import numpy as np

    r = np.random.default_rng(21)
    csv = tmp_path / "grades.csv"
    pd.DataFrame({"hours": r.normal(10, 2, n).round(2), "score": r.normal(60, 9, n).round(1),
                  "income": r.normal(50, 10, n).round(2), "passed": np.tile([0, 1], n // 2)}).to_csv(csv, index=False)
    return csv


_SWEEP = ["--norm-bound", "10", "--feature-scaling", "none", "--mechanisms", "analyze_gauss", "--epsilons", "1",
          "--k", "1", "--trials", "1"]


def test_a_continuous_label_exits_2_naming_the_column(capsys, tmp_path):
    csv = _labelled_csv(tmp_path)
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--label", "income", *_SWEEP,
                       "--out", str(tmp_path / "o.csv"))
    assert code == 2
    assert "'income'" in err and "label needs classes" in err and "income > threshold" in err
    assert "Traceback" not in err and not (tmp_path / "o.csv").exists()


def test_the_cli_guesses_the_label_like_the_dashboard(capsys, tmp_path):
    from dpcore.data import read_table
    from dpcore.data.roles import guess_label

    csv = _labelled_csv(tmp_path)
    guess = guess_label(read_table(csv.read_bytes()))
    out = tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), *_SWEEP, "--out", str(out))
    assert code == 0, err
    assert f"label guessed: 'passed' — {guess.reason}" in err  # same inference, same reason
    assert pd.read_csv(out).d.iloc[0] == 3  # the label is not a feature
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--no-label", *_SWEEP, "--out", str(out))
    assert code == 0, err
    assert "label guessed" not in err and pd.read_csv(out).d.iloc[0] == 4


# #19: `sweep --csv F` without --schema works, labelled NOT private, with the way to a private run
def _table_csv(tmp_path):
    import numpy as np

    r = np.random.default_rng(7)
    n = 60
    csv = tmp_path / "visits.csv"
    pd.DataFrame({"age": r.integers(18, 90, n), "income": r.normal(3000, 800, n).round(2),
                  "colour": r.choice(["red", "green", "blue"], n), "outcome": np.tile(["yes", "no"], n // 2)}
                 ).to_csv(csv, index=False)
    return csv


_AG = ["--mechanisms", "analyze_gauss", "--epsilons", "1", "--k", "1", "--trials", "1", "--seed", "3", "--jobs", "1"]


def test_a_csv_without_a_schema_runs_labelled_not_private_with_the_way_to_a_private_run(capsys, tmp_path):
    csv, out = _table_csv(tmp_path), tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), *_AG, "--quiet", "--out", str(out))
    assert code == 0, err
    rows = pd.read_csv(out)
    assert rows.status.tolist() == ["ok"] and not rows.end_to_end_private.any()
    assert "min–max scaling from the data" in rows.non_private_steps.iloc[0]
    # said even with --quiet: not private, why, and how to make it private
    assert "no --schema" in err and "NOT end-to-end private" in err and "feature ranges (min–max scaling)" in err
    assert f"dpcore schema infer --csv {csv} --out schema.yaml" in err and "--schema schema.yaml" in err


def test_the_hinted_schema_once_confirmed_makes_the_same_csv_private(capsys, tmp_path):
    from dpcore.data import load_schema

    csv, out, schema = _table_csv(tmp_path), tmp_path / "o.csv", tmp_path / "schema.yaml"
    code, _, err = run(capsys, "schema", "infer", "--csv", str(csv), "--out", str(schema))
    assert code == 0, err
    schema.write_text(load_schema(schema).confirmed().to_yaml())  # the user's review, done wholesale here
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(schema), *_AG, "--out", str(out))
    assert code == 0, err
    assert pd.read_csv(out).end_to_end_private.all() and "no --schema" not in err
    assert "NOT end-to-end private" not in err


def test_an_explicit_scaling_without_a_schema_is_kept(capsys, tmp_path):
    csv, out = _table_csv(tmp_path), tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--feature-scaling", "none", "--norm-bound", "5000",
                       *_AG, "--out", str(out))
    assert code == 0, err
    assert "min–max" not in pd.read_csv(out).non_private_steps.iloc[0] and "feature ranges" not in err
    assert "NOT end-to-end private" in err


# #19: errors (and notes) reaching a CLI user name the flags, never the library's Python arguments
_PYTHON_ARGS = ("norm_bound", "feature_scaling", "centering=", "neighbouring=", "norm_mode", "allow_invalid",
                "missing=", "load_csv(", "time_cap", "n_components")


@pytest.mark.parametrize("argv, flags", [
    (["sweep", "--csv", "{csv}", "--feature-scaling", "schema", *_AG], ["--norm-bound B", "--feature-scaling minmax",
                                                                          "--schema S"]),
    (["sweep", "--dataset", "wine", "--center", "dp", "--neighbouring", "add_remove", *_AG],
     ["--center dp", "--neighbouring replace"]),
    (["sweep", "--dataset", "wine", "--norm-bound", "-1", *_AG], ["--norm-bound must be > 0"]),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "-1"], ["--epsilons must be"]),
    (["release", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1"],
     ["--delta must be > 0", "try --delta 1e-5"]),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "1", "--k", "40"], ["--k must be <= 13"]),
    (["sweep", "--dataset", "wine", "--mechanisms", "pca", "--epsilons", "1", "--time-cap", "-1"], ["--time-cap must"]),
    (["sweep", "--dataset", "wine", "--mechanisms", "sn_imtiaz", "--epsilons", "1"], ["pass --allow-invalid"]),
])
def test_errors_name_cli_flags_not_python_arguments(capsys, tmp_path, argv, flags):
    argv = [a.replace("{csv}", str(_table_csv(tmp_path))) for a in argv]
    out = [] if argv[0] == "release" else ["--out", str(tmp_path / "o.csv")]
    code, _, err = run(capsys, *argv, *out)
    error = [ln for ln in err.splitlines() if ln.startswith("dpcore: error:")]
    assert code == 2 and len(error) == 1, err
    assert all(flag in error[0] for flag in flags), error[0]
    assert not any(name in error[0] for name in _PYTHON_ARGS), error[0]


def test_notes_on_non_private_steps_name_cli_flags(capsys, tmp_path):
    csv, out = _table_csv(tmp_path), tmp_path / "o.csv"
    code, _, err = run(capsys, "sweep", "--csv", str(csv), *_AG, "--out", str(out))
    assert code == 0, err
    assert "use --feature-scaling schema" in err and "feature_scaling=" not in err


def test_cli_words_maps_each_library_argument_once():
    from dpcore.cli.flags import cli_words

    text = "pass norm_bound=B or use feature_scaling='minmax'; centering='dp' needs neighbouring='replace'"
    assert cli_words(text) == ("pass --norm-bound B or use --feature-scaling minmax; --center dp needs "
                               "--neighbouring replace")
    assert cli_words("epsilon must be > 0", "sweep") == "--epsilons must be > 0"
    assert cli_words("epsilon must be > 0", "release") == "--epsilon must be > 0"
    assert cli_words("the (epsilon, delta) budget; k=3 components") == "the (epsilon, delta) budget; --k 3 components"
    assert cli_words("Pass allow_invalid=True (CLI: --allow-invalid) to run it") == "Pass --allow-invalid to run it"
    assert cli_words("dataset.norm_bound=2 and my_label=x") == "dataset.norm_bound=2 and my_label=x"  # not arguments


# leftover of #19: a thousands separator can be given on the command line without a schema (never detected)
def test_thousands_flag_reads_grouped_numbers_and_is_refused_with_a_schema(capsys, tmp_path):
    import numpy as np

    from dpcore.data import load_schema
    from dpcore.vocabulary import ColumnRole

    r = np.random.default_rng(5)
    amounts = r.uniform(1000, 9000, 40)
    csv = tmp_path / "grouped.csv"
    rows = [f"{a:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".") + f";{i % 7};{i % 2}"
            for i, a in enumerate(amounts)]  # "1.234,56;3;0"
    csv.write_text("amount;visits;member\n" + "\n".join(rows) + "\n")
    out = tmp_path / "schema.yaml"
    code, _, err = run(capsys, "schema", "infer", "--csv", str(csv), "--delimiter", ";", "--decimal", ",",
                       "--no-label", "--out", str(out), "--quiet")
    assert code == 0, err
    assert load_schema(out)["amount"].role != ColumnRole.NUMERIC  # "1.234,56" is no number without the separator
    code, _, err = run(capsys, "schema", "infer", "--csv", str(csv), "--delimiter", ";", "--decimal", ",",
                       "--thousands", "dot", "--no-label", "--out", str(out), "--quiet")
    assert code == 0, err
    amount = load_schema(out)["amount"]
    assert amount.role == ColumnRole.NUMERIC
    assert amount.lower == pytest.approx(round(amounts.min(), 2)) and amount.upper == pytest.approx(
        round(amounts.max(), 2))
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--schema", str(out), "--thousands", "dot", *_AG,
                       "--out", str(tmp_path / "o.csv"))
    assert code == 2 and "--thousands" in err and "Traceback" not in err
    code, _, err = run(capsys, "sweep", "--csv", str(csv), "--delimiter", ";", "--decimal", ",", "--thousands",
                       "dot", "--no-label", *_AG, "--quiet", "--out", str(tmp_path / "o.csv"))
    assert code == 0, err
    assert pd.read_csv(tmp_path / "o.csv").d.iloc[0] == 3

