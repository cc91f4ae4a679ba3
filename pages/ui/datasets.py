"""Data access for the pages: built-in datasets (cached across sessions: public), uploads (this session only) and
the preprocessed data for the session's settings (memoised per session through :func:`pages.ui.state.memo`)."""

from __future__ import annotations

import hashlib
import warnings

import streamlit as st

import dpcore
from dpcore.data.roles import guess_label
from dpcore.evaluation.metrics import mechanism_row_count
from dpcore.exceptions import DPCoreError, PrivacyLeakWarning
from dpcore.explain.display import held_out_note, plain_words
from dpcore.vocabulary import (
    NO_LABEL,
    CategoricalPolicy,
    FeatureScaling,
    MissingPolicy,
    Neighbouring,
    NormMode,
)
from pages.ui import server_cache
from pages.ui.state import (
    DEFAULTS,
    UPLOAD_ID,
    Scope,
    clear_scope,
    data_settings,
    dataset_infos,
    get,
    memo,
    memo_key,
    put,
    select_dataset,
    slot_key,
)

#: Rows that reach the mechanisms below which Explore explains why the curves are noisy.
SMALL_ROWS = 2000


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load_builtin(dataset_id: str):
    # public built-in data only (uploaded data never goes through a cross-session cache)
    return dpcore.data.load_dataset(dataset_id)


def _datasets() -> list:
    """Metadata of the built-in datasets (kept under its old name for the Data page)."""
    return dataset_infos()


def dataset_options() -> list[str]:
    """Built-in dataset ids, plus the uploaded file when one is in this session."""
    ids = [d.id for d in dataset_infos()]
    if st.session_state.get("dp_upload") is not None:
        ids.append(UPLOAD_ID)
    return ids


def dataset_info(dataset_id: str):
    """The registry metadata of a built-in dataset (None for an upload or an unknown id)."""
    return next((d for d in dataset_infos() if d.id == dataset_id), None)


def dataset_label(dataset_id: str, upload_name: str | None = None) -> str:
    """Display name of a dataset id; ``upload_name`` names the uploaded file (default: the session's)."""
    if dataset_id == UPLOAD_ID:
        return f"Uploaded: {upload_name or st.session_state.get('dp_upload_name') or 'CSV'}"
    info = dataset_info(dataset_id)
    return dataset_id if info is None else f"{info.name} (n = {info.n:,}, d = {info.d})"


# --- uploads: bytes → RawTable (read once) → roles + schema (editable) → Dataset -----------------------------
#: File-format overrides offered on the Data page ("auto" = detect).
DELIMITER_CHOICES: dict[str, str | None] = {"auto": None, ",": ",", ";": ";", "tab": "\t", "|": "|"}
DECIMAL_CHOICES: dict[str, str | None] = {"auto": None, ".": ".", ",": ","}
#: Thousands separators: never detected (one record's cell would decide how others are read, R4-7), only chosen.
THOUSANDS_CHOICES: dict[str, str | None] = {"no separator": None, ",": ",", ".": ".", "space": " "}
ENCODING_CHOICES: tuple[str, ...] = ("auto", "utf-8", "utf-16", "cp1252", "latin-1")


def _read_options() -> dict:
    ss = st.session_state
    enc = ss.get("dp_csv_encoding", "auto")
    return {"delimiter": DELIMITER_CHOICES.get(ss.get("dp_csv_delimiter", "auto")),
            "decimal": DECIMAL_CHOICES.get(ss.get("dp_csv_decimal", "auto")),
            "thousands": THOUSANDS_CHOICES.get(ss.get("dp_csv_thousands")),
            "encoding": None if enc == "auto" else enc}


def parse_upload(data: bytes, name: str = "upload.csv", label: str | None = None,
                 categorical: str = CategoricalPolicy.ONEHOT, missing: str = MissingPolicy.DROP, schema=None):
    """Parse uploaded bytes with :func:`dpcore.data.load_csv` (raises DataError with a readable message)."""
    label = None if label in (None, "", NO_LABEL) else label
    return dpcore.data.load_csv(data, label=label, categorical=categorical, missing=missing, name=name,
                                schema=schema)


