"""Slide-ready exports: the download buttons the pages share. The exports themselves (a figure with its caption
printed inside: title, data, settings, what the band means; rendered to PNG through kaleido or to self-contained
HTML) are :mod:`dpcore.explain.figures`'s, whose names are re-exported here; this module adds the session's
uploaded file's name to the captions.

Every payload is a callable, so nothing is rendered or serialised until the user clicks.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.evaluation.reporting import export_filename
from dpcore.explain import figures
from dpcore.explain.figures import (  # noqa: F401 (re-exported: the pages and tests import them from here)
    CAPTION_FONT,
    CAPTION_RIGHT_PX,
    EXPORT_HEIGHT,
    EXPORT_PLOT_PX,
    EXPORT_WIDTH,
    LEGEND_PER_ROW,
    METRIC_SLUGS,
    ROW_PX,
    _legend_entries,
    _sizes_text,
    _tags_spread_for,
    _title_text,
    caption_lines,
    captioned_figure,
    figure_html,
    figure_png,
    png_export_available,
    sweep_dataset,
)
from pages.ui.datasets import UPLOAD_ID


def _upload_name(dataset_id: str) -> str | None:
    """The session's uploaded file's name when ``dataset_id`` is the upload id (else None: not read)."""
    return st.session_state.get("dp_upload_name") if dataset_id == UPLOAD_ID else None


def dataset_title(dataset_id: str) -> str:
    """The dataset's name for a caption (a built-in id, the upload id, or an uploaded file's name): no row count
    in it (the caption states n only where it is public); :func:`dpcore.explain.figures.dataset_title` with the
    session's upload's name."""
    return figures.dataset_title(dataset_id, _upload_name(dataset_id))


def sweep_caption(config, frame: pd.DataFrame | None, *, dataset_id: str, band: str,
                  sample_size: bool = False) -> str:
    """The caption of a sweep's figure (:func:`dpcore.explain.figures.sweep_caption`), naming the session's
    uploaded file when the sweep ran on it."""
    return figures.sweep_caption(config, frame, dataset_id=dataset_id, band=band, sample_size=sample_size,
                                 upload_name=_upload_name(sweep_dataset(frame) or dataset_id))


def figure_buttons(fig: go.Figure, *, caption: str, label: str, name_parts: tuple[str, ...], key: str,
                   title: str | None = None, png_ok: bool | None = None) -> None:
    """HTML and PNG download buttons for one figure, side by side; both carry ``caption`` inside the image and
    get a clean file name from ``name_parts`` (:func:`dpcore.evaluation.reporting.export_filename`)."""
    png_ok = png_export_available() if png_ok is None else png_ok
    label = figures.download_title(label)  # a long chart title is cut short on a button two to a row
    c_html, c_png = st.columns(2)
    c_html.download_button(f"{label} (HTML)", lambda: figure_html(fig, caption, title=title),
                           file_name=export_filename(*name_parts, ext="html"), mime="text/html",
                           on_click="ignore", key=f"{key}_html")
    c_png.download_button(f"{label} (PNG)", lambda: figure_png(fig, caption, title=title),
                          file_name=export_filename(*name_parts, ext="png"), mime="image/png", on_click="ignore",
                          key=f"{key}_png", disabled=not png_ok,
                          help="Slide-ready: the caption (data, settings, band) is printed inside the image."
                          if png_ok else "PNG export needs kaleido and Chromium; the HTML file works everywhere.")


def shown_sweep_is_upload(name: str, dataset_id: str) -> bool:
    """Whether the shown sweep ran on an upload (``name`` from :func:`sweep_dataset`): the current choice is the upload,
    or the sweep's data is no built-in dataset (a sweep run on an upload stays shown after a switch of data). An
    upload's seeds are never written to a file."""
    from dpcore.data import dataset_ids

    return dataset_id == UPLOAD_ID or name not in dataset_ids()


def csv_button(make_csv: Callable[[], str], *, label: str, name_parts: tuple[str, ...], key: str,
               help: str | None = None) -> None:
    """A CSV download button with a clean file name."""
    st.download_button(label, make_csv, file_name=export_filename(*name_parts, ext="csv"), mime="text/csv",
                       on_click="ignore", key=key, help=help)
