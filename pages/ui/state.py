"""The dashboard's settings, with one owner: a declared table of settings, a typed snapshot and the URL codec.

* :data:`SETTINGS` declares every shared setting once — its session key (``dp_…``), default, and how it is written
  to and read from the URL (``?data=adult&k=5&eps=0.1~10…``). Defaults, link parsing and link writing all read it.
* :class:`Settings` is the typed, frozen snapshot pages compute with (``settings()``).
* :data:`SLOTS` declares every other session-state slot once (name, type, default, scope); its session key is
  ``_dp_<name>`` (:func:`slot_key`), read and written through :func:`get`/:func:`put`/:func:`drop`. :func:`memo` is
  the one helper for memoised values (a slot holds ``(key, value)``: what it was computed on, and the value);
  :func:`clear_scope` empties the slots of a scope (e.g. everything read off an upload when a new file arrives).
  Tests read slots through :func:`stored` (``stored("prepared", at.session_state)``), never by key.
* :func:`init_state` — called at the top of every page — sets defaults, keeps the settings alive across pages, reads
  the link once per session, draws the navigation when the page runs without ``app.py`` and writes the URL.
* Scopes: the data settings (:data:`DATA_SETTINGS`: scaling, norm bound, centring, label, …) belong to a dataset —
  :func:`select_dataset` keeps them per dataset and gives a dataset met for the first time its private defaults;
  the cross-page settings (:data:`CROSS_PAGE`: ε range, δ, k, seed) remember the page that last set them, and
  :func:`origin_note` shows that page (with a reset to the default) on the other pages.

Session keys — one scheme, declared here (``tests/pages/test_ui_state_keys.py`` checks every page against it):

* ``dp_<name>`` — a value kept across pages (:func:`keep_alive`), a widget may be bound to it: a setting
  (:data:`SETTINGS`), a mechanism picker (:func:`mech_key`), an Inspect mechanism option (:func:`option_key`), a
  page choice whose default the page computes (:data:`PAGE_CHOICES`), or the upload itself (:data:`UPLOAD_KEYS`);
* ``w_dp_<name>`` — the widget showing setting ``dp_<name>`` through :func:`bind` (:func:`bound_key`);
* ``<owner>_<name>`` — a widget of one page or one component, gone when its page is left (buttons, charts,
  downloads, page-local inputs): :func:`widget_key` with an owner from :data:`WIDGET_OWNERS`;
* ``_dp_<name>`` — not a widget: a declared slot (:data:`SLOTS`, :func:`slot_key`).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Hashable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

import dpcore
from dpcore.core.privacy import GUARANTEES, NEIGHBOURING_LABELS
from dpcore.core.seeding import fresh_seed  # the one fresh-seed rule (the sweep's too); re-exported here
from dpcore.data.datasets import Dataset
from dpcore.data.diagnostics import ClampReport
from dpcore.data.prepared import PreparedData
from dpcore.data.reading import RawTable
from dpcore.data.roles import LabelGuess, RoleReport
from dpcore.data.schema import Schema
from dpcore.explain.display import default_delta, delta_vs_n_warning, format_delta
from dpcore.vocabulary import (
    NO_LABEL,
    Band,
    CategoricalPolicy,
    Centering,
    FeatureScaling,
    Guarantee,
    MissingPolicy,
    Neighbouring,
    NormMode,
    values,
)
from pages.ui import nav as _nav

T = TypeVar("T")

UPLOAD_ID = "__upload__"
#: Round ε values offered by the range slider (log-spaced).
EPS_GRID: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
DELTA_CHOICES: tuple[float, ...] = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10)
#: Mechanisms drawn as dashed reference lines instead of ε-curves (when registered).
REFERENCE_IDS: tuple[str, ...] = ("pca", "random")
#: Preferred default selection (filtered by what is registered; fast on every built-in dataset).
DEFAULT_MECHANISMS: tuple[str, ...] = ("analyze_gauss", "mod_sulq", "laplace")
#: Mechanism groups shown on the Explore page (the "none" guarantee is drawn as reference lines).
MECH_GROUPS: tuple[str, ...] = tuple(g for g in GUARANTEES if g != Guarantee.NONE)
#: The data Explore opens on: 48,842 people, d = 108 with a public schema, so every step is private and the
#: trade-off is visible inside the default ε range — with the schema's bound B = √14 and δ = 1e-6 (3 trials, k = 5):
#: at ε = 0.1 MOD-SULQ and Laplace sit near the random-subspace line (0.09–0.14 vs 0.06) and Analyze Gauss captures
#: 94 % of the optimum; by ε = 10 they reach 90–98 % and Analyze Gauss 100 %.
DEFAULT_DATASET = "adult"


# ------------------------------------------------------------------------------------------------
# the settings table
@dataclass(frozen=True)
class Setting:
    """One shared setting: session key, default, and (optionally) its URL parameter and codec."""

    key: str
    default: Any
    param: str | None = None
    encode: Callable[[Any], str] = str
    decode: Callable[[str], Any] | None = None  # raises ValueError for a bad value


def _nearest(value: float, choices: Sequence[float]) -> float:
    return min(choices, key=lambda c: abs(math.log(c) - math.log(value)))


def _number(cast: Callable[[str], Any], lo: float, hi: float) -> Callable[[str], Any]:
    def decode(text: str) -> Any:
        v = cast(text)
        if not math.isfinite(float(v)) or not lo <= v <= hi:
            raise ValueError(text)
        return v
    return decode


def _choice(options: Callable[[], Sequence[str]]) -> Callable[[str], str]:
    def decode(text: str) -> str:
        if text not in options():
            raise ValueError(text)
        return text
    return decode


def _snap(choices: Sequence[float], lo: float, hi: float) -> Callable[[str], float]:
    return lambda text: _nearest(_number(float, lo, hi)(text), choices)


def _eps_range(text: str) -> tuple[float, float]:
    lo, hi = (float(x) for x in text.replace("~", ",").split(","))
    if not (lo > 0 and hi > 0):
        raise ValueError(text)
    a, b = sorted((_nearest(lo, EPS_GRID), _nearest(hi, EPS_GRID)))
    return (a, b)


@st.cache_data(show_spinner=False)
def dataset_infos() -> list:
    """Metadata of the built-in datasets (public)."""
    return list(dpcore.data.list_datasets())


def _dataset_ids() -> list[str]:
    return [d.id for d in dataset_infos()]


SETTINGS: tuple[Setting, ...] = (
    Setting("dp_dataset", DEFAULT_DATASET, "data", decode=_choice(_dataset_ids)),
    Setting("dp_label", NO_LABEL),
    Setting("dp_categorical", CategoricalPolicy.ONEHOT.value),
    Setting("dp_missing", MissingPolicy.DROP.value),
    Setting("dp_scaling", FeatureScaling.SCHEMA.value, "scale", decode=_choice(lambda: values(FeatureScaling))),
    Setting("dp_norm_auto", True),  # the URL's B parameter carries dp_norm_auto, dp_norm_bound, dp_norm_from_data
    Setting("dp_norm_bound", 1.0),
    Setting("dp_norm_from_data", False),  # True when B was taken from the clipping advisor (read off the data)
    Setting("dp_norm_mode", NormMode.CLIP.value),
    Setting("dp_csv_delimiter", "auto"),
    Setting("dp_csv_decimal", "auto"),
    Setting("dp_csv_thousands", "no separator"),  # never detected (R4-7): only a separator the user picks
    Setting("dp_csv_encoding", "auto"),
    Setting("dp_centering", Centering.NONE.value, "center", decode=_choice(lambda: values(Centering))),
    Setting("dp_centering_eps", 0.1),
    Setting("dp_k", 5, "k", decode=_number(int, 1, 10_000)),
    Setting("dp_eps_range", (0.1, 10.0), "eps", encode=lambda r: f"{r[0]:g}~{r[1]:g}", decode=_eps_range),
    # the default δ follows the dataset (:func:`default_of`); this value is for data of unknown size (an upload)
    Setting("dp_delta", 1e-6, "delta", encode=lambda v: f"{v:g}", decode=_snap(DELTA_CHOICES, 1e-300, 0.5)),
    Setting("dp_trials", 5, "trials", decode=_number(int, 1, 200)),
    Setting("dp_seed", 0, "seed", decode=_number(int, 0, 2**31)),
    Setting("dp_time_cap", 20.0, "cap", encode=lambda v: f"{v:g}", decode=_number(float, 0.5, 600.0)),
    Setting("dp_neighbouring", Neighbouring.REPLACE.value, "nb", decode=_choice(lambda: tuple(NEIGHBOURING_LABELS))),
    Setting("dp_band", Band.SD.label),
    Setting("dp_autorun", True),
    Setting("dp_presentation", False),  # presentation mode: one chart per row, larger text (pages.ui.charts)
    Setting("dp_ss_eps", 1.0, "sseps", encode=lambda v: f"{v:g}", decode=_snap(EPS_GRID, 1e-3, 1e3)),
    # page settings (one page's widgets; kept alive across pages like the others)
    Setting("dp_insp_invalid", False),
    Setting("dp_insp_eps", 1.0),
    Setting("dp_insp_points", 2000),
    Setting("dp_insp_color", True),
    # Sample size: enough trials for a mean ± sd band, enough log-spaced sizes for a curve (cheap for fast mechanisms)
    Setting("dp_ss_trials", 5),
    Setting("dp_ss_sizes", 8),
    # Sample size's own k: 1, where the theory's scaling guides hold inside Adult's rows at ε = 1 (at Explore's k = 5
    # every guide needs n ≥ 75,514, more rows than Adult has, so the page's lesson would show no guide)
    Setting("dp_ss_k", 1),
)
#: URL parameters left out of a link while an upload is the dataset: the dataset itself, its data settings and the
#: run seed (with the seed, anyone who sees a release of the upload could recompute its noise).
UPLOAD_PRIVATE_PARAMS = ("data", "B", "Bsrc", "center", "scale", "seed")
#: The link's ``data`` while an upload is the dataset: a new session (a reload) opened with it says that the upload is
#: gone and how to restore it (the file itself is never in a link).
UPLOAD_LINK = "upload"
#: Defaults by session key (pages/data.py reads the default dataset from here).
DEFAULTS: dict[str, Any] = {s.key: s.default for s in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """A typed snapshot of the shared settings (what a sweep or a link needs)."""

    dataset: str
    k: int
    eps_range: tuple[float, float]
    delta: float
    mechanisms: tuple[str, ...]
    norm_auto: bool
    norm_bound: float
    norm_from_data: bool
    centering: str
    scaling: str
    trials: int
    seed: int
    time_cap: float
    neighbouring: str
    ss_eps: float
    autorun: bool
    band: str

    @classmethod
    def from_session(cls, ss: Any) -> Settings:
        return cls(dataset=ss.dp_dataset, k=int(ss.dp_k), eps_range=tuple(ss.dp_eps_range), delta=float(ss.dp_delta),
                   mechanisms=tuple(selected_mechanisms()), norm_auto=bool(ss.dp_norm_auto),
                   norm_bound=float(ss.dp_norm_bound), norm_from_data=bool(ss.get("dp_norm_from_data", False)),
                   centering=ss.dp_centering, scaling=ss.dp_scaling, trials=int(ss.dp_trials), seed=int(ss.dp_seed),
                   time_cap=float(ss.dp_time_cap), neighbouring=ss.dp_neighbouring, ss_eps=float(ss.dp_ss_eps),
                   autorun=bool(ss.dp_autorun), band=ss.dp_band)

    @property
    def epsilons(self) -> list[float]:
        """The grid ε values inside the chosen range."""
        lo, hi = self.eps_range
        return [e for e in EPS_GRID if lo - 1e-12 <= e <= hi + 1e-12]

    def query(self) -> dict[str, str]:
        """The URL parameters of these settings (an uploaded file cannot be shared through a link)."""
        ss = st.session_state
        out = {}
        for s in SETTINGS:
            if s.param is not None:
                out[s.param] = s.encode(ss[s.key])
        if get("delta_auto") is not None:
            out.pop("delta", None)  # δ follows the dataset: a link does not pin it
        out["mech"] = ",".join(self.mechanisms)
        out["B"] = "auto" if self.norm_auto else f"{self.norm_bound:g}"
        if not self.norm_auto and self.norm_from_data:
            out["Bsrc"] = "data"
        if self.dataset == UPLOAD_ID:
            # an upload cannot be shared through a link, nor can its data settings: a bound read off its rows (or
            # its scaling and centring) would otherwise reach whoever opens the link, applied to a built-in dataset
            for key in UPLOAD_PRIVATE_PARAMS:
                out.pop(key, None)
            out["data"] = UPLOAD_LINK
        order = ["data", "k", "eps", "delta", "mech", "B", "Bsrc", "center", "trials", "seed", "cap", "nb", "scale",
                 "sseps"]
        return {key: out[key] for key in order if key in out}


def settings() -> Settings:
    return Settings.from_session(st.session_state)


def apply_query(query: Any) -> list[str]:
    """Copy recognised URL parameters into session state; returns the names of ignored (invalid) ones."""
    ss = st.session_state
    bad: list[str] = []
    if query.get("data") == UPLOAD_LINK:
        put("upload_lost", True)  # a reload of a session that used an upload: the file is not in this one
    for s in SETTINGS:
        if s.param is None or s.param not in query or s.decode is None:
            continue
        if s.param == "data" and query[s.param] == UPLOAD_LINK:
            continue
        try:
            ss[s.key] = s.decode(query[s.param])
        except (TypeError, ValueError):
            bad.append(s.param)
    if "B" in query:
        if query["B"] == "auto":
            ss.dp_norm_auto = True
        else:
            try:
                bound = _number(float, 1e-6, 1e9)(query["B"])
            except (TypeError, ValueError):
                bad.append("B")
            else:
                ss.dp_norm_auto, ss.dp_norm_bound = False, float(bound)
                ss.dp_norm_from_data = query.get("Bsrc") == "data"
    if "mech" in query:
        wanted = [m for m in query["mech"].split(",") if m]
        known = {m.id: m for m in selectable_mechanisms()}
        bad.extend(f"mech={m}" for m in wanted if m not in known)
        for g in MECH_GROUPS:
            ss[mech_key(g)] = [m for m in wanted if m in known and known[m].guarantee == g]
    return bad


# ------------------------------------------------------------------------------------------------
# mechanisms
def mech_key(group: str) -> str:
    """Session key of the mechanism picker of a guarantee group."""
    return f"{MECH_PREFIX}{group}"


def selectable_mechanisms(group: str | None = None) -> list:
    """Registry mechanisms offered in the pickers (reference mechanisms excluded), registry order."""
    out = [m for m in dpcore.list_mechanisms() if m.guarantee != Guarantee.NONE and m.id not in REFERENCE_IDS]
    return [m for m in out if group is None or m.guarantee == group]


def reference_mechanisms() -> list:
    """Mechanisms drawn as dashed reference lines (non-private PCA, random subspace)."""
    ids = set(dpcore.mechanism_ids())
    return [dpcore.get_mechanism(m) for m in REFERENCE_IDS if m in ids]


def selected_mechanisms() -> list[str]:
    """Chosen mechanism ids in registry order."""
    chosen = {m for g in MECH_GROUPS for m in st.session_state.get(mech_key(g), [])}
    return [m.id for m in selectable_mechanisms() if m.id in chosen]


def epsilons() -> list[float]:
    """The grid ε values inside the chosen range."""
    return settings().epsilons


# ------------------------------------------------------------------------------------------------
# session lifecycle
def init_state() -> None:
    """Set defaults, keep ``dp_*`` values alive across pages, read the URL once per session, and write the settings
    back to it. Idempotent: every page calls it first."""
    ss = st.session_state
    _nav.ensure_navigation()
    keep_alive()
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = value
    for g in MECH_GROUPS:
        if mech_key(g) not in ss:
            ss[mech_key(g)] = [m.id for m in selectable_mechanisms(g) if m.id in DEFAULT_MECHANISMS]
    if not get("qp_loaded"):
        put("qp_loaded", True)
        bad = apply_query(st.query_params)
        if bad:
            put("qp_bad", bad)
        # δ follows the dataset until someone chooses it (a link that names δ has chosen it)
        put("delta_auto", None if "delta" in st.query_params and "delta" not in bad else ss.dp_delta)
    if get("qp_bad"):
        st.toast(f"Ignored invalid link parameter(s): {', '.join(drop('qp_bad'))}")
    if get("scope_dataset") != ss.dp_dataset:
        # changed without select_dataset (a link, the first run, a test setting it with its settings):
        # the settings in the session are taken as this dataset's
        put("scope_dataset", ss.dp_dataset)
    put("page", _current_page_title())
    _follow_default_delta()
    track_origins()
    sync_query_params()


def sync_query_params() -> None:
    """Write the current settings to the URL (only when they changed), so a link reproduces them."""
    want = settings().query()
    have = {k: st.query_params[k] for k in st.query_params}
    if have != want:
        st.query_params.from_dict(want)


def _sync_after_run() -> None:
    """After-run hook: settings changed while the page ran reach the URL too (pages that never called
    :func:`init_state` — the Audit page keeps its own settings — leave the URL alone)."""
    if get("qp_loaded"):
        track_origins()  # settings a page changed after its widgets (a preset, a clamp) belong to that page
        sync_query_params()


_nav.after_run(_sync_after_run)


# ------------------------------------------------------------------------------------------------
# widget keys (the scheme is in the module docstring)
#: Owners of the page-local widget keys ``<owner>_<name>`` (:func:`widget_key`): the pages (Inspect is ``insp``,
#: Sample size ``ss``) and the components drawn on several pages.
WIDGET_OWNERS: tuple[str, ...] = (
    "audit", "basics", "data", "explore", "insp", "learn", "papers", "ss",  # pages
    "origin", "schema", "whatif", "workspace",  # components: the origin note, schema editor, what-if, workspace
    "odometer",  # the sidebar's privacy odometer (pages/ui/odometer.py)
)
#: Page choices kept across pages but in neither the link nor a workspace file: their default depends on the
#: registry, the data or another setting, so the page that shows them sets it.
PAGE_CHOICES: tuple[str, ...] = ("dp_insp_mech", "dp_insp_nb", "dp_ss_mechs", "dp_ss_metric", "dp_adv_mech",
                                 "dp_adv_eps", "dp_adv_trials")
#: The current upload, kept across pages (bytes and file name; pages.ui.datasets): never in a link or a workspace.
UPLOAD_KEYS: tuple[str, ...] = ("dp_upload", "dp_upload_name")
BOUND_PREFIX = "w_"
MECH_PREFIX = "dp_mech_"
OPTION_PREFIX = "dp_insp_opt_"


def option_key(mechanism: str, option: str) -> str:
    """The kept key of a mechanism option chosen on Inspect (``dp_insp_opt_<mechanism>_<option>``)."""
    return f"{OPTION_PREFIX}{mechanism}_{option}"


def widget_key(owner: str, name: str) -> str:
    """The key of a page-local widget: ``<owner>_<name>`` (``widget_key("explore", "run")`` → ``"explore_run"``)."""
    if owner not in WIDGET_OWNERS:
        raise ValueError(f"widget owner {owner!r} is not declared: add it to pages.ui.state.WIDGET_OWNERS")
    if not name:
        raise ValueError("a widget key needs a name after its owner")
    return f"{owner}_{name}"


def kept_keys() -> frozenset[str]:
    """Every declared ``dp_*`` key kept across pages except the two families: the mechanism pickers
    (:func:`mech_key`) and Inspect's mechanism options (:func:`option_key`)."""
    return frozenset(DEFAULTS) | frozenset(PAGE_CHOICES) | frozenset(UPLOAD_KEYS)


