"""The first screen (issue 20): one sentence saying what the app is and where to start, beside a chart that needs
no computation before it paints.

The chart is Explore's first chart for the app's default run — the default dataset (Adult, public), mechanisms
and settings of :mod:`pages.ui.state` — stored as a table (:data:`STORED`, a few kB) and as a slide-sharp PNG drawn
from it (:data:`IMAGE`): a static image shows as soon as the page script reaches it, before the ~5 MB plotly.js
bundle has loaded and before any sweep has run. Rebuild both after a default changes with
``python -m pages.ui.first_screen`` (about 20 s; ``--png`` redraws the image from the stored table after a style
change). ``tests/pages/test_first_screen.py`` fails while the table's settings differ from the app's defaults or the
image was not drawn from the stored table (its PNG text chunk carries the table's SHA-256), and recomputes one point.

Only public built-in data is used, with the dashboard's fixed seed for built-in data: the table is an evaluation of
published data, like Explore's own charts, not a release.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

#: The stored table of the default run's captured-variance curves and reference levels.
STORED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "first_screen_default_run.csv"
IMAGE = STORED.with_suffix(".png")
#: The PNG text chunk that names the table the image was drawn from.
SOURCE_KEY = "source-sha256"
#: The image's width in CSS pixels, about the width it is shown at beside the sentence at 1280×800 (drawn at twice
#: this, so its text reads at the chart fonts' size).
IMAGE_WIDTH = 520
METRIC = "captured_variance_ratio"
#: Columns that record the settings the stored table was computed with (one value each).
SETTING_COLUMNS = ("dataset", "norm_bound", "delta", "k", "trials", "seed", "neighbouring", "band", "n")
#: The chart's height on the first screen (it sits beside the sentence, inside 800 px with the title above).
HEIGHT = 360
#: The first screen's sentence: what the app is and where to start.
INTRO = ("**DP-PCA Explorer** compares differentially private ways to compute PCA on real data: each curve shows "
         "how much of the data's structure a mechanism keeps as the privacy budget ε grows. **Start here:** the "
         "chart beside this is the default run on the Adult census data; change the mechanisms or ε in the sidebar "
         "and its four charts below follow (slower mechanisms wait for **Run sweep**). New to ε and δ? Read "
         "**Privacy basics**.")
#: The sentence without the stored chart (once the session has its own results, or on another dataset).
INTRO_SHORT = ("**DP-PCA Explorer** compares differentially private ways to compute PCA on real data: each curve shows "
               "how much of the data's structure a mechanism keeps as the privacy budget ε grows. **Start here:** "
               "change the mechanisms or ε in the sidebar and the four charts below follow (slower mechanisms wait "
               "for **Run sweep**). New to ε and δ? Read **Privacy basics**.")


@dataclass(frozen=True)
class DefaultRun:
    """The app's default Explore run, from the settings table (what the stored chart must match)."""

    dataset: str
    mechanisms: tuple[str, ...]
    references: tuple[str, ...]
    epsilons: tuple[float, ...]
    delta: float
    k: int
    trials: int
    seed: int
    neighbouring: str
    time_cap: float
    band: str
    preprocess: dict


def default_run() -> DefaultRun:
    """The default run as a session with no link and no changes would run it on Explore."""
    import dpcore
    from dpcore.vocabulary import Band
    from pages.ui import state

    d = state.DEFAULTS
    registered = set(dpcore.mechanism_ids())
    mechanisms = tuple(m for m in dpcore.mechanism_ids() if m in state.DEFAULT_MECHANISMS
                       and not dpcore.get_mechanism(m).invalid)
    lo, hi = d["dp_eps_range"]
    return DefaultRun(
        dataset=state.DEFAULT_DATASET, mechanisms=mechanisms,
        references=tuple(m for m in state.REFERENCE_IDS if m in registered),
        epsilons=tuple(e for e in state.EPS_GRID if lo - 1e-12 <= e <= hi + 1e-12),
        delta=state.dataset_default_delta(state.DEFAULT_DATASET), k=int(d["dp_k"]), trials=int(d["dp_trials"]),
        seed=int(d["dp_seed"]), neighbouring=d["dp_neighbouring"], time_cap=float(d["dp_time_cap"]),
        band=Band.from_label(d["dp_band"]),
        preprocess={"feature_scaling": d["dp_scaling"], "norm_bound": None, "norm_mode": d["dp_norm_mode"],
                    "centering": d["dp_centering"], "random_state": int(d["dp_seed"])})


