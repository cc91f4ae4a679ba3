"""One rule for a fresh run seed (issue 23, item 5): dpcore.core.seeding.fresh_seed, used by sweeps, the clipping
advisor, the relation comparison and the dashboard."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dpcore.core.seeding import MAX_FRESH_SEED, fresh_seed, seed_or_fresh
from dpcore.data.prepared import PreparedData
from dpcore.evaluation.sweep import SweepConfig
from dpcore.exceptions import InvalidParameterError

ROOT = Path(__file__).resolve().parents[2]


def test_fresh_seeds_lie_in_the_widget_range_and_differ():
    seeds = [fresh_seed() for _ in range(2000)]
    assert all(isinstance(s, int) and 1 <= s <= MAX_FRESH_SEED for s in seeds)
    assert MAX_FRESH_SEED == 2**31 - 2  # the seed widgets take 0 … 2³¹ − 1, 0 meaning "fresh"
    assert len(set(seeds)) > 1990  # 2000 draws from 2³¹ values: a repeat has probability ≈ 1e-3


def test_seed_or_fresh_checks_a_given_seed():
    assert seed_or_fresh(7) == 7
    assert 1 <= seed_or_fresh(None) <= MAX_FRESH_SEED
    with pytest.raises(InvalidParameterError, match="seed must be >= 0"):
        seed_or_fresh(-1)
    with pytest.raises(InvalidParameterError, match="whole number"):
        seed_or_fresh(1.5)


def test_a_sweep_without_a_seed_records_a_fresh_one():
    data = PreparedData.from_unit_rows(np.eye(3) / 2)
    seeds = {SweepConfig(mechanisms=["pca"], epsilons=[1.0]).validated(data).seed for _ in range(5)}
    assert len(seeds) == 5 and all(1 <= s <= MAX_FRESH_SEED for s in seeds)


def test_no_other_module_draws_a_fresh_seed_itself():
    pattern = re.compile(r"SeedSequence\(\)\.generate_state|secrets\.randbelow")
    sources = [*ROOT.joinpath("dpcore").rglob("*.py"), *ROOT.joinpath("pages").rglob("*.py"), ROOT / "app.py"]
    hits = [p.relative_to(ROOT).as_posix() for p in sources if pattern.search(p.read_text(encoding="utf-8"))]
    assert hits == ["dpcore/core/seeding.py"]
