"""The session odometer for uploaded data (issue 35 item 3): every release computed on an upload is counted where it
is computed, and the sidebar shows the count on every page — (ε, δ) per release, basic and zCDP composition side by
side (the accounting is :class:`dpcore.core.odometer.Odometer`'s; this module only records and lays out), and a
reset that says what resetting means (:data:`~dpcore.core.odometer.RESET_NOTE`: nothing is refunded).

Where releases are counted — once, when computed; a rerun that shows a stored result released nothing new:

* sweeps (Explore, Sample size, Explore's what-if panel; :mod:`pages.ui.sweep`): :func:`watch_sweep` when a sweep is
  submitted marks the cells it reused from the session's cell cache (computed, and counted, before); :func:`tally_sweep`
  right after each collection of finished cells (``pages.ui.sweep._collect``, nothing between them) counts each new
  one once (status ok, ⊥ or capped; an error published nothing);
* Inspect: :func:`count_release` right after the mechanism released, also when the run is interrupted there (its
  stored release is shown on reruns; a release stopped at its time cap: :func:`count_capped`), and
  :func:`count_ledger` when its private pictures are released;
* Explore's ε planner and the Data page's clipping advisor (non-private what-ifs on an upload, counted as NOT
  private): :func:`count_runs` with the releases they simulated, through :func:`counting_runs`, which collects the
  releases as the computation reports them and counts them however it ends (an answer, an error, a rerun or stop
  that interrupts it): a release made before a failure still ran on the upload — one stopped at its time cap
  included; the advisor's DP means (under DP centring) are counted the same way, each as it is drawn.

A count never waits for a later step of the same run: Streamlit raises a rerun or stop request at the next element
call (a spinner's end, a progress bar), so a count placed after one can be skipped.

Built-in datasets are public: nothing computed on them is counted. The Audit page runs mechanisms on neighbouring
datasets it builds itself (synthetic rows), never on an upload: nothing there is counted.

One odometer per uploaded file (by a hash of its bytes): uploading the same file again continues its count, another
file has its own. Nothing shown depends on the rows beyond which releases finished: no n, no record's value.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import dpcore
from dpcore.core.odometer import COUNTED_STATUSES, RESET_NOTE, Odometer
from dpcore.evaluation.captions import short_name
from dpcore.explain.display import format_delta
from dpcore.peers import is_peer
from dpcore.vocabulary import PRIVATE_GUARANTEES
from pages.ui import nav
from pages.ui.datasets import file_fingerprint
from pages.ui.state import UPLOAD_ID, get, put

#: What the odometer says about public data (shown wherever the odometer is).
PUBLIC_NOTE = "Built-in datasets are public: releases on them are not counted."
#: The Audit page's own runs (shown there).
AUDIT_NOTE = ("The Audit page releases on synthetic neighbouring datasets it builds itself, never on your upload: "
              "nothing there is counted.")
#: Groups of identical releases listed in the sidebar (the rest are summed in one line).
SHOWN_GROUPS = 8


@dataclass
class Book:
    """The session's odometers, by uploaded file hash; the fingerprints of the releases each has counted (the same
    release computed again — same data, settings and seed — released nothing new); the files whose count was just
    reset (the note is shown until the next release)."""

    odometers: dict[str, Odometer] = field(default_factory=dict)
    counted: dict[str, set] = field(default_factory=dict)
    reset: set[str] = field(default_factory=set)
    hashed: tuple[bytes, str] | None = None  #: the upload last hashed and its hash (hashed once per file, not per run)

    def first_time(self, upload: str, fingerprint) -> bool:
        """Whether the release ``fingerprint`` is new on ``upload`` (it is then marked counted)."""
        done = self.counted.setdefault(upload, set())
        if fingerprint in done:
            return False
        done.add(fingerprint)
        return True


@dataclass
class _Tally:
    """What a watched sweep has counted: its odometer's file, its label and the cells already seen."""

    upload: str
    what: str
    seen: set = field(default_factory=set)


def _book() -> Book:
    return get("odometer") or put("odometer", Book())


def session_upload() -> str | None:
    """The hash of the session's uploaded file (None when there is none)."""
    data = st.session_state.get("dp_upload")
    if data is None:
        return None
    book = _book()
    if book.hashed is None or book.hashed[0] is not data:
        book.hashed = (data, file_fingerprint(data))
    return book.hashed[1]


def counting_upload() -> str | None:
    """The hash of the upload that releases made now are counted on: the session's upload while it is the chosen
    data, else None (built-in data: public, not counted)."""
    return session_upload() if st.session_state.get("dp_dataset") == UPLOAD_ID else None


