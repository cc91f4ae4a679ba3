"""Parameter validation, in one place. Every public entry point calls these helpers."""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

from ..exceptions import InvalidParameterError
from ..vocabulary import Neighbouring

NEIGHBOURING_RELATIONS = tuple(Neighbouring)


def check_epsilon(epsilon: object, name: str = "epsilon", allow_zero: bool = False) -> float:
    """Return ``epsilon`` as a float after checking it is a finite number > 0 (or >= 0)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise InvalidParameterError(f"{name} must be a number, got {epsilon!r}.")
    value = float(epsilon)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidParameterError(f"{name} must be a finite number {bound}, got {epsilon!r}.")
    return value


def check_delta(delta: object, name: str = "delta", required: bool = False) -> float:
    """Return ``delta`` as a float in [0, 1); with ``required`` it must be > 0."""
    if isinstance(delta, bool) or not isinstance(delta, Real):
        raise InvalidParameterError(f"{name} must be a number in [0, 1), got {delta!r}.")
    value = float(delta)
    if not (0.0 <= value < 1.0):
        raise InvalidParameterError(f"{name} must lie in [0, 1), got {delta!r}.")
    if required and value == 0.0:
        raise InvalidParameterError(
            f"{name} must be > 0 for an (epsilon, delta) mechanism; try {name}=1e-5."
        )
    return value


def check_int(value: object, name: str, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int after checking ``low <= value <= high``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and float(value).is_integer():
            value = int(value)
        else:
            raise InvalidParameterError(f"{name} must be a whole number, got {value!r}.")
    value = int(value)
    if low is not None and value < low:
        raise InvalidParameterError(f"{name} must be >= {low}, got {value}.")
    if high is not None and value > high:
        raise InvalidParameterError(f"{name} must be <= {high}, got {value}.")
    return value


def check_positive(value: object, name: str, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite float > 0 (or >= 0)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise InvalidParameterError(f"{name} must be a finite number, got {value!r}.")
    v = float(value)
    if v < 0 or (v == 0 and not allow_zero):
        raise InvalidParameterError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}.")
    return v


def check_fraction(value: object, name: str, open_low: bool = True, open_high: bool = True) -> float:
    """Return ``value`` as a float in (0, 1) (ends open or closed as asked)."""
    v = check_positive(value, name, allow_zero=not open_low)
    if v > 1 or (v == 1 and open_high):
        raise InvalidParameterError(f"{name} must be {'<' if open_high else '<='} 1, got {value!r}.")
    return v


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """Return ``value`` after checking it is one of ``choices``."""
    options = tuple(choices)
    if value not in options:
        raise InvalidParameterError(f"{name} must be one of {', '.join(repr(str(o)) for o in options)}; got {value!r}.")
    return str(value)


def check_neighbouring(value: object) -> str:
    """Return the neighbouring relation ('replace' or 'add_remove')."""
    return check_choice(value, "neighbouring", NEIGHBOURING_RELATIONS)


def check_k(k: object, d: int, strict: bool = False) -> int:
    """Check the number of components: 1 <= k <= d (k < d with ``strict``)."""
    high = d - 1 if strict else d
    if high < 1:
        raise InvalidParameterError(f"this mechanism needs at least {2 if strict else 1} features; d = {d}.")
    return check_int(k, "k (number of components)", 1, high)


def check_time_limit(value: object) -> float | None:
    """None (no cap) or a positive number of seconds."""
    if value is None:
        return None
    return check_positive(value, "time_limit")
