"""Shared UI helpers of the DP-PCA Explorer pages (session state, URL sync, data access, badges, charts).

Every page calls :func:`init_state` first (``app.py`` does it once per run). Session-state keys are namespaced
``dp_…``; uploaded data lives only in ``st.session_state`` (never on disk, never in a cross-session cache).
Pages stay thin: data work goes through :mod:`dpcore`, and this module only turns it into widgets and charts.
"""

from __future__ import annotations

import hashlib
import math
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.exceptions import DPCoreError, PrivacyLeakWarning
from dpcore.privacy import GUARANTEE_LABELS, GUARANTEES, NEIGHBOURING_LABELS, LedgerEntry
from dpcore.vocabulary import Centering, FeatureScaling, MissingPolicy, values

UPLOAD_ID = "__upload__"
BANNER = "These charts use the true data and are an evaluation sandbox, not a private release."

#: Round ε values offered by the range slider (log-spaced).
EPS_GRID: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
DELTA_CHOICES: tuple[float, ...] = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10)
#: Minimum seconds between two progress-bar updates of a running sweep.
PROGRESS_INTERVAL = 0.2
#: Mechanisms drawn as dashed reference lines instead of ε-curves (when registered).
REFERENCE_IDS: tuple[str, ...] = ("pca", "random")
#: Preferred default selection (filtered by what is registered; fast on every built-in dataset).
DEFAULT_MECHANISMS: tuple[str, ...] = ("analyze_gauss", "mod_sulq", "laplace")
#: Mechanism groups shown on the Explore page (the "none" guarantee is drawn as reference lines).
MECH_GROUPS: tuple[str, ...] = tuple(g for g in GUARANTEES if g != "none")

GUARANTEE_COLORS = {"pure": "green", "approx": "blue", "heuristic-mcmc": "orange",
                    "claimed-invalid": "red", "none": "gray"}
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
            "#bcbd22", "#7f7f7f", "#393b79", "#ad494a", "#637939", "#8ca252", "#d6616b", "#7b4173",
            "#3182bd", "#e6550d", "#31a354", "#756bb1")

DEFAULTS: dict[str, Any] = {
    "dp_dataset": "wine",
    "dp_label": "(none)",
    "dp_categorical": "onehot",
    "dp_missing": "drop",
    "dp_scaling": "schema",
    "dp_norm_auto": True,
    "dp_norm_bound": 1.0,
    "dp_norm_from_data": False,  # True when B was taken from the clipping advisor (read off the data)
    "dp_norm_mode": "clip",
    "dp_csv_delimiter": "auto",
    "dp_csv_decimal": "auto",
    "dp_csv_encoding": "auto",
    "dp_centering": "none",
    "dp_centering_eps": 0.1,
    "dp_k": 2,
    "dp_eps_range": (0.1, 10.0),
    "dp_delta": 1e-5,
    "dp_trials": 5,
    "dp_seed": 0,
    "dp_time_cap": 20.0,
    "dp_neighbouring": "replace",
    "dp_band": "±1 sd",
    "dp_autorun": True,
    "dp_ss_eps": 1.0,
}

# query-parameter name -> session key
_QP = {"data": "dp_dataset", "k": "dp_k", "eps": "dp_eps_range", "delta": "dp_delta", "mech": None,
       "B": "dp_norm_bound", "center": "dp_centering", "trials": "dp_trials", "seed": "dp_seed",
       "cap": "dp_time_cap", "nb": "dp_neighbouring", "scale": "dp_scaling", "sseps": "dp_ss_eps"}


# ------------------------------------------------------------------------------------------------
# session state and URL
def _mech_key(group: str) -> str:
    return f"dp_mech_{group}"


def selectable_mechanisms(group: str | None = None) -> list:
    """Registry mechanisms offered in the pickers (reference mechanisms excluded), registry order."""
    out = [m for m in dpcore.list_mechanisms() if m.guarantee != "none" and m.id not in REFERENCE_IDS]
    return [m for m in out if group is None or m.guarantee == group]


def reference_mechanisms() -> list:
    """Mechanisms drawn as dashed reference lines (non-private PCA, random subspace)."""
    ids = set(dpcore.mechanism_ids())
    return [dpcore.get_mechanism(m) for m in REFERENCE_IDS if m in ids]


def _nearest(value: float, choices: Sequence[float]) -> float:
    return min(choices, key=lambda c: abs(math.log(c) - math.log(value)))


