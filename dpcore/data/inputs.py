"""Bytes of a file named on the command line: a regular file, a pipe or process substitution (``<(dpcore schema
infer …)``, ``/dev/fd/63``), a FIFO, or ``-`` for standard input.

A pipe can be read once, but a command may need its input more than once (the CLI reads ``--schema`` for the
format, the label and the run): the bytes of a one-shot stream are kept for the life of the process, keyed by what
the path points to (device and inode), so a second read gets the same bytes.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ..exceptions import InvalidParameterError

#: The name that reads standard input.
STDIN = "-"
_STREAMS: dict[tuple, bytes] = {}


def is_stdin(path: str | os.PathLike | None) -> bool:
    return path is not None and str(path) == STDIN


def exists(path: str | os.PathLike) -> bool:
    """True for ``-`` and for a path that names a regular file, a pipe, a FIFO or a character device."""
    if is_stdin(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    """The bytes of ``path`` (see the module docstring); a missing path raises InvalidParameterError naming
    ``what``."""
    if is_stdin(path):
        key: tuple = ("stdin",)
        if key not in _STREAMS:
            stream = getattr(sys.stdin, "buffer", sys.stdin)
            data = stream.read()
            _STREAMS[key] = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        return _STREAMS[key]
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        raise InvalidParameterError(f"{what} not found: {str(path)!r}; check the path.") from None
    if stat.S_ISREG(st.st_mode):
        return Path(path).read_bytes()
    if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        raise InvalidParameterError(f"{what} {str(path)!r} is not a file (a folder?); give a file, a pipe or '-'.")
    key = ("stream", st.st_dev, st.st_ino)
    if key not in _STREAMS:
        with open(path, "rb") as fh:
            _STREAMS[key] = fh.read()
    return _STREAMS[key]