def key_problem(key: str) -> str | None:
    """Why ``key`` breaks the session-key scheme (None when it follows it); a ``_dp_`` slot key is not a widget."""
    if key.startswith(SLOT_PREFIX):
        return "a slot key (_dp_…) is no widget key: read slots through get/put"
    if key.startswith(BOUND_PREFIX):
        return None if key.removeprefix(BOUND_PREFIX) in DEFAULTS else "w_… is only a bound setting: use bound_key()"
    if key.startswith("dp_"):
        if key in kept_keys() or key.startswith((MECH_PREFIX, OPTION_PREFIX)):
            return None
        return "an undeclared dp_ key: declare it in SETTINGS or PAGE_CHOICES, or use widget_key()"
    owner = key.split("_", 1)[0]
    if owner in WIDGET_OWNERS and "_" in key:
        return None
    return f"no declared owner: name it with widget_key(owner, name), owners {', '.join(WIDGET_OWNERS)}"


def bound_key(key: str) -> str:
    """The key of the widget that :func:`bind` binds to setting ``key``."""
    return f"{BOUND_PREFIX}{key}"


def bind(key: str) -> dict:
    """Widget kwargs keeping ``key`` in plain session state (for widgets whose value must not be re-assigned,
    e.g. a range select_slider, which Streamlit 1.67 corrupts when its state is re-assigned)."""
    # pass the value as the widget default (not through session state): AppTest mis-serialises a range
    # select_slider whose initial value was set through st.session_state
    return {"key": bound_key(key), "value": st.session_state[key], "on_change": _copy_widget, "args": (key,)}


