"""Schema editor of the Data page: column roles, public bounds and category lists of an uploaded table.

Logic (:func:`schema_table`, :func:`apply_cell_edits`, :func:`bulk_update`, :func:`match_columns`,
:func:`clamped_shares`, :func:`structure_status`) is plain pandas and testable without Streamlit; :func:`render` lays
it out. What the user types, sets in bulk or imports from a codebook is their declaration (public, green); a value
the app filled in from the data stays marked *from data* (red) until the user types over it or ticks *public* for
the row. The file format, the inferred roles and the guessed label are decisions read off the data too: they stay
red until the user confirms them (*Confirm format, roles and label*) or loads a schema that declares them.

Wide tables: one filter (name patterns and roles) narrows both the grid and the bulk selection; the grid grows with
the table up to :data:`GRID_MAX_ROWS` rows; its edits are collected in a form and saved at once (typing 40 values
reruns the page once, not 40 times). Saved edits are folded into the session's schema and the editor starts afresh
(``schema_editor_<version>``), so the table always shows the schema in effect.

The label: :func:`label_rule_form` (under the Data page's label picker, open when the picked column is refused as
continuous) declares a binary label "COLUMN > value" (or "≠ 0") in the upload's schema; the value it offers is the
middle of the column's declared public bounds or nothing, never a value read off the data.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore.data import ColumnSchema, RawTable, RoleReport, Schema, SchemaError
from dpcore.data.diagnostics import BOUND_FORMAT, CLAMP_WARN_SHARE, NOT_PRIVATE_LABEL, as_shown, format_share
from dpcore.data.reading import DELIMITER_NAMES, DELIMITERS, FileFormat, cell_text, declared_codec, is_sep_line
from dpcore.data.roles import check_label_kind, numeric_column
from dpcore.data.schema import (
    apply_codebook,
    declare_values,
    draft_column,
    label_threshold_default,
    read_codebook,
)
from dpcore.exceptions import DPCoreError
from dpcore.explain.display import plain_words
from dpcore.vocabulary import NO_LABEL, ColumnRole
from pages import ui

EDITOR_PREFIX = "schema_editor_"
#: Roles offered in the editor (the label is chosen with the label picker).
ROLE_OPTIONS = [r.value.replace("_", " ") for r in ColumnRole if r != ColumnRole.LABEL]
PUBLIC = "public"
FROM_DATA = "from data: "
EXCLUDED = "not a feature"
#: Larger tables skip the status colours (styling every cell of a very wide table slows each rerun).
STYLED_ROWS = 1000
#: The grid grows with the table up to this many rows, then scrolls.
GRID_MAX_ROWS = 30
GRID_ROW_PX = 35
#: The grid's columns, the status first (visible next to the name however wide the names are).
TABLE_COLUMNS = ["column", "role", "status", "lower", "upper", "public", "clamped", "categories", "reason"]
#: Widget keys of the filter and the bulk form (plain widget state).
FILTER_KEY, ROLE_FILTER_KEY = "schema_filter", "schema_role_filter"
#: Widget keys of the codebook uploader and the schema download (``schema_<name>``: pages/ui/state.py's scheme).
CODEBOOK_KEY, DOWNLOAD_KEY = "schema_codebook_upload", "schema_download"
#: Session slots (pages/ui/state.py): a loaded schema that declares the file format — uploads are read with that
#: format (nothing detected), also a file that detection cannot read and the next file uploaded (read by
#: :func:`pages.ui.datasets.upload_table`) — and the table keys it was already applied to (a later edit is kept).
DECLARED, APPLIED, NOTE = "schema_declared", "schema_declared_applied", "schema_note"
VALUE_FIELDS = ("lower", "upper", "categories")
#: At most this many skipped codebook rows are listed (then "… and N more").
MAX_SKIPPED_SHOWN = 12
TYPED_RULE = ("**What counts as public:** a value you type, paste, set in bulk or import from a codebook is your "
              "declaration — public (green), even when it equals the data's value. Values the app filled in from "
              "the data stay red until you type over them or tick *public*.")
PASTE_TIP = ("Paste works: copy a block of cells from a spreadsheet, click the first cell here and press Ctrl+V "
             "(Cmd+V on a Mac). Edits are kept until you press *Save the table's edits* — one rerun for all of them.")


def _categories_text(cats: tuple[str, ...] | None) -> str:
    if not cats:
        return ""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cats)
    return buf.getvalue()


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        (isinstance(value, str) and not value.strip())


def _parse_categories(text: object, column: str) -> tuple[str, ...]:
    text = "" if _is_blank(text) else str(text)
    cats = [c.strip() for c in next(csv.reader([text], skipinitialspace=True), []) if c.strip()]
    if not cats:
        raise SchemaError(f"schema column {column!r}, field 'categories': give the public categories separated by "
                          "commas (quote a category that contains a comma).")
    return tuple(cats)


def _status(col: ColumnSchema) -> str:
    """"public" only when neither the row's role nor a value it uses was read off the data (privacy review R4-6)."""
    if not col.is_feature:
        return EXCLUDED
    used = ["categories"] if col.is_categorical else ["lower", "upper"]
    open_fields = [f for f in ("role", *used) if f in col.from_data]
    return FROM_DATA + ", ".join(open_fields) if open_fields else PUBLIC


def _role_name(role: ColumnRole) -> str:
    """A role as the editor shows it ("free text", not the identifier free_text); parsed back by coerce_role."""
    return role.value.replace("_", " ")


