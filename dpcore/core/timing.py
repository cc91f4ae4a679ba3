"""Cooperative time caps: long-running loops call :meth:`Deadline.check`."""

from __future__ import annotations

import time

from ..exceptions import MechanismTimeout


class Deadline:
    """A wall-clock deadline. ``Deadline(None)`` never expires."""

    __slots__ = ("_end", "seconds")

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self._end = None if seconds is None else time.monotonic() + float(seconds)

    @property
    def expired(self) -> bool:
        return self._end is not None and time.monotonic() > self._end

    @property
    def remaining(self) -> float:
        return float("inf") if self._end is None else max(0.0, self._end - time.monotonic())

    def check(self, what: str = "the mechanism") -> None:
        """Raise :class:`MechanismTimeout` when the deadline has passed."""
        if self.expired:
            raise MechanismTimeout(
                f"{what} exceeded its time cap of {self.seconds:g} s; lower epsilon, n or d, "
                "or raise the time cap."
            )


NO_DEADLINE = Deadline(None)
