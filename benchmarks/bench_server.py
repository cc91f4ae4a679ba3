"""Benchmark: the real server's CPU time per new browser session (page load of Explore + its default sweep).

Starts ``streamlit run app.py`` (headless), opens new sessions one after the other — each a fresh Playwright
context in one headless Chromium (``/usr/bin/chromium``) — and waits until Explore's charts are drawn and the
script run has finished. The server's CPU time (user + sys of the server process and any worker processes it
started, from psutil) is read before and after each session; the first (cold) session pays the imports and the
first sweep and is reported apart, the warm sessions' mean is the figure of merit (issue 12: ≤ 0.5 CPU-s).

With ``--compare`` (the default) the same sessions run twice, on two fresh servers: once with the server-level
caches of built-in data switched off (``DP_SERVER_CACHE=0``, the code path before them) and once with them on.

Run: ``.venv/bin/python benchmarks/bench_server.py [--sessions 6] [--no-compare] [--port 8621]``.
Skips (exit 0, a message) when Chromium or Playwright is missing. Results: ``benchmarks/results/server.json``.
Timings are taken on a shared 2-core machine: the browser competes with the server for the cores, so the wall
times are noisy; CPU seconds of the server process are much steadier.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import time
from pathlib import Path

from _server import free_port, serve  # the one server start, shared with tests/e2e (bench_classroom: from here)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
#: The environment switch of the server-level caches (pages/ui/server_cache.py).
CACHE_SWITCH = "DP_SERVER_CACHE"
#: Explore draws four charts on a labelled dataset (Adult): done when all four have their traces.
CHARTS_DRAWN_JS = """() => {
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  if (charts.length < 4) return false;
  for (const c of charts) if (!c.querySelector('.scatterlayer .trace')) return false;
  return !document.querySelector('[data-testid="stStatusWidget"] [data-testid="stStatusWidgetRunningIcon"]');
}"""


#: Run as ``python <this> -m streamlit run …``: every thread of the server under its own cProfile profiler (CPU
#: time of the thread);
#: SIGUSR2 clears what was collected (after the cold session), SIGUSR1 writes the merged stats to $DP_PROFILE_OUT.
PROFILE_WRAPPER = r"""
import cProfile, pstats, runpy, signal, sys, threading, time

profiles = []

class _Snapshot:
    def __init__(self, profile):
        profile.snapshot_stats()
        self.stats = profile.stats
    def create_stats(self):
        pass

def _hook(frame, event, arg):
    profile = cProfile.Profile(time.thread_time)  # CPU time of the thread, not wall time
    profiles.append(profile)
    profile.enable()

def _clear(*_):
    for profile in profiles:
        profile.clear()

def _dump(*_):
    import os
    stats = None
    for profile in list(profiles):
        snap = _Snapshot(profile)
        if not snap.stats:
            continue
        if stats is None:
            stats = pstats.Stats(snap)
        else:
            stats.add(snap)
    stats.dump_stats(os.environ["DP_PROFILE_OUT"])

signal.signal(signal.SIGUSR1, _dump)
signal.signal(signal.SIGUSR2, _clear)
threading.setprofile(_hook)
_hook(None, None, None)
sys.argv = sys.argv[2:]  # [wrapper, "-m", "streamlit", "run", ...] -> ["streamlit", "run", ...]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def missing_browser() -> str | None:
    """Why the browser benchmarks cannot run here (None when they can)."""
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed"
    try:
        import psutil  # noqa: F401
    except ImportError:
        return "psutil is not installed"
    return None


def server_cpu(pid: int) -> float:
    """CPU seconds (user + sys) of the server process and of the processes it started (e.g. a worker pool)."""
    import psutil

    proc = psutil.Process(pid)
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system
    return total