def _apply_query_params() -> list[str]:
    """Copy recognised ``st.query_params`` into session state; returns messages for ignored values."""
    qp = st.query_params
    ss = st.session_state
    bad: list[str] = []

    def num(name: str, cast, lo: float | None = None, hi: float | None = None):
        try:
            v = cast(qp[name])
        except (TypeError, ValueError):
            bad.append(name)
            return None
        if not math.isfinite(float(v)) or (lo is not None and v < lo) or (hi is not None and v > hi):
            bad.append(name)
            return None
        return v

    if "data" in qp:
        ids = [d.id for d in _datasets()]
        if qp["data"] in ids:
            ss.dp_dataset = qp["data"]
        else:
            bad.append("data")
    for name, key, cast, lo, hi in (("k", "dp_k", int, 1, 10_000), ("trials", "dp_trials", int, 1, 200),
                                    ("seed", "dp_seed", int, 0, 2**31), ("cap", "dp_time_cap", float, 0.5, 600.0)):
        if name in qp and (v := num(name, cast, lo, hi)) is not None:
            ss[key] = v
    if "B" in qp:
        if qp["B"] == "auto":
            ss.dp_norm_auto = True
        elif (v := num("B", float, 1e-6, 1e9)) is not None:
            ss.dp_norm_auto, ss.dp_norm_bound = False, float(v)
            ss.dp_norm_from_data = qp.get("Bsrc") == "data"
    if "delta" in qp and (v := num("delta", float, 1e-300, 0.5)) is not None:
        ss.dp_delta = _nearest(v, DELTA_CHOICES)
    if "sseps" in qp and (v := num("sseps", float, 1e-3, 1e3)) is not None:
        ss.dp_ss_eps = _nearest(v, EPS_GRID)
    if "eps" in qp:
        try:
            lo, hi = (float(x) for x in qp["eps"].replace("~", ",").split(","))
            lo, hi = sorted((_nearest(lo, EPS_GRID), _nearest(hi, EPS_GRID)))
            ss.dp_eps_range = (lo, hi)
        except (ValueError, TypeError):
            bad.append("eps")
    for name, key, choices in (("center", "dp_centering", values(Centering)),
                               ("nb", "dp_neighbouring", tuple(NEIGHBOURING_LABELS)),
                               ("scale", "dp_scaling", values(FeatureScaling))):
        if name in qp:
            if qp[name] in choices:
                ss[key] = qp[name]
            else:
                bad.append(name)
    if "mech" in qp:
        wanted = [m for m in qp["mech"].split(",") if m]
        known = {m.id: m for m in selectable_mechanisms()}
        bad.extend(f"mech={m}" for m in wanted if m not in known)
        for g in MECH_GROUPS:
            ss[_mech_key(g)] = [m for m in wanted if m in known and known[m].guarantee == g]
    return bad


def _under_apptest() -> bool:
    """True inside ``streamlit.testing.v1.AppTest`` (its runtime is a mock)."""
    try:
        from streamlit.runtime import Runtime

        return "Mock" in type(Runtime.instance()).__name__
    except Exception:  # pragma: no cover - no runtime at all
        return True