def _reason(col: ColumnSchema, report: RoleReport | None) -> str:
    if report is None:
        return ""
    try:
        d = report[col.name]
    except KeyError:
        return "from the loaded schema"
    return plain_words(d.reason) if d.role == col.role else f"set by you (inferred: {_role_name(d.inferred)})"


def _clamped_text(share: float | None) -> str:
    if share is None:
        return ""
    return ("⚠ " if share > CLAMP_WARN_SHARE else "") + format_share(share)


def schema_table(schema: Schema, report: RoleReport | None = None,
                 clamped: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per column (the label excluded) for ``st.data_editor``; ``clamped``: :func:`clamped_shares`."""
    rows = []
    for col in schema.columns:
        if col.role == ColumnRole.LABEL:
            continue
        rows.append({"column": col.name, "role": _role_name(col.role),
                     "lower": math.nan if col.lower is None else col.lower,
                     "upper": math.nan if col.upper is None else col.upper,
                     "categories": _categories_text(col.categories),
                     "public": col.is_feature and col.values_public,
                     "status": _status(col), "clamped": _clamped_text((clamped or {}).get(col.name)),
                     "reason": _reason(col, report)})
    frame = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    return frame.astype({"lower": "float64", "upper": "float64", "public": "bool", "categories": "object"})


def clamped_shares(schema: Schema, table: RawTable) -> dict[str, float]:
    """Per feature column: the share of the table's rows whose value lies outside the schema's bounds (or category
    list) and is clamped (or encoded as no category). Computed on the TRUE data: a non-private, utility-only
    diagnostic, never part of a release."""
    n = max(table.n_rows, 1)
    out: dict[str, float] = {}
    for col in schema.features:
        if col.name not in table.columns:
            continue
        present = table.present(col.name)
        if col.is_categorical:
            cells = table.frame[col.name][present]
            outside = int((~cells.map(cell_text).isin(col.categories)).sum())
        else:
            values, _ = table.numbers(col.name)
            v = values[present & np.isfinite(values)]
            outside = int(((v < col.lower) | (v > col.upper)).sum())
        out[col.name] = outside / n
    return out


# --- edits ---------------------------------------------------------------------------------------------------
def _changed(a: object, b: object) -> bool:
    na, nb = _is_blank(a), _is_blank(b)
    if na or nb:
        return na != nb
    return a != b


def _typed_values(col: ColumnSchema, fields: Mapping[str, object]) -> dict:
    """The bound/category cells the user typed, parsed (a blank bound clears it: the column then needs one)."""
    out: dict = {}
    for fld in ("lower", "upper"):
        if fld in fields:
            out[fld] = None if _is_blank(fields[fld]) else float(fields[fld])
    if "categories" in fields:
        out["categories"] = _parse_categories(fields["categories"], col.name)
    return out


def _shown_bounds(col: ColumnSchema, fields: Iterable[str]) -> ColumnSchema:
    """``col`` with its bounds among ``fields`` as the grid shows them (:data:`BOUND_FORMAT`): declaring a shown
    bound public declares the digits shown, not a record's hidden digits (privacy review R4-5)."""
    rounded = {f: as_shown(getattr(col, f), BOUND_FORMAT) for f in ("lower", "upper")
               if f in fields and getattr(col, f) is not None}
    return replace(col, **rounded) if rounded else col


def _apply_row(col: ColumnSchema, fields: Mapping[str, object], table: RawTable) -> ColumnSchema:
    """One row's typed cells: a new role (drafted from the data), then the typed values (declared public, even when
    equal to the shown value), then the *public* tick. Values typed on a non-feature row are refused."""
    redrafted = "role" in fields and _changed(_role_name(col.role), fields["role"])
    if redrafted:
        col = draft_column(table, col.name, fields["role"])  # a role the user picked: values drafted (from data)
    typed_cells = [f for f in VALUE_FIELDS if f in fields]
    if not col.is_feature:
        bad = [f for f in typed_cells if not _is_blank(fields[f])]
        if bad:
            raise SchemaError(f"schema column {col.name!r}, field {bad[0]!r}: this row is "
                              f"{_role_name(col.role)}, not a feature, so bounds and categories are not kept; set "
                              "its role to numeric, binary or categorical first, or clear the value.")
        typed_cells = []
    typed = _typed_values(col, {f: fields[f] for f in typed_cells})
    confirmed = set(typed)
    if typed:
        cleared = [f for f in ("lower", "upper") if f in typed and typed[f] is None]
        if cleared:
            raise SchemaError(f"schema column {col.name!r}, field {cleared[0]!r}: a {_role_name(col.role)} column "
                              f"needs both public bounds; type a number (e.g. 0) instead of clearing it.")
        col = declare_values(col, **typed)
    from_data = set(col.from_data) - confirmed
    if "public" in fields and col.is_feature:  # vocabulary: not a choice (the editor's "public" column)
        used = {"categories"} if col.is_categorical else {"lower", "upper"}
        declared = used | {"role"}
        if redrafted and bool(fields["public"]):  # values drafted in this very edit were never shown: not declared,
            declared = {"role"} - col.from_data  # nor a role the data chose instead of the one typed (R4-2)
        if bool(fields["public"]):
            col = _shown_bounds(col, declared & from_data)
        from_data = from_data - declared if bool(fields["public"]) else from_data | (used - confirmed)
    return replace(col, from_data=frozenset(from_data))


def apply_cell_edits(schema: Schema, edits: Mapping[str, Mapping[str, object]], table: RawTable) -> Schema:
    """The schema with the editor's typed cells ``{column name: {field: value}}`` (every cell the user touched,
    even one typed equal to its shown value). Raises :class:`SchemaError` naming column and field."""
    for name, fields in edits.items():
        if fields:
            schema = schema.replace_column(_apply_row(schema[name], fields, table))
    return schema


def apply_edits(schema: Schema, before: pd.DataFrame, after: pd.DataFrame, table: RawTable) -> Schema:
    """:func:`apply_cell_edits` of the cells that differ between two editor tables (same rows, same order)."""
    edits: dict[str, dict] = {}
    for i in range(len(before)):
        b, a = before.iloc[i], after.iloc[i]
        fields = {c: a[c] for c in ("role", "lower", "upper", "categories", "public") if _changed(b[c], a[c])}
        if fields:
            edits[str(b["column"])] = fields
    return apply_cell_edits(schema, edits, table)


def edited_cells(state: object, shown: pd.DataFrame) -> dict[str, dict[str, object]]:
    """The cells of ``st.data_editor``'s state ``{"edited_rows": {position: {field: value}}}`` by column name."""
    rows = (state or {}).get("edited_rows", {}) if isinstance(state, Mapping) else {}
    names = shown["column"].tolist()
    out: dict[str, dict[str, object]] = {}
    for pos, fields in rows.items():
        pos = int(pos)
        if 0 <= pos < len(names):
            out.setdefault(names[pos], {}).update({k: v for k, v in fields.items() if k in TABLE_COLUMNS})
    return out


def match_columns(schema: Schema, pattern: str = "", roles: Iterable[str] = ()) -> list[str]:
    """The editable columns (the label left out) whose name matches ``pattern`` — comma-separated terms, each a
    case-insensitive substring or a ``*``/``?`` wildcard pattern — and whose role is one of ``roles`` (any if
    empty)."""
    terms = [t.strip().lower() for t in (pattern or "").split(",") if t.strip()]
    wanted = {r.replace(" ", "_") for r in roles}

    def hit(name: str) -> bool:
        low = name.lower()
        return any(fnmatch.fnmatchcase(low, t) if any(ch in t for ch in "*?[") else t in low for t in terms)

    return [c.name for c in schema.columns if c.role != ColumnRole.LABEL
            and (not terms or hit(c.name)) and (not wanted or c.role.value in wanted)]


def _bulk_number(text: str, fld: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return float(text.replace(",", ".") if text.count(",") == 1 and "." not in text else text)
    except ValueError:
        raise SchemaError(f"bulk edit, field {fld!r}: {text!r} is not a number; type a number such as 0 or 1.5, "
                          "or leave it empty.") from None


def bulk_update(schema: Schema, names: list[str], table: RawTable, *, lower: str = "", upper: str = "",
                categories: str = "", role: str | None = None, declare_shown: bool = False) -> Schema:
    """``schema`` with one action applied to every column in ``names``: a new role, the same typed bounds and/or
    category list (declared public), or the shown values declared public (not values a new role drafts in the same
    action: they were never shown). Refuses the whole action (naming the
    columns and the fix) when a column cannot take the values, e.g. bounds on an identifier or a categorical."""
    if not names:
        raise SchemaError("bulk edit: no column is selected; widen the filter or pick columns.")
    lo, hi = _bulk_number(lower, "lower"), _bulk_number(upper, "upper")
    cats = _parse_categories(categories, "(bulk)") if (categories or "").strip() else None
    if lo is None and hi is None and cats is None and role is None and not declare_shown:
        raise SchemaError("bulk edit: nothing to set; type lower and upper, categories, or pick a role.")
    out = schema
    refused: list[str] = []
    for name in names:
        col = out[name]
        redrafted = role is not None and role != _role_name(col.role)
        if redrafted:
            col = draft_column(table, name, role)  # values drafted now, never shown: "declare shown" skips them
        try:
            col = declare_values(col, lower=lo, upper=hi, categories=cats)
        except SchemaError as exc:
            refused.append(f"{name} ({_role_name(col.role)})" if not col.is_feature or len(names) > 1 else str(exc))
            continue
        if declare_shown and not redrafted:
            col = _shown_bounds(col, col.from_data).confirmed()
        out = out.replace_column(col)
    if refused:
        shown = ", ".join(refused[:8]) + (f" and {len(refused) - 8} more" if len(refused) > 8 else "")
        kind = "categories" if cats is not None and lo is None and hi is None else "bounds"
        raise SchemaError(f"bulk edit: nothing was changed — these columns cannot take these {kind}: {shown}. "
                          "Narrow the selection (e.g. filter by role numeric), or set their role first.")
    return out


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
        parts.append("the label was guessed from the data" if schema.label is not None else
                     "no label is declared (pick one, or confirm that the table has none)")
    return False, "; ".join(parts)


# --- callbacks -----------------------------------------------------------------------------------------------
def _confirm_structure() -> None:
    schema = ui.upload_schema(ui.upload_table())
    ui.set_upload_schema(schema.structure_confirmed())


def _on_schema_upload(widget: str = "schema_upload_widget") -> None:
    """A schema file loaded: its format (when it declares one) reads the upload from now on, then its roles and
    values replace the draft."""
    ss = st.session_state
    upload = ss.get(widget)
    if upload is None:
        return
    try:
        loaded = dpcore.data.load_schema(upload.getvalue())
        misfit = header_misfit(ss.get("dp_upload"), loaded.format)
        if misfit:  # one message naming both sides, not the errors of a table read wrongly (issue 32)
            ui.put("schema_error", f"{upload.name}: {misfit}. Nothing was loaded: {_misfit_fix(loaded.format)}, "
                                   "then load it again.")
            return
        if loaded.format is not None:
            ui.put(DECLARED, loaded)
        table = ui.upload_table()
        schema = merge_loaded(loaded, table)
    except DPCoreError as exc:
        ui.put("schema_error", f"{upload.name}: {plain_words(str(exc))}")
        return
    ui.set_upload_schema(schema)
    ss.dp_label = schema.label or NO_LABEL
    ui.put("schema_loaded", upload.name)
    if loaded.format is not None:
        _applied().append(ui.upload_table_key())


#: The header check reads at most this many bytes of the file (the header line, or its start: a field count).
HEADER_PEEK = 64 * 1024


def _delimiter_text(delimiter: str) -> str:
    name = DELIMITER_NAMES.get(delimiter)
    return f"{delimiter!r} ({name})" if name else repr(delimiter)


def header_misfit(raw: bytes | None, fmt: FileFormat | None) -> str | None:
    """Why a declared CSV format does not fit this file, from its header line alone (structure, never a record:
    no cell is quoted): the encoding the schema declares against text that is not in it, or the delimiter it
    declares against the one the header line is split by. None when the header fits, or there is nothing to check
    (no file, not CSV text, no header line)."""
    if raw is None or fmt is None or fmt.kind != "csv" or not fmt.header:
        return None
    text = raw[:HEADER_PEEK].decode(declared_codec(fmt.encoding), errors="replace")
    lines = [line for line in text.splitlines()[:3] if line.strip()]
    if lines and is_sep_line(lines[0]):
        lines = lines[1:]
    if not lines:
        return None
    line = lines[0]
    if "\x00" in line or "\ufffd" in line:
        return (f"the schema declares the encoding {fmt.encoding}, but this file's header line is not "
                f"{fmt.encoding} text")
    counts = {d: len(next(csv.reader([line], delimiter=d), [])) for d in dict.fromkeys((fmt.delimiter, *DELIMITERS))}
    best = max(DELIMITERS, key=lambda d: counts[d])
    if counts[fmt.delimiter] > 1 or counts[best] < 2:
        return None
    return (f"the schema declares the delimiter {_delimiter_text(fmt.delimiter)}, but this file's header line is "
            f"split by {_delimiter_text(best)} ({counts[best]} fields with {best!r}, one with {fmt.delimiter!r})")


def _misfit_fix(fmt: FileFormat) -> str:
    return ("set the schema's `format:` to what the file is (e.g. `delimiter: ';'`), or delete `format:` to have it "
            "detected from the file" if fmt.header else "fix the schema's `format:`")


def _applied() -> list:
    applied = ui.get(APPLIED)
    return applied if applied is not None else ui.put(APPLIED, [])


def adopt_declared(table: RawTable) -> None:
    """A file read under a loaded schema's declared format gets that schema (roles, values and label) instead of a
    draft — once per file and reading, before the label picker is drawn (so no label is guessed)."""
    key = ui.upload_table_key()
    declared = ui.get(DECLARED)
    if declared is None or key is None:
        return
    misfit = header_misfit(st.session_state.get("dp_upload"), declared.format)
    if misfit:  # a format declared for an earlier file that this file's header contradicts: detect this one
        ui.drop(DECLARED)
        ui.put("schema_error", f"The loaded schema's file format does not fit this file: {misfit}. The format is "
                               "detected from this file instead (red: read off the data) and the schema's format is "
                               f"forgotten; to declare it, {_misfit_fix(declared.format)} and load the schema again.")
        st.rerun()
    applied = _applied()
    if key in applied:
        return
    applied.append(key)
    schema = declared_schema_for(table)
    if schema is None:
        return
    ui.set_upload_schema(schema, dpcore.data.infer_roles(table, label=schema.label))
    st.session_state.dp_label = schema.label or NO_LABEL
    ui.put("label_guess", False)  # the label is declared: nothing to guess


def declared_schema_for(table: RawTable) -> Schema | None:
    """The loaded schema that declares the file format, checked against ``table`` (None without one, or when the
    table's columns do not fit it: then a message says so and the draft is used)."""
    declared = ui.get(DECLARED)
    if declared is None:
        return None
    try:
        return merge_loaded(declared, table)
    except DPCoreError as exc:
        ui.put("schema_error", f"The loaded schema does not fit this file ({plain_words(str(exc))}); "
                               "the draft read off the data is shown instead.")
        return None


def _forget_declared() -> None:
    ui.drop(DECLARED)


def declared_format_controls() -> None:
    """Under a loaded schema's declared format: say so, and offer to detect the format again."""
    declared = ui.get(DECLARED)
    if declared is None:
        return
    st.caption(f":green[:material/verified: Read with the loaded schema's declared format "
               f"({declared.file_format.describe()}); nothing is detected, also for the next file you upload.]")
    st.button("Forget the declared format (detect it from the file again)", key="schema_forget_declared",
              type="tertiary", on_click=_forget_declared, icon=":material/undo:")


def unreadable_upload_loader() -> None:
    """For a file that format detection cannot read: load a schema that declares its format instead."""
    st.info("Format detection could not read this file. Load a schema (YAML/JSON) that declares its `format:` "
            "(delimiter, decimal mark, encoding, header) and its columns: the file is then read exactly as "
            "declared, nothing detected.", icon=":material/description:")
    _messages()
    st.file_uploader("Load a schema that declares the file format (YAML/JSON)", type=["yaml", "yml", "json"],
                     key="schema_upload_unread", on_change=_on_schema_upload, args=("schema_upload_unread",))


def _on_codebook_upload() -> None:
    ss = st.session_state
    upload = ss.get(CODEBOOK_KEY)
    if upload is None:
        return
    skipped: list[str] = []
    try:
        table = ui.upload_table()
        entries = read_codebook(upload.getvalue(), upload.name, skipped=skipped)
        before, unread = ui.upload_schema(table), len(skipped)
        schema = apply_codebook(before, entries, table, skipped=skipped)
    except DPCoreError as exc:  # the whole file: not text, no header, not YAML
        ui.put("schema_error", plain_words(str(exc)))
        return
    applied = len(entries) - (len(skipped) - unread)
    if schema != before:
        ui.set_upload_schema(schema)
    if skipped:
        ui.put("schema_error", skipped_rows_text(upload.name, skipped, applied))
    if applied:
        ui.put(NOTE, f"Imported {applied} column(s) from the codebook {upload.name}: their values are declared.")


def skipped_rows_text(name: str, skipped: list[str], applied: int) -> str:
    """The message for the codebook rows left out of an import: how many, and each row's problem and fix (the
    codebook is the user's public file: its cells may be quoted; no record of the table is)."""
    head = (f"Skipped {len(skipped)} row(s) of the codebook {name}; the other {applied} row(s) were applied."
            if applied else f"Nothing was imported from the codebook {name}: every row was skipped.")
    shown = skipped[:MAX_SKIPPED_SHOWN]
    more = f"\n- … and {len(skipped) - len(shown)} more" if len(skipped) > len(shown) else ""
    return head + "\n" + "\n".join(f"- {plain_words(line)}" for line in shown) + more


def _on_bulk(table: RawTable, names: list[str], declare_shown: bool) -> None:
    """The bulk form's submit: the same role / values for every selected column (or the shown values declared).
    Applies what the form holds now, says what changed, then empties the form's fields (role back to "keep"): a
    value or role typed for one action is never applied again by a later one (issue 32: a role left on 'excluded'
    excluded the columns of a later "declare shown" action). Refuses when the name/role filter no longer matches the
    columns the form was drawn for (a filter typed and a button pressed before the page redrew: the action would go
    to the previous filter's columns — a "declare public" to columns the user did not see)."""
    ss = st.session_state
    before = ui.upload_schema(table)
    now = match_columns(before, ss.get(FILTER_KEY, ""), ss.get(ROLE_FILTER_KEY, ()))
    if now != names:  # the filter changed after the form was drawn: its columns are not the ones the user saw
        ui.put("schema_error", f"Nothing was changed: the column filter changed after the form was drawn (it now "
                               f"matches {len(now)} column(s): {_names_text(now)}). Check the columns the form lists "
                               "now and press the button again.")
        return
    chosen = list(ss.get(_bulk_columns_key(names)) or names)
    role = ss.get(BULK_ROLE_KEY)
    role = None if role in (None, KEEP_ROLE) else role
    typed = {fld: str(ss.get(key) or "").strip() for fld, key in BULK_VALUE_KEYS.items()}
    try:
        schema = bulk_update(before, chosen, table, **typed, role=role, declare_shown=declare_shown)
    except DPCoreError as exc:  # the form keeps its fields, to be fixed
        ui.put("schema_error", plain_words(str(exc)))
        return
    ui.set_upload_schema(schema)
    what = "declared the shown values public for" if declare_shown else "set"
    ui.put(NOTE, f"Bulk edit: {what} {len(chosen)} column(s). "
                 + bulk_changes(before, schema, chosen, typed=typed, role=role, declare_shown=declare_shown))
    for key in BULK_VALUE_KEYS.values():
        ss[key] = ""
    ss[BULK_ROLE_KEY] = KEEP_ROLE


def _names_text(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def bulk_changes(before: Schema, after: Schema, names: list[str], *, typed: Mapping[str, str],
                 role: str | None = None, declare_shown: bool = False) -> str:
    """What one bulk action changed, column by column, for the message after it: the new role, the values typed
    (the user's own: quoted), the shown values declared public (never quoted: they may be read off the data), and
    the columns left as they were."""
    changed = [n for n in names if after[n] != before[n]]
    new_role = [n for n in changed if after[n].role != before[n].role]
    parts = []
    if role is not None and new_role:
        drafted = " (values drafted from the data: NOT public)" if after[new_role[0]].is_feature and not any(
            typed.values()) else ""
        parts.append(f"role → {role} on {_names_text(new_role)}{drafted}")
    values = " and ".join(f"{fld} = {text}" for fld, text in typed.items() if text)
    valued = [n for n in changed if values]
    if valued:
        parts.append(f"{values} (declared public) on {_names_text(valued)}")
    if declare_shown:
        shown = [n for n in changed if n not in new_role and before[n].from_data - after[n].from_data]
        if shown:
            parts.append(f"shown values declared public on {_names_text(shown)}")
    same = [n for n in names if n not in changed]
    text = ("Changed: " + "; ".join(parts) + ".") if parts else "Nothing changed."
    return text + (f" Already so: {_names_text(same)}." if same and parts else "")


def _reset(table: RawTable) -> None:
    report = dpcore.data.infer_roles(table, label=ui.label_value())
    ui.set_upload_schema(dpcore.data.draft_schema(table, report), report)
    ui.put(NOTE, "Reset to the draft read off the data: every value is red again.")


def _color(value: str) -> str:
    """Cell style of the status column: green when public, red when a value came from the data."""
    if value == PUBLIC:
        return "background-color: rgba(34,197,94,0.22); color: #166534"
    if value.startswith(FROM_DATA):
        return "background-color: rgba(239,68,68,0.18); color: #991b1b"
    return "color: #888888"


def _clamp_color(value: str) -> str:
    return "background-color: rgba(245,158,11,0.25); color: #92400e" if value.startswith("⚠") else ""


# --- layout --------------------------------------------------------------------------------------------------
KEEP_ROLE = "(keep each column's role)"
#: Widget keys of the bulk form's fields (emptied after each action).
BULK_VALUE_KEYS = {"lower": "schema_bulk_lower", "upper": "schema_bulk_upper", "categories": "schema_bulk_categories"}
BULK_ROLE_KEY = "schema_bulk_role"


def _bulk_columns_key(names: list[str]) -> str:
    return f"schema_bulk_cols_{abs(hash(tuple(names))) % 10**10}"


def _status_lines(schema: Schema) -> None:
    features, open_cols = schema.features, schema.values_from_data
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
    elif any(not c.role_public for c in features):  # values declared, roles still the inference's (R4-6)
        st.markdown(f":orange[:material/info: The bounds and categories of all {len(features)} feature columns are "
                    "declared; their roles are not yet (confirm them above).]")
    else:
        st.markdown(f":green[:material/check_circle: **All {len(features)} feature columns are public.**] The "
                    "ledger below says whether the whole pipeline is.")


def _messages() -> None:
    error, loaded, note = ui.drop("schema_error"), ui.drop("schema_loaded"), ui.drop(NOTE)
    if error:
        st.error(error)
    if loaded:
        st.success(f"Loaded the schema {loaded}.")
    if note:
        st.success(note, icon=":material/done_all:")


def _bulk_panel(table: RawTable, schema: Schema, names: list[str]) -> None:
    """Bulk editing of the filtered columns and the codebook import."""
    total = len(match_columns(schema))
    with st.expander(f"Set many columns at once — {len(names)} of {total} columns match the filter",
                     icon=":material/checklist:", expanded=total >= 15):
        with st.form("schema_bulk_form", border=False):
            st.multiselect("Columns to set (empty: all the columns that match the filter)", names,
                           key=_bulk_columns_key(names), placeholder=f"all {len(names)} matching columns")
            b1, b2, b3, b4 = st.columns([1, 1, 2, 2])
            b1.text_input("lower", key="schema_bulk_lower", placeholder="e.g. 0",
                          help="The same public lower bound for every selected numeric column.")
            b2.text_input("upper", key="schema_bulk_upper", placeholder="e.g. 100",
                          help="The same public upper bound for every selected numeric column.")
            b3.text_input("categories", key="schema_bulk_categories", placeholder="e.g. yes, no",
                          help="The same public category list (comma-separated) for every selected categorical "
                               "column.")
            b4.selectbox("role", [KEEP_ROLE, *ROLE_OPTIONS], key=BULK_ROLE_KEY,
                         help="Set the same role first (its values are drafted from the data unless you type them).")
            c1, c2 = st.columns(2)
            c1.form_submit_button("Apply the same public range / values to the selected columns", type="primary",
                                  icon=":material/done_all:", on_click=_on_bulk, args=(table, names, False),
                                  key="schema_bulk_apply")
            c2.form_submit_button("Declare the shown values of the selected columns public",
                                  icon=":material/verified:", on_click=_on_bulk, args=(table, names, True),
                                  key="schema_bulk_declare",
                                  help="Declares the values shown now — read off this data unless you typed or "
                                       "imported them — public. Only where they are public knowledge (a codebook, "
                                       "an instrument's range); a role picked in the same action redrafts the "
                                       "values, which stay not public.")
        st.file_uploader("Import a codebook (CSV or YAML: column, lower, upper, categories; role optional)",
                         type=["csv", "tsv", "txt", "yaml", "yml", "json"], key=CODEBOOK_KEY,
                         on_change=_on_codebook_upload,
                         help="A CSV with the header column,lower,upper,categories (categories separated by |), or "
                              "a YAML list of {column, lower, upper, categories}. Its values are declared public.")


def _name_width(shown: pd.DataFrame) -> int:
    """Pixels for the pinned name column: the longest shown name, within [120, 280]."""
    longest = int(shown["column"].str.len().max()) if len(shown) else 10
    return int(min(max(7.4 * longest + 28, 120), 280))


def _column_config(shown: pd.DataFrame) -> dict:
    """The grid's columns: a help text on every header (hover), widths that fit the names."""
    cc = st.column_config
    return {
        "column": cc.TextColumn("column", pinned=True, width=_name_width(shown),
                                help="The column's name in the file; every full name and reason is listed below "
                                     "the grid."),
        "role": cc.SelectboxColumn("role", options=ROLE_OPTIONS, required=True,
                                   help="numeric, binary and categorical columns are features; only feature rows "
                                        "keep bounds or categories"),
        "lower": cc.NumberColumn("lower", help="public lower bound (feature rows only)", format=BOUND_FORMAT),
        "upper": cc.NumberColumn("upper", help="public upper bound (feature rows only)", format=BOUND_FORMAT),
        "categories": cc.TextColumn("categories", width="medium", help="public category list, comma-separated"),
        "public": cc.CheckboxColumn("public", help="tick when every value in this row is public knowledge (not "
                                                   "read off this data)"),
        "status": cc.TextColumn("status", help="public: declared by you; from data: filled in by the app from the "
                                               "data (NOT private)"),
        "clamped": cc.TextColumn("clamped (non-private)",
                                 help=f"Share of this column's rows outside its bounds (clamped) or categories — "
                                      f"computed on the TRUE data: a {NOT_PRIVATE_LABEL}, for utility only. ⚠ above "
                                      f"{format_share(CLAMP_WARN_SHARE)}."),
        "reason": cc.TextColumn("why this role (from the data)", width="large",
                                help="Why the role was inferred; the full text of every reason is listed below the "
                                     "grid."),
    }


def _grid(table: RawTable, schema: Schema, names: list[str], clamped: Mapping[str, float]) -> None:
    """The editor grid of the filtered columns, in a form: edits are saved together."""
    ss = st.session_state
    full = schema_table(schema, ui.get("roles"), clamped)
    shown = full[full["column"].isin(names)].reset_index(drop=True)
    version = ui.get("schema_version")
    # the filter is in the key: an edit recorded by row position never lands on another column's row
    key = f"{EDITOR_PREFIX}{version}_{abs(hash(tuple(names))) % 10**10}"
    styled = shown.style.map(_color, subset=["status"]).map(_clamp_color, subset=["clamped"]) \
        if len(shown) <= STYLED_ROWS else shown
    height = GRID_ROW_PX * (min(len(shown), GRID_MAX_ROWS) + 1) + 3
    with st.form(f"schema_grid_form_{version}", border=False):
        st.data_editor(
            styled, key=key, hide_index=True, num_rows="fixed", width="stretch", height=height,
            disabled=["column", "status", "clamped", "reason"],
            column_config=_column_config(shown),
        )
        submitted = st.form_submit_button("Save the table's edits", type="primary", icon=":material/save:",
                                          key="schema_grid_save")
    with st.expander(f"Full names and reasons of the {len(shown)} column(s) shown", icon=":material/notes:"):
        st.table(shown[["column", "role", "status", "reason"]].set_index("column"))
    if submitted:
        try:
            new = apply_cell_edits(schema, edited_cells(ss.get(key), shown), table)
        except DPCoreError as exc:
            st.error(plain_words(str(exc)) + " Nothing was saved; fix the cell and save again.")
            return
        if new != schema:
            ui.set_upload_schema(new)
            st.rerun()


def _clamp_warning(clamped: Mapping[str, float]) -> None:
    large = sorted(((c, s) for c, s in clamped.items() if s > CLAMP_WARN_SHARE), key=lambda cs: -cs[1])
    if large:
        cols = ", ".join(f"{c!r} {format_share(s)}" for c, s in large[:6]) + (" …" if len(large) > 6 else "")
        st.warning(f"**The public bounds cut off much of the data** in {len(large)} column(s): {cols} of the rows "
                   f"lie outside and are clamped to a bound (see the *clamped* column). A {NOT_PRIVATE_LABEL}, "
                   "computed on the true data, for utility only: check the bounds against public knowledge, not "
                   "against these numbers.", icon=":material/content_cut:")


def render(table: RawTable, schema: Schema) -> None:
    """The schema editor: status, filter, bulk edits and codebook, the grid, download/upload and reset."""
    _status_lines(schema)
    _messages()
    f1, f2 = st.columns([3, 2])
    f1.text_input("Filter columns by name", key=FILTER_KEY, placeholder="e.g. PERMINTE_*, age, income",
                  help="Comma-separated names or parts of names; * and ? are wildcards. Narrows the grid and the "
                       "bulk edit.")
    f2.multiselect("… and by role", ROLE_OPTIONS, key=ROLE_FILTER_KEY, placeholder="any role")
    names = match_columns(schema, st.session_state.get(FILTER_KEY, ""), st.session_state.get(ROLE_FILTER_KEY, ()))
    _bulk_panel(table, schema, names)
    clamped = clamped_shares(schema, table)
    st.markdown(TYPED_RULE)
    st.caption(PASTE_TIP)
    _clamp_warning(clamped)
    if not names:
        st.info("No column matches the filter; clear it to see every column.")
    else:
        _grid(table, schema, names, clamped)
    c1, c2, c3 = st.columns([2, 3, 1])
    stem = table.name or "upload"
    c1.download_button("Download schema (YAML)", schema.to_yaml(), file_name=f"{stem}_schema.yaml",
                       mime="application/x-yaml", on_click="ignore", key=DOWNLOAD_KEY, icon=":material/download:")
    c2.file_uploader("Load a schema (YAML/JSON)", type=["yaml", "yml", "json"], key="schema_upload_widget",
                     on_change=_on_schema_upload,
                     help="A schema you wrote or edited: its values are taken as declared.")
    with c3.popover("Reset", icon=":material/restart_alt:", help="Reset the schema to the draft read off the data"):
        st.markdown("Discard every role and value you set, and start again from the draft read off the data "
                    "(all red)?")
        st.button("Yes, reset to the draft", key="schema_reset", on_click=_reset, args=(table,), type="primary")


# --- the label: a binary label declared as "column > value" (or ≠ 0) ------------------------------------------------
#: Widget keys of the Data page's "Use a binary label" form.
LABEL_RULE_FORM, LABEL_RULE_KIND, LABEL_RULE_VALUE = ("schema_label_rule_form", "schema_label_rule_kind",
                                                     "schema_label_rule_value")
LABEL_RULE_APPLY, LABEL_RULE_CLEAR = "schema_label_rule_apply", "schema_label_rule_clear"
LABEL_RULE_KINDS = ("above", "nonzero")


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def label_rule_default(column: str, schema: Schema, declared: Schema | None = None) -> str:
    """The threshold the form offers for ``column > value``: the rule in effect, else the middle of the column's
    declared public bounds (in ``declared``, a loaded schema, where the column is a feature), else empty — never a
    value read off the data (privacy review items 10–11)."""
    if schema.label == column and schema.label_rule is not None and schema.label_rule.above is not None:
        return _number_text(schema.label_rule.above)
    col = declared[column] if declared is not None and column in declared else None
    threshold = label_threshold_default(col)
    return "" if threshold is None else _number_text(threshold)


def apply_label_rule(schema: Schema, table: RawTable | None, column: str, kind: str, value: object) -> Schema:
    """``schema`` with the binary label ``column > value`` (``kind`` "above") or ``column ≠ 0`` ("nonzero"): the
    user's declaration (public); the column is the label's source, never a feature. A missing or non-numeric value
    raises :class:`SchemaError` saying what to type."""
    if kind == "nonzero":
        return schema.with_label_rule(column, nonzero=True, table=table)
    text = "" if _is_blank(value) else str(value).strip()
    if not text:
        raise SchemaError(f"type the public threshold for the label {column} > value (from a codebook or the "
                          "question's wording, not from this data), or choose ≠ 0.")
    if text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        threshold = float(text)
    except ValueError:
        raise SchemaError(f"the threshold {str(value).strip()!r} is not a number; type a number such as 50000 or "
                          "0.5.") from None
    return schema.with_label_rule(column, above=threshold, table=table)


def _refused_label(table: RawTable, column: str, schema: Schema) -> bool:
    """Whether the loader refuses ``column`` as a label (continuous), by the loader's own check (which reads no
    record under a public structure)."""
    try:
        check_label_kind(table, column, schema_public=schema.structure_public)
    except DPCoreError:
        return True
    return False


def _clear_label_rule() -> None:
    schema = ui.upload_schema(ui.upload_table())
    ui.set_upload_schema(replace(schema, label_rule=None))


def label_rule_form(table: RawTable, schema: Schema) -> None:
    """Under the label picker: declare a binary label "COLUMN > value" (or "≠ 0") and store it in the upload's
    schema. Open when the picked column is refused as continuous, or a rule is in effect."""
    column = ui.label_value()
    if column is None or column not in table.columns or not numeric_column(table, column):
        return  # "> value" and "≠ 0" only for numbers: a text label's values are its classes
    rule = schema.label_rule if schema.label == column else None
    refused = rule is None and not schema.label_declared and _refused_label(table, column, schema)
    if rule is not None:
        st.caption(f":green[:material/verified: Label: **{schema.label_text}** — a binary label you declared "
                   f"(public); {column!r} itself is not a feature.]")
    with st.expander(f"Use a binary label: {column} > value, or ≠ 0", icon=":material/call_split:",
                     expanded=refused or rule is not None):
        if refused:
            st.caption(f":red[:material/block: {column!r} holds measurements, not classes, so it cannot be the label "
                       "as it is (see the message below the table).] Declare a binary label with a threshold you "
                       "know from public knowledge, or pick another label column.")
        with st.form(LABEL_RULE_FORM, border=False):
            kind = st.radio("Binary label", LABEL_RULE_KINDS, key=LABEL_RULE_KIND, horizontal=True,
                            index=1 if rule is not None and rule.nonzero else 0,
                            format_func={"above": f"{column} > value", "nonzero": f"{column} ≠ 0"}.get)
            value = st.text_input("value (your public threshold)", key=LABEL_RULE_VALUE,
                                  value=label_rule_default(column, schema, ui.get(DECLARED)),
                                  placeholder="e.g. 50000 — from a codebook, not from this data",
                                  help="What you type is your declaration (public). It is offered from the column's "
                                       "declared public bounds (their middle) when a loaded schema has them, and "
                                       "never from the data.")
            submitted = st.form_submit_button("Apply", type="primary", icon=":material/done:",
                                              key=LABEL_RULE_APPLY)
        if rule is not None:
            st.button(f"Use {column} as it is (no rule)", key=LABEL_RULE_CLEAR, type="tertiary",
                      on_click=_clear_label_rule, icon=":material/undo:")
    if not submitted:
        return
    try:
        new = apply_label_rule(schema, table, column, kind, value)
    except DPCoreError as exc:
        st.error(plain_words(str(exc)))
        return
    ui.set_upload_schema(new)
    st.rerun()
