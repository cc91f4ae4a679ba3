"""Explore's charts, drawn one way for the dashboard, ``dpcore run`` and the exported scripts and notebooks: the
mechanisms' trace styles, the metric figures (plain figure dicts, wrapped without re-validation), their reference
lines and margin tags, the presentation-mode copy, and the slide-ready exports (a figure with its caption inside,
rendered to PNG through kaleido or to self-contained HTML).

Pure Python over Plotly (the ``app`` extra): no Streamlit import. The pages (:mod:`pages.ui.charts`,
:mod:`pages.ui.export`, :mod:`pages.ui.explore_view`) re-export these names and add the widgets.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import math
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS
from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.reporting import (
    NOT_CONVERGED,
    WARNING_KINDS,
    band_table,
    export_caption,
    guarantee_short,
    legend_label,
    reference_levels,
    release_warnings,
    run_guarantees,
    short_name,
    warning_counts,
    warning_text,
    wrap_caption,
)
from dpcore.vocabulary import Band, Neighbouring, ReleaseStatus

#: Colours of private mechanisms: no reds or pinks (red means NOT PRIVATE), no greys (greys are the references).
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#393b79",
            "#637939", "#3182bd", "#31a354", "#7b4173", "#756bb1", "#8ca252", "#6baed6", "#fd8d3c", "#bd9e39",
            "#9e9ac8", "#74c476", "#e7969c")
#: Claimed-invalid exhibits: red, dashed, an x marker (two shades and dash patterns tell two of them apart).
INVALID_STYLES = (("#d62728", "dash"), ("#a50f15", "dashdot"), ("#ef3b2c", "longdash"))
#: Reference curves: neutral greys (non-private PCA, the random subspace).
REFERENCE_STYLES = {"pca": ("#333333", "dash"), "random": ("#8c8c8c", "dot")}
NOT_PRIVATE_HOVER = "<b>NOT PRIVATE</b>: its published privacy proof is wrong"
#: Colour and label of the majority-class baseline drawn on every SVM-accuracy chart.
BASELINE_COLOR = "#555555"
MAJORITY_LABEL = "majority class"
#: Titles and y-axis labels of the sweep metrics' charts (Explore and a loaded sweep CSV draw the same charts).
METRIC_TITLES = {"captured_variance_ratio": "Captured variance (ratio to optimum)",
                 "frobenius_error": "Normalised Frobenius error (covariance releases)",
                 "principal_angle_max_deg": "Largest principal angle",
                 "svm_accuracy": "Linear-SVM accuracy in the k-dim subspace"}
#: A chart's name on its download buttons where its title is long: the buttons sit two to a row, and at 1280×800 in
#: presentation mode a label longer than ~50 characters is cut short ("… (covariance releases) (Python s…").
DOWNLOAD_TITLES = {METRIC_TITLES["frobenius_error"]: "Frobenius error (covariance releases)",
                   METRIC_TITLES["svm_accuracy"]: "Linear-SVM accuracy"}


def download_title(title: str) -> str:
    """The name of a chart titled ``title`` on its download buttons (:data:`DOWNLOAD_TITLES`, else the title)."""
    return DOWNLOAD_TITLES.get(title, title)


METRIC_UNITS = {"principal_angle_max_deg": "degrees", "svm_accuracy": "accuracy (fraction)",
                "captured_variance_ratio": "ratio (1 = non-private PCA)",
                "frobenius_error": "‖C − Ĉ‖<sub>F</sub> / ‖C‖<sub>F</sub> (log scale)"}
#: The dashboard's id of the session's uploaded file (``pages.ui.state.UPLOAD_ID``): a caption names the file
#: itself (:func:`dataset_title`'s ``upload_name``).
UPLOAD_ID = "__upload__"


# ------------------------------------------------------------------------------------------------
# trace styles

def mechanism_colors() -> dict[str, str]:
    """One colour per mechanism id, stable across pages (registry order): reds for claimed-invalid exhibits,
    greys for the references, the palette for the rest."""
    return {mid: style.color for mid, style in _registry_styles().items()}


@dataclass(frozen=True)
class TraceStyle:
    """How one mechanism's curve is drawn on every chart (the one place these rules live)."""

    legend: str  #: legend entry: short name and guarantee, e.g. "SN · NOT PRIVATE"
    color: str
    dash: str  #: Plotly dash pattern ("solid" for private mechanisms)
    width: float
    symbol: str  #: marker symbol
    hover: str  #: first lines of the hover text: full name and guarantee
    not_private: bool  #: a claimed-invalid exhibit
    reference: bool  #: non-private PCA or the random subspace


@functools.cache
def _registry_styles() -> dict[str, TraceStyle]:
    styles: dict[str, TraceStyle] = {}
    palette = invalid = 0
    for mid in dpcore.mechanism_ids():
        mech = dpcore.get_mechanism(mid)
        if mech.invalid:
            color, dash = INVALID_STYLES[invalid % len(INVALID_STYLES)]
            invalid += 1
            styles[mid] = TraceStyle(legend_label(mid), color, dash, 2.5, "x", f"{mech.name}<br>{NOT_PRIVATE_HOVER}",
                                     True, False)
        elif mid in REFERENCE_STYLES:
            color, dash = REFERENCE_STYLES[mid]
            styles[mid] = TraceStyle(legend_label(mid), color, dash, 1.5, "circle-open",
                                     f"{mech.name} ({guarantee_short(mid)})", False, True)
        else:
            color = _PALETTE[palette % len(_PALETTE)]
            palette += 1
            styles[mid] = TraceStyle(legend_label(mid), color, "solid", 2.0, "circle",
                                     f"{mech.name} · {GUARANTEE_LABELS[mech.guarantee]}", False, False)
    return styles


def _legend_order(mechanism_ids: Iterable[str]) -> list[str]:
    """Private mechanisms in registry order, then the references, then the claimed-invalid exhibits (drawn last,
    so on top, and listed last in the legend)."""
    order = {mid: i for i, mid in enumerate(dpcore.mechanism_ids())}
    ids = list(mechanism_ids)

    def key(mid: str) -> tuple[int, int]:
        style = trace_style(mid)
        return (2 if style.not_private else 1 if style.reference else 0, order.get(mid, len(order)))

    return sorted(ids, key=key)


