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
    odo = Odometer()
    entries = odo.record_release(release, "Inspect")
    want = release_rho(mid, 2.0, 1e-6, d=3, neighbouring=relation)
    assert want > 0
    assert odo.totals().zcdp_rho == pytest.approx(want, rel=1e-12)
    assert len(entries) == 1  # one release, one counted step (the free share rows are not counted beside it)
    assert (entries[0].epsilon, entries[0].delta) == (2.0, 1e-6)


def test_a_release_that_spends_nothing_is_still_counted_once():
    release = get_mechanism("random").release(np.eye(3) * 0.5, 1, 1.0, 0.0, random_state=1)
    assert len(Odometer().record_release(release, "Inspect")) == 1


def test_a_sweep_row_gives_the_mechanisms_rho_no_n_under_add_remove():
    # The sweep frame's n column is a diagnostic read off the data; under add/remove n is private, so no ρ shown in
    # the sidebar may be computed from it (Release.n is already None there).
    import pandas as pd

    seen = []

    def rho_of(mechanism, epsilon, delta, *, n, d, neighbouring, options):
        seen.append((neighbouring, n))
        return 0.01

    rows = [{"mechanism": "analyze_gauss", "epsilon": 1.0, "delta": 1e-5, "status": "ok", "n": 123, "d": 4,
             "neighbouring": relation, "guarantee": "approx", "end_to_end_private": True}
            for relation in ("replace", "add_remove")]
    for row in rows:
        Odometer(rho_of=rho_of).record_sweep(pd.DataFrame([row]), "Explore")
    assert seen == [("replace", 123), ("add_remove", None)]