def _leave_legacy_pages_mode() -> None:
    """Make sure ``app.py``'s ``st.navigation`` is in charge.

    Streamlit decides once per process whether the app uses the legacy ``pages/`` directory: when the very first
    request of a fresh server opens a page URL (e.g. ``/data``), it runs ``pages/data.py`` directly in legacy mode
    and ``st.navigation`` (which switches the mode off) is never reached. Switch it off and rerun through ``app.py``.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - internal API moved
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        # AppTest resets the flag before every run and runs page scripts directly; a rerun there would swallow
        # button clicks, and every page calls init_state itself, so only the real server reruns.
        if not _under_apptest():
            st.rerun()


def init_state() -> None:
    """Set defaults, keep ``dp_*`` values alive across pages, read ``st.query_params`` once per session, and
    write the settings back to the URL. Idempotent: ``app.py`` and every page call it (AppTest re-runs a page
    script without ``app.py`` because the folder is named ``pages/``)."""
    ss = st.session_state
    _leave_legacy_pages_mode()
    # Streamlit drops a widget's state when a page without that widget runs; re-assigning keeps it.
    for key in list(ss.keys()):
        if isinstance(key, str) and key.startswith("dp_"):
            ss[key] = ss[key]
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = value
    for g in MECH_GROUPS:
        if _mech_key(g) not in ss:
            ss[_mech_key(g)] = [m.id for m in selectable_mechanisms(g) if m.id in DEFAULT_MECHANISMS]
    if not ss.get("_dp_qp_loaded"):
        ss["_dp_qp_loaded"] = True
        bad = _apply_query_params()
        if bad:
            ss["_dp_qp_bad"] = bad
    if ss.get("_dp_qp_bad"):
        st.toast(f"Ignored invalid link parameter(s): {', '.join(ss.pop('_dp_qp_bad'))}")
    sync_query_params()


def bind(key: str) -> dict:
    """Widget kwargs keeping ``key`` in plain session state (for widgets whose value must not be re-assigned,
    e.g. a range select_slider, which Streamlit 1.67 corrupts when its state is re-assigned)."""
    wkey = f"w_{key}"
    # pass the value as the widget default (not through session state): AppTest mis-serialises a range
    # select_slider whose initial value was set through st.session_state
    return {"key": wkey, "value": st.session_state[key], "on_change": _copy_widget, "args": (key,)}


def _copy_widget(key: str) -> None:
    st.session_state[key] = st.session_state[f"w_{key}"]


def set_state(key: str, value: Any) -> None:
    """Set a setting programmatically (also resets a :func:`bind` widget showing it)."""
    st.session_state[key] = value
    st.session_state.pop(f"w_{key}", None)


def selected_mechanisms() -> list[str]:
    """Chosen mechanism ids in registry order."""
    chosen = {m for g in MECH_GROUPS for m in st.session_state.get(_mech_key(g), [])}
    return [m.id for m in selectable_mechanisms() if m.id in chosen]


def epsilons() -> list[float]:
    """The grid ε values inside the chosen range."""
    lo, hi = st.session_state.dp_eps_range
    return [e for e in EPS_GRID if lo - 1e-12 <= e <= hi + 1e-12]


def _state_params() -> dict[str, str]:
    ss = st.session_state
    lo, hi = ss.dp_eps_range
    out = {
        "data": str(ss.dp_dataset), "k": str(ss.dp_k), "eps": f"{lo:g}~{hi:g}", "delta": f"{ss.dp_delta:g}",
        "mech": ",".join(selected_mechanisms()), "B": "auto" if ss.dp_norm_auto else f"{ss.dp_norm_bound:g}",
        **({"Bsrc": "data"} if not ss.dp_norm_auto and ss.get("dp_norm_from_data", False) else {}),
        "center": ss.dp_centering, "trials": str(ss.dp_trials), "seed": str(ss.dp_seed),
        "cap": f"{ss.dp_time_cap:g}", "nb": ss.dp_neighbouring, "scale": ss.dp_scaling, "sseps": f"{ss.dp_ss_eps:g}",
    }
    if ss.dp_dataset == UPLOAD_ID:
        out.pop("data")  # an uploaded file cannot be shared through a link
    return out


def sync_query_params() -> None:
    """Write the current settings to the URL (only when they changed), so a link reproduces them."""
    want = _state_params()
    have = {k: st.query_params[k] for k in st.query_params}
    if have != want:
        st.query_params.from_dict(want)


# ------------------------------------------------------------------------------------------------
# errors, banners, badges
@contextmanager
def handle_errors() -> Iterator[None]:
    """Turn a :class:`dpcore.DPCoreError` raised inside the block into ``st.error`` (no traceback)."""
    try:
        yield
    except DPCoreError as exc:
        st.error(str(exc))


def evaluation_banner() -> None:
    st.info(BANNER, icon=":material/science:")


def guarantee_badge(mech_or_guarantee: Any) -> str:
    """Markdown badge for a guarantee (pass a mechanism, its id, or a guarantee name)."""
    g = mech_or_guarantee
    if not isinstance(g, str):
        g = g.guarantee
    elif g not in GUARANTEE_LABELS:
        g = dpcore.get_mechanism(g).guarantee
    label = GUARANTEE_LABELS[g].replace("[", "(").replace("]", ")")
    return f":{GUARANTEE_COLORS.get(g, 'gray')}-badge[{label}]"


def mechanism_colors() -> dict[str, str]:
    """One colour per mechanism id, stable across pages (registry order)."""
    return {mid: _PALETTE[i % len(_PALETTE)] for i, mid in enumerate(dpcore.mechanism_ids())}


def mechanism_label(mid: str) -> str:
    return dpcore.get_mechanism(mid).name


def show_ledger(entries: Iterable[LedgerEntry]) -> None:
    """The privacy ledger as a list; non-private steps in red."""
    entries = list(entries)
    if not entries:
        st.markdown("*No data-dependent preprocessing steps.*")
        return
    lines = []
    for e in entries:
        cost = []
        if e.epsilon:
            cost.append(f"ε = {e.epsilon:g}")
        if e.delta:
            cost.append(f"δ = {e.delta:g}")
        note = f" — {e.note}" if e.note else ""
        if e.private:
            cost_txt = ", ".join(cost) or "no privacy cost"
            lines.append(f"- :green[:material/check_circle:] **{e.step}** ({cost_txt}){note}")
        else:
            lines.append(f"- :red[:material/warning: **{e.step}** — NOT private{note}]")
    st.markdown("\n".join(lines))
    if not dpcore.privacy.ledger_is_private(entries):
        st.markdown(":red[A non-private step voids the end-to-end guarantee of every release on this data.]")


# ------------------------------------------------------------------------------------------------
# data
@st.cache_data(show_spinner=False)
def _datasets() -> list:
    return list(dpcore.data.list_datasets())


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load_builtin(dataset_id: str):
    # public built-in data only (uploaded data never goes through a cross-session cache)
    return dpcore.data.load_dataset(dataset_id)


def dataset_options() -> list[str]:
    """Built-in dataset ids, plus the uploaded file when one is in this session."""
    ids = [d.id for d in _datasets()]
    if st.session_state.get("dp_upload") is not None:
        ids.append(UPLOAD_ID)
    return ids


def dataset_label(dataset_id: str, upload_name: str | None = None) -> str:
    """Display name of a dataset id; ``upload_name`` names the uploaded file (default: the session's)."""
    if dataset_id == UPLOAD_ID:
        return f"Uploaded: {upload_name or st.session_state.get('dp_upload_name') or 'CSV'}"
    for d in _datasets():
        if d.id == dataset_id:
            return f"{d.name} (n = {d.n:,}, d = {d.d})"
    return dataset_id


# --- uploads: bytes → RawTable (read once) → roles + schema (editable) → Dataset -----------------------------
#: File-format overrides offered on the Data page ("auto" = detect).
DELIMITER_CHOICES: dict[str, str | None] = {"auto": None, ",": ",", ";": ";", "tab": "\t", "|": "|"}
DECIMAL_CHOICES: dict[str, str | None] = {"auto": None, ".": ".", ",": ","}
ENCODING_CHOICES: tuple[str, ...] = ("auto", "utf-8", "utf-16", "cp1252", "latin-1")


def _read_options() -> dict:
    ss = st.session_state
    enc = ss.get("dp_csv_encoding", "auto")
    return {"delimiter": DELIMITER_CHOICES.get(ss.get("dp_csv_delimiter", "auto")),
            "decimal": DECIMAL_CHOICES.get(ss.get("dp_csv_decimal", "auto")),
            "encoding": None if enc == "auto" else enc}


def parse_upload(data: bytes, name: str = "upload.csv", label: str | None = None,
                 categorical: str = "onehot", missing: str = "drop", schema=None):
    """Parse uploaded bytes with :func:`dpcore.data.load_csv` (raises DataError with a readable message)."""
    label = None if label in (None, "", "(none)") else label
    return dpcore.data.load_csv(data, label=label, categorical=categorical, missing=missing, name=name,
                                schema=schema)


def upload_table():
    """The session's upload as a :class:`dpcore.data.RawTable` (read once per file and format options); raises
    DataError for an unreadable file. Kept in session state only."""
    ss = st.session_state
    raw = ss.get("dp_upload")
    if raw is None:
        return None
    opts = _read_options()
    key = (hashlib.blake2b(raw, digest_size=16).hexdigest(), tuple(sorted(opts.items())))
    cached = ss.get("_dp_upload_table")
    if cached is None or cached[0] != key:
        name = ss.get("dp_upload_name") or "upload.csv"
        stem = name.rsplit(".", 1)[0] if "." in name else name
        cached = (key, dpcore.data.read_table(raw, name=stem, **opts))
        ss["_dp_upload_table"] = cached
        ss.pop("_dp_schema", None)  # a new table starts from a new draft
    return cached[1]


def label_value() -> str | None:
    """The label picked for the upload, or None."""
    label = st.session_state.get("dp_label", "(none)")
    return None if label in (None, "", "(none)") else label


def upload_schema(table):
    """The session's schema for ``table``: the data-derived draft until the user edits it (NOT public until every
    included column is confirmed). Follows the label picker."""
    ss = st.session_state
    stored = ss.get("_dp_schema")
    label = label_value()
    if label is not None and label not in table.columns:
        label = None
    if stored is None or stored[0] != ss["_dp_upload_table"][0]:
        report = dpcore.data.infer_roles(table, label=label)
        schema = dpcore.data.draft_schema(table, report)
        set_upload_schema(schema, report)
        return schema
    schema = stored[1]
    if schema.label != label:
        schema = schema.with_label(label, table)
        set_upload_schema(schema)
    return schema


def set_upload_schema(schema, report=None) -> None:
    """Store the session's schema (and the inference report shown next to it); the editor starts afresh."""
    ss = st.session_state
    if report is None:
        report = ss.get("_dp_roles")
    ss["_dp_schema"] = (ss["_dp_upload_table"][0], schema)
    ss["_dp_roles"] = report
    ss["_dp_schema_version"] = ss.get("_dp_schema_version", 0) + 1


def csv_columns(data: bytes) -> list[str]:
    """Column names of an uploaded table (for the label picker); [] when unreadable."""
    try:
        table = upload_table() if data is st.session_state.get("dp_upload") else dpcore.data.read_table(data)
    except DPCoreError:
        return []
    return [] if table is None else table.columns


def store_upload(data: bytes, name: str) -> None:
    """Keep uploaded bytes in this session only and select them as the current dataset."""
    ss = st.session_state
    if ss.get("dp_upload") != data:
        ss.dp_upload, ss.dp_upload_name = data, name
        ss.dp_label = "(none)"
        ss.pop("_dp_schema", None)
        # Start from the schema pipeline: a draft schema whose data-derived values are flagged NOT public until
        # the user confirms or replaces them, with a per-record fill for missing values.
        ss.dp_scaling = FeatureScaling.SCHEMA.value
        ss.dp_missing = MissingPolicy.ZERO.value
        ss["_dp_upload_note"] = True
    ss.dp_dataset = UPLOAD_ID


def on_upload() -> None:
    """``on_change`` callback of the file uploader (runs before the widgets of the next run exist)."""
    upload = st.session_state.get("upload_widget")
    if upload is not None:
        store_upload(upload.getvalue(), upload.name)


def _load_upload():
    """The upload as a Dataset under the session's settings: the schema pipeline (declared bounds and category
    lists) with feature scaling 'schema', otherwise the inferred roles with data-derived vocabularies."""
    ss = st.session_state
    table = upload_table()
    schema = upload_schema(table)
    use_schema = ss.dp_scaling == FeatureScaling.SCHEMA
    key = (ss["_dp_upload_table"][0], use_schema, schema, ss.dp_categorical, ss.dp_missing)
    cached = ss.get("_dp_upload_parsed")
    if cached is None or cached[0] != key:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpcore.data.WideDataWarning)  # shown as a note on the Data page
            if use_schema:
                ds = dpcore.data.load_table(table, schema=schema, categorical=ss.dp_categorical,
                                            missing=ss.dp_missing)
            else:
                ds = dpcore.data.load_table(table, label=schema.label, roles=schema.roles,
                                            categorical=ss.dp_categorical, missing=ss.dp_missing)
        cached = (key, ds)
        ss["_dp_upload_parsed"] = cached
    return cached[1]


