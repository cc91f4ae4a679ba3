"""Benchmark: the Explore page's full rerun on `wine` (default mechanisms, Run clicked) vs the bare dpcore sweep.

Not a timed test. Run: ``.venv/bin/python benchmarks/bench_explore_page.py [--repeats 3]``.
Both sides do the same work: the sweep of the selected mechanisms plus the reference-line sweep (non-private
PCA, random subspace) that the page draws. The page side also renders the charts, table and downloads.
The goal is a ratio ≤ 1.3.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bare_sweep(state: dict) -> float:
    import dpcore
    from dpcore.sweep import SweepConfig, run_sweep

    t0 = time.perf_counter()
    data = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), feature_scaling=state["dp_scaling"],
                                  norm_mode=state["dp_norm_mode"], centering=state["dp_centering"],
                                  random_state=state["dp_seed"])
    lo, hi = state["dp_eps_range"]
    eps = [e for e in state["eps_grid"] if lo <= e <= hi]
    common = {"deltas": (state["dp_delta"],), "ks": (state["dp_k"],), "trials": state["dp_trials"],
              "seed": state["dp_seed"], "neighbouring": state["dp_neighbouring"], "time_cap": state["dp_time_cap"]}
    run_sweep(data, SweepConfig(mechanisms=state["mechanisms"], epsilons=eps, **common), dataset_name="wine")
    if state["refs"]:
        run_sweep(data, SweepConfig(mechanisms=state["refs"], epsilons=(1.0,), **common), dataset_name="wine")
    return time.perf_counter() - t0


def page_run(seed: int) -> tuple[float, dict]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["dp_autorun"] = False  # the timed run is the one triggered by the Run button
    at.session_state["dp_seed"] = seed
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    button = at.button(key="explore_run")
    t0 = time.perf_counter()
    button.click().run()
    elapsed = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) >= 3
    from pages import _ui as ui

    ss = at.session_state
    state = {k: ss[k] for k in ("dp_scaling", "dp_norm_mode", "dp_centering", "dp_seed", "dp_eps_range", "dp_delta",
                                "dp_k", "dp_trials", "dp_neighbouring", "dp_time_cap")}
    state["eps_grid"] = ui.EPS_GRID
    state["mechanisms"] = list(ss["_dp_explore_result"][3].mechanisms)
    state["refs"] = [m.id for m in ui.reference_mechanisms() if state["dp_neighbouring"] in m.neighbourings]
    return elapsed, state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    page_run(999)  # warm-up: imports, dataset load
    pages, bares = [], []
    for r in range(args.repeats):
        t_page, state = page_run(seed=r + 1)  # a new seed: no cached sweep
        bares.append(bare_sweep(state))
        pages.append(t_page)
        print(f"repeat {r + 1}: page {t_page:.3f} s, bare sweep {bares[-1]:.3f} s, ratio {t_page / bares[-1]:.2f}")
    page, bare = statistics.median(pages), statistics.median(bares)
    print(f"mechanisms: {', '.join(state['mechanisms'])}; references: {', '.join(state['refs'])}")
    print(f"median page rerun {page:.3f} s, median bare sweep {bare:.3f} s, ratio {page / bare:.2f} (goal ≤ 1.3)")


if __name__ == "__main__":
    main()
