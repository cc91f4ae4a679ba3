"""Benchmark: streaming a large CSV to sufficient statistics (issue #13, item 3) — throughput against pyarrow's bare
parse of the same file, and peak memory independent of n.

A CSV of ``--gib`` GiB (d = 200 numeric columns with 3 decimals and a 0/1 label) is generated in a temporary folder
(deleted afterwards; never committed), together with a public schema (bounds [−10, 10]). Each measurement runs in
its own subprocess, interleaved and repeated (the file is in the page cache after it is written, for both sides):

* **bare parse** — ``pyarrow.csv.open_csv`` over the file with the same block size and column types, every batch
  read and dropped: the least any streaming reader must do;
* **statistics** — ``dpcore.stats.from_csv`` (encode with the schema, clamp, clip, C += UᵀU, Σu, n, reservoir of
  20,000 rows);
* once: **the whole CLI** — ``dpcore sweep --csv F --schema S --stream`` (statistics, then a sweep of
  analyze_gauss and laplace) and the statistics of a file a quarter of the size (memory must not depend on n).

Reported: median wall time ratio statistics / bare parse (goal ≤ 1.5), the same in process CPU time, MB/s, and the
peak resident set of each run's process tree (goal ≤ 1 GiB for a 5 GiB file with d ≤ 200).

Usage: ``python benchmarks/bench_streaming.py [--gib 1] [--repeats 3] [--quick] [--no-write]``.
Writes ``benchmarks/results/streaming.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _memory import gib, measure
from _util import environment, write_json

HERE = Path(__file__).resolve().parent

D = 200
BLOCK = 2**20  # Arrow's default block size, for both sides
GOAL_RATIO = 1.5
GOAL_PEAK_GIB = 1.0

BARE = """
import sys, time, pyarrow as pa, pyarrow.csv as pacsv
path, d, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = [f"x{i}" for i in range(d)] + ["label"]
types = {**{f"x{i}": pa.float64() for i in range(d)}, "label": pa.string()}
t, c = time.perf_counter(), time.process_time()
rows = 0
for batch in pacsv.open_csv(path, read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=block),
                            convert_options=pacsv.ConvertOptions(column_types=types)):
    rows += batch.num_rows
print(time.perf_counter() - t, time.process_time() - c, rows)
"""

STATS = """
import sys, time
from dpcore import stats
path, schema, block = sys.argv[1], sys.argv[2], int(sys.argv[3])
t, c = time.perf_counter(), time.process_time()
s = stats.from_csv(path, schema, block_size=block, reservoir_size=20_000, seed=0)
print(time.perf_counter() - t, time.process_time() - c, s.n)
"""


def write_csv(path: Path, target_bytes: float, seed: int = 0) -> int:
    """Numeric CSV of about ``target_bytes`` (d = 200 columns, 3 decimals, a 0/1 label); returns the row count."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    scale = np.linspace(3.0, 0.3, D)
    rows = written = 0
    with open(path, "wb") as fh:
        while written < target_bytes:
            X = np.round(rng.standard_normal((20_000, D)) * scale, 3)
            cols = {f"x{i}": X[:, i] for i in range(D)}
            cols["label"] = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
            buf = pa.BufferOutputStream()
            pacsv.write_csv(pa.table(cols), buf, write_options=pacsv.WriteOptions(include_header=rows == 0))
            data = buf.getvalue()
            fh.write(data)
            written += data.size
            rows += X.shape[0]
    return rows


def write_schema(path: Path) -> None:
    from dpcore.data import load_schema

    cols = [{"name": f"x{i}", "role": "numeric", "lower": -10, "upper": 10} for i in range(D)]
    path.write_text(load_schema({"dpcore_schema": 1, "label": "label",
                                 "columns": [*cols, {"name": "label", "role": "label"}]}).to_yaml())