def current_dataset():
    """The chosen :class:`dpcore.data.Dataset`, or None after showing ``st.error``."""
    ss = st.session_state
    try:
        if ss.dp_dataset == UPLOAD_ID:
            if ss.get("dp_upload") is None:
                ss.dp_dataset = DEFAULTS["dp_dataset"]
                return _load_builtin(ss.dp_dataset)
            return _load_upload()
        return _load_builtin(ss.dp_dataset)
    except DPCoreError as exc:
        st.error(str(exc))
        return None


def preprocess_options() -> dict:
    """Keyword arguments of ``dpcore.data.preprocess`` for the session's settings.

    The session seed goes to both preprocessing and the mechanism: each derives its own child stream from it
    (``dpcore.seeding``), so the DP mean's noise and the mechanism's noise are independent.
    """
    ss = st.session_state
    opts = {"feature_scaling": ss.dp_scaling, "norm_bound": None if ss.dp_norm_auto else float(ss.dp_norm_bound),
            "norm_mode": ss.dp_norm_mode, "centering": ss.dp_centering, "random_state": int(ss.dp_seed)}
    if not ss.dp_norm_auto and ss.get("dp_norm_from_data", False):
        opts["norm_bound_from_data"] = True  # recorded as a non-private step in the ledger
    if ss.dp_centering == "dp":
        opts["centering_epsilon"] = float(ss.dp_centering_eps)
        opts["neighbouring"] = ss.dp_neighbouring
    return opts


