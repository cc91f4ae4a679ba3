"""The one record parser: how the bytes of a delimited text file become records, for every reader.

Every CSV reader in dpcore — in memory (:func:`dpcore.data.reading.read_table`), streamed
(:class:`dpcore.stats._arrow.CsvSource`) and on Dask (:mod:`dpcore.stats._dask`) — turns bytes into records with the
functions of this module and nothing else, so the privacy argument is one module long (privacy review item 15):

* **A line is a record.** The text is split into physical lines at ``\\r\\n``, ``\\r`` or ``\\n``
  (:func:`split_lines`); a quote never continues a field onto the next line.
* **The fields of a line** (:func:`line_fields`) depend on that line alone: it is split at the delimiter outside
  quotes; a field that starts with ``"`` is quoted up to the next lone ``"`` (``""`` inside stands for one quote,
  characters after the closing quote are kept, an unterminated quote runs to the end of the line). No length limit,
  no error: every line has fields.
* **A line's record** (:func:`line_record`): a blank line (no field but whitespace) is not a record unless the table
  has one column; a line with another number of fields than the header is a record of missing cells; each cell is
  stripped of whitespace and is missing when it equals a declared missing token (case-insensitive).
* **Bytes in**: the declared encoding decodes the file; undecodable bytes become U+FFFD and NUL becomes U+FFFD.
  For encodings in which a newline byte is always a line break (UTF-8, the single-byte code pages: see
  :func:`line_separable`), decoding line by line equals decoding the whole file, so a file may be cut into blocks at
  ``\\n`` bytes and read block by block, in any order, on any machine.

:func:`block_records` reads a block of whole lines (UTF-8 bytes) into columns. It has a fast path — pyarrow's CSV
parser, used only on blocks where it is **total**: equal to :func:`line_record` on every line whatever else is in
the block (no quote character, no NUL, valid UTF-8, no byte-order mark at the block's start, every line either of the
header's width or blank; cells that are not ASCII are stripped and compared by Python's rules). Any other block is
read line by line; both give the same records, which ``tests/privacy/test_one_reader.py`` checks on generated files.
"""

from __future__ import annotations

import codecs
import csv as _csv
import functools
import io
import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

#: A physical line break: \r\n, a lone \r or \n.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
QUOTE = '"'
#: The ASCII characters Python's ``str.strip`` removes (Arrow trims exactly these on the fast path).
PYTHON_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_UTF8_BOM = codecs.BOM_UTF8
_REPLACEMENT = "\ufffd".encode()
#: ASCII whitespace other than line breaks, as bytes (a block without any needs no ASCII trim).
_ASCII_SPACE_BYTES = tuple(ch.encode() for ch in " \t\x0b\x0c\x1c\x1d\x1e\x1f")
#: A cell longer than this many characters is missing (no number, category or label is that long; the bound keeps
#: every reader's cells within Arrow's 32-bit string offsets, so one huge record cannot make a reader fail).
MAX_CELL_CHARS = 2**24
#: Blocks at least this long skip Arrow's parser (its block size is a 32-bit integer).
_ARROW_MAX_BLOCK = 2**31 - 2


# ---------------------------------------------------------------------------------------------------------------
# one line
# ---------------------------------------------------------------------------------------------------------------

def split_lines(text: str) -> list[str]:
    """The physical lines of ``text`` (the final line break ends the last line; it does not start an empty one)."""
    lines = text.split("\n") if "\r" not in text else LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _quoted_fields(line: str, delimiter: str) -> list[str]:
    """The fields of a line that contains a quote: the state machine of Python's csv reader (default dialect,
    non-strict) on one line, without its field-size limit."""
    fields: list[str] = []
    cell: list[str] = []
    state = 0  # 0 start of field, 1 unquoted field, 2 quoted field, 3 quote inside a quoted field
    for ch in line:
        if state == 0:
            if ch == QUOTE:
                state = 2
            elif ch == delimiter:
                fields.append("")
            else:
                cell.append(ch)
                state = 1
        elif state == 1:
            if ch == delimiter:
                fields.append("".join(cell))
                cell, state = [], 0
            else:
                cell.append(ch)
        elif state == 2:
            if ch == QUOTE:
                state = 3
            else:
                cell.append(ch)
        else:  # a quote inside a quoted field: "" is one quote, the delimiter ends the field, anything else is kept
            if ch == QUOTE:
                cell.append(ch)
                state = 2
            elif ch == delimiter:
                fields.append("".join(cell))
                cell, state = [], 0
            else:
                cell.append(ch)
                state = 1
    fields.append("".join(cell))
    return fields


