"""Explore's "Include peers" option: OpenDP's and diffprivlib's PCA as labelled rows beside ours (:mod:`dpcore.peers`).

Layout only: the peers' sweep is an ordinary :class:`~dpcore.evaluation.sweep.SweepConfig` of their ids (run on the
shared pool with the same time cap, same rows, same ε grid), merged into the shown frame; the guarantee lines and
the law verdicts come from :mod:`dpcore.peers` (stored verdicts, public facts about the library versions).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.evaluation.sweep import SweepConfig
from dpcore.exceptions import DPCoreError
from dpcore.peers import PEERS, is_peer, peer_candidates, peer_info, peers_for_sweep
from dpcore.peers.law import verdict_line
from dpcore.vocabulary import ReleaseStatus
from pages.ui.state import get, put

#: The toggle's widget key (a page's own widget: ``<owner>_<name>``).
TOGGLE_KEY = "explore_peers"
#: Trials per ε for the peers (their fits run up to the time cap each; the table says how many ran).
PEER_TRIALS = 2
#: The guarantee column's text for a peer's rows (the vocabulary's "published proof is wrong" is not their case).
PEER_GUARANTEE = "claims ε-DP; its sampler fails our law test: NOT private"


def toggle() -> None:
    """The sidebar switch, shown only where a peers' Python exists (``make peers``)."""
    if not peer_candidates():
        return
    st.toggle("Include peers (OpenDP, diffprivlib)", key=TOGGLE_KEY, value=False,
              help="OpenDP 0.16's and diffprivlib 0.6.6's DP PCA on the same rows at the same ε (replace-one), "
                   f"{PEER_TRIALS} trials per ε, each fit capped by the time cap. Both claim ε-DP, but their Bingham "
                   "samplers fail our sampler law test: their rows are labelled NOT private.")


def config(main: SweepConfig) -> SweepConfig | None:
    """The peers' sweep beside ``main`` (same ε grid, δ, k, seed, relation and time cap; at most
    :data:`PEER_TRIALS` trials), or None (switched off, or refused with a note)."""
    if not st.session_state.get(TOGGLE_KEY):
        return None
    try:
        ids = peers_for_sweep(main.neighbouring)
    except DPCoreError as exc:
        st.warning(f"Peers not run: {exc}", icon=":material/group_off:")
        return None
    trials = min(int(main.trials), PEER_TRIALS)
    st.caption(f":material/group: Peers: {len(ids) * len(main.epsilons) * trials} more releases ({len(ids)} libraries "
               f"× {len(main.epsilons)} ε values × {trials} trials), each in the peers' own Python and capped at "
               f"{main.time_cap:g} s like ours; a capped fit is marked ✕ on the charts.")
    return SweepConfig(mechanisms=ids, epsilons=list(main.epsilons), deltas=main.deltas, ks=main.ks, trials=trials,
                       seed=main.seed, neighbouring=main.neighbouring, time_cap=main.time_cap, allow_invalid=True)


def merged(frame: pd.DataFrame, peer_frame: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with the peers' rows appended (the same object across reruns while neither changes)."""
    if peer_frame is None or peer_frame.empty:
        return frame
    cached = get("explore_peers_merged")
    if cached is not None and cached[0] is frame and cached[1] is peer_frame:
        return cached[2]
    out = pd.concat([frame, peer_frame], ignore_index=True)
    out.attrs = dict(frame.attrs)
    put("explore_peers_merged", (frame, peer_frame, out))
    return out


def split_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(our rows, the peers' rows) of a sweep frame."""
    mask = frame["mechanism"].map(is_peer).astype(bool)
    return frame[~mask], frame[mask]


def relabel(table: pd.DataFrame, ids) -> None:
    """The results table's guarantee text for the peers' rows (in place)."""
    if "guarantee" in table:
        table["guarantee"] = [PEER_GUARANTEE if is_peer(m) else g for m, g in zip(ids, table["guarantee"])]


def _timing(rows: pd.DataFrame) -> str:
    """How a peer's runs ended, every run counted: how many of all finished (up to which ε, how long they took), were
    capped at the time cap, gave no output (⊥) or failed with an error."""
    status = rows["status"].astype(str)
    total = len(rows)
    ok = rows[status == ReleaseStatus.OK]
    capped = rows[status == ReleaseStatus.TIMEOUT]
    if ok.empty:
        parts = [f"none of the {total} fit{'s' if total != 1 else ''} finished"]
    else:
        parts = [f"{len(ok)} of {total} fit{'s' if total != 1 else ''} finished at ε ≤ {ok['epsilon'].max():g} "
                 f"(median {ok['runtime_s'].median():.1f} s, its Python's start-up included)"]
    if not capped.empty:
        parts.append(f"{len(capped)} capped at the time cap (ε ≥ {capped['epsilon'].min():g})")
    for value, words in ((ReleaseStatus.BOTTOM, "gave no output (⊥)"),
                         (ReleaseStatus.ERROR, "failed with an error (the message column says why)")):
        count = int((status == value).sum())
        if count:
            parts.append(f"{count} {words}")
    other = total - len(ok) - len(capped) - int(status.isin([ReleaseStatus.BOTTOM, ReleaseStatus.ERROR]).sum())
    if other:
        parts.append(f"{other} with another status (see the table)")
    return "; ".join(parts)


def guarantee_lines(frame: pd.DataFrame) -> list[str]:
    """Markdown lines for "Guarantees in this run": each peer, its claim, and its run times."""
    lines = []
    for _key, info in PEERS.items():
        rows = frame[frame["mechanism"] == info.id]
        if rows.empty:
            continue
        lines.append(f"- **{info.name}** :red-badge[{PEER_GUARANTEE}] — {info.claim}. Runs: {_timing(rows)}.")
    return lines


def verdicts(frame: pd.DataFrame) -> None:
    """The law verdict of each peer in the frame, beside its rows."""
    shown = [key for key, info in PEERS.items() if (frame["mechanism"] == info.id).any()]
    if not shown:
        return
    text = "\n".join(f"- **{peer_info(key).name}** — {verdict_line(key)}" for key in shown)
    st.error("**Peers: they draw a different law than their privacy proof assumes.** Both accept a Bingham "
             "proposal with exp(−uᵀAu)/(M·(uᵀΩu)^(d/2)) where Kent et al.'s ratio has (uᵀΩu)^(+d/2), so their "
             "vectors are more concentrated than the exponential mechanism's: better-looking utility that no "
             "privacy proof covers, and acceptance rates that collapse as ε·n grows (hence the capped fits).\n"
             + text, icon=":material/gpp_bad:")
