"""Explore: utility of every chosen mechanism versus ε (four linked charts, results table, downloads).

The title is drawn before the heavy imports (numpy, pandas, plotly, dpcore: 3–10 s on a cold server), so the first
heading paints as soon as the script starts (issue #33 item 8); the first screen follows once they are loaded.
"""

# ruff: noqa: E402  (the title comes before the imports on purpose)
from __future__ import annotations

import functools

import streamlit as st

st.title("Explore the privacy–utility trade\u2011off")  # a non-breaking hyphen: never "trade-" / "off" on a projector
intro = st.container()  # the first screen: filled once the settings are known (its stored chart is the default run's)

from collections import Counter

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS, NEIGHBOURING_LABELS, ledger_total
from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.reporting import (
    band_table,
    config_yaml,
    export_filename,
    reference_levels,
    results_table,
    run_guarantees,
    short_name,
)
from dpcore.evaluation.sweep import REFERENCE_MECHANISMS, count_cells
from dpcore.evaluation.workspace import explore_configs, results_csv
from dpcore.explain.display import format_delta, format_deltas, pca_below_random_note
from dpcore.explain.statements import (
    centring_note,
    guarantees_qualifier,
    mechanism_delta_statement,
    non_private_warning,
)
from dpcore.vocabulary import Band, Guarantee, ReleaseStatus
from pages import ui
from pages.ui import explore_view, export, peers, planner, presets, sweep_loader, whatif, workspace
from pages.ui.charts import (
    METRIC_TITLES,
    METRIC_UNITS,
    app_intro,
    at_random_line,
    chart_slots,
    for_screen,
    presentation_on,
    presentation_toggle,
    random_line_note,
    release_warning_note,
)

#: Small classic datasets offered one click away (with why they are noisy), when registered.
CLASSIC = ("wine", "breast_cancer", "digits")
#: After the first view, "Run automatically" re-runs a sweep by itself only when it has at most this many releases
#: and every mechanism is a fast covariance perturbation.
AUTO_CELLS = 2000
#: The results table's columns in presentation mode (the full table ran off the right edge at 1280 px).
PRESENT_COLUMNS = ("name", "epsilon", "captured_variance_ratio", "frobenius_error", "principal_angle_max_deg",
                   "svm_accuracy", "status")
PRESENT_LABELS = {"captured_variance_ratio": "captured variance", "frobenius_error": "Frobenius error",
                  "principal_angle_max_deg": "largest angle (°)", "svm_accuracy": "SVM accuracy"}

ui.init_state()
ss = st.session_state
ui.evaluation_banner()
workspace.lost_upload_note()  # a reload of a session that used an upload: what was lost, how to restore it


def privacy_verdict(frame, pre_eps: float) -> None:
    """One line above the charts: whether the shown run is end-to-end private. Read from the sweep's privacy columns,
    which are functions of public settings only — the preprocessing ledger and each mechanism's guarantee — never
    of a diagnostic read off the data (the MCMC convergence verdict stays out)."""
    rows = frame[~frame["mechanism"].isin(REFERENCE_MECHANISMS)]
    if rows.empty or "end_to_end_private" not in rows:
        return
    private = rows["end_to_end_private"].astype(bool)
    if private.all():
        heuristic = sorted({short_name(m) for m, g in zip(rows["mechanism"], rows["guarantee"])
                            if g == Guarantee.HEURISTIC_MCMC})
        spent = f" (+ ε = {pre_eps:g} for the preprocessing)" if pre_eps > 0 else ""
        st.success("**End-to-end private run:** every preprocessing step is private (public schema, public norm "
                   "bound) and every mechanism carries a privacy guarantee, so each release in these charts is "
                   f"private for the rows it ran on at the ε of its point{spent}. Decided from the public settings "
                   "(the ledger and the guarantees), not from the data."
                   + (f" {', '.join(heuristic)}: heuristic ε-DP, which holds for a converged chain."
                      if heuristic else ""), icon=":material/verified_user:")
    else:
        steps = sorted({step for text in rows.loc[~private, "non_private_steps"] for step in str(text).split("; ")
                        if step})
        st.error(f"**Not end-to-end private:** {int((~private).sum())} of {len(rows)} releases — "
                 f"{'; '.join(steps)}.", icon=":material/gpp_bad:")


