"""Schema editor of the Data page: column roles, public bounds and category lists of an uploaded table.

Logic (:func:`schema_table`, :func:`apply_edits`, :func:`structure_status`) is plain pandas and testable without
Streamlit; :func:`render` lays it out. A value read off the data stays marked *from data* (red) until the user types
a value or ticks *public* for the row (green). The file format, the inferred roles and the guessed label are
decisions read off the data too: they stay red until the user confirms them (*Confirm format, roles and label*) or
loads a schema that declares them. Edits are folded into the session's schema at once and the editor starts afresh
(``schema_editor_<version>``), so the table always shows the schema in effect.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore.data import ColumnSchema, RawTable, RoleReport, Schema, SchemaError
from dpcore.data.schema import draft_column
from dpcore.exceptions import DPCoreError
from dpcore.explain.display import plain_words
from dpcore.vocabulary import ColumnRole
from pages import ui

EDITOR_PREFIX = "schema_editor_"
#: Roles offered in the editor (the label is chosen with the label picker).
ROLE_OPTIONS = [r.value.replace("_", " ") for r in ColumnRole if r != ColumnRole.LABEL]
PUBLIC = "public"
FROM_DATA = "from data: "
EXCLUDED = "not a feature"
#: Larger tables skip the status colours (styling every cell of a very wide table slows each rerun).
STYLED_ROWS = 1000


def _categories_text(cats: tuple[str, ...] | None) -> str:
    if not cats:
        return ""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cats)
    return buf.getvalue()


def _parse_categories(text: object, column: str) -> tuple[str, ...]:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    cats = [c.strip() for c in next(csv.reader([text], skipinitialspace=True), []) if c.strip()]
    if not cats:
        raise SchemaError(f"schema column {column!r}, field 'categories': give the public categories separated by "
                          "commas (quote a category that contains a comma).")
    return tuple(cats)


def _status(col: ColumnSchema) -> str:
    if not col.is_feature:
        return EXCLUDED
    if col.values_public:
        return PUBLIC
    used = ["categories"] if col.is_categorical else ["lower", "upper"]
    return FROM_DATA + ", ".join(f for f in used if f in col.from_data)


def _role_name(role: ColumnRole) -> str:
    """A role as the editor shows it ("free text", not the identifier free_text); parsed back by coerce_role."""
    return role.value.replace("_", " ")


def schema_table(schema: Schema, report: RoleReport | None = None) -> pd.DataFrame:
    """One row per column (the label excluded) for ``st.data_editor``."""
    rows = []
    for col in schema.columns:
        if col.role == ColumnRole.LABEL:
            continue
        reason = ""
        if report is not None:
            try:
                d = report[col.name]
                reason = plain_words(d.reason) if d.role == col.role else \
                    f"set by you (inferred: {_role_name(d.inferred)})"
            except KeyError:
                reason = "from the loaded schema"
        rows.append({"column": col.name, "role": _role_name(col.role),
                     "lower": math.nan if col.lower is None else col.lower,
                     "upper": math.nan if col.upper is None else col.upper,
                     "categories": _categories_text(col.categories),
                     "public": col.is_feature and col.values_public,
                     "status": _status(col), "reason": reason})
    frame = pd.DataFrame(rows, columns=["column", "role", "lower", "upper", "categories", "public", "status", "reason"])
    return frame.astype({"lower": "float64", "upper": "float64", "public": "bool", "categories": "object"})


def _changed(a: object, b: object) -> bool:
    na = a is None or (isinstance(a, float) and math.isnan(a))
    nb = b is None or (isinstance(b, float) and math.isnan(b))
    if na or nb:
        return na != nb
    return a != b


def _apply_row(col: ColumnSchema, before: pd.Series, after: pd.Series, table: RawTable) -> ColumnSchema:
    if _changed(before["role"], after["role"]):
        return draft_column(table, col.name, after["role"])  # new role: new draft values (from data)
    fields: dict = {}
    confirmed: set[str] = set()
    for fld in ("lower", "upper"):
        if _changed(before[fld], after[fld]):
            value = after[fld]
            fields[fld] = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
            confirmed.add(fld)
    if _changed(before["categories"], after["categories"]):
        fields["categories"] = _parse_categories(after["categories"], col.name)
        confirmed.add("categories")
    from_data = set(col.from_data) - confirmed
    if _changed(before["public"], after["public"]):  # ticked: the row's values and its role are declared public
        used = {"categories"} if col.is_categorical else {"lower", "upper"}
        from_data = from_data - used - {"role"} if bool(after["public"]) else from_data | (used - confirmed)
    return ColumnSchema(col.name, col.role, lower=fields.get("lower", col.lower), upper=fields.get("upper", col.upper),
                        categories=fields.get("categories", col.categories), from_data=frozenset(from_data))


def apply_edits(schema: Schema, before: pd.DataFrame, after: pd.DataFrame, table: RawTable) -> Schema:
    """The schema with the editor's changes: a typed value is declared public, a ticked row confirms its values,
    a new role drafts new values from the data. Raises :class:`SchemaError` (naming column and field)."""
    changed = np.zeros(len(before), dtype=bool)
    for c in ("role", "lower", "upper", "categories", "public"):
        b, a = before[c].to_numpy(dtype=object), after[c].to_numpy(dtype=object)
        changed |= np.array([_changed(x, y) for x, y in zip(b, a)], dtype=bool) if c in ("lower", "upper") else b != a
    for i in np.flatnonzero(changed):
        b, a = before.iloc[i], after.iloc[i]
        schema = schema.replace_column(_apply_row(schema[b["column"]], b, a, table))
    return schema


def merge_loaded(loaded: Schema, table: RawTable) -> Schema:
    """A schema read from a file, checked against ``table``: table columns it does not name are excluded."""
    from dpcore.data.encode import check_columns

    check_columns(table, loaded)
    cols = [c for c in loaded.columns if c.name in table.columns]
    cols += [ColumnSchema(name, ColumnRole.EXCLUDED) for name in table.columns if name not in loaded]
    order = {name: i for i, name in enumerate(table.columns)}
    return replace(loaded, columns=tuple(sorted(cols, key=lambda c: order[c.name])))


def structure_status(schema: Schema) -> tuple[bool, str]:
    """(public, one line): whether the file format, the roles and the label are declarations, and what is not."""
    fmt = schema.file_format.describe()
    if schema.format_public and schema.structure_public:
        return True, f"File format ({fmt.replace('-separated', ' separator')}), column roles and label: declared."
    parts = []
    if not schema.format_public:
        parts.append("the file format (shown above) was detected from the data" if schema.format is not None
                     else "no file format is declared")
    roles = schema.roles_from_data
    if roles:
        shown = ", ".join(roles[:6]) + (" …" if len(roles) > 6 else "")
        parts.append(f"the roles of {len(roles)} column(s) were inferred from the data ({shown})")
    if "label" in schema.from_data:
        parts.append("the label was guessed from the data")
    return False, "; ".join(parts)


def _confirm_structure() -> None:
    schema = ui.upload_schema(ui.upload_table())
    ui.set_upload_schema(schema.structure_confirmed())


def _on_schema_upload() -> None:
    ss = st.session_state
    upload = ss.get("schema_upload_widget")
    if upload is None:
        return
    try:
        table = ui.upload_table()
        schema = merge_loaded(dpcore.data.load_schema(upload.getvalue()), table)
    except DPCoreError as exc:
        ss["_dp_schema_error"] = f"{upload.name}: {exc}"
        return
    ui.set_upload_schema(schema)
    ss.dp_label = schema.label or "(none)"
    ss["_dp_schema_loaded"] = upload.name


def _reset(table: RawTable) -> None:
    report = dpcore.data.infer_roles(table, label=ui.label_value())
    ui.set_upload_schema(dpcore.data.draft_schema(table, report), report)


def _color(value: str) -> str:
    """Cell style of the status column: green when public, red when a value came from the data."""
    if value == PUBLIC:
        return "background-color: rgba(34,197,94,0.22); color: #166534"
    if value.startswith(FROM_DATA):
        return "background-color: rgba(239,68,68,0.18); color: #991b1b"
    return "color: #888888"


def render(table: RawTable, schema: Schema) -> None:
    """The schema editor with its status line, download, upload and reset."""
    ss = st.session_state
    report = ss.get("_dp_roles")
    features = schema.features
    open_cols = schema.values_from_data
    declared, structure = structure_status(schema)
    if declared:
        st.markdown(f":green[:material/check_circle: {structure}]")
    else:
        st.markdown(f":red[:material/warning: **Not yet public: {structure}.**] One record can change such a "
                    "decision, so check the file format, the roles and the label, then confirm them.")
        st.button("Confirm format, roles and label", key="schema_confirm_structure", on_click=_confirm_structure,
                  icon=":material/verified:", help="Declare the file format, every column's role and the label as "
                                                   "shown: public knowledge (how the file was exported, what each "
                                                   "column is), not read off this data.")
    if not features:
        st.warning("No column is a feature: set a role to numeric, binary or categorical.")
    elif open_cols:
        shown = ", ".join(open_cols[:8]) + (" …" if len(open_cols) > 8 else "")
        st.markdown(f":red[:material/warning: **{len(open_cols)} of {len(features)} feature columns use bounds or "
                    f"categories read off the data** ({shown}).] Replace them with values from public knowledge "
                    "(a codebook, the instrument's range), or tick *public* where the shown value is public.")
    else:
        st.markdown(f":green[:material/check_circle: **All {len(features)} feature columns are public.**] The "
                    "ledger below says whether the whole pipeline is.")
    if ss.get("_dp_schema_error"):
        st.error(ss.pop("_dp_schema_error"))
    if ss.get("_dp_schema_loaded"):
        st.success(f"Loaded the schema {ss.pop('_dp_schema_loaded')}.")
    before = schema_table(schema, report)
    key = f"{EDITOR_PREFIX}{ss.get('_dp_schema_version', 0)}"
    shown = before.style.map(_color, subset=["status"]) if len(before) <= STYLED_ROWS else before
    after = st.data_editor(
        shown, key=key, hide_index=True, num_rows="fixed", width="stretch",
        disabled=["column", "status", "reason"],
        column_config={
            "column": st.column_config.TextColumn("column", pinned=True),
            "role": st.column_config.SelectboxColumn("role", options=ROLE_OPTIONS, required=True,
                                                     help="numeric, binary and categorical columns are features"),
            "lower": st.column_config.NumberColumn("lower", help="public lower bound (numbers)", format="%.6g"),
            "upper": st.column_config.NumberColumn("upper", help="public upper bound (numbers)", format="%.6g"),
            "categories": st.column_config.TextColumn("categories", help="public category list, comma-separated",
                                                      width="medium"),
            "public": st.column_config.CheckboxColumn("public", help="tick when every value in this row is public "
                                                                     "knowledge (not read off this data)"),
            "status": st.column_config.TextColumn("status"),
            "reason": st.column_config.TextColumn("why this role (from the data)", width="large"),
        },
    )
    try:
        new = apply_edits(schema, before, pd.DataFrame(after), table)
    except DPCoreError as exc:
        st.error(plain_words(str(exc)))
        new = schema
    if new != schema:
        ui.set_upload_schema(new)
        st.rerun()
    c1, c2, c3 = st.columns([2, 3, 1])
    stem = table.name or "upload"
    c1.download_button("Download schema (YAML)", schema.to_yaml(), file_name=f"{stem}_schema.yaml",
                       mime="application/x-yaml", on_click="ignore", key="dl_schema", icon=":material/download:")
    c2.file_uploader("Load a schema (YAML/JSON)", type=["yaml", "yml", "json"], key="schema_upload_widget",
                     on_change=_on_schema_upload,
                     help="A schema you wrote or edited: its values are taken as declared.")
    c3.button("Reset to draft", key="schema_reset", on_click=_reset, args=(table,),
              help="Start again from the roles and values read off the data.")
