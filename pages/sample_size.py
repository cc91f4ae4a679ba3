"""Sample size: utility versus n at a fixed ε (as in Chaudhuri et al. 2013, Figs. 3–4), with theory guides."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore.evaluation.metrics import METRIC_LABELS, evaluation_split
from dpcore.evaluation.reporting import band_table, run_guarantees, short_name
from dpcore.evaluation.sweep import SweepConfig, count_cells
from dpcore.evaluation.theory import family_for, guide_range, sample_size_guides, scaling_guide
from dpcore.evaluation.workspace import results_csv
from dpcore.explain.display import format_delta
from dpcore.vocabulary import Band, Neighbouring
from pages import ui
from pages.ui import export
from pages.ui.charts import for_screen, presentation_toggle, release_warning_note

#: Datasets with fewer rows than this get a note suggesting a larger one.
SMALL_N = 500
#: Larger built-in datasets suggested for a clearer picture (those that are registered).
LARGER = ("css_synthetic", "adult")
#: Scaling guides are drawn only for mechanisms whose middle point is this far above the random-subspace floor.
GUIDE_MARGIN = 0.1
#: Sweeps run without a click when every mechanism is a fast covariance perturbation and the work (Σ n·d² + d³ over
#: releases) is at most this: the page's default on Adult (5 mechanisms × 5 trials × 8 sizes, ≈ 2.3e10) runs by
#: itself, streaming into the chart (about half a minute on two cores).
AUTO_WORK = 3e10

ui.init_state()
ss = st.session_state  # the page's defaults (dp_ss_trials, dp_ss_sizes) are in pages.ui.state.SETTINGS
st.title("How many rows does each mechanism need?")
ui.evaluation_banner()


def _switch_dataset(dataset_id: str) -> None:
    ui.select_dataset(dataset_id)  # the data settings (scaling, bound, centring) follow the dataset


def _guides(sub: pd.DataFrame, mechanisms: list[str], sizes: list[int]) -> tuple[list[dict], list[str], list[str]]:
    """Scaling guides drawn only where their rate holds on this data (:func:`dpcore.evaluation.theory.guide_range`),
    anchored at a measured point inside that range; with the condition of each one drawn, and for each one left
    out, why."""
    guides: list[dict] = []
    drawn: list[str] = []
    skipped: list[str] = []
    if sub.empty:
        return guides, drawn, skipped
    rand = sub[sub["mechanism"] == "random"]["mean"]
    floor = float(rand.min()) if len(rand) else None
    for mid in mechanisms:
        g = sub[sub["mechanism"] == mid].sort_values("n")
        mech = dpcore.get_mechanism(mid)
        fam = family_for(mech)
        if g.empty or fam is None:
            continue  # no curve, or no known rate (e.g. the power method, Singhal–Steinke): nothing to guide
        name = short_name(mid)
        rate = "1/n²" if fam.power == 2 else "1/n"
        where = guide_range(mech, prepared.eigenvalues, prepared.n, k=k, epsilon=cfg.ss_eps, delta=cfg.delta,
                            neighbouring=cfg.neighbouring)
        if where.n_min is None:
            skipped.append(f"**{name}**: no guide here, because {where.condition}.")
            continue
        valid = g[g["n"] >= where.n_min]
        if valid.empty:
            skipped.append(f"**{name}**: no guide here, because its {rate} rate needs {where.condition}; the "
                           f"largest sample here has {max(sizes):,} rows.")
            continue
        useful = valid[(valid["mean"] < 0.999) & (valid["mean"] >= (floor or 0.0) + GUIDE_MARGIN)]
        if useful.empty:  # no shortfall left to scale, or still at the random-subspace floor: a guide would mislead
            why = "it is already at non-private PCA" if valid["mean"].min() >= 0.999 else \
                "it is at non-private PCA or still at the random-subspace level"
            skipped.append(f"**{name}**: no guide here, because {why} wherever its rate holds ({where.condition}).")
            continue
        anchor = useful.iloc[len(useful) // 2]
        xs = np.geomspace(max(where.n_min, min(sizes)), max(sizes), 40)
        guides.append({"x": xs, "y": scaling_guide(xs, anchor["n"], anchor["mean"], 1.0, floor, power=fam.power),
                       "name": f"scaling guide: {name} (∝ {rate}, n ≥ {where.n_min:,.0f})",
                       "color": ui.mechanism_colors().get(mid, "#888888")})
        drawn.append(f"**{name}** (∝ {rate}): drawn where {where.condition}; anchored at n = {anchor['n']:,.0f}.")
    return guides, drawn, skipped


with st.sidebar:
    presentation_toggle()
    st.header("Sample-size sweep")
    choices = [m.id for m in ui.selectable_mechanisms()]
    if "dp_ss_mechs" not in ss:
        ss.dp_ss_mechs = [m for m in ui.selected_mechanisms() if not dpcore.get_mechanism(m).invalid]
    ss.dp_ss_mechs = [m for m in ss.dp_ss_mechs if m in choices]
    st.multiselect("Mechanisms", choices, key="dp_ss_mechs", format_func=short_name,  # full names were cut off
                   help="Full names — " + "; ".join(f"{short_name(m)}: {ui.mechanism_label(m)}" for m in choices
                                                    if short_name(m) != ui.mechanism_label(m)) + ".")
    st.select_slider("ε (fixed)", options=list(ui.EPS_GRID), key="dp_ss_eps", format_func=lambda e: f"{e:g}")
    st.select_slider("δ (for (ε, δ) mechanisms)", options=list(ui.DELTA_CHOICES), key="dp_delta",
                     format_func=format_delta)
    ui.origin_note("dp_delta")
    st.number_input("k (components)", min_value=1, max_value=200, step=1, key="dp_ss_k",
                    help="This page's own k (Explore's is separate). The default 1 is where the theory's scaling "
                         "guides hold inside Adult's rows at ε = 1; at k = 5 they need more rows than Adult has.")
    st.slider("Number of sample sizes", 3, 16, key="dp_ss_sizes",
              help="Log-spaced from max(2d, 20) rows to every row available to the mechanisms.")
    c1, c2 = st.columns(2)
    c1.number_input("Trials", min_value=1, max_value=100, step=1, key="dp_ss_trials",
                    help="Independent subsamples and noise draws per size; the band is mean ± 1 sd over them.")
    c2.number_input("Seed", min_value=0, step=1, key="dp_seed")
    ui.origin_note("dp_seed")
    st.number_input("Time cap per release (s)", min_value=0.5, max_value=600.0, step=5.0, key="dp_time_cap")
    st.toggle("Run automatically when settings change", key="dp_autorun",
              help="Only when every mechanism is a fast covariance perturbation and the sweep is small.")

cfg = ui.settings()
prepared = ui.current_prepared()
if prepared is None:
    st.stop()
mechs = list(ss.dp_ss_mechs)
if not mechs:
    st.info("Choose at least one mechanism in the sidebar.")
    st.stop()

if cfg.neighbouring != Neighbouring.REPLACE:  # sizes need a public n: refused before any count is read (review 17)
    st.info("A sample-size sweep needs **replace-one** neighbours, where n is public. Under add/remove n is private, "
            "and a subsample of a fixed size would decide on it (a size above n refused or cut, an added record "
            "turned into a replaced one). Choose replace-one as the neighbouring relation on Explore to use this "
            "page.", icon=":material/lock:")
    st.stop()
mech_rows = evaluation_split(prepared, cfg.seed)[0].n
k = min(int(ss.dp_ss_k), prepared.d)
lo_n = max(2 * prepared.d, 20, k + 2)
if mech_rows <= lo_n:
    st.error(f"Only {mech_rows} rows are available to the mechanisms; a sample-size sweep needs more than {lo_n}.")
    st.stop()
sizes = sorted({round(float(v)) for v in np.geomspace(lo_n, mech_rows, int(ss.dp_ss_sizes))})
if prepared.n < SMALL_N:
    larger = [d for d in LARGER if d in ui.dataset_options() and d != cfg.dataset]
    st.info(f"This dataset is small: only {mech_rows:,} rows reach the mechanisms (n = {prepared.n:,}; some rows "
            f"are held out for the SVM metric), so the sample sizes cover a narrow range ({sizes[0]:,} to "
            f"{sizes[-1]:,}) and the curves stay noisy. For a clearer picture of how utility grows with n, use a "
            "larger dataset" + (": " + " or ".join(ui.dataset_label(d) for d in larger) if larger else "") + ".",
            icon=":material/info:")
    if larger:
        with st.container(horizontal=True):
            for did in larger:
                st.button(f"Switch to {ui.dataset_label(did)}", key=f"ss_use_{did}", on_click=_switch_dataset,
                          args=(did,),
                          icon=":material/swap_horiz:")
st.markdown(f"**Data:** {ui.dataset_label(cfg.dataset)} · ε = {cfg.ss_eps:g} · k = {k} · "
            f"subsamples n = {', '.join(f'{s:,}' for s in sizes)} (fresh subsample per trial)")
if prepared.n >= SMALL_N and ui.held_out_caption(prepared):
    st.caption(f":material/info: {ui.held_out_caption(prepared)} The largest sample size is all of them.")
if any(dpcore.get_mechanism(m).uses_delta for m in mechs):
    ui.delta_note(cfg.delta, mech_rows)
invalid = any(dpcore.get_mechanism(m).invalid for m in mechs)
refs = [m.id for m in ui.reference_mechanisms() if cfg.neighbouring in m.neighbourings]
config = SweepConfig(mechanisms=mechs + refs, epsilons=(cfg.ss_eps,), deltas=(cfg.delta,), ks=(k,),
                     trials=int(ss.dp_ss_trials), seed=cfg.seed, sample_sizes=sizes,
                     neighbouring=cfg.neighbouring, time_cap=cfg.time_cap, allow_invalid=invalid)
try:
    n_cells = count_cells(config.validated(prepared))
except dpcore.DPCoreError as exc:
    st.error(str(exc))
    st.stop()
fast = all(dpcore.get_mechanism(m).output == "covariance" for m in mechs)
work = len(config.mechanisms) * config.trials * sum(s * prepared.d**2 + prepared.d**3 for s in sizes)
run = ui.run_or_reuse(
    prepared, {"main": config}, slot=ui.slot_key("ss_result"), button_key="ss_run", label="Sample-size sweep",
    auto=cfg.autorun and fast and work <= AUTO_WORK, stream=True,
    hint=None if not cfg.autorun else "**Run automatically** covers only fast covariance mechanisms and sweeps of "
    f"at most {AUTO_WORK:.0e} operations (this one: {work:.1e}): press **Run sweep** to compute the curves.",
    caption=f"{n_cells} releases ({len(mechs)} mechanisms + the non-private PCA and random-subspace references, "
            f"{len(sizes)} sizes × {config.trials} trials).")
if run is None:
    st.stop()
frame = run.frame

metric = st.radio("Utility measure", ["captured_variance_ratio", "principal_angle_max_deg", "svm_accuracy"],
                  format_func=METRIC_LABELS.get, horizontal=True, key="dp_ss_metric")
band = band_table(frame, x="n", band=Band.from_label(cfg.band))
sub = band[band["metric"] == metric]
guides, guide_notes, no_guides = _guides(sub, mechs, sizes) if metric == "captured_variance_ratio" else ([], [], [])
majority = ui.majority_baseline(frame) if metric == "svm_accuracy" else None
fig = ui.metric_figure(band, metric, x="n", title=f"{METRIC_LABELS[metric]} vs sample size (ε = {cfg.ss_eps:g})",
                       x_title="sample size n (log scale)", y_title=METRIC_LABELS[metric], guides=guides,
                       dashed=refs, baselines={ui.MAJORITY_LABEL: majority} if majority is not None else None,
                       note="this dataset has no labels: no SVM accuracy" if metric == "svm_accuracy"
                       and not prepared.has_labels else None, guarantees=run_guarantees(frame), releases=frame)
fig.update_layout(height=fig.layout.height + 120)
st.plotly_chart(for_screen(fig), theme="streamlit", key="ss_chart", width="stretch")
if majority is not None:
    st.caption(f"Grey dash-dot line: always predicting the majority class scores {majority:.3f} on the same test "
               "rows — the floor an SVM in any subspace should beat.")
if guides:
    st.caption("The wide translucent *scaling guides* show how the shortfall from non-private PCA shrinks with n "
               "at fixed d, ε, Δ for each mechanism's family: like 1/n for the exponential mechanism (Chaudhuri "
               "et al. 2013, Theorem 7) and like 1/n² when noise is added to C (the noise on C/n shrinks like 1/n "
               "and the variance lost, like its square — once that noise is below the eigengap). Each is drawn "
               "only where its assumption holds and anchored at a measured point there; they are shapes, not "
               "bounds. Where a curve runs inside its guide, the data follow the theory.\n\n"
               + "\n\n".join(guide_notes))
if no_guides:
    st.caption(":material/info: " + "\n\n".join(no_guides))
release_warning_note(frame)
with st.expander("Downloads", icon=":material/download:"):
    dataset_name = export.sweep_dataset(frame) or ui.current_dataset_name()
    ss_caption = export.sweep_caption(run.config, frame, dataset_id=cfg.dataset,
                                      band=Band.from_label(cfg.band), sample_size=True)
    export.figure_buttons(fig, caption=ss_caption, label="Chart", key="ss_dl_fig",
                          name_parts=("sample_size", dataset_name, export.METRIC_SLUGS.get(metric, metric)))
    uploaded = export.shown_sweep_is_upload(dataset_name, cfg.dataset)
    export.csv_button(lambda: results_csv(frame, upload=uploaded), label="Sample-size sweep results (CSV)",
                      name_parts=("sample_size_sweep", dataset_name), key="ss_dl_csv",
                      help="One row per release: mechanism, subsample size n, trial and every utility measure "
                           "(runtime_s empty; on an upload the seed column too: its seeds are never written).")

st.subheader("Theory for this data (k = 1 results)")
rows = sample_size_guides(prepared.eigenvalues, prepared.n, prepared.d, cfg.ss_eps, cfg.delta)
if rows:
    tab = pd.DataFrame(rows)[["name", "n", "note", "hypotheses", "kind"]]
    tab["n"] = tab["n"].map(lambda v: "—" if v is None or pd.isna(v) else f"{v:,.0f}")
    theory = tab.rename(columns={"name": "result", "n": "sample size n", "kind": "type", "hypotheses": "assumes"})
    st.dataframe(theory, hide_index=True, width="stretch")
    export.csv_button(lambda: theory.to_csv(index=False), label="Theory table (CSV)",
                      name_parts=("sample_size_theory", ui.current_dataset_name()), key="ss_dl_theory")
    st.caption("Bounds use A = XᵀX/n of the full preprocessed data (its top eigenvalue and eigengap). A row whose "
               "hypotheses fail shows no number: the theorem says nothing there. Thm 9's constants are unknown, so "
               "its row is the scaling d·√d·√log(d/δ)/ε only.")
else:
    st.caption("The top eigengap of this data is zero, so Theorems 7–8 give no finite sample size.")