def trace_style(mid: str, guarantee: str | None = None) -> TraceStyle:
    """The style of mechanism ``mid``'s curve; ``guarantee`` is the one its releases carried when it differs
    from the registry's (e.g. PPCA is exact ε-DP at k = 1)."""
    style = _registry_styles().get(mid)
    if style is None and mid in dpcore.mechanism_ids():  # registered after the styles were built
        _registry_styles.cache_clear()
        style = _registry_styles().get(mid)
    if style is None and mid.startswith("peer:"):  # OpenDP/diffprivlib (dpcore.peers): dotted, drawn as not private
        name = dpcore.get_mechanism(mid).name
        color = "#6a3d9a" if mid.endswith("opendp") else "#b15928"
        return TraceStyle(f"{name.split()[0]} · NOT PRIVATE", color, "dot", 2.5, "diamond",
                          f"{name}<br>claims ε-DP; its sampler draws another law: NOT private", True, False)
    if style is None:  # not a registered mechanism: a neutral line under its own name
        return TraceStyle(mid, "#555555", "solid", 2.0, "circle", mid, False, False)
    if guarantee and not style.not_private and not style.reference and guarantee in GUARANTEE_LABELS:
        mech = dpcore.get_mechanism(mid)
        style = dataclasses.replace(style, legend=legend_label(mid, guarantee),
                                    hover=f"{mech.name} · {GUARANTEE_LABELS[guarantee]}")
    return style



