"""Slide-ready exports: a figure with its caption printed inside (title, data, settings, what the band means),
rendered to PNG (kaleido) or self-contained HTML, and the download buttons the pages share.

Every payload is a callable, so nothing is rendered or serialised until the user clicks.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.evaluation.reporting import export_caption, export_filename, wrap_caption
from dpcore.vocabulary import Neighbouring
from pages.ui.datasets import UPLOAD_ID, dataset_info

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


def dataset_title(dataset_id: str) -> str:
    """The dataset's name for a caption (a built-in id, the upload id, or an uploaded file's name): no row count
    in it (the caption states n only where it is public)."""
    if dataset_id == UPLOAD_ID:
        return f"uploaded file {st.session_state.get('dp_upload_name') or 'CSV'}"
    info = dataset_info(dataset_id)
    return f"uploaded file {dataset_id}" if info is None else info.name


def sweep_dataset(frame: pd.DataFrame | None) -> str | None:
    """The dataset a shown sweep ran on (its ``dataset`` column: a built-in id or the uploaded file's name), which
    may differ from the current choice when the settings changed after the run."""
    if frame is None or "dataset" not in frame or not len(frame):
        return None
    value = frame["dataset"].iloc[0]
    return str(value) if isinstance(value, str) and value else None


def sweep_caption(config, frame: pd.DataFrame | None, *, dataset_id: str, band: str,
                  sample_size: bool = False) -> str:
    """The caption of a sweep's figure (:func:`dpcore.evaluation.reporting.export_caption`) from its configuration: n is
    the rows that reached the mechanisms (one size on Explore; on Sample size the x axis holds the sizes)."""
    n = None
    if not sample_size and frame is not None and "n" in frame and len(frame):
        n = int(pd.to_numeric(frame["n"], errors="coerce").max())
    return export_caption(dataset=dataset_title(sweep_dataset(frame) or dataset_id), n=n, k=int(config.ks[0]),
                          delta=float(config.deltas[0]),
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
    from pages.ui.charts import figure_from_dict, spread_tags

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


def figure_buttons(fig: go.Figure, *, caption: str, label: str, name_parts: tuple[str, ...], key: str,
                   title: str | None = None, png_ok: bool | None = None) -> None:
    """HTML and PNG download buttons for one figure, side by side; both carry ``caption`` inside the image and
    get a clean file name from ``name_parts`` (:func:`dpcore.evaluation.reporting.export_filename`)."""
    png_ok = png_export_available() if png_ok is None else png_ok
    c_html, c_png = st.columns(2)
    c_html.download_button(f"{label} (HTML)", lambda: figure_html(fig, caption, title=title),
                           file_name=export_filename(*name_parts, ext="html"), mime="text/html",
                           on_click="ignore", key=f"{key}_html")
    c_png.download_button(f"{label} (PNG)", lambda: figure_png(fig, caption, title=title),
                          file_name=export_filename(*name_parts, ext="png"), mime="image/png", on_click="ignore",
                          key=f"{key}_png", disabled=not png_ok,
                          help="Slide-ready: the caption (data, settings, band) is printed inside the image."
                          if png_ok else "PNG export needs kaleido and Chromium; the HTML file works everywhere.")


def csv_button(make_csv: Callable[[], str], *, label: str, name_parts: tuple[str, ...], key: str,
               help: str | None = None) -> None:
    """A CSV download button with a clean file name."""
    st.download_button(label, make_csv, file_name=export_filename(*name_parts, ext="csv"), mime="text/csv",
                       on_click="ignore", key=key, help=help)
