"""A workspace file: the session's settings and the schemas of its uploads — never the data — saved as one versioned
YAML file and loaded again on the Data page (issue 19, "A workspace that survives").

What is written: the shared settings (ε range, δ, k, trials, mechanisms, …; not the run seed), each built-in
dataset's data settings (public data), and per uploaded file its name, its data settings and its schema. A file is
recognised by its name when it is uploaded again — not by a hash of its bytes: a hash lets anyone who knows all
records but one test guesses of the last one offline. **Nothing read off an upload goes into the file** unless the
user declared it public (privacy review items 10 and 11):

* a schema value still marked ``from_data`` (a bound, a category list, a guessed role, a detected format field);
* a guessed label: neither the schema's ``label`` nor its column's role ``label`` nor the upload's ``dp_label``
  setting (the guess — or "no label" — is a function of the records);
* a column that carries no declaration (its name is all there would be, and a name is read off the file's header
  with a format that may itself be detected);
* a norm bound read off the data, and an automatic B (recomputed; a stale one may have been read off the data).

When the file is uploaded again those values are read off it afresh (the label is guessed again) — and stay marked
``from_data`` (not private), so a round trip never turns a number read off the data into a public one.

Uploads themselves are never kept (by design): after a browser reload the link still says ``data=upload``, and the
Data and Explore pages say what was lost and how to restore it (:func:`lost_upload_note`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dpcore.data import RawTable, Schema
from dpcore.data.roles import guess_label
from dpcore.data.schema import COLUMN_FIELDS
from dpcore.evaluation.workspace import (  # noqa: F401 - the pure part, shared with `dpcore run` (one parser)
    FORMAT_KEY,
    HEADER,
    VERSION,
    VIEW,
    WorkspaceError,
    parse,
    restore_schema_checked,
    to_text,
    view_section,
)
from dpcore.vocabulary import NO_LABEL
from pages.ui import state
from pages.ui.state import DATA_SETTINGS, MECH_GROUPS, SETTINGS, UPLOAD_ID, mech_key, slot_key

#: Settings shared by every dataset that a workspace carries (the run seed is left out: on an upload a known seed
#: would make every noise draw a public constant — privacy review item 12).
SHARED: tuple[str, ...] = tuple(s.key for s in SETTINGS if s.key not in DATA_SETTINGS
                                and s.key not in ("dp_dataset", "dp_seed"))
LOST_NOTE = (
    "**The uploaded file of this link is not in this session.** An uploaded file lives only in the memory of the "
    "browser session it was uploaded in — never on disk, never in a cache shared with other sessions, never in "
    "the link — so a browser reload (or a new tab) starts without the file, its schema and its data settings, "
    "and shows a built-in dataset instead. **To restore:** upload the same file on the Data page "
    "and load your workspace file (Data page → *Workspace*: saved with *Download workspace*).")


# ------------------------------------------------------------------------------------------------
# writing
def _plain(value: Any) -> Any:
    """A setting's value as YAML writes it (tuples as lists, enum members as their values)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def label_declared(schema: Schema | None) -> bool:
    """Whether ``schema``'s label (a column or "no label") is the user's declaration, not the guesser's."""
    return schema is not None and "label" not in schema.from_data


def public_schema_dict(schema: Schema) -> dict:
    """``schema`` as a dict without anything still read off the data: values and format fields marked
    ``from_data`` are left out (their markers stay, so a reload reads them again as not public); a guessed label
    is left out with its column's role ``label`` (the top-level marker ``from_data: [label]`` stays); a column left
    with no declared field is left out whole (its name is read off the file's header)."""
    out = schema.to_dict()
    guessed_label = None if label_declared(schema) else schema.label
    columns = []
    for column in out["columns"]:
        marked = set(column.get("from_data", ()))
        if column["name"] == guessed_label:
            marked.add("role")  # role 'label' is the guess itself
        for fld in marked & set(COLUMN_FIELDS):  # a guessed role too (e.g. 'constant': every record alike)
            column.pop(fld, None)
        if set(column) - {"name", "from_data"}:  # something the user declared
            columns.append(column)
    out["columns"] = columns
    if not label_declared(schema):
        out.pop("label", None)
    fmt = out.get("format")
    if isinstance(fmt, dict):
        for fld in fmt.get("from_data", ()):
            fmt.pop(fld, None)
    return out


