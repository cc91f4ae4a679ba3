"""Each validation lives in one place (issue 23, item 5): the "supports neighbouring" check, the CLI's usage exit
code, the audit registries the CLI offers."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpcore.audit.runner import resolve_pair
from dpcore.data import Dataset, preprocess
from dpcore.evaluation.advisor import clipping_utility_curve
from dpcore.evaluation.sweep import SweepConfig
from dpcore.exceptions import InvalidParameterError, PrivacyLeakWarning
from dpcore.mechanisms import get_mechanism

ROOT = Path(__file__).resolve().parents[2]
REPLACE_ONLY = "mod_sulq"  # declares neighbourings = (replace,)
EXPECTED = f"{REPLACE_ONLY} supports neighbouring replace; got 'add_remove'."


def _data():
    rng = np.random.default_rng(0)
    ds = Dataset(id="t", name="t", X=rng.uniform(0, 1, size=(60, 4)), feature_ranges=np.tile([0.0, 1.0], (4, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return ds, preprocess(ds)


def test_the_mechanism_is_replace_only():
    assert get_mechanism(REPLACE_ONLY).neighbourings == ("replace",)


@pytest.mark.parametrize("entry", ["release", "sweep", "advisor", "audit"])
def test_every_entry_point_rejects_an_unsupported_relation_with_one_message(entry):
    ds, data = _data()
    mech = get_mechanism(REPLACE_ONLY)
    calls = {
        "release": lambda: mech.release(data, 1, 1.0, 1e-5, neighbouring="add_remove", random_state=0),
        "sweep": lambda: SweepConfig(mechanisms=[REPLACE_ONLY], epsilons=[1.0], neighbouring="add_remove",
                                     seed=0).validated(data),
        "advisor": lambda: clipping_utility_curve(ds, mechanism=REPLACE_ONLY, neighbouring="add_remove", k=1, seed=0),
        "audit": lambda: resolve_pair(mech, "zero_vs_unit", "add_remove", 3, 10),
    }
    with pytest.raises(InvalidParameterError) as err:
        calls[entry]()
    assert str(err.value) == EXPECTED


def test_an_unknown_relation_names_the_known_ones():
    with pytest.raises(InvalidParameterError, match="neighbouring must be one of 'replace', 'add_remove'"):
        get_mechanism("laplace").check_neighbouring("swap")


def _python_sources() -> list[Path]:
    return sorted((ROOT / "dpcore").rglob("*.py"))


def test_the_supports_neighbouring_message_is_written_once():
    hits = [p.relative_to(ROOT).as_posix() for p in _python_sources()
            for _ in range(p.read_text(encoding="utf-8").count("supports neighbouring"))]
    assert hits == ["dpcore/mechanisms/base.py"]


def _assigned_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)}


def test_exit_usage_is_defined_once():
    defined = [p.relative_to(ROOT).as_posix() for p in _python_sources() if "EXIT_USAGE" in _assigned_names(p)]
    assert defined == ["dpcore/cli/_args.py"]


def test_the_cli_does_not_copy_the_audit_registries():
    """The CLI's audit names are read off dpcore.audit: no literal list of constructions, statistics or fields."""
    from dpcore import audit

    names = {*audit.NEIGHBOUR_CONSTRUCTIONS, *audit.STATISTICS, *audit.FIELDS} - {"auto"}
    tree = ast.parse((ROOT / "dpcore" / "cli" / "audit.py").read_text(encoding="utf-8"))
    copies = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, (ast.Tuple, ast.List, ast.Set))
              and sum(isinstance(e, ast.Constant) and e.value in names for e in node.elts) >= 2]
    assert copies == []


def test_the_advisor_picks_by_the_one_shot_field_not_by_the_cost_text(monkeypatch):
    from dpcore.evaluation import advisor
    from dpcore.mechanisms import list_mechanisms
    from dpcore.vocabulary import Guarantee

    expected = [m.id for m in list_mechanisms() if m.output == "covariance" and m.one_shot
                and m.guarantee in (Guarantee.PURE, Guarantee.APPROX)]
    assert [m.id for m in advisor.advisor_mechanisms()] == expected
    laplace = type(get_mechanism("laplace"))
    monkeypatch.setattr(laplace, "cost", "O(d³) + rejections, Gibbs, MCMC, iterations")  # prose does not decide
    assert "laplace" in [m.id for m in advisor.advisor_mechanisms()]
    monkeypatch.setattr(laplace, "one_shot", False)
    assert "laplace" not in [m.id for m in advisor.advisor_mechanisms()]


def test_every_sampling_or_iterative_mechanism_is_marked_not_one_shot():
    """The cost prose and the field agree: a note naming rejection sampling, Gibbs/MCMC or an exponential search
    belongs to a mechanism with ``one_shot = False``."""
    from dpcore.mechanisms import list_mechanisms

    words = ("rejection", "gibbs", "mcmc", "iteration", "exponential in")
    unmarked = [m.id for m in list_mechanisms() if m.one_shot and any(w in m.cost.lower() for w in words)]
    assert unmarked == []
    assert {"itu", "ad", "kt", "ppca", "ppm", "ss_exact"} <= {m.id for m in list_mechanisms() if not m.one_shot}
