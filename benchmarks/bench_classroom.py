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

``--servers cold,warm`` (issue 22 item 4, websocket clients): the N sessions meet a **cold** server (fresh, no
precomputation: ``DP_PRECOMPUTE=0``, nobody opened a page before) and a **warm** one (one session opened a page,
which starts the background precomputation of :mod:`pages.ui.precompute`; the class comes once its log says it
finished). ``--scenario lesson`` opens Explore with the lesson's five mechanisms (``?mech=…``: Analyze Gauss,
Laplace, MOD-SULQ, PPCA, IT-U × 7 ε × 5 trials on Adult) and presses **Run sweep** (that sweep does not start by
itself); the client then also answers the page's auto-rerun requests (the fragment that streams the releases) as a
browser does: a full run clears them and registers those it still has, and a fragment's own run (its ``new_session``
names the fragment) redraws only the fragment's container, so it never counts as the page. Reported per session:
time to the first chart (the first finished script run with four charts), to the complete chart (four charts and no
progress bar left: every release drawn), and from pressing Run sweep to the complete chart. ``--sizes 1,20`` runs
several class sizes (on one warm server in turn); ``--lesson-query`` a smaller lesson for a quick check.
``--servers warmed``: a fresh server without precomputation on which one session first runs the lesson with a
600 s cell cap (under load the background precomputation's niced workers may not finish PPCA's cells in useful
time, and a session's default 20 s cap stops them); that session is the cold lesson (times, CPU seconds of server
and pool), and the classes then meet the filled store.

Run: ``.venv/bin/python benchmarks/bench_classroom.py [--sessions 20] [--client browser|ws] [--compare] [--cold]``,
or ``… --client ws --servers cold,warm --scenario explore|lesson [--sizes 1,20]``.
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
import re
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
    server_cpu,
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


#: The caption of a finished sweep (pages/ui/sweep.py: "185 releases in 12.3 s …").
_FINISHED = re.compile(r"\d+ releases in [\d.]+ s")
#: A full run after the click that shows neither the sweep streaming nor its end this long after the click: the
#: click did not take; the client presses again (counted in ``reclicks``).
RECLICK_AFTER_S = 5.0

#: The lesson's mechanisms (pages/ui/precompute.py LESSON_MECHANISMS), as Explore's ``mech`` URL parameter.
LESSON_QUERY = "mech=analyze_gauss,laplace,mod_sulq,ppca,itu"


class _Page:
    """What one script run of a websocket session has on screen: the latest element at each delta path (a chart
    redrawn or a progress bar emptied replaces what was at its path), and the Run button's widget id."""

    def __init__(self) -> None:
        self.kinds: dict[tuple, str] = {}
        self.run_button: str | None = None
        self.text: list[str] = []

    @property
    def charts(self) -> int:
        return sum(kind == "plotly_chart" for kind in self.kinds.values())

    @property
    def progress(self) -> bool:
        return "progress" in self.kinds.values()

    def read(self, msg) -> None:
        delta, path = msg.delta, tuple(msg.metadata.delta_path)
        if delta.WhichOneof("type") == "add_block":
            self.kinds[path] = "block"
        if delta.WhichOneof("type") != "new_element":
            return
        kind = delta.new_element.WhichOneof("type")
        self.kinds[path] = kind
        if kind == "button" and delta.new_element.button.label == "Run sweep":
            self.run_button = delta.new_element.button.id
        elif kind == "markdown":
            self.text.append(delta.new_element.markdown.body)
        elif kind == "alert":
            self.text.append(delta.new_element.alert.body)

    @property
    def release_warnings(self) -> list[str]:
        """The lines of the page's "releases carry a warning" note (time-outs, errors, ⊥, not converged)."""
        return [line.strip("- ") for text in self.text if text.startswith("**Some releases carry a warning**")
                for line in text.splitlines()[1:]]


def _mechanisms(query: str) -> list[str]:
    """The mechanisms of a query string's ``mech`` parameter."""
    from urllib.parse import parse_qs

    return parse_qs(query).get("mech", [""])[0].split(",")


def _cancel(pollers: dict[str, asyncio.Task]) -> None:
    for task in pollers.values():
        task.cancel()
    pollers.clear()