def public_data_settings(settings: Mapping[str, Any], *, label_public: bool = False) -> dict[str, Any]:
    """An upload's data settings without what was read off the data: the label unless ``label_public`` (a guess is
    made again), and a norm bound read off the data or automatic (it is read again, chosen again or recomputed)."""
    out = {key: _plain(settings[key]) for key in DATA_SETTINGS if key in settings}
    if not label_public:
        out.pop("dp_label", None)
    automatic = out.get("dp_norm_auto", True)
    if automatic or out.get("dp_norm_from_data"):
        out.pop("dp_norm_bound", None)
        if not automatic:
            out["norm_bound_from_data_left_out"] = True
        out["dp_norm_auto"], out["dp_norm_from_data"] = True, False
    return out


def _upload_entries(session: Mapping) -> list[dict]:
    ss = session
    files: dict[str, str] = state.get("upload_files", session=ss) or {}
    schemas: dict = state.get("schemas", session=ss) or {}
    kept: dict = state.get("upload_settings", session=ss) or {}
    current = state.get("upload_table", session=ss)
    current_fp = None if current is None else current[0][0]
    on_upload = ss.get("dp_dataset") == UPLOAD_ID
    entries = []
    for fp, name in files.items():
        if fp == current_fp and on_upload:
            settings = {key: ss[key] for key in DATA_SETTINGS if key in ss}
        elif fp == current_fp:
            settings = (state.get("data_settings", session=ss) or {}).get(UPLOAD_ID) or kept.get(fp) or {}
        else:
            settings = kept.get(fp) or {}
        keys = [k for k in schemas if k[0] == fp]
        if current is not None and current[0] in keys:
            keys = [current[0]]
        schema = schemas[keys[-1]][0] if keys else None
        public = public_data_settings(settings, label_public=label_declared(schema))
        if label_declared(schema):
            public["dp_label"] = schema.label or NO_LABEL  # the declared label, as the schema has it
        entry = {"file": name, "settings": public}
        if schema is not None:
            entry["schema"] = public_schema_dict(schema)
        entries.append(entry)
    return entries


def build(session: Mapping | None = None) -> dict:
    """The workspace of ``session`` (default: this session) as a plain dict."""
    ss = st.session_state if session is None else session
    stored: dict = dict(state.get("data_settings", session=ss) or {})
    current = ss.get("dp_dataset")
    if current not in (None, UPLOAD_ID):
        stored[current] = {key: ss[key] for key in DATA_SETTINGS if key in ss}
    return {
        FORMAT_KEY: VERSION,
        "settings": {key: _plain(ss[key]) for key in SHARED if key in ss},
        "mechanisms": {str(g): [str(m) for m in ss[mech_key(g)]] for g in MECH_GROUPS if mech_key(g) in ss},
        "datasets": {did: {k: _plain(v) for k, v in values.items()} for did, values in stored.items()
                     if did != UPLOAD_ID},
        "uploads": _upload_entries(ss),
        VIEW: _view(ss),
    }


def _view(ss: Mapping) -> dict:
    """What Explore shows (``dpcore run`` reproduces it): a built-in dataset with its run seed (public data, as in
    a link), or the uploaded file's name — never an upload's seed (privacy review item 12)."""
    if ss.get("dp_dataset") == UPLOAD_ID and ss.get("dp_upload_name"):
        return view_section(None, upload_name=ss["dp_upload_name"])
    seed = ss.get("dp_seed")
    return view_section(ss.get("dp_dataset") or state.DEFAULT_DATASET, seed=None if seed is None else int(seed))


# ------------------------------------------------------------------------------------------------
# reading (the file is parsed by dpcore.evaluation.workspace.parse)
def _checked(key: str, value: Any) -> Any:
    """A setting's value from a file, in the type of its default (and through its link codec when it has one)."""
    setting = next(s for s in SETTINGS if s.key == key)
    default = setting.default
    if isinstance(default, tuple):
        value = tuple(value) if isinstance(value, list) else value
    if isinstance(default, bool) != isinstance(value, bool):
        raise ValueError(key)
    if isinstance(default, float) and isinstance(value, int):
        value = float(value)
    if not isinstance(value, type(default)):
        raise ValueError(key)
    if setting.decode is not None:
        value = setting.decode(setting.encode(value))
    return value