def run(code: str, *args: str) -> dict:
    r = measure([sys.executable, "-c", code, *args])
    if r["returncode"] != 0:
        raise RuntimeError(r["stderr_tail"])
    return r


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the generated CSV in GiB (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="0.1 GiB, 1 repeat")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    size = 0.1 if args.quick else args.gib
    repeats = 1 if args.quick else args.repeats

    with tempfile.TemporaryDirectory(prefix="dpcore-bench-") as tmp:
        folder = Path(tmp)
        big, small, schema = folder / "big.csv", folder / "small.csv", folder / "schema.yaml"
        t0 = time.perf_counter()
        n_big = write_csv(big, size * 2**30)
        write_csv(small, size * 2**30 / 4, seed=1)
        write_schema(schema)
        file_bytes = big.stat().st_size
        print(f"generated {gib(file_bytes):.2f} GiB ({n_big:,} rows × {D} + label) and a quarter-size file in "
              f"{time.perf_counter() - t0:.0f} s")
        runs: dict[str, list[dict]] = {"bare": [], "stats": []}
        for _ in range(repeats):
            for name, code, extra in (("bare", BARE, str(D)), ("stats", STATS, str(schema))):
                r = run(code, str(big), extra, str(BLOCK))
                wall, cpu, rows = r["stdout"].split()
                r.update(wall=float(wall), cpu=float(cpu), rows=int(rows))
                runs[name].append(r)
        small_stats = run(STATS, str(small), str(schema), str(BLOCK))
        with tempfile.TemporaryDirectory() as out_dir:
            cli = measure([sys.executable, "-m", "dpcore.cli", "sweep", "--csv", str(big), "--schema", str(schema),
                           "--stream", "--mechanisms", "analyze_gauss,laplace", "--epsilons", "0.5,1", "--trials",
                           "1", "--quiet", "--out", str(Path(out_dir) / "sweep.csv")], cwd=str(HERE.parent))
    assert all(r["rows"] == n_big for rs in runs.values() for r in rs)

    def med(name: str, key: str) -> float:
        return float(np.median([r[key] for r in runs[name]]))

    ratio_wall = float(np.median([s["wall"] / b["wall"] for s, b in zip(runs["stats"], runs["bare"])]))
    ratio_cpu = float(np.median([s["cpu"] / b["cpu"] for s, b in zip(runs["stats"], runs["bare"])]))
    peak_stats = max(r["peak_rss_tree"] for r in runs["stats"])
    peak_bare = max(r["peak_rss_tree"] for r in runs["bare"])
    mbs = {k: file_bytes / 2**20 / med(k, "wall") for k in runs}
    goal_ratio, goal_peak = ratio_wall <= GOAL_RATIO, gib(max(peak_stats, cli["peak_rss_tree"])) <= GOAL_PEAK_GIB
    print(f"bare parse: {med('bare', 'wall'):.1f} s ({mbs['bare']:.0f} MB/s), peak {gib(peak_bare):.2f} GiB")
    print(f"statistics: {med('stats', 'wall'):.1f} s ({mbs['stats']:.0f} MB/s), peak {gib(peak_stats):.2f} GiB; "
          f"quarter-size file: peak {gib(small_stats['peak_rss_tree']):.2f} GiB")
    print(f"ratio statistics / bare parse: wall {ratio_wall:.2f} (goal ≤ {GOAL_RATIO}: "
          f"{'met' if goal_ratio else 'MISSED'}), CPU time {ratio_cpu:.2f}")
    print(f"dpcore sweep --stream (statistics + a 4-cell sweep): {cli['seconds']:.1f} s, peak "
          f"{gib(cli['peak_rss_tree']):.2f} GiB (goal ≤ {GOAL_PEAK_GIB} GiB: {'met' if goal_peak else 'MISSED'}; "
          f"exit {cli['returncode']})")
    payload = {
        "benchmark": "streaming",
        "description": "dpcore.stats.from_csv vs pyarrow's bare streaming parse of the same generated CSV",
        "settings": {"file_gib": gib(file_bytes), "rows": n_big, "d": D, "block_bytes": BLOCK, "repeats": repeats,
                     "reservoir": 20_000},
        "goals": {"ratio": GOAL_RATIO, "ratio_met": goal_ratio, "peak_gib": GOAL_PEAK_GIB, "peak_met": goal_peak},
        "environment": environment(),
        "results": {
            "bare_parse": {"wall_s": med("bare", "wall"), "cpu_s": med("bare", "cpu"), "mb_per_s": mbs["bare"],
                           "peak_rss_bytes": peak_bare},
            "statistics": {"wall_s": med("stats", "wall"), "cpu_s": med("stats", "cpu"), "mb_per_s": mbs["stats"],
                           "peak_rss_bytes": peak_stats},
            "ratio_wall_median": ratio_wall, "ratio_cpu_median": ratio_cpu,
            "quarter_size_statistics_peak_rss_bytes": small_stats["peak_rss_tree"],
            "cli_stream_sweep": {"seconds": cli["seconds"], "peak_rss_bytes": cli["peak_rss_tree"],
                                 "returncode": cli["returncode"]},
        },
    }
    if not args.no_write:
        print(f"wrote {write_json('streaming', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
