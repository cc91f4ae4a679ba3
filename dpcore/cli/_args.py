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