def odometer(upload: str) -> Odometer:
    """The odometer of the uploaded file ``upload`` (created empty)."""
    book = _book()
    return book.odometers.setdefault(upload, Odometer())


def _what(label: str) -> str:
    page = nav.current_page()
    return f"{page.title}: {label}" if page is not None else label


def _counted(upload: str, entries: list) -> None:
    if entries:
        _book().reset.discard(upload)  # a new count: the reset note has been read
        _refresh()


def watch_sweep(sweep, label: str) -> None:
    """Count ``sweep``'s releases when the session's data is an upload: the cells it reused are not new."""
    upload = counting_upload()
    if upload is None:
        return
    seen = {(name, index) for name, rows in sweep.rows.items() for index in rows}
    sweep.odometer_tally = _Tally(upload, _what(label), seen)


def tally_sweep(sweep) -> int:
    """Count the cells of a watched sweep that finished since the last tally; returns how many were new."""
    tally: _Tally | None = getattr(sweep, "odometer_tally", None)
    if tally is None:
        return 0
    new, book, entries = 0, _book(), []
    for name, plan in sweep.plans.items():
        fresh = {i: row for i, row in sweep.rows[name].items() if (name, i) not in tally.seen}
        if not fresh:
            continue
        tally.seen.update((name, i) for i in fresh)
        # a cell that ran on the data (ok, ⊥ or capped) and was not counted before: an error published nothing
        released = {i: row for i, row in fresh.items() if row["status"] in COUNTED_STATUSES
                    and book.first_time(tally.upload, plan.cell_key(i))}
        if not released:
            continue
        new += len(released)
        what = tally.what if name == "main" else f"{tally.what} ({name})"
        entries += odometer(tally.upload).record_sweep(plan.frame(released), what, preprocessing=plan.data.ledger,
                                                       preprocessing_key=plan.data.fingerprint)
    _counted(tally.upload, entries)  # after every plan is recorded: the redraw may be where a rerun interrupts
    return new


def count_release(release, data, label: str, fingerprint) -> None:
    """Count one release (Inspect) computed on the current data, when it is an upload; ``fingerprint`` identifies
    it (data, settings, seed): the same release computed again is not counted again."""
    upload = counting_upload()
    if upload is not None and release is not None and _book().first_time(upload, ("release", fingerprint)):
        _counted(upload, odometer(upload).record_release(release, _what(label), preprocessing_key=data.fingerprint))


def count_capped(mech, data, cfg: dict, fingerprint) -> None:
    """Count a release that stopped at its time cap (Inspect): when it stopped depends on the data and the page says
    that it did, so it is a release of the upload at its (ε, δ), as a capped sweep cell is (with the data's
    budget-spending preprocessing, once); ``fingerprint`` as in :func:`count_release`."""
    upload = counting_upload()
    if upload is None or not _book().first_time(upload, ("release", fingerprint)):
        return
    guarantee = str(mech.guarantee_for(cfg["k"], cfg["options"]))
    private = guarantee in PRIVATE_GUARANTEES and all(e.private for e in data.ledger)
    odo, what = odometer(upload), _what("capped at its time limit")
    entries = odo.record_preprocessing(data.ledger, cfg["neighbouring"], what, data.fingerprint, private=private)
    entries += odo.record_runs(mech.id, guarantee, float(cfg["epsilon"]),
                               float(cfg["delta"]) if mech.uses_delta else 0.0, cfg["neighbouring"], what, 1,
                               private=private, options=cfg["options"])
    _counted(upload, entries)


def count_ledger(ledger, relation: str, label: str, fingerprint) -> None:
    """Count the budget-spending steps of a ledger released together (Inspect's pictures), on an upload, once per
    ``fingerprint`` (what identifies the release: its inputs, settings and seed)."""
    upload = counting_upload()
    if upload is not None and _book().first_time(upload, ("ledger", fingerprint)):
        _counted(upload, odometer(upload).record_ledger(ledger, relation, _what(label)))


