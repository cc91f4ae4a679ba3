"""``dpcore schema infer | check``: draft a public schema from a table, and check one.

``infer`` reads the table and writes a draft (``--codebook FILE`` declares the bounds and categories a codebook
gives) in which every other decision read off the data — the detected file format
fields, each inferred role, the label, every bound and category list — is listed under a ``from_data`` — NOT public
until the user replaces or confirms it (and deletes ``from_data``). The column roles and their reasons go to
stderr. ``check`` validates a schema (optionally against a table, read with the schema's declared file format) and
says whether it is public: format, structure and values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..exceptions import InvalidParameterError
from ._args import check_label_column, key_values, label_declaration, label_flag

FORMATS = ("yaml", "json")


def add_table_arguments(p: argparse.ArgumentParser) -> None:
    """Overrides of the format detection (shared with sweep/release)."""
    p.add_argument("--delimiter", help="field separator (default: detected among , ; tab |); 'tab' for a tab")
    p.add_argument("--decimal", choices=(".", ","), metavar="MARK", help="decimal mark, . or , (default: detected)")
    p.add_argument("--encoding", help="text encoding, e.g. cp1252 (default: UTF-8/UTF-16, detected)")
    p.add_argument("--thousands", choices=("comma", "dot", "space", "apostrophe"), metavar="SEP",
                   help="separator of digit groups, e.g. 'dot' for 1.234,5 (comma, dot, space or apostrophe; "
                        "default: none — never detected: one record must not decide how another is read)")


def add_label_rule_arguments(p) -> None:
    """``--label-above COLUMN=NUMBER`` and ``--label-nonzero COLUMN``: a binary label derived from a numeric column
    with a public threshold the user types (shared by sweep/release and ``schema infer``)."""
    p.add_argument("--label-above", metavar="COLUMN=NUMBER",
                   help="binary label = COLUMN > NUMBER (e.g. income=50000); the column is the label's source, "
                        "never a feature, and the threshold is your public declaration (never read off the data)")
    p.add_argument("--label-nonzero", metavar="COLUMN", help="binary label = COLUMN ≠ 0 (the column is never a "
                                                             "feature)")


#: The refusal of format flags beside a schema that declares the file format (in-memory and streamed reading).
FORMAT_FLAGS_REFUSED = ("the schema declares the file format; drop --delimiter/--decimal/--encoding/--thousands "
                        "or edit the schema's `format:`.")
#: ``--thousands`` names → the separator (names, since a space or an apostrophe is awkward on a command line).
THOUSANDS_NAMES = {"comma": ",", "dot": ".", "space": " ", "apostrophe": "'"}


def table_options(args: argparse.Namespace) -> dict:
    delimiter = getattr(args, "delimiter", None)
    if delimiter is not None and delimiter.lower() in ("tab", "\\t"):
        delimiter = "\t"
    thousands = getattr(args, "thousands", None)
    return {"delimiter": delimiter, "decimal": getattr(args, "decimal", None),
            "encoding": getattr(args, "encoding", None),
            "thousands": None if thousands is None else THOUSANDS_NAMES[thousands]}


def _read(args: argparse.Namespace, schema=None):
    """The table: read with the schema's declared format when the schema has one (nothing detected), else with
    the detection and the overrides."""
    from ..data import inputs, read_table

    if not inputs.exists(args.csv):
        raise InvalidParameterError(f"CSV file not found: {args.csv}.")
    raw = inputs.read_bytes(args.csv, "CSV file")  # a file, a pipe (<(…)) or '-' (standard input)
    name = "stdin" if inputs.is_stdin(args.csv) else Path(args.csv).stem
    if schema is not None and schema.format is not None:
        if any(table_options(args).values()):
            raise InvalidParameterError(FORMAT_FLAGS_REFUSED)
        fmt = schema.format
        return read_table(raw, format=fmt, column_names=None if fmt.header else schema.names, name=name)
    return read_table(raw, name=name, **table_options(args))


def _cmd_infer(args: argparse.Namespace) -> int:
    from ..data import draft_schema, infer_roles
    from ..data.roles import label_or_guess

    table = _read(args)
    roles = key_values(args.role, "--role")
    column, rule = label_declaration(args)
    check_label_column(column, table.columns, label_flag(args))
    label, note = label_or_guess(table, column, guess=not getattr(args, "no_label", False))
    if note and not args.quiet:
        print(f"dpcore: note: {note}", file=sys.stderr)
    report = infer_roles(table, label=label, roles=roles)
    schema = draft_schema(table, report)
    if rule is not None:  # the user's declaration: public (not from_data)
        schema = schema.with_label_rule(column, above=rule.above, nonzero=rule.nonzero, table=table)
    if getattr(args, "codebook", None):
        schema = _apply_codebook(schema, args.codebook, table)
    text = schema.to_json() + "\n" if args.format == "json" else schema.to_yaml()
    if args.out == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.out)
        if not out.parent.exists():
            raise InvalidParameterError(f"output folder does not exist: {out.parent}.")
        out.write_text(text, encoding="utf-8")
    if not args.quiet:
        err = sys.stderr
        print(f"dpcore: read {table.info.describe()} (file format detected: marked from_data); "
              f"{len(report.features)} of {len(report.columns)} columns are features:", file=err)
        width = max(len(c.name) for c in report.columns)
        for c in report.columns:
            mark = "+" if c.included else "-"
            print(f"  {mark} {c.name:<{width}}  {c.role.value:<11}  {c.reason}", file=err)
        print("dpcore: the file format, the roles, the label and the bounds/categories were read off the data and "
              "are marked from_data (NOT public): check or replace each, delete from_data, then use --schema.",
              file=err)
        if args.out != "-":
            print(f"dpcore: wrote {args.out}", file=err)
    return 0


def _apply_codebook(schema, path: str, table):
    """The draft with a codebook's bounds/categories (and roles) declared public; errors name the row and the fix."""
    from ..data.schema import apply_codebook, read_codebook

    book = Path(path)
    if not book.is_file():
        raise InvalidParameterError(f"codebook file not found: {path}; check the path given to --codebook.")
    return apply_codebook(schema, read_codebook(book.read_bytes(), book.name), table)


