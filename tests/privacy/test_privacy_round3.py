"""Privacy review, round 3 (helper Q): a sweep on a CSV without --schema is labelled not private."""
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.mark.slow
def test_sweep_csv_without_schema_is_labelled_not_private_quiet(tmp_path: Path) -> None:
    """--quiet still says on stderr and in every CSV row that the run is not end-to-end private."""
    data = np.random.default_rng(7).normal(size=(200, 4))
    source = tmp_path / "d.csv"
    with source.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["a", "b", "c", "d"])
        writer.writerows(data.round(4).tolist())
    out = tmp_path / "sweep.csv"
    done = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--csv", str(source), "--mechanisms", "ppca",
                           "--epsilons", "1", "--out", str(out), "--quiet"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "NOT end-to-end private" in done.stderr
    rows = list(csv.DictReader(out.open()))
    assert rows and all(row["end_to_end_private"] == "False" for row in rows)
    assert all(row["non_private_steps"] for row in rows)


# ------------------------------------------------------------------------------------------------
# helper Q2: the bulk editor and the grid never declare values the user was not shown (privacy review item 11)
def _mixed_table():
    from dpcore.data import read_table

    rng = np.random.default_rng(11)
    rows = [f"{rng.uniform(1, 9):.3f},{int(rng.integers(3, 8))}" for _ in range(40)]
    return read_table(("x,code\n" + "\n".join(rows) + "\n").encode())


def _draft_with_categorical_code():
    from dpcore.data import draft_schema, infer_roles
    from pages.ui.schema_editor import bulk_update

    table = _mixed_table()
    draft = draft_schema(table, infer_roles(table, label=None))
    schema = bulk_update(draft, ["code"], table, role="categorical")  # shown: categories read off the data
    assert schema["code"].categories is not None and "categories" in schema["code"].from_data
    return table, schema


def test_bulk_declare_shown_with_a_new_role_does_not_declare_values_never_shown() -> None:
    """A new role redrafts the values from the data in the same action: 'declare the shown values public' must not
    declare those (they were never shown); the role the user picked is theirs."""
    from pages.ui.schema_editor import bulk_update

    table, schema = _draft_with_categorical_code()
    out = bulk_update(schema, ["code"], table, role="numeric", declare_shown=True)
    col = out["code"]
    assert col.lower is not None and {"lower", "upper"} <= set(col.from_data), col
    assert not col.values_public


def test_grid_public_tick_with_a_new_role_does_not_declare_values_never_shown() -> None:
    """The grid: a role changed and *public* ticked in one edit declares the role, not the freshly drafted values."""
    from pages.ui.schema_editor import apply_cell_edits

    table, schema = _draft_with_categorical_code()
    out = apply_cell_edits(schema, {"code": {"role": "numeric", "public": True}}, table)
    col = out["code"]
    assert col.lower is not None and {"lower", "upper"} <= set(col.from_data), col
    typed = apply_cell_edits(schema, {"code": {"role": "numeric", "lower": 0, "upper": 10, "public": True}}, table)
    assert typed["code"].values_public and (typed["code"].lower, typed["code"].upper) == (0, 10)
