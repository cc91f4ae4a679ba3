"""The app's navigation: one list of pages, drawn as links at the top of the sidebar on every run.

Streamlit's own sidebar navigation is switched off in ``.streamlit/config.toml`` (``client.showSidebarNavigation =
false``, a public setting): on a fresh server the first script run happens in the legacy ``pages/``-directory mode,
which would list every file of this folder (``_ui`` included) until ``st.navigation`` takes over. With the setting
off that list is never shown, and these links — drawn by the first line of every run — are the only navigation.

When the very first request of a fresh server opens a page URL (e.g. ``/data``), Streamlit runs that page script
directly, without ``app.py``, in the legacy mode. The page then calls :func:`ensure_navigation` (through
``init_state``), which draws the same links (to the page files the legacy mode registered), so the page looks and
works the same either way; the first run of ``app.py`` (any visit to ``/``) ends the legacy mode for good.

This module imports only Streamlit: ``app.py`` draws the navigation before any page loads numpy, scipy or plotly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner import get_script_run_ctx

ROOT = Path(__file__).resolve().parents[2]
#: The tab's icon, served by this server: a ``:material/…:`` icon makes the browser fetch it from fonts.gstatic.com
#: on every page load — a request to a third party that an offline machine logs as an error.
FAVICON = str(Path(__file__).with_name("favicon.png"))
APP_TITLE = "DP-PCA Explorer"

# The mechanisms' eigen-problems are small (d up to a few hundred): one BLAS thread runs them several times faster
# than threads competing for the cores (d = 108: 1.4 ms vs 8 ms per eigh on 2 cores; the default Explore sweep
# 1.2 s vs 4.8 s). Set before the pages load numpy; an explicit environment setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


@dataclass(frozen=True)
class PageSpec:
    path: str  #: relative to the repository root (as AppTest's switch_page expects)
    title: str
    icon: str
    default: bool = False


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/explore.py", "Explore", ":material/monitoring:", default=True),
    PageSpec("pages/data.py", "Data", ":material/database:"),
    PageSpec("pages/sample_size.py", "Sample size", ":material/straighten:"),
    PageSpec("pages/inspect.py", "Inspect a mechanism", ":material/search:"),
    PageSpec("pages/papers.py", "Papers", ":material/article:"),
    PageSpec("pages/basics.py", "Privacy basics", ":material/lightbulb:"),
    PageSpec("pages/learn.py", "Learn", ":material/school:"),
    PageSpec("pages/audit.py", "Audit", ":material/fact_check:"),
)

_run = threading.local()  # one script thread per session run: "is app.py routing this run?"
_after_run: dict[str, Callable[[], None]] = {}  # by qualified name: a re-imported module replaces its hook


def _pages() -> list[st.Page]:
    return [st.Page(ROOT / p.path, title=p.title, icon=p.icon, default=p.default) for p in PAGES
            if (ROOT / p.path).exists()]


def _links(targets: list[tuple[st.Page | Path, PageSpec]]) -> None:
    st.markdown(f"**{APP_TITLE}**")
    for target, spec in targets:
        st.page_link(target, label=spec.title, icon=spec.icon)
    _run.status = st.empty()  # a line under the links, filled by app.py (the start-up precomputation's progress)
    _run.odometer = st.container()  # the privacy odometer (:func:`_odometer`)
    st.divider()


def status_slot():
    """The empty line under the sidebar's links in this script run (None before the links are drawn)."""
    return getattr(_run, "status", None)


#: The odometer's line when the session has no upload (built-in data only).
ODOMETER_NO_UPLOAD = (":material/speed: Privacy odometer: no upload in this session. Built-in datasets are public: "
                      "releases on them are not counted.")


def _odometer() -> None:
    """The privacy odometer of the session's upload under the links (:mod:`pages.ui.odometer`), drawn before the page
    runs; a release the page counts redraws it. Without an upload, one line — and no import of dpcore here, so a
    cold server's first page still paints its heading before numpy and plotly load (issue 33 item 8)."""
    slot = getattr(_run, "odometer", None) or st.sidebar
    if st.session_state.get("dp_upload") is None:
        slot.caption(ODOMETER_NO_UPLOAD)
        return
    from pages.ui import odometer

    odometer.sidebar(slot)


def _declare() -> st.Page:
    """Page config, ``st.navigation`` (hidden: the links replace it) and the links; returns the page to run."""
    st.set_page_config(layout="wide", page_title=APP_TITLE, page_icon=FAVICON)
    pages = _pages()
    page = st.navigation(pages, position="hidden")
    specs = {spec.title: spec for spec in PAGES}
    with st.sidebar:
        _links([(p, specs[p.title]) for p in pages])
    return page


def after_run(callback: Callable[[], None]) -> None:
    """Register a function ``app.py`` calls after every page run (e.g. writing the settings to the URL)."""
    _after_run[f"{callback.__module__}.{callback.__qualname__}"] = callback


def run_app() -> None:
    """``app.py``: declare the pages, draw the links, run the chosen page, then the after-run hooks."""
    if not st.runtime.exists():  # plain `python app.py` (no Streamlit server): nothing to draw
        return
    page = _declare()
    _run.routed, _run.page = True, page.title
    _odometer()
    try:
        page.run()
    finally:
        _run.routed, _run.page = False, None
    for callback in list(_after_run.values()):
        callback()


def current_page() -> PageSpec | None:
    """The page this script run shows: the one ``app.py`` routed to, else the page script Streamlit runs directly
    (legacy mode, or a page run as its own main script); None outside a script run."""
    if getattr(_run, "routed", False):
        return next((spec for spec in PAGES if spec.title == getattr(_run, "page", None)), None)
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    pages = ctx.pages_manager
    info = pages.get_pages().get(pages.current_page_script_hash) or {}
    path = str(info.get("script_path") or ctx.main_script_path).replace("\\", "/")
    return next((spec for spec in PAGES if path.endswith(spec.path)), None)


def ensure_navigation() -> None:
    """Called at the top of every page. When the page runs without ``app.py`` — the first request of a fresh
    server opened its URL, so Streamlit runs in its legacy ``pages/`` mode and has registered every file of the
    folder as a page — draw the same links to those files. (Calling ``st.navigation`` here instead would switch the
    mode off, but mid-page: the rest of the page's widgets would get other ids than in a routed run.) A page run as
    its own main script (no pages registered at all) declares the pages first."""
    if getattr(_run, "routed", False):
        return
    st.set_page_config(layout="wide", page_title=APP_TITLE, page_icon=FAVICON)
    box = st.sidebar.empty()
    try:
        with box.container():
            _links([(ROOT / spec.path, spec) for spec in PAGES if (ROOT / spec.path).exists()])
    except StreamlitAPIException:  # the pages are not registered: this script is the app's main script
        box.empty()
        _declare()
    _odometer()
