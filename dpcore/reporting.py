"""Figure-independent summaries of sweep results (used by the dashboard and usable from notebooks).

* :func:`band_table` — mean and a band (±1 sd or min–max over trials) per mechanism × x × metric, long format.
* :func:`reference_levels` — the mean of each metric for reference mechanisms (non-private PCA, random subspace).
* :func:`results_table` — one row per mechanism × ε × δ × k × n with status counts and mean metrics.
* :func:`config_yaml` — a run configuration (plus metadata) as YAML text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import yaml

from .exceptions import InvalidParameterError
from .metrics import METRIC_NAMES

BANDS = ("sd", "minmax")


def band_table(frame: pd.DataFrame, *, x: str = "epsilon", band: str = "sd",
               metrics: Sequence[str] = METRIC_NAMES, by: Sequence[str] = ("mechanism",)) -> pd.DataFrame:
    """Long table (``*by``, x, metric, mean, lo, hi, count) over the status-'ok' rows of a sweep.

    ``band="sd"`` gives mean ± one standard deviation (0 with a single trial); ``"minmax"`` the range over trials.
    Metrics with no finite value in a group are dropped (e.g. Frobenius error of subspace-only mechanisms).
    """
    if band not in BANDS:
        raise InvalidParameterError(f"band must be one of {BANDS}, got {band!r}.")
    ok = frame[frame["status"] == "ok"]
    cols = [m for m in metrics if m in ok.columns]
    out = []
    keys = [*by, x]
    for metric in cols:
        sub = ok[[*keys, metric]].dropna(subset=[metric])
        if sub.empty:
            continue
        g = sub.groupby(keys, sort=True)[metric]
        agg = g.agg(["mean", "std", "min", "max", "count"]).reset_index()
        if band == "sd":
            sd = agg["std"].fillna(0.0)
            agg["lo"], agg["hi"] = agg["mean"] - sd, agg["mean"] + sd
        else:
            agg["lo"], agg["hi"] = agg["min"], agg["max"]
        agg["metric"] = metric
        out.append(agg[[*keys, "metric", "mean", "lo", "hi", "count"]])
    if not out:
        return pd.DataFrame(columns=[*keys, "metric", "mean", "lo", "hi", "count"])
    return pd.concat(out, ignore_index=True)


def reference_levels(frame: pd.DataFrame, mechanisms: Iterable[str],
                     metrics: Sequence[str] = METRIC_NAMES) -> dict[str, dict[str, float]]:
    """``{metric: {mechanism: mean over ok rows}}`` for ε-independent reference mechanisms."""
    ok = frame[(frame["status"] == "ok") & frame["mechanism"].isin(list(mechanisms))]
    levels: dict[str, dict[str, float]] = {}
    for metric in metrics:
        if metric not in ok:
            continue
        means = ok.groupby("mechanism")[metric].mean().dropna()
        levels[metric] = {str(m): float(v) for m, v in means.items()}
    return levels


def results_table(frame: pd.DataFrame, metrics: Sequence[str] = METRIC_NAMES) -> pd.DataFrame:
    """Per mechanism × ε × δ × k × n: cells run, status counts, mean metrics and mean runtime.

    Timed-out, ⊥ and failed cells are counted (not dropped), and their first message is kept.
    """
    keys = ["mechanism", "guarantee", "neighbouring", "epsilon", "delta", "k", "n"]
    keys = [k for k in keys if k in frame.columns]
    rows = []
    for values, grp in frame.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, values if isinstance(values, tuple) else (values,)))
        counts = grp["status"].value_counts()
        row["trials"] = len(grp)
        row["status"] = ", ".join(f"{s} {int(counts[s])}" for s in ("ok", "bottom", "timeout", "error")
                                  if s in counts)
        ok = grp[grp["status"] == "ok"]
        for m in metrics:
            if m in grp:
                vals = ok[m].to_numpy(dtype=float)
                vals = vals[np.isfinite(vals)]
                row[m] = float(vals.mean()) if vals.size else np.nan
        row["runtime_s"] = float(grp["runtime_s"].mean()) if grp["runtime_s"].notna().any() else np.nan
        msgs = [m for m in grp.get("message", pd.Series(dtype=str)).fillna("") if m]
        row["message"] = msgs[0] if msgs else ""
        rows.append(row)
    return pd.DataFrame(rows)


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def config_yaml(config: dict, **extra) -> str:
    """YAML text of a run configuration (``SweepConfig.as_dict()``) plus extra sections (dataset, preprocessing)."""
    doc = {**{k: _plain(v) for k, v in extra.items()}, "sweep": _plain(dict(config))}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


__all__ = ["BANDS", "band_table", "config_yaml", "explained_variance", "k_for_fraction", "label_balance",
           "reference_levels", "results_table"]


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
