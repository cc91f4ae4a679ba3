"""The odometer asks the mechanisms for their ρ without importing them: core stays below the mechanisms."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "dpcore" / "core"


def test_no_core_module_imports_a_layer_above_it():
    above = []
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                name = ("." * node.level) + (node.module or "")
                ok = (node.level == 1 or name.startswith(("..core", "..exceptions", "..vocabulary"))
                      or (node.level == 0 and not name.startswith("dpcore")))
                if not ok:
                    above.append(f"{path.name}: {name}")
            elif isinstance(node, ast.Import):
                above += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("dpcore")]
    assert not above


def test_importing_the_odometer_does_not_load_the_mechanisms_but_a_bare_odometer_asks_them():
    code = ("import sys\n"
            "from dpcore.core.odometer import Odometer\n"
            "from dpcore.core.privacy import zcdp_rho\n"
            "assert 'dpcore.mechanisms' not in sys.modules\n"
            "odo = Odometer()\n"
            "assert 'dpcore.mechanisms' not in sys.modules\n"
            "[e] = odo.record_runs('ppm', 'approx', 1.0, 1e-5, 'replace', 'x', 1)\n"
            "assert e.rho == zcdp_rho(1.0, 1e-5), e\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=CORE.parents[1])
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
