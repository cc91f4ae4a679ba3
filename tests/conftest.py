"""Shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest
from _unit_rows import unit_rows

from dpcore.data import PreparedData

# No background precomputation in the app runs of the tests (AppTest and the servers they start inherit this);
# tests of pages/ui/precompute.py turn it on themselves.
os.environ.setdefault("DP_PRECOMPUTE", "0")


@pytest.fixture
def small_data() -> PreparedData:
    rng = np.random.default_rng(1)
    X = unit_rows(400, 6, seed=1)
    y = (X[:, 0] + 0.1 * rng.standard_normal(400) > 0).astype(int)
    return PreparedData(X, y=y, name="small")


# ------------------------------------------------------------------------------------------------
# Scheduling on pytest-xdist (`make test`: `--dist loadgroup --no-loadscope-reorder`)
# ------------------------------------------------------------------------------------------------
# Every test file is one xdist group, run whole on one worker (its module fixtures, servers and pools start once),
# and the browser files of tests/e2e/ form one group (two Chromiums never compete for the cores), except
# SPLIT_FILES: long files of independent statistical tests with cheap fixtures, dealt out one test at a time. Long
# work goes first (longest-processing-time-first: browser files, then slow tests), so the run does not end with one
# worker on a long file while the other idles.
SPLIT_FILES = frozenset({
    "tests/privacy/test_privacy_regression.py", "tests/privacy/test_pipeline_invariance.py",
    "tests/audit/test_audit.py", "tests/audit/test_audit_mutants.py", "tests/audit/test_audit_leaks.py",
    "tests/core/test_noise.py", "tests/mechanisms/test_input_perturbation.py",
    "tests/mechanisms/test_exp_mechanisms.py", "tests/mechanisms/test_subspace_learning.py",
    "tests/samplers/test_bingham.py", "tests/samplers/test_gibbs.py", "tests/samplers/test_convergence.py",
    "tests/samplers/test_yun_dudeja.py",
})


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _start_rank(item: pytest.Item) -> int:
    """0: browser tests; 1: slow tests of split files; 2: everything else."""
    if _file_of(item).startswith("tests/e2e/") or item.get_closest_marker("browser"):
        return 0
    return 1 if item.get_closest_marker("slow") else 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group whole files (but SPLIT_FILES) and put long work first. A grouped file moves as one block, at its
    earliest test's rank, keeping its own order; a split file's tests move one by one. Workers collect and sort
    alike, so they agree on the order."""
    file_rank: dict[str, int] = {}
    for item in items:
        name = _file_of(item)
        if name not in SPLIT_FILES:
            item.add_marker(pytest.mark.xdist_group("tests/e2e" if name.startswith("tests/e2e/") else name))
            file_rank[name] = min(file_rank.get(name, 2), _start_rank(item))
    items.sort(key=lambda it: file_rank.get(_file_of(it), _start_rank(it)))  # stable sort