def _settings(values: Mapping, allowed: tuple[str, ...], ignored: list[str]) -> dict[str, Any]:
    out = {}
    for key, value in values.items():
        if key not in allowed:
            if key != "norm_bound_from_data_left_out":
                ignored.append(str(key))
            continue
        try:
            out[key] = _checked(key, value)
        except (ValueError, TypeError):
            ignored.append(str(key))
    return out


def _known_mechanisms(group: str, ids: Any) -> list[str]:
    known = {m.id for m in state.selectable_mechanisms(group)}
    return [m for m in ids if m in known] if isinstance(ids, list) else []


def apply(workspace: Mapping, session: MutableMapping | None = None) -> list[str]:
    """Load a parsed workspace into ``session`` (default: this session; call it from a callback); returns notes."""
    ss = st.session_state if session is None else session
    ignored: list[str] = []
    for key, value in _settings(workspace.get("settings") or {}, SHARED, ignored).items():
        ss[key] = value
        ss.pop(state.bound_key(key), None)  # a bound widget shows the loaded value
    for group, ids in (workspace.get("mechanisms") or {}).items():
        if group in MECH_GROUPS:
            ss[mech_key(group)] = _known_mechanisms(group, ids)
    store: dict = state.get("data_settings", session=ss) or {}
    ss[slot_key("data_settings")] = store
    builtin = {d.id for d in state.dataset_infos()}
    for did, values in (workspace.get("datasets") or {}).items():
        if did not in builtin:
            ignored.append(f"datasets.{did}")
            continue
        loaded = _settings(values or {}, DATA_SETTINGS, ignored)
        store[str(did)] = {**state.private_defaults(str(did)), **loaded}
        if ss.get("dp_dataset") == did:
            ss.update(loaded)
    notes = _apply_uploads(workspace.get("uploads") or [], ss, ignored, store)
    if ignored:
        notes.append(f"Ignored unknown or invalid setting(s): {', '.join(sorted(set(ignored)))}.")
    return notes


def _apply_uploads(entries: list, ss: MutableMapping, ignored: list[str], store: dict) -> list[str]:
    """Keep each upload's settings and schema, by file name, until that file is uploaded (now, if it is the
    session's file; ``store``: the session's data settings of the datasets left)."""
    pending: dict = state.get("workspace_uploads", session=ss) or {}
    ss[slot_key("workspace_uploads")] = pending
    notes = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) or not entry["file"]:
            ignored.append("uploads (an entry without a file name)")
            continue
        loaded = _settings(entry.get("settings") or {}, DATA_SETTINGS, ignored)
        settings = {**state.private_defaults(UPLOAD_ID), **loaded}
        if "dp_label" not in loaded:
            del settings["dp_label"]  # a guessed label is not in a workspace: it is guessed again from the file
            notes.append(f"{entry['file']}: its label had been guessed from the data, so it is not in a workspace; "
                         "it is guessed again from the file (and stays marked not public until you pick it).")
        pending[entry["file"]] = {"file": entry["file"], "settings": settings, "schema": entry.get("schema")}
        if (entry.get("settings") or {}).get("norm_bound_from_data_left_out"):
            notes.append(f"{entry.get('file')}: its norm bound had been read off the data and is not in a "
                         "workspace; B is automatic now (a bound read off the data can be taken again on the Data "
                         "page, and stays marked not private).")
    current = state.get("upload_table", session=ss)
    if current is not None and ss.get("dp_upload_name") in pending:
        fp = current[0][0]
        settings = dict(pending[ss["dp_upload_name"]]["settings"])
        if "dp_label" not in settings:  # guessed again now, so the redrafted schema has the guess (from_data)
            guess = guess_label(current[1])
            ss[slot_key("label_guess")] = guess or False
            settings["dp_label"] = guess.column if guess else NO_LABEL
        if ss.get("dp_dataset") == UPLOAD_ID:
            ss.update(settings)
        else:  # the upload's settings wait in the store until it is the dataset again
            store[UPLOAD_ID] = {**(store.get(UPLOAD_ID) or state.private_defaults(UPLOAD_ID)), **settings}
        schemas: dict = state.get("schemas", session=ss) or {}
        for key in [k for k in schemas if k[0] == fp]:
            del schemas[key]  # the workspace's schema replaces the session's (applied when the table is read)
        ss[slot_key("schema_version")] = state.get("schema_version", session=ss) + 1
    names = ", ".join(p["file"] for p in pending.values())
    if pending:
        notes.append(f"Schemas and settings kept for {names}: upload the file(s) to use them (uploads are never "
                     "stored).")
    return notes