def _copy_widget(key: str) -> None:
    st.session_state[key] = st.session_state[bound_key(key)]


def set_state(key: str, value: Any) -> None:
    """Set a setting programmatically (also resets a :func:`bind` widget showing it)."""
    st.session_state[key] = value
    st.session_state.pop(bound_key(key), None)


def keep_alive() -> None:
    """Re-assign every ``dp_*`` setting: Streamlit drops a widget's state after a run of a page without that
    widget, and the other pages (and the after-run URL sync) still read them. Every page runs it (through
    :func:`init_state`; the Audit page, which keeps its own settings, calls it directly)."""
    ss = st.session_state
    for key in [k for k in ss if isinstance(k, str) and k.startswith("dp_")]:
        ss[key] = ss[key]


# ------------------------------------------------------------------------------------------------
# the slot registry: every non-widget session value, declared once
class Scope(StrEnum):
    """How long a slot's value holds."""

    SESSION = "session"  #: the whole browser session
    DATASET = "dataset"  #: computed on the current dataset (its memo key names it)
    UPLOAD = "upload"  #: read off the current upload: emptied when a new file arrives (:func:`clear_scope`)
    PAGE = "page"  #: one page's own results


@dataclass(frozen=True)
class Slot:
    """One session-state slot: its name (session key ``_dp_<name>``), the type of its value (a memo slot holds
    ``(key, value)`` with ``value`` of that type), its default and its scope. A type defined by a page helper that
    imports this module is named ``"module:Class"`` (resolved when a value is stored)."""

    name: str
    type: type | str | tuple[type | str, ...]
    scope: Scope
    default: Any = None
    memo: bool = False
    doc: str = ""

    @property
    def key(self) -> str:
        return f"{SLOT_PREFIX}{self.name}"

    def types(self) -> tuple[type, ...]:
        """The declared type(s), ``"module:Class"`` names resolved."""
        declared = self.type if isinstance(self.type, tuple) else (self.type,)
        return tuple(_resolve(t) if isinstance(t, str) else t for t in declared)


