"""Test-only mechanisms: one that never returns for ε > 1.5 (a sleep that ignores its deadline), for the time-cap,
cancel and streaming tests, and one that always stops at its time cap. Module level, so worker processes can
unpickle them."""

from __future__ import annotations

import time

from dpcore.core.noise import uniform_stiefel
from dpcore.core.privacy import LedgerEntry
from dpcore.exceptions import MechanismTimeout
from dpcore.mechanisms.base import Mechanism, MechanismOutput

#: ε above which a release sleeps far past any cap.
SLOW_ABOVE = 1.5


class SleepyMechanism(Mechanism):
    """Pure-DP test fixture: a random subspace, after a long sleep when ε > 1.5 (test only)."""

    id = "test_sleepy"
    name = "Sleepy (test only)"
    summary = "test fixture"
    reference = "test fixture"
    guarantee = "pure"
    output = "subspace"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        if epsilon > SLOW_ABOVE:
            time.sleep(120)
        return MechanismOutput(ledger=[LedgerEntry("test", epsilon)], subspace=uniform_stiefel(data.d, k, rng))


class CappedMechanism(Mechanism):
    """Pure-DP test fixture that always stops at its time cap (as a slow sampler on these data would)."""

    id = "test_capped"
    name = "Capped (test only)"
    summary = "test fixture"
    reference = "test fixture"
    guarantee = "pure"
    output = "subspace"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        raise MechanismTimeout("the mechanism exceeded its time cap of 1 s; lower epsilon, n or d, or raise the cap.")


def cap_the_third_release(monkeypatch, mechanism: Mechanism) -> None:
    """Make ``mechanism``'s third release (counting from now) stop at its time cap, as a slow release would."""
    real, calls = mechanism.release, []

    def capped_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise MechanismTimeout("the mechanism exceeded its time cap; lower epsilon, n or d, or raise the cap.")
        return real(*args, **kwargs)

    monkeypatch.setattr(mechanism, "release", capped_third)
