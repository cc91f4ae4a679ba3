"""The mechanism registry.

Every module in this package that defines a :class:`~dpcore.mechanisms.base.Mechanism` subclass decorated
with :func:`register` is discovered automatically, so a new mechanism appears in the CLI, the sweeps and the
dashboard without editing any other file.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..core.privacy import GUARANTEES
from ..exceptions import InvalidParameterError, UnknownNameError
from ..vocabulary import Neighbouring
from .base import Mechanism, MechanismOutput, Param, Release

_REGISTRY: dict[str, type[Mechanism]] = {}
_INSTANCES: dict[str, Mechanism] = {}
_DISCOVERED = False


def register(cls: type[Mechanism]) -> type[Mechanism]:
    """Class decorator: add a mechanism to the registry (ids must be unique)."""
    mid = cls.id
    if mid in _REGISTRY and _REGISTRY[mid] is not cls:
        raise ValueError(f"duplicate mechanism id {mid!r}")
    if cls.guarantee not in GUARANTEES:
        raise ValueError(f"{mid}: unknown guarantee {cls.guarantee!r}")
    _REGISTRY[mid] = cls
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name != "base" and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _DISCOVERED = True


def mechanism_ids() -> list[str]:
    """All registered ids, grouped by guarantee (strongest first), then by display order."""
    _discover()
    rank = {g: i for i, g in enumerate(GUARANTEES)}
    return sorted(_REGISTRY, key=lambda m: (rank[_REGISTRY[m].guarantee], _REGISTRY[m].order, m))


def get_mechanism(mechanism_id: str) -> Mechanism:
    """The (stateless) mechanism instance for an id."""
    _discover()
    if mechanism_id not in _REGISTRY and isinstance(mechanism_id, str) and mechanism_id.startswith("peer:"):
        from ..peers import peer_mechanism  # OpenDP/diffprivlib adapters: resolved by id, never registered

        return peer_mechanism(mechanism_id)
    if mechanism_id not in _REGISTRY:
        raise UnknownNameError(
            f"unknown mechanism {mechanism_id!r}; available: {', '.join(mechanism_ids())}."
        )
    if mechanism_id not in _INSTANCES:
        _INSTANCES[mechanism_id] = _REGISTRY[mechanism_id]()
    return _INSTANCES[mechanism_id]


def release_rho(mechanism_id: str, epsilon: float, delta: float, *, n: int | None = None, d: int | None = None,
                neighbouring: str | None = None, options: dict | None = None) -> float | None:
    """The exact zCDP ρ of one release of ``mechanism_id`` (:meth:`Mechanism.zcdp_rho`), or None: unknown id,
    no exact ρ, or settings it needs (n, d) missing. For the session odometer
    (:class:`dpcore.core.odometer.Odometer`)."""
    _discover()
    cls = _REGISTRY.get(str(mechanism_id))
    if cls is None or epsilon is None or not epsilon > 0:
        return None
    mech = get_mechanism(cls.id)
    try:
        return mech.zcdp_rho(float(epsilon), float(delta), n=None if n is None else int(n),
                             d=None if d is None else int(d), neighbouring=neighbouring or Neighbouring.REPLACE,
                             options=mech.validate_options(dict(options or {})))
    except (InvalidParameterError, TypeError, ValueError):  # settings it cannot price: no exact ρ (basic only)
        return None


def list_mechanisms() -> list[Mechanism]:
    """All mechanism instances in display order."""
    return [get_mechanism(m) for m in mechanism_ids()]


__all__ = [
    "Mechanism",
    "MechanismOutput",
    "Param",
    "Release",
    "get_mechanism",
    "list_mechanisms",
    "mechanism_ids",
    "register",
    "release_rho",
]
