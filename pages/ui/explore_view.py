"""Explore's charts from a sweep, drawn one way for the page, ``dpcore run`` and the exported scripts and notebooks
(:func:`dpcore.evaluation.workspace.explore_figures` draws through here).

The page's chart loop calls :func:`metric_chart`; :func:`run_figures` draws every chart of a run reproduced from a
workspace (:class:`dpcore.evaluation.workspace.ExploreRun`) with the same arguments, and the captions the page's
downloads carry.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.reporting import band_table, reference_levels, run_guarantees
from dpcore.vocabulary import Band
from pages.ui.charts import MAJORITY_LABEL, METRIC_TITLES, METRIC_UNITS, majority_baseline, metric_figure

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
    from pages.ui.export import sweep_caption

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


def code_buttons(metric: str, *, label: str, workspace_text: str, seed: int | None, data_name: str | None,
                 name_parts: tuple[str, ...], key: str) -> None:
    """A Python script and a Jupyter notebook that regenerate the chart through dpcore (built on the click from
    values of this run: the workspace text — public settings and schema, no data — the seed and the file's name)."""
    import streamlit as st

    from dpcore.evaluation.captions import export_filename
    from dpcore.evaluation.chart_code import chart_notebook, chart_script

    args = {"metric": metric, "seed": seed, "data_name": data_name}
    c_py, c_nb = st.columns(2)
    c_py.download_button(f"{label} (Python script)", lambda: chart_script(workspace_text, **args),
                         file_name=export_filename(*name_parts, ext="py"), mime="text/x-python", on_click="ignore",
                         key=f"{key}_py", help="Regenerates this chart and the results CSV through dpcore's API "
                                               "(same settings and seed); on an upload, give it the file's path.")
    c_nb.download_button(f"{label} (notebook)", lambda: chart_notebook(workspace_text, **args),
                         file_name=export_filename(*name_parts, ext="ipynb"), mime="application/x-ipynb+json",
                         on_click="ignore", key=f"{key}_ipynb",
                         help="The same as a Jupyter notebook: run its cells in order.")