def file_fingerprint(data: bytes) -> str:
    """A short hash naming an uploaded file's bytes (what its schema and results are kept under; not reversible)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def upload_table():
    """The session's upload as a :class:`dpcore.data.RawTable` (read once per file and format options); raises
    DataError for an unreadable file. Kept in session state only."""
    ss = st.session_state
    raw = ss.get("dp_upload")
    if raw is None:
        return None
    declared = get("schema_declared")  # a loaded schema declaring the format (pages/ui/schema_editor.py)
    fmt = getattr(declared, "format", None)
    opts = (_workspace_read_options() or _read_options()) if fmt is None else \
        {"format": fmt, "column_names": None if fmt.header else tuple(declared.names)}  # read as declared
    key = (file_fingerprint(raw), tuple(sorted(opts.items())))

    def read():
        name = ss.get("dp_upload_name") or "upload.csv"
        stem = name.rsplit(".", 1)[0] if "." in name else name
        files = get("upload_files") or put("upload_files", {})
        files[key[0]] = name  # the files of this session, for a workspace
        return dpcore.data.read_table(raw, name=stem, **opts)

    return memo("upload_table", key, read)


def _workspace_read_options() -> dict | None:
    """The declared file format of the loaded workspace's schema for this file name (as ``dpcore run`` reads it),
    or None: a restored upload is read as its public schema declares, never by detection (privacy review item 9)."""
    from dpcore.evaluation.workspace import declared_read_options
    from pages.ui import workspace  # the workspace module builds on this one

    entry = workspace.pending_upload(st.session_state.get("dp_upload_name"))
    try:
        return declared_read_options(entry.get("schema")) if entry else None
    except DPCoreError:  # a bad format: read as the Data page's choices say; the schema is then refused as a misfit
        return None


def upload_table_key() -> tuple | None:
    """What the session's upload table was read from: (file fingerprint, read options); None before it is read."""
    return memo_key("upload_table")


def label_value() -> str | None:
    """The label picked for the upload, or None."""
    label = st.session_state.get("dp_label", NO_LABEL)
    return None if label in (None, "", NO_LABEL) else label


def upload_schema(table):
    """The session's schema for ``table``: the data-derived draft until the user edits it (NOT public until every
    included column is confirmed). Follows the label picker. Each file read in this session keeps its own schema
    (by :func:`upload_table_key`): uploading an earlier file again brings its schema back."""
    label = label_value()
    if label is not None and label not in table.columns:
        label = None
    stored = (get("schemas") or {}).get(upload_table_key())
    if stored is None:
        report = dpcore.data.infer_roles(table, label=label)
        schema = _from_workspace(dpcore.data.draft_schema(table, report), table)
        if schema.label != label and schema.label in table.columns:
            st.session_state.dp_label = schema.label  # the workspace's label (the picker follows it)
        set_upload_schema(schema, report)
        return schema
    schema, report = stored
    if get("schema_table") != upload_table_key():  # another file's schema was shown: the editor starts afresh
        set_upload_schema(schema, report)
    if schema.label != label:
        schema = schema.with_label(label, table)
        set_upload_schema(schema)
    return schema


def _from_workspace(draft, table):
    """The draft, or the schema a loaded workspace keeps for this file (its values read off ``table`` again)."""
    from pages.ui import workspace  # the workspace module builds on this one

    name = st.session_state.get("dp_upload_name")
    entry = workspace.pending_upload(name)
    if entry is None or not entry.get("schema"):
        return draft
    schema, misfit = workspace.restore_schema_checked(entry["schema"], draft, table)
    put("workspace_misfit", (name, misfit) if misfit else None)  # said under the schema (workspace.misfit_note)
    return schema


