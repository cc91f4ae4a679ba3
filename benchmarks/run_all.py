"""Run every benchmark and experiment in this folder, one after the other (``make bench``).

Each script prints its own table and writes ``benchmarks/results/<name>``. ``--quick`` passes ``--quick`` to the
scripts that support it (smoke run). Benchmarks report ratios measured in one run, never absolute timings.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (script, supports --quick)
SCRIPTS = (
    ("bench_input_perturbation.py", True),
    ("bench_itu_vs_diffprivlib.py", True),
    ("bench_ppca.py", True),
    ("bench_parallel.py", True),
    ("bench_responsiveness.py", True),
    ("bench_fairness.py", True),
    ("bench_memory.py", True),
    ("bench_streaming.py", True),
    ("bench_explore_page.py", False),
    ("bench_server.py", True),  # these two skip (exit 0) without Chromium or Playwright
    ("bench_classroom.py", True),
    ("audit_table.py", False),
    ("ss_dimension_sweep.py", True),
    ("reproduce_papers.py", True),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke run of the scripts that support it")
    parser.add_argument("--only", nargs="*", help="run only these scripts (file names)")
    args = parser.parse_args()
    failed = []
    for script, has_quick in SCRIPTS:
        if args.only and script not in args.only:
            continue
        cmd = [sys.executable, str(HERE / script)] + (["--quick"] if args.quick and has_quick else [])
        print(f"\n=== {script} ===", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, stdin=subprocess.DEVNULL)
        print(f"=== {script}: exit {rc} after {time.perf_counter() - t0:.0f} s", flush=True)
        if rc:
            failed.append(script)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