def _resolve(name: str) -> type:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


SLOT_PREFIX = "_dp_"
SLOTS: dict[str, Slot] = {slot.name: slot for slot in (
    # session lifecycle (init_state)
    Slot("qp_loaded", bool, Scope.SESSION, False, doc="the link was read (once per session)"),
    Slot("qp_bad", list, Scope.SESSION, doc="invalid link parameters, shown once"),
    Slot("delta_auto", (float, type(None)), Scope.SESSION, doc="δ's automatic value while it follows the dataset"),
    Slot("scope_dataset", str, Scope.SESSION, doc="the dataset the data settings in the session belong to"),
    Slot("data_settings", dict, Scope.SESSION, doc="data settings of the datasets left, by dataset id"),
    Slot("page", (str, type(None)), Scope.SESSION, doc="title of the page running"),
    Slot("seen", dict, Scope.SESSION, doc="cross-page settings as last seen"),
    Slot("origin", dict, Scope.SESSION, doc="page (or link) that set each cross-page setting"),
    Slot("seed_upload", int, Scope.UPLOAD, doc="the seed the app drew for the current upload (its default seed)"),
    Slot("seed_chosen", int, Scope.UPLOAD, doc="a seed the user set on a page for the current upload"),
    Slot("seed_typed", int, Scope.SESSION, doc="a seed the user set on a page on built-in data (the next upload "
                                               "keeps it)"),
    Slot("upload_lost", bool, Scope.SESSION, False, doc="the link names an upload this session does not have"),
    # uploads (pages.ui.datasets)
    Slot("upload_table", RawTable, Scope.UPLOAD, memo=True, doc="the upload's RawTable, by (file hash, read options)"),
    Slot("upload_parsed", Dataset, Scope.UPLOAD, memo=True, doc="the upload as a Dataset under the settings"),
    Slot("schemas", dict, Scope.SESSION, doc="each upload's schema, by its table key (several files per session)"),
    Slot("upload_settings", dict, Scope.SESSION, doc="each upload's data settings, by file fingerprint"),
    Slot("roles", RoleReport, Scope.UPLOAD, doc="the role-inference report shown next to the schema"),
    Slot("schema_table", tuple, Scope.UPLOAD, doc="the table key whose schema the editor shows"),
    Slot("schema_version", int, Scope.SESSION, 0, doc="bumped when the schema is replaced (the editor restarts)"),
    Slot("schema_error", str, Scope.UPLOAD, doc="a schema file that could not be loaded"),
    Slot("schema_loaded", str, Scope.UPLOAD, doc="name of the schema file just loaded"),
    Slot("schema_note", str, Scope.UPLOAD, doc="what a bulk edit, a codebook import or a reset did (shown once)"),
    Slot("schema_declared", Schema, Scope.SESSION, doc="a loaded schema declaring the file format: uploads are read "
                                                     "with it (also the next file)"),
    Slot("schema_declared_applied", list, Scope.SESSION, doc="table keys the declared schema was applied to"),
    Slot("upload_note", bool, Scope.UPLOAD, False, doc="a new upload: the Data page says how it was read"),
    Slot("label_guess", (LabelGuess, bool), Scope.UPLOAD,
         doc="None: not guessed yet; False: no guess; else a LabelGuess"),
    Slot("upload_files", dict, Scope.SESSION, doc="name of each file uploaded in this session, by fingerprint"),
    Slot("workspace_uploads", dict, Scope.SESSION, doc="a loaded workspace's uploads, by file name"),
    Slot("workspace_note", tuple, Scope.SESSION, doc="what loading a workspace file did: (kind, text), shown once"),
    Slot("workspace_misfit", tuple, Scope.SESSION,
         doc="a loaded workspace's schema that did not fit the uploaded file: (file name, why); shown with its schema"),
    # computed on the current data
    Slot("prepared", PreparedData, Scope.DATASET, memo=True, doc="the preprocessed data for the settings"),
    Slot("clamp_report", ClampReport, Scope.DATASET, memo=True, doc="Data page: values outside the schema's bounds"),
    Slot("adv_result", pd.DataFrame, Scope.DATASET, memo=True, doc="Data page: the clipping advisor's curve"),
    Slot("clip_curve", pd.DataFrame, Scope.DATASET, memo=True, doc="Data page: the row norms for the clipping chart"),
    Slot("whatif", "pages.ui.whatif:WhatIfResult", Scope.UPLOAD, memo=True,
         doc="Explore's what-if results, by what they were computed on"),
    Slot("odometer", "pages.ui.odometer:Book", Scope.SESSION,
         doc="the privacy odometer of each uploaded file (pages.ui.odometer)"),
    Slot("cells", "pages.ui.server_cache:SessionCells", Scope.SESSION,
         doc="finished sweep cells of this session (pages.ui.sweep)"),
    Slot("explore_result", "pages.ui.sweep:SweepRun", Scope.PAGE, doc="Explore's sweep (pages.ui.sweep.SweepRun)"),
    Slot("explore_result_live", "pages.ui.sweep:_Live", Scope.PAGE, doc="Explore's streaming sweep"),
    Slot("explore_derived", dict, Scope.PAGE, doc="Explore's figures and tables built from the shown sweep"),
    Slot("explore_peers_merged", tuple, Scope.PAGE, doc="Explore's frame with the peers' rows (pages.ui.peers)"),
    Slot("ss_result", "pages.ui.sweep:SweepRun", Scope.PAGE, doc="Sample size's sweep"),
    Slot("ss_result_live", "pages.ui.sweep:_Live", Scope.PAGE, doc="Sample size's streaming sweep"),
    Slot("insp_release", dict, Scope.PAGE, doc="Inspect's last release (and its settings)"),
    Slot("insp_ss_dimension", tuple, Scope.PAGE, doc="Inspect's subspace-dimension comparison: (n, d, rows)"),
    Slot("sweep_csv", pd.DataFrame, Scope.PAGE, memo=True, doc="Explore's loaded sweep CSV, by file id"),
    Slot("papers_quick", dict, Scope.PAGE, doc="Papers: this session's quick re-runs, by experiment"),
)}