def dataset_key() -> tuple:
    ss = st.session_state
    if ss.dp_dataset == UPLOAD_ID:
        cached = ss.get("_dp_upload_parsed")
        return ("upload", None if cached is None else cached[0])
    return ("builtin", ss.dp_dataset)


def current_prepared():
    """The preprocessed data for the session's settings, or None after showing ``st.error``."""
    ds = current_dataset()
    if ds is None:
        return None
    ss = st.session_state
    opts = preprocess_options()
    key = (dataset_key(), tuple(sorted(opts.items())))
    cached = ss.get("_dp_prepared")
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with warnings.catch_warnings():
            # Non-private steps are shown in red in the ledger on every page; the warning would only go to the log.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            prepared = dpcore.data.preprocess(ds, **opts)
    except DPCoreError as exc:
        st.error(str(exc))
        return None
    ss["_dp_prepared"] = (key, prepared)
    return prepared


def current_dataset_name() -> str:
    ss = st.session_state
    return ss.get("dp_upload_name") or "upload" if ss.dp_dataset == UPLOAD_ID else ss.dp_dataset


# ------------------------------------------------------------------------------------------------
# sweeps (cached per session: data fingerprint + configuration)
def run_sweep_cached(prepared, config, *, label: str = "sweep") -> pd.DataFrame | None:
    """Run (or reuse) a sweep with a progress bar; None after showing an error."""
    from dpcore.sweep import count_cells, run_sweep

    ss = st.session_state
    key = (prepared.fingerprint, repr(sorted(config.as_dict().items())))
    store = ss.setdefault("_dp_sweeps", {})
    if key in store:
        return store[key]
    try:
        total = count_cells(config.validated(prepared))
    except DPCoreError as exc:
        st.error(str(exc))
        return None
    bar = st.progress(0.0, text=f"{label}: 0 / {total} releases")
    last = [time.monotonic()]

    def progress(done: int, total: int, text: str) -> None:
        # a few updates per second are enough to watch; one message per release would slow fast sweeps down
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL and done < total:
            last[0] = now
            bar.progress(done / max(total, 1), text=f"{label}: {done} / {total} — {text}")

    try:
        frame = run_sweep(prepared, config, progress=progress, dataset_name=current_dataset_name())
    except DPCoreError as exc:
        bar.empty()
        st.error(str(exc))
        return None
    bar.empty()
    if len(store) >= 6:  # bound the per-session memory
        store.pop(next(iter(store)))
    store[key] = frame
    return frame


