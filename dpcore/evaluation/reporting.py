"""Figure-independent summaries of sweep results (used by the dashboard and usable from notebooks).

* :func:`band_table` — mean and a band (±1 sd or min–max over trials) per mechanism × x × metric, long format.
* :func:`reference_levels` — the mean of each metric for reference mechanisms (non-private PCA, random subspace).
* :func:`results_table` — one row per mechanism × ε × δ × k × n with status counts and mean metrics.
* :func:`config_yaml` — a run configuration (plus metadata) as YAML text.

Legend labels, captions and file names of exported figures live in :mod:`dpcore.evaluation.captions` (re-exported
here).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import yaml

from ..exceptions import InvalidParameterError
from ..vocabulary import Band, ReleaseStatus
from ..vocabulary import values as vocabulary_values
from .captions import (  # noqa: F401  (re-exported: the old import path of the caption and legend helpers)
    GUARANTEE_SHORT,
    REFERENCE_SHORT,
    SHORT_NAMES,
    export_caption,
    export_filename,
    guarantee_short,
    legend_label,
    rows_text,
    short_name,
    text_width_px,
    wrap_caption,
)
from .metrics import METRIC_NAMES

BANDS = tuple(Band)


def _bare(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its ``attrs`` (same data, no copy).

    pandas deep-copies ``attrs`` (a sweep keeps its configuration there) into every intermediate result.
    """
    if not frame.attrs:
        return frame
    out = pd.DataFrame(frame, copy=False)
    out.attrs = {}
    return out


def _key_columns(frame: pd.DataFrame, keys: Sequence[str], index: pd.Index,
                 at: np.ndarray | None = None) -> dict[str, object]:
    """The key columns of a grouped result (``index``: its group keys; ``at``: which groups, default all), each with
    its column's dtype in ``frame``."""
    flat = index.to_frame(index=False)
    return {k: pd.array(flat[k].to_numpy() if at is None else flat[k].to_numpy()[at], dtype=frame[k].dtype)
            for k in keys}


def band_table(frame: pd.DataFrame, *, x: str = "epsilon", band: str = Band.SD,
               metrics: Sequence[str] = METRIC_NAMES, by: Sequence[str] = ("mechanism",)) -> pd.DataFrame:
    """Long table (``*by``, x, metric, mean, lo, hi, count) over the status-'ok' rows of a sweep.

    ``band="sd"`` gives mean ± one standard deviation (0 with a single trial); ``"minmax"`` the range over trials.
    Rows are ordered by metric, then by the sorted group keys (rows with a missing key are left out). Metrics with
    no value in a group are dropped (e.g. Frobenius error of subspace-only mechanisms). One pandas group-by of the
    rows gives every metric's count, mean and sd (or min and max).
    """
    if band not in BANDS:
        raise InvalidParameterError(f"band must be one of {vocabulary_values(Band)}, got {band!r}.")
    frame = _bare(frame)
    keys = [*by, x]
    out_cols = [*keys, "metric", "mean", "lo", "hi", "count"]
    cols = [m for m in metrics if m in frame.columns]
    use = (frame["status"] == ReleaseStatus.OK) & frame[keys].notna().all(axis=1)
    if not cols or not use.any():
        return pd.DataFrame(columns=out_cols)
    rows = frame.loc[use, [*keys, *cols]].astype(dict.fromkeys(cols, float))
    grouped = rows.groupby(keys, sort=True, observed=True)[cols]
    count, mean = grouped.count(), grouped.mean()
    if band == Band.SD:
        sd = grouped.std().fillna(0.0)
        lo, hi = mean - sd, mean + sd
    else:
        lo, hi = grouped.min(), grouped.max()
    metric_at, group_at = np.nonzero(count.to_numpy().T > 0)  # metric by metric, groups in sorted key order
    if not group_at.size:
        return pd.DataFrame(columns=out_cols)
    out = _key_columns(frame, keys, count.index, group_at)
    out["metric"] = [cols[i] for i in metric_at]
    for name, table in (("mean", mean), ("lo", lo), ("hi", hi)):
        out[name] = table.to_numpy(dtype=float).T[metric_at, group_at]
    out["count"] = count.to_numpy(dtype=np.int64).T[metric_at, group_at]
    return pd.DataFrame(out, columns=out_cols)


def reference_levels(frame: pd.DataFrame, mechanisms: Iterable[str],
                     metrics: Sequence[str] = METRIC_NAMES) -> dict[str, dict[str, float]]:
    """``{metric: {mechanism: mean over ok rows}}`` for ε-independent reference mechanisms (sorted by id)."""
    frame = _bare(frame)
    cols = [m for m in metrics if m in frame]
    use = (frame["status"] == ReleaseStatus.OK) & frame["mechanism"].isin(list(mechanisms))
    rows = frame.loc[use, ["mechanism", *cols]].astype(dict.fromkeys(cols, float))
    means = rows.groupby("mechanism", sort=True, observed=True)[cols].mean()
    return {metric: {str(name): float(v) for name, v in means[metric].items() if not np.isnan(v)} for metric in cols}