def _switch_dataset(dataset_id: str) -> None:
    ui.select_dataset(dataset_id)  # the data settings (scaling, bound, centring) follow the dataset
    presets.apply(dataset_id)  # a preset dataset (loose public bounds) sets its k, trials and mechanisms


def _short_dataset_label(dataset_id: str, upload_name: str | None = None) -> str:
    """The sidebar's name of a dataset: "Adult", "Wine" (the full name with n and d was cut off in the sidebar).
    ``upload_name`` is bound when the widget is drawn (a format function must not read the session later)."""
    if dataset_id == ui.UPLOAD_ID:
        return ui.dataset_label(dataset_id, upload_name=upload_name)
    return ui.dataset_label(dataset_id).split(" (")[0]


def _pick_dataset() -> None:
    ui.select_dataset(ss[ui.bound_key("dp_dataset")])
    presets.apply(ss.dp_dataset)


# ------------------------------------------------------------------ settings (sidebar)
with st.sidebar:
    presentation_toggle()
    st.header("Data")
    options = ui.dataset_options()
    if ss.dp_dataset not in options:
        ss.dp_dataset = ui.DEFAULT_DATASET
    # its own widget key (the Data page's picker owns "dp_dataset"), synced through on_change like ui.bind
    st.selectbox("Dataset", options, index=options.index(ss.dp_dataset), key=ui.bound_key("dp_dataset"),
                 on_change=_pick_dataset,
                 format_func=functools.partial(_short_dataset_label, upload_name=ss.get("dp_upload_name")),
                 help="Preprocessing, uploads and the public schema are on the Data page; the Data line above the "
                      "charts gives the rows and features.")
    st.header("Mechanisms")
    for group in ui.MECH_GROUPS:
        mechs = ui.selectable_mechanisms(group)
        if not mechs:
            continue
        label = GUARANTEE_LABELS[group]
        if group == Guarantee.CLAIMED_INVALID:
            label = "Claimed-invalid exhibits (NOT private)"
        # short names in the chips (a full name, e.g. "PPCA (exponential mechanism)", was cut off in the sidebar)
        full = "; ".join(f"{short_name(m.id)}: {ui.mechanism_label(m.id)}" for m in mechs
                         if short_name(m.id) != ui.mechanism_label(m.id))
        st.multiselect(label, [m.id for m in mechs], key=ui.mech_key(group), format_func=short_name,
                       help=("Mechanisms whose published proof is wrong; off by default, shown only as exhibits. "
                             if group == Guarantee.CLAIMED_INVALID else "") + (f"Full names — {full}." if full else ""))
    peers.toggle()  # OpenDP and diffprivlib beside ours, where `make peers` built their Python
    st.header("Privacy")
    st.select_slider("ε range (log scale)", options=list(ui.EPS_GRID), format_func=lambda e: f"{e:g}",
                     **ui.bind("dp_eps_range"))
    ui.origin_note("dp_eps_range")
    left, right = st.columns(2)
    left.caption("← better privacy")
    right.markdown("<div style='text-align:right;font-size:0.85em;opacity:0.7'>better accuracy →</div>",
                   unsafe_allow_html=True)
    st.select_slider("δ (for (ε, δ) mechanisms)", options=list(ui.DELTA_CHOICES), key="dp_delta",
                     format_func=format_delta)
    ui.origin_note("dp_delta")
    st.radio("Neighbouring relation", list(NEIGHBOURING_LABELS), key="dp_neighbouring", horizontal=True,
             format_func=NEIGHBOURING_LABELS.get)
    st.header("Run")
    st.number_input("k (components)", min_value=1, max_value=200, step=1, key="dp_k")
    ui.origin_note("dp_k")
    c1, c2 = st.columns(2)
    c1.number_input("Trials", min_value=1, max_value=100, step=1, key="dp_trials")
    c2.number_input("Seed", min_value=0, step=1, key="dp_seed")
    ui.origin_note("dp_seed")
    st.number_input("Time cap per release (s)", min_value=0.5, max_value=600.0, step=5.0, key="dp_time_cap")
    st.toggle("Run automatically when settings change", key="dp_autorun",
              help="Only for fast input-perturbation mechanisms; MCMC and sampling mechanisms always wait for Run.")