def count_runs(mechanism: str, runs, delta: float, relation: str, label: str, fingerprint, *,
               private: bool, preprocessing=()) -> None:
    """Count the releases of ``mechanism`` made on the current upload inside one computation that keeps none of
    them — Explore's ε planner (its simulated releases), the Data page's clipping advisor (its trials): ``runs`` is
    ``[(ε, how many), …]``, the releases at each ε in the order the computation made them; ``preprocessing`` the
    budget-spending preprocessing steps it drew, in order (ledger entries, each one release: the advisor's DP
    means). ``fingerprint`` says what the computation ran on (data, settings, seed): the same computation
    makes the same releases in the same order, so the i-th release at ε is counted once per fingerprint — a
    computation interrupted after some releases and then run again in full counts the rest, not all again."""
    upload = counting_upload()
    if upload is None:
        return
    book = _book()
    mech = dpcore.get_mechanism(mechanism)
    delta = float(delta) if mech.uses_delta else 0.0
    odo, entries = odometer(upload), []
    fresh = [step for i, step in enumerate(preprocessing) if book.first_time(upload, ("runs", fingerprint, "pre", i))]
    entries += odo.record_preprocessing(fresh, relation, _what(label), private=private)
    for epsilon, count in runs:
        new = sum(book.first_time(upload, ("runs", fingerprint, float(epsilon), i)) for i in range(int(count)))
        entries += odo.record_runs(mechanism, mech.guarantee, float(epsilon), delta, relation, _what(label),
                                   new, private=private)
    _counted(upload, entries)


@contextmanager
def counting_runs(mechanism: str, delta: float, relation: str, label: str, fingerprint, *,
                  private: bool) -> Iterator[Callable[[float, int], None]]:
    """``with counting_runs(…) as tally:`` — give ``tally(ε, count)`` to a computation that reports its releases as
    it makes them (e.g. :func:`~dpcore.evaluation.planner.plan_epsilon`'s ``on_releases``); on leaving the block the
    releases reported are counted (:func:`count_runs`), also when the block raised (an error, a time cap, a rerun or
    stop request that interrupted it): each one ran on the upload."""
    runs: dict[float, int] = {}

    def tally(epsilon: float, count: int = 1) -> None:
        runs[float(epsilon)] = runs.get(float(epsilon), 0) + int(count)

    try:
        yield tally
    finally:
        count_runs(mechanism, list(runs.items()), delta, relation, label, fingerprint, private=private)


def _reset(upload: str) -> None:
    book = _book()
    book.odometers.setdefault(upload, Odometer()).reset()
    book.counted.pop(upload, None)  # forgotten too: a release computed again after the reset is counted again
    book.reset.add(upload)


def _groups(odo: Odometer) -> list[tuple[str, float, float, bool, int]]:
    """Identical releases (what, ε, δ, private) with how many there were, in the order first counted."""
    counts: dict[tuple[str, float, float, bool], int] = {}
    for e in odo.entries:
        key = (e.what, e.epsilon, e.delta, e.private)
        counts[key] = counts.get(key, 0) + 1
    return [(*key, count) for key, count in counts.items()]


#: A space that never breaks ("ε = 3.5" stays on one line; a cell breaks only between its ε and its δ).
_NBSP = "\u00a0"


def _delta_text(delta: float | None) -> str:
    """δ for the totals table: :func:`format_delta`, or, when that is longer than 8 characters, δ rounded up to
    three significant digits (never shown smaller than it is)."""
    text = format_delta(delta)
    if delta is None or len(text) <= 8 or not math.isfinite(delta) or delta <= 0:
        return text
    step = 10.0 ** (math.floor(math.log10(delta)) - 2)
    return f"{math.ceil(delta / step - 1e-9) * step:.3g}"


def _budget_cell(epsilon: str, delta: str) -> str:
    return f"ε{_NBSP}={_NBSP}{epsilon}, δ{_NBSP}={_NBSP}{delta}"


def _totals_table(totals) -> str:
    """Basic and zCDP composition side by side, one row each: its (ε, δ) in one cell that breaks between ε and δ
    where the sidebar is narrow (three columns of numbers ran past the expander at 1280×800)."""
    zcdp_eps = "—" if totals.zcdp_epsilon is None else f"{totals.zcdp_epsilon:.4g}"
    zcdp_delta = "—" if totals.zcdp_delta is None or not totals.count else _delta_text(totals.zcdp_delta)
    return ("| | total |\n|:--|:--|\n"
            f"| basic | {_budget_cell(f'{totals.basic_epsilon:.4g}', _delta_text(totals.basic_delta))} |\n"
            f"| zCDP | {_budget_cell(zcdp_eps, zcdp_delta)} |")


def _mechanism_name(part: str) -> str:
    """``part`` with the mechanism id it starts with (``"analyze_gauss"``, ``"peer:opendp (NOT private)"``) shown
    by the mechanism's name (``"Analyze Gauss"``); any other text unchanged."""
    head, sep, tail = part.partition(" (")
    if head in dpcore.mechanism_ids() or is_peer(head):
        return short_name(head) + sep + tail
    return part