def compute_table(run: DefaultRun | None = None, *, mechanisms: tuple[str, ...] | None = None,
                  epsilons: tuple[float, ...] | None = None) -> pd.DataFrame:
    """The default run's captured-variance bands (``kind`` "curve") and reference levels (``kind`` "reference"),
    with the settings in :data:`SETTING_COLUMNS`; ``mechanisms``/``epsilons`` restrict the curves (a test
    recomputes one point)."""
    import dpcore
    from dpcore.evaluation.reporting import band_table, reference_levels
    from dpcore.evaluation.sweep import SweepConfig, run_sweep

    run = run or default_run()
    prepared = dpcore.data.preprocess(dpcore.data.load_dataset(run.dataset), **run.preprocess)
    common = dict(deltas=(run.delta,), ks=(run.k,), trials=run.trials, seed=run.seed, neighbouring=run.neighbouring,
                  time_cap=run.time_cap)
    main = run_sweep(prepared, SweepConfig(mechanisms=mechanisms or run.mechanisms,
                                           epsilons=epsilons or run.epsilons, **common), dataset_name=run.dataset)
    band = band_table(main, x="epsilon", band=run.band)
    band = band[band["metric"] == METRIC].assign(kind="curve")
    parts = [band[["kind", "mechanism", "epsilon", "mean", "lo", "hi", "count"]]]
    if mechanisms is None and run.references:
        refs = run_sweep(prepared, SweepConfig(mechanisms=run.references, epsilons=(1.0,), **common),
                         dataset_name=run.dataset)
        levels = reference_levels(refs, run.references).get(METRIC, {})
        parts.append(pd.DataFrame([{"kind": "reference", "mechanism": m, "epsilon": np.nan, "mean": v, "lo": v,
                                    "hi": v, "count": run.trials} for m, v in levels.items()]))
    table = pd.concat(parts, ignore_index=True)
    n = int(pd.to_numeric(main["n"], errors="coerce").max())
    settings = {"dataset": run.dataset, "norm_bound": float(prepared.norm_bound), "delta": run.delta, "k": run.k,
                "trials": run.trials, "seed": run.seed, "neighbouring": run.neighbouring, "band": run.band, "n": n}
    return table.assign(**settings)


@st.cache_data(show_spinner=False)
def stored_table() -> pd.DataFrame | None:
    """The stored table (None when the file is missing: the first screen then shows the sentence only)."""
    if not STORED.is_file():
        return None
    return pd.read_csv(STORED)


def figure(table: pd.DataFrame) -> go.Figure:
    """The stored run's chart, drawn like Explore's (:func:`pages.ui.charts.metric_figure`), sized for the first
    screen."""
    from pages.ui.charts import METRIC_UNITS, metric_figure

    curves = table[table["kind"] == "curve"].assign(metric=METRIC)
    refs = table[table["kind"] == "reference"]
    row = table.iloc[0]
    fig = metric_figure(curves, METRIC, title=f"Captured variance · Adult, k = {int(row['k'])}",
                        x_title="ε (privacy loss, log scale)", y_title=METRIC_UNITS[METRIC],
                        references={str(m): float(v) for m, v in zip(refs["mechanism"], refs["mean"])})
    fig.layout.height = max(HEIGHT, fig.layout.height or 0)
    return fig


def caption(table: pd.DataFrame) -> str:
    """Where the chart's numbers come from, in the words of Explore's captions."""
    from dpcore.explain.display import format_delta
    from dpcore.vocabulary import Band
    from pages.ui import state

    row = table.iloc[0]
    info = next((d for d in state.dataset_infos() if d.id == str(row["dataset"])), None)
    band = f"{Band(row['band']).label} over trials"
    n_mech = int(row["n"])
    n_all = int(info.n) if info is not None else n_mech
    held = f" of the {n_all:,}" if n_all > n_mech else ""
    rest = f" ({n_all - n_mech:,} test the SVM)" if n_all > n_mech else ""
    return (f"The default run, stored (nothing is computed before this chart shows): n = {n_mech:,}{held} rows reach "
            f"the mechanisms{rest}; B = {float(row['norm_bound']):.3g} is the public norm bound (each row is at most "
            f"B long, so the noise is scaled to B); δ = {format_delta(float(row['delta']))}, {int(row['trials'])} "
            f"trials (band {band}), seed {int(row['seed'])}. The same run's four charts follow below.")


def render(show_chart: bool = True) -> None:
    """The sentence and, beside it, the stored image (the shorter sentence alone when the image is missing or
    ``show_chart`` is False: the session has its own results, or another dataset is chosen)."""
    table = stored_table() if show_chart else None
    if table is None or table.empty or not IMAGE.is_file():
        st.markdown(INTRO_SHORT)
        return
    left, right = st.columns([2, 3], vertical_alignment="center")
    left.markdown(INTRO)
    with right:
        st.image(str(IMAGE), width="stretch")
        st.caption(caption(table))


def source_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def with_text_chunk(png: bytes, key: str, value: str) -> bytes:
    """``png`` with a ``tEXt`` chunk ``key``/``value`` after its header chunk."""
    body = key.encode("latin-1") + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    end = 8 + 25  # signature, then IHDR (length, type, 13 bytes, CRC)
    return png[:end] + chunk + png[end:]


def text_chunks(png: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks of a PNG file."""
    out, pos = {}, 8
    while pos + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"tEXt":
            key, _, value = png[pos + 8:pos + 8 + length].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        pos += 12 + length
    return out


def image_png(table: pd.DataFrame, source: bytes) -> bytes:
    """The first-screen image (kaleido; white, the title inside) with the table's digest in a text chunk."""
    fig = figure(table)
    fig.update_layout(template="plotly_white", width=IMAGE_WIDTH, height=HEIGHT, font={"size": 12},
                      title={"x": 0.01, "xanchor": "left", "font": {"size": 14}}, margin={"l": 50, "t": 35})
    png = fig.to_image(format="png", width=IMAGE_WIDTH, height=HEIGHT, scale=2)
    return with_text_chunk(png, SOURCE_KEY, source_digest(source))


def main(argv: list[str]) -> None:
    """Recompute the stored table with the app's current defaults and draw its image (``--png``: only redraw the
    image from the stored table)."""
    if "--png" not in argv:
        table = compute_table()
        STORED.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(STORED, index=False, float_format="%.10g")
        print(f"wrote {STORED} ({len(table)} rows)")
    source = STORED.read_bytes()
    IMAGE.write_bytes(image_png(pd.read_csv(STORED), source))
    print(f"wrote {IMAGE}")


if __name__ == "__main__":
    main(sys.argv[1:])
