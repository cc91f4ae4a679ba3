"""``dpcore plan``: a smoke run on a built-in dataset, the what-if label on a CSV, and bad flags (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.evaluation.planner import NON_PRIVATE_NOTE

BASE = ("plan", "--dataset", "wine", "--mechanism", "analyze_gauss", "--k", "2", "--target", "captured>=0.9",
        "--confidence", "0.9", "--trials", "40", "--seed", "1", "--quiet")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_json_on_a_built_in_dataset(capsys):
    code, out, err = run(capsys, *BASE, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["dataset"] == "wine" and result["mechanism"] == "analyze_gauss"
    assert result["private_inputs"] is True and result["metric"] == "captured_variance_ratio"
    low, high = result["band"]
    assert 0.01 < low <= result["estimate"] <= high == result["epsilon"] < 100
    assert len(result["probes"]) >= 3 and all(p["trials"] == 40 for p in result["probes"])
    assert NON_PRIVATE_NOTE not in err


def test_plan_text_output(capsys):
    code, out, _ = run(capsys, *BASE)
    assert code == 0
    assert "ε = " in out and "band [" in out and "probes" in out and "no privacy cost" in out


def test_plan_on_a_csv_is_a_labelled_non_private_what_if(capsys, tmp_path):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 1))
    X = np.hstack([z, 0.8 * z + 0.2 * rng.normal(size=(200, 1)), 0.3 * rng.normal(size=(200, 2))])
    path = tmp_path / "upload.csv"
    path.write_text("a,b,c,d\n" + "".join(",".join(f"{v:.3f}" for v in row) + "\n" for row in X))
    code, out, err = run(capsys, "plan", "--csv", str(path), "--no-label", "--norm-bound", "4",
                         "--feature-scaling", "none", "--mechanism", "analyze_gauss", "--k", "1",
                         "--target", "captured>=0.9", "--trials", "20", "--max-probes", "6", "--seed", "2",
                         "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["private_inputs"] is False
    assert "NON-PRIVATE what-if" in err  # on stderr even with --quiet


@pytest.mark.parametrize("flags, named", [
    (("--mechanism", "nope"), "--mechanism"),
    (("--target", "captured<=0.9"), "--target"),
    (("--target", "foo>=1"), "--target"),
    (("--confidence", "1.5"), "--confidence"),
    (("--trials", "3"), "--trials"),
    (("--eps-min", "5", "--eps-max", "1"), "--eps-min"),
    (("--tolerance", "1"), "--tolerance"),
    (("--k", "0"), "--k"),
    (("--k", "50"), "--k"),
])
def test_bad_flags_exit_2_naming_the_flag(capsys, flags, named):
    argv = list(BASE)
    for i in range(0, len(flags), 2):
        if flags[i] in argv:
            argv[argv.index(flags[i]) + 1] = flags[i + 1]
        else:
            argv += [flags[i], flags[i + 1]]
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    assert named in err and "Traceback" not in err


def test_plan_on_a_released_covariance_is_free_and_states_its_cost(capsys, tmp_path):
    code, out, err = run(capsys, "release", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "2",
                         "--delta", "1e-5", "--seed", "1", "--quiet")
    assert code == 0, err
    path = tmp_path / "release.json"
    path.write_text(out)
    code, out, err = run(capsys, "plan", "--from-release", str(path), "--mechanism", "analyze_gauss",
                         "--target", "captured>=0.9", "--trials", "20", "--max-probes", "6", "--seed", "1",
                         "--quiet", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["dataset"] == "released covariance" and result["private_inputs"] is True
    assert any("cost ε = 2" in note for note in result["notes"]) and NON_PRIVATE_NOTE not in err


@pytest.mark.parametrize("extra", [("--dataset", "wine"), ("--n", "10")])
def test_from_release_refusals(capsys, tmp_path, extra):
    path = tmp_path / "bad.json"
    path.write_text('{"mechanism": "ppm"}')
    argv = ["plan", "--from-release", str(path), "--mechanism", "analyze_gauss", "--target", "captured>=0.9",
            *extra]
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out and "--from-release" in err and "Traceback" not in err


def test_n_only_with_from_release(capsys):
    code, _, err = run(capsys, *BASE, "--n", "100")
    assert code == 2 and "--n only applies to --from-release" in err