def named(what: str) -> str:
    """What a counted step was, as the sidebar says it: each mechanism id among its ``": "``-separated parts shown
    by its name, a part repeated right after itself once (``"Inspect: analyze_gauss: analyze_gauss: noise"`` →
    ``"Inspect: Analyze Gauss: noise"``); several steps joined by ``"; "`` each so."""
    out = []
    for step in what.split("; "):
        parts: list[str] = []
        for part in map(_mechanism_name, step.split(": ")):
            if not parts or parts[-1] != part:
                parts.append(part)
        out.append(": ".join(parts))
    return "; ".join(out)


def _release_line(what: str, eps: float, delta: float, private: bool, count: int) -> str:
    budget = "" if eps == 0 and delta == 0 and not private else f" ε = {eps:g}, δ = {format_delta(delta)} —"
    flag = "" if private or "NOT private" in what else " (NOT private)"
    return f"- {count} ×{budget} {named(what)}{flag}"


def _release_lines(odo: Odometer) -> str:
    groups = _groups(odo)
    lines = [_release_line(*group) for group in groups[:SHOWN_GROUPS]]
    rest = groups[SHOWN_GROUPS:]
    if rest:
        lines.append(f"- … and {sum(g[-1] for g in rest)} more releases in {len(rest)} other settings")
    return "\n".join(lines)


def _headline(totals) -> str:
    releases = f"{totals.count} release{'s' if totals.count != 1 else ''}"
    spent = f" · Σε = {totals.basic_epsilon:.3g}, Σδ = {format_delta(totals.basic_delta)}" if totals.count else ""
    flag = " · :orange[not all private]" if not totals.all_private else ""
    return f"**:material/speed: Privacy odometer** (your upload): {releases}{spent}{flag}"


def _draw_body(upload: str, odo: Odometer, totals) -> None:
    st.markdown(_totals_table(totals))
    if totals.count:
        st.caption(f"Basic: the sums of ε and of δ (always valid). zCDP: {named(totals.zcdp_note)}"
                   + (" (the tight conversion of Canonne, Kamath & Steinke 2020)." if totals.zcdp_epsilon is not None
                      else "."))
    for note in totals.notes:
        st.caption(f":orange[:material/warning: {note}]")
    if totals.count:
        st.markdown(_release_lines(odo))
    if upload in _book().reset:
        st.info(f"Count reset: {RESET_NOTE}", icon=":material/restart_alt:")


@dataclass
class _View:
    """This script run's odometer in the sidebar: the placeholders a count made later in the run redraws."""

    token: int
    upload: str
    head: Any
    body: Any


_local = threading.local()  # one script thread per session run


def _run_token() -> int:
    """Identifies the current script run (Streamlit gives every run a fresh cursor table); 0 outside a run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return 0 if ctx is None else id(ctx.cursors)


def _refresh() -> None:
    """Redraw this run's odometer (after a count: the sidebar drawn at the top of the run shows it at once)."""
    view: _View | None = getattr(_local, "view", None)
    if view is None or view.token != _run_token() or view.token == 0:
        return
    odo = odometer(view.upload)
    totals = odo.totals()
    view.head.markdown(_headline(totals))
    with view.body.container():
        _draw_body(view.upload, odo, totals)


def sidebar(slot=None) -> None:
    """The odometer in the sidebar (in ``slot``, a sidebar container under the links, when given), drawn at the top of
    every page run and redrawn when a release is counted later in the run: the session upload's count, or a line
    saying that built-in data is not counted."""
    _local.view = None
    with slot if slot is not None else st.sidebar:
        upload = session_upload()
        if upload is None:
            st.caption(nav.ODOMETER_NO_UPLOAD)
            return
        head = st.empty()
        with st.expander("Totals, releases, reset", icon=":material/tune:"):
            st.caption("Releases computed on your upload in this session, each counted once, when it was computed. "
                       f"{PUBLIC_NOTE}")
            body = st.empty()
            st.button("Reset the count", key="odometer_reset", icon=":material/restart_alt:", on_click=_reset,
                      args=(upload,), help=f"Resetting {RESET_NOTE}")
        if counting_upload() is None:
            st.caption(f"The data chosen now is built-in: {PUBLIC_NOTE}")
        page = nav.current_page()
        if page is not None and page.path == "pages/audit.py":
            st.caption(AUDIT_NOTE)
    _local.view = _View(_run_token(), upload, head, body)
    _refresh()
