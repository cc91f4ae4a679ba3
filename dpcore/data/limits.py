"""What an input may cost: cheap checks before dear work, so that a small hostile file cannot stall a server.

Every file a user hands the dashboard or the CLI (a table, a schema, a codebook, a workspace) is read only after
what is cheap to read says that reading it is affordable:

* a CSV's header line: at most :data:`MAX_COLUMNS` fields (counted on the raw bytes, before decoding and inference);
* an ``.xlsx`` archive: the sizes its zip directory declares for its members (Python's zip reader never inflates
  a member past its declared size) — at most :data:`MAX_INFLATED_BYTES` in all, and no member above 1 MiB inflating
  more than :data:`MAX_INFLATE_RATIO` times;
* a Parquet file: its footer's row and column counts (rows against the reader's ``max_rows``, the refusal the reader
  makes anyway after reading, without the count: n may be private; columns against :data:`MAX_COLUMNS`);
* a YAML document: its nodes as used, each alias counted every time it is used (at most :data:`MAX_YAML_NODES`),
  and its nesting depth (at most :data:`MAX_YAML_DEPTH`), on the composed graph, before any Python value is built.

And no message formats an untrusted value whole: :func:`shown` is a bounded ``repr``.

The limits are public constants (the same for every file); a refusal names the limit and the fix.
"""

from __future__ import annotations

import io
import reprlib
import zipfile
from contextvars import ContextVar

import yaml

from ..exceptions import DataError

#: A table may have at most this many columns (a CSV header's fields, a Parquet file's columns). A 10,000-column
#: table is drafted in about 5 s on a small machine; 300,000 columns took minutes.
MAX_COLUMNS = 10_000
#: An ``.xlsx`` workbook's members may inflate to at most this many bytes in all (its sheets' XML).
MAX_INFLATED_BYTES = 100 * 2**20
#: A member of an ``.xlsx`` workbook larger than 1 MiB may inflate at most this many times its compressed size
#: (sheets of numbers compress 5–20×; a zip bomb compresses hundreds of times).
MAX_INFLATE_RATIO = 100
_RATIO_FROM_BYTES = 2**20
#: A YAML document (schema, codebook, workspace) may have at most this many nodes, each alias counted every time
#: it is used (10,000 columns with their fields and category lists fit).
MAX_YAML_NODES = 1_000_000
#: A YAML document may nest at most this deep.
MAX_YAML_DEPTH = 64
#: Characters of an untrusted value a message may show (:func:`shown`).
SHOWN_CHARS = 60

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxlist, _repr.maxtuple, _repr.maxdict, _repr.maxset = 2, 4, 4, 4, 4
_repr.maxstring, _repr.maxother, _repr.maxlong = SHOWN_CHARS, SHOWN_CHARS, SHOWN_CHARS

#: The ``max_rows`` of the table read now (set by :func:`dpcore.data.read_table`; Parquet footers are checked
#: against it).
_MAX_ROWS: ContextVar[int | None] = ContextVar("dpcore_read_max_rows", default=None)


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """A bounded ``repr`` of an untrusted value for a message: nested containers cut after a few items and two
    levels, strings after ``limit`` characters — its cost does not grow with the value (a YAML alias bomb's
    repr would expand every alias)."""
    text = _repr.repr(value)
    return text if len(text) <= limit + 5 else text[:limit] + "…"


def set_max_rows(max_rows: int | None) -> None:
    """The ``max_rows`` of the table being read (checked against a Parquet footer's row count)."""
    _MAX_ROWS.set(max_rows)


# ==================================================================================================
# tables
# ==================================================================================================

def header_width(raw: bytes) -> int:
    """The number of fields of a text table's header line, counted on the raw bytes: the largest count of any of
    the delimiters , ; tab | plus one (Excel's ``sep=`` line skipped). Also right for UTF-16 text (each delimiter is
    one byte and a NUL). A quoted name holding a delimiter only makes the count larger."""
    end = _line_end(raw, 0)
    line = raw if end < 0 else raw[:end]
    if end >= 0 and line[:24].replace(b"\x00", b"").lstrip(b"\xef\xbb\xbf\xff\xfe").lower().startswith(b"sep="):
        start = end + 1
        while start < len(raw) and raw[start] in b"\r\n\x00":  # CRLF, and UTF-16's NUL halves
            start += 1
        nxt = _line_end(raw, start)
        line = raw[start:] if nxt < 0 else raw[start:nxt]
    return 1 + max(line.count(d) for d in (b",", b";", b"\t", b"|"))