def line_fields(line: str, delimiter: str) -> list[str]:
    """The fields of one physical line (see the module docstring); an empty line has none."""
    if not line:
        return []
    if QUOTE not in line:
        return line.split(delimiter)
    try:  # Python's csv reader is the same state machine in C; past its field-size limit it raises
        row = next(_csv.reader([line], delimiter=delimiter), [])
    except _csv.Error:
        return _quoted_fields(line, delimiter)
    return row


def is_blank(fields: Sequence[str]) -> bool:
    """True for a line with no field but whitespace (not a record unless the table has one column)."""
    return not fields or (len(fields) == 1 and not fields[0].strip())


def normalise_cell(cell: str | None, missing: frozenset[str]) -> str | None:
    """A cell stripped of whitespace; None when it is missing (a declared token, compared lower-case, or longer
    than :data:`MAX_CELL_CHARS` characters)."""
    if cell is None:
        return None
    text = cell.strip()
    return None if len(text) > MAX_CELL_CHARS or text.lower() in missing else text


def line_record(line: str, delimiter: str, width: int, missing: frozenset[str]) -> list[str | None] | None:
    """The record of one physical line in a table of ``width`` columns: None when the line is not a record (blank,
    ``width`` > 1), ``width`` missing cells when its number of fields differs, else its normalised cells."""
    fields = line_fields(line, delimiter)
    if width > 1 and is_blank(fields):
        return None
    if len(fields) != width:
        return [None] * width
    return [normalise_cell(c, missing) for c in fields]


# ---------------------------------------------------------------------------------------------------------------
# bytes in
# ---------------------------------------------------------------------------------------------------------------

def is_utf8(encoding: str) -> bool:
    """True for UTF-8, with or without a byte-order mark ("utf-8-sig" is UTF-8: a BOM is skipped at the file's
    start only)."""
    return codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")


@functools.lru_cache(maxsize=64)
def line_separable(encoding: str) -> bool:
    """True when the file may be cut at ``\\n`` bytes and each piece decoded alone, exactly as the whole file
    decodes: UTF-8, and the single-byte code pages in which only byte 0x0A is "\\n" and only 0x0D is "\\r" (ASCII,
    latin-1, cp1252, …). Not UTF-16/32, the EBCDIC pages (whose "\\n" is another byte) or the multi-byte East
    Asian pages (whose decoder, at a piece's end, may swallow the line break)."""
    if is_utf8(encoding):
        return True
    try:
        chars = bytes(range(256)).decode(encoding, errors="replace")
    except (LookupError, TypeError, ValueError):
        return False
    if len(chars) != 256:
        return False  # not one character per byte
    return all((ch == "\n") == (b == 0x0A) and (ch == "\r") == (b == 0x0D) for b, ch in enumerate(chars))


def clean_utf8(data: bytes) -> bytes:
    """UTF-8 bytes as the declared-UTF-8 reading sees them: undecodable bytes and NUL as U+FFFD."""
    if not data.isascii():
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    return data.replace(b"\x00", _REPLACEMENT) if b"\x00" in data else data


def utf8_blocks(chunks: Iterable[bytes], encoding: str) -> Iterator[bytes]:
    """The file's bytes (``chunks`` in order) as blocks of whole lines in clean UTF-8 (each ends with ``\\n`` but the
    last): decoded with the declared ``encoding`` (a UTF-8 byte-order mark at the start skipped), undecodable bytes
    and NUL as U+FFFD — what decoding the whole file at once gives."""
    if is_utf8(encoding):
        yield from _cut_at_newlines(_without_bom(chunks), b"\n", clean_utf8)
        return
    decoder = codecs.getincrementaldecoder(declared_codec(encoding))(errors="replace")
    texts = (decoder.decode(raw, final=not raw) for raw in _with_end(iter(chunks)))
    yield from _cut_at_newlines(texts, "\n", lambda text: text.replace("\x00", "\ufffd").encode("utf-8"))