cfg = ui.settings()
with intro:  # the stored Adult chart only until this session has its own results, and only on Adult
    app_intro(show_chart=cfg.dataset == ui.DEFAULT_DATASET and ui.stored("explore_result") is None)

if sweep_loader.render():  # a sweep CSV from `dpcore sweep` (e.g. streamed or on Dask): its charts instead
    st.stop()

# ------------------------------------------------------------------ data
prepared = ui.current_prepared()
if prepared is None:
    st.page_link("pages/data.py", label="Choose or fix the data on the Data page", icon=":material/database:")
    st.stop()
_label = (getattr(ui.current_dataset(), "options", None) or {}).get("label_text")  # e.g. "income > 50000"
_name = ui.dataset_label(cfg.dataset).split(" (n = ")[0]  # the registry label repeats n and d
st.markdown(f"**Data:** {_name} · {prepared.n:,} rows × {prepared.d} features · norm bound B = "
            f"{prepared.norm_bound:.3g}" + (f" · label {_label}" if _label else ""))
mech_rows = ui.mechanism_rows(prepared)
if mech_rows >= ui.SMALL_ROWS and ui.held_out_caption(prepared):
    st.caption(f":material/info: {ui.held_out_caption(prepared)}")
classic = [d for d in CLASSIC if d in ui.dataset_options() and d != cfg.dataset]
if mech_rows < ui.SMALL_ROWS:
    larger = ui.DEFAULT_DATASET if ui.DEFAULT_DATASET in ui.dataset_options() else None
    held = f" ({prepared.n - mech_rows:,} more are held out to test the SVM)" if mech_rows < prepared.n else ""
    st.info(f"**Why these curves are noisy:** only {mech_rows:,} rows reach the mechanisms{held}. The noise a "
            "mechanism adds to protect one person does not shrink with n, while the signal grows with n — so on a "
            "few hundred rows most private curves stay near the random-subspace line and vary a lot between "
            "trials. Larger data shows the trade-off: curves that leave the random line and approach non-private "
            "PCA as ε grows.", icon=":material/info:")
    if larger is not None and larger != cfg.dataset:
        st.button(f"Switch to {ui.dataset_label(larger)}", key="explore_use_default", on_click=_switch_dataset,
                  args=(larger,), icon=":material/swap_horiz:")
elif classic:
    with st.container(horizontal=True, vertical_alignment="center"):
        st.caption("Small classic datasets (noisier):", help="Few rows reach the mechanisms, so the noise that "
                   "protects one person weighs more: the curves stay nearer the random line and vary between trials.")
        for did in classic:
            info = ui.dataset_info(did)
            st.button(f"{info.name.split(' (')[0]} ({info.n:,})", key=f"explore_use_{did}", type="tertiary",
                      on_click=_switch_dataset, args=(did,), help=f"{info.name}: n = {info.n:,} rows, d = {info.d}")
if not prepared.is_private:  # which steps, which columns (dpcore.explain.statements)
    st.warning(non_private_warning(prepared.ledger, prepared.feature_names))
pre_eps, pre_delta = ledger_total(prepared.ledger)
if pre_eps > 0 or pre_delta > 0:
    st.info(f"The preprocessing spends ε = {pre_eps:g}, δ = {pre_delta:g} (DP mean for centring). The charts' ε axis "
            f"is the mechanism's budget: each point's total is ε + {pre_eps:g} (and δ + {pre_delta:g}).",
            icon=":material/account_balance_wallet:")

mechanisms = list(cfg.mechanisms)
invalid = [m for m in mechanisms if dpcore.get_mechanism(m).invalid]
eps = cfg.epsilons
for mid in invalid:
    mech = dpcore.get_mechanism(mid)
    statement = mechanism_delta_statement(mech, eps[0], subject="it")
    st.error(f"**{mech.name}** is claimed-invalid, shown as a labelled exhibit only. {statement or ''}")
if any(dpcore.get_mechanism(m).uses_delta for m in mechanisms):
    ui.delta_note(cfg.delta, mech_rows)
if not mechanisms:
    st.info("Choose at least one mechanism in the sidebar.")
    st.stop()

