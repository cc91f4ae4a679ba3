"""Explore's dataset presets: a dataset chosen on Explore that comes with the run settings its point needs.

The "loose public bounds" preset (``wine_loose``, issue 34) shows AdaptiveCov ahead of Analyze Gauss at equal
privacy, but only at settings where that is measurable: at Explore's defaults (k = 5, 5 trials) the per-release
spread hides it. Choosing the preset on Explore sets k, the trials and the two mechanisms (each visible in the
sidebar), and :func:`note` says above the charts what was set, what was measured there, and where AdaptiveCov is
not ahead. Nothing here runs a release.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

import dpcore
from pages.ui import state


@dataclass(frozen=True)
class Preset:
    """Run settings a dataset sets when chosen on Explore, and what they show (measured, public data)."""

    k: int
    trials: int
    mechanisms: tuple[str, ...]
    why: str


PRESETS: dict[str, Preset] = {
    "wine_loose": Preset(
        k=2, trials=40, mechanisms=("analyze_gauss", "adaptive_cov"),
        why=("Measured at these settings (Explore's seed 0, δ = 1e-4, replace-one; mean ± s.e. of the captured "
             "variance over 40 releases; docs/benchmarks.md): AdaptiveCov is ahead of Analyze Gauss from ε = 0.5 "
             "on — 0.33 ± 0.05 vs 0.15 ± 0.02 at ε = 0.5, 0.37 vs 0.16 at ε = 1, 0.44 vs 0.18 at ε = 10 (3 to 5 "
             "s.e. apart; 2.4 to 5 with seeds 1 and 2); **at ε = 0.1 and 0.2 it is not ahead**: both sit at the "
             "random line (2/13 ≈ 0.15). Single releases vary a lot (the band is ±1 sd of one release, about 6× "
             "the mean's s.e.), so the bands overlap although the means differ. At k = 5 and 5 trials the "
             "difference is within the noise."),
    ),
}


def apply(dataset_id: str) -> None:
    """Set the preset's k, trials and mechanisms when ``dataset_id`` has one (safe in a widget callback)."""
    preset = PRESETS.get(dataset_id)
    if preset is None:
        return
    state.set_state("dp_k", preset.k)
    state.set_state("dp_trials", preset.trials)
    for mid in preset.mechanisms:
        key = state.mech_key(dpcore.get_mechanism(mid).guarantee)
        chosen = list(st.session_state.get(key) or [])
        if mid not in chosen:
            st.session_state[key] = [*chosen, mid]


def _name(mid: str) -> str:
    return dpcore.get_mechanism(mid).name.split(" (")[0]


def note(dataset_id: str, k: int, trials: int, mechanisms: tuple[str, ...] | list[str]) -> None:
    """Above Explore's charts on a preset dataset: the settings the preset sets, what they show, and (when the view
    runs other settings, e.g. after a link or a change in the sidebar) a button back to them."""
    preset = PRESETS.get(dataset_id)
    if preset is None:
        return
    names = " and ".join(_name(m) for m in preset.mechanisms)
    settings = f"**k = {preset.k}**, **{preset.trials} trials**, **{names}** selected"
    differs = k != preset.k or trials != preset.trials or not set(preset.mechanisms) <= set(mechanisms)
    if differs:
        absent = [_name(m) for m in preset.mechanisms if m not in mechanisms]
        missing = f" without {' and '.join(absent)}" if absent else ""
        head = (f"**Loose public bounds preset.** Its settings are {settings}; this view runs k = {k} with {trials} "
                f"trial{'s' if trials != 1 else ''}{missing}, where the difference can be lost in the noise.")
    else:
        head = (f"**Loose public bounds preset.** Choosing this dataset on Explore set {settings} (in the sidebar; "
                "change them freely).")
    st.info(f"{head} {preset.why}", icon=":material/tune:")
    if differs:
        st.button("Use the preset's settings", key="explore_preset_apply", on_click=apply, args=(dataset_id,),
                  icon=":material/tune:", help=f"Sets {settings.replace('**', '')}.")
