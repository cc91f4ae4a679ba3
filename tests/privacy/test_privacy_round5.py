"""Privacy review round 5 (issue 31), items 2, 5 and 7: evaluation never steers the mechanism, no decision on a
private n under add/remove, and privacy labels computed from public settings only.

Every test here fails on 563c1b2 (the code the review measured) and passes now.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from dpcore.data.prepared import PreparedData
from dpcore.evaluation.metrics import evaluate, evaluation_split
from dpcore.evaluation.sweep import SweepConfig, plan_sweep, run_sweep
from dpcore.exceptions import InvalidParameterError

ADD_REMOVE = "add_remove"


def _rows(n: int, d: int = 3, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1).max()


def _svm_positions(n: int, seed: int, holdout: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the SVM's train and test rows for a single minority label (no stratification): the
    replace-one split's permutation and train/test cut, written out here so the test runs on the old code too."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    n_hold = min(round(n * holdout), 6000)
    hold = rng.permutation(n)[:n_hold]
    tr, te = train_test_split(np.arange(n_hold), test_size=0.5, random_state=int(rng.integers(2**31)))
    return hold[tr], hold[te]


# ------------------------------------------------------------------------------------------------
# Item 2 (privacy review 16): a label never chooses which rows, how many rows or which seed the mechanisms get

SEED = 11
N = 1000


def _one_label_pair() -> tuple[PreparedData, PreparedData]:
    """Replace-one neighbours that differ in one record's LABEL: both have a positive label in the SVM's test part;
    D has a second one in its training part, D′ does not (so D′'s training part holds one class)."""
    train, test = _svm_positions(N, SEED)
    X = _rows(N)
    y_d = np.zeros(N, dtype=int)
    y_d[test[0]] = 1
    y_e = y_d.copy()
    y_d[train[0]] = 1
    return PreparedData(X, y=y_d), PreparedData(X, y=y_e)


def test_a_one_class_training_part_leaves_the_mechanism_rows_alone() -> None:
    D, E = _one_label_pair()
    mech_d, split_d = evaluation_split(D, SEED)
    mech_e, split_e = evaluation_split(E, SEED)
    assert mech_d.n == mech_e.n == N - 300  # before: 700 rows on D, 1,000 on D′ (no hold-out)
    np.testing.assert_array_equal(mech_d.X, mech_e.X)
    assert split_d is not None and split_e is not None
    # what the one-class side reports: svm_accuracy NaN with a fixed message naming no row or count
    notes: list[str] = []

    class _Release:
        subspace, covariance_post, d = np.eye(3)[:, :2], None, 3

    metrics = evaluate(_Release(), mech_e, split_e, notes)
    from dpcore.evaluation.metrics import SVM_ONE_CLASS

    assert np.isnan(metrics["svm_accuracy"]) and notes == [SVM_ONE_CLASS]
    assert not re.search(r"\d", SVM_ONE_CLASS)
    from dpcore.evaluation.reporting import release_warning_kind

    assert release_warning_kind("ok", SVM_ONE_CLASS) is None  # a metric's note is no warning on the release


def test_a_label_changes_no_cell_seed_no_n_and_no_sample_size_refusal() -> None:
    D, E = _one_label_pair()
    settings = dict(mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=2, seed=SEED)
    plans = [plan_sweep(X, **settings) for X in (D, E)]
    assert [c.n for c in plans[0].cells] == [c.n for c in plans[1].cells] == [N - 300] * 2
    assert [c.seed for c in plans[0].cells] == [c.seed for c in plans[1].cells]
    outcomes = []
    for X in (D, E):  # 800 rows: more than the mechanisms get on either side (n is public under replace-one)
        try:
            plan_sweep(X, **settings, sample_sizes=[800])
            outcomes.append("ran")
        except InvalidParameterError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1] != "ran"


def test_a_label_with_one_class_holds_the_same_rows_out() -> None:
    """All labels one class (D) vs one record of another class (D′): the same rows reach the mechanisms."""
    X = _rows(N)
    y = np.zeros(N, dtype=int)
    y2 = y.copy()
    y2[5] = 1
    a, b = evaluation_split(PreparedData(X, y=y), SEED)[0], evaluation_split(PreparedData(X, y=y2), SEED)[0]
    assert a.n == b.n == N - 300
    np.testing.assert_array_equal(a.X, b.X)


def test_the_dashboard_counts_the_mechanism_rows_by_the_same_rule() -> None:
    from pages.ui.datasets import mechanism_rows

    D, E = _one_label_pair()
    X = _rows(N)
    one_class = PreparedData(X, y=np.zeros(N, dtype=int))
    for data in (D, E, one_class):  # outside a running app the session's relation is the default, replace-one
        assert mechanism_rows(data) == evaluation_split(data, SEED)[0].n == N - 300


# ------------------------------------------------------------------------------------------------
# Item 5 (privacy review 17): under add/remove no refusal, message, seed or row choice depends on n