def settle(pid: int, quiet: float = 0.4, tick: float = 0.1, limit: float = 30.0) -> float:
    """Wait until the server has used no CPU for ``quiet`` seconds (≤ 1 % of a core); returns its CPU time."""
    last, still, deadline = server_cpu(pid), 0.0, time.monotonic() + limit
    while still < quiet and time.monotonic() < deadline:
        time.sleep(tick)
        now = server_cpu(pid)
        still = still + tick if now - last <= 0.01 * tick * 10 else 0.0
        last = now
    return last


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def open_session(browser, url: str, timeout_ms: int = 120_000):
    """A new browser context on ``url``; returns (context, page, seconds until the charts are drawn)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=timeout_ms)
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=timeout_ms, polling=100)
    return context, page, time.perf_counter() - t0


def measure_sessions(url: str, pid: int, sessions: int) -> dict:
    """Open ``sessions`` sessions one after the other; CPU seconds and time to charts of each."""
    from playwright.sync_api import sync_playwright

    cpu, wall = [], []
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        try:
            for i in range(sessions):
                before = settle(pid)
                context, _, seconds = open_session(browser, url)
                after = settle(pid)
                context.close()
                cpu.append(after - before)
                wall.append(seconds)
                print(f"  session {i + 1}: {cpu[-1]:.2f} CPU-s on the server, charts after {seconds:.1f} s",
                      flush=True)
        finally:
            browser.close()
    warm = cpu[1:]
    return {"cold_cpu_s": cpu[0], "warm_cpu_s_mean": statistics.fmean(warm), "warm_cpu_s_median":
            statistics.median(warm), "warm_cpu_s": warm, "cold_time_to_charts_s": wall[0],
            "warm_time_to_charts_s_median": statistics.median(wall[1:])}


def profile_server(port: int, sessions: int, out: Path, env: dict[str, str]) -> None:
    """Profile the server's threads over ``sessions`` warm sessions (after one cold one); print the top entries."""
    import pstats
    import signal
    import tempfile

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        wrapper = Path(tmp) / "profile_server.py"
        wrapper.write_text(PROFILE_WRAPPER)
        out.parent.mkdir(parents=True, exist_ok=True)
        with serve(free_port(port), {**env, "DP_PROFILE_OUT": str(out)}, python_args=(str(wrapper),)) \
                as (url, pid), sync_playwright() as pw:
            browser = launch_browser(pw)
            for i in range(sessions + 1):
                before = settle(pid)
                context, _, seconds = open_session(browser, url)
                after = settle(pid)
                context.close()
                print(f"  session {i + 1} (profiled): {after - before:.2f} CPU-s, charts after {seconds:.1f} s")
                if i == 0:
                    os.kill(pid, signal.SIGUSR2)  # forget the cold session
            browser.close()
            settle(pid)
            out.unlink(missing_ok=True)
            os.kill(pid, signal.SIGUSR1)
            deadline = time.monotonic() + 30
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(1.0)
    stats = pstats.Stats(str(out))
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    print(f"profile of {sessions} warm sessions: {out} (open with pstats or snakeviz)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=6, help="sessions per server (the first is the cold one)")
    parser.add_argument("--port", type=int, default=8621)
    parser.add_argument("--no-compare", action="store_true", help="only the current code path (caches on)")
    parser.add_argument("--quick", action="store_true", help="3 sessions, no comparison")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment of the servers (e.g. STREAMLIT_RUNNER_POST_SCRIPT_GC=false)")
    parser.add_argument("--profile", type=Path, metavar="OUT.prof",
                        help="instead: profile the server (every thread, cProfile) over --sessions warm sessions")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.server_env)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops its server (finally)
    why = missing_browser()
    if why:
        print(f"skipped: {why}")
        return 0
    if args.profile:
        profile_server(args.port, args.sessions, args.profile.resolve(), {**extra, CACHE_SWITCH: "1"})
        return 0
    if args.quick:
        args.sessions, args.no_compare = 3, True
    if args.sessions < 2:
        parser.error("--sessions must be at least 2 (the first one is cold)")
    modes = {"server caches on": "1"} if args.no_compare else {"server caches off (before)": "0",
                                                                 "server caches on": "1"}
    results = {}
    for label, switch in modes.items():
        print(f"{label}:", flush=True)
        with serve(free_port(args.port), {**extra, CACHE_SWITCH: switch}) as (url, pid):
            results[label] = measure_sessions(url, pid, args.sessions)
    print(f"\nServer CPU per new session (Explore, Adult, default sweep; {args.sessions - 1} warm sessions; "
          "shared 2-core machine, browser on the same cores):")
    for label, r in results.items():
        print(f"  {label:28s} warm mean {r['warm_cpu_s_mean']:.2f} CPU-s (median {r['warm_cpu_s_median']:.2f}), "
              f"cold {r['cold_cpu_s']:.2f} CPU-s; charts after {r['warm_time_to_charts_s_median']:.1f} s (warm "
              f"median), {r['cold_time_to_charts_s']:.1f} s (cold)")
    now = results["server caches on"]["warm_cpu_s_mean"]
    print(f"  goal ≤ 0.5 CPU-s per new session: {'met' if now <= 0.5 else 'NOT met'} ({now:.2f})")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {"benchmark": "server CPU per new session", "page": "Explore (default settings)",
           "sessions_per_server": args.sessions, "server_env": extra, "cpu_count": os.cpu_count(), "goal_cpu_s": 0.5,
           "note": "CPU seconds of the server process (and its children) per session; wall times are noisy "
                   "(shared 2-core machine, headless Chromium on the same cores)",
           "results": results}
    (RESULTS / "server.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS / 'server.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