async def _ws_lesson_session(url: str, start: asyncio.Event, t0: list[float], query: str, click: bool) -> dict:
    """One session through Streamlit's websocket protocol, as a browser drives it: open the default page (Explore)
    with ``query``, press Run sweep when ``click``, answer auto-rerun requests (a streaming sweep's fragment) until a
    finished run shows four charts and no progress bar. Returns the seconds to the first and to the complete chart."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def rerun(page_hash: str = "", button: str | None = None, fragment: str = "") -> bytes:
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_script_hash = page_hash
        if button is not None:
            state = msg.rerun_script.widget_states.widgets.add()
            state.id, state.trigger_value = button, True
        if fragment:
            msg.rerun_script.fragment_id, msg.rerun_script.is_auto_rerun = fragment, True
        return msg.SerializeToString()

    await start.wait()
    first = complete = pressed = None
    streamed, reclicks = False, 0
    warnings: list[str] = []
    pollers: dict[str, asyncio.Task] = {}

    async def poll(ws, fragment: str, interval: float, page_hash: str) -> None:
        while True:
            await asyncio.sleep(interval)
            await ws.send(rerun(page_hash, fragment=fragment))

    # no client-side keepalive pings (a browser sends none; a busy server answers them late and the client would
    # close the connection)
    async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, open_timeout=TIMEOUT_MS / 1000, ping_interval=None) as ws:
        await ws.send(rerun())
        page, page_hash, clicked, asked, fragment_run = _Page(), "", not click, False, False
        mechanisms = len(_mechanisms(query)) if query else 3
        try:
            while complete is None:
                msg = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), TIMEOUT_MS / 1000))
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    page_hash = msg.new_session.page_script_hash or page_hash
                    # a fragment's own run redraws only its container (the progress line); the page is what the
                    # last full run drew. A full run starts a new page and, as in a browser, clears the auto-reruns
                    # (the run registers the ones it still has).
                    fragment_run = bool(msg.metadata.run.fragment_ids)
                    if not fragment_run:
                        page = _Page()
                        _cancel(pollers)
                elif kind == "delta" and not fragment_run:
                    page.read(msg)
                elif kind == "auto_rerun" and msg.auto_rerun.fragment_id not in pollers:
                    pollers[msg.auto_rerun.fragment_id] = asyncio.create_task(
                        poll(ws, msg.auto_rerun.fragment_id, msg.auto_rerun.interval, page_hash))
                elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                    if not clicked and page.run_button is not None:
                        clicked = True  # the lesson's sweep waits for the button, as in a browser
                        await ws.send(rerun(page_hash, button=page.run_button))
                        pressed = time.perf_counter() - t0[0]
                    elif clicked and page.charts >= 4:
                        asked = asked or any(f"{mechanisms} mechanisms" in text for text in page.text)
                        now = time.perf_counter() - t0[0]
                        first = now if first is None else first
                        streamed = streamed or page.progress
                        # complete: the sweep ran (a progress bar was seen) or says it finished; a run that
                        # shows neither is the page before the click took (e.g. a rerun the app had queued)
                        ran = not click or streamed or any(_FINISHED.match(text) for text in page.text)
                        if not page.progress and ran:
                            complete, warnings = now, page.release_warnings
                        elif not page.progress and not fragment_run and click and page.run_button is not None \
                                and now - pressed > RECLICK_AFTER_S:
                            reclicks += 1  # the click did not reach a run: press again, as a student would
                            await ws.send(rerun(page_hash, button=page.run_button))
        finally:
            _cancel(pollers)
    return {"first_chart_s": first, "complete_s": complete, "settings_kept": asked,
            "run_pressed_to_complete_s": None if pressed is None else complete - pressed,
            "release_warnings": warnings, "reclicks": reclicks}


async def _ws_classroom(url: str, sessions: int, scenario: str, lesson_query: str = LESSON_QUERY) -> dict:
    """``sessions`` websocket sessions open Explore at the same moment; times to first and complete charts."""
    query, click = (lesson_query, True) if scenario == "lesson" else ("", False)
    start, t0 = asyncio.Event(), [0.0]
    tasks = [asyncio.create_task(_ws_lesson_session(url, start, t0, query, click)) for _ in range(sessions)]
    await asyncio.sleep(0.5)
    t0[0] = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks)
    first = [r["first_chart_s"] for r in results]
    complete = [r["complete_s"] for r in results]
    return {"sessions": sessions, "first_chart_p50_s": percentile(first, 0.5),
            "first_chart_p95_s": percentile(first, 0.95), "first_chart_max_s": max(first),
            "complete_p50_s": percentile(complete, 0.5), "complete_p95_s": percentile(complete, 0.95),
            "complete_max_s": max(complete), "first_chart_s": sorted(first), "complete_s": sorted(complete),
            "sessions_showing_the_asked_mechanisms": sum(r["settings_kept"] for r in results),
            "run_pressed_to_complete_s": sorted(r["run_pressed_to_complete_s"] for r in results
                                                if r["run_pressed_to_complete_s"] is not None),
            "release_warnings": sorted({line for r in results for line in r["release_warnings"]}),
            "reclicks": sum(r.get("reclicks", 0) for r in results)}


def _wait_for_log(log: Path, text: str, limit: float) -> float:
    """Seconds until ``text`` appears in the server's log (RuntimeError past ``limit``)."""
    t0 = time.monotonic()
    while text not in log.read_text(errors="replace"):
        if time.monotonic() - t0 > limit:
            raise RuntimeError(f"{text!r} not in {log} after {limit:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - t0


def _precompute(url: str, pid: int, log: Path, limit: float) -> dict:
    """One page view starts the server's precomputation; wait until its log says it is over."""
    t0 = [time.perf_counter()]
    start = asyncio.Event()
    start.set()
    asyncio.run(_ws_lesson_session(url, start, t0, "", False))
    seconds = _wait_for_log(log, "precompute finished", limit)
    settle(pid)
    lines = [line.split("INFO", 1)[-1].strip() for line in log.read_text().splitlines() if "precompute" in line]
    return {"precompute_s": seconds, "precompute_log": lines}


#: The time cap (URL ``cap``, seconds per cell) of the session that fills a "warmed" server: PPCA's releases must
#: finish under load (the cap is no part of a cell's key, so the classes then find them).
WARMING_CAP_S = 600


def _warm_by_session(url: str, pid: int, lesson_query: str) -> dict:
    """A "warmed" server: one session runs the lesson (cap :data:`WARMING_CAP_S`) on a fresh server at session
    priority, filling the server-level store; its times and the CPU seconds of server and pool are the cold lesson."""
    load, before = os.getloadavg(), server_cpu(pid)
    print(f"warming by one lesson session (load {load[0]:.1f})…", flush=True)
    query = f"{lesson_query}&cap={WARMING_CAP_S}"
    out = asyncio.run(_ws_classroom(url, 1, "lesson", query))
    out.update(load_before=load, server_cpu_s=settle(pid) - before, load_after=os.getloadavg(), lesson_query=query)
    print(f"  warming session: Run sweep to complete {out['run_pressed_to_complete_s']} s, server and pool "
          f"{out['server_cpu_s']:.1f} CPU-s, load after {out['load_after'][0]:.1f}; warnings {out['release_warnings']}",
          flush=True)
    return {"warming_session": out}


def run_servers(servers: list[str], sizes: list[int], scenarios: list[str], port: int, limit: float,
                save=lambda results: None, lesson_query: str = LESSON_QUERY) -> dict:
    """The classroom (of each size in ``sizes``) on cold servers (a fresh one per scenario and size) and/or one warm
    (precomputed) server that every scenario and size meets in turn; see the module docstring."""
    import tempfile

    results: dict = {}
    for kind in servers:
        env = {CACHE_SWITCH: "1", "DP_PRECOMPUTE": "1" if kind == "warm" else "0", "DP_PRECOMPUTE_DATASETS": "adult"}
        classes = [(scenario, size) for scenario in scenarios for size in sizes]
        rounds = [[one] for one in classes] if kind == "cold" else [classes]
        for batch in rounds:
            with tempfile.TemporaryDirectory() as tmp:
                log = Path(tmp) / "server.log"
                with serve(free_port(port), env, log=log) as (url, pid):
                    warm = _precompute(url, pid, log, limit) if kind == "warm" else \
                        _warm_by_session(url, pid, lesson_query) if kind == "warmed" else {}
                    if warm:
                        results[f"{kind}/warming"] = warm
                        save(results)
                    for scenario, sessions in batch:
                        load = os.getloadavg()
                        print(f"{kind} server, {scenario}: {sessions} sessions (load {load[0]:.1f})…", flush=True)
                        before = server_cpu(pid)
                        classroom = asyncio.run(_ws_classroom(url, sessions, scenario, lesson_query))
                        out = {"load_before": load, **classroom}
                        out["server_cpu_s"] = settle(pid) - before
                        out["load_after"] = os.getloadavg()
                        print(f"  {kind}/{scenario}: first chart p50 {out['first_chart_p50_s']:.1f} s, p95 "
                              f"{out['first_chart_p95_s']:.1f} s; complete p50 {out['complete_p50_s']:.1f} s, p95 "
                              f"{out['complete_p95_s']:.1f} s; server {out['server_cpu_s']:.1f} CPU-s; Run sweep to "
                              f"complete {out['run_pressed_to_complete_s']} s; load after "
                              f"{out['load_after'][0]:.1f}; release warnings {out['release_warnings']}", flush=True)
                        results[f"{kind}/{scenario}" + ("" if len(sizes) == 1 else f"/{sessions}")] = out
                        save(results)
    return results


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
    parser.add_argument("--servers", help="cold,warm,warmed: the class meets a fresh server and/or one whose "
                                          "precomputation has finished and/or one a first lesson session filled "
                                          "(cap 600 s; websocket clients)")
    parser.add_argument("--scenario", default="explore",
                        help="with --servers: explore (Explore's defaults) and/or lesson (the lesson's five "
                             "mechanisms and Run sweep), comma-separated")
    parser.add_argument("--sizes", help="with --servers: class sizes, comma-separated (e.g. 1,20; default "
                                        "--sessions); a warm server meets each in turn, a cold one is fresh per size")
    parser.add_argument("--lesson-query", default=LESSON_QUERY,
                        help="the lesson's URL parameters, e.g. a smaller lesson for a quick check: "
                             "'mech=analyze_gauss,ppca&trials=1&eps=1~2' (its cells are not precomputed)")
    parser.add_argument("--precompute-limit", type=float, default=1800.0, help="seconds to wait for it (warm)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops its server (finally)
    if args.servers:
        return _main_servers(args)
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


def _main_servers(args) -> int:
    why = _missing_ws()
    if why:
        print(f"skipped: {why}")
        return 0
    servers = [s.strip() for s in args.servers.split(",") if s.strip() in ("cold", "warm", "warmed")]
    sizes = [5] if args.quick else [int(n) for n in args.sizes.split(",")] if args.sizes else [args.sessions]
    scenarios = [s.strip() for s in args.scenario.split(",") if s.strip() in ("explore", "lesson")]
    custom = "_custom" if args.lesson_query != LESSON_QUERY and "lesson" in scenarios else ""
    name = RESULTS / f"classroom_servers_{'_'.join(scenarios)}{custom}.json"
    RESULTS.mkdir(parents=True, exist_ok=True)

    def save(results: dict) -> None:  # after every classroom: a later failure keeps the earlier numbers
        name.write_text(json.dumps({**head, "results": results}, indent=2) + "\n")

    head = {"benchmark": "classroom, cold and warm (precomputed) server", "scenarios": {
               "explore": "Explore on Adult, default settings (3 mechanisms, auto-run)",
               "lesson": "Explore on Adult, the lesson's five mechanisms (?mech=...), Run sweep"},
           "sessions": sizes, "client": "websocket (Streamlit protocol, no browser)", "cpu_count": os.cpu_count(),
           "goal": "first chart p95 <= 10 s for 20 sessions"}
    head["lesson_query"] = args.lesson_query
    save(run_servers(servers, sizes, scenarios, args.port, args.precompute_limit, save, args.lesson_query))
    print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