# ------------------------------------------------------------------------------------------------
# charts
def majority_baseline(frame: pd.DataFrame) -> float | None:
    """The SVM chart's floor: the mean test accuracy of always predicting the training majority class (the
    sweep's ``svm_majority_baseline`` column; None without labels)."""
    if "svm_majority_baseline" not in frame:
        return None
    values = frame["svm_majority_baseline"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else None


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def figure_from_dict(spec: dict) -> go.Figure:
    """A ``go.Figure`` around an already well-formed figure dict, skipping Plotly's slow property validation.

    The dicts built here use only valid Plotly properties (the AppTests and the e2e screenshots check the
    result), so validating them again on every rerun would only cost time (~5 ms per chart).
    """
    try:
        return go.Figure(spec, _validate=False)
    except TypeError:  # pragma: no cover - a Plotly version without the private flag: validate
        return go.Figure(spec)


#: Chart fonts, readable on a projector at 1280×800 (legend, axis ticks, reference-line tags).
LEGEND_FONT = 12
TAG_FONT = 12
#: A half-width chart's width on the dashboard at 1280×800 and a full-width one's (px, measured in Chromium).
HALF_WIDTH = 400
FULL_WIDTH = 820
#: The plot area's height (px) every chart keeps, whatever the rows its legend takes.
PLOT_HEIGHT = 200
#: Short tags printed in the right margin next to each reference line (the legend carries the full name), so no
#: label ever sits on a curve; the right margin holds the widest tag.
REFERENCE_TAGS = {"pca": "PCA", "random": "random"}
TAG_MARGIN = 80
#: The least distance between two tags' centres, in font sizes (a tag's box is about 1.6 font sizes tall).
TAG_GAP = 1.7
#: Pixels the plot area is taken to be shorter than :func:`chart_frame` leaves when tags are spread (room for a
#: browser's fonts: an underestimate only spreads the tags a little further).
TAG_SLACK = 10
#: The Frobenius panel's floor of usefulness: releasing Ĉ = 0 has normalised error ‖C − 0‖_F / ‖C‖_F = 1.
ZERO_LABEL = "releasing zero (Ĉ = 0)"
ZERO_TAG = "release 0"
#: On a log axis, levels at or below this are zero up to rounding (non-private PCA's Frobenius error) and not drawn.
LOG_FLOOR = 1e-9


def tick_text(value: float) -> str:
    """A tick label without exponent noise: "0.1", "2", "1,000", "34,189", "1e-05"."""
    if value >= 1000 and float(value).is_integer():
        return f"{value:,.0f}"
    if value >= 1e-3:
        return f"{value:,.4g}"
    return f"{value:.0e}"


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Ticks of a log axis over [lo, hi] with a label on every tick and no minor-tick labels: 1-2-5 in each decade
    when the range spans up to two decades, whole decades otherwise (every other one beyond six decades)."""
    if not (lo > 0 and hi > 0):
        raise ValueError(f"a log axis needs positive limits, got {lo!r}, {hi!r}")
    lo, hi = min(lo, hi), max(lo, hi)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mults in ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)):
        if math.log10(hi / lo) < 2.01 and mults == (1.0,):
            continue
        step = 2 if last - first > 6 and mults == (1.0,) else 1
        values = [float(f"{m * 10.0 ** e:.12g}") for e in range(first, last + 1, step) for m in mults]
        values = [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
        if len(values) >= 2:
            return values, [tick_text(v) for v in values]
    return [lo, hi], [tick_text(lo), tick_text(hi)]


def _hline(value: float, color: str, dash: str, tag: str, label: str, *, log_y: bool) -> tuple[dict, dict]:
    """A full-width horizontal line and its short ``tag`` in the right margin (never on a curve); the full
    ``label`` is the tag's hover text (and the legend's entry, see :func:`_reference_marks`)."""
    y = math.log10(value) if log_y else value
    shape = {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
             "line": {"color": color, "dash": dash}, "opacity": 0.9}
    note = {"text": tag, "hovertext": label, "showarrow": False, "xref": "x domain", "x": 1, "xanchor": "left",
            "xshift": 4, "yshift": 0.0, "yref": "y", "y": y, "yanchor": "middle",
            "font": {"size": TAG_FONT, "color": color}}
    return shape, note


def _reference_marks(lines: list[tuple[float, str, str, str, str]], *,
                     log_y: bool) -> tuple[list[dict], list[dict], list[dict]]:
    """Shapes, margin tags and legend-only traces of the reference lines ``(level, colour, dash, tag, label)``
    (the tags are spread apart afterwards by :func:`spread_tags`)."""
    shapes, notes, legend = [], [], []
    for value, color, dash, tag, label in sorted(lines, key=lambda line: -line[0]):
        shape, note = _hline(value, color, dash, tag, label, log_y=log_y)
        shapes.append(shape)
        notes.append(note)
        legend.append({"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": label,
                       "line": {"color": color, "dash": dash, "width": 1.5}, "hoverinfo": "skip"})
    return shapes, notes, legend


def tag_offsets(levels: Sequence[float], *, lo: float, hi: float, plot_px: float, gap_px: float) -> list[float]:
    """Pixel shifts (Plotly ``yshift``: up is positive) of margin tags at ``levels`` (axis units, on an axis from
    ``lo`` to ``hi`` drawn ``plot_px`` pixels tall) that keep every two tags at least ``gap_px`` apart, each as near
    its line as the others allow: placed from the top down, each pushed below the one above when they would touch;
    a run pushed past the bottom of the plot is moved back up as a whole."""
    scale = plot_px / ((hi - lo) or 1.0)
    want = [(hi - v) * scale for v in levels]  # pixels below the top of the plot area
    order = sorted(range(len(levels)), key=lambda i: want[i])
    placed = [0.0] * len(levels)
    above = None
    for i in order:
        placed[i] = above = want[i] if above is None else max(want[i], above + gap_px)
    below = None
    for i in reversed(order):
        placed[i] = below = min(placed[i], plot_px + gap_px / 2 if below is None else below - gap_px)
    return [want[i] - placed[i] for i in range(len(levels))]


def _is_tag(note: dict) -> bool:
    return note.get("xref") == "x domain" and note.get("x") == 1 and note.get("yref") == "y"


def legend_rows(names: Sequence[str], *, width: float, font: float = LEGEND_FONT) -> int:
    """The rows a horizontal legend of ``names`` takes when Plotly wraps it to ``width`` px (the plot area's
    width): each entry its symbol and gap (~4.4 font sizes) and ~0.43 font sizes per character (measured in
    Chromium at 12 and 16 px: the rows of Explore's charts to the row); an entry of several lines (``<br>``, a
    curve's warning under its name) counts its widest line and makes its row that many lines tall."""
    rows, used, tall = 0, math.inf, 0
    for name in names:
        lines = str(name).split("<br>")  # an entry of several lines makes its row as tall
        size = font * (4.4 + 0.43 * max(len(line) for line in lines))
        if used + size > width:
            rows, used, tall = rows + tall, size, len(lines)
        else:
            used, tall = used + size, max(tall, len(lines))
    return rows + tall


def chart_frame(rows: int, font: float = LEGEND_FONT) -> float:
    """A chart's pixels outside its plot area: the title strip, the x axis (ticks and title) and ``rows`` legend
    rows (measured: plot areas of 126, 145 and 164 px in 362 px charts with 6, 5 and 4 rows at 12 px; 289 and 313 px
    of 498 px with 3 and 2 rows at 16 px — this model gives 126, 145, 164 and 289, 315)."""
    return 100 + 2 * font + rows * 1.6 * font


def _legend_names(traces: Iterable[dict]) -> list[str]:
    return [str(t["name"]) for t in traces if t.get("showlegend", True) and t.get("name")]


def spread_tags(layout: dict, plot_px: float) -> None:
    """Move the reference lines' margin tags of a figure ``layout`` (dict, changed in place) apart so that none
    touches another (:func:`tag_offsets`, a gap of :data:`TAG_GAP` font sizes); reads the axis span the figure
    recorded in ``layout["meta"]["tag_axis"]``."""
    notes = [a for a in layout.get("annotations") or () if _is_tag(a)]
    axis = (layout.get("meta") or {}).get("tag_axis")
    if not notes or not axis:
        return
    size = max(float((a.get("font") or {}).get("size") or TAG_FONT) for a in notes)
    shifts = tag_offsets([float(a["y"]) for a in notes], lo=axis[0], hi=axis[1], plot_px=plot_px,
                         gap_px=TAG_GAP * size)
    for note, shift in zip(notes, shifts):
        note["yshift"] = round(shift, 1)


def _warning_lookup(releases: pd.DataFrame | None, x: str) -> tuple[dict, dict]:
    """``({(mechanism, x): (ok, warned, text, releases)}, {mechanism: legend note})`` of the releases with a
    warning status (:func:`dpcore.evaluation.reporting.release_warnings`)."""
    if releases is None or "status" not in releases or x not in releases:
        return {}, {}
    table = release_warnings(releases, x=x)
    points = {(str(r.mechanism), float(getattr(r, x))): (int(r.ok), int(r.warned), str(r.text), int(r.releases))
              for r in table.itertuples(index=False)}
    notes = {mid: legend_warning(kinds, total) for mid, (kinds, total) in warning_counts(releases).items()}
    return points, notes


#: A warning kind's word in a legend entry (:func:`legend_warning`); a kind read from a message: "flagged".
LEGEND_WARNING_WORDS = {NOT_CONVERGED: "not converged", WARNING_KINDS[ReleaseStatus.BOTTOM]: "⊥ (no output)",
                        WARNING_KINDS[ReleaseStatus.TIMEOUT]: "capped", WARNING_KINDS[ReleaseStatus.ERROR]: "failed"}
#: The widest line (px, :func:`legend_rows`'s model) of a legend entry's text in a half-width chart with margin tags.
LEGEND_TEXT_PX = HALF_WIDTH - 60 - TAG_MARGIN - 4.4 * LEGEND_FONT


def legend_warning(kinds: dict[str, int], releases: int) -> str:
    """The short warning under a curve's legend entry: ``"⚠ 9 of 9 releases not converged"``, ``"⚠ of 14
    releases: 4 capped, 7 failed"`` (what each kind means is said above the results table, each point's warning in
    its hover)."""
    counts: dict[str, int] = {}
    for kind, count in kinds.items():
        if count:
            word = LEGEND_WARNING_WORDS.get(kind, "flagged")
            counts[word] = counts.get(word, 0) + int(count)
    unit = "release" if releases == 1 else "releases"
    if len(counts) == 1:
        (word, count), = counts.items()
        return f"⚠ {count} of {releases} {unit} {word}"
    return f"⚠ of {releases} {unit}: " + ", ".join(f"{count} {word}" for word, count in counts.items())


def legend_name(legend: str, note: str | None, *, width: float = LEGEND_TEXT_PX, font: float = LEGEND_FONT) -> str:
    """A curve's legend entry: its name and guarantee, and its warning ``note`` on the lines under it (``<br>``),
    broken after a colon or comma where a line would be wider than ``width`` px (:func:`legend_rows`'s model), so
    that no entry runs past the chart."""
    if not note:
        return legend
    lines, current = [legend], ""
    for piece in re.split(r"(?<=[:,]) ", note):
        candidate = f"{current} {piece}" if current else piece
        if current and font * 0.43 * len(candidate) > width:
            lines.append(current)
            candidate = piece
        current = candidate
    return "<br>".join([*lines, current])


def _curve_traces(mid: str, xs: np.ndarray, mean: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, style: TraceStyle,
                  hover: str, warned: dict, note: str | None, dashed: bool) -> list[dict]:
    """The band and mean line of one mechanism; points where some release carried a warning status are hollow,
    with the warning in the hover, and the legend entry says in how many releases. A point some of whose releases
    gave no result (capped, ⊥, error) is the mean of the others only, biased towards the releases that finished: it
    is drawn as a lone hollow marker, outside the line and the band."""
    name = legend_name(style.legend, note)
    flags = [warned.get((mid, float(v))) for v in xs]
    custom = [f"<br>⚠ {f[2]}" if f else "" for f in flags]
    hover = hover.replace("<extra>", "%{customdata}<extra>")
    if dashed:  # reference curve: no band
        return [{"type": "scatter", "x": xs, "y": mean, "mode": "lines", "name": name, "customdata": custom,
                 "line": {"color": style.color, "dash": style.dash if style.dash != "solid" else "dash",
                          "width": 1.5}, "hovertemplate": hover}]
    partial = np.array([bool(f) and f[0] < f[3] for f in flags], dtype=bool)
    most = note is not None and sum(f[1] for f in flags if f) * 2 > max(len(xs), 1)
    traces = _band_and_line(mid, xs, mean, lo, hi, ~partial, flags, custom, style=style, hover=hover, name=name,
                            dash="dot" if most and style.dash == "solid" else style.dash)
    if partial.any():
        lone = [f"{c}<br>mean of the {f[0]} of {f[3]} releases that gave a result: not on the curve"
                for c, f, p in zip(custom, flags, partial) if p]
        traces.append({"type": "scatter", "x": xs[partial].tolist(), "y": mean[partial].tolist(), "mode": "markers",
                       "showlegend": False, "legendgroup": mid, "name": f"{style.legend} (partial)",
                       "customdata": lone, "hovertemplate": hover,
                       "marker": {"size": 10, "symbol": f"{style.symbol.removesuffix('-open')}-open",
                                  "line": {"width": 2, "color": style.color}, "color": style.color, "opacity": 0.8}})
    elif len(xs) == 1:  # a band over one x value has no width: show it as an error bar instead
        traces[-1]["error_y"] = {"type": "data", "symmetric": False, "color": style.color, "thickness": 1.5,
                                 "array": [max(hi[0] - mean[0], 0.0)], "arrayminus": [max(mean[0] - lo[0], 0.0)]}
    return traces


def _band_and_line(mid: str, xs: np.ndarray, mean: np.ndarray, lo: np.ndarray, hi: np.ndarray, keep: np.ndarray,
                   flags: list, custom: list[str], *, style: TraceStyle, hover: str, name: str,
                   dash: str) -> list[dict]:
    """The band and the mean line over the points ``keep`` selects (broken where it does not); a point where some
    release carried a warning status is a larger hollow marker."""
    base = style.symbol.removesuffix("-open")
    band_x, band_y = _band_segments(xs, lo, hi, keep)
    return [{"type": "scatter", "x": band_x, "y": band_y, "fill": "toself",
             "fillcolor": _rgba(style.color, 0.1 if style.not_private else 0.15), "line": {"width": 0},
             "mode": "lines", "hoverinfo": "skip", "showlegend": False, "legendgroup": mid,
             "name": f"{style.legend} band"},
            {"type": "scatter", "x": xs.tolist(), "y": _gapped(mean, keep), "mode": "lines+markers", "name": name,
             "legendgroup": mid, "line": {"color": style.color, "width": style.width, "dash": dash},
             "marker": {"size": [10 if f else (7 if style.not_private else 6) for f in flags],
                        "symbol": [f"{base}-open" if f else style.symbol for f in flags],
                        "line": {"width": 2, "color": style.color}},
             "customdata": [c if k else "" for c, k in zip(custom, keep)], "hovertemplate": hover}]


def _gapped(values: np.ndarray, keep: np.ndarray) -> list:
    """``values`` with None where ``keep`` is False: Plotly breaks a line there (and a ``toself`` fill)."""
    return [float(v) if k else None for v, k in zip(values, keep)]


def _band_segments(xs: np.ndarray, lo: np.ndarray, hi: np.ndarray, keep: np.ndarray) -> tuple[list, list]:
    """The band as one closed shape per run of kept points, the runs separated by None."""
    px: list = []
    py: list = []
    start = None
    for i in range(len(xs) + 1):
        inside = i < len(xs) and keep[i]
        if inside and start is None:
            start = i
        if not inside and start is not None:
            run = slice(start, i)
            if px:
                px.append(None)
                py.append(None)
            px += xs[run].tolist() + xs[run][::-1].tolist()
            py += hi[run].tolist() + lo[run][::-1].tolist()
            start = None
    return px, py


def _failed_marks(warned: dict, drawn: dict[str, set], x_label: str, *, log_x: bool,
                  guarantees: dict[str, str]) -> list[dict]:
    """A crossed mark (✕) on the x axis where every release of a mechanism failed (⊥, capped, error), for the
    mechanisms this chart draws (``drawn``: mechanism → x values with a point)."""
    marks, stacked = [], {}
    for (mid, xv), (ok, _, text, _) in sorted(warned.items()):
        if ok or mid not in drawn or xv in drawn[mid]:
            continue
        style = trace_style(mid, guarantees.get(mid))
        level = stacked[xv] = stacked.get(xv, -1) + 1
        marks.append({"text": "✕", "showarrow": False, "xref": "x", "x": math.log10(xv) if log_x else xv,
                      "yref": "y domain", "y": 0, "yanchor": "bottom", "yshift": 2 + 14 * level,
                      "font": {"size": 14, "color": style.color},
                      "hovertext": f"{style.legend}: no result at {x_label} = {xv:g} ({text})"})
    return marks


#: Scaling guides: a wide translucent stroke (a highlighter) under or along the curve, never a thin dotted line that
#: vanishes when the curve follows its rate.
GUIDE_WIDTH = 10
GUIDE_OPACITY = 0.3


def metric_figure(band: pd.DataFrame, metric: str, *, x: str = "epsilon", title: str = "", x_title: str = "",
                  y_title: str = "", references: dict[str, float] | None = None, log_x: bool = True,
                  guides: Sequence[dict] = (), dashed: Sequence[str] = (), note: str | None = None,
                  baselines: dict[str, float | None] | None = None,
                  guarantees: dict[str, str] | None = None, releases: pd.DataFrame | None = None,
                  log_y: bool | None = None) -> go.Figure:
    """Mean line + shaded band per mechanism (``band`` from :func:`dpcore.evaluation.reporting.band_table`).

    Every curve is drawn by :func:`trace_style` (claimed-invalid exhibits dashed red with "NOT PRIVATE" in the
    legend and hover, references grey; every legend entry names its guarantee; ``guarantees`` gives the one the
    releases carried, see :func:`dpcore.evaluation.reporting.run_guarantees`). ``releases`` (the sweep's rows) marks the
    releases with a warning status: hollow markers where some release of a point was not converged, ⊥, capped or
    an error, a ✕ on the axis where none gave a result, the warning in the hover and "⚠ … in k of n releases" in
    the legend. ``references`` draws horizontal lines (``{mechanism id: level}``), ``baselines`` more of them
    under free labels (``{label: level}``, dash-dot grey: e.g. the SVM's majority class), each tagged in the right
    margin and named in the legend; ``guides`` extra dotted traces (dicts with x, y, name[, color]); ``dashed``
    reference mechanisms as curves without a band; ``note`` a centred message. The Frobenius panel gets a log
    axis (``log_y``) and the "releasing zero" line; the SVM panel's axis spans its baseline and 1. The figure is
    one plain dict, wrapped without re-validation (``add_*``/``update_*`` calls cost ~30 ms per chart).
    """
    guarantees = guarantees or {}
    log_y = (metric == "frobenius_error") if log_y is None else log_y
    x_label = {"epsilon": "ε", "n": "n"}.get(x, x)
    rows = (band["metric"] == metric).to_numpy(dtype=bool) if "metric" in band else np.ones(len(band), dtype=bool)
    mechs = band["mechanism"].to_numpy(dtype=object)[rows]
    cols = {c: band[c].to_numpy(dtype=float)[rows] for c in (x, "mean", "lo", "hi")}
    if log_y:  # a band reaching zero or below has no place on a log axis: cut it at a tenth of the mean
        cols["lo"] = np.where(cols["lo"] > 0, cols["lo"], cols["mean"] / 10)
    warned, warn_notes = _warning_lookup(releases, x)
    traces: list[dict] = []
    drawn: dict[str, set] = {}
    for mid in _legend_order(dict.fromkeys(mechs)):
        idx = np.flatnonzero(mechs == mid)
        idx = idx[np.argsort(cols[x][idx], kind="stable")]
        style = trace_style(mid, guarantees.get(mid))
        drawn[mid] = {float(v) for v in cols[x][idx]}
        hover = f"{style.hover}<br>{x_label} = %{{x:,~g}}<br>value = %{{y:.4g}}<extra></extra>"
        traces += _curve_traces(mid, cols[x][idx], cols["mean"][idx], cols["lo"][idx], cols["hi"][idx],
                                style=style, hover=hover, warned=warned, note=warn_notes.get(mid),
                                dashed=mid in dashed)
    if metric in ("captured_variance_ratio", "principal_angle_max_deg"):  # every subspace reports these
        for mid in warn_notes:
            if mid not in drawn:  # no release of it gave a result: a legend entry and crosses only
                style = trace_style(mid, guarantees.get(mid))
                drawn[mid] = set()
                traces.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                               "name": legend_name(style.legend, warn_notes[mid]), "hoverinfo": "skip",
                               "marker": {"symbol": "x-thin-open", "size": 10, "color": style.color,
                                          "line": {"width": 2, "color": style.color}}})
    lines = []
    for ref_id, value in (references or {}).items():  # on a log axis a level of (numerically) zero has no place
        if value is not None and math.isfinite(value) and (value > LOG_FLOOR or not log_y):
            style = trace_style(ref_id)
            lines.append((float(value), style.color, style.dash if style.dash != "solid" else "dot",
                          REFERENCE_TAGS.get(ref_id, short_name(ref_id) if ref_id in dpcore.mechanism_ids()
                                             else ref_id), style.legend))
    for label, value in (baselines or {}).items():
        if value is not None and math.isfinite(value) and (value > LOG_FLOOR or not log_y):
            lines.append((float(value), BASELINE_COLOR, "dashdot", label.split(" ")[0], label))
    if metric == "frobenius_error":
        lines.append((1.0, BASELINE_COLOR, "longdash", ZERO_TAG, ZERO_LABEL))
    for guide in guides:  # a wide translucent stroke: visible even where it lies on its curve (the theory holding)
        traces.append({"type": "scatter", "x": guide["x"], "y": guide["y"], "mode": "lines", "name": guide["name"],
                       "opacity": GUIDE_OPACITY, "hoverinfo": "skip",
                       "line": {"width": GUIDE_WIDTH, "color": guide.get("color", "#888888")}})
    levels = [line[0] for line in lines]
    y_lo, y_hi = _span(cols["lo"], cols["hi"], levels)
    shapes, notes, ref_legend = _reference_marks(lines, log_y=log_y)
    traces += ref_legend
    notes += _failed_marks(warned, drawn, x_label, log_x=log_x, guarantees=guarantees)
    if note:
        notes.append({"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5})
    margin_r = TAG_MARGIN if lines else 10
    rows = legend_rows(_legend_names(traces), width=HALF_WIDTH - 60 - margin_r)
    yaxis = _y_axis(metric, y_title, log_y, y_lo, y_hi, levels)
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}}, "height": round(PLOT_HEIGHT + chart_frame(rows)),
        "margin": {"l": 60, "r": margin_r, "t": 45, "b": 40},
        "legend": legend_layout(),
        "xaxis": _x_axis(cols[x], x_title, log_x),
        "yaxis": yaxis,
        "meta": {"tag_axis": _tag_axis(yaxis, (y_lo, y_hi) if log_y else _extent(cols["lo"], cols["hi"], levels),
                                       log_y)},
    }
    if shapes:
        layout["shapes"] = shapes
    if notes:
        layout["annotations"] = notes
    spread_tags(layout, layout["height"] - chart_frame(rows) - TAG_SLACK)
    return figure_from_dict({"data": traces, "layout": layout})