presets.note(cfg.dataset, cfg.k, cfg.trials, mechanisms)  # what a preset dataset set, and what it shows
k = min(cfg.k, prepared.d)
if cfg.k >= prepared.d:
    st.warning(f"k = {cfg.k} {'is more than' if cfg.k > prepared.d else 'equals'} the {prepared.d} features of this "
               f"dataset, so the top-k subspace is the whole space and every mechanism scores the same. Choose k below "
               f"{prepared.d} in the sidebar.", icon=":material/warning:")
# the configurations `dpcore run` builds from a workspace too (one code path: dpcore.evaluation.workspace)
config, ref_config = explore_configs(mechanisms, eps, delta=cfg.delta, k=k, d=prepared.d, trials=cfg.trials,
                                     seed=cfg.seed, neighbouring=cfg.neighbouring, time_cap=cfg.time_cap)
refs = list(ref_config.mechanisms) if ref_config is not None else []

try:
    n_cells = count_cells(config.validated(prepared))
except dpcore.DPCoreError as exc:
    st.error(str(exc))
    st.stop()
n_ref_cells = count_cells(ref_config.validated(prepared)) if ref_config is not None else 0
cheap = all(dpcore.get_mechanism(m).output == "covariance" for m in mechanisms) and n_cells <= AUTO_CELLS
# A session's first view runs its settings by itself when "Run automatically" is on, whatever they cost: a shared link
# (the lesson, with PPCA) opened on "Press Run sweep" although the switch said otherwise. Later changes run by
# themselves only when cheap (fast covariance mechanisms).
first_view = ss.get(ui.slot_key("explore_result") + "_live") is None
slow = [short_name(m) for m in mechanisms if dpcore.get_mechanism(m).output != "covariance"]
run = ui.run_or_reuse(
    prepared, {"main": config, "reference lines": ref_config, "peers": peers.config(config)},
    slot=ui.slot_key("explore_result"),
    button_key="explore_run", label="Sweep", auto=cfg.autorun and (cheap or first_view),
    hint=None if not cfg.autorun else "**Run automatically** re-runs only fast covariance mechanisms (at most "
    f"{AUTO_CELLS:,} releases){': ' + ', '.join(slow) + ' wait' if slow else ''}. Press **Run sweep** to compute "
    "the curves.",
    caption=f"{n_cells + n_ref_cells} releases ({len(mechanisms)} mechanisms × {len(eps)} ε values × {config.trials} "
            f"trials{f' + {n_ref_cells} for the reference lines' if n_ref_cells else ''}); each release capped at "
            f"{config.time_cap:g} s.")
if run is None:
    st.stop()
frame, ref_frame, shown_config = run.frame, run.frames["reference lines"], run.config
frame = peers.merged(frame, run.frames.get("peers"))  # the peers' rows, labelled (pages.ui.peers)

# ------------------------------------------------------------------ is this run end-to-end private?
privacy_verdict(frame, pre_eps)

# ------------------------------------------------------------------ charts
band_choice = st.radio("Band over trials", [b.label for b in Band], key="dp_band", horizontal=True)
band_kind = Band.from_label(band_choice)
metrics = ["captured_variance_ratio", "frobenius_error", "principal_angle_max_deg"]
if prepared.has_labels:
    metrics.append("svm_accuracy")
titles, units = METRIC_TITLES, METRIC_UNITS

# Summaries, figures and the table depend only on the shown sweep: build them once per sweep (and band choice)
# and reuse them on the reruns that every widget interaction triggers.
derived = ui.get("explore_derived")
if derived is None or derived["frame"] is not frame or derived["ref_frame"] is not ref_frame \
        or derived["refs"] != refs:
    derived = {"frame": frame, "ref_frame": ref_frame, "refs": refs, "bands": {}, "figs": {},
               "levels": reference_levels(ref_frame, refs) if ref_frame is not None else {},
               "majority": ui.majority_baseline(frame), "guarantees": run_guarantees(frame)}
    ui.put("explore_derived", derived)
levels = derived["levels"]
if band_kind not in derived["bands"]:
    derived["bands"][band_kind] = band_table(frame, x="epsilon", band=band_kind)
