"""Display helpers shared by the pages: errors, banners, guarantee badges, mechanism colours, the ledger, and the
utility charts (built as plain figure dicts, wrapped without re-validation)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.exceptions import DPCoreError
from dpcore.privacy import GUARANTEE_LABELS, LedgerEntry

BANNER = "These charts use the true data and are an evaluation sandbox, not a private release."
GUARANTEE_COLORS = {"pure": "green", "approx": "blue", "heuristic-mcmc": "orange",
                    "claimed-invalid": "red", "none": "gray"}
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
            "#bcbd22", "#7f7f7f", "#393b79", "#ad494a", "#637939", "#8ca252", "#d6616b", "#7b4173",
            "#3182bd", "#e6550d", "#31a354", "#756bb1")
#: Colour and label of the majority-class baseline drawn on every SVM-accuracy chart.
BASELINE_COLOR = "#555555"
MAJORITY_LABEL = "majority class"


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
    """One colour per mechanism id, stable across pages (registry order)."""
    return {mid: _PALETTE[i % len(_PALETTE)] for i, mid in enumerate(dpcore.mechanism_ids())}


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
                  baselines: dict[str, float | None] | None = None) -> go.Figure:
    """Mean line + shaded band per mechanism (``band`` from :func:`dpcore.reporting.band_table`).

    ``references`` draws labelled horizontal lines (``{mechanism id: level}``), ``baselines`` more of them under
    free labels (``{label: level}``, dash-dot grey: e.g. the SVM's majority class), ``guides`` extra dotted traces
    (dicts with x, y, name[, color]), ``dashed`` mechanisms as dashed curves without a band, and ``note`` a
    centred message (e.g. when no mechanism reports the metric). The figure is assembled as one plain dict
    and wrapped without re-validation: building it through ``add_*``/``update_*`` calls cost ~30 ms per chart.
    """
    colors = mechanism_colors()
    ids = set(dpcore.mechanism_ids())
    traces: list[dict] = []
    rows = (band["metric"] == metric).to_numpy(dtype=bool) if "metric" in band else np.ones(len(band), dtype=bool)
    mechs = band["mechanism"].to_numpy(dtype=object)[rows]
    cols = {c: band[c].to_numpy(dtype=float)[rows] for c in (x, "mean", "lo", "hi")}
    for mid in dict.fromkeys(mechs):  # mechanisms in order of appearance
        idx = np.flatnonzero(mechs == mid)
        idx = idx[np.argsort(cols[x][idx], kind="stable")]
        color = colors.get(mid, "#555555")
        name = mechanism_label(mid)
        xs, mean = cols[x][idx], cols["mean"][idx]
        if mid in dashed:  # reference curve: no band
            traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines", "name": f"{name} (reference)",
                           "line": {"color": color, "dash": "dash", "width": 1.5}})
            continue
        traces.append({"type": "scatter", "x": xs.tolist() + xs[::-1].tolist(),
                       "y": cols["hi"][idx].tolist() + cols["lo"][idx][::-1].tolist(),
                       "fill": "toself", "fillcolor": _rgba(color, 0.15), "line": {"width": 0}, "mode": "lines",
                       "hoverinfo": "skip", "showlegend": False, "legendgroup": mid, "name": f"{name} band"})
        traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines+markers", "name": name,
                       "legendgroup": mid, "line": {"color": color, "width": 2}, "marker": {"size": 6},
                       "hovertemplate": f"{name}<br>{x} = %{{x:g}}<br>value = %{{y:.4g}}<extra></extra>"})
    shapes, notes = [], []
    for ref_id, value in (references or {}).items():
        if value is None or not math.isfinite(value):
            continue
        shape, label = _hline(float(value), colors.get(ref_id, "#888888"), "dash" if ref_id == "pca" else "dot",
                              mechanism_label(ref_id) if ref_id in ids else ref_id)
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
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    xs_all = sorted({float(v) for v in cols[x]})
    if log_x and 0 < len(xs_all) <= 13:
        xaxis.update(tickvals=xs_all, ticktext=[f"{v:,.4g}" for v in xs_all])
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}}, "height": 340,
        "margin": {"l": 60, "r": 10, "t": 45, "b": 50},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 11}},
        "xaxis": xaxis, "yaxis": {"title": {"text": y_title}},
    }
    if shapes:
        layout["shapes"] = shapes
    if notes:
        layout["annotations"] = notes
    return figure_from_dict({"data": traces, "layout": layout})


def png_export_available() -> bool:
    """True when kaleido and a Chromium binary are present (static PNG export)."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return bool(os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
                or shutil.which("google-chrome"))


def figure_png(fig: go.Figure, width: int = 900, height: int = 500) -> bytes:
    """Render a figure to PNG with kaleido (a few seconds: call lazily, e.g. from a download callable)."""
    out = go.Figure(fig)
    out.update_layout(template="plotly_white")
    return out.to_image(format="png", width=width, height=height, scale=2)