def _slot(name: str) -> Slot:
    try:
        return SLOTS[name]
    except KeyError:
        raise KeyError(f"no session slot {name!r}: declare it in pages.ui.state.SLOTS") from None


def slot_key(name: str) -> str:
    """The session-state key of the declared slot ``name``."""
    return _slot(name).key


def get(name: str, default: Any = None, *, session: Mapping | None = None) -> Any:
    """The value in slot ``name`` (``default``, else the slot's default, when empty)."""
    slot = _slot(name)
    ss = st.session_state if session is None else session
    if slot.key in ss:
        return ss[slot.key]
    return slot.default if default is None else default


def put(name: str, value: Any) -> Any:
    """Store ``value`` in slot ``name`` (type-checked against the declaration); returns it."""
    slot = _slot(name)
    checked = value[1] if slot.memo else value
    if checked is not None and not isinstance(checked, slot.types()):
        raise TypeError(f"session slot {name!r} holds {slot.type}, not {type(checked).__name__}")
    st.session_state[slot.key] = value
    return value


def drop(name: str) -> Any:
    """Empty slot ``name``; returns what it held (None when empty)."""
    return st.session_state.pop(_slot(name).key, None)


def clear_scope(scope: Scope) -> None:
    """Empty every slot of ``scope``."""
    for slot in SLOTS.values():
        if slot.scope == scope:
            st.session_state.pop(slot.key, None)


