"""Benchmark (issue 31): the streamed sweep on a 3 M × 20 CSV against a bare ``pyarrow.csv.read_csv`` of the same
file, each as a whole process (interpreter start and imports included), in one run, interleaved.

* **bare** — ``python -c "pyarrow.csv.read_csv(F)"`` (multi-threaded, Arrow's defaults): the least any reader does;
* **sweep** — ``dpcore sweep --csv F --schema S --stream --mechanisms analyze_gauss --epsilons 1 --trials 1``: every
  line through the one record parser (:mod:`dpcore.data.records`), encoded with the public schema, C accumulated,
  a reservoir kept, one release.

The file (3,000,000 rows, 20 numeric columns with 3 decimals and a 0/1 label, about 0.3 GB) is generated in a
temporary folder and deleted afterwards. Reported: median wall time of each, their ratio (goal ≤ 1.5), and the peak
resident set of the sweep's process tree (goal ≤ 0.5 GB).

Usage: ``python benchmarks/bench_one_reader.py [--rows 3000000] [--repeats 3] [--no-write]``.
Writes ``benchmarks/results/one_reader.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _memory import gib, measure
from _util import environment, write_json

ROOT = Path(__file__).resolve().parent.parent
D = 20
GOAL_RATIO = 1.5
GOAL_PEAK_GIB = 0.5


def make_file(folder: Path, rows: int, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    path = folder / "big.csv"
    with path.open("w") as fh:
        fh.write(",".join([f"x{i}" for i in range(D)] + ["label"]) + "\n")
        step = 200_000
        for a in range(0, rows, step):
            m = min(step, rows - a)
            X = np.round(rng.uniform(-10, 10, size=(m, D)), 3)
            lab = (X[:, 0] > 0).astype(int)
            block = np.column_stack([X, lab])
            fmt = ",".join(["%.3f"] * D + ["%d"])
            np.savetxt(fh, block, fmt=fmt)
    schema = folder / "schema.yaml"
    cols = "\n".join(f"  - {{name: x{i}, role: numeric, lower: -10, upper: 10}}" for i in range(D))
    schema.write_text("dpcore_schema: 1\nlabel: label\nformat: {kind: csv, encoding: utf-8, delimiter: ',', "
                      "decimal: '.', thousands: null, header: true}\ncolumns:\n" + cols
                      + "\n  - {name: label, role: label, categories: ['0', '1']}\n")
    return path, schema


def run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS GiB of the process tree)."""
    res = measure(cmd, env={"PYTHONPATH": str(ROOT)})
    if res["returncode"] != 0:
        raise SystemExit(f"{cmd[:4]} failed: {res['stderr_tail']}")
    return res["seconds"], gib(res["peak_rss_tree"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=3_000_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, schema = make_file(Path(tmp), args.rows)
        size = path.stat().st_size
        bare = [sys.executable, "-c", f"import pyarrow.csv as c; t = c.read_csv({str(path)!r}); print(t.num_rows)"]
        sweep = [sys.executable, "-m", "dpcore", "sweep", "--csv", str(path), "--schema", str(schema), "--stream",
                 "--mechanisms", "analyze_gauss", "--epsilons", "1", "--trials", "1", "--k", "2", "--seed", "0",
                 "--jobs", "1", "--quiet", "--out", str(Path(tmp) / "out.csv")]
        run(bare)  # the file into the page cache
        rows = []
        for _ in range(args.repeats):
            b, bp = run(bare)
            s, sp = run(sweep)
            rows.append({"bare_s": b, "bare_peak_gib": bp, "sweep_s": s, "sweep_peak_gib": sp, "ratio": s / b})
            print(f"bare {b:6.2f} s ({bp:.2f} GiB)   sweep {s:6.2f} s ({sp:.2f} GiB)   ratio {s / b:.2f}", flush=True)
    result = {
        "file": {"rows": args.rows, "columns": D + 1, "bytes": size},
        "runs": rows,
        "median_ratio": statistics.median(r["ratio"] for r in rows),
        "median_bare_s": statistics.median(r["bare_s"] for r in rows),
        "median_sweep_s": statistics.median(r["sweep_s"] for r in rows),
        "max_sweep_peak_gib": max(r["sweep_peak_gib"] for r in rows),
        "goal_ratio": GOAL_RATIO, "goal_peak_gib": GOAL_PEAK_GIB, "environment": environment(),
    }
    print(f"median ratio {result['median_ratio']:.2f} (goal ≤ {GOAL_RATIO}); sweep peak "
          f"{result['max_sweep_peak_gib']:.2f} GiB (goal ≤ {GOAL_PEAK_GIB})")
    if not args.no_write:
        write_json("one_reader", result)


if __name__ == "__main__":
    main()
