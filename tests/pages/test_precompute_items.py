"""The start-up precomputation runs every item whatever another does (issue #33 item 2): on 563c1b2 the first item
that raised ("dataset 'Airfoil self-noise (NASA)' has no public feature ranges…") ended the whole run, so every
dataset after it was never precomputed. A dataset that cannot run at the defaults leaves the list before any sweep
(the progress counts only what will run); an item whose sweep fails is recorded and the next one runs; the sidebar
line says how far it got."""

from __future__ import annotations

from typing import ClassVar

import pytest

from pages.ui import precompute, server_cache
from pages.ui import state as ui_state


@pytest.fixture(autouse=True)
def caches_on(monkeypatch):
    monkeypatch.setenv(server_cache.SWITCH, "1")


class _Sweep:
    """A stand-in for PooledSweep: finished at once, or raising for the plans marked "explode"."""

    swept: ClassVar[list[str]] = []

    def __init__(self, pool, plans, cells, *, label, **_):
        if plans.get("explode"):
            raise RuntimeError("a worker died")
        _Sweep.swept.append(label)
        self.reused, self.done, self.total, self.finished, self.job = 0, 3, 3, True, None

    def cancel(self) -> None:
        pass

    def collect(self) -> None:
        pass


def test_one_failing_item_does_not_stop_the_others(monkeypatch):
    real_plans = precompute.default_plans

    def plans(item):
        if item.label == "broken plans":
            raise KeyError("boom")
        if item.dataset_id == "airfoil":
            return real_plans(item)  # the real refusal: no public feature ranges, so no public default bound
        return {"main": object(), "explode": item.label == "broken sweep"}

    monkeypatch.setattr(precompute, "default_plans", plans)
    monkeypatch.setattr(precompute, "PooledSweep", _Sweep)
    _Sweep.swept = []
    mechs = tuple(ui_state.DEFAULT_MECHANISMS)
    items = [precompute.Item("airfoil", mechs, "airfoil"), precompute.Item("wine", mechs, "broken plans"),
             precompute.Item("wine", mechs, "broken sweep"), precompute.Item("wine", mechs, "wine"),
             precompute.Item("digits", mechs, "digits")]
    run = precompute.Precompute(items, budget_s=300.0)
    run.run(pool=object(), delay=0.0)
    assert _Sweep.swept == ["precompute wine", "precompute digits"]  # old code: [] (it stopped at airfoil)
    assert run.state == "done"
    assert [i.label for i in run.runnable] == ["broken sweep", "wine", "digits"]  # airfoil left out when planned
    assert [i.label for i in run.finished_items] == ["wine", "digits"]
    assert len(run.skipped) == 1 and run.skipped[0].startswith("airfoil: ") and "public" in run.skipped[0]
    assert [f.split(":")[0] for f in run.failed] == ["broken plans", "broken sweep"]
    _icon, text = run.status()
    assert "2 of 3 default sweeps precomputed" in text and "2 failed" in text


def test_the_sidebar_line_counts_only_what_will_run_and_says_when_the_lesson_is_ready():
    mechs = tuple(ui_state.DEFAULT_MECHANISMS)
    adult, lesson, wine = (precompute.Item("adult", mechs, "adult: default Explore sweep"),
                           precompute.Item("adult", precompute.LESSON_MECHANISMS, "adult: the lesson's sweep"),
                           precompute.Item("wine", mechs, "wine: default Explore sweep"))
    run = precompute.Precompute([adult, lesson, wine], budget_s=300.0)
    assert "starting" in run.status()[1]
    run.state, run.runnable, run.position = "running", [adult, lesson, wine], 1
    run.finished_items = [adult]
    assert run.status()[1].startswith("Precomputing 2 of 3 default sweeps (adult: the lesson's sweep)")
    assert "lesson ready" not in run.status()[1]
    run.finished_items, run.position = [adult, lesson], 2
    assert "3 of 3" in run.status()[1] and "lesson ready" in run.status()[1]
    run.state = "done"
    run.finished_items = [adult, lesson, wine]
    assert run.status()[1].startswith("Lesson ready: 3 of 3 default sweeps precomputed")
    run.state = "over budget"
    assert "ran out of time" in run.status()[1]


@pytest.mark.slow  # loads and preprocesses every small built-in dataset and Adult (≈ 9 s)
def test_every_builtin_dataset_that_cannot_run_at_the_defaults_is_left_out_not_fatal(monkeypatch):
    """Plan every default item of the real registry (no sweep runs): what fails to plan is only 'skipped' for a
    DPCoreError (no public defaults), and Adult's two items are planned."""
    monkeypatch.delenv(precompute.DATASETS_ENV, raising=False)
    items = precompute.plan_items()
    run = precompute.Precompute(items, budget_s=300.0)
    planned = run._plan()
    assert not run.failed, run.failed
    assert [i.dataset_id for i, _ in planned[:2]] == ["adult", "adult"]
    assert len(planned) + len(run.skipped) == len(items)
