"""Benchmark: the Explore page's full rerun on `wine` (default mechanisms, Run clicked) vs the bare dpcore sweep.

Not a timed test. Run: ``.venv/bin/python benchmarks/bench_explore_page.py [--repeats 7]``.

Three timings per repeat, interleaved in one process (the order rotates between repeats), medians reported:

* **bare** — ``run_sweep`` called directly: the sweep of the selected mechanisms plus the reference-line sweep
  (non-private PCA, random subspace) that the page draws, on the same preprocessed data and seed.
* **page** — an AppTest rerun of the Explore page after clicking *Run sweep* (new seed: nothing cached), which
  runs both sweeps and renders the charts, table and downloads.
* **floor** — an AppTest rerun of a page that runs only those two sweeps (no UI at all).

AppTest itself costs time that no page can avoid: its script thread competes for the GIL with a polling loop
(``time.sleep(0.001)`` in the main thread), which slows CPU-bound work down by ~5–15 %, and it recompiles the page
scripts on every run (the real server caches their bytecode). ``page − floor`` is the page's own overhead.
Every measurement is therefore taken twice: with AppTest as it is, and "server-like": the same AppTest runs with
the polling loop replaced by a blocking wait for the script thread and one bytecode cache shared between runs,
as in ``streamlit run``. The issue's goal is page / bare ≤ 1.3.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FLOOR_PAGE = textwrap.dedent('''
    import streamlit as st
    import dpcore
    from dpcore.evaluation.sweep import SweepConfig, run_sweep

    args = st.session_state["bench_args"]
    if "bench_data" not in st.session_state:
        st.session_state["bench_data"] = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), **args["prep"])
    if st.button("Run", key="run"):
        data = st.session_state["bench_data"]
        run_sweep(data, SweepConfig(**args["sweep"]), dataset_name="wine")
        if args["ref"]:
            run_sweep(data, SweepConfig(**args["ref"]), dataset_name="wine")
''')


@contextlib.contextmanager
def server_like():
    """Patch AppTest to run scripts like the real server: no polling loop, bytecode compiled once."""
    import streamlit.testing.v1.app_test as app_test
    import streamlit.testing.v1.local_script_runner as lsr
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    def wait(runner, timeout: float = 3) -> None:
        runner._script_thread.join(timeout)
        if runner._script_thread.is_alive():
            runner.request_stop()
            runner.join()
            raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    shared = ScriptCache()
    saved = lsr.require_widgets_deltas, lsr.ScriptCache, app_test.ScriptCache
    lsr.require_widgets_deltas = wait
    lsr.ScriptCache = app_test.ScriptCache = lambda: shared
    try:
        yield
    finally:
        lsr.require_widgets_deltas, lsr.ScriptCache, app_test.ScriptCache = saved


def _page_state(at) -> dict:
    """The sweep settings the page used, read back from its session state."""
    from pages import ui

    ss = at.session_state
    config = ss["_dp_explore_result"].config
    refs = [m.id for m in ui.reference_mechanisms() if config.neighbouring in m.neighbourings]
    prep = {"feature_scaling": ss["dp_scaling"], "norm_mode": ss["dp_norm_mode"], "centering": ss["dp_centering"],
            "random_state": int(ss["dp_seed"])}
    sweep = {"mechanisms": list(config.mechanisms), "epsilons": list(config.epsilons), "deltas": list(config.deltas),
             "ks": list(config.ks), "trials": config.trials, "seed": config.seed,
             "neighbouring": config.neighbouring, "time_cap": config.time_cap}
    ref = {**sweep, "mechanisms": refs, "epsilons": [1.0]} if refs else None
    return {"prep": prep, "sweep": sweep, "ref": ref}


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
    return elapsed, _page_state(at)


def floor_run(args: dict | None) -> float:
    """AppTest rerun of a page doing only the sweeps (``args=None``: an empty page — AppTest's fixed cost)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FLOOR_PAGE if args else 'import streamlit as st\nst.button("Run", key="run")\n',
                             default_timeout=300)
    if args:
        at.session_state["bench_args"] = args
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    button = at.button(key="run")
    t0 = time.perf_counter()
    button.click().run()
    elapsed = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    return elapsed


