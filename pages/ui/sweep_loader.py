"""Explore's bridge to the command line: load a sweep CSV written by ``dpcore sweep`` and draw the same charts, bands
and tables as a sweep run on the page (a sweep of a file too large for the dashboard, streamed or run on a cluster).

:func:`load_sweep_csv` validates the file (a CSV that is not a sweep gets an error naming what is missing);
:func:`render` is the one call Explore makes: an uploader in an expander, and, while a valid file is loaded, its
charts and tables (it returns True, and Explore shows nothing else).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS
from dpcore.evaluation.metrics import METRIC_LABELS, METRIC_NAMES
from dpcore.evaluation.reporting import band_table, reference_levels, results_table
from dpcore.evaluation.sweep import COLUMNS, STATUSES
from dpcore.exceptions import DataError
from dpcore.vocabulary import Band, ReleaseStatus
from pages.ui import state
from pages.ui.charts import METRIC_TITLES, METRIC_UNITS, chart_slots, for_screen, release_warning_note

KEY = "explore_sweep_csv"
#: Columns read as numbers (the metrics, the cell's settings and its runtime).
NUMERIC = ("epsilon", "delta", "k", "n", "d", "trial", "seed", *METRIC_NAMES, "runtime_s")


class SweepCsvError(DataError):
    """The file is not a sweep CSV written by ``dpcore sweep``; the message says why."""


def load_sweep_csv(raw: bytes) -> pd.DataFrame:
    """The sweep in ``raw`` (CSV bytes) as a DataFrame, checked column by column; :class:`SweepCsvError` otherwise."""
    try:
        frame = pd.read_csv(io.BytesIO(raw), keep_default_na=True)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise SweepCsvError(f"the file could not be read as CSV ({exc}); upload the CSV that `dpcore sweep --out` "
                            "wrote.") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        shown = ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
        raise SweepCsvError(f"this is not a sweep CSV: the column(s) {shown} are missing. A sweep CSV is what "
                            "`dpcore sweep --out FILE` or Explore's 'Sweep results (CSV)' download writes, with "
                            f"columns {', '.join(COLUMNS[:6])}, … and one row per release.")
    if frame.empty:
        raise SweepCsvError("the sweep CSV has a header but no rows (no release ran).")
    for col in NUMERIC:
        values = pd.to_numeric(frame[col], errors="coerce")
        bad = values.isna() & frame[col].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 2
            raise SweepCsvError(f"column {col!r} must hold numbers; line {row} has {frame[col].iloc[row - 2]!r}.")
        frame[col] = values
    status = frame["status"].astype(str)
    odd = sorted(set(status) - set(STATUSES))
    if odd:
        raise SweepCsvError(f"column 'status' holds {', '.join(map(repr, odd[:3]))}; a sweep's statuses are "
                            f"{', '.join(STATUSES)}.")
    known = set(dpcore.mechanism_ids())
    unknown = sorted(set(frame["mechanism"].astype(str)) - known)
    if unknown:
        raise SweepCsvError(f"unknown mechanism id(s) {', '.join(map(repr, unknown[:5]))}: the sweep was written by "
                            "another version of dpcore, or the file was edited.")
    if not (frame["epsilon"] > 0).all():
        raise SweepCsvError("column 'epsilon' must be positive in every row.")
    frame["mechanism"] = frame["mechanism"].astype(str)
    frame["status"] = status
    if "message" in frame:
        frame["message"] = ["" if pd.isna(m) else str(m) for m in frame["message"]]
    _privacy_columns(frame)
    return frame


def _privacy_columns(frame: pd.DataFrame) -> None:
    """Read :data:`dpcore.evaluation.sweep.PRIVACY_COLUMNS` as bool and text (in place); a file written before they
    existed
    keeps none (its privacy is then unknown, and :func:`show` says so)."""
    if "end_to_end_private" in frame:
        text = frame["end_to_end_private"].astype(str).str.strip().str.lower()
        odd = sorted(set(text) - {"true", "false"})
        if odd:
            raise SweepCsvError(f"column 'end_to_end_private' must be True or False in every row; found "
                                f"{', '.join(map(repr, odd[:3]))}.")
        frame["end_to_end_private"] = text == "true"
    if "non_private_steps" in frame:
        frame["non_private_steps"] = ["" if pd.isna(m) else str(m) for m in frame["non_private_steps"]]


def privacy_status(frame: pd.DataFrame, references: Sequence[str] = ()) -> tuple[bool | None, list[str]]:
    """(whether every non-reference row is end-to-end private — None when the file does not say, the names of
    the non-private steps of those rows)."""
    rows = frame[~frame["mechanism"].isin(list(references))]
    if "end_to_end_private" not in rows or rows.empty:
        return None, []
    steps = rows.get("non_private_steps", pd.Series(dtype=str))
    names = list(dict.fromkeys(part for s in steps for part in str(s).split("; ") if part))
    return bool(rows["end_to_end_private"].all()), names


def _privacy_banner(frame: pd.DataFrame, refs: Sequence[str]) -> str:
    """Show whether the file's releases are end-to-end private; returns the suffix the chart titles carry."""
    private, steps = privacy_status(frame, refs)
    if private is None:
        st.warning("This file has no `end_to_end_private` column (written by an older `dpcore sweep`): whether its "
                   "releases are end-to-end private is unknown. Re-run the sweep to find out.",
                   icon=":material/help:")
        return " — privacy unknown"
    if private:
        return ""
    bad = frame[~frame["mechanism"].isin(list(refs))]
    count = int((~bad["end_to_end_private"]).sum())
    st.warning(f"**{count:,} of {len(bad):,} releases in this file are NOT end-to-end private.** Non-private steps: "
               f"{'; '.join(steps) or 'not named in the file'}. Their curves show what a private pipeline could "
               "not publish.", icon=":material/warning:")
    return " — NOT end-to-end private"


