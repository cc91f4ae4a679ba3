"""Review: an uploaded file's name reaches the exported chart script's docstring; a quote or a backslash in it made
the script fail to compile (a name holding three double quotes ended the docstring: the rest of the name ran as
code)."""

from __future__ import annotations

import json

import pytest

from dpcore.evaluation.chart_code import chart_notebook, chart_script

NAMES = ['a"""b.csv', 'x\\N.csv', 'q\\u.csv', 'e".csv', 'x"""; raise SystemExit("injected"); """.csv',
         "naïve d'été.csv"]


@pytest.mark.parametrize("name", NAMES)
def test_the_script_and_the_notebook_compile_and_run_no_part_of_the_file_name(name):
    src = chart_script("dpcore_workspace: 1\n", metric="frobenius_error", seed=None, data_name=name)
    namespace: dict = {"__name__": "exported"}
    exec(compile(src, "exported.py", "exec"), namespace)  # defines main(), runs nothing of the name
    assert name in namespace["__doc__"]  # shown as it is
    assert namespace["DATA"] == name
    notebook = json.loads(chart_notebook("dpcore_workspace: 1\n", metric="frobenius_error", seed=None, data_name=name))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            compile("".join(cell["source"]), "cell", "exec")
