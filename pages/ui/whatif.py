"""Explore's what-if panel for uploads: the declared public schema next to bounds read off the data.

Results are kept with what they were computed on (:func:`dpcore.evaluation.whatif.fingerprint`: the file's hash and
read options, the schema, the load and preprocessing settings, the sweep): a result computed on another file, schema
or setting is discarded, never shown under the current file's name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.whatif import PIPELINE_LABELS, PIPELINES, compare_sweeps, fingerprint, upload_pipelines
from dpcore.exceptions import DPCoreError
from dpcore.explain.display import plain_words
from pages import ui

_DASH = {"declared": "solid", "data_derived": "dash"}
METRIC = "captured_variance_ratio"
#: Why the two curves are not on one scale, and what a negative cost means (shown with the table).
SCORING_NOTE = (
    "**How the curves are scored.** Each pipeline is scored against non-private PCA **on its own pipeline's "
    "data**: the two pipelines scale the columns differently (public bounds vs min–max), so their best "
    "subspaces differ and no single reference fits both. A point says how close a private subspace gets to "
    "the best one *of its own pipeline*. *Cost of public bounds* = data-derived minus declared, in those "
    "ratios: positive when the public bounds lose utility.")
NEGATIVE_NOTE = (
    "**A negative cost** ({count} of {total} rows) does not mean the public bounds give a better subspace of "
    "the same data: under the declared scaling the private subspace got closer to *its own* optimum — e.g. "
    "when the public bounds shrink the columns whose spread min–max scaling would inflate, so the leading "
    "directions stand out more, or by trial-to-trial noise (few rows, few trials). Compare within a "
    "pipeline, not across them.")


@dataclass(frozen=True)
class WhatIfResult:
    """Both pipelines' sweeps, and whether the declared pipeline is private end to end."""

    frames: dict[str, pd.DataFrame]
    declared_private: bool


def _figure(table, metric: str) -> go.Figure:
    colors = ui.mechanism_colors()
    fig = go.Figure()
    for mid, group in table.groupby("mechanism", sort=False):
        for name in PIPELINES:
            fig.add_scatter(x=group["epsilon"], y=group[name], mode="lines+markers",
                            name=f"{ui.mechanism_label(mid)} — {PIPELINE_LABELS[name]}",
                            line={"color": colors.get(mid, "#1f77b4"), "dash": _DASH[name]})
    fig.update_layout(title=f"{METRIC_LABELS[metric]}: declared schema (solid) vs data-derived bounds (dashed)"
                            "<br><sup>each curve against its own pipeline's PCA</sup>",
                      height=420, margin={"l": 60, "r": 10, "t": 70, "b": 50},
                      legend={"orientation": "h", "y": -0.25, "font": {"size": 12}})
    eps = sorted({float(e) for e in table["epsilon"] if e > 0})
    fig.update_xaxes(type="log", title_text="ε (mechanism budget, log scale)", tickvals=eps,
                     ticktext=[f"{e:g}" for e in eps], minor={"showgrid": False, "ticks": ""})  # the ε values run
    fig.update_yaxes(title_text=METRIC_LABELS[metric])
    return fig


def current_fingerprint(config) -> str:
    """What a what-if result for ``config`` is computed on now (raises DPCoreError for an unreadable upload)."""
    ss = st.session_state
    table = ui.upload_table()
    schema = ui.upload_schema(table)
    file_hash, read_options = ui.upload_table_key()
    return fingerprint(f"{file_hash}:{read_options!r}", schema, categorical=ss.dp_categorical,
                       missing=ss.dp_missing, preprocess_options=ui.preprocess_options(), config=config)


def _run(config, key: str) -> WhatIfResult | None:
    """Both pipelines on the session's upload (None after an error)."""
    ss = st.session_state
    try:
        table = ui.upload_table()
        prepared = upload_pipelines(table, ui.upload_schema(table), categorical=ss.dp_categorical,
                                    missing=ss.dp_missing, preprocess_options=ui.preprocess_options())
    except DPCoreError as exc:
        st.error(plain_words(str(exc)))
        return None
    frames = {}
    for name in PIPELINES:
        frame = ui.run_sweep_cached(prepared[name], config, label=f"what-if, {PIPELINE_LABELS[name]}")
        if frame is None:
            return None
        frames[name] = frame
    # whether the "declared" pipeline is really publishable (a bound read off the data stays so here too)
    result = WhatIfResult(frames, bool(prepared["declared"].is_private))
    ui.put("whatif", (key, result))
    return result


def _show(result: WhatIfResult) -> None:
    if not result.declared_private:
        st.warning("The declared pipeline has a non-private step too (e.g. a norm bound read off the data, or "
                   "schema values not yet confirmed as public — see the ledger on the Data page): neither "
                   "curve can be published as it stands.", icon=":material/warning:")
    table = compare_sweeps(result.frames, METRIC)
    if table.empty:
        st.info("No release succeeded on either pipeline; try a larger ε or fewer components.")
        return
    st.plotly_chart(_figure(table, METRIC), theme="streamlit", key="whatif_chart", width="stretch")
    shown = table.rename(columns={"epsilon": "ε", "declared": "declared schema",
                                  "data_derived": "bounds from data (not private)",
                                  "cost": "cost of public bounds"})
    shown["mechanism"] = shown["mechanism"].map(ui.mechanism_label)
    st.dataframe(shown.drop(columns=[c for c in shown if c.endswith("_ok_trials")]), hide_index=True,
                 width="stretch", column_config={c: st.column_config.NumberColumn(format="%.3f")
                                                 for c in shown if c not in ("mechanism", "ε")})
    st.caption(SCORING_NOTE)
    negative = int((table["cost"] < 0).sum())
    if negative:
        st.caption(NEGATIVE_NOTE.format(count=negative, total=int(table["cost"].notna().sum())))
    st.caption("Means over trials, computed on the true data: an evaluation, not a release. The data-derived "
               "pipeline's own ledger is not private; only the declared one can be published.")


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
        try:
            key = current_fingerprint(config)
        except DPCoreError as exc:
            st.error(plain_words(str(exc)))
            return
        had_result = ui.memo_key("whatif") is not None
        result = ui.recall("whatif", key)  # a result computed on another file, schema or setting is dropped
        if st.button("Run both pipelines", key="whatif_run"):
            result = _run(config, key)
        elif result is None:
            if had_result:
                st.info("The last what-if ran on another file, schema or setting and was discarded. Press **Run "
                        "both pipelines** for the current ones.", icon=":material/restart_alt:")
            return
        if result is not None:
            _show(result)
