"""Inspect's "Private pictures" expander: budgets, the total before Release, then the private scree beside the true
one (labelled) and the private score histogram as a heatmap, with an HTML download carrying the privacy caption.
The maths is in :mod:`dpcore.explain.pictures`; this module only lays it out."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.explain import pictures as pic
from pages.ui import odometer
from pages.ui.charts import handle_errors, show_ledger

_GROUPS_HELP = ("Public label values, comma-separated (as in the schema), to count apart; every other label is one "
                "more group. Never read off the data.")


def _settings(mech, release, data) -> pic.PictureSettings:
    """The picture's public settings from the widgets (neighbouring relation: the release's)."""
    c1, c2, c3, c4 = st.columns(4)
    eps = c1.number_input("Histogram ε", min_value=0.01, max_value=20.0, value=0.5, step=0.1, key="insp_pic_eps")
    noise = c2.radio("Noise", list(pic.NOISES), horizontal=True, key="insp_pic_noise")
    delta = 0.0
    if noise == "gaussian":
        delta = c2.number_input("Histogram δ", min_value=1e-12, max_value=0.1, value=1e-6, format="%.1e",
                                key="insp_pic_delta")
    bins = c3.slider("Bins per axis (public)", 4, 60, 20, key="insp_pic_bins")
    m = c4.number_input("Eigenvalues shown", min_value=1, max_value=max(1, data.d), value=min(10, data.d),
                        key="insp_pic_m")
    eps_scree = 0.0
    if pic.scree_is_free(mech.output):
        st.caption("Scree: the eigenvalues of the released covariance Ĉ — post-processing of the release, free.")
    else:
        eps_scree = st.number_input(
            "Scree ε (this mechanism releases only a subspace: its eigenvalues cost budget; 0 = no scree)",
            min_value=0.0, max_value=20.0, value=0.2, step=0.1, key="insp_pic_eps_scree")
    groups = None
    if data.y is not None and st.checkbox("Count per label group", key="insp_pic_by_label"):
        text = st.text_input("Label values to count apart", key="insp_pic_groups", help=_GROUPS_HELP)
        groups = tuple(g.strip() for g in text.split(",") if g.strip()) or None
    return pic.PictureSettings(eps, noise=noise, delta_histogram=delta, bins=int(bins), epsilon_scree=eps_scree,
                               n_eigenvalues=int(m), groups=groups, neighbouring=release.neighbouring)


def _release_key(release, settings: pic.PictureSettings, seed: int) -> tuple:
    """What identifies a picture: the release (its public settings and released subspace), the picture settings."""
    return (release.mechanism, release.epsilon, release.delta, release.k, release.neighbouring,
            np.asarray(release.subspace, dtype=float).tobytes(), repr(settings), seed)


def _show(pics: pic.PrivatePictures, data, settings: pic.PictureSettings) -> None:
    group = None
    if len(pics.histogram.groups) > 1:
        names = ["all groups (summed)", *pics.histogram.groups]
        chosen = st.selectbox("Histogram of", names, key="insp_pic_group_shown")
        group = None if chosen == names[0] else names.index(chosen) - 1
    true = data.eigenvalues[:settings.n_eigenvalues]
    st.plotly_chart(pic.picture_figure(pics, true_eigenvalues=true, group=group), theme="streamlit",
                    key="insp_pic_figure")
    st.caption(f"Left: the private scree beside the **{pic.TRUE_LABEL}** scree (dotted; the true one is NOT "
               "private and is not in the download). Right: noisy counts of the rows' first two scores on the "
               "released subspace, on the public frame [−B, B]²; the true rows are not drawn.")
    if pics.scree is not None:
        st.caption(f"Scree: {pics.scree.note}.")
    download = pic.picture_html(pic.picture_figure(pics, group=group), pics.caption)
    st.download_button("Download the private picture (HTML, with its privacy caption)", download,
                       file_name=f"private_picture_{pics.mechanism}.html", mime="text/html", on_click="ignore",
                       key="insp_pic_download")


def pictures_expander(mech, release, data, seed: int) -> None:
    """The "Private pictures" expander for a release that is not ⊥ (``seed``: the release's own seed)."""
    with st.expander("Private pictures — a scree and a score plot you may publish", icon=":material/image:"):
        if release.subspace is None or release.k < 2:
            st.info("The score plot needs k ≥ 2 released directions; raise k to draw private pictures.")
            return
        with handle_errors():
            settings = _settings(mech, release, data)
            budget = pic.compose_budget(release.full_ledger, mech.output, settings)
            st.markdown(f"**Budget of release + pictures, before you release them:** {budget.text()}.")
            show_ledger(pic.plan_ledger(mech.output, settings))
            key = _release_key(release, settings, seed)
            if st.button("Release the pictures", key="insp_pic_release", type="primary"):
                st.session_state["insp_pic_result"] = (key, pic.release_pictures(release, data, settings, mech.output,
                                                                                random_state=seed))
                odometer.count_ledger(pic.plan_ledger(mech.output, settings), release.neighbouring,
                                      f"{mech.id}: private pictures", key)  # on an upload: the pictures' steps
            stored = st.session_state.get("insp_pic_result")
            if stored is None or stored[0] != key:
                st.caption("Nothing released yet for these settings: press **Release the pictures** to spend the "
                           "budget above.")
                return
            _show(stored[1], data, settings)
