"""Explore's what-if panel for uploads: the declared public schema next to bounds read off the data."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.whatif import PIPELINE_LABELS, PIPELINES, compare_sweeps, upload_pipelines
from dpcore.exceptions import DPCoreError
from pages import ui

_DASH = {"declared": "solid", "data_derived": "dash"}


def _figure(table, metric: str) -> go.Figure:
    colors = ui.mechanism_colors()
    fig = go.Figure()
    for mid, group in table.groupby("mechanism", sort=False):
        for name in PIPELINES:
            fig.add_scatter(x=group["epsilon"], y=group[name], mode="lines+markers",
                            name=f"{ui.mechanism_label(mid)} — {PIPELINE_LABELS[name]}",
                            line={"color": colors.get(mid, "#1f77b4"), "dash": _DASH[name]})
    fig.update_layout(title=f"{METRIC_LABELS[metric]}: declared schema (solid) vs data-derived bounds (dashed)",
                      height=420, margin={"l": 60, "r": 10, "t": 50, "b": 50},
                      legend={"orientation": "h", "y": -0.25, "font": {"size": 12}})
    eps = sorted({float(e) for e in table["epsilon"] if e > 0})
    fig.update_xaxes(type="log", title_text="ε (mechanism budget, log scale)", tickvals=eps,
                     ticktext=[f"{e:g}" for e in eps])  # the ε values run: no minor-tick labels
    fig.update_yaxes(title_text=METRIC_LABELS[metric])
    return fig


def render(config) -> None:
    """For an uploaded table: run ``config`` on both pipelines (on request) and show them side by side."""
    ss = st.session_state
    if ss.get("dp_dataset") != ui.UPLOAD_ID or ss.get("dp_upload") is None:
        return
    with st.expander("What do your public bounds cost? Declared schema vs bounds read off the data",
                     icon=":material/compare_arrows:", key="whatif_panel",
                     on_change="rerun"):  # a tracked state: the panel stays open while the page reruns
        st.markdown(
            "The same sweep (mechanisms, ε, k, trials, seeds) on two versions of your table: with the **public "
            "schema** you declared on the Data page — what you could actually publish — and with bounds and "
            "category lists **read off the data** (min–max), the optimistic picture that is **not private**. The "
            "gap is what your public bounds cost. Loose bounds squeeze the rows into a corner of the unit box, "
            "so the same noise hides more of them.")
        if not st.button("Run both pipelines", key="whatif_run"):
            stored = ss.get("_dp_whatif")
            if stored is None:
                return
            frames = stored
        else:
            try:
                table = ui.upload_table()
                prepared = upload_pipelines(table, ui.upload_schema(table), categorical=ss.dp_categorical,
                                            missing=ss.dp_missing, preprocess_options=ui.preprocess_options())
            except DPCoreError as exc:
                st.error(str(exc))
                return
            frames = {}
            for name in PIPELINES:
                frame = ui.run_sweep_cached(prepared[name], config, label=PIPELINE_LABELS[name])
                if frame is None:
                    return
                frames[name] = frame
            # whether the "declared" pipeline is really publishable (a bound read off the data stays so here too)
            ss["_dp_whatif_declared_private"] = prepared["declared"].is_private
            ss["_dp_whatif"] = frames
        if ss.get("_dp_whatif_declared_private") is False:
            st.warning("The declared pipeline has a non-private step too (e.g. a norm bound read off the data, or "
                       "schema values not yet confirmed as public — see the ledger on the Data page): neither "
                       "curve can be published as it stands.", icon=":material/warning:")
        metric = "captured_variance_ratio"
        table = compare_sweeps(frames, metric)
        if table.empty:
            st.info("No release succeeded on either pipeline; try a larger ε or fewer components.")
            return
        st.plotly_chart(_figure(table, metric), theme="streamlit", key="whatif_chart", width="stretch")
        shown = table.rename(columns={"epsilon": "ε", "declared": "declared schema",
                                      "data_derived": "bounds from data (not private)",
                                      "cost": "cost of public bounds"})
        shown["mechanism"] = shown["mechanism"].map(ui.mechanism_label)
        st.dataframe(shown.drop(columns=[c for c in shown if c.endswith("_ok_trials")]), hide_index=True,
                     width="stretch", column_config={c: st.column_config.NumberColumn(format="%.3f")
                                                     for c in shown if c not in ("mechanism", "ε")})
        st.caption("Means over trials of the captured variance (ratio to non-private PCA on the same pipeline's "
                   "data), computed on the true data: an evaluation, not a release. *Cost of public bounds* = "
                   "data-derived minus declared (positive: the public bounds lose utility). The data-derived "
                   "pipeline's own ledger is not private; only the declared one can be published.")