def set_upload_schema(schema, report=None) -> None:
    """Store the schema of the session's upload (and the inference report shown next to it); the editor starts
    afresh."""
    key = upload_table_key()
    schemas = get("schemas") or put("schemas", {})
    if report is None:
        report = schemas[key][1] if key in schemas else get("roles")
    schemas[key] = (schema, report)
    put("roles", report)
    put("schema_table", key)
    put("schema_version", get("schema_version") + 1)


def upload_schemas() -> dict:
    """The schemas of the files read in this session: {(file fingerprint, read options): (schema, report)}."""
    return dict(get("schemas") or {})


def csv_columns(data: bytes) -> list[str]:
    """Column names of an uploaded table (for the label picker); [] when unreadable."""
    try:
        table = upload_table() if data is st.session_state.get("dp_upload") else dpcore.data.read_table(data)
    except DPCoreError:
        return []
    return [] if table is None else table.columns


def store_upload(data: bytes, name: str) -> None:
    """Keep uploaded bytes in this session only and select them as the current dataset.

    A new file starts from the upload's private defaults (the schema pipeline: a draft schema whose data-derived
    values are flagged NOT public until the user confirms or replaces them, with a per-record fill for missing
    values) and a guessed label; the data settings of the dataset left are kept for it (:func:`select_dataset`).
    """
    ss = st.session_state
    old = ss.get("dp_upload")
    new = old != data
    restored = None
    if new:
        kept: dict = get("upload_settings") or put("upload_settings", {})
        if old is not None:  # the file left keeps its data settings (and its schema, in the schema store)
            on_upload = get("scope_dataset", ss.get("dp_dataset")) == UPLOAD_ID
            left = data_settings() if on_upload else (get("data_settings") or {}).get(UPLOAD_ID)
            if left:
                kept[file_fingerprint(old)] = dict(left)
        restored = kept.get(file_fingerprint(data)) or _workspace_settings(name)
        clear_scope(Scope.UPLOAD)  # nothing read off the file left applies to this one
        ss.dp_upload, ss.dp_upload_name = data, name
        put("upload_note", not restored)  # a workspace or an earlier upload of this file brings its schema back
        # None: guessed when the table is first read (also when a workspace left the label out: it was a guess)
        put("label_guess", False if restored and "dp_label" in restored else None)
        put("upload_lost", False)
    select_dataset(UPLOAD_ID, fresh=new)
    if restored:
        ss.update(restored)


def _workspace_settings(name: str) -> dict | None:
    """The data settings a loaded workspace keeps for a file of this name."""
    from pages.ui import workspace  # the workspace module builds on this one

    entry = workspace.pending_upload(name)
    return None if entry is None else dict(entry["settings"])


def apply_label_guess(table) -> None:
    """Once per new upload, before the label picker is drawn: pick the column that looks like the label."""
    ss = st.session_state
    if slot_key("label_guess") not in ss or get("label_guess") is not None:
        return
    guess = guess_label(table)
    put("label_guess", guess or False)
    ss.dp_label = guess.column if guess else NO_LABEL


def label_guess():
    """The label guessed for the session's upload (a :class:`dpcore.data.roles.LabelGuess`), or None."""
    return get("label_guess") or None


def on_upload() -> None:
    """``on_change`` callback of the file uploader (runs before the widgets of the next run exist)."""
    upload = st.session_state.get("data_upload_widget")
    if upload is not None:
        store_upload(upload.getvalue(), upload.name)


def _load_upload():
    """The upload as a Dataset under the session's settings: the schema pipeline (declared bounds and category
    lists) with feature scaling 'schema', otherwise the inferred roles with data-derived vocabularies."""
    ss = st.session_state
    table = upload_table()
    schema = upload_schema(table)
    use_schema = ss.dp_scaling == FeatureScaling.SCHEMA
    key = (upload_table_key(), use_schema, schema, ss.dp_categorical, ss.dp_missing)

    def load():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpcore.data.WideDataWarning)  # shown as a note on the Data page
            if use_schema:
                return dpcore.data.load_table(table, schema=schema, categorical=ss.dp_categorical,
                                              missing=ss.dp_missing)
            return dpcore.data.load_table(table, label=schema.label, roles=schema.roles,
                                          categorical=ss.dp_categorical, missing=ss.dp_missing,
                                          label_rule=schema.label_rule)  # a declared label: column > t

    return memo("upload_parsed", key, load)


