"""Display helpers shared by the pages: errors, banners, guarantee badges, the ledger, presentation mode and the
notes next to the charts. The charts themselves (trace styles, mechanism colours, the metric figures) are drawn by
:mod:`dpcore.explain.figures`, whose names are re-exported here."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS, LedgerEntry
from dpcore.exceptions import DPCoreError
from dpcore.explain.figures import (  # noqa: F401 (re-exported: the pages and tests import them from here)
    _PALETTE,
    BASELINE_COLOR,
    FULL_WIDTH,
    GUIDE_OPACITY,
    GUIDE_WIDTH,
    HALF_WIDTH,
    INVALID_STYLES,
    LEGEND_FONT,
    LOG_FLOOR,
    MAJORITY_LABEL,
    METRIC_TITLES,
    METRIC_UNITS,
    NOT_PRIVATE_HOVER,
    PLOT_HEIGHT,
    PRESENT_FONT,
    PRESENT_PLOT_HEIGHT,
    PRESENT_TITLE,
    RANDOM_TOLERANCE,
    REFERENCE_STYLES,
    REFERENCE_TAGS,
    TAG_FONT,
    TAG_GAP,
    TAG_MARGIN,
    TAG_SLACK,
    WARNING_MEANINGS,
    ZERO_LABEL,
    ZERO_TAG,
    TraceStyle,
    _band_segments,
    _curve_traces,
    _extent,
    _failed_marks,
    _gapped,
    _hline,
    _is_tag,
    _legend_names,
    _legend_order,
    _reference_marks,
    _registry_styles,
    _rgba,
    _span,
    _tag_axis,
    _warning_lookup,
    _x_axis,
    _y_axis,
    at_random_line,
    chart_frame,
    figure_from_dict,
    legend_layout,
    legend_rows,
    log_ticks,
    majority_baseline,
    mechanism_colors,
    metric_figure,
    presentation_figure,
    random_line_note,
    release_warning_header,
    release_warning_lines,
    spread_tags,
    tag_offsets,
    tick_text,
    trace_style,
)
from dpcore.vocabulary import Guarantee

BANNER = "These charts use the true data and are an evaluation sandbox, not a private release."
GUARANTEE_COLORS = {Guarantee.PURE: "green", Guarantee.APPROX: "blue", Guarantee.HEURISTIC_MCMC: "orange",
                    Guarantee.CLAIMED_INVALID: "red", Guarantee.NONE: "gray"}


# ------------------------------------------------------------------------------------------------
# errors, banners, badges
@contextmanager
def handle_errors() -> Iterator[None]:
    """Turn a :class:`dpcore.DPCoreError` raised inside the block into ``st.error`` (no traceback)."""
    try:
        yield
    except DPCoreError as exc:
        st.error(str(exc))


def evaluation_banner() -> None:
    st.info(BANNER, icon=":material/science:")


def guarantee_badge(mech_or_guarantee: Any) -> str:
    """Markdown badge for a guarantee (pass a mechanism, its id, or a guarantee name)."""
    g = mech_or_guarantee
    if not isinstance(g, str):
        g = g.guarantee
    elif g not in GUARANTEE_LABELS:
        g = dpcore.get_mechanism(g).guarantee
    label = GUARANTEE_LABELS[g].replace("[", "(").replace("]", ")")
    return f":{GUARANTEE_COLORS.get(g, 'gray')}-badge[{label}]"


def mechanism_label(mid: str) -> str:
    return dpcore.get_mechanism(mid).name


def show_ledger(entries: Iterable[LedgerEntry]) -> None:
    """The privacy ledger as a list; non-private steps in red."""
    entries = list(entries)
    if not entries:
        st.markdown("*No data-dependent preprocessing steps.*")
        return
    lines = []
    for e in entries:
        cost = []
        if e.epsilon:
            cost.append(f"ε = {e.epsilon:g}")
        if e.delta:
            cost.append(f"δ = {e.delta:g}")
        note = f" — {e.note}" if e.note else ""
        if not cost and e.rho:  # a zCDP share whose (ε, δ) is charged in a later conversion row: it spends budget
            cost.append(f"ρ = {e.rho:.4g}, zCDP")
        if e.private:
            cost_txt = ", ".join(cost) or "no privacy cost"
            lines.append(f"- :green[:material/check_circle:] **{e.step}** ({cost_txt}){note}")
        else:
            lines.append(f"- :red[:material/warning: **{e.step}** — NOT private{note}]")
    st.markdown("\n".join(lines))
    if not dpcore.core.privacy.ledger_is_private(entries):
        st.markdown(":red[A non-private step voids the end-to-end guarantee of every release on this data.]")


_SPEC_REF = re.compile(r"(?:[;,]\s*|\bper\s+)?\bspec §[\d.]+(?:[–-][\d.]+)?:?\s?")
_EMPTY_PARENS = re.compile(r"\s*\(\s*\)")


def public_text(text: str) -> str:
    """Text from the registry or the docs as users read it: without pointers into the project's internal
    specification ("(spec §3.9)", "per spec §3.8"), which users do not have."""
    return _EMPTY_PARENS.sub("", _SPEC_REF.sub("", text or ""))


# ------------------------------------------------------------------------------------------------
# presentation mode: a lecture on a projector (1280×800)
#: Session key of the "Presentation mode" switch (a shared setting, :data:`pages.ui.state.SETTINGS`).
PRESENTATION_KEY = "dp_presentation"
#: The page's text in presentation mode: Streamlit sizes everything relative to the root font size (16 px).
#: Tab bars wrap onto a second row instead of scrolling (at 1280 px the Papers page showed 4½ of its 7 tabs).
PRESENT_CSS = ("<style>html { font-size: 18px; } "  # tabs wrap onto a second row rather than scroll out of sight
               "[role='tablist'], [data-baseweb='tab-list'] { flex-wrap: wrap; row-gap: 0.25rem; }</style>")


def presentation_on() -> bool:
    """Whether the session is in presentation mode (one chart per row, larger text)."""
    return bool(st.session_state.get(PRESENTATION_KEY, False))


def presentation_toggle() -> None:
    """The sidebar switch of presentation mode (pages with charts side by side or large charts call it); kept
    for the whole session, on every page."""
    st.toggle("Presentation mode", key=PRESENTATION_KEY,
              help="For a projector: each chart full width, one per row, with larger text in the charts and on the "
                   "page. Stays on for the session, on every page.")
    if presentation_on():
        st.html(PRESENT_CSS)


def chart_slots(count: int, columns: int = 2) -> list:
    """The containers ``count`` charts go into: ``columns`` side by side, or one full-width row each in
    presentation mode."""
    if presentation_on():
        return [st.container() for _ in range(count)]
    cols = st.columns(columns)
    return [cols[i % columns] for i in range(count)]


#: Stored figures (Papers: drawn at 1,000–1,400 px with 13 px text, shown ≈ 850 px wide, so ≈ 8–9 px on screen):
#: their text size on the page, and in presentation mode.
STORED_FONT = 14
STORED_TITLE = 17
#: A stored figure's title longer than this is set on lines of at most this many characters, broken after its " — "
#: first (one line ran off the right edge).
STORED_TITLE_CHARS = 50


def stored_figure_for_screen(spec: dict) -> go.Figure:
    """A stored Plotly figure (its ``{"data", "layout"}``) at the page's width with text one can read: every font
    (body, title, axes, legend, subplot titles and notes) raised to :data:`STORED_FONT` (:data:`PRESENT_FONT` in
    presentation mode), the fixed width dropped so it follows the page."""
    spec = {"data": spec.get("data") or [], "layout": dict(spec.get("layout") or {})}
    layout = spec["layout"]
    present = presentation_on()
    body, title = (PRESENT_FONT, PRESENT_TITLE) if present else (STORED_FONT, STORED_TITLE)
    layout.pop("width", None)
    layout["autosize"] = True
    layout["font"] = {**(layout.get("font") or {}), "size": body}
    if isinstance(layout.get("title"), dict):
        layout["title"] = {**layout["title"], "font": {**(layout["title"].get("font") or {}), "size": title}}
        text = str(layout["title"].get("text") or "")
        if len(text) > STORED_TITLE_CHARS and "<br>" not in text:  # lines that fit, not one cut off at the edge
            lines = [line for part in text.split(" — ")
                     for line in textwrap.wrap(part, STORED_TITLE_CHARS, break_long_words=False)]
            layout["title"].update(text="<br>".join(lines), yref="container", y=1, yanchor="top", pad={"t": 8})
            margin = dict(layout.get("margin") or {})
            margin["t"] = max(float(margin.get("t") or 0), 1.3 * title * len(lines) + 30 + body)  # + subplot titles
            layout["margin"] = margin
    if isinstance(layout.get("legend"), dict) or "legend" not in layout:
        legend = dict(layout.get("legend") or {})
        legend["font"] = {**(legend.get("font") or {}), "size": body}
        layout["legend"] = legend
    for key in list(layout):
        if key.startswith(("xaxis", "yaxis")) and isinstance(layout[key], dict):
            axis = dict(layout[key])
            axis["tickfont"] = {**(axis.get("tickfont") or {}), "size": body - 1}
            if isinstance(axis.get("title"), dict):
                axis["title"] = {**axis["title"], "font": {**(axis["title"].get("font") or {}), "size": body}}
            axis["automargin"] = True
            layout[key] = axis
    layout["annotations"] = [{**note, "font": {**(note.get("font") or {}), "size": body}}
                             for note in layout.get("annotations") or []]
    scale = body / 13  # the stored figures' text size: their height grows with the text
    if layout.get("height"):
        layout["height"] = round(float(layout["height"]) * max(1.0, scale))
    return figure_from_dict(spec)


def for_screen(fig: go.Figure) -> go.Figure:
    """``fig`` as the session shows it: :func:`presentation_figure` in presentation mode, else unchanged."""
    return presentation_figure(fig) if presentation_on() else fig


def png_export_available() -> bool:
    """True when kaleido and a Chromium binary are present (static PNG export; see :mod:`pages.ui.export`)."""
    from pages.ui.export import png_export_available as available

    return available()


def figure_png(fig: go.Figure, caption: str = "") -> bytes:
    """Render a figure to a slide-ready PNG with ``caption`` inside (see :func:`pages.ui.export.figure_png`)."""
    from pages.ui.export import figure_png as render

    return render(fig, caption)


# ------------------------------------------------------------------------------------------------
# notes next to the charts
def app_intro(show_chart: bool = True) -> None:
    """The first screen: the sentence saying what the app is and where to start, beside a stored chart of the
    default run (:mod:`pages.ui.first_screen`: nothing is computed before it paints); the sentence alone when
    ``show_chart`` is False."""
    from pages.ui import first_screen

    first_screen.render(show_chart)


def release_warning_note(frame: pd.DataFrame | None) -> None:
    """Above a results table: the releases with a warning status (also hollow markers and ✕ on the charts)."""
    lines = release_warning_lines(frame)
    if lines:
        st.warning(release_warning_header(frame) + "\n" + "\n".join(f"- {line}" for line in lines),
                   icon=":material/warning:")