def memo(name: str, key: Hashable, compute: Callable[[], T]) -> T:
    """The value stored in memo slot ``name`` for ``key``, else ``compute()`` (stored as ``(key, value)``).

    One slot holds one value: a new key replaces it. Per session only — uploaded data never reaches a
    cross-session cache. An exception from ``compute`` stores nothing.
    """
    cached = get(name)
    if cached is not None and cached[0] == key:
        return cached[1]
    value = compute()
    put(name, (key, value))
    return value


def recall(name: str, key: Hashable) -> Any:
    """The value of memo slot ``name`` when it was computed for ``key``; a value computed on something else is
    dropped (None)."""
    cached = get(name)
    if cached is None:
        return None
    if cached[0] == key:
        return cached[1]
    drop(name)
    return None


def memo_key(name: str, session: Mapping | None = None) -> Hashable | None:
    """The key of the value currently stored in memo slot ``name`` (None when empty); ``session`` as in
    :func:`stored`."""
    cached = get(name, session=session)
    return None if cached is None else cached[0]


def stored(name: str, session: Mapping | None = None) -> Any:
    """What slot ``name`` holds in ``session`` (default: this session; tests pass ``at.session_state``): a memo
    slot's value without its key, None when empty."""
    slot = _slot(name)
    ss = st.session_state if session is None else session
    if slot.key not in ss:
        return None
    value = ss[slot.key]
    return value[1] if slot.memo and value is not None else value