def _extent(lo: np.ndarray, hi: np.ndarray, levels: Sequence[float]) -> tuple[float, float]:
    """The smallest and largest finite value a linear axis shows (bands and levels, zero and negatives included)."""
    values = np.concatenate([lo, hi, np.asarray(levels, dtype=float)])
    values = values[np.isfinite(values)]
    return (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)


def _tag_axis(yaxis: dict[str, Any], span: tuple[float, float], log_y: bool) -> list[float]:
    """The y axis's span in axis units (log10 on a log axis): its fixed range, else the data's ``span`` with
    Plotly's padding (an estimate; the tags only need it to tell how far apart two levels are drawn)."""
    if "range" in yaxis:
        return [float(v) for v in yaxis["range"]]
    lo, hi = span
    if log_y:
        lo, hi = math.log10(lo), math.log10(hi)
    pad = 0.06 * ((hi - lo) or 1.0)
    return [lo - pad, hi + pad]


def _span(lo: np.ndarray, hi: np.ndarray, levels: Sequence[float]) -> tuple[float, float]:
    """The smallest and largest positive value a chart shows (band and reference levels); (0.1, 1) when empty."""
    values = np.concatenate([lo, hi, np.asarray(levels, dtype=float)]) if len(lo) or levels else np.empty(0)
    values = values[np.isfinite(values) & (values > LOG_FLOOR)]
    return (float(values.min()), float(values.max())) if values.size else (0.1, 1.0)


