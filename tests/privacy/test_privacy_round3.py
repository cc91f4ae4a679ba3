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