def set_stored(name: str, value: Any, session: MutableMapping) -> None:
    """Write slot ``name`` of ``session`` directly (tests preparing a session)."""
    session[_slot(name).key] = value


# ------------------------------------------------------------------------------------------------
# scopes: data settings belong to a dataset; cross-page settings remember where they were set
#: Settings that belong to the dataset: kept per dataset, a private default for a dataset met for the first time.
DATA_SETTINGS: tuple[str, ...] = ("dp_scaling", "dp_norm_auto", "dp_norm_bound", "dp_norm_from_data", "dp_norm_mode",
                                  "dp_centering", "dp_centering_eps", "dp_label", "dp_categorical", "dp_missing",
                                  "dp_csv_delimiter", "dp_csv_decimal", "dp_csv_thousands", "dp_csv_encoding")
#: An upload's private defaults differ in one place: missing cells are filled per record (dropping rows makes n
#: data-dependent). Its label is guessed from the table when it is first read (pages.ui.datasets).
UPLOAD_DEFAULTS: dict[str, Any] = {"dp_missing": MissingPolicy.ZERO.value}
#: Cross-page settings whose origin is shown on the other pages: session key → name in the caption.
CROSS_PAGE: dict[str, str] = {"dp_eps_range": "ε range", "dp_delta": "δ", "dp_k": "k", "dp_seed": "seed"}
LINK_ORIGIN = "the link"


def dataset_default_delta(dataset_id: str | None) -> float:
    """The default δ of a dataset: the largest offered δ far below 1/n for a built-in dataset's documented (public)
    size, so the app's own δ-vs-1/n note never fires on a default; the fixed default for an upload (its n is read
    off the data)."""
    info = next((d for d in dataset_infos() if d.id == dataset_id), None)
    return default_delta(None if info is None else info.n, DELTA_CHOICES, DEFAULTS["dp_delta"])


def default_of(key: str) -> Any:
    """The default of a setting now (δ's depends on the dataset)."""
    if key == "dp_delta":
        return dataset_default_delta(st.session_state.get("dp_dataset"))
    if key == "dp_seed" and st.session_state.get("dp_dataset") == UPLOAD_ID:
        return get("seed_upload", DEFAULTS[key])  # the upload's own fresh seed, never the public constant
    return DEFAULTS[key]


def _follow_default_delta() -> None:
    """δ left at its automatic value follows the dataset; once the user (or a link) chose δ, it stays."""
    ss = st.session_state
    auto = get("delta_auto")
    if auto is None or ss.get("dp_delta") != auto:
        put("delta_auto", None)  # chosen: no longer automatic
        return
    want = dataset_default_delta(ss.get("dp_dataset"))
    if want != ss.dp_delta:
        ss.dp_delta = want
    put("delta_auto", want)
    seen = get("seen")
    if seen is not None and "dp_delta" in seen:
        seen["dp_delta"] = want  # moved by the dataset, not set on this page


def private_defaults(dataset_id: str) -> dict[str, Any]:
    """The data settings a dataset starts from: every step private (public schema, public bound, no centring)."""
    out = {key: DEFAULTS[key] for key in DATA_SETTINGS}
    if dataset_id == UPLOAD_ID:
        out.update(UPLOAD_DEFAULTS)
    return out


def data_settings() -> dict[str, Any]:
    """The current dataset's data settings."""
    ss = st.session_state
    return {key: ss[key] for key in DATA_SETTINGS if key in ss}


def select_dataset(dataset_id: str, *, fresh: bool = False) -> None:
    """Make ``dataset_id`` the current dataset: the data settings of the one left are kept for it, and the new one
    gets its own (its private defaults the first time, or always with ``fresh``). Safe in a widget callback."""
    ss = st.session_state
    old = get("scope_dataset", ss.get("dp_dataset"))
    store: dict[str, dict[str, Any]] = get("data_settings") or put("data_settings", {})
    if old is not None and old != dataset_id:
        store[old] = data_settings()
    if fresh:
        store.pop(dataset_id, None)
    if fresh or old != dataset_id:
        ss.update(store.get(dataset_id) or private_defaults(dataset_id))
    if old == UPLOAD_ID and dataset_id != UPLOAD_ID and ss.get("dp_seed") is not None \
            and ss.get("dp_seed") in (get("seed_upload"), get("seed_chosen")):
        # the upload's seed stays with it (restored by _upload_seed on the way back): on built-in data it would reach
        # the link, the workspace, the chart exports and the cells' seed column (privacy review item 12)
        _app_sets_seed(DEFAULTS["dp_seed"])
    put("scope_dataset", dataset_id)
    ss.dp_dataset = dataset_id
    if dataset_id == UPLOAD_ID:
        _upload_seed()
    if ss.get(bound_key("dp_dataset")) not in (None, dataset_id):
        ss.pop(bound_key("dp_dataset"))  # Explore's own picker shows the new dataset


def _upload_seed() -> None:
    """The seed on an upload: fresh unless the user set it on a page for this upload (or, on built-in data, before
    it). The fixed default seed is for public built-in data (reproducible, cells shared by a class); on private
    data a seed others know makes every noise draw a public constant (privacy review item 12), and the seed of
    another file makes the two files' noise cancel (item 2). So a link's seed (R4-8), the seed the app drew for a
    previous file (R4-9) and the default are replaced by a fresh one."""
    seed = st.session_state.get("dp_seed", DEFAULTS["dp_seed"])
    own = get("seed_chosen") if get("seed_chosen") is not None else get("seed_upload")
    if seed == DEFAULTS["dp_seed"] and own is not None:  # back on this file from built-in data: its own seed
        _app_sets_seed(own)
    elif seed == DEFAULTS["dp_seed"]:
        _draw_upload_seed()
    elif seed == get("seed_typed"):  # set on built-in data before this upload: the user's choice, now this file's
        put("seed_chosen", int(seed))
        drop("seed_typed")
    elif seed not in (get("seed_upload"), get("seed_chosen")):
        _draw_upload_seed()


