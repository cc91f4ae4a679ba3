"""One declaration for options: mechanism options and dataset-loader options are both :class:`Param`.

A Param is read everywhere it is needed — validation (:meth:`Param.validate`), CLI help, the dashboard's widgets
and the Learn cards (:meth:`Param.as_dict`) — so defaults and ranges are written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core._validation import check_choice, check_int
from .exceptions import InvalidParameterError

KINDS = ("float", "int", "bool", "choice")


@dataclass(frozen=True)
class Param:
    """An option of a mechanism or a dataset loader (a widget in the dashboard, a flag in the CLI).

    ``kind`` is one of :data:`KINDS`; ``low``/``high`` bound numbers (inclusive); an ``int`` option whose
    default is None also accepts None ("no limit").
    """

    name: str
    default: Any
    description: str
    kind: str = "float"  # "float" | "int" | "bool" | "choice"
    choices: tuple = ()
    low: float | None = None
    high: float | None = None

    def validate(self, value: Any) -> Any:
        label = f"option {self.name!r}"
        if self.kind == "choice":
            return check_choice(value, label, self.choices)
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
                return value.lower() in ("true", "1", "yes")
            raise InvalidParameterError(f"{label} must be true or false, got {value!r}.")
        if self.kind == "int":
            if value is None and self.default is None:
                return None
            if isinstance(value, str):
                try:
                    value = int(value)
                except ValueError:
                    raise InvalidParameterError(f"{label} must be a whole number, got {value!r}.") from None
            return check_int(value, label, None if self.low is None else math.ceil(self.low),
                             None if self.high is None else math.floor(self.high))
        if self.kind == "float":
            try:
                v = float(value)
            except (TypeError, ValueError):
                raise InvalidParameterError(f"{label} must be a number, got {value!r}.") from None
            if isinstance(value, bool) or not math.isfinite(v):
                raise InvalidParameterError(f"{label} must be a finite number, got {value!r}.")
            if self.low is not None and v < self.low:
                raise InvalidParameterError(f"{label} must be >= {self.low:g}, got {v:g}.")
            if self.high is not None and v > self.high:
                raise InvalidParameterError(f"{label} must be <= {self.high:g}, got {v:g}.")
            return v
        raise InvalidParameterError(f"{label} has an unknown kind {self.kind!r}; use one of {', '.join(KINDS)}.")

    @property
    def help(self) -> str:
        """The description (the name dataset options used)."""
        return self.description

    def as_dict(self) -> dict:
        return {"name": self.name, "default": self.default, "description": self.description,
                "help": self.description, "kind": self.kind, "choices": list(self.choices), "low": self.low,
                "high": self.high}
