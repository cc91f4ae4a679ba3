"""Exceptions and warnings raised by dpcore.

Every error a user can trigger derives from :class:`DPCoreError` (itself a ``ValueError``), so a front end
can catch one class and show its message, which always names the problem and the fix.
"""

from __future__ import annotations


class DPCoreError(ValueError):
    """Base class of every user-facing dpcore error."""


class InvalidParameterError(DPCoreError):
    """A parameter is out of range, of the wrong type, or inconsistent with another one."""


class DataError(DPCoreError):
    """The input data cannot be used (bad CSV, wrong shape, non-finite values, ...)."""


class UnknownNameError(DPCoreError, KeyError):
    """An unknown mechanism or dataset id."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class InvalidMechanismError(DPCoreError):
    """A mechanism whose published privacy claim is false was requested without ``allow_invalid=True``."""


class MechanismTimeout(DPCoreError, TimeoutError):
    """A mechanism or sampler ran past its time cap; no (possibly inexact) result is returned."""


class SamplerError(DPCoreError, RuntimeError):
    """A sampler hit its iteration cap or a numerical failure; it never returns a non-sample."""


class PrivacyLeakWarning(UserWarning):
    """A data-dependent (non-private) preprocessing step was used; it is recorded in the ledger."""