def _add_remove_pair(labelled: bool = False) -> tuple[PreparedData, PreparedData]:
    """D with 99 rows, D′ = D plus one record (appended)."""
    X = _rows(100, seed=4)
    y = (X[:, 0] > 0).astype(int) if labelled else None
    return (PreparedData(X[:99], y=None if y is None else y[:99]), PreparedData(X, y=y))


def _outcome(fn) -> str:
    try:
        fn()
    except InvalidParameterError as exc:
        return f"refused: {exc}"
    return "ran"


def test_a_sample_size_just_above_n_is_decided_without_n() -> None:
    D, E = _add_remove_pair()
    settings = dict(mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=1, seed=3,
                    sample_sizes=[100], neighbouring=ADD_REMOVE)
    outcomes = [_outcome(lambda X=X: plan_sweep(X, **settings)) for X in (D, E)]
    assert outcomes[0] == outcomes[1]  # before: size 100 refused on D ("exceeds the 99 rows available"), ran on D′
    assert "99" not in outcomes[0] and "100" not in outcomes[0]
    # the rule reads no data: the config alone is refused
    assert _outcome(lambda: SweepConfig(**settings).validated(D)) == outcomes[0]


def test_the_cli_refuses_sample_sizes_under_add_remove_whatever_n(tmp_path, capsys) -> None:
    from dpcore.cli import main

    schema = tmp_path / "s.yaml"
    schema.write_text("dpcore_schema: 1\nformat: {kind: csv, encoding: utf-8, delimiter: ',', decimal: '.'}\n"
                      "label: null\ncolumns:\n- {name: a, role: numeric, lower: 0, upper: 10}\n"
                      "- {name: b, role: numeric, lower: 0, upper: 10}\n")
    rng = np.random.default_rng(2)
    rows = [f"{a:.2f},{b:.2f}" for a, b in rng.uniform(0, 10, (41, 2))]
    results = []
    for name, body in (("d", rows[:40]), ("e", rows)):
        path = tmp_path / f"{name}.csv"
        path.write_text("a,b\n" + "\n".join(body) + "\n")
        code = main(["sweep", "--csv", str(path), "--schema", str(schema), "--mechanisms", "analyze_gauss",
                     "--epsilons", "1", "--delta", "1e-5", "--k", "1", "--trials", "1", "--seed", "1",
                     "--neighbouring", ADD_REMOVE, "--sample-sizes", "41", "--quiet",
                     "--out", str(tmp_path / f"{name}.out.csv")])
        results.append((code, capsys.readouterr().err))
    assert results[0] == results[1] and results[0][0] == 2  # before: exit 2 on D (40 rows), 0 on D′ (41 rows)
    assert "40" not in results[0][1] and "41" not in results[0][1]


def test_the_cli_row_limit_decides_nothing_under_add_remove(tmp_path, capsys, monkeypatch) -> None:
    """More rows than the reader's max_rows: refused by n under replace-one (n public), read under add/remove.
    The limit is lowered to 5 here (the default is 1,000,000)."""
    from dpcore.cli import main
    from dpcore.data import csv as csv_module

    monkeypatch.setitem(csv_module.load_csv.__kwdefaults__, "max_rows", 5)
    schema = tmp_path / "s.yaml"
    schema.write_text("dpcore_schema: 1\nformat: {kind: csv, encoding: utf-8, delimiter: ',', decimal: '.'}\n"
                      "label: null\ncolumns:\n- {name: a, role: numeric, lower: 0, upper: 10}\n"
                      "- {name: b, role: numeric, lower: 0, upper: 10}\n")
    rows = ["1,2", "3,4", "5,6", "7,8", "9,1", "2,3"]

    def sweep(body: list[str], relation: str) -> int:
        path = tmp_path / f"{len(body)}.csv"
        path.write_text("a,b\n" + "\n".join(body) + "\n")
        code = main(["sweep", "--csv", str(path), "--schema", str(schema), "--mechanisms", "analyze_gauss",
                     "--epsilons", "1", "--delta", "1e-5", "--k", "1", "--trials", "1", "--seed", "1", "--quiet",
                     "--neighbouring", relation, "--out", str(tmp_path / "out.csv")])
        capsys.readouterr()
        return code

    assert [sweep(rows[:5], ADD_REMOVE), sweep(rows, ADD_REMOVE)] == [0, 0]  # before: 0 and 2
    assert [sweep(rows[:5], "replace"), sweep(rows, "replace")] == [0, 2]  # n public: the limit stays


