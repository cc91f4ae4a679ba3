"""Audit anyone's mechanism: a Python callable ``module:function`` with signature ``(X, epsilon, delta, rng) -> array``.

``X`` is the preprocessed rows (n×d, ‖x‖ ≤ 1; a copy per call), ``rng`` a :class:`numpy.random.Generator` and the
result either a d×d covariance estimate (``output="covariance"``) or a d×k basis (``output="subspace"``). The claimed
guarantee is declared, never read off the code: (ε, δ) from the audit's settings (δ > 0 claims (ε, δ)-DP, δ = 0 pure
ε-DP) and the neighbouring relation(s) it claims. Every exception the callable raises is a refusal, an output like
any other (its message is part of it). The power check is the same as for a registered mechanism
(:mod:`dpcore.audit.mutants`): a covariance output gets the claim's reference violation, a subspace output none.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.privacy import LedgerEntry
from ..exceptions import DPCoreError, InvalidParameterError
from ..mechanisms.base import Mechanism, MechanismOutput
from ..vocabulary import Guarantee, Neighbouring

__all__ = ["CALLABLE_OUTPUTS", "CallableMechanism", "CallableRefusal", "callable_mechanism", "load_callable"]

#: What a callable may return.
CALLABLE_OUTPUTS = {"covariance": "a d×d covariance estimate (symmetric)", "subspace": "a d×k basis of the subspace"}
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class CallableRefusal(DPCoreError):
    """The audited callable raised an exception or returned something that is not its declared output: a refusal,
    an output like any other."""


def _split(spec: Any) -> tuple[str, str]:
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise InvalidParameterError(f"give the mechanism as module:function (e.g. mypkg.mech:release), a function "
                                    f"(X, epsilon, delta, rng) -> array; got {spec!r}.")
    module, _, name = spec.strip().partition(":")
    return module, name


@functools.lru_cache(maxsize=64)
def load_callable(spec: str) -> Callable:
    """Import ``module:function`` (dotted names allowed on both sides); a clear :class:`InvalidParameterError` when the
    module cannot be imported, lacks the name, or the name is not callable."""
    module, name = _split(spec)
    try:
        obj: Any = importlib.import_module(module)
    except Exception as exc:  # any import failure is the user's to fix: named in one line
        raise InvalidParameterError(f"cannot import module {module!r} ({type(exc).__name__}: {exc}); check its name "
                                    "and that it is on the Python path (PYTHONPATH or an installed package).") from None
    for part in name.split("."):
        if not hasattr(obj, part):
            raise InvalidParameterError(f"module {module!r} has no attribute {name!r}; give module:function with a "
                                        "function defined in that module.")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InvalidParameterError(f"{spec} is not callable; it must be a function (X, epsilon, delta, rng) -> array.")
    return obj


class CallableMechanism(Mechanism):
    """A :class:`Mechanism` around ``module:function`` with a declared claim (see the module docstring). Picklable
    (it keeps the name and imports the function where it runs)."""

    summary = "a user-supplied mechanism (module:function), audited as a black box"
    reference = "user-supplied"

    def __init__(self, spec: str, *, output: str = "covariance", uses_delta: bool = True,
                 neighbourings: tuple[str, ...] = (Neighbouring.REPLACE,)) -> None:
        _split(spec)
        if output not in CALLABLE_OUTPUTS:
            raise InvalidParameterError(f"output must be one of {', '.join(map(repr, CALLABLE_OUTPUTS))}; got "
                                        f"{output!r}.")
        self.spec = spec.strip()
        self.id = f"callable:{self.spec}"
        self.name = f"{self.spec} (user-supplied)"
        self.output = output
        self.uses_delta = bool(uses_delta)
        self.guarantee = Guarantee.APPROX if self.uses_delta else Guarantee.PURE
        self.neighbourings = tuple(neighbourings)
        self.params = ()

    def _release(self, data: Any, k: int, epsilon: float, delta: float, *, neighbouring: str,
                 rng: np.random.Generator, deadline: Any, **options: Any) -> MechanismOutput:
        fn = load_callable(self.spec)
        X = np.array(data.X, dtype=float, copy=True)
        d = X.shape[1]
        try:
            value = fn(X, epsilon, delta, rng)
            out = np.asarray(value, dtype=float)
        except Exception as exc:  # whatever the callable raises is a refusal (an output)
            raise CallableRefusal(f"{type(exc).__name__}: {exc}") from None
        want = (d, d) if self.output == "covariance" else (d, k)
        if out.shape != want or not np.all(np.isfinite(out)):
            other = "subspace" if self.output == "covariance" else "covariance"
            raise CallableRefusal(f"{self.spec} returned an array of shape {out.shape} (finite: "
                                  f"{bool(np.all(np.isfinite(out)))}); a {self.output} output is {want[0]}×{want[1]} "
                                  f"and finite (or declare the output {other!r}).")
        ledger = [LedgerEntry(f"{self.spec} (claimed)", epsilon, delta if self.uses_delta else 0.0)]
        if self.output == "covariance":
            return MechanismOutput(ledger=ledger, covariance=0.5 * (out + out.T))
        return MechanismOutput(ledger=ledger, subspace=out)


def callable_mechanism(spec: str, *, output: str = "covariance", delta: float | None = None,
                       relation: str | None = None) -> CallableMechanism:
    """A :class:`CallableMechanism` for ``spec`` that claims (ε, δ)-DP when ``delta`` > 0 (pure ε-DP for 0 or None)
    under ``relation`` ("replace", "add_remove" or None: both). The import is checked here (a clear error)."""
    load_callable(_split(spec) and spec.strip())
    if relation is None or relation == "all":
        relations: tuple[str, ...] = (Neighbouring.REPLACE, Neighbouring.ADD_REMOVE)
    elif relation in (Neighbouring.REPLACE, Neighbouring.ADD_REMOVE):
        relations = (relation,)
    else:
        raise InvalidParameterError(f"relation must be 'replace', 'add_remove' or 'all'; got {relation!r}.")
    return CallableMechanism(spec, output=output, uses_delta=bool(delta), neighbourings=relations)