def bare_sweep(args: dict) -> float:
    import dpcore
    from dpcore.evaluation.sweep import SweepConfig, run_sweep

    t0 = time.perf_counter()
    data = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), **args["prep"])
    run_sweep(data, SweepConfig(**args["sweep"]), dataset_name="wine")
    if args["ref"]:
        run_sweep(data, SweepConfig(**args["ref"]), dataset_name="wine")
    return time.perf_counter() - t0


def compile_time() -> float:
    """What AppTest spends recompiling ``app.py`` and the Explore page on every run."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    t0 = time.perf_counter()
    cache = ScriptCache()
    for path in (ROOT / "app.py", ROOT / "pages" / "explore.py"):
        cache.get_bytecode(str(path))
    return time.perf_counter() - t0


def with_seed(state: dict, seed: int) -> dict:
    out = {**state, "sweep": {**state["sweep"], "seed": seed}}
    if state["ref"]:
        out["ref"] = {**state["ref"], "seed": seed}
    return out


def measure(repeats: int, state: dict, *, label: str) -> dict[str, float]:
    """Median times (ms) of page, floor and bare over ``repeats`` interleaved repeats."""
    times: dict[str, list[float]] = {"page": [], "floor": [], "bare": []}
    order = ["page", "floor", "bare"]
    for r in range(repeats):
        seed = r + 1  # a new seed every repeat: nothing is cached
        for kind in order[r % 3:] + order[:r % 3]:
            if kind == "page":
                t, state = page_run(seed)
            elif kind == "floor":
                t = floor_run(with_seed(state, seed))
            else:
                t = bare_sweep(with_seed(state, seed))
            times[kind].append(t)
        print(f"  {label} repeat {r + 1}: page {times['page'][-1] * 1e3:.0f} ms, floor {times['floor'][-1] * 1e3:.0f}"
              f" ms, bare sweep {times['bare'][-1] * 1e3:.0f} ms")
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def report(label: str, med: dict[str, float]) -> None:
    page, floor, bare = med["page"], med["floor"], med["bare"]
    print(f"{label}: page {page:.0f} ms, floor {floor:.0f} ms, bare sweep {bare:.0f} ms")
    print(f"    page / bare = {page / bare:.2f} (goal ≤ 1.3), page − bare = {page - bare:.0f} ms; "
          f"floor / bare = {floor / bare:.2f}; page − floor = {page - floor:.0f} ms (the page's own overhead)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if args.repeats < 5:
        parser.error("--repeats must be at least 5 (medians)")
    # warm-up: imports, dataset load, first-call caches of every code path
    _, state = page_run(999)
    floor_run(with_seed(state, 998)), floor_run(None), bare_sweep(state), compile_time()
    with server_like():
        page_run(997)
    apptest = measure(args.repeats, state, label="AppTest")
    with server_like():
        server = measure(args.repeats, state, label="server-like")
    empty = statistics.median(floor_run(None) for _ in range(args.repeats)) * 1e3
    compile_ms = statistics.median(compile_time() for _ in range(args.repeats)) * 1e3
    mechs = ", ".join(state["sweep"]["mechanisms"])
    refs = ", ".join(state["ref"]["mechanisms"]) if state["ref"] else "none"
    print(f"\nwine, mechanisms: {mechs}; reference lines: {refs}; medians of {args.repeats} interleaved repeats")
    report("AppTest as is      ", apptest)
    report("AppTest server-like", server)
    print(f"empty-page AppTest rerun {empty:.1f} ms; compiling app.py + pages/explore.py {compile_ms:.1f} ms "
          "(repeated by every plain AppTest run)")


if __name__ == "__main__":
    main()