# ------------------------------------------------------------------------------------------------
# charts
def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def figure_from_dict(spec: dict) -> go.Figure:
    """A ``go.Figure`` around an already well-formed figure dict, skipping Plotly's slow property validation.

    The dicts built here use only valid Plotly properties (the AppTests and the e2e screenshots check the
    result), so validating them again on every rerun would only cost time (~5 ms per chart).
    """
    try:
        return go.Figure(spec, _validate=False)
    except TypeError:  # pragma: no cover - a Plotly version without the private flag: validate
        return go.Figure(spec)


def _hline(value: float, color: str, dash: str, label: str) -> tuple[dict, dict]:
    """A full-width horizontal line with a label above its left end (what ``add_hline`` produces)."""
    shape = {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
             "line": {"color": color, "dash": dash}, "opacity": 0.9}
    note = {"text": label, "showarrow": False, "xref": "x domain", "x": 0, "xanchor": "left",
            "yref": "y", "y": value, "yanchor": "bottom", "font": {"size": 11}}
    return shape, note


def metric_figure(band: pd.DataFrame, metric: str, *, x: str = "epsilon", title: str = "", x_title: str = "",
                  y_title: str = "", references: dict[str, float] | None = None, log_x: bool = True,
                  guides: Sequence[dict] = (), dashed: Sequence[str] = (), note: str | None = None) -> go.Figure:
    """Mean line + shaded band per mechanism (``band`` from :func:`dpcore.reporting.band_table`).

    ``references`` draws labelled horizontal lines (``{mechanism id: level}``), ``guides`` extra dotted traces
    (dicts with x, y, name[, color]), ``dashed`` mechanisms as dashed curves without a band, and ``note`` a
    centred message (e.g. when no mechanism reports the metric). The figure is assembled as one plain dict
    and wrapped without re-validation: building it through ``add_*``/``update_*`` calls cost ~30 ms per chart.
    """
    colors = mechanism_colors()
    ids = set(dpcore.mechanism_ids())
    traces: list[dict] = []
    rows = (band["metric"] == metric).to_numpy(dtype=bool) if "metric" in band else np.ones(len(band), dtype=bool)
    mechs = band["mechanism"].to_numpy(dtype=object)[rows]
    cols = {c: band[c].to_numpy(dtype=float)[rows] for c in (x, "mean", "lo", "hi")}
    for mid in dict.fromkeys(mechs):  # mechanisms in order of appearance
        idx = np.flatnonzero(mechs == mid)
        idx = idx[np.argsort(cols[x][idx], kind="stable")]
        color = colors.get(mid, "#555555")
        name = mechanism_label(mid)
        xs, mean = cols[x][idx], cols["mean"][idx]
        if mid in dashed:  # reference curve: no band
            traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines", "name": f"{name} (reference)",
                           "line": {"color": color, "dash": "dash", "width": 1.5}})
            continue
        traces.append({"type": "scatter", "x": xs.tolist() + xs[::-1].tolist(),
                       "y": cols["hi"][idx].tolist() + cols["lo"][idx][::-1].tolist(),
                       "fill": "toself", "fillcolor": _rgba(color, 0.15), "line": {"width": 0}, "mode": "lines",
                       "hoverinfo": "skip", "showlegend": False, "legendgroup": mid, "name": f"{name} band"})
        traces.append({"type": "scatter", "x": xs, "y": mean, "mode": "lines+markers", "name": name,
                       "legendgroup": mid, "line": {"color": color, "width": 2}, "marker": {"size": 6},
                       "hovertemplate": f"{name}<br>{x} = %{{x:g}}<br>value = %{{y:.4g}}<extra></extra>"})
    shapes, notes = [], []
    for ref_id, value in (references or {}).items():
        if value is None or not math.isfinite(value):
            continue
        shape, label = _hline(float(value), colors.get(ref_id, "#888888"), "dash" if ref_id == "pca" else "dot",
                              mechanism_label(ref_id) if ref_id in ids else ref_id)
        shapes.append(shape)
        notes.append(label)
    for guide in guides:
        traces.append({"type": "scatter", "x": guide["x"], "y": guide["y"], "mode": "lines", "name": guide["name"],
                       "line": {"dash": "dot", "width": 1.5, "color": guide.get("color", "#888888")}})
    if note:
        notes.append({"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5})
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    xs_all = sorted({float(v) for v in cols[x]})
    if log_x and 0 < len(xs_all) <= 13:
        xaxis.update(tickvals=xs_all, ticktext=[f"{v:,.4g}" for v in xs_all])
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}}, "height": 340,
        "margin": {"l": 60, "r": 10, "t": 45, "b": 50},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 11}},
        "xaxis": xaxis, "yaxis": {"title": {"text": y_title}},
    }
    if shapes:
        layout["shapes"] = shapes
    if notes:
        layout["annotations"] = notes
    return figure_from_dict({"data": traces, "layout": layout})


def png_export_available() -> bool:
    """True when kaleido and a Chromium binary are present (static PNG export)."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return bool(os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
                or shutil.which("google-chrome"))


def figure_png(fig: go.Figure, width: int = 900, height: int = 500) -> bytes:
    """Render a figure to PNG with kaleido (a few seconds: call lazily, e.g. from a download callable)."""
    out = go.Figure(fig)
    out.update_layout(template="plotly_white")
    return out.to_image(format="png", width=width, height=height, scale=2)