def render() -> bool:
    """Explore's uploader for a sweep CSV; True while a valid one is shown (Explore then shows nothing else)."""
    ss = st.session_state
    with st.expander("Load a sweep CSV written by `dpcore sweep`", icon=":material/upload_file:",
                     expanded=ss.get(KEY) is not None):
        upload = st.file_uploader("Sweep CSV", type=["csv"], key=KEY,
                                  help="e.g. from `dpcore sweep --csv big.csv --stream --schema S --out sweep.csv`: "
                                       "the same charts, bands and tables as a sweep run here. Remove the file to "
                                       "return to the live sweep.")
    if upload is None:
        return False
    try:
        frame = _cached(upload.file_id if hasattr(upload, "file_id") else upload.name, upload.getvalue())
    except SweepCsvError as exc:
        st.error(f"**{upload.name}**: {exc}", icon=":material/error:")
        return False
    show(frame, upload.name)
    return True


def _cached(file_id: str, raw: bytes) -> pd.DataFrame:
    """The loaded sweep of the file ``file_id`` (read and checked once per file, in this session only)."""
    return state.memo("sweep_csv", file_id, lambda: load_sweep_csv(raw))


def show(frame: pd.DataFrame, name: str) -> None:
    """The charts (mean and band over trials per mechanism vs ε), guarantees and results table of a sweep."""
    from pages import ui

    datasets = ", ".join(sorted(frame["dataset"].astype(str).unique()))
    st.success(f"Showing **{name}**: {len(frame):,} releases written by `dpcore sweep` (data: {datasets}). "
               "Remove the file above to return to the live sweep.", icon=":material/table_view:")
    notes = sorted({m.split("; ")[-1] for m in frame.get("message", pd.Series(dtype=str)) if "reservoir" in m})
    for note in notes:
        st.caption(f":material/info: {note}")
    ks = sorted(int(k) for k in frame["k"].dropna().unique())
    if len(ks) > 1:
        k = st.selectbox("k (components)", ks, key="explore_sweep_csv_k")
        frame = frame[frame["k"] == k]
    refs = [m for m in getattr(ui, "REFERENCE_IDS", ("pca", "random")) if (frame["mechanism"] == m).any()]
    suffix = _privacy_banner(frame, refs)
    main = frame[~frame["mechanism"].isin(refs)]
    levels = reference_levels(frame, refs) if refs else {}
    band_choice = st.radio("Band over trials", [b.label for b in Band], key="explore_sweep_csv_band", horizontal=True)
    bands = band_table(main, x="epsilon", band=Band.from_label(band_choice))
    metrics = [m for m in ("captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy")
               if m != "svm_accuracy" or frame["svm_accuracy"].notna().any()]
    majority = ui.majority_baseline(frame) if "svm_majority_baseline" in frame else None
    slots = chart_slots(len(metrics))  # two per row, or one per row in presentation mode
    for i, metric in enumerate(metrics):
        fig = ui.metric_figure(
            bands, metric, title=METRIC_TITLES[metric] + suffix, x_title="ε (privacy loss, log scale)",
            y_title=METRIC_UNITS.get(metric, METRIC_LABELS[metric]),
            references={m: v for m, v in levels.get(metric, {}).items()
                        if not (metric == "frobenius_error" and m == "random")},
            baselines={ui.MAJORITY_LABEL: majority} if metric == "svm_accuracy" and majority is not None else None,
            note=None if (bands["metric"] == metric).any() else "no mechanism in this file reports this metric",
            releases=main)
        with slots[i]:
            st.plotly_chart(for_screen(fig), theme="streamlit", key=f"explore_csv_{metric}", width="stretch")

    st.subheader("Guarantees in this file")
    lines = []
    for mid, guarantee in frame[["mechanism", "guarantee"]].drop_duplicates().itertuples(index=False):
        mech = dpcore.get_mechanism(mid)
        kind = "dashed reference line" if mid in refs else GUARANTEE_LABELS.get(guarantee, guarantee)
        lines.append(f"- **{mech.name}** {ui.guarantee_badge(mech)} — {kind}")
    st.markdown("\n".join(lines))

    st.subheader("Results")
    release_warning_note(main)
    table = results_table(frame)
    table.insert(0, "name", [ui.mechanism_label(m) for m in table.pop("mechanism")])
    table["guarantee"] = [GUARANTEE_LABELS.get(g, g) for g in table["guarantee"]]
    table = table.drop(columns=["neighbouring", "d"], errors="ignore")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={m: st.column_config.NumberColumn(METRIC_LABELS[m], format="%.4g")
                                for m in METRIC_LABELS if m in table})
    failed = int((frame["status"] != ReleaseStatus.OK).sum())
    if failed:
        st.caption(f"{failed} of {len(frame)} releases did not produce a subspace (see the status column); they "
                   "are left out of the curves.")