#: Release statuses counted by :func:`results_table`, in the order they are listed.
_STATUSES = vocabulary_values(ReleaseStatus)


def results_table(frame: pd.DataFrame, metrics: Sequence[str] = METRIC_NAMES) -> pd.DataFrame:
    """Per mechanism × ε × δ × k × n: cells run, status counts, mean metrics and mean runtime.

    Timed-out, ⊥ and failed cells are counted (not dropped), and their first message is kept. Groups appear in
    the order of their first row (a missing key is a value of its own). One pandas group-by.
    """
    frame = _bare(frame)
    keys = [k for k in ("mechanism", "guarantee", "neighbouring", "epsilon", "delta", "k", "n") if k in frame]
    if frame.empty:
        return pd.DataFrame()
    status = frame["status"]
    is_ok = status == ReleaseStatus.OK
    work = pd.DataFrame({s: (status == s).astype(np.int64) for s in _STATUSES}, index=frame.index)
    for m in metrics:
        if m in frame:
            values = frame[m].astype(float)
            work[f"metric:{m}"] = values.where(is_ok & np.isfinite(values))
    work["runtime_s"] = frame["runtime_s"].astype(float)
    if "message" in frame:
        messages = frame["message"].fillna("").astype(str)
        work["message"] = messages.where(messages != "").astype(object)
    grouped = work.join(frame[keys]).groupby(keys, sort=False, dropna=False, observed=True)
    sums = grouped[list(_STATUSES)].sum()
    out: dict[str, object] = _key_columns(frame, keys, sums.index)
    out["trials"] = grouped.size().to_numpy(dtype=np.int64)
    out["status"] = [", ".join(f"{s} {c}" for s, c in zip(_STATUSES, counts) if c)
                     for counts in sums.itertuples(index=False)]
    means = grouped[[c for c in work if c.startswith("metric:") or c == "runtime_s"]].mean()
    for m in metrics:
        if f"metric:{m}" in means:
            out[m] = means[f"metric:{m}"].to_numpy()
    out["runtime_s"] = means["runtime_s"].to_numpy()
    first_message = grouped["message"].first() if "message" in work else None
    out["message"] = ([""] * len(sums) if first_message is None
                      else first_message.fillna("").astype(str).to_numpy())
    return pd.DataFrame(out)


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, str):
        return str(value)  # a vocabulary member as its plain value (YAML cannot represent enums)
    return value


def config_yaml(config: dict, **extra) -> str:
    """YAML text of a run configuration (``SweepConfig.as_dict()``) plus extra sections (dataset, preprocessing)."""
    doc = {**{k: _plain(v) for k, v in extra.items()}, "sweep": _plain(dict(config))}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


__all__ = ["BANDS", "GUARANTEE_SHORT", "WARNING_KINDS", "band_table", "config_yaml", "explained_variance",
           "export_caption", "export_filename", "guarantee_short", "k_for_fraction", "label_balance", "legend_label",
           "reference_levels", "release_warning_kind", "release_warnings", "results_table", "rows_text",
           "run_guarantees", "short_name", "text_width_px", "warning_counts", "warning_text", "wrap_caption"]


# ------------------------------------------------------------------------------------------------
# releases with a warning status (drawn on the charts, named in the hover and above the tables)
#: How a chart names a release that produced no subspace, by its status.
WARNING_KINDS = {ReleaseStatus.BOTTOM: "⊥ (no output)", ReleaseStatus.TIMEOUT: "capped (time limit)",
                 ReleaseStatus.ERROR: "error"}
NOT_CONVERGED = "not converged"
#: How a metric's note in a release's message starts (:func:`dpcore.evaluation.metrics.svm_accuracy_or_reason`).
METRIC_NOTE_PREFIX = "SVM accuracy not available"


def release_warning_kind(status: str, message: str = "") -> str | None:
    """The warning a release carries (None for a plain "ok" release): its status when it produced no subspace
    (⊥, capped, error), else the first words of the message an "ok" release came with ("not converged" for an
    MCMC chain whose burn-in diagnostic failed)."""
    status = str(status)
    if status != ReleaseStatus.OK:
        return WARNING_KINDS.get(status, status)
    text = "" if message is None or (isinstance(message, float) and np.isnan(message)) else str(message).strip()
    # a metric's note (the SVM not available) is about the evaluation, not the release: no warning of its own
    text = "; ".join(p for p in text.split("; ") if p and not p.startswith(METRIC_NOTE_PREFIX))
    if not text:
        return None
    if NOT_CONVERGED in text.lower():
        return NOT_CONVERGED
    return text.split(" (")[0].split(";")[0].strip()[:60]