def _x_axis(xs: np.ndarray, title: str, log_x: bool) -> dict[str, Any]:
    """The x axis: on a log scale, ticks at the values that were run (up to 13 of them), else clean decades."""
    axis: dict[str, Any] = {"title": {"text": title}, "type": "log" if log_x else "linear", "automargin": True}
    values = sorted({float(v) for v in xs if np.isfinite(v) and v > 0})
    if log_x and 0 < len(values) <= 13:
        axis.update(tickvals=values, ticktext=[tick_text(v) for v in values])
    elif log_x and values:
        axis["tickvals"], axis["ticktext"] = log_ticks(values[0], values[-1])
    return axis


def _y_axis(metric: str, title: str, log_y: bool, lo: float, hi: float, levels: Sequence[float]) -> dict[str, Any]:
    """The y axis: log with a label on every tick (the Frobenius error), or the SVM panel spanning its majority
    baseline and 1, so trial-to-trial noise does not look like signal."""
    axis: dict[str, Any] = {"title": {"text": title}, "automargin": True}
    if log_y:
        axis["type"] = "log"
        axis["tickvals"], axis["ticktext"] = log_ticks(lo / 1.3, hi * 1.3)
    elif metric == "svm_accuracy":
        bottom = min([lo, *levels]) if levels else lo
        bottom = max(0.0, bottom - 0.03 * (1 - bottom))
        axis["range"] = [bottom, 1.0 + 0.02 * (1 - bottom)]
    return axis


