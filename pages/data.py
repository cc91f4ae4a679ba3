"""Data: choose a built-in dataset or upload a CSV, set the preprocessing, and see a (non-private) summary."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.reporting import explained_variance, k_for_fraction, label_balance
from pages import _ui as ui

ui.init_state()
ss = st.session_state
EXAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "classroom_example.csv"

st.title("Data and preprocessing")
st.caption("Everything on this page looks at the raw data and is NOT private: it is for choosing settings. "
           "Uploaded files stay in this browser session's memory only.")

# ------------------------------------------------------------------ source
left, right = st.columns([3, 2])
with left:
    st.subheader("Dataset")
    options = ui.dataset_options()
    if ss.dp_dataset not in options:
        ss.dp_dataset = ui.DEFAULTS["dp_dataset"]
    st.selectbox("Dataset", options, key="dp_dataset", format_func=ui.dataset_label)
    info = next((d for d in ui._datasets() if d.id == ss.dp_dataset), None)
    if info is not None:
        st.caption(f"{info.description}. Source: {info.source}.")
with right:
    st.subheader("Upload a CSV")
    st.file_uploader("CSV with a header row", type=["csv", "txt"], key="upload_widget", on_change=ui.on_upload,
                     help="Kept in memory for this session only; never written to disk.")
    example = EXAMPLE.read_bytes() if EXAMPLE.exists() else None
    if example is None and hasattr(dpcore.data, "example_csv_bytes"):
        example = dpcore.data.example_csv_bytes()
    if example is not None:
        st.download_button("Download the classroom example CSV", example, file_name="classroom_example.csv",
                           mime="text/csv", on_click="ignore", key="dl_example")

if ss.dp_dataset == ui.UPLOAD_ID and ss.get("dp_upload") is not None:
    if ss.pop("_dp_upload_note", False):
        st.info("An uploaded file has no public schema, so feature scaling was set to min–max from the data, which is "
                "NOT private (see the ledger). For a private pipeline choose 'none' and a public norm bound B.")
    with st.container(border=True):
        st.markdown(f"**Uploaded file:** {ss.get('dp_upload_name')}")
        cols = ["(none)", *ui.csv_columns(ss.dp_upload)]
        if ss.dp_label not in cols:
            ss.dp_label = "(none)"
        c1, c2, c3 = st.columns(3)
        c1.selectbox("Label column (used only for the SVM metric)", cols, key="dp_label")
        c2.radio("Categorical columns", ["onehot", "drop"], key="dp_categorical", horizontal=True,
                 format_func={"onehot": "one-hot (not private)", "drop": "drop"}.get)
        c3.radio("Missing values", ["drop", "zero", "mean"], key="dp_missing", horizontal=True,
                 format_func={"drop": "drop rows", "zero": "fill 0", "mean": "mean (not private)"}.get)

dataset = ui.current_dataset()
if dataset is None:
    st.stop()

# preprocess first (it only reads session state), so the automatic B can be shown in its widget
prepared = ui.current_prepared()
if prepared is not None and ss.dp_norm_auto:
    ss.dp_norm_bound = float(prepared.norm_bound)

# ------------------------------------------------------------------ preprocessing
st.subheader("Preprocessing")
p1, p2, p3 = st.columns(3)
with p1:
    st.radio("Feature scaling", ["schema", "minmax", "none"], key="dp_scaling",
             format_func={"schema": "public schema ranges", "minmax": "min–max from data (not private)",
                          "none": "none"}.get,
             help="Schema ranges come from public metadata; min–max reads the data and is recorded as NOT private.")
with p2:
    st.toggle("Automatic norm bound B", key="dp_norm_auto",
              help="Use the public bound implied by the schema (or the dataset's documented bound).")
    st.number_input("Norm bound B", min_value=1e-6, format="%.4g", key="dp_norm_bound",
                    disabled=ss.dp_norm_auto)
    st.radio("Rows above B", ["clip", "max_norm"], key="dp_norm_mode", horizontal=True,
             format_func={"clip": "clip to B", "max_norm": "divide all by max norm (not private)"}.get)
with p3:
    st.selectbox("Centring", ["none", "public", "dp", "empirical"], key="dp_centering",
                 format_func={"none": "none (uncentred second moment)", "public": "public mean (schema midpoint)",
                              "dp": "DP mean (spends ε)", "empirical": "empirical mean (NOT private)"}.get)
    if ss.dp_centering == "dp":
        st.number_input("ε for the DP mean", min_value=1e-3, max_value=100.0, format="%.3g", key="dp_centering_eps")

if prepared is None:
    st.stop()

# ------------------------------------------------------------------ summary
st.subheader("Summary (non-private, for choosing settings)")
bal = label_balance(prepared.y)
k80 = k_for_fraction(prepared.eigenvalues, 0.8)
suggested = int(getattr(dataset, "suggested_k", 2) or 2)
m = st.columns(5)
m[0].metric("Rows n", f"{prepared.n:,}")
m[1].metric("Features d", prepared.d)
m[2].metric("Rows clipped", f"{100 * prepared.clip_fraction:.1f} %")
m[3].metric("Suggested k", suggested, help=f"k = {k80} captures 80 % of the (uncentred) variance.")
m[4].metric("Labels", f"{len(bal)} classes" if len(bal) else "none")
if ss.dp_k != suggested and st.button(f"Use k = {suggested} on the other pages", key="use_suggested_k"):
    ss.dp_k = suggested
    st.rerun()

c_scree, c_side = st.columns([3, 2])
with c_scree:
    ev = explained_variance(prepared.eigenvalues).head(min(prepared.d, 40))
    fig = go.Figure()
    fig.add_bar(x=ev["component"], y=ev["fraction"], name="share of variance", marker_color="#2563eb")
    fig.add_scatter(x=ev["component"], y=ev["cumulative"], name="cumulative", mode="lines+markers", yaxis="y",
                    line={"color": "#ff7f0e"})
    fig.add_vline(x=suggested, line_dash="dash", line_color="#888888",
                  annotation_text=f"suggested k = {suggested}", annotation_position="top right")
    fig.update_layout(title="Scree plot and cumulative explained variance", height=340,
                      margin={"l": 60, "r": 10, "t": 45, "b": 50}, yaxis={"range": [0, 1.05]},
                      legend={"orientation": "h", "y": -0.25})
    fig.update_xaxes(title_text="component")
    fig.update_yaxes(title_text="fraction of total variance")
    st.plotly_chart(fig, theme="streamlit", key="data_scree", width="stretch")
with c_side:
    st.markdown("**Privacy ledger of this preprocessing**")
    ui.show_ledger(prepared.ledger)
    if len(bal):
        st.markdown("**Label balance**")
        st.dataframe(bal, hide_index=True, width="stretch",
                     column_config={"share": st.column_config.ProgressColumn("share", min_value=0.0, max_value=1.0,
                                                                             format="percent")})

# ------------------------------------------------------------------ clipping advisor
with st.expander("Clipping advisor: how many rows does each norm bound clip?", icon=":material/content_cut:"):
    curve_fn = getattr(dpcore.data, "clip_fraction_curve", None)
    norms = None
    if curve_fn is not None:
        with ui.handle_errors():
            scaling = {k: v for k, v in ui.preprocess_options().items() if k in ("feature_scaling", "centering")}
            norms = curve_fn(dataset, None, **scaling)
    if norms is not None:
        xs, ys = (norms["norm_bound"], norms["clip_fraction"]) if hasattr(norms, "columns") else norms
        fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines+markers", line={"color": "#d62728"}))
        fig.add_vline(x=prepared.norm_bound, line_dash="dash", line_color="#888888",
                      annotation_text=f"current B = {prepared.norm_bound:.3g}")
        fig.update_layout(height=300, margin={"l": 60, "r": 10, "t": 30, "b": 50}, title="Clip fraction vs B")
        fig.update_xaxes(title_text="norm bound B", type="log")
        fig.update_yaxes(title_text="fraction of rows clipped", range=[0, 1.02])
        st.plotly_chart(fig, theme="streamlit", key="data_clip", width="stretch")
        st.caption("A smaller B means less noise for the same ε, but clips more rows (bias). Choosing B by "
                   "looking at this curve is itself a data-dependent, non-private choice.")
    else:
        st.caption("The clipping advisor is unavailable for this dataset.")
