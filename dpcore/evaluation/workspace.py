"""The dashboard's workspace file as a run configuration: parse and check it, and reproduce Explore's view from it
(issue 35 item 2, ``dpcore run``).

One parser and one code path for the dashboard and the command line: :func:`parse` reads the file the Data page's
*Download workspace* writes (``pages/ui/workspace.py`` calls it); :func:`explore_view` turns its public settings (and
its ``explore`` section: which dataset Explore showed, and on a built-in dataset the run seed) into an
:class:`ExploreView`; :func:`explore_configs` builds the sweep configurations Explore runs (the page calls it too);
:func:`run_view` runs them on the same data; :func:`results_csv` writes the results CSV both the page's download and
``dpcore run`` write — so the two are equal byte for byte with the same seed.

What a workspace holds is public: settings and the upload's public schema, never a data value (the page leaves out
everything read off an upload). An uploaded file is never in it: ``dpcore run --data FILE`` takes the file and applies
the saved schema; a schema that does not fit the file is refused with the reason. The run seed of an upload is never
in a workspace either (with it, anyone who sees a release could recompute its noise: privacy review item 12): give it
with ``--seed``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..data.limits import YamlTooLarge
from ..data.schema import VALUE_FIELDS, ColumnSchema, Schema, draft_column, load_yaml
from ..exceptions import DPCoreError
from ..vocabulary import NO_LABEL, Band, CategoricalPolicy, Centering, FeatureScaling, MissingPolicy, NormMode

if TYPE_CHECKING:
    import pandas as pd

    from ..data import RawTable

VERSION = 1
FORMAT_KEY = "dpcore_workspace"
#: The section naming what Explore showed: ``dataset`` (a built-in id) or ``upload`` (the uploaded file's name), and
#: ``seed`` on a built-in dataset only.
VIEW = "explore"
TOP: tuple[str, ...] = (FORMAT_KEY, "settings", "mechanisms", "datasets", "uploads", VIEW)
HEADER = ("# DP-PCA Explorer workspace: settings and schemas, never data. Load it on the Data page, then upload\n"
          "# the same file(s) again. Values read off an upload (bounds, categories, guessed roles, a guessed label,\n"
          "# undeclared columns, a norm bound) are not in this file: they are read again, and stay not public.\n"
          "# Reproduce Explore's view: dpcore run THIS_FILE [--data UPLOADED_FILE.csv] [--seed N] --out DIR\n")

#: Round ε values of Explore's range slider (log-spaced); the range's grid points are the sweep's ε values.
EPS_GRID: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
#: Settings that shape Explore's numbers (each must be in the file: the dashboard always writes them).
EXPLORE_SETTINGS: tuple[str, ...] = ("dp_k", "dp_eps_range", "dp_delta", "dp_trials", "dp_time_cap",
                                     "dp_neighbouring")
#: Settings the dashboard writes that do not change Explore's numbers (other pages, display).
OTHER_SETTINGS: tuple[str, ...] = ("dp_band", "dp_autorun", "dp_presentation", "dp_ss_eps", "dp_insp_invalid",
                                   "dp_insp_eps", "dp_insp_points", "dp_insp_color", "dp_ss_trials", "dp_ss_sizes",
                                   "dp_ss_k")
#: A dataset's data settings and their private defaults (the page's ``private_defaults``; a test keeps them equal).
DATA_DEFAULTS: dict[str, Any] = {
    "dp_scaling": FeatureScaling.SCHEMA.value, "dp_norm_auto": True, "dp_norm_bound": 1.0, "dp_norm_from_data": False,
    "dp_norm_mode": NormMode.CLIP.value, "dp_centering": Centering.NONE.value, "dp_centering_eps": 0.1,
    "dp_label": NO_LABEL, "dp_categorical": CategoricalPolicy.ONEHOT.value, "dp_missing": MissingPolicy.DROP.value,
    "dp_csv_delimiter": "auto", "dp_csv_decimal": "auto", "dp_csv_thousands": "no separator",
    "dp_csv_encoding": "auto"}
UPLOAD_DEFAULTS: dict[str, Any] = {"dp_missing": MissingPolicy.ZERO.value}
#: Keys of an upload's settings the page writes beside the data settings.
_UPLOAD_EXTRA = ("norm_bound_from_data_left_out",)
#: The Data page's file-format choices ("auto": detected; a thousands separator is never detected).
DELIMITERS: dict[str, str | None] = {"auto": None, ",": ",", ";": ";", "tab": "\t", "|": "|"}
DECIMALS: dict[str, str | None] = {"auto": None, ".": ".", ",": ","}
THOUSANDS: dict[str, str | None] = {"no separator": None, ",": ",", ".": ".", "space": " "}
ENCODINGS: tuple[str, ...] = ("auto", "utf-8", "utf-16", "cp1252", "latin-1")
#: Explore's charts, in order (the SVM panel only with a label).
METRICS: tuple[str, ...] = ("captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy")


class WorkspaceError(DPCoreError):
    """A workspace file that cannot be loaded or run; the message names the problem and the fix."""


# ------------------------------------------------------------------------------------------------
# the file
def to_text(workspace: Mapping) -> str:
    """The workspace as the file the dashboard writes (libyaml's emitter where PyYAML has it)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return HEADER + yaml.dump(dict(workspace), Dumper=dumper, sort_keys=False, allow_unicode=True)


def parse(text: str | bytes) -> dict:
    """A workspace file's content, checked (raises :class:`WorkspaceError`)."""
    try:
        data = load_yaml(text.decode("utf-8") if isinstance(text, bytes) else text, booleans=True)
    except YamlTooLarge as exc:  # checked on the composed nodes, before any value is built (issue 32)
        raise WorkspaceError(f"the file is refused: {exc}; load the file that 'Download workspace' wrote.") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise WorkspaceError(f"the file is not YAML or JSON ({exc.__class__.__name__}); load the file that "
                             "'Download workspace' wrote.") from None
    if not isinstance(data, dict) or FORMAT_KEY not in data:
        raise WorkspaceError(f"this is not a workspace file (no '{FORMAT_KEY}' field); load the file that "
                             "'Download workspace' wrote (a schema file goes into the schema editor instead).")
    if data[FORMAT_KEY] != VERSION:
        raise WorkspaceError(f"workspace version {data[FORMAT_KEY]!r} is not supported (this app reads version "
                             f"{VERSION}); download the workspace again from this version of the app.")
    unknown = sorted(set(map(str, data)) - set(TOP))
    if unknown:
        raise WorkspaceError(f"unknown field {unknown[0]!r}; a workspace has {', '.join(TOP)}.")
    for fld, kind in (("settings", dict), ("mechanisms", dict), ("datasets", dict), ("uploads", list),
                      (VIEW, dict)):
        if not isinstance(data.get(fld, kind()), kind):
            raise WorkspaceError(f"field {fld!r}: expected a {kind.__name__}.")
    return data


def view_section(dataset_id: str | None, *, upload_name: str | None = None, seed: int | None = None) -> dict:
    """The ``explore`` section the dashboard writes: the built-in dataset shown (with the run seed: public data) or
    the uploaded file's name (never its seed)."""
    if upload_name is not None:
        return {"upload": str(upload_name)}
    out: dict[str, Any] = {"dataset": str(dataset_id)}
    if seed is not None:
        out["seed"] = int(seed)
    return out


# ------------------------------------------------------------------------------------------------
# an upload's saved schema on a table
def _drafted_for(column: ColumnSchema, role: Any, table: RawTable | None) -> tuple[dict, str | None]:
    """(``column`` of the draft as a dict, its values drafted again from ``table`` for a role the user declared;
    why that role does not fit this file's column, or None)."""
    drafted = column.to_dict()
    if table is None or role in (None, drafted["role"]):
        return drafted, None
    try:
        return draft_column(table, column.name, role, role_from_data=False).to_dict(), None
    except DPCoreError as exc:
        return drafted, str(exc)


def restore_schema_checked(saved: Mapping, draft: Schema,
                           table: RawTable | None = None) -> tuple[Schema, str | None]:
    """(schema, None): the saved schema on the table whose ``draft`` is given — values the workspace left out (read
    off the data) come from the draft or, for a role the user declared that the draft did not infer, are drafted
    again from ``table``, still marked ``from_data``; the table's columns decide which columns there are (a column
    the workspace does not name keeps its draft). (draft, why) when the saved schema does not fit this table."""
    columns = {str(c.get("name")): dict(c) for c in saved.get("columns") or [] if isinstance(c, Mapping)}
    merged, role_misfits = [], []
    for column in draft.columns:
        mine = columns.get(column.name)
        if mine is None:
            merged.append(column.to_dict())
            continue
        drafted, role_misfit = _drafted_for(column, mine.get("role"), table)
        if role_misfit is not None:
            why = role_misfit.split(": ", 1)[-1].split("; ", 1)[0].rstrip(".")  # the reason, not the editor's fix
            role_misfits.append(f"the workspace declares '{column.name}' {mine.get('role')}, but in this file {why}")
        if "role" not in mine:  # a role the workspace left out (it was read off the data) is drafted again
            mine["role"] = drafted["role"]
            mine["from_data"] = sorted(set(mine.get("from_data") or []) | {"role"})
        for fld in VALUE_FIELDS:
            if fld not in mine and fld in drafted and mine.get("role") == drafted.get("role"):
                mine[fld] = drafted[fld]
                mine["from_data"] = sorted(set(mine.get("from_data") or []) | {fld})
        merged.append(mine)
    out = {key: value for key, value in saved.items() if key != "columns"}
    fmt, drafted_fmt = out.get("format"), draft.to_dict().get("format") or {}
    if isinstance(fmt, Mapping):
        out["format"] = {**{k: v for k, v in drafted_fmt.items() if k in (fmt.get("from_data") or ())}, **fmt}
    if "label" not in saved:  # a guessed label is not in a workspace: the draft's guess, still from_data
        out["label"] = draft.label
        out["from_data"] = sorted({*(out.get("from_data") or ()), "label"})
    label = out.get("label")
    column = label.get("column") if isinstance(label, Mapping) else label  # a derived label: {column, above, …}
    if column is not None and column not in draft.names:
        out["label"] = None
    try:
        return Schema.from_dict({**out, "columns": merged}), None
    except DPCoreError as exc:  # the saved schema does not fit this table: the draft (marked from_data) stands
        return draft, "; ".join(role_misfits) + "." if role_misfits else str(exc)


# ------------------------------------------------------------------------------------------------
# Explore's view
@dataclass(frozen=True)
class ExploreView:
    """Everything public that decides Explore's numbers, read from a workspace."""

    dataset: str  #: a built-in dataset id, or the uploaded file's name (``upload`` True)
    upload: bool
    seed: int | None  #: None: fresh OS entropy (the numbers then differ from the dashboard's)
    mechanisms: tuple[str, ...]
    epsilons: tuple[float, ...]
    delta: float
    k: int
    trials: int
    time_cap: float
    neighbouring: str
    data_settings: dict[str, Any] = field(default_factory=dict)
    schema: dict | None = None  #: an upload's saved public schema
    band: str = Band.SD.label  #: the band over trials the charts draw (its label, as the page stores it)


def epsilons_in(eps_range: tuple[float, float]) -> tuple[float, ...]:
    """The grid ε values inside Explore's range (both ends included)."""
    lo, hi = eps_range
    return tuple(e for e in EPS_GRID if lo - 1e-12 <= e <= hi + 1e-12)


def _setting(settings: Mapping, key: str) -> Any:
    if key not in settings:
        raise WorkspaceError(f"the workspace has no settings.{key}; download the workspace again from the dashboard "
                             "(it writes every setting).")
    return settings[key]


def _number(settings: Mapping, key: str, kind: type, lo: float, hi: float) -> Any:
    value = _setting(settings, key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not lo <= value <= hi or (kind is int and value != int(value)):
        raise WorkspaceError(f"settings.{key} must be a {'whole ' if kind is int else ''}number in [{lo:g}, {hi:g}]; "
                             "fix the file or download it again.")
    return kind(value)


def _check_keys(values: Mapping, allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in values if k not in allowed)
    if unknown:
        raise WorkspaceError(f"unknown setting {where}.{unknown[0]}; a workspace's {where} has "
                             f"{', '.join(allowed[:8])}, … (check the spelling, or download the file again).")


def _mechanisms(workspace: Mapping) -> tuple[str, ...]:
    """The chosen mechanisms in registry order (as Explore's pickers give them)."""
    from ..mechanisms import list_mechanisms
    from ..vocabulary import Guarantee
    from .sweep import REFERENCE_MECHANISMS

    chosen: set[str] = set()
    for group, ids in (workspace.get("mechanisms") or {}).items():
        if not isinstance(ids, list):
            raise WorkspaceError(f"mechanisms.{group} must be a list of mechanism ids.")
        chosen |= {str(m) for m in ids}
    offered = [m.id for m in list_mechanisms() if m.guarantee != Guarantee.NONE and m.id not in REFERENCE_MECHANISMS]
    unknown = sorted(chosen - set(offered))
    if unknown:
        raise WorkspaceError(f"unknown mechanism {unknown[0]!r} in the workspace; the mechanisms are "
                             f"{', '.join(offered)} (see `dpcore mechanisms`).")
    if not chosen:
        raise WorkspaceError("the workspace chooses no mechanism; choose at least one in Explore's sidebar.")
    return tuple(m for m in offered if m in chosen)


def _upload_entry(workspace: Mapping, name: str) -> dict:
    entries = [e for e in workspace.get("uploads") or [] if isinstance(e, dict) and e.get("file") == name]
    return entries[-1]


def _view_target(workspace: Mapping, dataset: str | None, data_name: str | None) -> tuple[str, bool]:
    """(dataset id or upload name, is an upload) of the view to run."""
    from ..data import list_datasets

    view = workspace.get(VIEW) or {}
    builtin = [d.id for d in list_datasets()]
    if data_name is not None:  # --data: the workspace's upload of that name, the view's upload, or its only one
        names = [e["file"] for e in workspace.get("uploads") or [] if isinstance(e, dict)
                 and isinstance(e.get("file"), str)]
        for name in (data_name, view.get("upload"), names[0] if len(names) == 1 else None):
            if name is not None and name in names:
                return str(name), True
        raise WorkspaceError(f"the workspace has no upload named {data_name!r} (its uploads: "
                             f"{', '.join(names) or 'none'}); give --data the file the workspace was saved with.")
    if dataset is None and "upload" in view:
        raise WorkspaceError(f"this workspace's Explore view ran on the uploaded file {view['upload']!r}, which a "
                             "workspace never contains; give the file: dpcore run WORKSPACE --data "
                             f"PATH/TO/{view['upload']}")
    target = dataset or view.get("dataset")
    if target is None:
        raise WorkspaceError("the workspace does not say which dataset Explore showed (it was saved before the "
                             f"'{VIEW}' section existed); give --dataset ID ({', '.join(builtin)}) or --data FILE.")
    if target not in builtin:
        raise WorkspaceError(f"unknown dataset {target!r}; the built-in datasets are {', '.join(builtin)} "
                             "(an uploaded file goes to --data).")
    return str(target), False


def _data_settings(workspace: Mapping, target: str, upload: bool) -> tuple[dict, dict | None]:
    """(the data settings of ``target``, its saved schema or None)."""
    if upload:
        entry = _upload_entry(workspace, target)
        values = dict(entry.get("settings") or {})
        _check_keys(values, (*DATA_DEFAULTS, *_UPLOAD_EXTRA), "uploads.settings")
        for extra in _UPLOAD_EXTRA:
            values.pop(extra, None)
        schema = entry.get("schema")
        if schema is not None and not isinstance(schema, dict):
            raise WorkspaceError(f"uploads[{target!r}].schema must be a mapping (a schema).")
        out = {**DATA_DEFAULTS, **UPLOAD_DEFAULTS, **values}
        if "dp_label" not in values:
            del out["dp_label"]  # a guessed label is not in a workspace: it is guessed again from the file
        return out, schema
    values = dict((workspace.get("datasets") or {}).get(target) or {})
    _check_keys(values, tuple(DATA_DEFAULTS), f"datasets.{target}")
    return {**DATA_DEFAULTS, **values}, None


def explore_view(workspace: Mapping, *, dataset: str | None = None, data_name: str | None = None,
                 seed: int | None = None) -> ExploreView:
    """The Explore view a parsed workspace describes (strict: an unknown or missing setting is an error).

    ``dataset`` overrides the built-in dataset; ``data_name`` (the name of the file given to ``--data``) picks the
    workspace's upload of that name (or its only one); ``seed`` overrides the saved seed (an upload has none)."""
    settings = workspace.get("settings") or {}
    _check_keys(settings, (*EXPLORE_SETTINGS, *OTHER_SETTINGS, *DATA_DEFAULTS), "settings")
    view = workspace.get(VIEW) or {}
    _check_keys(view, ("dataset", "upload", "seed"), VIEW)
    target, upload = _view_target(workspace, dataset, data_name)
    data_settings, schema = _data_settings(workspace, target, upload)
    eps_range = _setting(settings, "dp_eps_range")
    if not (isinstance(eps_range, list | tuple) and len(eps_range) == 2
            and all(isinstance(e, int | float) and not isinstance(e, bool) and e > 0 for e in eps_range)):
        raise WorkspaceError("settings.dp_eps_range must be two positive numbers [low, high].")
    epsilons = epsilons_in((float(min(eps_range)), float(max(eps_range))))
    if not epsilons:
        raise WorkspaceError(f"settings.dp_eps_range holds no ε of the grid {', '.join(f'{e:g}' for e in EPS_GRID)}.")
    if seed is None and not upload and view.get("dataset") == target and view.get("seed") is not None:
        seed = view["seed"]
    neighbouring = str(_setting(settings, "dp_neighbouring"))
    from ..core.privacy import NEIGHBOURING_LABELS

    if neighbouring not in NEIGHBOURING_LABELS:
        raise WorkspaceError(f"settings.dp_neighbouring must be one of {', '.join(NEIGHBOURING_LABELS)}.")
    return ExploreView(
        dataset=target, upload=upload, seed=None if seed is None else int(seed), mechanisms=_mechanisms(workspace),
        epsilons=epsilons, delta=_number(settings, "dp_delta", float, 1e-300, 0.5),
        k=_number(settings, "dp_k", int, 1, 10_000), trials=_number(settings, "dp_trials", int, 1, 200),
        time_cap=_number(settings, "dp_time_cap", float, 0.5, 600.0), neighbouring=neighbouring,
        data_settings=data_settings, schema=schema, band=str(settings.get("dp_band", Band.SD.label)))


# ------------------------------------------------------------------------------------------------
# one code path for the page and the CLI
def preprocess_options(data_settings: Mapping[str, Any], *, seed: int | None, neighbouring: str) -> dict:
    """Keyword arguments of :func:`dpcore.data.preprocess` for a dataset's data settings (the page's and the CLI's)."""
    ds = data_settings
    opts = {"feature_scaling": ds["dp_scaling"],
            "norm_bound": None if ds["dp_norm_auto"] else float(ds["dp_norm_bound"]),
            "norm_mode": ds["dp_norm_mode"], "centering": ds["dp_centering"],
            "random_state": None if seed is None else int(seed)}
    if not ds["dp_norm_auto"] and ds.get("dp_norm_from_data", False):
        opts["norm_bound_from_data"] = True  # recorded as a non-private step in the ledger
    if ds["dp_centering"] == Centering.DP:
        opts["centering_epsilon"] = float(ds["dp_centering_eps"])
        opts["neighbouring"] = neighbouring
    return opts


def explore_configs(mechanisms: tuple[str, ...] | list[str], epsilons: tuple[float, ...] | list[float], *,
                    delta: float, k: int, d: int, trials: int, seed: int | None, neighbouring: str,
                    time_cap: float) -> tuple[Any, Any]:
    """(the curves' :class:`~dpcore.evaluation.sweep.SweepConfig`, the reference lines' or None) of Explore: k at
    most d, claimed-invalid exhibits allowed when chosen, the references (PCA, random subspace) at ε = 1."""
    from ..mechanisms import get_mechanism, mechanism_ids
    from .sweep import REFERENCE_MECHANISMS, SweepConfig

    common = dict(deltas=(float(delta),), ks=(min(int(k), int(d)),), trials=int(trials), seed=seed,
                  neighbouring=neighbouring, time_cap=float(time_cap))
    mechanisms = list(mechanisms)
    invalid = any(get_mechanism(m).invalid for m in mechanisms)
    config = SweepConfig(mechanisms=mechanisms, epsilons=list(epsilons), allow_invalid=invalid, **common)
    refs = [m for m in REFERENCE_MECHANISMS if m in mechanism_ids()
            and neighbouring in get_mechanism(m).neighbourings]
    return config, (SweepConfig(mechanisms=refs, epsilons=(1.0,), **common) if refs else None)


def results_csv(frame: pd.DataFrame, *, upload: bool = False) -> str:
    """The results CSV of a sweep (Explore's download and ``dpcore run``'s ``results.csv``): one row per release.
    ``runtime_s`` is left empty: wall time differs between runs, and this file is the reproducible record (the
    column stays, so the file still loads as a sweep CSV). For an ``upload`` the ``seed`` column is empty too: with
    a cell's seed and its release the noise could be replayed and removed, so an upload's seeds are never written to a
    file (privacy review item 12; the user gives the seed to ``dpcore run --seed``)."""
    out = frame.copy()
    if "runtime_s" in out:
        out["runtime_s"] = float("nan")
    if upload and "seed" in out:
        out["seed"] = float("nan")
    return out.to_csv(index=False)


def load_view_data(view: ExploreView, data: bytes | None = None):
    """The :class:`~dpcore.data.Dataset` of ``view``: a built-in dataset, or ``data`` (the uploaded file's bytes)
    read with the data settings and the workspace's public schema, as the Data page reads it."""
    from .. import data as dpdata

    if not view.upload:
        if data is not None:
            raise WorkspaceError(f"the view runs on the built-in dataset {view.dataset!r}: give no --data.")
        return dpdata.load_dataset(view.dataset)
    if data is None:
        raise WorkspaceError(f"this view ran on the uploaded file {view.dataset!r}, which a workspace never contains; "
                             f"give it with --data PATH/TO/{view.dataset}.")
    table = _read_upload(view, data)
    schema = _upload_schema(view, table)
    ds = view.data_settings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpdata.WideDataWarning)
        if ds["dp_scaling"] == FeatureScaling.SCHEMA:
            return dpdata.load_table(table, schema=schema, categorical=ds["dp_categorical"], missing=ds["dp_missing"])
        return dpdata.load_table(table, label=schema.label, roles=schema.roles, categorical=ds["dp_categorical"],
                                 missing=ds["dp_missing"], label_rule=schema.label_rule)


def declared_read_options(schema: Mapping | None) -> dict | None:
    """``read_table`` options of the file format a saved schema declares in full (``format`` with no field left
    ``from_data``): ``{"format": …, "column_names": …}``; None when it declares none (the file is then read with the
    data settings' choices and detection, and the schema is not public). Privacy review item 9: under a declared
    format nothing is detected, so no record changes how the others are read (a ragged line is a record of missing
    cells, never a refusal of the file)."""
    from ..data.reading import FileFormat

    fmt = (schema or {}).get("format")
    if not isinstance(fmt, Mapping) or fmt.get("from_data"):
        return None
    try:
        declared = FileFormat.from_dict(dict(fmt))
    except DPCoreError as exc:
        raise WorkspaceError(f"the workspace's schema has a bad file format ({exc}); fix its 'format:' or download "
                             "the workspace again.") from None
    names = tuple(str(c.get("name")) for c in (schema or {}).get("columns") or [] if isinstance(c, Mapping))
    return {"format": declared, "column_names": None if declared.header else names}


def _read_upload(view: ExploreView, data: bytes):
    from .. import data as dpdata

    ds = view.data_settings
    stem = view.dataset.rsplit(".", 1)[0] if "." in view.dataset else view.dataset
    declared = declared_read_options(view.schema)
    if declared is not None:  # the saved schema declares the format: read exactly so, nothing detected
        return dpdata.read_table(data, name=stem, **declared)
    try:
        opts = {"delimiter": DELIMITERS[ds["dp_csv_delimiter"]], "decimal": DECIMALS[ds["dp_csv_decimal"]],
                "thousands": THOUSANDS[ds["dp_csv_thousands"]]}
    except KeyError as exc:
        raise WorkspaceError(f"the upload's file-format setting {exc.args[0]!r} is not one the Data page offers.") \
            from None
    encoding = ds["dp_csv_encoding"]
    if encoding not in ENCODINGS:
        raise WorkspaceError(f"the upload's encoding {encoding!r} is not one of {', '.join(ENCODINGS)}.")
    return dpdata.read_table(data, name=stem, encoding=None if encoding == "auto" else encoding, **opts)


def _upload_schema(view: ExploreView, table) -> Schema:
    """The saved schema on ``table`` (refused with the reason when it does not fit: a column it declares is not in
    the file, or a declared role does not fit the column)."""
    from .. import data as dpdata
    from ..data.roles import guess_label

    if "dp_label" in view.data_settings:  # declared (a column, or no label)
        label = view.data_settings["dp_label"]
        label = None if label in (None, "", NO_LABEL) or label not in table.columns else label
    else:  # guessed again from the file, as the Data page does (and marked from_data)
        guess = guess_label(table)
        label = guess.column if guess else None
    draft = dpdata.draft_schema(table, dpdata.infer_roles(table, label=label))
    if not view.schema:
        return draft
    names = [str(c.get("name")) for c in view.schema.get("columns") or [] if isinstance(c, Mapping)]
    absent = [n for n in names if n not in table.columns]
    if absent:
        raise WorkspaceError(f"the workspace's schema declares the column {absent[0]!r}, which this file does not "
                             "have: is this the file the workspace was saved with? Give that file to --data.")
    schema, misfit = restore_schema_checked(view.schema, draft, table)
    if misfit:
        raise WorkspaceError(f"the workspace's schema does not fit this file: {misfit} Give the file the workspace "
                             "was saved with.")
    return schema


@dataclass
class ExploreRun:
    """A reproduced Explore view: the data, the configurations and the frames (curves, reference lines)."""

    view: ExploreView
    prepared: Any
    config: Any
    ref_config: Any
    frame: pd.DataFrame
    ref_frame: pd.DataFrame | None


def prepare_view(view: ExploreView, data: bytes | None = None):
    """The preprocessed data of ``view`` (the dashboard's preprocessing, with its seed)."""
    from ..data import preprocess
    from ..exceptions import PrivacyLeakWarning

    dataset = load_view_data(view, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the ledger says which steps are not private
        return preprocess(dataset, **preprocess_options(view.data_settings, seed=view.seed,
                                                        neighbouring=view.neighbouring))


def run_view(view: ExploreView, data: bytes | None = None, *, progress=None) -> ExploreRun:
    """Run Explore's sweeps for ``view`` in this process, on one BLAS thread as the dashboard's pool workers do (so
    the numbers are the dashboard's to the last bit)."""
    from ..core.seeding import fresh_seed
    from ..core.threads import single_threaded_blas
    from .sweep import run_sweep

    if view.seed is None:
        view = ExploreView(**{**view.__dict__, "seed": fresh_seed()})
    prepared = prepare_view(view, data)
    config, ref_config = explore_configs(view.mechanisms, view.epsilons, delta=view.delta, k=view.k, d=prepared.d,
                                         trials=view.trials, seed=view.seed, neighbouring=view.neighbouring,
                                         time_cap=view.time_cap)
    with single_threaded_blas():
        frame = run_sweep(prepared, config, dataset_name=view.dataset, progress=progress)
        ref_frame = None if ref_config is None else run_sweep(prepared, ref_config, dataset_name=view.dataset)
    return ExploreRun(view, prepared, config, ref_config, frame, ref_frame)


def explore_figures(run: ExploreRun) -> dict[str, tuple[Any, str, str]]:
    """{metric: (figure, caption, title)} of Explore's charts for ``run``, drawn by the dashboard's own chart code
    (:func:`dpcore.explain.figures.run_figures`: Plotly, no Streamlit)."""
    try:
        from ..explain.figures import run_figures
    except ImportError as exc:
        raise WorkspaceError(f"the figures need Plotly (pip install plotly) ({exc}). The CSV needs no figures.") \
            from None
    return run_figures(run)


def csv_name(view: ExploreView) -> str:
    """The results CSV's file name, as the page's download names it (``sweep_wine.csv``)."""
    from .captions import export_filename

    return export_filename("sweep", view.dataset, ext="csv")


def write_outputs(run: ExploreRun, out: str | Path, *, metrics: Sequence[str] | None = None, figures: bool = True,
                  png: bool = True) -> tuple[list[str], list[str]]:
    """Write ``run``'s results CSV and its charts (HTML always, PNG through kaleido and Chromium) into the folder
    ``out``, named as the page's downloads; returns (paths written, notes). PNG that cannot be drawn is a note, not an
    error (the HTML file carries the same chart and caption)."""
    from .captions import export_filename

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / csv_name(run.view)
    target.write_bytes(results_csv(run.frame, upload=run.view.upload).encode("utf-8"))
    written, notes = [str(target)], []
    if not figures:
        return written, notes
    drawn = explore_figures(run)
    from ..explain.figures import METRIC_SLUGS, figure_html, figure_png, png_export_available

    if png and not png_export_available():
        png = False
        notes.append("PNG not written: it needs kaleido and a Chromium binary (the HTML figures carry the same chart "
                     "and caption).")
    for metric, (fig, caption, _title) in drawn.items():
        if metrics is not None and metric not in metrics:
            continue
        parts = ("explore", run.view.dataset, METRIC_SLUGS.get(metric, metric))
        html = out / export_filename(*parts, ext="html")
        html.write_text(figure_html(fig, caption), encoding="utf-8")
        written.append(str(html))
        if png:
            try:
                image = figure_png(fig, caption)
            except Exception as exc:  # kaleido/Chromium failures vary; the HTML stands
                notes.append(f"PNG not written ({exc.__class__.__name__}: {str(exc)[:200]}); the HTML figures carry "
                             "the same chart and caption.")
                png = False
                continue
            image_path = out / export_filename(*parts, ext="png")
            image_path.write_bytes(image)
            written.append(str(image_path))
    return written, notes