def test_cell_seeds_do_not_depend_on_n_under_add_remove() -> None:
    D, E = _add_remove_pair()
    settings = dict(mechanisms=["analyze_gauss", "ppca"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=3, seed=8,
                    neighbouring=ADD_REMOVE)
    seeds = [[c.seed for c in plan_sweep(X, **settings).cells] for X in (D, E)]
    assert seeds[0] == seeds[1]  # before: every cell's seed was keyed by n


def test_under_add_remove_every_row_reaches_the_mechanisms() -> None:
    """No hold-out sized or placed by the private n: D′'s mechanism rows are D's plus the added record."""
    D, E = _add_remove_pair(labelled=True)
    plans = [plan_sweep(X, mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=1, seed=5,
                        neighbouring=ADD_REMOVE) for X in (D, E)]
    assert [p.mech_data.n for p in plans] == [99, 100]  # before: 69 and 70 rows chosen by a permutation of n
    mech_d, split_d = evaluation_split(D, 5, neighbouring=ADD_REMOVE)
    mech_e, split_e = evaluation_split(E, 5, neighbouring=ADD_REMOVE)
    np.testing.assert_array_equal(mech_d.X, D.X)
    np.testing.assert_array_equal(mech_e.X, E.X)
    assert split_d.in_sample and split_e.in_sample  # the SVM metric is scored on rows the mechanisms also saw
    from pages.ui.datasets import mechanism_rows

    assert [mechanism_rows(X, ADD_REMOVE) for X in (D, E)] == [99, 100]


# ------------------------------------------------------------------------------------------------
# Item 7 (privacy review 18): a privacy column never reads the chain run on the private data

def _tie_pair() -> tuple[PreparedData, PreparedData]:
    """10 rows whose 2nd and 3rd eigenvalues tie (D: the k = 2 subspace is ambiguous, PPCA's chains disagree at
    ε = 200) and a replace-one neighbour that breaks the tie (D′: the chains agree)."""
    e = np.eye(4)
    X = np.array([e[0]] * 4 + [e[1]] * 3 + [e[2]] * 3)
    Y = X.copy()
    Y[9] = e[1]
    return PreparedData(X), PreparedData(Y)


def test_the_privacy_label_does_not_read_the_convergence_verdict(capsys) -> None:
    D, E = _tie_pair()
    for seed in range(5, 10):  # the first sweep seed whose chains on D are not all called converged (5 today)
        settings = dict(mechanisms=["ppca"], epsilons=[200.0], ks=[2], trials=8, seed=seed, time_cap=None)
        frames = [run_sweep(X, **settings) for X in (D, E)]
        for column in ("end_to_end_private", "non_private_steps"):  # before: False on D's stuck chains
            assert frames[0][column].tolist() == frames[1][column].tolist(), column
        assert frames[0]["end_to_end_private"].all()
        if "not converged" in frames[0]["convergence"].tolist():
            break
    # the verdict is still there, in its own non-private diagnostic column (and the message, for the charts)
    assert "not converged" in frames[0]["convergence"].tolist()
    assert set(frames[1]["convergence"]) <= {"converged", "not converged"}
    # the CLI's stderr: no "NOT end-to-end private" from a verdict, and a note that names the diagnostic column
    from dpcore.cli import _convergence_note, _privacy_note

    _privacy_note(frames[0])
    _convergence_note(frames[0])
    err = capsys.readouterr().err
    assert "NOT end-to-end" not in err
    assert "convergence column" in err and "non-private diagnostic" in err


def test_the_sample_size_page_runs_nothing_under_add_remove() -> None:
    """The dashboard follows the same rule: under add/remove the Sample size page says why and runs no sweep (before,
    it ran sizes up to the exact row count)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from pages.ui import state as ui_state

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=240)
    at.query_params["data"] = "wine"
    at.run()
    at.session_state["dp_neighbouring"] = ADD_REMOVE
    at.switch_page("pages/sample_size.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("replace-one" in i.value for i in at.info), [i.value for i in at.info]
    assert ui_state.stored("ss_result", at.session_state) is None


def test_a_shared_pool_never_serves_one_relations_rows_to_the_other() -> None:
    """Sweeps on the same data and seed share their (sub)sample only under the same relation: the replace-one
    sweep's mechanisms get 70 % of the rows, the add/remove sweep's every row."""
    from dpcore.evaluation.sweep import PooledSweep
    from dpcore.runtime.scheduler import SharedPool

    _, E = _add_remove_pair(labelled=True)
    settings = dict(mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[1], trials=1, seed=5)
    plans = {rel: plan_sweep(E, **settings, neighbouring=rel) for rel in ("replace", ADD_REMOVE)}
    pool = SharedPool(processes=False)
    try:
        sweep = PooledSweep(pool, plans)
        assert sweep.job.wait(120)
        sweep.collect()
        frames = sweep.frames()
    finally:
        pool.close()
    assert frames["replace"]["n"].tolist() == [70] and frames[ADD_REMOVE]["n"].tolist() == [100]
    for rel, plan in plans.items():  # the same rows as the sweep run on its own (a shared 70 % changes the metrics)
        alone = run_sweep(E, plan.config)
        pd.testing.assert_frame_equal(frames[rel].drop(columns="runtime_s"), alone.drop(columns="runtime_s"))
