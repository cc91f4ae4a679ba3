"""Small parsers shared by the command-line modules."""

from __future__ import annotations

from collections.abc import Sequence

from ..exceptions import InvalidParameterError

#: Exit code of every command for bad arguments (a one-line message on stderr, never a traceback).
EXIT_USAGE = 2


def key_values(items: Sequence[str] | None, flag: str) -> dict[str, str]:
    """Repeated ``KEY=VALUE`` flags → {key: value} (strings, whitespace stripped)."""
    out: dict[str, str] = {}
    for item in items or ():
        if "=" not in item:
            raise InvalidParameterError(f"{flag} expects key=value, got {item!r}.")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def coerce(value: str):
    """CLI option strings → int/float/bool where they look like one."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


#: The flags that name the label of a table (one at most).
LABEL_FLAGS = ("--label", "--label-above", "--label-nonzero", "--no-label")


def label_declaration(args):
    """(label column, :class:`~dpcore.data.schema.LabelRule` or None) from ``--label COLUMN``,
    ``--label-above COLUMN=NUMBER`` (label = COLUMN > NUMBER) or ``--label-nonzero COLUMN`` (label = COLUMN ≠ 0).

    The threshold is what the user types — a public declaration, never read off the data. Errors name the flag.
    """
    given = [flag for flag in LABEL_FLAGS if getattr(args, flag[2:].replace("-", "_"), None)]
    if len(given) > 1:
        raise InvalidParameterError(f"{' and '.join(given)} were both given; give one of --label COLUMN, "
                                    "--label-above COLUMN=NUMBER, --label-nonzero COLUMN or --no-label.")
    above, nonzero = getattr(args, "label_above", None), getattr(args, "label_nonzero", None)
    if not above and not nonzero:
        return getattr(args, "label", None), None
    from ..data.schema import LabelRule, SchemaError

    if nonzero:
        return nonzero.strip(), LabelRule(nonzero=True)
    column, sep, value = above.rpartition("=")
    if not sep or not column.strip() or not value.strip():
        raise InvalidParameterError(f"--label-above expects COLUMN=NUMBER (label = COLUMN > NUMBER), got {above!r}; "
                                    "e.g. --label-above income=50000.")
    try:
        return column.strip(), LabelRule(above=float(value))
    except (ValueError, SchemaError):
        raise InvalidParameterError(f"--label-above {above}: {value.strip()!r} is not a finite number; give the "
                                    f"public threshold, e.g. --label-above {column.strip()}=50000.") from None


def check_label_column(column: str | None, columns: Sequence[str], flag: str) -> None:
    """Refuse a label flag naming a column the table does not have (the message names the flag and the columns)."""
    if column is None or column in columns:
        return
    import difflib

    close = difflib.get_close_matches(column, list(columns), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(map(repr, list(columns)[:20])) + (" …" if len(columns) > 20 else "")
    raise InvalidParameterError(f"{flag} names column {column!r}, which the file does not have{hint}; its columns "
                                f"are: {shown}.")


def label_flag(args) -> str:
    """The label flag the user gave (for messages)."""
    for flag in ("--label-above", "--label-nonzero"):
        if getattr(args, flag[2:].replace("-", "_"), None):
            return flag
    return "--label"