def _without_bom(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` with a UTF-8 byte-order mark at the very start removed (as the "utf-8-sig" codec removes it)."""
    head = b""
    it = iter(chunks)
    for raw in it:
        head += raw
        if len(head) >= len(_UTF8_BOM) or not _UTF8_BOM.startswith(head):
            break
    yield head[len(_UTF8_BOM):] if head.startswith(_UTF8_BOM) else head
    yield from it


def _cut_at_newlines(pieces, newline, finish) -> Iterator[bytes]:
    """Pieces joined and re-cut just after their last newline (a long line collects its pieces in a list: no
    quadratic copying), each block passed through ``finish``."""
    pending: list = []
    for piece in pieces:
        cut = piece.rfind(newline) + 1
        if not cut:
            if piece:
                pending.append(piece)
            continue
        pending.append(piece[:cut])
        yield finish(pending[0][:0].join(pending))
        pending = [piece[cut:]] if cut < len(piece) else []
    if pending:
        tail = pending[0][:0].join(pending)
        if tail:
            yield finish(tail)


def _with_end(chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield from (c for c in chunks if c)
    yield b""


def declared_codec(encoding: str) -> str:
    """The codec that reads text in a declared ``encoding``: a UTF-8 BOM is skipped ("utf-8-sig")."""
    return "utf-8-sig" if is_utf8(encoding) else encoding


#: A physical line break in bytes (UTF-8 and the line-separable code pages): :data:`LINE_BREAK` on bytes.
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def split_header(blocks: Iterator[bytes], *, header: bool, delimiter: str) -> tuple[list[str] | None, Iterator[bytes]]:
    """(the header line's fields, the blocks after it). With ``header``, Excel's "sep=;" first line is skipped and
    the header is the first line that is not blank; without, nothing is taken (None). ``blocks`` are clean UTF-8
    blocks of whole lines (:func:`utf8_blocks`)."""
    if not header:
        return None, blocks
    first_line = True
    for block in blocks:
        pos = 0
        while pos < len(block):
            m = LINE_BREAK_BYTES.search(block, pos)
            end, nxt = (m.start(), m.end()) if m else (len(block), len(block))
            line = block[pos:end].decode("utf-8")
            pos = nxt
            if first_line:
                first_line = False
                if is_sep_line(line):
                    continue
            fields = line_fields(line, delimiter)
            if not is_blank(fields):
                return fields, _chain(block[pos:], blocks)
    return [], iter(())


def _chain(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from rest


def is_sep_line(line: str) -> bool:
    """True for Excel's "sep=;" first line (it names the separator; it is not the header)."""
    first = line.strip().lower()
    return first.startswith("sep=") and len(first) == 5


# ---------------------------------------------------------------------------------------------------------------
# blocks of lines
# ---------------------------------------------------------------------------------------------------------------

def block_records(data: bytes, *, delimiter: str, width: int, take: Sequence[int],
                  missing: frozenset[str]) -> tuple[list, int, int]:
    """The records of a block of whole lines (clean UTF-8, :func:`utf8_blocks`): (for each field index in ``take`` a
    pyarrow string array of its cells (null: missing), the number of records, the number of lines read as records
    of missing cells).
    Equal to :func:`line_record` applied to every line of the block, whichever path reads it."""
    fast = _arrow_records(data, delimiter, width, take, missing)
    if fast is not None:
        return fast
    return lines_records(split_lines(data.decode("utf-8")), delimiter=delimiter, width=width, take=take,
                         missing=missing)


def lines_records(lines: Sequence[str], *, delimiter: str, width: int, take: Sequence[int],
                  missing: frozenset[str]) -> tuple[list, int, int]:
    """:func:`block_records` of lines already split: :func:`line_record` applied to each."""
    import pyarrow as pa

    columns: list[list[str | None]] = [[] for _ in take]
    malformed = records = 0
    for line in lines:
        fields = line_fields(line, delimiter)
        if width > 1 and is_blank(fields):
            continue
        records += 1
        if len(fields) != width:
            malformed += 1
            for col in columns:
                col.append(None)
            continue
        for col, j in zip(columns, take):
            col.append(normalise_cell(fields[j], missing))
    return [pa.array(col, type=pa.string()) for col in columns], records, malformed


def _arrow_records(data: bytes, delimiter: str, width: int, take: Sequence[int],
                   missing: frozenset[str]) -> tuple[list, int, int] | None:
    """The fast path of :func:`block_records`, or None where it is not provably equal to the per-line rule."""
    if width < 2 or not data or len(data) >= _ARROW_MAX_BLOCK or QUOTE.encode() in data \
            or data.startswith(_UTF8_BOM) or not delimiter.isascii():
        return None
    import pyarrow as pa
    from pyarrow import csv as pacsv

    other_rows = []

    def invalid(row) -> str:
        text = row.text or ""
        if not (delimiter not in text and not text.strip()):
            other_rows.append(True)  # a record of missing cells: its place is kept by the per-line path
        return "skip"  # a blank line is not a record

    names = [f"f{j}" for j in range(width)]
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=len(data) + 1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, escape_char=False,
                                             double_quote=False, newlines_in_values=False, ignore_empty_lines=True,
                                             invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(include_columns=[names[j] for j in take],
                                                 column_types={name: pa.string() for name in names},
                                                 null_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if other_rows:
        return None
    n = table.num_rows
    cells = [table.column(names[j]).combine_chunks() if table.num_columns else pa.array([], pa.string())
             for j in take]
    if not cells:
        return [], n, 0
    flat = _normalise(pa.concat_arrays([c.cast(pa.string()) for c in cells]), missing, data.isascii(),
                      spaced=any(ch in data for ch in _ASCII_SPACE_BYTES))
    if len(data) > MAX_CELL_CHARS:  # only a block this long can hold a cell over the limit
        import pyarrow.compute as pc

        flat = pc.if_else(pc.greater(pc.utf8_length(flat), MAX_CELL_CHARS), pa.scalar(None, pa.string()), flat)
    return list(_split(flat, n, len(take))), n, 0


def _split(arr, n: int, k: int) -> Iterator:
    for i in range(k):
        yield arr.slice(i * n, n)


def _normalise(cells, missing: frozenset[str], ascii_only: bool, spaced: bool = True):
    """Stripped cells, null for a missing token: Arrow's ASCII trim and lower-case (Python's on ASCII text), and
    Python's own ``strip``/``lower`` for the cells that are not ASCII. ``spaced=False``: the block holds no ASCII
    whitespace but line breaks, so no ASCII cell needs trimming."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tokens = pa.array(sorted(missing), type=pa.string())
    trimmed = pc.ascii_trim(cells, characters=PYTHON_ASCII_SPACE) if spaced else cells
    if not ascii_only:
        wide = np.flatnonzero(~pc.string_is_ascii(cells).to_numpy(zero_copy_only=False))
        if wide.size:
            values = trimmed.to_pylist()
            originals = cells.take(pa.array(wide)).to_pylist()
            for i, text in zip(wide.tolist(), originals):
                stripped = text.strip()
                values[i] = None if stripped.lower() in missing else stripped
            present = pa.array(values, type=pa.string())
            gone = pc.is_in(pc.ascii_lower(present), value_set=tokens)
            # a wide cell was decided above; an ASCII cell by the token set (ASCII lower-case is Python's there)
            ascii_cells = pc.string_is_ascii(cells)
            gone = pc.and_(gone, ascii_cells)
            return pc.if_else(pc.fill_null(gone, False), pa.scalar(None, pa.string()), present)
    variants = _case_variants(missing)
    if variants is None:
        gone = pc.is_in(pc.ascii_lower(trimmed), value_set=tokens)
    else:  # an ASCII cell is a token when it is one of the tokens' ASCII case variants: no lower-cased copy
        gone = pc.is_in(trimmed, value_set=pa.array(variants, type=pa.string()))
    if not pc.any(gone).as_py():
        return trimmed
    return pc.if_else(gone, pa.scalar(None, pa.string()), trimmed)


@functools.lru_cache(maxsize=32)
def _case_variants(missing: frozenset[str]) -> tuple[str, ...] | None:
    """Every ASCII spelling whose lower-case is an ASCII token of ``missing`` (None when that would be too many)."""
    out: set[str] = set()
    for token in missing:
        if not token.isascii():
            continue  # an ASCII cell's lower-case is ASCII: it can only be an ASCII token
        letters = sum(ch.isalpha() for ch in token)
        if letters > 8:
            return None
        spellings = [""]
        for ch in token:
            spellings = [p + c for p in spellings for c in ({ch, ch.upper()} if ch.isalpha() else {ch})]
        out.update(spellings)
    return tuple(sorted(out))


__all__ = [
    "LINE_BREAK",
    "LINE_BREAK_BYTES",
    "block_records",
    "clean_utf8",
    "declared_codec",
    "is_blank",
    "is_sep_line",
    "line_fields",
    "line_record",
    "line_separable",
    "lines_records",
    "normalise_cell",
    "split_header",
    "split_lines",
    "utf8_blocks",
]