def _cmd_check(args: argparse.Namespace) -> int:
    from ..data import inputs, load_schema
    from ..data.encode import check_columns

    if inputs.is_stdin(args.schema) and inputs.is_stdin(args.csv):
        raise InvalidParameterError("--schema - and --csv - both name standard input; give one of them as a file "
                                    "or a pipe such as <(dpcore schema infer …).")
    schema = load_schema(args.schema)
    clamps = None
    if args.csv:
        table = _read(args, schema)
        check_columns(table, schema)
        clamps = _clamp_report(table, schema)
    summary = {"valid": True, "public": schema.is_public, "features": [c.name for c in schema.features],
               "width": schema.width, "label": schema.label_text, "not_public": schema.not_public,
               "format": None if schema.format is None else schema.format.to_dict(),
               "format_public": schema.format_public, "structure_public": schema.structure_public}
    if clamps is not None:
        summary["clamping"] = clamps.as_dict()  # a non-private diagnostic of this table ("private": false)
    shown = _shown_names(schema.not_public)
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        status = "public" if schema.is_public else f"NOT public (from the data: {shown})"
        fmt = schema.format.describe() if schema.format is not None else "no file format declared"
        print(f"schema OK: {fmt}; {len(summary['features'])} feature columns → d = {schema.width}; {status}")
        if clamps is not None and not clamps.shares:
            print("no value of this table lies outside the schema's bounds (non-private diagnostic, read off the "
                  "data)")
    for level, text in clamps.messages() if clamps is not None else ():  # what `dpcore sweep` says too
        if level == "warning":
            print(f"dpcore: warning: {text}", file=sys.stderr)
        elif not args.json:
            print(text)
    if args.require_public and not schema.is_public:
        fix = ("add a `format:` section (e.g. format: {kind: csv, delimiter: ';', decimal: ','}; `dpcore schema "
               "infer` drafts one)" if schema.format is None else "check each value listed under a `from_data`, "
               "replace it with public knowledge where needed, and delete the `from_data` lists")
        print(f"dpcore: the schema is not public, so a run with it is not private: {fix}.", file=sys.stderr)
        return 1
    return 0


def _shown_names(names: list[str], limit: int = 20) -> str:
    more = f" … and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _clamp_report(table, schema):
    """Share of each numeric column's rows outside the schema's bounds in ``table`` (clamped by a run), and apart
    from it the share of missing cells (:func:`dpcore.data.diagnostics.encoder_report`, as ``dpcore sweep``
    reports them); None when the table cannot be encoded with the schema."""
    from ..data.diagnostics import encoder_report
    from ..data.encode import encode_table
    from ..exceptions import DPCoreError

    try:
        encoded = encode_table(table, schema)
    except DPCoreError:  # a column the run itself refuses: that message comes from the run, not from here
        return None
    return encoder_report(encoded.counts, encoded.X.shape[0])


def add_schema_parser(sub) -> argparse.ArgumentParser:
    """Register ``schema infer`` and ``schema check`` on the top-level sub-parsers."""
    p = sub.add_parser("schema", help="draft or check a public schema (column roles, bounds, category lists)")
    cmds = p.add_subparsers(dest="schema_command", parser_class=type(p), required=True)

    q = cmds.add_parser("infer", help="write a draft schema; values read off the data are marked from_data")
    q.add_argument("--csv", required=True, help="table to read (CSV/TSV, Parquet, .xlsx); '-' reads standard input")
    q.add_argument("--label", help="label column (metrics only, never a feature); without it the dashboard's guess "
                                   "is used and named on stderr")
    q.add_argument("--no-label", action="store_true", help="no label column: every column may be a feature")
    add_label_rule_arguments(q)
    q.add_argument("--role", action="append", metavar="COLUMN=ROLE",
                   help="override an inferred role, e.g. 'Individual ID=identifier' (repeatable)")
    q.add_argument("--codebook", metavar="FILE",
                   help="public bounds/categories to declare in the draft: a CSV with the header "
                        "column,lower,upper,categories (role optional; categories separated by |) or a YAML list")
    q.add_argument("--format", default="yaml", choices=FORMATS)
    q.add_argument("--out", default="-", help="output path ('-' for stdout, the default)")
    q.add_argument("--quiet", action="store_true", help="no role table on stderr")
    add_table_arguments(q)
    q.set_defaults(func=_cmd_infer)

    q = cmds.add_parser("check", help="validate a schema (and its columns against a table)")
    q.add_argument("--schema", required=True, help="schema file (YAML or JSON), a pipe such as <(dpcore schema infer "
                                                   "…), or '-' for standard input")
    q.add_argument("--csv", help="table whose columns the schema must name ('-': standard input)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.add_argument("--require-public", action="store_true", help="exit 1 when some value is not yet public")
    add_table_arguments(q)
    q.set_defaults(func=_cmd_check)
    return p