def pending_upload(name: str | None) -> dict | None:
    """The loaded workspace's entry for an uploaded file of this name (None when there is none)."""
    return (state.get("workspace_uploads") or {}).get(name) if name else None


def restore_schema(saved: Mapping, draft: Schema, table: RawTable | None = None) -> Schema:
    """The saved schema on the table whose ``draft`` is given (the draft where it does not fit: see
    :func:`restore_schema_checked`)."""
    return restore_schema_checked(saved, draft, table)[0]


# ------------------------------------------------------------------------------------------------
# widgets
def _on_load() -> None:
    """``on_change`` of the workspace uploader."""
    upload = st.session_state.get("workspace_widget")
    if upload is None:
        return
    try:
        notes = apply(parse(upload.getvalue()))
    except WorkspaceError as exc:
        state.put("workspace_note", ("error", f"{upload.name}: {exc}"))
        return
    state.put("workspace_note", ("success", f"Loaded the workspace {upload.name}. " + " ".join(notes)))


def render() -> DeltaGenerator:
    """The Data page's workspace panel: download the session's settings and schemas, or load a workspace file.
    Returns the place of the download button, filled by :func:`download_button` once the page has drafted the
    upload's schema (so the file is this run's final state)."""
    with st.expander("Workspace: save or restore settings and schemas (never data)", icon=":material/save:"):
        st.caption("One YAML file with the settings of every page and the schema of each file uploaded in this "
                   "session — never the data, and no value read off an upload (a bound, a category list, a guessed "
                   "role or label) unless you declared it public. "
                   "Uploads live in this session's memory only: after a reload, upload the file again and load this "
                   "workspace.")
        left, right = st.columns(2)
        slot = left.empty()
        right.file_uploader("Load a workspace file", type=["yaml", "yml", "json"], key="workspace_widget",
                            on_change=_on_load, help="A file that 'Download workspace' wrote.")
        note = state.drop("workspace_note")
        if note:
            kind, text = note
            (st.error if kind == "error" else st.success)(text)  # vocabulary: not a choice
    return slot


def download_bytes(session: Mapping | None = None) -> bytes:
    """The workspace file of ``session`` (default: this session), as the download button carries it."""
    return to_text(build(session)).encode("utf-8")


def download_button(slot: DeltaGenerator) -> None:
    """The "Download workspace" button in ``slot`` (from :func:`render`), its file built now, during the script run.

    Never a callable ``data=``: Streamlit runs a callable on the click, in a server thread outside the session, where
    ``st.session_state`` is empty — the file came out with no settings, mechanisms or uploads (issue 32). Building
    the file is cheap (a YAML dump of the settings and the uploads' schemas)."""
    slot.download_button("Download workspace", download_bytes(), file_name="dpcore-workspace.yaml",
                         mime="application/x-yaml", on_click="ignore", key="workspace_download",
                         icon=":material/download:")


def misfit_note() -> None:
    """Under the upload's schema: say that a loaded workspace's schema for this file did not fit it, and why."""
    misfit = state.get("workspace_misfit")
    if misfit and misfit[0] == st.session_state.get("dp_upload_name"):
        st.warning(f"The loaded workspace's schema for **{misfit[0]}** does not fit this file, so none of it was "
                   f"applied: {misfit[1]} The schema below is the draft read off the file (NOT public). Is this the "
                   "file the workspace was saved with? Declare the schema below, or load a workspace saved for this "
                   "file.", icon=":material/warning:")


def lost_upload_note() -> None:
    """On Data and Explore: say that the link's upload is gone (a reload) and how to restore it."""
    if state.get("upload_lost") and st.session_state.get("dp_upload") is None:
        st.warning(LOST_NOTE, icon=":material/restore_page:")
