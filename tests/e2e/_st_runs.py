"""Whether the script runs a browser page asked Streamlit for are over: a watcher of the app's websocket.

Streamlit 1.67's DOM says too little: its status widget (``stStatusWidget``, "Running…") appears only once a run has
lasted 500 ms (the frontend starts a 500 ms timer when the run state turns RUNNING), and ``stApp``'s
``data-test-script-state`` turns "running" only when the server's ``session_status_changed`` arrives. Between a click
and that message, and during a run's first half second, the page looks idle: a wait on those alone can pass before
the rerun of the action just taken has started, and the next action then acts on the previous render.

:data:`WATCH_RUNS` (an init script: :func:`watch_runs` adds it to a browser context) wraps the page's ``WebSocket``
and reads the top-level fields of Streamlit's protobuf messages (streamlit/proto, 1.67):

* sent ``BackMsg.rerun_script`` (field 11) without ``ClientState.fragment_id`` (5): a full run asked for (a widget
  change, a button, a page link, the first load). Fragment reruns (the app's ``run_every`` polls) are not counted:
  the server drops a rerun of a fragment that a full run removed, so nothing would ever answer it.
* received ``ForwardMsg.new_session`` (4): a run started; ``script_finished`` (6) with any status but
  ``FINISHED_EARLY_FOR_RERUN`` (2): a run ended; ``session_status_changed`` (9) → ``script_is_running`` (2).

A page is idle when a run started after the last full rerun it asked for, a run finished after that start, and the
server last said that no script is running (runs the server starts itself, e.g. a sweep's ``st.rerun``, are covered by
that last condition once their first message arrived).
"""

from __future__ import annotations

import time

from playwright.sync_api import BrowserContext, Page

WATCH_RUNS = r"""
(() => {
  if (window.__stRuns || typeof WebSocket !== 'function') return;
  const runs = {seq: 0, asked: 0, started: 0, finished: 0, running: false};
  runs.idle = () => !runs.running && runs.started > runs.asked && runs.finished > runs.started;
  window.__stRuns = runs;
  const bytes = d => d instanceof ArrayBuffer ? new Uint8Array(d)
    : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : null;
  const varint = (b, i) => {
    let v = 0, m = 1, x;
    do { x = b[i++]; v += (x & 127) * m; m *= 128; } while (x & 128);
    return [v, i];
  };
  // the top-level fields of a protobuf message: visit(field number, varint value or the bytes of a length field)
  const fields = (b, visit) => {
    let i = 0;
    while (i < b.length) {
      let tag, v;
      [tag, i] = varint(b, i);
      const number = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { [v, i] = varint(b, i); visit(number, v); }
      else if (wire === 2) { [v, i] = varint(b, i); visit(number, b.subarray(i, i + v)); i += v; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return;
    }
  };
  const Native = window.WebSocket;
  class Watched extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', event => {
        const b = bytes(event.data);
        if (b) fields(b, (n, v) => {
          if (n === 4) runs.started = ++runs.seq;
          else if (n === 6 && typeof v === 'number' && v !== 2) runs.finished = ++runs.seq;
          else if (n === 9 && typeof v !== 'number') {
            let on = false;
            fields(v, (m, x) => { if (m === 2) on = x === 1; });
            runs.running = on;
          }
        });
      });
    }
    send(data) {
      const b = bytes(data);
      if (b) fields(b, (n, v) => {
        if (n !== 11 || typeof v === 'number') return;
        let fragment = false;
        fields(v, (m, x) => { if (m === 5 && typeof x !== 'number' && x.length) fragment = true; });
        if (!fragment) runs.asked = ++runs.seq;
      });
      return super.send(data);
    }
  }
  window.WebSocket = Watched;
})();
"""

#: After the watcher says idle, it must still say so this much later (a rerun asked for just before an answer of
#: the previous one arrived, or the frontend still drawing the last messages).
SETTLE_MS = 150


def watch_runs(context: BrowserContext) -> BrowserContext:
    """Add :data:`WATCH_RUNS` to every page of ``context`` (before the app's scripts); returns ``context``."""
    context.add_init_script(WATCH_RUNS)
    return context


def wait_runs_done(page: Page, timeout_ms: float) -> None:
    """Wait until every full rerun ``page`` asked for has run and no script runs (:data:`WATCH_RUNS`), twice
    :data:`SETTLE_MS` apart. Raises AssertionError when the page has no watcher or ``timeout_ms`` passes first."""
    if not page.evaluate("() => !!window.__stRuns"):
        raise AssertionError("this page has no run watcher: create its browser context with watch_runs(context)")
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        left = max(deadline - time.monotonic(), 0.001) * 1000
        try:
            page.wait_for_function("() => window.__stRuns.idle()", timeout=left)
        except Exception as error:  # playwright's TimeoutError: say what the watcher saw
            state = page.evaluate("() => JSON.stringify(window.__stRuns)")
            raise AssertionError(f"the app's script runs did not end within {timeout_ms / 1000:g} s: {state}") \
                from error
        page.wait_for_timeout(SETTLE_MS)
        if page.evaluate("() => window.__stRuns.idle()"):
            return
