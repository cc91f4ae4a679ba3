"""Review of the odometer's declared ρ: a release whose ledger opens with free zCDP shares is charged its ρ."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.core.odometer import Odometer
from dpcore.mechanisms import get_mechanism, release_rho


@pytest.mark.parametrize("mid", ["separate_cov", "adaptive_cov"])
@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_a_zcdp_ledger_with_free_first_rows_is_charged_its_declared_rho(mid, relation):
    # Their ledgers list the zCDP shares as (0, 0) rows and charge (ε, δ) and ρ in the conversion row. On
    # fde6aff+4aee2d4 the first free row took the declared ρ and set it to 0, so Inspect counted ρ = 0.
    release = get_mechanism(mid).release(np.eye(3) * 0.5, 1, 2.0, 1e-6, neighbouring=relation, random_state=1)
    odo = Odometer(rho_of=release_rho)
    entries = odo.record_release(release, "Inspect")
    want = release_rho(mid, 2.0, 1e-6, d=3, neighbouring=relation)
    assert want > 0
    assert odo.totals().zcdp_rho == pytest.approx(want, rel=1e-12)
    assert len(entries) == 1  # one release, one counted step (the free share rows are not counted beside it)
    assert (entries[0].epsilon, entries[0].delta) == (2.0, 1e-6)


def test_a_release_that_spends_nothing_is_still_counted_once():
    release = get_mechanism("random").release(np.eye(3) * 0.5, 1, 1.0, 0.0, random_state=1)
    assert len(Odometer(rho_of=release_rho).record_release(release, "Inspect")) == 1