def _draw_upload_seed() -> None:
    """A fresh seed for the current upload; not a change made by the user (no "set on …" note, R4-4)."""
    seed = fresh_seed()
    _app_sets_seed(seed)
    put("seed_upload", seed)
    drop("seed_chosen")


def _app_sets_seed(seed: int) -> None:
    """Set the seed as the app's doing, not the user's (no "set on …" note)."""
    set_state("dp_seed", seed)
    seen, origins = get("seen"), get("origin")
    if seen is not None:
        seen["dp_seed"] = seed
    if origins is not None:
        origins.pop("dp_seed", None)


def _note_chosen_seed(value: Any) -> None:
    """Record a seed the user set on a page: for the current upload, or (on built-in data) for the next one."""
    if st.session_state.get("dp_dataset") == UPLOAD_ID:
        put("seed_chosen", int(value))
    elif value != DEFAULTS["dp_seed"]:
        put("seed_typed", int(value))
    else:
        drop("seed_typed")


def reset_data_settings() -> None:
    """Callback: the current dataset's data settings back to its private defaults (the label column stays)."""
    defaults = private_defaults(st.session_state.dp_dataset)
    defaults.pop("dp_label")
    st.session_state.update(defaults)


def non_default_data_settings() -> list[str]:
    """Keys of the data settings that differ from the current dataset's private defaults."""
    ss = st.session_state
    defaults = private_defaults(ss.dp_dataset)
    ignore = {"dp_label"} | ({"dp_norm_bound"} if ss.get("dp_norm_auto") else set())
    return [k for k, v in defaults.items() if k not in ignore and k in ss and ss[k] != v]


def _current_page_title() -> str | None:
    """Title of the page running (as origin captions name it)."""
    spec = _nav.current_page()
    return None if spec is None else spec.title.removesuffix(" a mechanism")


def track_origins(page: str | None = None) -> None:
    """Record ``page`` (default: the page running) as the origin of every cross-page setting changed since the
    last look. A value that a link set on the first run has the link as origin."""
    ss = st.session_state
    page = page or get("page")
    seen: dict[str, Any] = get("seen") or put("seen", {})
    origins: dict[str, str] = get("origin") or put("origin", {})
    for key in CROSS_PAGE:
        value = ss.get(key)
        if key not in seen:
            if value != default_of(key):
                origins[key] = LINK_ORIGIN
        elif seen[key] != value and page is not None:
            origins[key] = page
            if key == "dp_seed":
                _note_chosen_seed(value)
        seen[key] = value


def format_setting(key: str, value: Any) -> str:
    """A cross-page setting's value in the words of its caption."""
    if key == "dp_delta":
        return format_delta(value)
    if key == "dp_eps_range":
        return f"{value[0]:g} to {value[1]:g}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def origin(key: str) -> str | None:
    """The page (or link) that set ``key``, when that is not the page running and the value is not the default."""
    ss = st.session_state
    where = (get("origin") or {}).get(key)
    if where is None or where == get("page") or ss.get(key) == default_of(key):
        return None
    return where


def _reset_setting(key: str) -> None:
    if key == "dp_seed" and st.session_state.get("dp_dataset") == UPLOAD_ID:
        _draw_upload_seed()  # on an upload a fresh seed, never the public constant 0 (privacy review R4-4)
        return
    value = default_of(key)
    set_state(key, value)
    if key == "dp_delta":
        put("delta_auto", value)  # follows the dataset again


def delta_note(delta: float, n_rows: int) -> None:
    """Tell the user when δ is not far below 1/n for the data (a warning from δ ≥ 1/n, a quiet caption below)."""
    check = delta_vs_n_warning(delta, n_rows)
    if check is None:
        return
    if check.severe:
        st.warning(check.text, icon=":material/warning:")
    else:
        st.caption(f":material/info: {check.text}")


def origin_note(key: str, *, where: Any = None) -> None:
    """A caption "δ = 1e-06 set on Inspect" and a one-click reset to the default, when ``key`` was set on another
    page (nothing otherwise). ``where``: a container (default: the current one)."""
    src = origin(key)
    if src is None:
        return
    box = where if where is not None else st
    value = st.session_state[key]
    with box.container(horizontal=True, vertical_alignment="center", gap="small"):
        how = "by" if src == LINK_ORIGIN else "on"
        st.caption(f":material/history: {CROSS_PAGE[key]} = {format_setting(key, value)} set {how} {src}")
        fresh = key == "dp_seed" and st.session_state.get("dp_dataset") == UPLOAD_ID
        label = "Reset to a fresh seed" if fresh else f"Reset to {format_setting(key, default_of(key))}"
        why = ("A new seed from OS entropy: on uploaded data the seed is never a number others know." if fresh
               else f"Back to the default {CROSS_PAGE[key]}.")
        st.button(label, key=widget_key("origin", f"reset_{key}"), type="tertiary", on_click=_reset_setting,
                  args=(key,), help=why)