def _line_end(raw: bytes, start: int) -> int:
    """The position of the first line break (\\n or \\r: old Mac files end lines with \\r alone) from ``start``,
    or -1."""
    ends = [p for p in (raw.find(b"\n", start), raw.find(b"\r", start)) if p >= 0]
    return min(ends) if ends else -1


def check_header_width(raw: bytes, max_columns: int = MAX_COLUMNS) -> None:
    """Refuse a text table whose header line has more than ``max_columns`` fields, before it is decoded or read."""
    if raw.startswith(b"PAR1") or raw.startswith(b"PK\x03\x04"):
        return
    width = header_width(raw)
    if width > max_columns:
        raise DataError(f"the header line has about {width:,} fields, more than this reader's limit of "
                        f"{max_columns:,} columns; upload a table with fewer columns (select the ones you need).")


def check_xlsx(raw: bytes) -> None:
    """Refuse an ``.xlsx`` archive whose members declare more than :data:`MAX_INFLATED_BYTES` inflated, or a member
    that inflates more than :data:`MAX_INFLATE_RATIO` times (a zip bomb), from the zip directory alone."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # the reader says that the workbook is damaged
    total = sum(max(i.file_size, 0) for i in infos)
    fix = "save the sheet as 'CSV UTF-8' and upload that (or a random sample of its rows)"
    if total > MAX_INFLATED_BYTES:
        raise DataError(f"the Excel workbook inflates to more XML than this reader's limit of "
                        f"{MAX_INFLATED_BYTES / 2**20:,.0f} MB (by its zip directory); {fix}.")
    for i in infos:
        if i.file_size > _RATIO_FROM_BYTES and i.file_size > MAX_INFLATE_RATIO * max(i.compress_size, 1):
            raise DataError(f"a part of the Excel workbook inflates more than {MAX_INFLATE_RATIO} times its "
                            f"compressed size (it looks like a zip bomb, not a sheet); {fix}.")


def check_parquet(raw: bytes, max_rows: int | None = None) -> None:
    """Refuse a Parquet file whose footer says it has more than ``max_rows`` rows (default: the ``max_rows`` of the
    table being read) or more than :data:`MAX_COLUMNS` columns, before any column is read."""
    try:
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(io.BytesIO(raw)).metadata
        rows = max(int(meta.num_rows), sum(int(meta.row_group(i).num_rows) for i in range(meta.num_row_groups)))
        columns = int(meta.num_columns)
    except ImportError:
        return  # the reader says that pyarrow is needed
    except Exception:  # a damaged footer: the reader refuses it with its own message
        return
    limit = _MAX_ROWS.get() if max_rows is None else max_rows
    if limit is not None and rows > limit:
        raise DataError(f"the Parquet file has more than max_rows = {limit:,} data rows (its footer says so; the "
                        "count is not shown: n may be private); upload a random sample or raise max_rows.")
    if columns > MAX_COLUMNS:
        raise DataError(f"the Parquet file has {columns:,} columns, more than this reader's limit of "
                        f"{MAX_COLUMNS:,}; upload a table with fewer columns (select the ones you need).")


# ==================================================================================================
# YAML
# ==================================================================================================

class YamlTooLarge(yaml.YAMLError):
    """A YAML document whose size as used (aliases expanded) or nesting is past the limits."""


def check_yaml_node(node, max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_YAML_DEPTH) -> None:
    """Refuse a composed YAML node graph that expands to more than ``max_nodes`` nodes (each alias counted every
    time it is used) or nests deeper than ``max_depth``, or refers to itself. Each distinct node is visited once
    (sizes are memoised), so the check costs what the text does, never what its expansion would."""
    sizes: dict[int, tuple[int, int]] = {}  # id(node) → (expanded size, depth)
    on_path: set[int] = set()

    def visit(n, depth: int) -> tuple[int, int]:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in on_path:
            raise YamlTooLarge("an alias refers to the value that contains it (a recursive anchor)")
        if depth > max_depth:
            raise YamlTooLarge(f"the document nests more than {max_depth} levels deep")
        on_path.add(key)
        size, deep = 1, 1
        for item in n.value:
            for child in (item if isinstance(item, tuple) else (item,)):
                if isinstance(child.value, str):  # a scalar: one node, one level
                    size += 1
                    continue
                s, d = visit(child, depth + 1)
                size += s
                deep = max(deep, d + 1)
            if size > max_nodes:
                raise YamlTooLarge(f"the document expands to more than {max_nodes:,} values (an alias *name "
                                   "repeats its anchor's whole value each time it is used)")
        on_path.discard(key)
        sizes[key] = (size, deep)
        return sizes[key]

    if node is not None and not isinstance(node.value, str):
        visit(node, 0)