def _kinds(frame: pd.DataFrame) -> np.ndarray:
    status = frame["status"].astype(str).to_numpy(dtype=object)
    messages = frame["message"].to_numpy(dtype=object) if "message" in frame else np.full(len(frame), "")
    return np.array([release_warning_kind(s, m) for s, m in zip(status, messages)], dtype=object)


def warning_text(kinds: dict[str, int], releases: int) -> str:
    """``"not converged in 35 of 35 releases"`` (several kinds joined by "; ")."""
    word = "release" if releases == 1 else "releases"
    return "; ".join(f"{kind} in {count} of {releases} {word}" for kind, count in kinds.items() if count)


def release_warnings(frame: pd.DataFrame, *, x: str = "epsilon",
                     by: Sequence[str] = ("mechanism",)) -> pd.DataFrame:
    """Per ``by`` × ``x``: releases, those with a subspace (``ok``), those with a warning status (``warned``:
    not converged, ⊥, capped, error) and ``text`` (what went wrong, :func:`warning_text`). Groups without any
    warning are left out, so an empty table means every release is clean."""
    cols = [*by, x, "releases", "ok", "warned", "text"]
    if frame is None or frame.empty or "status" not in frame or any(k not in frame for k in (*by, x)):
        return pd.DataFrame(columns=cols)
    frame = _bare(frame)
    kinds = _kinds(frame)
    warned = np.array([k is not None for k in kinds])
    if not warned.any():
        return pd.DataFrame(columns=cols)
    rows = []
    keys = [*by, x]
    for key, idx in frame.groupby(keys, sort=True, dropna=True).indices.items():
        if not warned[idx].any():
            continue
        counts: dict[str, int] = {}
        for kind in kinds[idx]:
            if kind is not None:
                counts[kind] = counts.get(kind, 0) + 1
        key = key if isinstance(key, tuple) else (key,)
        ok = int((frame["status"].to_numpy()[idx] == ReleaseStatus.OK).sum())
        rows.append([*key, len(idx), ok, int(warned[idx].sum()), warning_text(counts, len(idx))])
    return pd.DataFrame(rows, columns=cols)


def warning_counts(frame: pd.DataFrame) -> dict[str, tuple[dict[str, int], int]]:
    """``{mechanism: ({warning kind: count}, releases)}`` for every mechanism with at least one warned release."""
    if frame is None or frame.empty or "status" not in frame or "mechanism" not in frame:
        return {}
    frame = _bare(frame)
    kinds = _kinds(frame)
    mechs = frame["mechanism"].astype(str).to_numpy(dtype=object)
    out: dict[str, tuple[dict[str, int], int]] = {}
    for mid in dict.fromkeys(mechs):
        mine = kinds[mechs == mid]
        counts: dict[str, int] = {}
        for kind in mine:
            if kind is not None:
                counts[kind] = counts.get(kind, 0) + 1
        if counts:
            out[mid] = (counts, int(mine.size))
    return out


def explained_variance(eigenvalues: Sequence[float]) -> pd.DataFrame:
    """Scree table: component (1-based), eigenvalue, fraction of the total and cumulative fraction."""
    w = np.clip(np.asarray(eigenvalues, dtype=float), 0.0, None)
    total = w.sum()
    frac = w / total if total > 0 else np.zeros_like(w)
    return pd.DataFrame({"component": np.arange(1, w.size + 1), "eigenvalue": w, "fraction": frac,
                         "cumulative": np.cumsum(frac)})


def k_for_fraction(eigenvalues: Sequence[float], fraction: float = 0.8) -> int:
    """Smallest k whose top-k eigenvalues hold at least ``fraction`` of the total (non-private diagnostic)."""
    if not 0 < fraction <= 1:
        raise InvalidParameterError(f"fraction must lie in (0, 1], got {fraction!r}.")
    cum = explained_variance(eigenvalues)["cumulative"].to_numpy()
    return int(min(np.searchsorted(cum, fraction - 1e-12) + 1, cum.size))


def label_balance(y) -> pd.DataFrame:
    """Counts and shares of each label value (empty frame when there are no labels)."""
    if y is None:
        return pd.DataFrame(columns=["label", "count", "share"])
    values, counts = np.unique(np.asarray(y).astype(str), return_counts=True)
    return pd.DataFrame({"label": values, "count": counts, "share": counts / counts.sum()})


def run_guarantees(frame: pd.DataFrame) -> dict[str, str]:
    """``{mechanism: guarantee}`` its releases in a sweep carried (the weakest one if they differ, e.g. PPCA
    exact at k = 1 and heuristic above)."""
    from ..core.privacy import GUARANTEES

    if frame is None or "guarantee" not in frame or "mechanism" not in frame:
        return {}
    rank = pd.Series(_bare(frame)["guarantee"].astype(str)).map({g: i for i, g in enumerate(GUARANTEES)})
    weakest = rank.fillna(-1).groupby(frame["mechanism"].astype(str).to_numpy(), sort=False).max()
    return {str(mid): GUARANTEES[int(r)] for mid, r in weakest.items() if r >= 0}