def legend_layout() -> dict[str, Any]:
    """A horizontal legend in its own strip under the x-axis title (container-anchored, so the plot area shrinks
    to make room instead of the legend running over the axis title)."""
    return {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left",
            "font": {"size": LEGEND_FONT}, "tracegroupgap": 0}



# ------------------------------------------------------------------------------------------------
# presentation mode: a lecture on a projector (1280×800)
#: Chart text in presentation mode (px): ticks, legend, axis titles and tags; the title.
PRESENT_FONT = 16
PRESENT_TITLE = 20
#: The plot area's height (px) of a full-width chart in presentation mode.
PRESENT_PLOT_HEIGHT = 320


def presentation_figure(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` for a full-width chart on a projector: larger fonts (title, ticks, legend, tags, marks),
    a taller plot, a right margin that holds the larger tags, and the tags spread apart again at that size."""
    spec = fig.to_dict()
    layout = spec["layout"]
    scale = PRESENT_FONT / LEGEND_FONT
    layout["font"] = {**(layout.get("font") or {}), "size": PRESENT_FONT}
    if isinstance(layout.get("title"), dict):
        layout["title"]["font"] = {**(layout["title"].get("font") or {}), "size": PRESENT_TITLE}
    legend = layout.setdefault("legend", {})
    legend["font"] = {**(legend.get("font") or {}), "size": PRESENT_FONT}
    for name in ("xaxis", "yaxis"):
        axis = layout.setdefault(name, {})
        axis["tickfont"] = {**(axis.get("tickfont") or {}), "size": PRESENT_FONT - 1}
        if isinstance(axis.get("title"), dict):
            axis["title"]["font"] = {**(axis["title"].get("font") or {}), "size": PRESENT_FONT}
    notes = layout.get("annotations") or []
    for note in notes:
        note["font"] = {**(note.get("font") or {}), "size": round(float((note.get("font") or {}).get("size")
                                                                        or LEGEND_FONT) * scale)}
        if not _is_tag(note) and note.get("yshift"):
            note["yshift"] = note["yshift"] * scale  # stacked ✕ marks keep apart
    margin = layout.setdefault("margin", {})
    if any(_is_tag(note) for note in notes):
        margin["r"] = round(max(float(margin.get("r") or 0), TAG_MARGIN) * scale)
    margin["t"] = max(float(margin.get("t") or 0), 55)
    rows = legend_rows(_legend_names(spec["data"]), width=FULL_WIDTH - float(margin.get("l") or 60)
                       - float(margin.get("r") or 10), font=PRESENT_FONT)
    frame = chart_frame(rows, PRESENT_FONT)
    layout["height"] = round(max(float(layout.get("height") or 0), PRESENT_PLOT_HEIGHT + frame))
    spread_tags(layout, layout["height"] - frame - TAG_SLACK)
    return figure_from_dict(spec)


# ------------------------------------------------------------------------------------------------
# notes next to the charts
#: What each warning status means for a release, as the note above the results table says it after its count.
WARNING_MEANINGS = {
    NOT_CONVERGED: "no proven ε-DP guarantee: it assumes a converged chain",
    WARNING_KINDS[ReleaseStatus.BOTTOM]: "the mechanism declined to answer",
    WARNING_KINDS[ReleaseStatus.TIMEOUT]: "stopped at the time cap",
    WARNING_KINDS[ReleaseStatus.ERROR]: "failed: the message column says why",
}
#: The meaning of a warning read from a release's message (any other kind).
OTHER_MEANING = "see the message column"
#: The warning kinds of releases that gave no result (a point missing some is drawn apart from its curve).
NO_RESULT_KINDS = frozenset(WARNING_KINDS.values())
#: The note's opening, and what it adds once when some release gave no result (⊥, capped, error).
WARNING_HEADER = "**Some releases carry a warning** (hollow markers on the charts"
NO_RESULT_NOTE = ("a point where some releases gave no result is drawn apart from its curve, and a ✕ on the axis "
                  "marks where none gave one")
#: A curve counts as "at the random line" when its band reaches this close to the random-subspace level everywhere.
RANDOM_TOLERANCE = 0.02


def warning_line(name: str, kinds: dict[str, int], total: int) -> str:
    """``**name**: capped (time limit) in 4 of 14 releases (stopped at the time cap); error in 7 of 14 releases
    (failed: the message column says why).``: each warning kind with its count and, right after it, its own
    meaning (where points missing a result are drawn is said once, in :func:`release_warning_header`)."""
    parts = [f"{warning_text({kind: count}, total)} ({WARNING_MEANINGS.get(kind, OTHER_MEANING)})"
             for kind, count in kinds.items() if count]
    return f"**{name}**: {'; '.join(parts)}."


def release_warning_lines(frame: pd.DataFrame | None) -> list[str]:
    """One line per mechanism with releases carrying a warning status: which, in how many, and what it means
    (:func:`warning_line`)."""
    lines = []
    for mid, (kinds, total) in warning_counts(frame).items():
        name = short_name(mid) if mid in dpcore.mechanism_ids() or mid.startswith("peer:") else mid
        lines.append(warning_line(name, kinds, total))
    return lines


def release_warning_header(frame: pd.DataFrame | None) -> str:
    """The line above :func:`release_warning_lines`: where the charts mark these releases, saying once where the
    points missing a result are drawn when some release gave none."""
    missing = any(kind in NO_RESULT_KINDS for kinds, _ in warning_counts(frame).values() for kind in kinds)
    return f"{WARNING_HEADER}{'; ' + NO_RESULT_NOTE if missing else ''}):"


def at_random_line(band: pd.DataFrame, random_level: float | None, *, metric: str = "captured_variance_ratio",
                   tolerance: float = RANDOM_TOLERANCE) -> list[str]:
    """The private mechanisms whose band reaches the random-subspace level (within ``tolerance``) at every x: on
    this chart they cannot be told from a subspace drawn without looking at the data."""
    if random_level is None or not math.isfinite(random_level) or band.empty:
        return []
    sub = band[band["metric"] == metric] if "metric" in band else band
    out = []
    for mid, group in sub.groupby("mechanism", sort=False):
        style = trace_style(str(mid))
        if style.reference or style.not_private:
            continue
        if (group["lo"].to_numpy(dtype=float) <= random_level + tolerance).all():
            out.append(str(mid))
    return out


def random_line_note(mechanisms: Sequence[str], random_level: float, *, largest_x: float, x: str = "epsilon",
                     n: int | None = None, d: int | None = None, norm_bound: float | None = None) -> str:
    """Why some curves sit on the random line, and what would lift them (ε, n, d, B)."""
    names = ", ".join(short_name(m) for m in mechanisms)
    verb = "is" if len(mechanisms) == 1 else "are"
    where = f"up to ε = {largest_x:g}" if x == "epsilon" else f"up to n = {largest_x:,.0f}"
    facts = ", ".join(t for t in (f"n = {n:,}" if n else "", f"d = {d}" if d else "",
                                  f"B = {norm_bound:.3g}" if norm_bound else "") if t)
    return (f"**{names} {verb} indistinguishable from the random subspace** (≈ {random_level:.2f}) {where}: the noise "
            f"needed for privacy swamps the data's structure{f' ({facts})' if facts else ''}. What would change "
            "it: a larger ε (less noise), more rows n (the signal grows with n, the noise does not), fewer features d "
            "(the noise grows with d), or a smaller public norm bound B when the rows are much shorter than B.")


# ------------------------------------------------------------------------------------------------
# slide-ready exports
#: Exported figure size in CSS pixels (PNG is rendered at twice this: sharp on a projector).
EXPORT_WIDTH = 1100
EXPORT_HEIGHT = 560
#: Legend entries per row at the export width, and the height of one legend row / caption line.
LEGEND_PER_ROW = 5
ROW_PX = 22
#: A cautious estimate of the plot area's height in an export (the rest: title, x axis, margins; caption and legend
#: rows have their own room).
EXPORT_PLOT_PX = EXPORT_HEIGHT - 160
#: Caption font size, and the room kept free at the caption's right end (the title block starts 1 % in).
CAPTION_FONT = 13
CAPTION_RIGHT_PX = 24
#: Short words for each metric in file names (``explore_adult_captured_variance.png``).
METRIC_SLUGS = {"captured_variance_ratio": "captured_variance", "frobenius_error": "frobenius_error",
                "principal_angle_max_deg": "largest_angle", "svm_accuracy": "svm_accuracy"}


def dataset_title(dataset_id: str, upload_name: str | None = None) -> str:
    """The dataset's name for a caption (a built-in id, the upload id, or an uploaded file's name): no row count
    in it (the caption states n only where it is public). ``upload_name`` is the uploaded file's name the upload id
    stands for (the dashboard's session knows it)."""
    if dataset_id == UPLOAD_ID:
        return f"uploaded file {upload_name or 'CSV'}"
    info = next((d for d in dpcore.data.list_datasets() if d.id == dataset_id), None)
    return f"uploaded file {dataset_id}" if info is None else info.name


def sweep_dataset(frame: pd.DataFrame | None) -> str | None:
    """The dataset a shown sweep ran on (its ``dataset`` column: a built-in id or the uploaded file's name), which
    may differ from the current choice when the settings changed after the run."""
    if frame is None or "dataset" not in frame or not len(frame):
        return None
    value = frame["dataset"].iloc[0]
    return str(value) if isinstance(value, str) and value else None


def sweep_caption(config, frame: pd.DataFrame | None, *, dataset_id: str, band: str,
                  sample_size: bool = False, upload_name: str | None = None) -> str:
    """The caption of a sweep's figure (:func:`dpcore.evaluation.reporting.export_caption`) from its configuration: n is
    the rows that reached the mechanisms (one size on Explore; on Sample size the x axis holds the sizes);
    ``upload_name`` names the dataset when it is the upload id (:func:`dataset_title`)."""
    n = None
    if not sample_size and frame is not None and "n" in frame and len(frame):
        n = int(pd.to_numeric(frame["n"], errors="coerce").max())
    return export_caption(dataset=dataset_title(sweep_dataset(frame) or dataset_id, upload_name), n=n,
                          k=int(config.ks[0]), delta=float(config.deltas[0]),
                          neighbouring=config.neighbouring, trials=int(config.trials), band=band,
                          epsilon=float(config.epsilons[0]) if sample_size else None,
                          n_text=_sizes_text(config.neighbouring) if sample_size else None)


def _sizes_text(neighbouring: str) -> str:
    """The row count of a sample-size figure: its largest size is every row that reached the mechanisms, which is
    public under replace-one but not under add/remove (there the exact n is part of what DP protects)."""
    if neighbouring == Neighbouring.REPLACE:
        return "n: the subsample sizes on the x axis"
    return "n: the subsample sizes on the x axis (the largest is the exact row count: NOT private under add/remove)"


def png_export_available() -> bool:
    """True when kaleido and a Chromium binary are present (static PNG export)."""
    if importlib.util.find_spec("kaleido") is None:
        return False
    return bool(os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
                or shutil.which("google-chrome"))


def _title_text(fig: go.Figure) -> str:
    title = fig.layout.title.text if fig.layout.title is not None else None
    return title or ""


def _legend_entries(fig: go.Figure) -> int:
    return sum(1 for t in fig.data if t.showlegend is not False and t.name)


def captioned_figure(fig: go.Figure, caption: str, *, title: str | None = None,
                     width: int = EXPORT_WIDTH) -> go.Figure:
    """A copy of ``fig`` laid out for a slide: white template, the title top left with ``caption`` (lines joined
    by ``<br>``) printed under it, wrapped to the figure's width (:func:`caption_lines`), a margin that holds both,
    and a height that leaves the plot its room whatever the number of legend rows."""
    out = go.Figure(fig)
    caption = caption_lines(caption, width)
    lines = caption.count("<br>") + 1 if caption else 0
    legend_rows = math.ceil(_legend_entries(out) / LEGEND_PER_ROW)
    out.update_layout(
        template="plotly_white", width=width, height=EXPORT_HEIGHT + ROW_PX * (lines + legend_rows),
        title={"text": title if title is not None else _title_text(fig), "font": {"size": 18},
               "subtitle": {"text": caption, "font": {"size": CAPTION_FONT, "color": "#333333"}},
               "yref": "container", "y": 0.985, "yanchor": "top", "x": 0.01, "xanchor": "left"},
        margin={"t": 50 + ROW_PX * lines, "l": 70, "r": max(20, fig.layout.margin.r or 0), "b": 20},  # keeps tags
    )
    if out.layout.legend.yref == "container":  # keep the bottom legend row off the image's edge
        out.update_layout(legend={"y": 10 / out.layout.height})
    return _tags_spread_for(out, EXPORT_PLOT_PX)


def _tags_spread_for(fig: go.Figure, plot_px: float) -> go.Figure:
    """``fig`` with its reference-line tags spread again for a plot area ``plot_px`` tall (the export's plot is
    taller than the dashboard's, so tags need less room to stay apart)."""
    spec = fig.to_dict()
    spread_tags(spec["layout"], plot_px)
    return figure_from_dict(spec)


def caption_lines(caption: str, width: int = EXPORT_WIDTH) -> str:
    """``caption`` re-broken (``<br>``) so every line fits inside a figure ``width`` pixels wide."""
    return wrap_caption(caption, width * 0.99 - CAPTION_RIGHT_PX, CAPTION_FONT) if caption else caption


def figure_png(fig: go.Figure, caption: str = "", *, title: str | None = None) -> bytes:
    """The captioned figure as PNG bytes (kaleido starts Chromium: a few seconds, call lazily)."""
    out = captioned_figure(fig, caption, title=title)
    return out.to_image(format="png", width=out.layout.width, height=out.layout.height, scale=2)


def figure_html(fig: go.Figure, caption: str = "", *, title: str | None = None) -> str:
    """The captioned figure as a self-contained HTML page (works offline)."""
    return captioned_figure(fig, caption, title=title).to_html(include_plotlyjs=True)


# ------------------------------------------------------------------------------------------------
# Explore's charts
#: The x axis of every Explore chart.
X_TITLE = "ε (privacy loss, log scale)"


def explore_metrics(has_labels: bool) -> list[str]:
    """Explore's charts: three subspace metrics, and the SVM's accuracy when the data have a label."""
    metrics = ["captured_variance_ratio", "frobenius_error", "principal_angle_max_deg"]
    return [*metrics, "svm_accuracy"] if has_labels else metrics


def metric_chart(bands: pd.DataFrame, metric: str, *, levels: dict, majority: float | None,
                 guarantees: dict | None, releases: pd.DataFrame) -> go.Figure:
    """One Explore chart: ``metric`` against ε with its reference lines (no random line on the Frobenius panel) and,
    on the SVM panel, the majority-class baseline."""
    return metric_figure(bands, metric, title=METRIC_TITLES[metric], x_title=X_TITLE,
                         y_title=METRIC_UNITS.get(metric, METRIC_LABELS[metric]),
                         references={m: v for m, v in levels.get(metric, {}).items()
                                     if not (metric == "frobenius_error" and m == "random")},
                         baselines={MAJORITY_LABEL: majority} if metric == "svm_accuracy" else None,
                         note=None if (bands["metric"] == metric).any()
                         else "no mechanism in this run reports this metric",
                         guarantees=guarantees, releases=releases)


def run_figures(run: Any) -> dict[str, tuple[go.Figure, str, str]]:
    """{metric: (figure, caption, title)} of a reproduced Explore view, as the page draws and captions them."""
    band = Band.from_label(run.view.band)
    frame, ref_frame = run.frame, run.ref_frame
    refs = list(run.ref_config.mechanisms) if run.ref_config is not None else []
    levels = reference_levels(ref_frame, refs) if ref_frame is not None else {}
    bands = band_table(frame, x="epsilon", band=band)
    majority, guarantees = majority_baseline(frame), run_guarantees(frame)
    caption = sweep_caption(run.config, frame, dataset_id=run.view.dataset, band=band)
    return {metric: (metric_chart(bands, metric, levels=levels, majority=majority, guarantees=guarantees,
                                  releases=frame), caption, METRIC_TITLES[metric])
            for metric in explore_metrics(run.prepared.has_labels)}
