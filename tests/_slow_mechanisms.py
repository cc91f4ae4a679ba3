"""A test-only mechanism that never returns for ε > 1.5 (a sleep that ignores its deadline), for the time-cap,
cancel and streaming tests. Module level, so worker processes can unpickle it."""

from __future__ import annotations

import time

from dpcore.core.noise import uniform_stiefel
from dpcore.core.privacy import LedgerEntry
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
