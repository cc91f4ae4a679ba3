"""Benchmark: a classroom — N browser sessions (default 20) open Explore on one server at the same moment.

Starts ``streamlit run app.py`` (headless), opens one session first (the cold one: imports, the first
preprocessing and sweep; skipped with ``--cold``), then N fresh Playwright contexts in one headless Chromium
(``/usr/bin/chromium``) all navigate to Explore at once. Reported: the p50 / p95 / max time until each session's
four charts are drawn and its script run has finished, and the server's CPU seconds per session (user + sys of the
server process and its worker processes, from psutil, from just before the N sessions until the server is idle).

``--client ws`` replaces the browser by a light websocket client speaking Streamlit's protocol (a ``rerun_script``
message, then the server's messages until the run has finished with four charts): the time to charts is then the
server's alone (no drawing), and without the browser competing for the cores.

With ``--compare`` the classroom runs twice, on two fresh servers: with the server-level caches of built-in data
off (``DP_SERVER_CACHE=0``, the code path before them) and on.

Run: ``.venv/bin/python benchmarks/bench_classroom.py [--sessions 20] [--client browser|ws] [--compare] [--cold]``.
Skips (exit 0, a message) when Chromium or Playwright (``--client ws``: websockets) is missing. Results:
``benchmarks/results/classroom.json`` (``classroom_ws.json`` for ``--client ws``).
The browser runs on the same cores as the server (2 on the machine the numbers in docs/benchmarks.md come from,
shared with other work): the times to charts include the browser's own work of drawing N pages, so they are an
upper bound for students on their own machines; the server's CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_server import (  # noqa: E402
    CACHE_SWITCH,
    CHARTS_DRAWN_JS,
    CHROMIUM,
    CHROMIUM_ARGS,
    RESULTS,
    free_port,
    missing_browser,
    serve,
    settle,
)

TIMEOUT_MS = 600_000


def _missing_ws() -> str | None:
    try:
        import psutil  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed"
    return None


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values``, linear interpolation between order statistics."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


async def _browser_session(browser, url: str, start: asyncio.Event, t0: list[float]) -> float:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = await context.new_page()
        await start.wait()
        await page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        await page.wait_for_function(CHARTS_DRAWN_JS, timeout=TIMEOUT_MS, polling=250)
        return time.perf_counter() - t0[0]
    finally:
        await context.close()


async def _ws_session(url: str, start: asyncio.Event, t0: list[float]) -> float:
    """One session through Streamlit's websocket protocol: ask for a run of the default page, read the server's
    messages until a finished run has drawn Explore's four charts."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    await start.wait()
    async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, open_timeout=TIMEOUT_MS / 1000) as ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = ""
        rerun.rerun_script.page_script_hash = ""
        await ws.send(rerun.SerializeToString())
        charts = 0
        while True:
            msg = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), TIMEOUT_MS / 1000))
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element" \
                    and msg.delta.new_element.WhichOneof("type") == "plotly_chart":
                charts += 1
            elif kind == "script_finished" and charts >= 4:
                return time.perf_counter() - t0[0]


async def _classroom(url: str, pid: int, sessions: int, warm_up: bool, client: str) -> dict:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        if client == "browser":
            from playwright.async_api import async_playwright

            pw = await stack.enter_async_context(async_playwright())
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            stack.push_async_callback(browser.close)

            def session(url: str, start: asyncio.Event, t0: list[float]):
                return _browser_session(browser, url, start, t0)
        else:
            session = _ws_session
        cold = None
        if warm_up:
            before = settle(pid)
            t0 = [time.perf_counter()]
            start = asyncio.Event()
            start.set()
            seconds = await session(url, start, t0)
            cold = {"cpu_s": settle(pid) - before, "time_to_charts_s": seconds}
            print(f"  cold session: {cold['cpu_s']:.2f} CPU-s, charts after {seconds:.1f} s", flush=True)
        before = settle(pid)
        start, t0 = asyncio.Event(), [0.0]
        tasks = [asyncio.create_task(session(url, start, t0)) for _ in range(sessions)]
        await asyncio.sleep(1.0)  # let every context open before the bell
        t0[0] = time.perf_counter()
        start.set()
        times = await asyncio.gather(*tasks)
        wall = time.perf_counter() - t0[0]
        cpu = settle(pid) - before
    out = {"sessions": sessions, "time_to_charts_p50_s": percentile(times, 0.5),
           "time_to_charts_p95_s": percentile(times, 0.95), "time_to_charts_max_s": max(times),
           "all_done_s": wall, "server_cpu_s_total": cpu, "server_cpu_s_per_session": cpu / sessions,
           "times_s": sorted(times), "cold_session": cold}
    print(f"  {sessions} sessions at once: charts p50 {out['time_to_charts_p50_s']:.1f} s, p95 "
          f"{out['time_to_charts_p95_s']:.1f} s, max {max(times):.1f} s; server {cpu:.1f} CPU-s "
          f"({cpu / sessions:.2f} per session)", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--port", type=int, default=8623)
    parser.add_argument("--compare", action="store_true", help="also run with the server-level caches off")
    parser.add_argument("--cold", action="store_true", help="no warm-up session: the classroom meets a fresh server")
    parser.add_argument("--client", choices=("browser", "ws"), default="browser",
                        help="headless Chromium contexts, or light websocket clients (the server's time alone)")
    parser.add_argument("--quick", action="store_true", help="5 sessions")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops its server (finally)
    why = missing_browser() if args.client == "browser" else _missing_ws()
    if why:
        print(f"skipped: {why}")
        return 0
    if args.quick:
        args.sessions = 5
    modes = {"server caches off (before)": "0", "server caches on": "1"} if args.compare else \
        {"server caches on": "1"}
    results = {}
    for label, switch in modes.items():
        print(f"{label}:", flush=True)
        with serve(free_port(args.port), {CACHE_SWITCH: switch}) as (url, pid):
            results[label] = asyncio.run(_classroom(url, pid, args.sessions, not args.cold, args.client))
    who = "headless Chromium" if args.client == "browser" else "websocket clients"
    print(f"\nClassroom: {args.sessions} sessions open Explore at once ({'fresh' if args.cold else 'warm'} server; "
          f"{who} on the same {os.cpu_count()} shared cores):")
    for label, r in results.items():
        print(f"  {label:28s} charts p50 {r['time_to_charts_p50_s']:.1f} s, p95 {r['time_to_charts_p95_s']:.1f} s; "
              f"server {r['server_cpu_s_per_session']:.2f} CPU-s per session")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {"benchmark": "classroom", "page": "Explore (default settings)", "sessions": args.sessions,
           "client": args.client,
           "warm_up_session": not args.cold, "cpu_count": os.cpu_count(),
           "note": "browser and server share the machine's cores (other work running too): times to charts are an "
                   "upper bound; server CPU seconds per session are the steadier figure",
           "results": results}
    name = "classroom.json" if args.client == "browser" else "classroom_ws.json"
    (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