def current_dataset():
    """The chosen :class:`dpcore.data.Dataset`, or None after showing ``st.error``."""
    ss = st.session_state
    try:
        if ss.dp_dataset == UPLOAD_ID:
            if ss.get("dp_upload") is None:
                select_dataset(DEFAULTS["dp_dataset"])  # with its own data settings, not the upload's
                return _load_builtin(ss.dp_dataset)
            return _load_upload()
        return _load_builtin(ss.dp_dataset)
    except DPCoreError as exc:
        st.error(plain_words(str(exc)))
        return None


def preprocess_options() -> dict:
    """Keyword arguments of ``dpcore.data.preprocess`` for the session's settings.

    The session seed goes to both preprocessing and the mechanism: each derives its own child stream from it
    (``dpcore.core.seeding``), so the DP mean's noise and the mechanism's noise are independent.
    """
    from dpcore.evaluation.workspace import preprocess_options as options_for  # `dpcore run`'s too (issue 35)

    ss = st.session_state
    return options_for(data_settings(), seed=int(ss.dp_seed), neighbouring=ss.dp_neighbouring)


def auto_bound_from_data(dataset, prepared) -> bool:
    """Whether the automatic B of ``prepared`` was derived from the records: B = max‖x‖ ('divide all by max
    norm'), or a default that counts columns whose existence was read off the data (a vocabulary or roles from the
    data — a non-private load step). Such a number stays marked so when it is copied into the bound widget."""
    if prepared.info.get("norm_mode") == NormMode.MAX_NORM:
        return True
    return not all(entry.private for entry in getattr(dataset, "load_ledger", ()))


def dataset_key() -> tuple:
    ss = st.session_state
    if ss.dp_dataset == UPLOAD_ID:
        return ("upload", memo_key("upload_parsed"))
    return ("builtin", ss.dp_dataset)


def current_prepared():
    """The preprocessed data for the session's settings, or None after showing ``st.error``."""
    ds = current_dataset()
    if ds is None:
        return None
    opts = preprocess_options()
    key = dataset_key()
    shared = key[0] == "builtin" and server_cache.enabled()

    def prepare():
        if shared:  # public built-in data: preprocessed once per server (pages/ui/server_cache.py); never an upload
            return server_cache.builtin_prepared(key[1], tuple(sorted(opts.items())))
        with warnings.catch_warnings():
            # Non-private steps are shown in red in the ledger on every page; the warning would only go to the log.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return dpcore.data.preprocess(ds, **opts)

    try:
        return memo("prepared", (dataset_key(), tuple(sorted(opts.items()))), prepare)
    except DPCoreError as exc:
        st.error(plain_words(str(exc)))
        return None


def mechanism_rows(prepared, neighbouring: str | None = None) -> int:
    """Rows that reach the mechanisms in a sweep under ``neighbouring`` (default: the session's relation): all of
    them, less the SVM's held-out rows when the data declares a label — the rule of
    :func:`dpcore.evaluation.metrics.evaluation_split` (:func:`~dpcore.evaluation.metrics.mechanism_row_count`),
    without copying the data. It reads no label value: a label with one class holds the same rows out."""
    if neighbouring is None:
        neighbouring = st.session_state.get("dp_neighbouring", Neighbouring.REPLACE.value)
    return mechanism_row_count(prepared, neighbouring)


def held_out_caption(prepared) -> str:
    """Why a results table's n is smaller than the data's (rows held out for the SVM); empty when it is not."""
    return held_out_note(prepared.n, mechanism_rows(prepared))


def current_dataset_name() -> str:
    ss = st.session_state
    return ss.get("dp_upload_name") or "upload" if ss.dp_dataset == UPLOAD_ID else ss.dp_dataset