bands = derived["bands"][band_kind]
figs = {}
slots = chart_slots(len(metrics))  # two per row, or one per row in presentation mode
for i, metric in enumerate(metrics):
    fig = derived["figs"].get((band_kind, metric))
    if fig is None:
        fig = explore_view.metric_chart(bands, metric, levels=levels, majority=derived["majority"],  # as dpcore run
                                        guarantees=derived.get("guarantees"), releases=frame)
        derived["figs"][(band_kind, metric)] = fig
    figs[metric] = fig
    with slots[i]:
        st.plotly_chart(for_screen(fig), theme="streamlit", key=f"explore_{metric}", width="stretch")
        if metric == "svm_accuracy" and derived["majority"] is not None:
            pca_svm = levels.get("svm_accuracy", {}).get("pca")
            if pca_svm is not None and pca_svm < derived["majority"] + 0.01:
                st.caption(f":orange[:material/warning: Uninformative panel: non-private PCA's subspace scores "
                           f"{pca_svm:.3f}, no better than always predicting the majority class "
                           f"({derived['majority']:.3f}). Raise k or choose a label that the top directions "
                           "separate.]")
            else:
                st.caption(f"Grey dash-dot line: always predicting the majority class scores "
                           f"{derived['majority']:.3f} — an SVM near it has learnt nothing from the subspace.")
        random_level = levels.get(metric, {}).get("random")
        if metric == "captured_variance_ratio" and (flat := at_random_line(bands, random_level)):
            st.caption(":material/help: " + random_line_note(flat, random_level, largest_x=max(eps), n=mech_rows,
                                                              d=prepared.d, norm_bound=prepared.norm_bound))
        if metric == "svm_accuracy" and (why := pca_below_random_note(ref_frame)):
            st.caption(f":material/help: **Why PCA is below the random subspace here.** {why}")

# ------------------------------------------------------------------ guarantees and table
st.subheader("Guarantees in this run")
lines = []
qualifier = guarantees_qualifier(prepared.ledger, prepared.feature_names)  # None when the pipeline is private
for mid in shown_config.mechanisms:
    mech = dpcore.get_mechanism(mid)
    delta_txt = f", δ = {shown_config.deltas[0]:g}" if mech.uses_delta else ""
    given = " given its inputs" if qualifier else ""
    lines.append(f"- **{mech.name}** {ui.guarantee_badge(mech)}{given} — neighbouring: "
                 f"{NEIGHBOURING_LABELS[shown_config.neighbouring]}{delta_txt}")
for mid in levels.get("captured_variance_ratio", {}):
    lines.append(f"- *{ui.mechanism_label(mid)}* (dashed reference line) {ui.guarantee_badge(mid)}")
lines += peers.guarantee_lines(frame)
st.markdown("\n".join(lines))
peers.verdicts(frame)
if qualifier:
    st.warning(qualifier)
if note := centring_note(map(dpcore.get_mechanism, shown_config.mechanisms), ui.preprocess_options()["centering"]):
    st.info(note, icon=":material/info:")

st.subheader("Results")
release_warning_note(frame)
if "table" not in derived:
    table = results_table(frame)
    derived["table_ids"] = list(table["mechanism"])  # the ids behind the names (short names in presentation mode)
    table.insert(0, "name", [ui.mechanism_label(m) for m in table.pop("mechanism")])
    table["guarantee"] = [GUARANTEE_LABELS.get(g, g) for g in table["guarantee"]]
    peers.relabel(table, derived["table_ids"])
    if "delta" in table:
        table["delta"] = format_deltas(table["delta"])  # as text: 1e-10, never a fixed-point rounding
    derived["table"] = table.drop(columns=["neighbouring", "d"], errors="ignore")
    status = frame["status"].to_numpy(dtype=object)
    failed = Counter(status[status != ReleaseStatus.OK].tolist())
    derived["failed"] = (f"{sum(failed.values())} of {len(frame)} releases did not produce a subspace "
                         f"({', '.join(f'{s}: {c}' for s, c in failed.most_common())}); "
                         "they are counted in the status column and left out of the curves.") if failed else ""
table = derived["table"]
labels = dict(METRIC_LABELS)
if presentation_on():  # the columns a class reads, under short names (the full table is in the CSV download)
    table = table[[c for c in PRESENT_COLUMNS if c in table]]
    table = table.assign(name=[short_name(m) for m in derived["table_ids"]]) if "name" in table else table
    labels.update(PRESENT_LABELS)
