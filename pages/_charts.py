"""Display helpers shared by the pages: errors, banners, guarantee badges, mechanism colours, the ledger, and the
utility charts (built as plain figure dicts, wrapped without re-validation)."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.exceptions import DPCoreError
from dpcore.privacy import GUARANTEE_LABELS, LedgerEntry
from dpcore.reporting import guarantee_short, legend_label

BANNER = "These charts use the true data and are an evaluation sandbox, not a private release."
GUARANTEE_COLORS = {"pure": "green", "approx": "blue", "heuristic-mcmc": "orange",
                    "claimed-invalid": "red", "none": "gray"}
#: Colours of private mechanisms: no reds or pinks (red means NOT PRIVATE), no greys (greys are the references).
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#393b79",
            "#637939", "#3182bd", "#31a354", "#7b4173", "#756bb1", "#8ca252")
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
METRIC_UNITS = {"principal_angle_max_deg": "degrees", "svm_accuracy": "accuracy (fraction)",
                "captured_variance_ratio": "ratio (1 = non-private PCA)", "frobenius_error": "‖C − Ĉ‖_F / ‖C‖_F"}


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
    if style is None:  # not a registered mechanism: a neutral line under its own name
        return TraceStyle(mid, "#555555", "solid", 2.0, "circle", mid, False, False)
    if guarantee and not style.not_private and not style.reference and guarantee in GUARANTEE_LABELS:
        mech = dpcore.get_mechanism(mid)
        style = dataclasses.replace(style, legend=legend_label(mid, guarantee),
                                    hover=f"{mech.name} · {GUARANTEE_LABELS[guarantee]}")
    return style


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
        if e.private:
            cost_txt = ", ".join(cost) or "no privacy cost"
            lines.append(f"- :green[:material/check_circle:] **{e.step}** ({cost_txt}){note}")
        else:
            lines.append(f"- :red[:material/warning: **{e.step}** — NOT private{note}]")
    st.markdown("\n".join(lines))
    if not dpcore.privacy.ledger_is_private(entries):
        st.markdown(":red[A non-private step voids the end-to-end guarantee of every release on this data.]")


_SPEC_REF = re.compile(r"(?:[;,]\s*|\bper\s+)?\bspec §[\d.]+(?:[–-][\d.]+)?:?\s?")
_EMPTY_PARENS = re.compile(r"\s*\(\s*\)")


def public_text(text: str) -> str:
    """Text from the registry or the docs as users read it: without pointers into the project's internal
    specification ("(spec §3.9)", "per spec §3.8"), which users do not have."""
    return _EMPTY_PARENS.sub("", _SPEC_REF.sub("", text or ""))


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


def _hline(value: float, color: str, dash: str, label: str, *, right: bool = False) -> tuple[dict, dict]:
    """A full-width horizontal line with a label above its left end (what ``add_hline`` produces); ``right``
    puts the label below the right end instead (so two close lines keep readable labels)."""
    shape = {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
             "line": {"color": color, "dash": dash}, "opacity": 0.9}
    note = {"text": label, "showarrow": False, "xref": "x domain", "x": 1 if right else 0,
            "xanchor": "right" if right else "left", "yref": "y", "y": value,
            "yanchor": "top" if right else "bottom", "font": {"size": 11}}
    return shape, note


def metric_figure(band: pd.DataFrame, metric: str, *, x: str = "epsilon", title: str = "", x_title: str = "",
                  y_title: str = "", references: dict[str, float] | None = None, log_x: bool = True,
                  guides: Sequence[dict] = (), dashed: Sequence[str] = (), note: str | None = None,
                  baselines: dict[str, float | None] | None = None,
                  guarantees: dict[str, str] | None = None) -> go.Figure:
    """Mean line + shaded band per mechanism (``band`` from :func:`dpcore.reporting.band_table`).

    Every curve is drawn by :func:`trace_style` (claimed-invalid exhibits dashed red with "NOT PRIVATE" in the
    legend and hover, references grey; every legend entry names its guarantee; ``guarantees`` gives the one the
    releases carried, see :func:`dpcore.reporting.run_guarantees`). ``references`` draws labelled horizontal
    lines (``{mechanism id: level}``), ``baselines`` more of them under free labels (``{label: level}``,
    dash-dot grey: e.g. the SVM's majority class), ``guides`` extra dotted traces (dicts with x, y, name[, color]),
    ``dashed`` reference mechanisms as curves without a band, and ``note`` a centred message (e.g. when no
    mechanism reports the metric). The figure is assembled as one plain dict and wrapped without re-validation:
    building it through ``add_*``/``update_*`` calls cost ~30 ms per chart.
    """
    guarantees = guarantees or {}
    x_label = {"epsilon": "ε", "n": "n"}.get(x, x)
    traces: list[dict] = []
    rows = (band["metric"] == metric).to_numpy(dtype=bool) if "metric" in band else np.ones(len(band), dtype=bool)
    mechs = band["mechanism"].to_numpy(dtype=object)[rows]
    cols = {c: band[c].to_numpy(dtype=float)[rows] for c in (x, "mean", "lo", "hi")}
    for mid in _legend_order(dict.fromkeys(mechs)):
        idx = np.flatnonzero(mechs == mid)
        idx = idx[np.argsort(cols[x][idx], kind="stable")]
        style = trace_style(mid, guarantees.get(mid))
        xs, mean = cols[x][idx], cols["mean"][idx]
        hover = f"{style.hover}<br>{x_label} = %{{x:,~g}}<br>value = %{{y:.4g}}<extra></extra>"
        if mid in dashed:  # reference curve: no band
            traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines", "name": style.legend,
                           "line": {"color": style.color, "dash": style.dash if style.dash != "solid" else "dash",
                                    "width": 1.5}, "hovertemplate": hover})
            continue
        traces.append({"type": "scatter", "x": xs.tolist() + xs[::-1].tolist(),
                       "y": cols["hi"][idx].tolist() + cols["lo"][idx][::-1].tolist(),
                       "fill": "toself", "fillcolor": _rgba(style.color, 0.1 if style.not_private else 0.15),
                       "line": {"width": 0}, "mode": "lines", "hoverinfo": "skip", "showlegend": False,
                       "legendgroup": mid, "name": f"{style.legend} band"})
        traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines+markers", "name": style.legend,
                       "legendgroup": mid,
                       "line": {"color": style.color, "width": style.width, "dash": style.dash},
                       "marker": {"size": 7 if style.not_private else 6, "symbol": style.symbol},
                       "hovertemplate": hover})
        if len(idx) == 1:  # a band over one x value has no width: show it as an error bar instead
            traces[-1]["error_y"] = {"type": "data", "symmetric": False, "color": style.color, "thickness": 1.5,
                                     "array": [max(cols["hi"][idx][0] - mean[0], 0.0)],
                                     "arrayminus": [max(mean[0] - cols["lo"][idx][0], 0.0)]}
    shapes, notes = [], []
    for ref_id, value in (references or {}).items():
        if value is None or not math.isfinite(value):
            continue
        style = trace_style(ref_id)
        shape, label = _hline(float(value), style.color, style.dash if style.dash != "solid" else "dot",
                              style.legend)
        shapes.append(shape)
        notes.append(label)
    for label, value in (baselines or {}).items():
        if value is None or not math.isfinite(value):
            continue
        shape, text = _hline(float(value), BASELINE_COLOR, "dashdot", label, right=True)
        shapes.append(shape)
        notes.append(text)
    for guide in guides:
        traces.append({"type": "scatter", "x": guide["x"], "y": guide["y"], "mode": "lines", "name": guide["name"],
                       "line": {"dash": "dot", "width": 1.5, "color": guide.get("color", "#888888")}})
    if note:
        notes.append({"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5})
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "type": "log" if log_x else "linear", "automargin": True}
    xs_all = sorted({float(v) for v in cols[x]})
    if log_x and 0 < len(xs_all) <= 13:
        xaxis.update(tickvals=xs_all, ticktext=[f"{v:,.4g}" for v in xs_all])
    entries = sum(1 for t in traces if t.get("showlegend", True))
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}}, "height": chart_height(340, entries),
        "margin": {"l": 60, "r": 10, "t": 45, "b": 40},
        "legend": legend_layout(),
        "xaxis": xaxis, "yaxis": {"title": {"text": y_title}, "automargin": True},
    }
    if shapes:
        layout["shapes"] = shapes
    if notes:
        layout["annotations"] = notes
    return figure_from_dict({"data": traces, "layout": layout})


def legend_layout() -> dict[str, Any]:
    """A horizontal legend in its own strip under the x-axis title (container-anchored, so the plot area shrinks
    to make room instead of the legend running over the axis title)."""
    return {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left",
            "font": {"size": 11}, "tracegroupgap": 0}


def chart_height(base: int, legend_entries: int) -> int:
    """A chart's height grown for its legend rows (about three entries per row in a half-width chart)."""
    return base + 22 * max(0, math.ceil(legend_entries / 3) - 1)


def png_export_available() -> bool:
    """True when kaleido and a Chromium binary are present (static PNG export; see :mod:`pages._export`)."""
    from pages._export import png_export_available as available

    return available()


def figure_png(fig: go.Figure, caption: str = "") -> bytes:
    """Render a figure to a slide-ready PNG with ``caption`` inside (see :func:`pages._export.figure_png`)."""
    from pages._export import figure_png as render

    return render(fig, caption)