st.dataframe(table, hide_index=True, width="stretch",
             column_config={m: st.column_config.NumberColumn(labels[m], format="%.4g")
                            for m in METRIC_LABELS if m in table})
if derived["failed"]:
    st.caption(derived["failed"])
if ui.held_out_caption(prepared):
    st.caption(f"n: {ui.held_out_caption(prepared)}")

with st.expander("Downloads", icon=":material/download:"):
    # every payload is a callable: it is only built when the user clicks (nothing is serialised per rerun)
    name = export.sweep_dataset(frame) or ui.current_dataset_name()  # the data the shown sweep ran on
    uploaded = export.shown_sweep_is_upload(name, cfg.dataset)  # its seeds are never written to a file
    d1, d2 = st.columns(2)
    with d1:
        ours, peer_rows = peers.split_rows(frame)  # the peers' rows draw their own randomness: a file of their own
        export.csv_button(lambda: results_csv(ours, upload=uploaded), label="Sweep results (CSV)",
                          name_parts=("sweep", name),
                          key="explore_dl_csv",
                          help="One row per release. The metric columns (and n, the rows that reached the "
                               "mechanisms) are computed on the true data: an evaluation, not a private release "
                               "(under add/remove the exact n is itself private). svm_majority_baseline is the test "
                               "accuracy of always predicting the training majority class on the same split: the "
                               "floor for svm_accuracy. runtime_s is left empty (wall time is not reproducible): the "
                               "file is the one `dpcore run` writes from the workspace, byte for byte.")
        if len(peer_rows):
            export.csv_button(lambda: results_csv(peer_rows, upload=uploaded), label="Peers' rows (CSV)",
                              name_parts=("sweep_peers", name), key="explore_dl_peers_csv",
                              help="OpenDP's and diffprivlib's releases: they draw from their own random sources, "
                                   "so unlike the sweep results no seed reproduces them (`dpcore run` leaves them "
                                   "out).")
    preprocessing = ui.preprocess_options()
    d2.download_button("Run configuration (YAML)",
                       lambda: config_yaml({**shown_config.as_dict(), **({"seed": None} if uploaded else {})},
                                           dataset=name, preprocessing={
                                               **preprocessing, **({"random_state": None} if uploaded else {})}),
                       file_name=export_filename("sweep", name, ext="yaml"), mime="application/x-yaml",
                       on_click="ignore", key="explore_dl_yaml")
    ws_text = workspace.download_bytes().decode("utf-8")  # built in this run: a callable runs outside the session
    d2.download_button("Workspace for dpcore run (YAML)", ws_text, file_name="dpcore-workspace.yaml",
                       mime="application/x-yaml", on_click="ignore", key="explore_dl_workspace",
                       help="Settings and public schemas, never data: `dpcore run dpcore-workspace.yaml "
                            "[--data UPLOADED.csv --seed N]` reproduces this view (CSV and charts).")
    upload_name = ss.get("dp_upload_name") if cfg.dataset == ui.UPLOAD_ID else None
    caption = export.sweep_caption(shown_config, frame, dataset_id=cfg.dataset, band=band_kind)
    png_ok = ui.png_export_available()
    for metric, fig in figs.items():
        export.figure_buttons(fig, caption=caption, label=titles[metric], key=f"explore_dl_{metric}", png_ok=png_ok,
                              name_parts=("explore", name, export.METRIC_SLUGS.get(metric, metric)))
        explore_view.code_buttons(metric, label=titles[metric], workspace_text=ws_text, data_name=upload_name,
                                  seed=shown_config.seed if upload_name is None else None,  # never an upload's
                                  key=f"explore_dl_{metric}",
                                  name_parts=("explore", name, export.METRIC_SLUGS.get(metric, metric)))
    st.caption("Figures carry a caption inside the image (data, k, δ, neighbours, trials, what the band means).")

# ------------------------------------------------------------------ uploads: what do public bounds cost?
whatif.render(shown_config)
planner.render(shown_config, prepared, cfg.dataset)  # "What ε do I need?" (inverse planner)
